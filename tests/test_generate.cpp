// Tests of `kbc generate` (compiler/generate/): the generated files are
// deterministic and free of timestamps and machine paths; every Markdown
// file parses with cmark-gfm (GitHub tables) and has the expected headings
// and tables, with header words from data/columns.tsv and fallback markers
// from data/ui.tsv; compiling the generated editions as sources gives the
// same recipes, rules, pitfalls and quick-reference facts as kb-sources
// (round trip); `--check` names stale files and exits 1; the committed
// generated/ is fresh; site files (pages, kb.json against
// docs/kb.schema.json, search records) have the documented shape.
#include <cmark-gfm-core-extensions.h>
#include <cmark-gfm-extension_api.h>
#include <cmark-gfm.h>
#include <yaml-cpp/yaml.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "base/markdown.hpp"
#include "base/text.hpp"
#include "base/tsv.hpp"
#include "compiler/generate/generate.hpp"
#include "compiler/pipeline.hpp"
#include "process.hpp"

#ifndef KB_SOURCE_DIR
#error "KB_SOURCE_DIR must name the repository root"
#endif
#ifndef KBC_PATH
#error "KBC_PATH must name the kbc executable"
#endif

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using kb::Compilation;
using kb::CompileOptions;
using kb::Diagnostics;

const std::string kRoot = KB_SOURCE_DIR;
const std::string kSources = kRoot + "/kb-sources";
const std::string kData = kSources + "/data";

std::string render_all(const Diagnostics& diags) { return diags.render_all(); }

// Each test's scratch folder (tests/process.hpp), named after this file.
struct TempDir : kbtest::TempDir {
  TempDir() : kbtest::TempDir("kbtests-generate") {}
};

std::unique_ptr<Compilation> compile_or_fail(const std::string& sources, const std::string& data = {}) {
  Diagnostics diags;
  CompileOptions opts;
  opts.sources = sources;
  opts.data = data;
  auto c = kb::compile(opts, diags);
  INFO(render_all(diags));
  REQUIRE(c);
  REQUIRE_FALSE(diags.has_errors());
  return c;
}

const Compilation& real() {
  static const std::unique_ptr<Compilation> c = compile_or_fail(kSources);
  return *c;
}

// Generates into `dir` (through the library) and returns every file.
std::map<std::string, std::string> files_in(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) out[fs::relative(e.path(), dir).generic_string()] = kbtest::read_file(e.path().string());
  return out;
}

std::map<std::string, std::string> generate_into(const Compilation& c, const TempDir& dir) {
  Diagnostics diags;
  const int rc = kb::generate(c, dir.str(), false, diags);
  INFO(render_all(diags));
  REQUIRE(rc == 0);
  REQUIRE_FALSE(diags.has_errors());
  return files_in(dir.path());
}

// The generated files of the real sources, made once.
const std::map<std::string, std::string>& generated() {
  static const TempDir dir;
  static const std::map<std::string, std::string> files = generate_into(real(), dir);
  return files;
}

const std::string& file(const std::string& rel) {
  const auto& g = generated();
  auto it = g.find(rel);
  INFO(rel);
  REQUIRE(it != g.end());
  return it->second;
}

std::vector<std::string> languages() { return std::vector<std::string>(real().vocab.languages.begin(), real().vocab.languages.end()); }

std::string lang_suffix(const std::string& lang) { return lang == "en" ? "" : "." + lang; }

// --- Markdown through cmark-gfm ----------------------------------------------------

struct Parsed {
  std::string front_matter;
  std::vector<std::pair<int, std::string>> headings;          // (level, text)
  std::vector<std::vector<std::vector<std::string>>> tables;  // table → rows → cells (row 0 = header)
  std::string html;
};

void text_of(cmark_node* n, std::string& out) {
  for (cmark_node* c = cmark_node_first_child(n); c; c = cmark_node_next(c)) {
    const auto t = cmark_node_get_type(c);
    if (t == CMARK_NODE_TEXT || t == CMARK_NODE_CODE || t == CMARK_NODE_HTML_INLINE) {
      if (const char* lit = cmark_node_get_literal(c)) out += lit;
    } else if (t == CMARK_NODE_SOFTBREAK || t == CMARK_NODE_LINEBREAK) {
      out += ' ';
    } else {
      text_of(c, out);
    }
  }
}

Parsed parse_md(const std::string& bytes) {
  Parsed p;
  std::string body = bytes;
  if (kb::starts_with(bytes, "---\n")) {
    const auto end = bytes.find("\n---\n", 3);
    REQUIRE(end != std::string::npos);
    p.front_matter = bytes.substr(4, end - 4);
    body = bytes.substr(end + 5);
  }
  cmark_gfm_core_extensions_ensure_registered();
  cmark_parser* parser = cmark_parser_new(CMARK_OPT_DEFAULT);
  cmark_syntax_extension* table = cmark_find_syntax_extension("table");
  REQUIRE(table);
  cmark_parser_attach_syntax_extension(parser, table);
  cmark_parser_feed(parser, body.data(), body.size());
  cmark_node* root = cmark_parser_finish(parser);
  cmark_iter* it = cmark_iter_new(root);
  for (cmark_event_type ev; (ev = cmark_iter_next(it)) != CMARK_EVENT_DONE;) {
    if (ev != CMARK_EVENT_ENTER) continue;
    cmark_node* n = cmark_iter_get_node(it);
    if (cmark_node_get_type(n) == CMARK_NODE_HEADING) {
      std::string t;
      text_of(n, t);
      p.headings.emplace_back(cmark_node_get_heading_level(n), t);
    } else if (std::string(cmark_node_get_type_string(n)) == "table") {
      std::vector<std::vector<std::string>> rows;
      for (cmark_node* row = cmark_node_first_child(n); row; row = cmark_node_next(row)) {
        std::vector<std::string> cells;
        for (cmark_node* cell = cmark_node_first_child(row); cell; cell = cmark_node_next(cell)) {
          std::string t;
          text_of(cell, t);
          cells.push_back(kb::trim(t));
        }
        rows.push_back(std::move(cells));
      }
      p.tables.push_back(std::move(rows));
    }
  }
  cmark_iter_free(it);
  char* html = cmark_render_html(root, CMARK_OPT_DEFAULT, cmark_parser_get_syntax_extensions(parser));
  p.html = html;
  free(html);
  cmark_node_free(root);
  cmark_parser_free(parser);
  return p;
}

