// Tests of the compiler pipeline (compiler/pipeline.hpp) on the real
// kb-sources: recipe facts read from the index tables, brace and `*`
// expansion, recipes known by mention, rule alignment across the four
// languages, the lint report (renames, conflicts, missing translations),
// deterministic output, the text-export front end against the restored
// markdown editions, and the atomic write of `kbc build` under SIGKILL.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "process.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "base/limits.hpp"
#include "base/process.hpp"
#include "base/sqlite.hpp"
#include "base/text.hpp"
#include "compiler/code/code.hpp"
#include "compiler/extract/vocab.hpp"
#include "compiler/generate/perf_fit.hpp"
#include "compiler/ingest/ingest.hpp"
#include "compiler/pipeline.hpp"

#ifndef KB_SOURCE_DIR
#error "KB_SOURCE_DIR must name the repository root"
#endif
#ifndef KBC_PATH
#error "KBC_PATH must name the kbc executable"
#endif

namespace {

namespace fs = std::filesystem;
using kb::Compilation;
using kb::CompileOptions;
using kb::Diagnostics;
using kb::Range;
using kb::RecipeRow;

const std::string kRoot = KB_SOURCE_DIR;
const std::string kSources = kRoot + "/kb-sources";
const std::string kData = kSources + "/data";

std::string render_all(const Diagnostics& diags) { return diags.render_all(); }

// Each test's scratch folder (tests/process.hpp), named after this file.
struct TempDir : kbtest::TempDir {
  TempDir() : kbtest::TempDir("kbtests-compiler") {}
};

// The real kb-sources, compiled once for every test of this file.
struct RealCompile {
  Diagnostics diags;
  std::unique_ptr<Compilation> c;
};

const RealCompile& real() {
  static const RealCompile r = [] {
    RealCompile x;
    CompileOptions opts;
    opts.sources = kSources;
    x.c = kb::compile(opts, x.diags);
    return x;
  }();
  return r;
}

const Compilation& real_compilation() {
  const auto& r = real();
  INFO(render_all(r.diags));
  REQUIRE(r.c);
  REQUIRE_FALSE(r.diags.has_errors());
  return *r.c;
}

const RecipeRow* find_recipe(const Compilation& c, const std::string& name, const std::string& mode) {
  for (const auto& r : c.resolved.recipes)
    if (r.name == name && r.mode == mode) return &r;
  return nullptr;
}

const kb::Entity* find_entity(const Compilation& c, const std::string& kind, const std::string& key) {
  for (const auto& e : c.resolved.entities)
    if (e.kind == kind && e.key == key) return &e;
  return nullptr;
}

// The newest revision among the compiled editions: the one that wins. (It
// was 3, the Japanese edition, until the upstream English revision 4 was
// added; the assertions state "the newest", not a number.)
int newest_revision(const Compilation& c) {
  int n = 0;
  for (const auto& d : c.documents) n = std::max(n, d.meta.revision);
  return n;
}

// A range as text, for set comparisons and messages: "8", "1-8", "512+",
// "none", "varies", "" (unknown).
std::string range_text(const Range& r) { return kb::format_range(r, kb::kFactWords); }

// Is there a lint line holding every one of `parts`?
bool has_lint_line(const std::vector<std::string>& lines, std::initializer_list<std::string> parts) {
  return std::any_of(lines.begin(), lines.end(), [&](const std::string& line) {
    return std::all_of(parts.begin(), parts.end(), [&](const std::string& p) { return line.find(p) != std::string::npos; });
  });
}

// Starts a program with stdout and stderr sent to /dev/null; returns its pid.
pid_t spawn_quiet(const std::vector<std::string>& argv) {
  kb::SpawnOptions o;
  o.out = o.err = kb::Stream::Null;
  return kb::spawn(argv, o).pid;
}

// The exit status, or minus the signal that ended it.
int wait_exit_code(pid_t pid) {
  const kb::ExitStatus s = kb::wait_for(pid);
  return s.signal ? -s.signal : s.code;
}

std::string integrity_check(const std::string& path) {
  kb::Db db(path, kb::Db::Mode::ReadOnly);
  kb::Stmt st(db, "PRAGMA integrity_check");
  std::string out;
  while (st.step()) out += st.text(0);
  return out;
}

}  // namespace

