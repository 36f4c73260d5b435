// kbc drift: a published skill checked against Megatron Bridge code, as a CI
// job runs it. A fixture skill with disagreements seeded on purpose
// (tests/fixtures/drift/seeded) must yield each of them, and nothing else,
// in all three formats (compiler warnings, GitHub annotations, SARIF 2.1.0
// validated against the OASIS schema vendored in tests/schemas/); the same
// skill with the disagreements fixed (tests/fixtures/drift/clean) yields
// none. Exit codes: 0 agree (or no --check), 1 disagree with --check, 2 error.
#include <catch2/catch.hpp>

#include <cctype>
#include <filesystem>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "process.hpp"

namespace fs = std::filesystem;

namespace {

const std::string kRoot = KB_SOURCE_DIR;
const std::string kSeeded = "tests/fixtures/drift/seeded";
const std::string kClean = "tests/fixtures/drift/clean";

// One seeded disagreement: where it is, what it is about, and (for a value)
// what the code sets at 067f987df.
struct Seeded {
  std::string file;  // relative to the skill folder
  int line;
  std::string kind, subject, code_value;
};
// The clean skill keeps an explicit 'train.global_batch_size=64': the runner
// rewrites the batch after the overrides only when none was given
// (run_recipe.py:357), so it is no finding.
const std::vector<Seeded> kSeededFindings{
    {"SKILL.md", 11, "unknown-key", "training.global_batch_size", ""},
    {"SKILL.md", 11, "dataset", "llm-pretrain-mock", ""},
    {"SKILL.md", 23, "overwritten-key", "model.seq_length", "dataset_seq_length"},
    {"SKILL.md", 31, "missing-recipe", "llama9_1t_pretrain_config", ""},
    {"references/recipe-index.md", 9, "recipe-fact", "llama3_8b_16k_pretrain_config", "4"},
    {"references/recipe-index.md", 10, "recipe-fact", "llama3_8b_sft_config", "4096"},
    {"references/recipe-index.md", 11, "recipe-fact", "llama3_70b_sft_config", "false"},
    {"references/recipe-index.md", 12, "missing-recipe", "llama3_405b_pretrain_config", ""},
    {"references/recipe-index.md", 20, "benchmark-model", "GPT-OSS 120B", "b200,b300,gb200,gb300,h100,vr200"},
};

// kbc drift from the repository root (paths in the output stay relative, as in CI).
kbtest::Outcome drift(const std::vector<std::string>& args) {
  kbtest::Limits lim;
  lim.seconds = 240;
  lim.cwd = kRoot;
  std::vector<std::string> all{"drift"};
  all.insert(all.end(), args.begin(), args.end());
  return kbtest::run_limited(KBC_PATH, all, lim);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  size_t s = 0;
  for (size_t e; (e = text.find('\n', s)) != std::string::npos; s = e + 1) out.push_back(text.substr(s, e - s));
  if (s < text.size()) out.push_back(text.substr(s));
  return out;
}

// Exit 0 valid, 1 invalid, 3 no validator (the caller skips).
kbtest::RunResult validate_sarif(const std::string& path) {
  return kbtest::run(kbtest::python3(), {kRoot + "/tests/validate_json.py", kRoot + "/tests/schemas/sarif-schema-2.1.0.json", path});
}

}  // namespace

TEST_CASE("drift check: every seeded disagreement is a compiler warning at its line, and nothing else", "[drift]") {
  const auto r = drift({"--check", "--skill", kSeeded, "--code", "kb-sources/code"});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  const auto lines = lines_of(r.out);
  CHECK(lines.size() == kSeededFindings.size());
  for (const auto& s : kSeededFindings) {
    INFO(s.file << ":" << s.line << " " << s.subject);
    const std::string prefix = kSeeded + "/" + s.file + ":" + std::to_string(s.line) + ": warning: ";
    int found = 0;
    for (const auto& l : lines)
      if (l.rfind(prefix, 0) == 0 && l.find(s.subject) != std::string::npos &&
          (s.code_value.empty() || l.find("'" + s.code_value + "'") != std::string::npos))
        ++found;
    CHECK(found == 1);
  }
  // Without --check the same findings are printed and the exit is 0.
  const auto quiet = drift({"--skill", kSeeded, "--code", "kb-sources/code"});
  CHECK(quiet.exit_code == 0);
  CHECK(quiet.out == r.out);
}

