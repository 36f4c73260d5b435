// `make install` into a temporary prefix, as a user would run it, then the
// installed programs from there: kbq answers, lists recipes and prints its
// version with no build folder on PATH; the programs are stripped with
// their debug info in lib/debug; the man pages are where man finds them;
// the bash completion loads and completes from the installed kbq; and
// `make uninstall` removes every file it installed.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "process.hpp"

namespace fs = std::filesystem;

namespace {

const std::string kSource = KB_SOURCE_DIR;
const std::string kBuild = KB_BINARY_DIR;

kbtest::Outcome sh(const std::string& script, const std::vector<std::string>& env = {}, double seconds = 60) {
  kbtest::Limits limits;
  limits.seconds = seconds;
  limits.env = env;
  // A make above this test (make test) passes its jobserver in MAKEFLAGS.
  limits.env.insert(limits.env.end(), {"MAKEFLAGS=", "MFLAGS=", "MAKELEVEL="});
  return kbtest::run_limited("/bin/bash", {"-c", script}, limits);
}

bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

}  // namespace

TEST_CASE("make install into a prefix gives working, stripped programs, man pages and completions, and make uninstall removes them",
          "[install]") {
  if (!fs::exists("/usr/bin/make") || !fs::exists("/usr/bin/help2man")) {
    kbtest::skip("make or help2man is not installed (make deps installs them)");
    return;
  }
  kbtest::TempDir tmp("kbtests-install");
  const std::string prefix = tmp / "usr";
  const auto installed =
      sh("make --no-print-directory -C '" + kSource + "' install BUILD='" + kBuild + "' PREFIX='" + prefix + "'", {}, 600);
  INFO(installed.out << installed.err);
  REQUIRE(installed.exit_code == 0);
  const std::string bin = prefix + "/bin";

  // The installed kbq, from PATH, in a folder with nothing beside it.
  const std::vector<std::string> env{"PATH=" + bin + ":/usr/bin:/bin", "MANPATH=" + prefix + "/share/man", "HOME=" + tmp.str()};
  const auto version = sh("cd '" + tmp.str() + "' && kbq --version", env);
  CHECK(version.exit_code == 0);
  CHECK(has(version.out, "kbq "));
  const auto answer = sh("cd / && kbq 'peft qwen3 1 gpu'", env);
  CHECK(answer.exit_code == 0);
  CHECK(has(answer.out, "qwen3_"));
  const auto list = sh("kbq list peft qwen3", env);
  CHECK(list.exit_code == 0);
  CHECK(has(list.out, "qwen3_8b_peft_config"));
  CHECK(sh("kbc --version", env).exit_code == 0);

  // Stripped, with a debug link to the split-off debug info.
  for (const std::string prog : {"kbq", "kbc"}) {
    INFO(prog);
    const auto sections = sh("readelf -S --wide '" + bin + "/" + prog + "'", env);
    CHECK(!has(sections.out, ".debug_info"));
    CHECK(has(sections.out, ".gnu_debuglink"));
    const auto id = sh("readelf -n '" + bin + "/" + prog + "' | sed -n 's/.*Build ID: \\(..\\)\\(.*\\)/\\1\\/\\2/p'", env);
    std::string build_id = id.out;
    while (!build_id.empty() && build_id.back() == '\n') build_id.pop_back();
    REQUIRE(!build_id.empty());
    const std::string debug = prefix + "/lib/debug/.build-id/" + build_id + ".debug";
    CHECK(fs::exists(debug));
    CHECK(has(sh("readelf -S --wide '" + debug + "'", env).out, ".debug_info"));
  }

  // The man pages: where man looks (when man is installed), generated from --help.
  for (const std::string prog : {"kbq", "kbc"}) {
    const std::string page = prefix + "/share/man/man1/" + prog + ".1";
    REQUIRE(fs::exists(page));
    if (fs::exists("/usr/bin/man")) {
      const auto found = sh("man -w " + prog, env);
      CHECK(found.exit_code == 0);
      CHECK(has(found.out, page));
    }
    // An option of a subcommand's own --help (kbq check --gpus, kbc build --sources).
    CHECK(has(kbtest::read_file(page), prog == "kbq" ? "--gpus" : "--sources"));
  }
  CHECK(has(kbtest::read_file(prefix + "/share/man/man1/kbq.1"), "kbq list"));  // a subcommand's own --help

  // The bash completion loads and completes from the installed kbq.
  const std::string completion = prefix + "/share/bash-completion/completions/kbq";
  const auto complete = [&](const std::string& words, int cword) {
    return sh("source '" + completion + "' && COMP_WORDS=(" + words + ") && COMP_CWORD=" + std::to_string(cword) +
                  " && _kbq && printf '%s\\n' \"${COMPREPLY[@]}\"",
              env)
        .out;
  };
  CHECK(has(sh("source '" + completion + "' && complete -p kbq kbc", env).out, "-F _kbq kbq"));
  CHECK(has(complete("kbq sh", 1), "show\n"));
  CHECK(has(complete("kbq show qwen3_8b_pe", 2), "qwen3_8b_peft_config\n"));
  CHECK(complete("kbq --lang ''", 2) == sh("kbq --completion-words languages", env).out);
  CHECK(has(complete("kbq list --hardware g", 3), "gb200\n"));
  CHECK(has(complete("kbq list --k", 2), "--kind\n"));
  CHECK(fs::exists(prefix + "/share/zsh/vendor-completions/_kbq"));
  CHECK(fs::exists(prefix + "/share/fish/vendor_completions.d/kbq.fish"));

  // make uninstall: every file it installed is gone, and the folders with them.
  const auto removed = sh("make --no-print-directory -C '" + kSource + "' uninstall BUILD='" + kBuild + "' PREFIX='" + prefix + "'");
  INFO(removed.out << removed.err);
  CHECK(removed.exit_code == 0);
  CHECK(!fs::exists(prefix));
}