// --- data lookups the tests check the output against ------------------------------------

const kb::TsvTable& ui_table() {
  static const kb::TsvTable t = [] {
    Diagnostics d;
    auto table = kb::load_tsv(kData + "/ui.tsv", d, {"lang", "key", "text", "source"});
    REQUIRE(table);
    return *table;
  }();
  return t;
}

std::string ui(const std::string& lang, const std::string& key) {
  for (const std::string& l : {lang, std::string("en")})
    for (const auto& row : ui_table().rows)
      if (ui_table().get(row, "lang") == l && ui_table().get(row, "key") == key) return ui_table().get(row, "text");
  FAIL("no ui label " << key);
  return {};
}

std::string marker_text(const std::string& lang, const std::string& fallback) {
  std::string t = ui(lang, "fallback");
  const auto at = t.find("{lang}");
  REQUIRE(at != std::string::npos);
  return t.replace(at, 6, ui(lang, "lang." + fallback));
}

// The first header word of a field in a language, as the generator picks it.
std::string header_word(const std::string& lang, const std::string& field) {
  const auto& t = real().vocab.columns;
  for (const std::string& want : {lang, std::string("en"), std::string("*")})
    for (const auto& row : t.rows)
      if (t.get(row, "lang") == want && t.get(row, "field") == field) return t.get(row, "header");
  return {};
}

// --- comparable facts --------------------------------------------------------------------

std::string range_text(const kb::Range& r) { return kb::format_range(r, kb::kFactWords); }

using RecipeKey =
    std::tuple<std::string, std::string, std::string, std::string, std::string, std::string, std::string, std::string, long, bool, bool>;

std::set<RecipeKey> recipe_facts(const Compilation& c) {
  std::set<RecipeKey> out;
  for (const auto& r : c.resolved.recipes)
    out.insert({std::string(kb::to_string(r.kind)), r.name, r.mode, range_text(r.tp), range_text(r.pp), range_text(r.cp), range_text(r.ep),
                range_text(r.gpus), r.seq_len, r.pattern, !r.mentioned_in.empty()});
  return out;
}

std::string show(const RecipeKey& k) {
  return std::get<0>(k) + " " + std::get<1>(k) + " /" + std::get<2>(k) + " tp=" + std::get<3>(k) + " pp=" + std::get<4>(k) +
         " cp=" + std::get<5>(k) + " ep=" + std::get<6>(k) + " gpus=" + std::get<7>(k) + " seq=" + std::to_string(std::get<8>(k)) +
         (std::get<9>(k) ? " pattern" : "") + (std::get<10>(k) ? " mentioned" : "");
}

std::map<std::string, std::map<std::string, std::set<std::string>>> entity_facts(const Compilation& c, const std::string& kind) {
  std::map<std::string, std::map<std::string, std::set<std::string>>> out;
  for (const auto& e : c.resolved.entities)
    if (e.kind == kind && !e.superseded) out[e.key] = e.winner().facts;
  return out;
}

}  // namespace

TEST_CASE("generate: two runs give byte-identical files", "[generate][one-compilation]") {
  // Two separate compilations, so nothing depends on pointer order.
  const auto again = compile_or_fail(kSources);
  TempDir dir;
  const auto second = generate_into(*again, dir);
  const auto& first = generated();
  REQUIRE(first.size() == second.size());
  for (const auto& [rel, bytes] : first) {
    INFO(rel);
    REQUIRE(second.count(rel));
    CHECK(second.at(rel) == bytes);
  }
}

TEST_CASE("generate: the expected files, with no timestamps or machine paths", "[generate][one-compilation]") {
  const auto& g = generated();
  for (const auto& lang : languages()) {
    CHECK(g.count("skill/SKILL." + lang + ".md"));
    CHECK(g.count("references/recipe-index" + lang_suffix(lang) + ".md"));
    CHECK(g.count("site/index" + lang_suffix(lang) + ".md"));
  }
  CHECK(g.count("translation-status.md"));
  CHECK(g.count("site/kb.json"));
  CHECK(g.count("site/search-records.json"));

  char today[16];
  const std::time_t now = std::time(nullptr);
  std::strftime(today, sizeof today, "%Y-%m-%d", std::gmtime(&now));
  const std::regex clock(R"(\b\d{2}:\d{2}:\d{2}\b|\d{4}-\d{2}-\d{2}T\d{2}:\d{2})");
  const std::string tmp = fs::temp_directory_path().string();
  for (const auto& [rel, bytes] : g) {
    INFO(rel);
    CHECK(bytes.find(kRoot) == std::string::npos);
    CHECK(bytes.find(tmp + "/") == std::string::npos);
    CHECK(bytes.find(fs::current_path().string() + "/") == std::string::npos);
    CHECK(bytes.find(today) == std::string::npos);
    // kb.json holds the code's own values, a Slurm time limit default
    // (04:00:00) among them: there only a date with a time is a timestamp.
    if (rel == "site/kb.json")
      CHECK_FALSE(std::regex_search(bytes, std::regex(R"(\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2})")));
    else
      CHECK_FALSE(std::regex_search(bytes, clock));
    CHECK(bytes.find('\r') == std::string::npos);
    CHECK(bytes.find('\x01') == std::string::npos);
    CHECK_FALSE(kb::find_invalid_utf8(bytes));
    CHECK(kb::ends_with(bytes, "\n"));
  }
}