TEST_CASE("drift check: every seeded disagreement is a GitHub annotation with file and line", "[drift]") {
  const auto r = drift({"--check", "--format", "github", "--skill", kSeeded, "--code", "kb-sources/code"});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  const auto lines = lines_of(r.out);
  CHECK(lines.size() == kSeededFindings.size());
  for (const auto& s : kSeededFindings) {
    INFO(s.file << ":" << s.line << " " << s.subject);
    const std::string prefix = "::warning file=" + kSeeded + "/" + s.file + ",line=" + std::to_string(s.line) + ",title=";
    int found = 0;
    for (const auto& l : lines)
      if (l.rfind(prefix, 0) == 0 && l.find("::" + s.subject) != std::string::npos) ++found;
    CHECK(found == 1);
  }
  // A workflow command is one line; its title (a property) escapes ':' and ','.
  for (const auto& l : lines) {
    const auto title = l.find(",title=");
    REQUIRE(title != std::string::npos);
    const auto msg = l.find("::", title);
    REQUIRE(msg != std::string::npos);
    CHECK(l.substr(title + 7, msg - title - 7).find_first_of(":,") == std::string::npos);
  }
}

TEST_CASE("drift check: SARIF output is valid SARIF 2.1.0 and holds every seeded disagreement", "[drift][schemas]") {
  kbtest::TempDir tmp("kbtests-drift");
  const auto r = drift({"--check", "--format", "sarif", "--skill", kSeeded, "--code", "kb-sources/code"});
  INFO(r.err);
  CHECK(r.exit_code == 1);
  const auto log = nlohmann::json::parse(r.out);
  REQUIRE(log.at("version") == "2.1.0");
  const auto& run = log.at("runs").at(0);
  const auto& results = run.at("results");
  CHECK(results.size() == kSeededFindings.size());
  for (const auto& s : kSeededFindings) {
    INFO(s.file << ":" << s.line << " " << s.subject);
    int found = 0;
    for (const auto& res : results) {
      const auto& loc = res.at("locations").at(0).at("physicalLocation");
      if (loc.at("artifactLocation").at("uri") != kSeeded + "/" + s.file || loc.at("region").at("startLine") != s.line) continue;
      if (res.at("ruleId") != s.kind || res.at("properties").at("subject") != s.subject) continue;
      if (!s.code_value.empty() && res.at("properties").at("codeValue") != s.code_value) continue;
      // ruleIndex points at the rule of that id.
      CHECK(run.at("tool").at("driver").at("rules").at(res.at("ruleIndex").get<size_t>()).at("id") == s.kind);
      ++found;
    }
    CHECK(found == 1);
  }
  const std::string path = tmp / "seeded.sarif";
  kbtest::write_file(path, r.out);
  const auto v = validate_sarif(path);
  if (v.exit_code == 3) {
    kbtest::skip("python3-jsonschema is not installed (make deps installs it)");
    return;
  }
  INFO(v.out << v.err);
  CHECK(v.exit_code == 0);
  // The schema check can fail: a level SARIF does not have is rejected.
  std::string broken = r.out;
  for (size_t at; (at = broken.find("\"level\": \"warning\"")) != std::string::npos;) broken.replace(at, 18, "\"level\": \"warn\"");
  kbtest::write_file(tmp / "broken.sarif", broken);
  CHECK(validate_sarif(tmp / "broken.sarif").exit_code == 1);
}

TEST_CASE("drift check: a skill that agrees with the code passes in every format", "[drift][schemas]") {
  kbtest::TempDir tmp("kbtests-drift");
  for (const char* format : {"text", "github"}) {
    const auto r = drift({"--check", "--format", format, "--skill", kClean, "--code", "kb-sources/code"});
    INFO(format << ": " << r.out << r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out.empty());
  }
  const auto r = drift({"--check", "--format", "sarif", "--skill", kClean, "--code", "kb-sources/code"});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(nlohmann::json::parse(r.out).at("runs").at(0).at("results").empty());
  kbtest::write_file(tmp / "clean.sarif", r.out);
  const auto v = validate_sarif(tmp / "clean.sarif");
  if (v.exit_code == 3) {
    kbtest::skip("python3-jsonschema is not installed (make deps installs it)");
    return;
  }
  INFO(v.out << v.err);
  CHECK(v.exit_code == 0);
}

