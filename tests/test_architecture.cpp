// The architecture of docs/architecture.md, checked on the tree itself:
// the layers include one way (base ← compiler stages, base ← query ←
// compiler/generate), and so do the tests of each layer; render reads no
// database; every path and code name the page mentions exists; and every
// launch command of the generated site is the one kbq's engine builds for
// the same recipe. Markdown is read through cmark-gfm's AST and front
// matter through yaml-cpp, as kbc reads its sources.
#include <cmark-gfm-core-extensions.h>
#include <cmark-gfm-extension_api.h>
#include <cmark-gfm.h>
#include <yaml-cpp/yaml.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
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

// A markdown document's AST (cmark-gfm, with GitHub tables).
struct Markdown {
  explicit Markdown(const std::string& text) {
    static std::once_flag once;
    std::call_once(once, [] { cmark_gfm_core_extensions_ensure_registered(); });
    cmark_parser* parser = cmark_parser_new(CMARK_OPT_DEFAULT);
    if (cmark_syntax_extension* table = cmark_find_syntax_extension("table")) cmark_parser_attach_syntax_extension(parser, table);
    cmark_parser_feed(parser, text.data(), text.size());
    root = cmark_parser_finish(parser);
    cmark_parser_free(parser);
  }
  ~Markdown() { cmark_node_free(root); }
  Markdown(const Markdown&) = delete;
  Markdown& operator=(const Markdown&) = delete;
  // The literal of every node of `type` (code spans, code blocks), in order;
  // for code blocks only those whose info string is `info`.
  std::vector<std::string> literals(cmark_node_type type, const std::string& info = {}) const {
    std::vector<std::string> out;
    cmark_iter* it = cmark_iter_new(root);
    for (cmark_event_type ev; (ev = cmark_iter_next(it)) != CMARK_EVENT_DONE;) {
      cmark_node* n = cmark_iter_get_node(it);
      if (ev != CMARK_EVENT_ENTER || cmark_node_get_type(n) != type) continue;
      if (type == CMARK_NODE_CODE_BLOCK && info != (cmark_node_get_fence_info(n) ? cmark_node_get_fence_info(n) : "")) continue;
      out.emplace_back(cmark_node_get_literal(n) ? cmark_node_get_literal(n) : "");
    }
    cmark_iter_free(it);
    return out;
  }
  cmark_node* root = nullptr;
};

// A page's YAML front matter (between the leading `---` lines) and its body.
std::pair<YAML::Node, std::string> front_matter(const std::string& text) {
  if (text.rfind("---\n", 0) != 0) return {YAML::Node(), text};
  const size_t end = text.find("\n---\n", 3);
  if (end == std::string::npos) return {YAML::Node(), text};
  return {YAML::Load(text.substr(4, end - 3)), text.substr(end + 5)};
}

// The layer a project header belongs to, for the layering of the tests.
enum class Layer { Base, CompilerStage, QueryInternal, QueryApi, Generate, TestHelper };
Layer layer_of(const std::string& inc) {
  if (under(inc, "base")) return Layer::Base;
  if (under(inc, "compiler/generate")) return Layer::Generate;
  if (under(inc, "compiler")) return Layer::CompilerStage;
  if (inc == "query/kbq.hpp") return Layer::QueryApi;
  if (under(inc, "query")) return Layer::QueryInternal;
  return Layer::TestHelper;
}

// Every whole-word identifier of the project's sources, data and build files.
const std::set<std::string>& source_words() {
  static const std::set<std::string> words = [] {
    std::set<std::string> out;
    const std::regex word(R"([A-Za-z_][A-Za-z0-9_]*)");
    std::vector<fs::path> files;
    for (const char* dir : {"base", "compiler", "query", "tests", "fuzz", "bench", "site", "kb-sources/data"})
      for (const char* ext : {".cpp", ".hpp", ".in", ".py", ".sql", ".tsv", ".S"})
        for (const auto& f : kbtest::files_in(kRoot + "/" + dir, ext)) files.push_back(f);
    files.push_back(kRoot + "/CMakeLists.txt");
    files.push_back(kRoot + "/Makefile");
    for (const auto& f : files) {
      const std::string text = kbtest::read_file(f.string());
      for (std::sregex_iterator m(text.begin(), text.end(), word), end; m != end; ++m) out.insert(m->str());
    }
    return out;
  }();
  return words;
}