TEST_CASE("generate: every Markdown file parses, with headings and tables", "[generate][one-compilation]") {
  for (const auto& [rel, bytes] : generated()) {
    if (!kb::ends_with(rel, ".md")) continue;
    INFO(rel);
    const Parsed p = parse_md(bytes);
    REQUIRE_FALSE(p.headings.empty());
    CHECK(p.headings.front().first == 1);
    for (const auto& t : p.tables) {
      REQUIRE(t.size() >= 2);  // a header and at least one row
      for (const auto& row : t) CHECK(row.size() == t.front().size());
      for (const auto& h : t.front()) CHECK_FALSE(h.empty());
    }
    // Escaping is invisible once parsed: no backslash escapes left in text.
    CHECK(p.html.find("\\_") == std::string::npos);
    CHECK(p.html.find("\\*") == std::string::npos);
    // Front matter is YAML with lang (and revision for editions).
    if (!kb::starts_with(rel, "translation-status")) {
      const YAML::Node fm = YAML::Load(p.front_matter);
      REQUIRE(fm.IsMap());
      CHECK(fm["lang"]);
    }
  }
}

TEST_CASE("generate: recipe indexes have one table per family, headers from columns.tsv", "[generate][one-compilation]") {
  const auto& c = real();
  std::set<std::string> families;
  for (const auto& e : c.resolved.entities)
    if (e.kind == "family") families.insert(e.key);
  for (const auto& lang : languages()) {
    const std::string rel = "references/recipe-index" + lang_suffix(lang) + ".md";
    INFO(rel);
    const Parsed p = parse_md(file(rel));
    CHECK(p.tables.size() >= 12);
    CHECK(p.tables.size() == families.size());
    const YAML::Node fm = YAML::Load(p.front_matter);
    CHECK(fm["lang"].as<std::string>() == lang);
    CHECK(fm["revision"].as<int>() >= 1);
    CHECK(fm["generated-from"].IsSequence());
    // Level-3 headings: one per family.
    size_t h3 = 0;
    for (const auto& [level, _] : p.headings) h3 += level == 3;
    CHECK(h3 == families.size());
    // Every header cell names a field in this language, with the word the
    // language's own columns.tsv rows give (else en, else *).
    for (const auto& t : p.tables)
      for (const auto& h : t.front()) {
        const std::string field = c.vocab.column_field(lang, h);
        INFO(h);
        REQUIRE_FALSE(field.empty());
        if (field != "gpus" && field != "min_gpus") CHECK(h == header_word(lang, field));
      }
  }
  // The fr library index lists recipe names, one row each: a pattern row
  // of the documents is split into the names it stands for.
  const std::string& fr = file("references/recipe-index.fr.md");
  CHECK(fr.find("`qwen2_*_pretrain_config`") == std::string::npos);
  CHECK(fr.find("| `qwen2_7b_pretrain_config` |") != std::string::npos);
  CHECK(fr.find("| `qwen2_72b_pretrain_config` |") != std::string::npos);
  CHECK(fr.find("{4b,12b,27b}") == std::string::npos);
  CHECK(fr.find("| `gemma3_vl_12b_sft_config` |") != std::string::npos);
  CHECK(fr.find("| `llama3_8b_pretrain_config` |") != std::string::npos);
}

TEST_CASE("generate: French headers come from columns.tsv fr rows", "[generate][one-compilation]") {
  // A data folder with French header rows: the fr index uses them.
  TempDir data;
  fs::copy(kData, data.path(), fs::copy_options::recursive);
  std::string columns = kbtest::read_file(data / "columns.tsv");
  columns += "fr\tRecette\trecipe\ttest\nfr\tModèle\tmodel\ttest\nfr\tRemarques\tnotes\ttest\n";
  kbtest::write_file(data / "columns.tsv", columns);
  const auto c = compile_or_fail(kSources, data.str());
  TempDir out;
  const auto files = generate_into(*c, out);
  const Parsed p = parse_md(files.at("references/recipe-index.fr.md"));
  REQUIRE(p.tables.size() >= 12);
  CHECK(p.tables.front().front().front() == "Recette");
  bool modele = false, remarques = false;
  for (const auto& t : p.tables) {
    modele = modele || t.front().front() == "Modèle";
    remarques = remarques || std::find(t.front().begin(), t.front().end(), "Remarques") != t.front().end();
  }
  CHECK(modele);
  CHECK(remarques);
  // The en index keeps the English words.
  CHECK(parse_md(files.at("references/recipe-index.md")).tables.front().front().front() == header_word("en", "recipe"));
}

TEST_CASE("generate: editions are complete, with fallback markers from ui.tsv", "[generate][one-compilation]") {
  const auto& c = real();
  // Section kinds of the newest original skill edition, in order.
  const kb::Document* tpl = nullptr;
  for (const auto& d : c.documents)
    if (fs::path(d.path).filename().string().rfind("SKILL.", 0) == 0 && d.meta.translated_from.empty() &&
        (!tpl || d.meta.revision > tpl->meta.revision))
      tpl = &d;
  REQUIRE(tpl);
  CHECK(tpl->path == "upstream/nemo-mbridge-recipe-recommender/SKILL.md");  // revision 4, as published
  std::vector<std::string> kinds;
  for (const auto& b : tpl->blocks)
    if (b.kind == kb::BlockKind::Heading) kinds.push_back(c.vocab.section_kind(tpl->meta.lang, b.text, b.level).kind);

  for (const auto& lang : languages()) {
    const std::string rel = "skill/SKILL." + lang + ".md";
    INFO(rel);
    const Parsed p = parse_md(file(rel));
    std::vector<std::string> got;
    for (const auto& [level, text] : p.headings) got.push_back(c.vocab.section_kind(lang, text, level).kind);
    CHECK(got == kinds);          // same sections, same order, every heading classified
    CHECK(p.tables.size() == 3);  // pitfalls, quick reference, code anchors
    const YAML::Node fm = YAML::Load(p.front_matter);
    CHECK(fm["revision"].as<int>() == tpl->meta.revision);
    CHECK(fm["name"].as<std::string>() == tpl->meta.name);
  }
  // With the translations of revision 4 (kb-sources/translations/rev4) every
  // edition is complete: nothing falls back to another language.
  for (const auto& lang : languages())
    for (const auto& other : languages()) {
      if (lang == other) continue;
      INFO(lang << " falls back to " << other);
      CHECK(file("skill/SKILL." + lang + ".md").find(marker_text(lang, other)) == std::string::npos);
      CHECK(file("references/recipe-index" + lang_suffix(lang) + ".md").find(marker_text(lang, other)) == std::string::npos);
    }
}

