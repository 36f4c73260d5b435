// Every JSON output validates against its published schema in docs/, with a
// JSON Schema validator (python3-jsonschema, tests/validate_json.py), so the
// schemas and the outputs cannot drift apart: every golden JSON answer, the
// live outputs of each subcommand and of an error, the generated answers of
// the site, and the KB export (generated/site/kb.json).
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "cases.hpp"
#include "process.hpp"

namespace fs = std::filesystem;

namespace {

const std::string kRoot = KB_SOURCE_DIR;

// Validates `files` against docs/<schema>; skips (reported) when the
// validator is not installed.
void validate(const std::string& schema, const std::vector<std::string>& files) {
  REQUIRE_FALSE(files.empty());
  std::vector<std::string> args{kRoot + "/tests/validate_json.py", kRoot + "/docs/" + schema};
  args.insert(args.end(), files.begin(), files.end());
  const auto r = kbtest::run(kbtest::python3(), args);
  if (r.exit_code == 3) {
    kbtest::skip("python3-jsonschema is not installed (make deps installs it)");
    return;
  }
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
}

// The stdout (or stderr) section of a golden file.
std::string golden_section(const std::string& text, const std::string& marker) {
  const auto at = text.find(marker + "\n");
  if (at == std::string::npos) return {};
  std::string rest = text.substr(at + marker.size() + 1);
  const auto next = rest.find("\n--- ");
  return next == std::string::npos ? rest : rest.substr(0, next + 1);
}

}  // namespace

TEST_CASE("schemas: every golden JSON answer validates", "[schemas]") {
  kbtest::TempDir tmp("kbtests-schemas");
  std::vector<std::string> answers, listings, errors;
  int n = 0;
  for (const auto& f : kbtest::files_in(kRoot + "/tests/golden", ".test")) {
    const std::string text = kbtest::read_file(f.string());
    if (text.find("arg: json\n") == std::string::npos) continue;
    const std::string out = golden_section(text, "--- stdout"), err = golden_section(text, "--- stderr");
    const bool listing = text.find("arg: rules\n") != std::string::npos || text.find("arg: pitfalls\n") != std::string::npos;
    if (!out.empty()) {
      const std::string path = tmp / (std::to_string(++n) + ".json");
      kbtest::write_file(path, out);
      (listing ? listings : answers).push_back(path);
    }
    if (!err.empty()) {
      const std::string path = tmp / (std::to_string(++n) + ".err.json");
      kbtest::write_file(path, err);
      errors.push_back(path);
    }
  }
  CHECK(answers.size() >= 5);
  validate("answer.schema.json", answers);
  if (!listings.empty()) validate("listing.schema.json", listings);
  if (!errors.empty()) validate("error.schema.json", errors);
}

TEST_CASE("schemas: every subcommand's JSON and a JSON error validate", "[schemas]") {
  kbtest::TempDir tmp("kbtests-schemas");
  struct Run {
    std::vector<std::string> args;
    std::string schema;
    bool on_stderr;
  };
  const std::vector<Run> runs = {
      {{"sft llama3 8b", "--format", "json"}, "answer.schema.json", false},
      {{"qwen3 の LoRA を 1 GPU で", "--format", "json"}, "answer.schema.json", false},
      {{"SFT, 8×H100, 16K sequence", "--format", "json", "--explain"}, "answer.schema.json", false},
      {{"show", "qwen3_30b_a3b_sft_config", "--format", "json"}, "answer.schema.json", false},
      {{"check", "llama3_8b_sft_config", "--gpus", "8", "--format", "json"}, "answer.schema.json", false},
      {{"rules", "--format", "json", "--lang", "ja"}, "listing.schema.json", false},
      {{"pitfalls", "--format", "json", "--lang", "fr"}, "listing.schema.json", false},
      {{"sources", "--format", "json"}, "sources.schema.json", false},
      {{"perf", "deepseek_v3", "--history", "--format", "json"}, "perf.schema.json", false},
      {{"list", "peft", "qwen3", "--format", "json"}, "recipes.schema.json", false},
      {{"list", "--kind", "benchmark", "--format", "json"}, "recipes.schema.json", false},
      {{"list", "frobnicate", "--format", "json"}, "error.schema.json", true},
      {{"perf", "no such model", "--format", "json"}, "error.schema.json", true},
      {{"sft peft", "--format", "json"}, "error.schema.json", true},
      {{"show", "no_such_recipe_config", "--format", "json"}, "error.schema.json", true},
  };
  int n = 0;
  for (const auto& run : runs) {
    const auto r = kbtest::run(KBQ_PATH, run.args);
    INFO(run.args.front() << ": " << r.err);
    const std::string& text = run.on_stderr ? r.err : r.out;
    REQUIRE_FALSE(text.empty());
    const std::string path = tmp / (std::to_string(++n) + ".json");
    kbtest::write_file(path, text);
    validate(run.schema, {path});
  }
}

TEST_CASE("schemas: the generated site answers and KB export validate", "[schemas]") {
  std::vector<std::string> answers;
  for (const auto& f : kbtest::files_in(kRoot + "/generated/site/answers", ".json"))
    if (f.filename() != "index.json") answers.push_back(f.string());
  CHECK(answers.size() >= 10);
  validate("answer.schema.json", answers);
  validate("kb.schema.json", {kRoot + "/generated/site/kb.json"});
}