TEST_CASE("drift check: the published revision 4 gives exactly kbc lint's drift lines for it", "[drift]") {
  const std::string skill = "kb-sources/upstream/nemo-mbridge-recipe-recommender";
  const auto r = drift({"--check", "--skill", skill, "--code", "kb-sources/code"});
  INFO(r.err);
  CHECK(r.exit_code == 1);
  kbtest::Limits lim;
  lim.seconds = 240;
  lim.cwd = kRoot;
  const auto lint = kbtest::run_limited(KBC_PATH, {"lint"}, lim);
  REQUIRE(lint.exit_code == 0);
  size_t lint_drift = 0;
  for (const auto& l : lines_of(lint.out))
    if (l.rfind("upstream/nemo-mbridge-recipe-recommender/", 0) == 0 && l.find(": drift: ") != std::string::npos) ++lint_drift;
  CHECK(lint_drift > 0);
  CHECK(lines_of(r.out).size() == lint_drift);
}

TEST_CASE("drift check: --mbridge reads a checkout with the code front end", "[drift][code]") {
  // The toy checkout exports none of the fixture's Llama recipes: each is a finding.
  const auto r = drift({"--check", "--skill", kClean, "--mbridge", "tests/fixtures/mbridge/alias-chain/checkout", "--commit",
                        std::string(40, 'a'), "--date", "2026-01-01"});
  INFO(r.out << r.err);
  if (r.exit_code == 2 && r.err.find("cannot run Python 3") != std::string::npos) {
    kbtest::skip("python3 is not installed");
    return;
  }
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("llama3_8b_16k_pretrain_config") != std::string::npos);
  CHECK(r.out.find("llama3_8b_sft_config") != std::string::npos);
}

TEST_CASE("drift check: bad input is an error with exit 2", "[drift]") {
  const auto missing = drift({"--check", "--skill", "tests/fixtures/drift/nowhere", "--code", "kb-sources/code"});
  CHECK(missing.exit_code == 2);
  CHECK(missing.err.find("tests/fixtures/drift/nowhere: error: skill folder not found") != std::string::npos);
  const auto neither = drift({"--check", "--skill", kClean});
  CHECK(neither.exit_code == 2);
  CHECK(neither.err.find("--mbridge PATH or --code DIR") != std::string::npos);
  const auto both = drift({"--check", "--skill", kClean, "--code", "kb-sources/code", "--mbridge", "tests"});
  CHECK(both.exit_code == 2);
  const auto format = drift({"--skill", kClean, "--code", "kb-sources/code", "--format", "xml"});
  CHECK(format.exit_code == 2);
  const auto no_code = drift({"--check", "--skill", kClean, "--code", "tests/fixtures/drift"});
  CHECK(no_code.exit_code == 2);
  CHECK(no_code.err.find("no code snapshot found") != std::string::npos);
}