TEST_CASE("generate: an edition a language lacks falls back to English, with the marker of ui.tsv", "[generate][one-compilation]") {
  // Without the French and Japanese translations of revision 4, French has
  // no checklist (revision 1 had none) and Japanese no family headings (its
  // revision 3 had no recipe index): both fall back to English, marked.
  TempDir tmp;
  const fs::path src = tmp.path() / "sources";
  fs::copy(kSources, src, fs::copy_options::recursive);
  fs::remove(src / "translations/rev4/SKILL.fr.md");
  fs::remove(src / "translations/rev4/references/recipe-index.ja.md");
  const auto c = compile_or_fail(src.string());
  TempDir out;
  const auto files = generate_into(*c, out);
  const Parsed fr = parse_md(files.at("skill/SKILL.fr.md"));
  CHECK(fr.html.find("<em>" + marker_text("fr", "en") + "</em>") != std::string::npos);
  CHECK(parse_md(files.at("references/recipe-index.ja.md")).html.find(marker_text("ja", "en")) != std::string::npos);
  for (const auto& lang : languages()) CHECK(files.at("skill/SKILL.en.md").find(marker_text("en", lang)) == std::string::npos);
}

TEST_CASE("generate: every edition states the newest facts", "[generate][one-compilation]") {
  const auto& c = real();
  REQUIRE_FALSE(c.resolved.renames.empty());
  for (const auto& [rel, bytes] : generated()) {
    if (!kb::starts_with(rel, "skill/") && !kb::starts_with(rel, "references/")) continue;
    INFO(rel);
    for (const auto& r : c.resolved.renames) CHECK(bytes.find(r.from) == std::string::npos);
  }
  // The quick reference's first row recommends the newest recipe everywhere.
  for (const auto& lang : languages()) {
    const Parsed p = parse_md(file("skill/SKILL." + lang + ".md"));
    bool found = false;
    for (const auto& t : p.tables)
      for (const auto& row : t)
        if (row.size() > 1 && row[1].find("llama3_8b_pretrain_config") != std::string::npos) found = true;
    CHECK(found);
  }
}

TEST_CASE("generate: round trip, generated editions compile to the same facts", "[generate][one-compilation]") {
  TempDir src;
  for (const auto& [rel, bytes] : generated()) {
    if (!kb::starts_with(rel, "skill/") && !kb::starts_with(rel, "references/")) continue;
    fs::create_directories((src.path() / rel).parent_path());
    kbtest::write_file(src / rel, bytes);
  }
  const auto again = compile_or_fail(src.str(), kData);
  const auto& orig = real();

  // A named library recipe's values are the code's in the generated tables
  // (checked cell by cell against the code in test_drift_check.cpp): here
  // only that each exported one is still listed, in the same mode, and that
  // one the code no longer exports is not. Everything else round-trips as is.
  std::set<std::string> library;  // exported library names of the newest snapshot
  if (const auto* snap = orig.code.newest())
    for (const auto& r : snap->recipes)
      if (r.kind == kb::RecipeKind::Library) library.insert(r.name);
  const std::string lib(kb::to_string(kb::RecipeKind::Library));
  const std::string bench(kb::to_string(kb::RecipeKind::Benchmark));
  auto named = [&](const RecipeKey& k) { return std::get<0>(k) == lib && !std::get<9>(k) && !std::get<10>(k); };
  // The documents' library pattern rows are split into the names they
  // stand for (with the code's values): none is left in the regenerated tables.
  auto library_pattern = [&](const RecipeKey& k) { return std::get<0>(k) == lib && std::get<9>(k) && !std::get<10>(k); };
  auto split = [&](const std::set<RecipeKey>& all, std::set<RecipeKey>& kept, std::set<std::string>& from_code,
                   std::set<std::string>& unexported) {
    for (const auto& k : all) {
      if (library_pattern(k)) continue;
      if (std::get<0>(k) == bench && !std::get<10>(k)) {  // a benchmark model's row: its values are the code's
        from_code.insert(std::get<0>(k) + " " + std::get<1>(k));
        continue;
      }
      if (!named(k))
        kept.insert(k);
      else if (library.count(std::get<1>(k)))
        from_code.insert(std::get<1>(k) + " /" + std::get<2>(k));
      else
        unexported.insert(std::get<1>(k));
    }
  };
  std::set<RecipeKey> a, b;
  std::set<std::string> a_code, b_code, a_gone, b_gone;
  split(recipe_facts(orig), a, a_code, a_gone);
  split(recipe_facts(*again), b, b_code, b_gone);
  for (const auto& k : a)
    if (!b.count(k)) FAIL_CHECK("lost in the round trip: " << show(k));
  for (const auto& k : b)
    if (!a.count(k)) FAIL_CHECK("new in the round trip: " << show(k));
  CHECK(a.size() == b.size());
  // Every exported name the documents list is still listed, in the same
  // mode; the regenerated tables list more (every name --recipe takes).
  // Every benchmark model too (its GPU counts, hardware and layout are the
  // code's: test_drift_check.cpp).
  for (const auto& k : a_code) {
    INFO(k);
    CHECK(b_code.count(k));
  }
  CHECK(b_code.size() > a_code.size());
  CHECK_FALSE(a_code.empty());
  size_t patterns_left = 0;
  for (const auto& k : recipe_facts(*again)) patterns_left += library_pattern(k) ? 1 : 0;
  CHECK(patterns_left == 0);
  CHECK(b_gone.empty());  // names the code does not export are dropped

  // A quick-reference row's GPU count is the code's where the documents'
  // is below what its recipes need (quick_ref_gpus): 16+ → 64+ for the 128K
  // recipe, 4–8 → 4–16 for gemma3_vl_*_sft_config. Every other fact round-trips.
  size_t regenerated_gpus = 0;
  for (const char* kind : {"rule", "pitfall", "quick_ref", "checklist", "batch_rule"}) {
    INFO(kind);
    auto x = entity_facts(orig, kind);
    const auto y = entity_facts(*again, kind);
    CHECK(x.size() == y.size());
    for (auto& [key, facts] : x) {
      INFO(key);
      REQUIRE(y.count(key));
      if (std::string(kind) == "quick_ref" && facts.count("gpus") && y.at(key).count("gpus") && facts.at("gpus") != y.at(key).at("gpus")) {
        ++regenerated_gpus;
        facts["gpus"] = y.at(key).at("gpus");
      }
      CHECK(y.at(key) == facts);
    }
  }
  CHECK(regenerated_gpus == 2);
}

