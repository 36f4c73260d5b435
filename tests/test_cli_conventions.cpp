// Command-line conventions of kbq and kbc (ripgrep and git are the
// models), one table: every error, CLI11's own parse errors included,
// starts with `kbq: error:` / `kbc: error:`, carries a hint line, escapes
// control bytes from arguments, and exits 2; option values are
// case-insensitive where the set is closed (--lang, --format); the short
// options -f -l -n -e are --format --lang --limit --explain; --help names
// exit code 1 for "not possible".
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "base/text.hpp"
#include "process.hpp"

namespace {

bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

}  // namespace

TEST_CASE("every kbq and kbc error starts with 'PROG: error:', has a hint and exits 2, parse errors included", "[cli]") {
  struct Case {
    std::string prog;
    std::vector<std::string> args;
    std::string says;  // part of the first line
  };
  const std::vector<Case> cases = {
      {KBQ_PATH, {"--bogus"}, "--bogus"},
      {KBQ_PATH, {"--format", "xml", "x"}, "xml"},
      {KBQ_PATH, {"--limit", "0", "x"}, "--limit"},
      {KBQ_PATH, {"--limit", "many", "x"}, "many"},
      {KBQ_PATH, {"check"}, "recipe is required"},
      {KBQ_PATH, {"check", "llama3_8b_sft_config"}, "--gpus"},
      {KBQ_PATH, {"--lang", "de", "x"}, "unknown --lang 'de'"},
      {KBQ_PATH, {"--kb", "/nonexistent/kb.sqlite", "x"}, "/nonexistent/kb.sqlite: knowledge base not found"},
      {KBQ_PATH, {"show", "no_such_recipe_config"}, "unknown recipe"},
      {KBQ_PATH, {"list", "frobnicate"}, "frobnicate"},
      {KBQ_PATH, {"sft peft"}, ""},
      {KBC_PATH, {"--bogus"}, "--bogus"},
      {KBC_PATH, {"build", "--no-such-flag"}, "--no-such-flag"},
      {KBC_PATH, {"dump", "--format", "yaml"}, "yaml"},
      {KBC_PATH, {"dump", "--kb", "/nonexistent/kb.sqlite"}, "/nonexistent/kb.sqlite"},
      {KBC_PATH, {"build", "--mbridge", "/nonexistent", "-o", "/nonexistent/out.kb"}, "/nonexistent"},
  };
  for (const auto& c : cases) {
    const std::string name = c.prog == KBQ_PATH ? "kbq" : "kbc";
    INFO(name << " " << kb::join(c.args, " "));
    const auto r = kbtest::run(c.prog, c.args);
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(has(r.err, name + ": error: "));
    CHECK(has(r.err, "hint: "));
    if (!c.says.empty()) CHECK(has(r.err.substr(0, r.err.find('\n')), c.says));
  }
}

TEST_CASE("kbq's first stderr line is its error, even for CLI11's parse errors and a bad KB", "[cli]") {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"--bogus"}, {"--format", "xml", "x"}, {"--kb", "/nonexistent/kb.sqlite", "x"}, {"list", "--kind", "toy"}}) {
    INFO(kb::join(args, " "));
    CHECK(kb::starts_with(kbtest::run(KBQ_PATH, args).err, "kbq: error: "));
  }
  CHECK(kb::starts_with(kbtest::run(KBC_PATH, {"--bogus"}).err, "kbc: error: "));
}

TEST_CASE("an argument's control bytes are escaped in a parse error, never written raw", "[cli]") {
  const auto r = kbtest::run(KBQ_PATH, {"--format", "\x1b[31mred", "x"});
  CHECK(r.exit_code == 2);
  CHECK(!has(r.err, "\x1b"));
  CHECK(has(r.err, "\\x1b[31mred"));
  const auto c = kbtest::run(KBC_PATH, {"dump", "--format", "\x1b[2Jx"});
  CHECK(c.exit_code == 2);
  CHECK(!has(c.err, "\x1b"));
}

TEST_CASE("closed-set option values are case-insensitive and short options are the long ones", "[cli]") {
  struct Case {
    std::vector<std::string> a, b;  // two spellings that must give the same output
  };
  const std::vector<Case> cases = {
      {{"peft qwen3 1 gpu", "--lang", "FR"}, {"peft qwen3 1 gpu", "--lang", "fr"}},
      {{"peft qwen3 1 gpu", "--format", "JSON"}, {"peft qwen3 1 gpu", "--format", "json"}},
      {{"peft qwen3 1 gpu", "-f", "json"}, {"peft qwen3 1 gpu", "--format", "json"}},
      {{"peft qwen3 1 gpu", "-l", "ja"}, {"peft qwen3 1 gpu", "--lang", "ja"}},
      {{"sft llama3", "-n", "1"}, {"sft llama3", "--limit", "1"}},
      {{"sft llama3 8b", "-e"}, {"sft llama3 8b", "--explain"}},
      {{"list", "sft", "--kind", "Library", "-l", "ZH"}, {"list", "sft", "--kind", "library", "--lang", "zh"}},
  };
  for (const auto& c : cases) {
    INFO(kb::join(c.a, " ") << " vs " << kb::join(c.b, " "));
    const auto a = kbtest::run(KBQ_PATH, c.a);
    const auto b = kbtest::run(KBQ_PATH, c.b);
    CHECK(a.exit_code == 0);
    CHECK(a.exit_code == b.exit_code);
    CHECK(a.out == b.out);
    CHECK(!a.out.empty());
  }
  // And the spelling changes something: --lang fr is not --lang en.
  CHECK(kbtest::run(KBQ_PATH, {"peft qwen3 1 gpu", "-l", "FR"}).out != kbtest::run(KBQ_PATH, {"peft qwen3 1 gpu", "-l", "en"}).out);
}

TEST_CASE("kbq --help names exit code 1 for a question that is not possible, and a not-possible answer exits 1", "[cli]") {
  const auto help = kbtest::run(KBQ_PATH, {"--help"});
  CHECK(help.exit_code == 0);
  CHECK(has(help.out, "1 not possible"));
  CHECK(has(help.out, "no layout fits the GPUs asked"));
  CHECK(has(help.out, "-f,--format"));
  CHECK(has(help.out, "-n,--limit"));
  // 405B pretraining on one GPU: not possible.
  const auto r = kbtest::run(KBQ_PATH, {"pretrain llama3 405b 1 gpu"});
  CHECK(r.exit_code == 1);
}
