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

// A C++ source with its comments, string and character literals blanked
// (newlines kept), so that what is left is code at the same offsets.
std::string code_only(const std::string& text) {
  std::string out = text;
  const auto blank = [&](size_t from, size_t to) {
    for (size_t k = from; k < to && k < out.size(); ++k)
      if (out[k] != '\n') out[k] = ' ';
  };
  size_t i = 0;
  while (i < text.size()) {
    const char ch = text[i];
    if (text.compare(i, 2, "//") == 0) {
      const size_t end = std::min(text.find('\n', i), text.size());
      blank(i, end);
      i = end;
    } else if (text.compare(i, 2, "/*") == 0) {
      const size_t end = std::min(text.find("*/", i + 2), text.size() - 2) + 2;
      blank(i, end);
      i = end;
    } else if (ch == 'R' && i + 1 < text.size() && text[i + 1] == '"' &&
               (i == 0 || !(std::isalnum(static_cast<unsigned char>(text[i - 1])) || text[i - 1] == '_'))) {
      const size_t open = text.find('(', i + 2);
      if (open == std::string::npos) break;
      const std::string close = ")" + text.substr(i + 2, open - i - 2) + "\"";
      const size_t end = std::min(text.find(close, open), text.size() - close.size()) + close.size();
      blank(i, end);
      i = end;
    } else if (ch == '"' || (ch == '\'' && (i == 0 || !std::isalnum(static_cast<unsigned char>(text[i - 1]))))) {
      size_t k = i + 1;
      while (k < text.size() && text[k] != ch && text[k] != '\n') k += text[k] == '\\' ? 2 : 1;
      blank(i, k + 1);
      i = k + 1;
    } else {
      ++i;
    }
  }
  return out;
}

// The body (from its opening brace to its closing one) of the definition of
// `function` (as written: `compile`, `Engine::ask`) at namespace level in a
// source blanked by code_only; empty when there is none.
std::string function_body(const std::string& code, const std::string& function) {
  const std::regex name("(^|[\\s*&])" + function + R"(\s*\()");
  size_t line = 0;
  while (line < code.size()) {
    const size_t eol = std::min(code.find('\n', line), code.size());
    std::smatch m;
    const std::string text = code.substr(line, eol - line);
    if (!text.empty() && !std::isspace(static_cast<unsigned char>(text[0])) && std::regex_search(text, m, name)) {
      // Past the parameters to the first '{' (a definition) or ';' (a declaration).
      size_t k = line + static_cast<size_t>(m.position(0) + m.length(0));
      for (long depth = 1; k < code.size() && depth > 0; ++k) depth += code[k] == '(' ? 1 : code[k] == ')' ? -1 : 0;
      const size_t open = code.find_first_of("{;", k);
      if (open != std::string::npos && code[open] == '{') {
        size_t end = open + 1;
        for (long depth = 1; end < code.size() && depth > 0; ++end) depth += code[end] == '{' ? 1 : code[end] == '}' ? -1 : 0;
        return code.substr(open, end - open);
      }
    }
    line = eol + 1;
  }
  return {};
}

// Where a function is first called in a body: the name's last part (`parse`
// of `kbq::dsl::parse`) as a whole word followed by '('; npos when never.
size_t first_call(const std::string& body, const std::string& function) {
  const std::string last = function.substr(function.rfind(':') == std::string::npos ? 0 : function.rfind(':') + 1);
  std::smatch m;
  if (!std::regex_search(body, m, std::regex("(^|[^A-Za-z0-9_])" + last + R"(\s*\()"))) return std::string::npos;
  return static_cast<size_t>(m.position(0) + m.length(1));
}

// The code spans of a node's subtree, in order, and its plain text.
void spans_and_text(cmark_node* node, std::vector<std::string>& spans, std::string& text) {
  cmark_iter* it = cmark_iter_new(node);
  for (cmark_event_type ev; (ev = cmark_iter_next(it)) != CMARK_EVENT_DONE;) {
    cmark_node* n = cmark_iter_get_node(it);
    if (ev != CMARK_EVENT_ENTER) continue;
    const char* lit = cmark_node_get_literal(n);
    if (cmark_node_get_type(n) == CMARK_NODE_CODE && lit) spans.emplace_back(lit);
    if ((cmark_node_get_type(n) == CMARK_NODE_CODE || cmark_node_get_type(n) == CMARK_NODE_TEXT) && lit) text += lit;
  }
  cmark_iter_free(it);
}