TEST_CASE("generate: --check names stale files and exits 1", "[generate]") {
  // One scenario, four kbc runs (a sanitizer build runs each 30 times slower).
  TempDir out;
  auto gen = kbtest::run(KBC_PATH, {"generate", "--sources", kSources, "-o", out.str()});
  INFO(gen.err);
  REQUIRE(gen.exit_code == 0);
  // A file edited by hand, a missing file and a file no longer generated
  // (one an earlier run wrote: its manifest lists it), beside a file kbc
  // never wrote (not in the manifest: neither stale nor removed).
  const std::string edited = out / "skill/SKILL.fr.md";
  kbtest::write_file(edited, kbtest::read_file(edited) + "edited by hand\n");
  fs::remove(out / "references/recipe-index.ja.md");
  kbtest::write_file(out / "site/recipes/old_recipe_config.md", "old\n");
  const std::string manifest = out / ".kbc-generate.sha256";
  kbtest::write_file(manifest, kbtest::read_file(manifest) + kb::sha256_hex("old\n") + "  site/recipes/old_recipe_config.md\n");
  kbtest::write_file(out / "site/recipes/handwritten.md", "mine\n");
  auto r = kbtest::run(KBC_PATH, {"generate", "--sources", kSources, "-o", out.str(), "--check"});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("skill/SKILL.fr.md") != std::string::npos);
  CHECK(r.err.find("SKILL.en.md") == std::string::npos);
  CHECK(r.err.find("references/recipe-index.ja.md") != std::string::npos);
  CHECK(r.err.find("site/recipes/old_recipe_config.md: stale: no longer generated") != std::string::npos);
  CHECK(r.err.find("handwritten.md") == std::string::npos);
  CHECK(kbtest::read_file(edited).find("edited by hand") != std::string::npos);  // --check writes nothing
  CHECK_FALSE(fs::exists(out / "references/recipe-index.ja.md"));
  // Regenerating repairs all three and keeps the file kbc did not write;
  // --check then passes.
  REQUIRE(kbtest::run(KBC_PATH, {"generate", "--sources", kSources, "-o", out.str()}).exit_code == 0);
  CHECK(fs::exists(out / "references/recipe-index.ja.md"));
  CHECK_FALSE(fs::exists(out / "site/recipes/old_recipe_config.md"));
  CHECK(kbtest::read_file(out / "site/recipes/handwritten.md") == "mine\n");
  CHECK(kbtest::read_file(edited).find("edited by hand") == std::string::npos);
  CHECK(kbtest::run(KBC_PATH, {"generate", "--sources", kSources, "-o", out.str(), "--check"}).exit_code == 0);
}

TEST_CASE("generate: the committed generated/ is fresh", "[generate][fresh]") {
  auto r = kbtest::run(KBC_PATH, {"generate", "--sources", kSources, "-o", kRoot + "/generated", "--check"});
  INFO(r.err);
  CHECK(r.exit_code == 0);
}

TEST_CASE("generate: site recipe pages have front matter, facts and a launch command", "[generate][one-compilation]") {
  const auto& g = generated();
  size_t pages = 0;
  for (const auto& [rel, bytes] : g) {
    if (!kb::starts_with(rel, "site/recipes/")) continue;
    ++pages;
    INFO(rel);
    const Parsed p = parse_md(bytes);
    const YAML::Node fm = YAML::Load(p.front_matter);
    for (const char* k : {"title", "family", "kind", "lang", "tags"}) CHECK(fm[k]);
    CHECK(fm["tags"].IsSequence());
    CHECK(fm["title"].IsScalar());
    // The facts; for a recipe the code exports, what the code sets, where a
    // document disagrees, the smallest layout per GPU type, the expected
    // throughput and NVIDIA's measured rows.
    CHECK(p.tables.size() >= 1);
    CHECK(p.tables.size() <= 6);
  }
  for (const auto& lang : languages()) {
    const std::string& page = file("site/recipes/llama3_8b_sft_config" + lang_suffix(lang) + ".md");
    INFO(page);
    // The code's line for every size, at the compiled commit.
    CHECK(page.find("| `tp` | 2 | `src/megatron/bridge/recipes/llama/h100/llama3.py:") != std::string::npos);
    CHECK(page.find("| `seq_length` | 4096 |") != std::string::npos);
    // The documents' 8192 against the code's 4096.
    CHECK(page.find("| `seq_len` | 8192 |") != std::string::npos);
    // The smallest layout on each GPU type of planner.tsv finder_hardware.
    for (const char* hw : {"| H100 |", "| A100 |", "| B200 |", "| GB200 |"}) CHECK(page.find(hw) != std::string::npos);
  }
  CHECK(pages % languages().size() == 0);
  CHECK(pages >= 100 * languages().size());

  // The launch command: the revision-3 template with --recipe and --dataset filled.
  std::string preset;
  const auto& ds = real().vocab.datasets;
  for (const auto& row : ds.rows)
    if (preset.empty() && ds.get(row, "modes").find("pretrain") != std::string::npos) preset = ds.get(row, "preset");
  // "--dataset mock" as a whole word: the end of a line, or a continuation.
  auto has_dataset = [&](const std::string& page) {
    const std::string flag = "--dataset " + preset;
    for (size_t at = page.find(flag); at != std::string::npos; at = page.find(flag, at + 1)) {
      const char next = at + flag.size() < page.size() ? page[at + flag.size()] : '\n';
      if (next == '\n' || next == ' ') return true;
    }
    return false;
  };
  for (const auto& lang : languages()) {
    const std::string& page = file("site/recipes/llama3_8b_pretrain_config" + lang_suffix(lang) + ".md");
    CHECK(page.find("--recipe llama3_8b_pretrain_config") != std::string::npos);
    CHECK_FALSE(has_dataset(page));  // its own mock data: --dataset would replace the recipe's dataset config
  }
  const std::string& sft = file("site/recipes/llama3_8b_sft_config.md");
  CHECK_FALSE(has_dataset(sft));
}