TEST_CASE("generated recipe tables: every value of a named library recipe is what the code sets, in every language", "[drift][generate]") {
  // The regenerated indexes compiled as a published skill and checked against
  // the newest snapshot: no recipe value differs, no listed name is missing
  // from the code, and no benchmark row's GPU counts or hardware differ from
  // the exported benchmark names. (The library tables hold no pattern row:
  // the count of pattern-row values below stays 0.)
  kbtest::TempDir tmp("kbtests-drift");
  fs::create_directories(tmp / "skill/references");
  int files = 0;
  for (const auto& e : fs::directory_iterator(kRoot + "/generated/references"))
    if (e.path().filename().string().rfind("recipe-index", 0) == 0) {
      fs::copy_file(e.path(), tmp / ("skill/references/" + e.path().filename().string()));
      ++files;
    }
  REQUIRE(files == 4);
  const auto r = drift({"--format", "sarif", "--skill", tmp / "skill", "--code", "kb-sources/code"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto log = nlohmann::json::parse(r.out);
  size_t named = 0, patterns = 0;
  for (const auto& res : log.at("runs").at(0).at("results")) {
    const std::string rule = res.at("ruleId");
    const std::string doc = res.at("properties").at("documentValue");
    INFO(res.dump());
    if (rule == "recipe-fact" && doc.find("(pattern ") != std::string::npos) {
      ++patterns;
      continue;
    }
    CHECK(rule != "recipe-fact");
    CHECK(rule != "missing-recipe");
    CHECK(rule != "benchmark-model");  // benchmark rows: the GPU counts and hardware the exported names encode
    if (rule == "recipe-fact" || rule == "missing-recipe") ++named;
  }
  CHECK(named == 0);
  CHECK(patterns == 0);  // no pattern row is left to state values some of its members lack
  // The tables do list named recipes (the check above is not vacuous).
  const std::string index = kbtest::read_file(kRoot + "/generated/references/recipe-index.md");
  CHECK(index.find("| `llama3_8b_16k_pretrain_config` |") != std::string::npos);
}

TEST_CASE("lint: a pattern row is not compared with a recipe its edition lists in a row of its own", "[drift]") {
  // Revision 4's Qwen3 (Dense) table has `qwen3_*_{pretrain,sft,peft}_config`
  // ("other dense sizes"), which also matches the names the Qwen3 MoE and
  // Qwen3-Next tables list one by one: those rows, not the pattern, are what
  // the edition says of them (lint once reported qwen3_235b_a22b_pretrain_config
  // against the pattern's PP 1-2, where its own row says PP 16).
  kbtest::Limits lim;
  lim.seconds = 240;
  lim.cwd = kRoot;
  const auto lint = kbtest::run_limited(KBC_PATH, {"lint"}, lim);
  REQUIRE(lint.exit_code == 0);
  const std::string index = kbtest::read_file(kRoot + "/kb-sources/upstream/nemo-mbridge-recipe-recommender/references/recipe-index.md");
  REQUIRE(index.find("| `qwen3_*_{pretrain,sft,peft}_config` |") != std::string::npos);
  REQUIRE(index.find("| `qwen3_235b_a22b_pretrain_config` |") != std::string::npos);
  std::map<std::string, std::string> text_of;  // file → its text
  size_t pattern_lines = 0;
  for (const auto& l : lines_of(lint.out)) {
    const auto at = l.find(": drift: recipe-fact ");
    if (at == std::string::npos || l.find(" (pattern ") == std::string::npos) continue;
    INFO(l);
    ++pattern_lines;
    const std::string file = l.substr(0, l.rfind(':', at - 1));
    if (!text_of.count(file)) text_of[file] = kbtest::read_file(kRoot + "/kb-sources/" + file);
    const auto name_at = at + 21;
    const std::string name = l.substr(name_at, l.find(' ', name_at) - name_at);
    CHECK(text_of[file].find("| `" + name + "` |") == std::string::npos);
    CHECK(text_of[file].find("| " + name + " |") == std::string::npos);
  }
  CHECK(pattern_lines > 0);  // pattern rows are still compared with the recipes they stand for
}

TEST_CASE("changelog: CHANGES.md lists every table drift of the published English edition, with both lines", "[drift][generate]") {
  // kbc lint's `drift:` lines on revision 4 (the published English edition,
  // upstream/nemo-mbridge-recipe-recommender/) are of two sorts:
  //  - table drift, a value or a name of a table row: `recipe-fact` (a row
  //    naming a recipe, or a pattern row, "(pattern P)", against each
  //    exported recipe it stands for), `missing-recipe` of a row (no
  //    recipe of that name exported, exported as a benchmark recipe only,
  //    a pattern that matches none), `benchmark-model` (a benchmark row's
  //    GPU counts or hardware against the exported benchmark names);
  //  - prose drift, a name, key or preset in a sentence or command:
  //    `missing-recipe ... named in the text`, `unknown-key`,
  //    `overwritten-key`, `dataset`. These are not bullets (the names the
  //    text recommends are the "For a maintainer" numbered list).
  // Every table drift line is one bullet of CHANGES.md, citing its document
  // line, its code line (when lint has one) and its values; the front
  // matter's `changes:` is their count, and the other languages' changelogs
  // have as many bullets (their own editions' lines of revision 4).
  kbtest::Limits lim;
  lim.seconds = 240;
  lim.cwd = kRoot;
  const auto lint = kbtest::run_limited(KBC_PATH, {"lint"}, lim);
  REQUIRE(lint.exit_code == 0);
  const std::string published = "upstream/nemo-mbridge-recipe-recommender/";
  std::vector<std::string> table_drift;
  std::map<std::string, size_t> kinds;  // table drift kind (pattern rows apart) → lines
  std::vector<std::string> prose;       // their document lines
  for (const auto& l : lines_of(lint.out)) {
    if (l.rfind(published, 0) != 0 || l.find(": drift: ") == std::string::npos) continue;
    INFO(l);
    const auto kind_at = l.find(": drift: ") + 9;
    const std::string kind = l.substr(kind_at, l.find(' ', kind_at) - kind_at);
    if (kind == "unknown-key" || kind == "overwritten-key" || kind == "dataset" ||
        (kind == "missing-recipe" && l.find("; named in the text") != std::string::npos)) {
      prose.push_back(l.substr(0, l.find(": drift: ")));
      continue;
    }
    REQUIRE((kind == "recipe-fact" || kind == "missing-recipe" || kind == "benchmark-model"));
    ++kinds[kind + (l.find(" (pattern ") != std::string::npos ? " (pattern)" : "")];
    table_drift.push_back(l);
  }
  // Each sort is there (the count is not lint's named rows alone).
  CHECK(kinds["recipe-fact"] > 0);
  CHECK(kinds["recipe-fact (pattern)"] > 0);
  CHECK(kinds["missing-recipe"] > 0);
  CHECK(kinds["benchmark-model"] > 0);
  CHECK_FALSE(prose.empty());
  const std::string changes = kbtest::read_file(kRoot + "/generated/CHANGES.md");
  // Each prose line is an item of the numbered "For a maintainer" list, at
  // its document line.
  for (const auto& at : prose) {
    INFO("prose drift at " << at);
    bool listed = false;
    for (const auto& l : lines_of(changes))
      listed = listed || (!l.empty() && std::isdigit(static_cast<unsigned char>(l[0])) && l.find(". " + at + ": ") != std::string::npos);
    CHECK(listed);
  }
  // The table bullets, then one per quick-reference GPU cell set from the
  // code (front matter quick-reference; tests/test_generate.cpp names them).
  auto quick_refs = [](const std::string& text) {
    const auto at = text.find("\nquick-reference: ");
    return at == std::string::npos ? size_t{0} : static_cast<size_t>(std::stoul(text.substr(at + 18)));
  };
  CHECK(quick_refs(changes) == 2);
  std::vector<std::string> bullets;
  for (const auto& l : lines_of(changes))
    if (l.rfind("- ", 0) == 0) bullets.push_back(l);
  CHECK(bullets.size() == table_drift.size() + quick_refs(changes));
  // A pattern's member that is an alias says so when its function has a line
  // of its own for the same value (the two say one change of one recipe):
  // `nemotron_3_super_*_config` → nemotron_3_super_sft_config (alias of
  // nemotron_3_super_sft_16gpu_h100_bf16_config) tp: 4 → 8, beside the
  // function's own line.
  size_t aliases = 0;
  for (const auto& b : bullets) {
    const auto at = b.find(" (alias of `");
    if (at == std::string::npos) continue;
    ++aliases;
    INFO(b);
    const auto end = b.find('`', at + 12);
    REQUIRE(end != std::string::npos);
    const std::string function = b.substr(at + 12, end - at - 12);
    const std::string value = b.substr(b.find(") ", end) + 2, b.find(" (document ") - b.find(") ", end) - 2);  // field: a → b
    bool own = false;
    for (const auto& o : bullets) own = own || (o.find("→ `" + function + "` " + value) != std::string::npos);
    CHECK(own);
  }
  CHECK(aliases == 8);
  CHECK(changes.find("\nchanges: " + std::to_string(table_drift.size()) + "\n") != std::string::npos);
  CHECK(changes.find("\nagainst-revision: 4\n") != std::string::npos);
  // Each lint line, its own bullet: the subject (the recipe, or the benchmark
  // model), the pattern row for a pattern's member, the document line, the
  // code line, and for a value the document's cell → the code's.
  auto between = [](const std::string& l, const std::string& open, const std::string& close) {
    const auto a = l.find(open);
    if (a == std::string::npos) return std::string();
    const auto b = l.find(close, a + open.size());
    return b == std::string::npos ? std::string() : l.substr(a + open.size(), b - a - open.size());
  };
  std::vector<bool> used(bullets.size(), false);
  for (const auto& l : table_drift) {
    INFO(l);
    const std::string doc_at = l.substr(0, l.find(": drift: "));
    const auto kind_at = l.find(": drift: ") + 9;
    const auto subject_at = l.find(' ', kind_at) + 1;
    std::string subject = l.substr(subject_at, l.find(": document '") - subject_at);  // subject [field]
    std::string field;
    if (const auto sp = subject.rfind(' '); l.find("-> code '") != std::string::npos && sp != std::string::npos)
      field = subject.substr(sp + 1), subject = subject.substr(0, sp);
    std::string document = between(l, ": document '", "' (rev ");
    const std::string pattern = between(document, " (pattern ", ")");
    if (!pattern.empty()) document = document.substr(0, document.find(" (pattern "));
    const std::string code_value = between(l, "-> code '", "'");
    const std::string code_at = between(l, " (src/", ")");
    const std::string name = subject.find(' ') == std::string::npos ? "`" + subject + "`" : subject;
    int found = 0;
    for (size_t i = 0; i < bullets.size() && !found; ++i) {
      const auto& b = bullets[i];
      if (used[i] || b.find(name) == std::string::npos) continue;
      if (b.find(doc_at + ";") == std::string::npos && b.find(doc_at + ")") == std::string::npos) continue;
      if (!code_at.empty() && b.find("src/" + code_at) == std::string::npos) continue;
      if (!pattern.empty() && b.find("`" + pattern + "` → " + name) == std::string::npos) continue;
      if (!field.empty() && (b.find(field) == std::string::npos || b.find(document + " → " + code_value) == std::string::npos)) continue;
      used[i] = true;
      ++found;
    }
    CHECK(found == 1);
  }
  // The other languages: the same changes, each citing its own edition.
  for (const char* lang : {"fr", "ja", "zh"}) {
    INFO(lang);
    const std::string text = kbtest::read_file(kRoot + "/generated/CHANGES." + lang + ".md");
    size_t n = 0;
    for (const auto& l : lines_of(text)) n += l.rfind("- ", 0) == 0 ? 1 : 0;
    CHECK(n == table_drift.size() + quick_refs(text));
    CHECK(quick_refs(text) == quick_refs(changes));
    CHECK(text.find("\nchanges: " + std::to_string(table_drift.size()) + "\n") != std::string::npos);
  }
}

TEST_CASE("generated recipe index: every library name a user can pass to --recipe is one row per language, with its code's layout",
          "[drift][generate]") {
  // The names: every library recipe the snapshot exports whose name states
  // no GPU count (kb-sources/code/067f987df/recipes.tsv, read here on its
  // own). Each must be exactly one row of the library index in each
  // language, and no other name may be; its TP, PP, CP, EP and sequence
  // cells are what recipe-facts.tsv says its function sets.
  const std::string code = kRoot + "/kb-sources/code/067f987df/";
  std::map<std::string, std::string> target_of;  // passable name → target
  for (const auto& l : lines_of(kbtest::read_file(code + "recipes.tsv"))) {
    if (l.empty() || l[0] == '#' || l.rfind("name\t", 0) == 0) continue;
    std::vector<std::string> c;
    for (size_t s = 0, e;; s = e + 1) {
      e = l.find('\t', s);
      c.push_back(l.substr(s, e == std::string::npos ? std::string::npos : e - s));
      if (e == std::string::npos) break;
    }
    if (c.size() < 3 || c[1] != "library") continue;
    bool gpu_count = false;  // "_<digits>gpu" followed by "_" or the end
    for (size_t at = c[0].find("gpu"); at != std::string::npos; at = c[0].find("gpu", at + 1)) {
      size_t d = at;
      while (d > 0 && std::isdigit(static_cast<unsigned char>(c[0][d - 1]))) --d;
      if (d < at && d > 0 && c[0][d - 1] == '_' && (at + 3 == c[0].size() || c[0][at + 3] == '_')) gpu_count = true;
    }
    if (!gpu_count) target_of[c[0]] = c[2];
  }
  REQUIRE(target_of.size() > 250);
  std::map<std::string, std::map<std::string, long long>> facts;  // target → field → int the code sets
  for (const auto& l : lines_of(kbtest::read_file(code + "recipe-facts.tsv"))) {
    if (l.empty() || l[0] == '#') continue;
    std::vector<std::string> c;
    for (size_t s = 0, e;; s = e + 1) {
      e = l.find('\t', s);
      c.push_back(l.substr(s, e == std::string::npos ? std::string::npos : e - s));
      if (e == std::string::npos) break;
    }
    if (c.size() < 5 || (c[2] != "value" && c[2] != "default") || c[4] != "int") continue;
    if (c[1] == "tp" || c[1] == "pp" || c[1] == "cp" || c[1] == "ep" || c[1] == "seq_length") facts[c[0]][c[1]] = std::stoll(c[3]);
  }
  auto cells_of = [](const std::string& row) {
    std::vector<std::string> out;
    size_t s = row.find('|') + 1;
    for (size_t e; (e = row.find('|', s)) != std::string::npos; s = e + 1) {
      std::string cell = row.substr(s, e - s);
      cell.erase(0, cell.find_first_not_of(' '));
      cell.erase(cell.find_last_not_of(' ') + 1);
      out.push_back(cell);
    }
    return out;
  };
  for (const char* file : {"recipe-index.md", "recipe-index.fr.md", "recipe-index.ja.md", "recipe-index.zh.md"}) {
    INFO(file);
    const std::string text = kbtest::read_file(kRoot + "/generated/references/" + file);
    const size_t library_end = text.find("\n## ", text.find("\n## ") + 1);  // the library index is the first "## " section
    std::map<std::string, int> rows;
    std::vector<std::string> header;
    size_t checked = 0;
    for (const auto& l : lines_of(text.substr(0, library_end))) {
      if (l.rfind("| ", 0) != 0) continue;
      const auto cells = cells_of(l);
      if (cells.empty()) continue;
      const auto tick = cells[0].find('`');
      if (tick == std::string::npos) {
        if (cells[0].find("---") == std::string::npos) header = cells;
        continue;
      }
      const std::string name = cells[0].substr(tick + 1, cells[0].find('`', tick + 1) - tick - 1);
      ++rows[name];
      INFO(name);
      CHECK(target_of.count(name) == 1);  // no name the code does not export, no pattern
      if (!target_of.count(name)) continue;
      const auto& f = facts[target_of.at(name)];
      for (size_t i = 0; i < header.size() && i < cells.size(); ++i) {
        const std::string field = header[i] == "TP"   ? "tp"
                                  : header[i] == "PP" ? "pp"
                                  : header[i] == "CP" ? "cp"
                                  : header[i] == "EP" ? "ep"
                                                      : "";
        if (field.empty() || !f.count(field)) continue;
        INFO(field << " cell " << cells[i]);
        const bool digits = !cells[i].empty() && cells[i].find_first_not_of("0123456789") == std::string::npos;
        if (digits)
          CHECK(std::stoll(cells[i]) == f.at(field));
        else
          CHECK(f.at(field) == 1);  // the "not used" word of CP and EP
        ++checked;
      }
      // The sequence: "<n>K" (n × 1024) or a plain number, in the column after the GPU count.
      if (f.count("seq_length"))
        for (const auto& cell : cells)
          if (cell.size() > 1 && (cell.back() == 'K' || cell.back() == 'k') && cell.find_first_not_of("0123456789") == cell.size() - 1) {
            CHECK(std::stoll(cell) * 1024 == f.at("seq_length"));
            ++checked;
          }
    }
    for (const auto& [name, target] : target_of) {
      INFO("passable name " << name);
      CHECK(rows[name] == 1);
    }
    CHECK(checked > 4 * target_of.size());
    std::cout << file << ": " << rows.size() << " library names listed of " << target_of.size() << " passable\n";
  }
}

TEST_CASE("generated recipe index: no library row's GPUs (min) is below its layout's world or the count its function's name states",
          "[drift][generate]") {
  // Read here on their own from the snapshot's files: each passable name's
  // layout world, PP × max(TP × CP, EP × ETP) (recipe-facts.tsv), and the
  // GPU count the name of the function it is (or aliases) encodes
  // (recipes.tsv, column gpus of that function's row). A "GPUs (min)" below
  // either sends a user to a run that cannot start or runs out of memory.
  const std::string code = kRoot + "/kb-sources/code/067f987df/";
  auto columns = [](const std::string& l) {
    std::vector<std::string> c;
    for (size_t s = 0, e;; s = e + 1) {
      e = l.find('\t', s);
      c.push_back(l.substr(s, e == std::string::npos ? std::string::npos : e - s));
      if (e == std::string::npos) break;
    }
    return c;
  };
  std::map<std::string, std::string> target_of;  // library name → target
  std::map<std::string, long long> named_of;     // library function name → the GPU count its name encodes
  for (const auto& l : lines_of(kbtest::read_file(code + "recipes.tsv"))) {
    if (l.empty() || l[0] == '#' || l.rfind("name\t", 0) == 0) continue;
    const auto c = columns(l);
    if (c.size() < 12 || c[1] != "library") continue;
    target_of[c[0]] = c[2];
    if (!c[10].empty() && c[10].find_first_not_of("0123456789") == std::string::npos) named_of[c[0]] = std::stoll(c[10]);
  }
  std::map<std::string, std::map<std::string, long long>> facts;  // target → field → int
  for (const auto& l : lines_of(kbtest::read_file(code + "recipe-facts.tsv"))) {
    if (l.empty() || l[0] == '#') continue;
    const auto c = columns(l);
    if (c.size() < 5 || (c[2] != "value" && c[2] != "default") || c[4] != "int") continue;
    facts[c[0]][c[1]] = std::stoll(c[3]);
  }
  std::map<std::string, std::string> header_of;  // lang → the GPUs (min) header (data/columns.tsv)
  for (const auto& l : lines_of(kbtest::read_file(kRoot + "/kb-sources/data/columns.tsv"))) {
    const auto c = columns(l);
    if (c.size() >= 3 && c[2] == "min_gpus") header_of[c[0]] = c[1];
  }
  REQUIRE(header_of.size() == 4);
  size_t above_layout = 0;
  for (const auto& [lang, header_word] : header_of) {
    const std::string file = kRoot + "/generated/references/recipe-index" + (lang == "en" ? "" : "." + lang) + ".md";
    INFO(file);
    const std::string text = kbtest::read_file(file);
    const size_t library_end = text.find("\n## ", text.find("\n## ") + 1);
    size_t column = std::string::npos, checked = 0;
    for (const auto& l : lines_of(text.substr(0, library_end))) {
      if (l.rfind("| ", 0) != 0) continue;
      std::vector<std::string> cells;
      size_t s = 2;
      for (size_t e; (e = l.find(" |", s)) != std::string::npos; s = e + 3) cells.push_back(l.substr(s, e - s));
      const auto tick = cells.empty() ? std::string::npos : cells[0].find('`');
      if (tick == std::string::npos) {
        for (size_t i = 0; i < cells.size(); ++i)
          if (cells[i] == header_word) column = i;
        continue;
      }
      const std::string name = cells[0].substr(tick + 1, cells[0].find('`', tick + 1) - tick - 1);
      INFO(name);
      REQUIRE(target_of.count(name));
      const std::string target = target_of.at(name);
      const auto& f = facts[target];
      const auto get = [&](const char* k) { return f.count(k) ? f.at(k) : 1LL; };
      if (!f.count("tp") || !f.count("pp")) continue;  // the code settles no layout
      REQUIRE(column < cells.size());
      INFO("GPUs (min) cell: " << cells[column]);
      REQUIRE(!cells[column].empty());
      REQUIRE(cells[column].find_first_not_of("0123456789") == std::string::npos);
      const long long shown = std::stoll(cells[column]);
      const long long layout = get("pp") * std::max(get("tp") * get("cp"), get("ep") * std::max(1LL, get("etp")));
      CHECK(shown >= layout);
      const std::string function = target.substr(target.rfind('.') + 1);
      if (auto n = named_of.find(function); n != named_of.end()) CHECK(shown >= n->second);
      if (shown > layout) ++above_layout;
      ++checked;
    }
    CHECK(checked > 250);
  }
  // The raise is not vacuous: rows whose function's name states more than the layout spans.
  CHECK(above_layout >= 4 * 13);
}