// Does a path the documentation names exist? `a/{b,c}` names a/b and a/c,
// `*` stands for any name, a path under `data/` is kb-sources/data's.
bool doc_path_exists(const std::string& path) {
  const auto brace = path.find('{');
  if (brace != std::string::npos) {
    const auto close = path.find('}', brace);
    if (close == std::string::npos) return false;
    std::stringstream alts(path.substr(brace + 1, close - brace - 1));
    for (std::string alt; std::getline(alts, alt, ',');)
      if (!doc_path_exists(path.substr(0, brace) + alt + path.substr(close + 1))) return false;
    return true;
  }
  if (path.find('*') != std::string::npos) {
    std::string re;
    for (char ch : path) re += ch == '*' ? std::string("[^/]*") : ch == '.' ? std::string("\\.") : std::string(1, ch);
    const std::regex glob(re + "/?");
    for (auto it = fs::recursive_directory_iterator(kRoot); it != fs::recursive_directory_iterator(); ++it)
      if (std::regex_match(fs::relative(it->path(), kRoot).generic_string(), glob)) return true;
    return false;
  }
  return fs::exists(kRoot + "/" + path) || (under(path, "data") && fs::exists(kRoot + "/kb-sources/" + path));
}

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
  size_t pages = 0, commands = 0;
  for (const auto& f : kbtest::files_in(kRoot + "/generated/site/recipes", ".md")) {
    const std::string name = f.filename().string();
    if (std::count(name.begin(), name.end(), '.') != 1) continue;  // English pages (no language suffix)
    const auto [meta, body] = front_matter(kbtest::read_file(f.string()));
    REQUIRE(meta["title"]);
    const std::string recipe = meta["title"].as<std::string>();
    std::vector<std::string> blocks;
    for (auto block : Markdown(body).literals(CMARK_NODE_CODE_BLOCK, "bash")) {
      if (!block.empty() && block.back() == '\n') block.pop_back();
      blocks.push_back(block);
    }
    if (blocks.empty()) continue;
    ++pages;
    INFO(f.filename().string() << ": " << recipe);
    auto res = engine.show(recipe, "en");
    REQUIRE(std::holds_alternative<kbq::Answer>(res));
    CHECK(blocks == std::vector<std::string>{std::get<kbq::Answer>(res).results.front().command});
    commands += blocks.size();
  }
  CHECK(pages >= 50);
  CHECK(commands >= pages);
}

TEST_CASE("architecture: the tests of a layer use only that layer and those below", "[architecture]") {
  // A test of the compiler's stages includes no query internals, a test of
  // the query engine's internals no compiler header; kbq's public header
  // (query/kbq.hpp) goes with anything, as the generator uses it.
  size_t files = 0;
  for (const auto& [file, incs] : sources_under("tests")) {
    std::set<Layer> layers;
    for (const auto& inc : incs) layers.insert(layer_of(inc));
    INFO(file);
    ++files;
    CHECK_FALSE((layers.count(Layer::QueryInternal) && (layers.count(Layer::CompilerStage) || layers.count(Layer::Generate))));
  }
  // The test helpers (tests/*.hpp) are below every test: base at most.
  for (const auto& f : kbtest::files_in(kRoot + "/tests", ".hpp"))
    for (const auto& inc : includes_of(f)) {
      INFO(f.filename().string() << " includes " << inc);
      CHECK((layer_of(inc) == Layer::Base || layer_of(inc) == Layer::TestHelper));
    }
  CHECK(files >= 20);
}

TEST_CASE("architecture: every path and code name docs/architecture.md mentions exists", "[architecture]") {
  const Markdown doc(kbtest::read_file(kRoot + "/docs/architecture.md"));
  const std::regex code_name(R"(([A-Za-z_][A-Za-z0-9_]*)((::[A-Za-z_][A-Za-z0-9_]*)*)(\(\))?)");
  size_t paths = 0, names = 0;
  for (const auto& span : doc.literals(CMARK_NODE_CODE)) {
    INFO("`" << span << "`");
    if (span.find('/') != std::string::npos && span.find(' ') == std::string::npos && span.find(':') == std::string::npos &&
        span.find('@') == std::string::npos && span.find('<') == std::string::npos) {
      CHECK(doc_path_exists(span));
      ++paths;
      continue;
    }
    std::smatch m;
    if (!std::regex_match(span, m, code_name)) continue;
    // A code name: one with an underscore, a scope or a capital (a type, a
    // function, a table); a plain lower-case word is a command or a prose word.
    const std::string whole = m[0];
    const bool code = whole.find('_') != std::string::npos || whole.find("::") != std::string::npos ||
                      std::any_of(whole.begin(), whole.end(), [](char ch) { return ch >= 'A' && ch <= 'Z'; });
    if (!code) continue;
    std::stringstream parts(std::regex_replace(whole, std::regex(R"(\(\)$)"), ""));
    for (std::string part; std::getline(parts, part, ':');)
      if (!part.empty()) CHECK(source_words().count(part) == 1);
    ++names;
  }
  CHECK(paths >= 20);
  CHECK(names >= 20);
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