// The value cell of a (label, value) row of a page's tables; "" when absent.
std::string row_value(const Parsed& p, const std::string& label) {
  for (const auto& t : p.tables)
    for (const auto& row : t)
      if (row.size() == 2 && row[0] == label) return row[1];
  return {};
}

TEST_CASE("generate: a recipe page shows kbq show's throughput and the rows kbq perf lists for its model and task",
          "[generate][one-compilation][perf]") {
  // A measured-or-estimated dense recipe, an MoE one, a fine-tuning one and
  // a model NVIDIA never measured, in every language.
  const std::vector<std::string> recipes = {"llama3_70b_pretrain_config", "qwen3_30b_a3b_pretrain_config", "llama3_70b_sft_config",
                                            "gemma3_1b_pretrain_config"};
  size_t measured_tables = 0;
  for (const auto& name : recipes)
    for (const auto& lang : languages()) {
      const std::string rel = "site/recipes/" + name + lang_suffix(lang) + ".md";
      INFO(rel);
      const Parsed p = parse_md(file(rel));
      const auto show = kbtest::run(KBQ_PATH, {"show", name, "--lang", lang, "--format", "json"});
      REQUIRE(show.exit_code == 0);
      const json r = json::parse(show.out)["results"][0];
      const json& t = r["throughput"];
      // The basis and its band as kbq gives them.
      const std::string basis = row_value(p, ui(lang, "perf.site.basis"));
      if (t["basis"] == "estimated") {
        char band[32];
        std::snprintf(band, sizeof band, "%.1f", t["error_band_pct"].get<double>());
        CHECK(basis == kb::fill_placeholders(ui(lang, "perf.site.basis.estimated"), {{"band", band}}));
      } else {
        CHECK(basis == ui(lang, "perf.site.basis." + t["basis"].get<std::string>()));
      }
      CHECK(row_value(p, ui(lang, "perf.site.how")) == t["how"].get<std::string>());
      if (t["basis"] != "none") {
        // The figures within their printed rounding.
        const double tokens = std::stod(row_value(p, ui(lang, "perf.site.tokens")));
        CHECK(tokens == Approx(t["tokens_per_s_per_gpu"].get<double>()).epsilon(0.01));
        const double job = std::stod(row_value(p, ui(lang, "perf.site.job")));
        CHECK(job == Approx(t["tokens_per_s"].get<double>()).epsilon(0.01));
        const double step = std::stod(row_value(p, ui(lang, "perf.site.step")));
        CHECK(step == Approx(t["step_time_s"].get<double>()).epsilon(0.01));
        CHECK(row_value(p, ui(lang, "perf.site.sources")).find(t["source"].get<std::string>()) != std::string::npos);
      }
      // NVIDIA's rows: exactly those kbq perf lists for the model and the
      // recipe's task, each with its tokens/s/GPU and file:line.
      const auto perf = kbtest::run(KBQ_PATH, {"perf", r["model"].get<std::string>(), "--lang", lang, "--format", "json"});
      std::map<std::string, long long> want;  // file:line → tokens/s/GPU
      const json listed = perf.exit_code == 0 ? json::parse(perf.out) : json::object();
      if (listed.contains("rows"))
        for (const auto& row : listed["rows"])
          if (row["task"] == r["mode"])
            want[row["source"]["file"].get<std::string>() + ":" + std::to_string(row["source"]["line"].get<int>())] =
                std::llround(row["tokens_per_s_per_gpu"].get<double>());
      std::map<std::string, long long> shown;
      for (const auto& tbl : p.tables) {  // its last column: file:line; third last: tokens/s/GPU
        if (tbl.empty() || tbl[0].size() < 6) continue;
        const auto& head = tbl[0];
        const size_t src = head.size() - 1, tok = head.size() - 3;
        if (tbl.size() < 2 || tbl[1][src].find("performance-summary") == std::string::npos) continue;
        ++measured_tables;
        for (size_t i = 1; i < tbl.size(); ++i) shown[tbl[i][src]] = std::stoll(tbl[i][tok]);
      }
      CHECK(shown == want);
      if (want.empty()) CHECK(file(rel).find(kb::md::text(ui(lang, "perf.site.no_rows"))) != std::string::npos);
    }
  // Three of the four recipes' models were measured for their task.
  CHECK(measured_tables == 3 * languages().size());
}

TEST_CASE("generate: kb.json follows docs/kb.schema.json", "[generate][one-compilation]") {
  const json kb = json::parse(file("site/kb.json"));
  const json schema = json::parse(kbtest::read_file(kRoot + "/docs/kb.schema.json"));
  REQUIRE(kb.is_object());
  for (const auto& t : schema["required"]) CHECK(kb.contains(t.get<std::string>()));
  auto type_ok = [](const json& v, const json& allowed) {
    auto one = [&](const std::string& t) {
      return (t == "null" && v.is_null()) || (t == "string" && v.is_string()) || (t == "integer" && v.is_number_integer()) ||
             (t == "number" && v.is_number());
    };
    if (allowed.is_string()) return one(allowed.get<std::string>());
    for (const auto& a : allowed)
      if (one(a.get<std::string>())) return true;
    return false;
  };
  for (const auto& [table, rows] : kb.items()) {
    INFO(table);
    REQUIRE(schema["properties"].contains(table));
    const json& item = schema["properties"][table]["items"];
    for (const auto& row : rows) {
      for (const auto& col : item["required"]) CHECK(row.contains(col.get<std::string>()));
      for (const auto& [col, v] : row.items()) {
        INFO(col);
        REQUIRE(item["properties"].contains(col));
        CHECK(type_ok(v, item["properties"][col]["type"]));
      }
    }
  }
}