TEST_CASE("a source's digest is its SHA-256 (the FIPS 180-2 test vectors)", "[compiler]") {
  CHECK(kb::sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(kb::sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(kb::sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(kb::sha256_hex(std::string(1000000, 'a')) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // Bytes that are not text (a NUL, high bytes) are digested as they are.
  CHECK(kb::sha256_hex(std::string("\0\xff", 2)) != kb::sha256_hex(std::string("\0", 1)));
}

TEST_CASE("the real kb-sources compile without errors or warnings", "[compiler]") {
  const auto& r = real();
  INFO(render_all(r.diags));
  REQUIRE(r.c);
  CHECK_FALSE(r.diags.has_errors());
  CHECK(r.diags.all().empty());
  CHECK(r.c->documents.size() >= 5);  // SKILL.{en,fr,ja,zh}.md + references/recipe-index.md
}

TEST_CASE("llama3_70b_pretrain_config is read from the library index", "[compiler]") {
  const auto& c = real_compilation();
  const RecipeRow* r = find_recipe(c, "llama3_70b_pretrain_config", "pretrain");
  REQUIRE(r);
  CHECK(r->kind == kb::RecipeKind::Library);
  CHECK_FALSE(r->pattern);
  CHECK(r->model_key == "llama3_70b");
  CHECK(r->tp.exact());
  CHECK(r->tp.lo == 8);
  CHECK(r->pp.exact());
  CHECK(r->pp.lo == 4);
  CHECK(r->cp.state == kb::RangeState::None);  // "—": context parallelism not used
  CHECK(r->sp == std::optional<bool>(true));
  CHECK(r->gpus.exact());
  CHECK(r->gpus.lo == 32);
  CHECK(r->seq_len == 8 * 1024);  // "8K", K = 1024 (lexicon seq_magnitude)
}

TEST_CASE("qwen3_30b_a3b_sft_config has expert parallelism 16 (revision 4), 8 in revision 2", "[compiler]") {
  // Revision 2 (zh, and the English recipe index translated from it) said
  // EP 8 on 8 GPUs; upstream revision 4 says EP 16 on 16 GPUs. The newest
  // wins, and the older value is a conflict, not lost.
  const auto& c = real_compilation();
  const RecipeRow* r = find_recipe(c, "qwen3_30b_a3b_sft_config", "sft");
  REQUIRE(r);
  CHECK(r->kind == kb::RecipeKind::Library);
  CHECK(r->prov.revision == 4);
  CHECK(r->ep.exact());
  CHECK(r->ep.lo == 16);
  CHECK(r->tp.lo == 1);
  CHECK(r->gpus.lo == 16);
  CHECK(has_lint_line(kb::lint_lines(c), {": conflict: recipe qwen3_30b_a3b_sft_config/sft ep: '8' (rev 2 zh) -> '16' (rev 4 en"}));
}

TEST_CASE("a brace pattern expands to one recipe per alternative", "[compiler]") {
  const auto& c = real_compilation();
  const std::string pattern = "gemma3_vl_{4b,12b,27b}_{sft,peft}_config";
  std::set<std::pair<std::string, std::string>> got;
  for (const auto& r : c.resolved.recipes)
    if (r.expanded_from == pattern) {
      got.insert({r.name, r.mode});
      CHECK_FALSE(r.pattern);
      CHECK(r.kind == kb::RecipeKind::Library);
      CHECK(range_text(r.tp) == "1-8");
      CHECK(range_text(r.gpus) == "1-16");
    }
  const std::set<std::pair<std::string, std::string>> want = {
      {"gemma3_vl_4b_sft_config", "sft"},    {"gemma3_vl_4b_peft_config", "peft"}, {"gemma3_vl_12b_sft_config", "sft"},
      {"gemma3_vl_12b_peft_config", "peft"}, {"gemma3_vl_27b_sft_config", "sft"},  {"gemma3_vl_27b_peft_config", "peft"},
  };
  CHECK(got == want);
  CHECK(got.size() == 6);
}

TEST_CASE("a star pattern stays a pattern; a mentioned name it covers becomes a recipe", "[compiler]") {
  // Revision 4 lists qwen3_8b_sft_config in a table of its own (revisions 2
  // and 3 knew it only from a quick-reference row), so a name known by
  // mention alone is checked on a fixture.
  const auto& c = real_compilation();
  const RecipeRow* pattern = find_recipe(c, "qwen3_*_sft_config", "sft");
  REQUIRE(pattern);
  CHECK(pattern->pattern);
  CHECK(pattern->mentioned_in.empty());
  const RecipeRow* listed = find_recipe(c, "qwen3_8b_sft_config", "sft");
  REQUIRE(listed);
  CHECK(listed->mentioned_in.empty());  // a table row of revision 4
  CHECK(listed->tp.exact());
  CHECK(listed->tp.lo == 4);

  TempDir tmp;
  fs::create_directories(tmp / "src/skill");
  kbtest::write_file(tmp / "src/skill/SKILL.en.md", R"(---
lang: en
revision: 1
---

# Recipe Index

## Library Recipe Index

### Qwen3

| Recipe | Mode | TP | PP |
|---|---|---|---|
| qwen3_*_sft_config | SFT | 1–8 | 1–2 |

## Quick Reference: Which Recipe for My Situation?

| I want to... | Start with | GPUs needed |
|---|---|---|
| Fine-tune an 8B model | `qwen3_8b_sft_config` | 2 |
)");
  CompileOptions opts;
  opts.sources = tmp / "src";
  opts.data = kData;
  Diagnostics diags;
  auto fixture = kb::compile(opts, diags);
  INFO(render_all(diags));
  REQUIRE(fixture);
  const RecipeRow* r = find_recipe(*fixture, "qwen3_8b_sft_config", "sft");
  REQUIRE(r);
  CHECK_FALSE(r->pattern);
  CHECK_FALSE(r->mentioned_in.empty());  // known from a mention (quick reference), not a table row
  CHECK(r->expanded_from == "qwen3_*_sft_config");
  CHECK(r->model_key == "qwen3_8b");
  CHECK(r->tp.known());
  CHECK(r->tp.lo == 1);
  CHECK(r->tp.hi == 8);
  CHECK_FALSE(r->tp.exact());
}

TEST_CASE("every sizing rule has text in fr, zh, ja and en", "[compiler]") {
  const auto& c = real_compilation();
  std::set<std::string> keys;
  for (const auto& e : c.resolved.entities)
    if (e.kind == "rule") keys.insert(e.key);
  CHECK(keys == std::set<std::string>{"1", "2", "3", "4", "5", "6", "7"});
  for (int k = 1; k <= 7; ++k) {
    INFO("rule " << k);
    const kb::Entity* e = find_entity(c, "rule", std::to_string(k));
    REQUIRE(e);
    std::map<std::string, std::string> text;
    for (const auto* ed : e->editions) text[ed->prov.lang] = ed->text;
    for (const char* lang : {"fr", "zh", "ja", "en"}) {
      INFO("lang " << lang);
      REQUIRE(text.count(lang));
      CHECK_FALSE(text[lang].empty());
    }
    CHECK(e->missing.empty());
    CHECK(e->winner().prov.revision == newest_revision(c));
  }
}

TEST_CASE("lint reports the renames and changes between revisions", "[compiler]") {
  const auto& c = real_compilation();
  const auto lines = kb::lint_lines(c);
  INFO(kb::join(lines, "\n"));

  SECTION("dataset renames") {
    CHECK(has_lint_line(lines, {": rename: dataset preset 'llm-pretrain-mock'", "-> 'mock'"}));
    CHECK(has_lint_line(lines, {": rename: dataset preset 'llm-finetune'", "-> 'squad'"}));
    CHECK(has_lint_line(lines, {": rename: dataset preset 'llm-finetune'", "-> 'tulu3'"}));
    std::set<std::pair<std::string, std::string>> renames;
    for (const auto& r : c.resolved.renames) {
      renames.insert({r.from, r.to});
      CHECK(r.new_prov.revision == newest_revision(c));
      CHECK(r.old_prov.revision < 3);  // the presets were renamed in revision 3
    }
    CHECK(renames == std::set<std::pair<std::string, std::string>>{
                         {"llm-pretrain-mock", "mock"}, {"llm-finetune", "squad"}, {"llm-finetune", "tulu3"}});
  }
  SECTION("config key training.global_batch_size became train.global_batch_size") {
    CHECK(has_lint_line(lines, {": conflict: command library_entry/3 config_key: '", "training.global_batch_size", "(rev 1 fr) -> '",
                                "train.global_batch_size", "(rev 4 en"}));
    CHECK(has_lint_line(lines, {": conflict: command library_entry/3 config_key: '", "training.global_batch_size", "(rev 2 zh) -> '",
                                "train.global_batch_size", "(rev 4 en"}));
  }
  SECTION("first smoke-test recipe llama3_8b_sft_config became llama3_8b_pretrain_config") {
    CHECK(has_lint_line(lines, {": conflict: checklist 3 recipe: 'llama3_8b_sft_config' (rev 2 zh) -> "
                                "'llama3_8b_pretrain_config' (rev 4 en"}));
    CHECK(has_lint_line(lines, {": conflict: quick_ref 1 recipe: 'llama3_8b_sft_config' (rev 2 zh) -> "
                                "'llama3_8b_pretrain_config' (rev 4 en"}));
  }
  SECTION("benchmark launcher run_script.py became ./scripts/training/train.sh") {
    CHECK(has_lint_line(lines, {": conflict: command benchmark_entry/1 launcher: 'scripts/performance/run_script.py' "
                                "(rev 1 fr) -> './scripts/training/train.sh' (rev 4 en"}));
    CHECK(has_lint_line(lines, {": conflict: command benchmark_entry/1 launcher: 'scripts/performance/run_script.py' "
                                "(rev 2 zh) -> './scripts/training/train.sh' (rev 4 en"}));
  }
  SECTION("benchmark recipes moved from scripts/performance/ to src/megatron/bridge/perf_recipes/") {
    CHECK(has_lint_line(lines, {": conflict: checklist 2 path: 'scripts/performance/' (rev 2 zh) -> "
                                "'src/megatron/bridge/perf_recipes/' (rev 4 en"}));
  }
  SECTION("rule 7 formula changed") {
    CHECK(has_lint_line(lines, {": conflict: rule 7 formula: 'world_size = DP × TP × PP × CP × EP' (rev 1 fr) -> '",
                                "PP × max(TP × CP, EP × ETP)", "(rev 4 en"}));
    CHECK(has_lint_line(lines, {": conflict: rule 7 formula: 'world_size = DP × TP × PP × CP × EP' (rev 2 zh) -> '",
                                "PP × max(TP × CP, EP × ETP)", "(rev 4 en"}));
  }
  SECTION("a missing-translation line for exactly each language an entity lacks") {
    size_t missing = 0;
    for (const auto& e : c.resolved.entities)
      for (const auto& lang : e.missing) {
        ++missing;
        CHECK(has_lint_line(lines, {": missing: " + e.kind + " " + e.key + " has no " + lang + " text"}));
      }
    CHECK(static_cast<size_t>(std::count_if(lines.begin(), lines.end(),
                                            [](const std::string& l) { return l.find(": missing: ") != std::string::npos; })) == missing);
  }
  SECTION("lint lines are sorted and unique") {
    CHECK(std::is_sorted(lines.begin(), lines.end()));
    CHECK(std::adjacent_find(lines.begin(), lines.end()) == lines.end());
  }
}

TEST_CASE("conflicts record the newest revision's value as the winner", "[compiler]") {
  const auto& c = real_compilation();
  REQUIRE_FALSE(c.resolved.conflicts.empty());
  for (const auto& k : c.resolved.conflicts) {
    INFO(k.entity_kind << " " << k.entity_key << " " << k.field);
    REQUIRE(k.values.size() >= 2);
    CHECK(k.values.front().wins);
    CHECK(k.values.front().prov.revision == newest_revision(c));
    for (size_t i = 1; i < k.values.size(); ++i) {
      CHECK_FALSE(k.values[i].wins);
      CHECK(k.values[i].prov.revision <= k.values.front().prov.revision);
    }
  }
  auto winner = [&](const std::string& kind, const std::string& key, const std::string& field) -> std::string {
    for (const auto& k : c.resolved.conflicts)
      if (k.entity_kind == kind && k.entity_key == key && k.field == field) return k.values.front().value;
    return "<no conflict>";
  };
  CHECK(winner("checklist", "3", "recipe") == "llama3_8b_pretrain_config");
  CHECK(winner("checklist", "2", "path") == "src/megatron/bridge/perf_recipes/");
  CHECK(winner("command", "library_entry/1", "dataset") == "mock");
  CHECK(winner("command", "library_entry/2", "dataset") == "squad");
  CHECK(winner("command", "benchmark_entry/1", "launcher") == "./scripts/training/train.sh");
}

TEST_CASE("an entity misses exactly the languages none of its editions is in", "[compiler]") {
  // A property of resolve, not of today's translations: adding a
  // translation moves a language from `missing` to the editions.
  const auto& c = real_compilation();
  REQUIRE_FALSE(c.resolved.entities.empty());
  for (const auto& e : c.resolved.entities) {
    INFO(e.kind << " " << e.key);
    std::set<std::string> have;
    for (const auto* ed : e.editions) have.insert(ed->prov.lang);
    for (const auto& lang : e.missing) CHECK_FALSE(have.count(lang));
    if (e.superseded || e.kind == "prose" || e.kind == "code") {
      CHECK(e.missing.empty());
      continue;
    }
    for (const auto& lang : c.vocab.languages) {
      if (have.count(lang)) continue;
      // Not missing only when the entity was removed by a newer revision (a finding instead).
      const bool listed = std::find(e.missing.begin(), e.missing.end(), lang) != e.missing.end();
      const bool removed = std::any_of(c.resolved.findings.begin(), c.resolved.findings.end(), [&](const auto& f) {
        return f.kind == "removed" && f.message.rfind(e.kind + " '" + e.key + "'", 0) == 0;
      });
      CHECK((listed || removed));
    }
  }
}

TEST_CASE("building twice yields byte-identical dumps", "[compiler]") {
  TempDir tmp;
  CompileOptions opts;
  opts.sources = kSources;
  Diagnostics d1, d2;
  const std::string a = tmp / "a/kb.sqlite", b = tmp / "b/other-name.sqlite";
  REQUIRE(kb::build_kb(opts, a, d1, kb::store_perf_derivation));
  REQUIRE(kb::build_kb(opts, b, d2, kb::store_perf_derivation));
  CHECK(render_all(d1) == render_all(d2));
  const std::string sql_a = kb::dump_kb(a, kb::DumpFormat::Sql), sql_b = kb::dump_kb(b, kb::DumpFormat::Sql);
  CHECK(sql_a.size() > 10000);
  CHECK(sql_a == sql_b);
  CHECK(kb::dump_kb(a, kb::DumpFormat::Json) == kb::dump_kb(b, kb::DumpFormat::Json));
  // No temporary file is left beside the KB.
  for (const auto& dir : {tmp / "a", tmp / "b"})
    for (const auto& entry : fs::directory_iterator(dir)) CHECK(entry.path().filename().string().find(".tmp.") == std::string::npos);
}

// The JSON dump is written row by row, not built as one document: it must
// be exactly what nlohmann::json's dump(1) writes for the same document,
// escapes, numbers, blobs and empty tables included.
TEST_CASE("kbc dump --format json is nlohmann::json's dump(1) of the same rows", "[compiler]") {
  TempDir tmp;
  const std::string kb_path = tmp / "kb.sqlite";
  fs::copy_file(std::string(KB_BINARY_DIR) + "/kb.sqlite", kb_path);
  const std::string tricky = std::string("q\"b\\s/\b\f\n\r\t") + '\0' + "\x01\x1f\x7f \xc3\xa9 \xe2\x86\x92 \xf0\x9f\x9a\x80 end";
  {
    kb::Db db(kb_path, kb::Db::Mode::ReadWriteCreate);
    kb::Stmt up(db, "UPDATE labels SET text = ? WHERE lang = 'en' AND key = 'answer_for'");
    up.bind_all(tricky);
    up.run();
    kb::Stmt blob(db, "UPDATE labels SET text = X'00ff10' WHERE lang = 'fr' AND key = 'answer_for'");
    blob.run();
    kb::Stmt real(db, "UPDATE gpu_peaks SET tflops = 2.5e-7 WHERE gpu_key = (SELECT min(gpu_key) FROM gpu_peaks)");
    real.run();
    kb::Stmt empty(db, "DELETE FROM missing_translations");
    empty.run();
  }
  const std::string out = kb::dump_kb(kb_path, kb::DumpFormat::Json);
  REQUIRE(out.size() > 100000);
  const auto doc = nlohmann::ordered_json::parse(out);
  CHECK(doc.dump(1) + "\n" == out);
  CHECK(doc.at("missing_translations").empty());
  std::map<std::string, nlohmann::ordered_json> answer_for;
  for (const auto& row : doc.at("labels"))
    if (row.at("key") == "answer_for") answer_for[row.at("lang").get<std::string>()] = row.at("text");
  CHECK(answer_for.at("en") == tricky);
  CHECK(answer_for.at("fr") == nlohmann::ordered_json{{"blob", "00ff10"}});
  CHECK(std::any_of(doc.at("gpu_peaks").begin(), doc.at("gpu_peaks").end(), [](const auto& row) { return row.at("tflops") == 2.5e-7; }));
  CHECK(out.find("\\u0000\\u0001\\u001f\x7f") != std::string::npos);
}

namespace {

// The seed text exports live outside kb-sources (seeds/README.md).
std::string seeds_dir() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("KB_SEEDS_DIR")) dirs.push_back(env);
  for (const char* rel : {"/seeds", "/kb-sources/seeds", "/../shared/seeds"}) dirs.push_back(kRoot + rel);
  for (const auto& d : dirs)
    if (fs::exists(d + "/000_e4869d421d2240c2.txt")) return d;
  FAIL("seed text exports not found under " << kb::join(dirs, ", ") << " (set KB_SEEDS_DIR)");
  return {};
}

using RecipeKey = std::tuple<std::string, std::string, std::string, std::string, std::string, std::string, std::string>;

std::set<RecipeKey> recipe_set(const Compilation& c) {
  std::set<RecipeKey> out;
  for (const auto& r : c.resolved.recipes)
    out.insert({r.name, r.mode, range_text(r.tp), range_text(r.pp), range_text(r.cp), range_text(r.ep), range_text(r.gpus)});
  return out;
}

std::string show(const RecipeKey& k) {
  const auto& [name, mode, tp, pp, cp, ep, gpus] = k;
  return name + " " + mode + " tp=" + tp + " pp=" + pp + " cp=" + cp + " ep=" + ep + " gpus=" + gpus;
}

// (kind, key, lang) → named parts, for the row entities of a kind.
std::map<std::tuple<std::string, std::string, std::string>, std::map<std::string, std::string>> rows_of(const Compilation& c,
                                                                                                        const std::string& kind) {
  std::map<std::tuple<std::string, std::string, std::string>, std::map<std::string, std::string>> out;
  for (const auto& e : c.resolved.entities)
    if (e.kind == kind)
      for (const auto* ed : e.editions) out[{e.kind, e.key, ed->prov.lang}] = ed->parts;
  return out;
}

template <typename Map>
std::string map_diff(const Map& a, const Map& b) {
  std::string out;
  for (const auto& [k, v] : a) {
    auto it = b.find(k);
    const std::string where = std::get<0>(k) + " " + std::get<1>(k) + " [" + std::get<2>(k) + "]";
    if (it == b.end()) {
      out += "only in the text exports: " + where + "\n";
      continue;
    }
    for (const auto& [part, text] : v) {
      auto p = it->second.find(part);
      if (p == it->second.end() || p->second != text)
        out += where + " " + part + ": text export '" + text + "' vs markdown '" +
               (p == it->second.end() ? std::string("<none>") : p->second) + "'\n";
    }
  }
  for (const auto& [k, v] : b)
    if (!a.count(k)) out += "only in the markdown editions: " + std::get<0>(k) + " " + std::get<1>(k) + " [" + std::get<2>(k) + "]\n";
  return out;
}

std::unique_ptr<Compilation> compile_folder(const std::string& sources, Diagnostics& diags) {
  CompileOptions opts;
  opts.sources = sources;
  opts.data = kData;
  return kb::compile(opts, diags);
}

}  // namespace

TEST_CASE("the text exports compile to the same facts as the restored markdown editions", "[compiler]") {
  const std::string seeds = seeds_dir();
  TempDir tmp;
  fs::create_directories(tmp / "txt");
  fs::create_directories(tmp / "md/skill");
  for (const char* seed : {"000_e4869d421d2240c2.txt", "001_d67806c413528f8a.txt", "002_7a19b8649c0bf7c3.txt"})
    fs::copy_file(seeds + "/" + seed, tmp / (std::string("txt/") + seed));
  for (const char* lang : {"fr", "zh", "ja"}) {
    const std::string name = std::string("SKILL.") + lang + ".md";
    fs::copy_file(kSources + "/skill/" + name, tmp / ("md/skill/" + name));
  }
  Diagnostics dt, dm;
  auto txt = compile_folder(tmp / "txt", dt);
  auto md = compile_folder(tmp / "md", dm);
  INFO("text exports:\n" << render_all(dt) << "markdown:\n" << render_all(dm));
  REQUIRE(txt);
  REQUIRE(md);
  REQUIRE_FALSE(dt.has_errors());
  REQUIRE_FALSE(dm.has_errors());
  REQUIRE(txt->documents.size() == 3);
  REQUIRE(md->documents.size() == 3);

  SECTION("recipes: name, mode, TP, PP, CP, EP, min GPUs") {
    const auto a = recipe_set(*txt), b = recipe_set(*md);
    std::string diff;
    for (const auto& k : a)
      if (!b.count(k)) diff += "only in the text exports: " + show(k) + "\n";
    for (const auto& k : b)
      if (!a.count(k)) diff += "only in the markdown editions: " + show(k) + "\n";
    INFO(diff);
    CHECK(a.size() > 100);
    CHECK(diff.empty());
  }
  SECTION("pitfalls: keys and symptom/fix per language") {
    const auto a = rows_of(*txt, "pitfall"), b = rows_of(*md, "pitfall");
    const std::string diff = map_diff(a, b);
    INFO(diff);
    CHECK(a.size() >= 22);  // 11 pitfalls in zh and ja
    CHECK(diff.empty());
    for (const auto& [k, parts] : a) {
      CHECK(parts.count("symptom") == 1);
      CHECK(parts.count("fix") == 1);
    }
  }
  SECTION("quick-reference rows") {
    const auto a = rows_of(*txt, "quick_ref"), b = rows_of(*md, "quick_ref");
    const std::string diff = map_diff(a, b);
    INFO(diff);
    CHECK(a.size() >= 20);  // 10 rows in zh and ja
    CHECK(diff.empty());
  }
}

TEST_CASE("a kbc build killed midway leaves the previous or the new KB, never a broken one", "[compiler][slow]") {
  TempDir tmp;
  // The old KB: a small, different knowledge base (the good fixture).
  const std::string old_kb = tmp / "old.sqlite";
  {
    CompileOptions opts;
    opts.sources = kRoot + "/tests/fixtures/good/minimal";
    opts.data = kData;
    Diagnostics diags;
    INFO(render_all(diags));
    REQUIRE(kb::build_kb(opts, old_kb, diags, kb::store_perf_derivation));
  }
  // The new KB, built by the kbc process itself; time it.
  const std::string kbc = KBC_PATH;
  const std::string new_kb = tmp / "new.sqlite";
  std::vector<std::string> argv = {kbc, "build", "--sources", kSources, "-o", "", "--quiet"};
  // Sanitizer builds (several times slower) time one build and kill 8
  // (the test is about the files left, not memory); others 3 and 24.
  double seconds = 1e9;
  for (int i = 0; i < (kbtest::kSanitized ? 1 : 3); ++i) {
    argv[5] = new_kb;
    const auto t0 = std::chrono::steady_clock::now();
    REQUIRE(wait_exit_code(spawn_quiet(argv)) == 0);
    seconds = std::min(seconds, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  const std::string old_dump = kb::dump_kb(old_kb, kb::DumpFormat::Sql);
  const std::string new_dump = kb::dump_kb(new_kb, kb::DumpFormat::Sql);
  REQUIRE(old_dump != new_dump);

  const std::string target = tmp / "out/kb.sqlite";
  fs::create_directories(tmp / "out");
  argv[5] = target;
  const unsigned seed = std::random_device{}();
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> jitter(0.0, 1.0);
  constexpr int kRuns = kbtest::kSanitized ? 8 : 24;
  int killed = 0, killed_while_writing = 0, kept_old = 0, got_new = 0;
  for (int i = 0; i < kRuns; ++i) {
    fs::copy_file(old_kb, target, fs::copy_options::overwrite_existing);
    // Spread the kill times over the whole build, a little past its end.
    const double delay = seconds * 1.1 * (i + jitter(rng)) / kRuns;
    const pid_t pid = spawn_quiet(argv);
    REQUIRE(pid > 0);
    std::this_thread::sleep_for(std::chrono::duration<double>(delay));
    ::kill(pid, SIGKILL);
    const int rc = wait_exit_code(pid);
    if (rc == -SIGKILL) ++killed;
    INFO("run " << i << ", seed " << seed << ", kill after " << delay * 1000 << " ms of a " << seconds * 1000 << " ms build, exit " << rc);
    REQUIRE(fs::exists(target));
    CHECK(integrity_check(target) == "ok");
    const std::string dump = kb::dump_kb(target, kb::DumpFormat::Sql);
    const bool is_old = dump == old_dump, is_new = dump == new_dump;
    CHECK((is_old || is_new));
    kept_old += is_old;
    got_new += is_new;
    // A kill during the write leaves the writer's temporary file behind
    // (kb.sqlite.tmp.<pid>); count and remove it.
    for (const auto& e : fs::directory_iterator(tmp / "out"))
      if (e.path().filename().string().rfind("kb.sqlite.tmp.", 0) == 0) {
        ++killed_while_writing;
        fs::remove(e.path());
      }
  }
  INFO("killed " << killed << " of " << kRuns << " builds (" << killed_while_writing << " while writing the KB); old KB kept " << kept_old
                 << ", new KB " << got_new);
  CHECK(killed >= 1);
  CHECK(kept_old + got_new == kRuns);
}

TEST_CASE("code facts: the newest snapshot is compiled and the documents' drift from it is reported", "[compiler][code]") {
  const auto& c = real_compilation();
  const kb::CodeSnapshot* s = c.code.newest();
  REQUIRE(s != nullptr);
  CHECK(s->commit.rfind("067f987df", 0) == 0);
  CHECK(s->recipes.size() >= 1000);  // library and benchmark names the code exports
  // Every exported name resolves to a function with facts.
  for (const auto& r : s->recipes) CHECK(s->facts_of(r) != nullptr);
  const auto lines = kb::lint_lines(c);
  // The revision-2 index says TP 2 for the 128K recipe; the code sets 4 (TP 4 × PP 2 × CP 8 = 64 GPUs).
  CHECK(
      has_lint_line(lines, {": drift: recipe-fact llama3_8b_128k_pretrain_config tp: document '2'", "-> code '4' (src/megatron/bridge/"}));
  CHECK(has_lint_line(lines, {": drift: recipe-fact llama3_8b_128k_pretrain_config min_gpus: document '16'", "-> code '64'"}));
  CHECK(has_lint_line(lines, {": drift: recipe-fact llama3_70b_sft_config tp: document '4'", "-> code '8'"}));
  CHECK(has_lint_line(lines, {": drift: recipe-fact llama3_8b_sft_config sp: document 'true'", "-> code 'false'"}));
  // Names the documents give that the code does not export.
  CHECK(has_lint_line(lines, {": drift: missing-recipe wan_1_3B_pretrain_config"}));
  // Launcher advice the code undoes or does not know.
  CHECK(has_lint_line(lines, {": drift: overwritten-key model.seq_length: document 'model.seq_length=32768'", "recipe_runner.py"}));
  // The runner's weak scaling also assigns train.global_batch_size after the
  // overrides, but it is passed them and keeps an explicit one
  // (run_recipe.py:357): no finding.
  CHECK_FALSE(has_lint_line(lines, {": drift: overwritten-key train.global_batch_size"}));
  CHECK(has_lint_line(lines, {": drift: unknown-key training.global_batch_size"}));
  CHECK(has_lint_line(lines, {": drift: dataset llm-pretrain-mock"}));
  // What changed in the code between the snapshots.
  CHECK(has_lint_line(lines, {": code-change: ", "(c8b86d094 -> 067f987df)"}));
  // Every drift cites both sides.
  for (const auto& d : c.drift) {
    INFO(d.subject << " " << d.field);
    CHECK_FALSE(d.doc.file.empty());
    CHECK(d.doc.line > 0);
    if (!d.code_value.empty()) CHECK(d.code_at.find("@067f987df") != std::string::npos);
  }
}

// recipe_launch (compiler/derive): what the launcher does with a recipe, read
// from its code, never from its name.
TEST_CASE("derive: a recipe's precision, PEFT modes, raise and data come from its code", "[compiler][code]") {
  kb::Db db(std::string(KB_BINARY_DIR) + "/kb.sqlite", kb::Db::Mode::ReadOnly);
  auto row = [&](const std::string& name, const std::string& kind) {
    kb::Stmt st(db,
                "SELECT l.precision, l.peft_modes, l.raises, l.data, l.data_name, l.user_data, l.dataset_flag, coalesce(sp.at, ''), "
                "coalesce(sd.at, '') FROM recipe_launch l LEFT JOIN launch_sites sp ON sp.id = l.precision_at "
                "LEFT JOIN launch_sites sd ON sd.id = l.data_at WHERE l.name = ? AND l.kind = ?");
    st.bind_all(name, kind);
    std::vector<std::string> out;
    if (st.step())
      for (int i = 0; i < 9; ++i) out.push_back(i == 5 ? std::to_string(st.integer(i)) : st.text(i));
    return out;
  };
  // An alias whose name hides FP8: the function it names sets FP8 current scaling.
  auto r = row("llama3_8b_low_precision_pretrain_config", "library");
  REQUIRE(r.size() == 9);
  CHECK(r[0] == "fp8cs");
  CHECK(r[7].find("@067f987df") != std::string::npos);
  // A name that says bf16 whose mixed-precision recipe sets blockwise FP8 (mixed_precision.py:342).
  CHECK(row("nemotron_nano_12b_v2_pretrain_4gpu_h100_bf16_config", "library")[0] == "fp8sc");
  CHECK(row("llama3_8b_pretrain_8gpu_b200_nvfp4_config", "benchmark")[0] == "nvfp4");
  // --mode dora: a library PEFT function taking peft_scheme builds DoRA; benchmark PEFT is LoRA only.
  CHECK(row("qwen3_8b_peft_config", "library")[1] == "lora,dora");
  CHECK(row("llama3_70b_peft_8gpu_h100_bf16_config", "benchmark")[1] == "lora");
  CHECK(row("llama3_8b_pretrain_config", "library")[1].empty());
  // A function that always raises.
  r = row("qwen3_next_80b_a3b_peft_config", "library");
  CHECK(r[2].find("NotImplementedError('PEFT is not currently supported for Qwen3-Next") == 0);
  CHECK(row("qwen3_next_80b_a3b_sft_config", "library")[2].empty());
  // Data without --dataset: packed SQuAD for library SFT, mock for text SFT benchmarks (which refuse --dataset).
  r = row("llama3_8b_sft_config", "library");
  CHECK(r[3] == "packed_sft");
  CHECK(r[4] == "squad");
  CHECK(r[6] == "replaces");
  r = row("llama3_70b_sft_32gpu_h100_bf16_config", "benchmark");
  CHECK(r[3] == "mock");
  CHECK(r[6] == "refused");
  CHECK(r[8].find("run_recipe.py:") != std::string::npos);
  CHECK(row("llama3_8b_pretrain_config", "library")[3] == "mock");
  // A name both packages export: --recipe loads the benchmark definition.
  kb::Stmt sh(db,
              "SELECT l.shadowed, s.at FROM recipe_launch l JOIN launch_sites s ON s.id = l.shadowed_at WHERE l.name = ? AND l.kind = ?");
  sh.bind_all("llama3_70b_sft_32gpu_h100_bf16_config", "library");
  REQUIRE(sh.step());
  CHECK(sh.integer(0) == 1);
  CHECK(sh.text(1).find("recipe_runner.py:") != std::string::npos);
  // Every recipe has a row.
  kb::Stmt n(db, "SELECT (SELECT count(*) FROM recipes) - (SELECT count(*) FROM recipe_launch)");
  REQUIRE(n.step());
  CHECK(n.integer(0) == 0);
  // Each citation once, and every id a row cites names one.
  kb::Stmt once(db, "SELECT count(*) - count(DISTINCT at) FROM launch_sites");
  REQUIRE(once.step());
  CHECK(once.integer(0) == 0);
  kb::Stmt dangling(db,
                    "WITH c(k) AS (VALUES (1), (2), (3), (4), (5), (6)) SELECT count(*) FROM recipe_launch l, c WHERE CASE k WHEN 1 THEN "
                    "l.precision_at WHEN 2 THEN l.peft_at WHEN 3 THEN l.raises_at WHEN 4 "
                    "THEN l.data_at WHEN 5 THEN l.dataset_flag_at ELSE l.shadowed_at END NOT IN (SELECT id FROM launch_sites)");
  REQUIRE(dangling.step());
  CHECK(dangling.integer(0) == 0);
}

TEST_CASE("a code snapshot file past its size limit is an error naming the file, not a missing file", "[compiler][code]") {
  namespace fs = std::filesystem;
  kbtest::TempDir tmp("kbtests-code-limit");
  const std::string real = std::string(KB_SOURCE_DIR) + "/kb-sources/code/067f987df";
  const std::string dir = tmp / "code/067f987df";
  fs::create_directories(dir);
  for (const auto& e : fs::directory_iterator(real)) fs::copy_file(e.path(), dir + "/" + e.path().filename().string());
  fs::resize_file(dir + "/recipe-facts.tsv", kb::limits::kMaxCodeFileBytes + 1);  // sparse: nothing is written
  kb::Diagnostics diags;
  kb::load_code_facts(tmp / "", tmp / "code", diags);
  bool named = false;
  for (const auto& d : diags.all())
    named = named || (d.message.find("cannot read a file of a code snapshot: larger than") != std::string::npos &&
                      d.span.file.find("recipe-facts.tsv") != std::string::npos);
  CHECK(named);
}

TEST_CASE("a GPU architecture without a name in answer-labels.tsv is an error naming the row", "[compiler]") {
  // Answers name an architecture (Hopper), never print its key (hopper).
  kbtest::TempDir tmp;
  const std::string data = tmp.str() + "/data";
  std::filesystem::copy(std::string(KB_SOURCE_DIR) + "/kb-sources/data", data, std::filesystem::copy_options::recursive);
  const std::string labels = kbtest::read_file(data + "/answer-labels.tsv");
  std::string kept;
  size_t dropped = 0;
  for (const auto& line : kb::split(labels, '\n')) {
    if (kb::starts_with(line, "en\tarch.hopper\t")) {
      ++dropped;
      continue;
    }
    if (!line.empty()) kept += line + "\n";
  }
  REQUIRE(dropped == 1);
  kbtest::write_file(data + "/answer-labels.tsv", kept);
  kb::Vocab v;
  kb::Diagnostics d;
  CHECK_FALSE(kb::load_vocab(data, v, d));
  const std::string all = d.render_all();
  INFO(all);
  CHECK(all.find("precisions.tsv:") != std::string::npos);
  CHECK(all.find("error: GPU architecture 'hopper' has no name") != std::string::npos);
  CHECK(all.find("hint: add a row arch.hopper to data/answer-labels.tsv") != std::string::npos);
  // With the row, the same data loads clean.
  kbtest::write_file(data + "/answer-labels.tsv", labels);
  kb::Diagnostics clean;
  CHECK(kb::load_vocab(data, v, clean));
  CHECK_FALSE(clean.has_errors());
}