// A table of the page whose header has a "calls (...)" column: the source
// file and the functions its header names (in the order their bodies are
// read), and the functions each row's cell of that column names, in order.
struct CallsTable {
  std::string file;
  std::vector<std::string> functions;
  std::vector<std::vector<std::string>> rows;
};
std::vector<CallsTable> calls_tables(const Markdown& doc) {
  std::vector<CallsTable> out;
  cmark_iter* it = cmark_iter_new(doc.root);
  for (cmark_event_type ev; (ev = cmark_iter_next(it)) != CMARK_EVENT_DONE;) {
    cmark_node* table = cmark_iter_get_node(it);
    if (ev != CMARK_EVENT_ENTER || std::string(cmark_node_get_type_string(table)) != "table") continue;
    CallsTable t;
    int column = -1;
    for (cmark_node* row = cmark_node_first_child(table); row; row = cmark_node_next(row)) {
      const bool header = std::string(cmark_node_get_type_string(row)) == "table_header";
      int col = 0;
      for (cmark_node* cell = cmark_node_first_child(row); cell; cell = cmark_node_next(cell), ++col) {
        std::vector<std::string> spans;
        std::string text;
        spans_and_text(cell, spans, text);
        if (header && text.rfind("calls", 0) == 0) {
          column = col;
          for (const auto& sp : spans)
            if (sp.find('/') != std::string::npos)
              t.file = sp;
            else
              t.functions.push_back(sp);
        } else if (!header && col == column) {
          t.rows.push_back(spans);
        }
      }
    }
    if (column >= 0) out.push_back(std::move(t));
  }
  cmark_iter_free(it);
  return out;
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

TEST_CASE("architecture: the steps docs/architecture.md lists are the code's calls, in the code's order", "[architecture]") {
  // Each table of the page with a "calls (`f`, then `g`, in `file`)" column
  // (kbc's passes, kbq's steps of Engine::ask): every function a row names
  // is called in the bodies of f then g, and each after the one before it,
  // so a pass or step the code adds, drops or moves shows here.
  const Markdown doc(kbtest::read_file(kRoot + "/docs/architecture.md"));
  const auto tables = calls_tables(doc);
  std::set<std::string> files;
  for (const auto& t : tables) {
    INFO("the calls of " << (t.functions.empty() ? std::string("(no function)") : t.functions.front()) << " ... in " << t.file);
    REQUIRE(fs::exists(kRoot + "/" + t.file));
    REQUIRE_FALSE(t.functions.empty());
    files.insert(t.file);
    const std::string code = code_only(kbtest::read_file(kRoot + "/" + t.file));
    std::string bodies;
    for (const auto& f : t.functions) {
      const std::string body = function_body(code, f);
      INFO("the definition of " << f);
      REQUIRE_FALSE(body.empty());
      bodies += body;
    }
    size_t names = 0, before = 0;
    std::string previous = "(the start)";
    for (const auto& row : t.rows)
      for (const auto& name : row) {
        const size_t at = first_call(bodies, name);
        INFO("the page lists " << name << " after " << previous);
        REQUIRE(at != std::string::npos);
        CHECK(at > before);
        before = at;
        previous = name;
        ++names;
      }
    CHECK(names >= 10);
  }
  // Both programs' orders are on the page.
  CHECK(files == std::set<std::string>{"compiler/pipeline.cpp", "query/engine.cpp"});
}

TEST_CASE("architecture: the engine's stages read no database; the KB reader and the engine do", "[architecture]") {
  // Only query/kb/ holds a database handle and only query/engine.cpp calls
  // it (query/main.cpp catches its errors); every other file of the engine
  // computes from values: it includes no reader and names no Kb, Db or Stmt.
  const std::set<std::string> readers_headers{"base/sqlite.hpp", "base/kb_schema.hpp", "base/dsl/kb_lexicon.hpp", "query/kb/kb.hpp",
                                              "query/kb/kb_int.hpp"};
  const std::regex handle(R"((^|[^A-Za-z0-9_])(Kb|Db|Stmt)([^A-Za-z0-9_]|$))");
  size_t stages = 0;
  for (const auto& [file, incs] : sources_under("query")) {
    if (under(file, "query/kb") || file == "query/engine.cpp" || file == "query/main.cpp") continue;
    INFO(file);
    ++stages;
    for (const auto& inc : incs) {
      INFO("includes " << inc);
      CHECK(readers_headers.count(inc) == 0);
    }
    std::smatch m;
    const std::string code = code_only(kbtest::read_file(kRoot + "/" + file));
    CHECK_FALSE(std::regex_search(code, m, handle));
  }
  CHECK(stages >= 30);
  // The engine does read it: the check above is about the right files.
  CHECK(std::regex_search(code_only(kbtest::read_file(kRoot + "/query/engine.cpp")), handle));
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