TEST_CASE("generate: search records, one per recipe, rule, pitfall and quick-reference row per language", "[generate][one-compilation]") {
  const json records = json::parse(file("site/search-records.json"));
  REQUIRE(records.is_array());
  std::set<std::string> ids;
  std::map<std::string, std::map<std::string, size_t>> count;  // lang → type → n
  const auto langs = languages();
  for (const auto& r : records) {
    const std::string id = r["objectID"];
    CHECK(ids.insert(id).second);
    CHECK(r["hierarchy"]["lvl0"].is_string());
    CHECK_FALSE(r["hierarchy"]["lvl0"].get<std::string>().empty());
    CHECK(r["hierarchy"].contains("lvl1"));
    CHECK(r["hierarchy"].contains("lvl2"));
    CHECK(r["content"].is_string());
    CHECK(r["tags"].is_array());
    const std::string url = r["url"], page = r["url_without_anchor"], anchor = r["anchor"];
    CHECK(url == page + "#" + anchor);
    CHECK(generated().count(page));
    const std::string lang = r["lang"];
    CHECK(std::find(langs.begin(), langs.end(), lang) != langs.end());
    ++count[lang][id.substr(0, id.find('-'))];
  }
  const auto& c = real();
  auto n = [&](const char* kind) {
    return static_cast<size_t>(std::count_if(c.resolved.entities.begin(), c.resolved.entities.end(),
                                             [&](const kb::Entity& e) { return e.kind == kind && !e.superseded; }));
  };
  for (const auto& lang : langs) {
    INFO(lang);
    CHECK(count[lang]["rule"] == n("rule"));
    CHECK(count[lang]["pitfall"] == n("pitfall"));
    CHECK(count[lang]["quick_ref"] == n("quick_ref"));
    CHECK(count[lang]["recipe"] == count[langs.front()]["recipe"]);
    CHECK(count[lang]["recipe"] >= 100);
  }
}

TEST_CASE("generate: translation status lists missing, stale and resolved", "[generate][one-compilation]") {
  const std::string& s = file("translation-status.md");
  const Parsed p = parse_md(s);
  std::set<std::string> h2;
  for (const auto& [level, text] : p.headings)
    if (level == 2) h2.insert(text);
  for (const auto& lang : languages()) CHECK(h2.count(ui("en", "lang." + lang) + " (" + lang + ")"));
  // The translations of revision 4 leave no entity missing or stale in any
  // language (issue 11, item 7): the summary's Missing and Stale are 0.
  for (const auto& lang : languages()) {
    INFO(lang);
    CHECK(s.find("| " + ui("en", "lang." + lang) + " (" + lang + ") | 0 | 0 |") != std::string::npos);
  }
  // What older editions said is listed as resolved: zh's checklist item 3
  // (revision 2 recommended llama3_8b_sft_config), and every rename.
  CHECK(s.find("| `checklist` | `3` | `recipe` | `llama3_8b_sft_config` (skill/SKILL.zh.md:") != std::string::npos);
  for (const auto& r : real().resolved.renames) CHECK(s.find(r.from) != std::string::npos);
}

