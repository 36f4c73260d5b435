// The architecture of docs/architecture.md, checked on the tree itself:
// the layers include one way (base ← compiler stages, base ← query ←
// compiler/generate), render reads no database, and every launch command of
// the generated site is the one kbq's engine builds for the same recipe.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "cases.hpp"
#include "process.hpp"
#include "query/kbq.hpp"

namespace fs = std::filesystem;

namespace {

const std::string kRoot = KB_SOURCE_DIR;

// Every project header a file includes, as written ("base/text.hpp").
std::vector<std::string> includes_of(const fs::path& file) {
  std::vector<std::string> out;
  std::ifstream in(file);
  const std::regex inc(R"re(^\s*#\s*include\s*"([^"]+)")re");
  std::smatch m;
  for (std::string line; std::getline(in, line);)
    if (std::regex_search(line, m, inc)) out.push_back(m[1]);
  return out;
}

// The source files of a layer folder (relative to the root), with their includes.
std::map<std::string, std::vector<std::string>> sources_under(const std::string& folder) {
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& ext : {".cpp", ".hpp"})
    for (const auto& f : kbtest::files_in(kRoot + "/" + folder, ext)) out[fs::relative(f, kRoot).generic_string()] = includes_of(f);
  return out;
}

bool under(const std::string& path, const std::string& folder) { return path.rfind(folder + "/", 0) == 0; }

}  // namespace

TEST_CASE("architecture: base includes nothing above it", "[architecture]") {
  const auto files = sources_under("base");
  REQUIRE(files.size() >= 10);
  for (const auto& [file, incs] : files)
    for (const auto& inc : incs) {
      INFO(file << " includes " << inc);
      CHECK(under(inc, "base"));
    }
}

TEST_CASE("architecture: the query engine never includes the compiler", "[architecture]") {
  const auto files = sources_under("query");
  REQUIRE(files.size() >= 10);
  for (const auto& [file, incs] : files)
    for (const auto& inc : incs) {
      INFO(file << " includes " << inc);
      CHECK((under(inc, "base") || under(inc, "query")));
    }
}

TEST_CASE("architecture: the compiler stages never include the query engine; generate only its public header", "[architecture]") {
  const auto files = sources_under("compiler");
  REQUIRE(files.size() >= 10);
  for (const auto& [file, incs] : files)
    for (const auto& inc : incs) {
      INFO(file << " includes " << inc);
      if (under(file, "compiler/generate") || file == "compiler/main.cpp")
        CHECK((under(inc, "base") || under(inc, "compiler") || inc == "query/kbq.hpp"));
      else
        CHECK((under(inc, "base") || under(inc, "compiler")));
      // A stage below generate never calls up into it.
      if (!under(file, "compiler/generate") && file != "compiler/main.cpp") CHECK_FALSE(under(inc, "compiler/generate"));
    }
}

TEST_CASE("architecture: render reads no database", "[architecture]") {
  const auto files = sources_under("query/render");
  REQUIRE_FALSE(files.empty());
  for (const auto& [file, incs] : files)
    for (const auto& inc : incs) {
      INFO(file << " includes " << inc);
      CHECK(inc != "base/sqlite.hpp");
      CHECK_FALSE(under(inc, "query/kb"));
      CHECK_FALSE(under(inc, "query/plan"));
    }
}

TEST_CASE("architecture: every launch command of the site is kbq's own", "[architecture]") {
  kbq::Engine engine = kbq::Engine::open(std::string(KB_BINARY_DIR) + "/kb.sqlite");
  const std::regex title(R"re(^title: "(.*)"$)re"), mode_one(R"re(^mode: (\w+)$)re"), mode_item(R"re(^  - (\w+)$)re");
  size_t pages = 0, commands = 0;
  for (const auto& f : kbtest::files_in(kRoot + "/generated/site/recipes", ".md")) {
    const std::string name = f.filename().string();
    if (std::count(name.begin(), name.end(), '.') != 1) continue;  // English pages (no language suffix)
    const std::string text = kbtest::read_file(f.string());
    // Front matter: the recipe and its modes.
    std::string recipe;
    std::vector<std::string> modes;
    bool in_modes = false;
    std::set<std::string> blocks;
    std::istringstream lines(text);
    std::string block;
    bool in_block = false;
    for (std::string line; std::getline(lines, line);) {
      std::smatch m;
      if (recipe.empty() && std::regex_match(line, m, title)) recipe = m[1];
      if (std::regex_match(line, m, mode_one)) modes.push_back(m[1]);
      if (line == "mode:")
        in_modes = true;
      else if (in_modes && std::regex_match(line, m, mode_item))
        modes.push_back(m[1]);
      else
        in_modes = false;
      if (line == "```bash") {
        in_block = true;
        block.clear();
      } else if (in_block && line == "```") {
        in_block = false;
        blocks.insert(block.substr(0, block.size() - 1));
      } else if (in_block) {
        block += line + "\n";
      }
    }
    if (blocks.empty()) continue;
    ++pages;
    INFO(f.filename().string() << ": " << recipe);
    std::set<std::string> expected;
    auto res = engine.show(recipe, "en");
    REQUIRE(std::holds_alternative<kbq::Answer>(res));
    expected.insert(std::get<kbq::Answer>(res).results.front().command);
    CHECK(blocks == expected);
    commands += blocks.size();
  }
  CHECK(pages >= 50);
  CHECK(commands >= pages);
}

TEST_CASE("architecture: kbq and the generated skill show the same rule and pitfall text in every language", "[architecture]") {
  // One choice of edition (base/choose.hpp): what `kbq rules` / `kbq pitfalls`
  // print in a language is the sentence of the generated SKILL page in that
  // language (the page sets identifiers in `code`, the answer does not).
  kbq::Engine engine = kbq::Engine::open(std::string(KB_BINARY_DIR) + "/kb.sqlite");
  size_t checked = 0;
  for (const auto& lang : engine.languages()) {
    std::string page = kbtest::read_file(kRoot + "/generated/skill/SKILL." + lang + ".md");
    page.erase(std::remove(page.begin(), page.end(), '`'), page.end());
    // Markdown's backslash escapes (the page writes '{' as "\{" for MyST).
    std::string plain;
    for (size_t i = 0; i < page.size(); ++i)
      if (!(page[i] == '\\' && i + 1 < page.size() && std::ispunct(static_cast<unsigned char>(page[i + 1])))) plain += page[i];
    page = plain;
    for (const auto& listing : {engine.rules(lang), engine.pitfalls(lang)})
      for (const auto& item : listing.items) {
        INFO(lang << ": " << item.prose.text);
        CHECK(page.find(item.prose.text) != std::string::npos);
        CHECK(item.prose.fallback == (item.prose.lang != lang));
        ++checked;
      }
  }
  CHECK(checked >= 4 * 7);
}