TEST_CASE(
    "generate: the changelog lists prose the code contradicts (a flag the launcher lacks, a GPU count below the layout) and "
    "the quick-reference GPU counts it sets from the code",
    "[generate][one-compilation][drift]") {
  // The published commands use only the launchers' flags: no such finding.
  // One launches a recipe on a world its layout cannot use: the CUDA graphs
  // example runs qwen3_30b_a3b_pretrain_config, an alias of the 16-GPU
  // function with EP 16 (qwen3_moe.py:173), on 8 GPUs; its overrides set no
  // layout dimension.
  const std::string& published = file("CHANGES.md");
  CHECK(published.find("is not an option of") == std::string::npos);
  CHECK(published.find("the launcher accepts") == std::string::npos);  // every preset in a mode that takes it
  CHECK(published.find("`qwen3_30b_a3b_pretrain_config` launched on 8 GPUs, which is not a multiple of the 16 GPUs its layout needs") !=
        std::string::npos);
  CHECK(published.find("with `model.context_parallel_size=4`") == std::string::npos);  // 8 GPUs fit CP 4 at TP 1
  // The quick reference recommends gemma3_vl_*_sft_config for 4–8 GPUs; the
  // 27B member is the 16-GPU function (gemma3_vl.py:259, TP 8 · PP 2), so
  // the regenerated cell is 4–16. The 4B and 12B members fit in 8.
  CHECK(published.find("- “VLM fine-tuning”: GPUs 4–8 → 4–16: `gemma3_vl_27b_sft_config` needs 16 (document "
                       "upstream/nemo-mbridge-recipe-recommender/SKILL.md:319; code") != std::string::npos);
  CHECK(file("skill/SKILL.en.md").find("| `qwen3_vl_8b_sft_config` or `gemma3_vl_*_sft_config` | 4–16 |") != std::string::npos);
  CHECK(published.find("`gemma3_vl_4b_sft_config` needs") == std::string::npos);
  CHECK(published.find("`gemma3_vl_12b_sft_config` needs") == std::string::npos);
  // llama3_8b_128k_pretrain_config from 16 GPUs: its code (TP 4, PP 2, CP 8) needs 64.
  CHECK(published.find("- “Long-context training”: GPUs 16+ → 64+: `llama3_8b_128k_pretrain_config` needs 64") != std::string::npos);
  // "Fine-tune a 7-8B model: llama3_8b_sft_config or qwen3_8b_sft_config,
  // 2–4": llama3_8b_sft_config runs on 2 (TP 2), qwen3_8b_sft_config on 4
  // (TP 4): the range holds both, no change.
  CHECK(published.find("Fine-tune a 7-8B model”") == std::string::npos);
  CHECK(published.find("`qwen3_8b_sft_config` is recommended") == std::string::npos);
  // A benchmark row's key features state EP 64–128; the exported
  // Qwen3-Next benchmark recipes set EP 32, 64 and 128 (the EP column shows 32–128).
  CHECK(published.find("the notes of Qwen3-Next 80B-A3B state EP 64–128; the code sets 32, 64, 128") != std::string::npos);
  // The long-context example overrides model.seq_length, which the runner
  // copies back from the dataset's after the overrides (recipe_runner.py:486);
  // its explicit train.global_batch_size is kept (run_recipe.py:357): not listed.
  CHECK(published.find("SKILL.md:288: the override `model.seq_length=32768` does not last: the runner sets `model.seq_length` = "
                       "`dataset_seq_length` after it applies the overrides (code `scripts/training/recipe_runner.py:486@067f987df`)") !=
        std::string::npos);
  CHECK(published.find("SKILL.md:110:") == std::string::npos);

  // The first library command of revision 4 with a flag run_recipe.py does
  // not have, and a recipe whose layout needs 64 GPUs on 8.
  TempDir tmp;
  const fs::path src = tmp.path() / "sources";
  fs::copy(kSources, src, fs::copy_options::recursive);
  const fs::path skill = src / "upstream/nemo-mbridge-recipe-recommender/SKILL.md";
  std::string text = kbtest::read_file(skill.string());
  // Replaces `was` in a command; returns the line the command is cited at,
  // its first comment line ("# Pretrain with mock data").
  auto edit_command = [&](const std::string& was, const std::string& now) {
    const auto at = text.find(was);
    REQUIRE(at != std::string::npos);
    const auto comment = text.rfind("\n#", at);
    REQUIRE(comment != std::string::npos);
    text.replace(at, was.size(), now);
    return static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(comment) + 1, '\n')) + 1;
  };
  const int line = edit_command("    --recipe <recipe_function_name> \\\n    --dataset mock\n",
                                "    --recipe llama3_8b_128k_pretrain_config \\\n    --gpu_type h100 --dataset mock\n");
  // The long-context example with CP 16 (llama3_8b_pretrain_config: TP 1,
  // PP 1) on its 8 GPUs: the layout with the command's overrides needs 16.
  const int cp_line = edit_command("'model.context_parallel_size=4'", "'model.context_parallel_size=16'");
  // The native 4-GPU Qwen3-MoE PEFT example with the pretraining-only mock
  // preset: the launcher infers mode lora from the name and rejects mock in
  // it (dataset_utils.py:542: pretrain only).
  const int peft_line = edit_command("    --recipe qwen3_30b_a3b_peft_config \\\n    --dataset tulu3\n",
                                     "    --recipe qwen3_30b_a3b_peft_config \\\n    --dataset mock\n");
  {
    std::ofstream f(skill, std::ios::binary | std::ios::trunc);
    f << text;
  }
  const auto c = compile_or_fail(src.string());
  TempDir out;
  const auto changes = generate_into(*c, out).at("CHANGES.md");
  INFO(changes);
  const std::string where = "upstream/nemo-mbridge-recipe-recommender/SKILL.md:" + std::to_string(line) + ": ";
  CHECK(changes.find(where + "`--gpu_type` is not an option of `run_recipe.py`") != std::string::npos);
  CHECK(changes.find(where +
                     "`llama3_8b_128k_pretrain_config` launched on 8 GPUs, which is not a multiple of the 64 GPUs its layout needs") !=
        std::string::npos);
  CHECK(changes.find("upstream/nemo-mbridge-recipe-recommender/SKILL.md:" + std::to_string(cp_line) +
                     ": `llama3_8b_pretrain_config` with `model.context_parallel_size=16` launched on 8 GPUs, which is not a multiple "
                     "of the 16 GPUs that layout needs") != std::string::npos);
  CHECK(changes.find("upstream/nemo-mbridge-recipe-recommender/SKILL.md:" + std::to_string(peft_line) +
                     ": --dataset mock with `qwen3_30b_a3b_peft_config`, which runs in mode lora: the launcher accepts mock only in "
                     "pretrain (code `src/megatron/bridge/recipes/utils/dataset_utils.py:542@067f987df`)") != std::string::npos);
  CHECK(changes.find("\nfor-a-maintainer: 9\n") != std::string::npos);  // the 5 of the published edition, and these 4
}

TEST_CASE("generate: a planner setting the generator needs is an error when missing or not a count", "[generate]") {
  // data/planner.tsv finder_gpu_counts: missing, the finder would be built
  // with no GPU counts; 'two', std::stoll threw an uncaught exception.
  TempDir tmp;
  const std::string data = tmp / "data";
  fs::copy(std::string(kSources) + "/data", data, fs::copy_options::recursive);
  const std::string planner = kbtest::read_file(data + "/planner.tsv");
  const size_t at = planner.find("\nfinder_gpu_counts\t");
  REQUIRE(at != std::string::npos);
  const size_t end = planner.find('\n', at + 1);
  const std::string without = planner.substr(0, at) + planner.substr(end);
  const std::string bad = planner.substr(0, at) + "\nfinder_gpu_counts\t1 two 4\tconvention: a test" + planner.substr(end);
  for (const auto& [text, says] :
       {std::pair{without, std::string("missing or empty")}, std::pair{bad, std::string("'two' is not a whole number")}}) {
    kbtest::write_file(data + "/planner.tsv", text);
    const auto r = kbtest::run(KBC_PATH, {"generate", "--sources", kSources, "--data", data, "-o", tmp / "out"});
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("cannot generate") != std::string::npos);
    CHECK(r.err.find("finder_gpu_counts") != std::string::npos);
    CHECK(r.err.find(says) != std::string::npos);
  }
}
