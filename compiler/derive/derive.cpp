// Derive stage: the ranking columns kbc computes once per knowledge base (see derive.hpp).
#include "compiler/derive/derive.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "base/dsl/kb_lexicon.hpp"
#include "base/kinds.hpp"
#include "base/packed_facts.hpp"
#include "base/text.hpp"
#include "compiler/code/code.hpp"

namespace kb {

namespace {

// Each quick-reference row, read once at build time: what its "I want to"
// cell asks (parsed with the query lexicon in every edition of the winning
// revision) and the recipes it names, in the order it names them.
void derive_quick_reference(kb::Db& db, const kbq::dsl::Lexicon& lexicon) {
  std::vector<std::pair<long long, std::string>> rows;  // entity id, key
  {
    kb::Stmt st(db, "SELECT id, key FROM entities WHERE kind = 'quick_ref' ORDER BY length(key), key");
    while (st.step()) rows.emplace_back(st.integer(0), st.text(1));
  }
  kb::Stmt texts(db,
                 "SELECT text, parts, facts, revision FROM entity_texts WHERE entity_id = ? "
                 "ORDER BY is_winner DESC, revision DESC, lang");
  kb::Stmt insert(db,
                  "INSERT INTO quick_ref_picks(ordinal, row, mode, intents, scale, gpus, single_gpu_count, recipes) "
                  "VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  // A GPU cell the winning edition cannot read takes another edition's value (resolve).
  kb::Stmt fallback(db, "SELECT value FROM fallbacks WHERE ref_kind = 'quick_ref' AND ref_id = ? AND field = 'gpus'");
  int ordinal = 0;
  for (const auto& [id, key] : rows) {
    texts.bind(1, id);
    int rev = -1;
    std::optional<std::string> mode;
    std::set<std::string> intents;
    std::string scale, start_with;
    nlohmann::json winner_facts;
    while (texts.step()) {
      const auto parts = nlohmann::json::parse(texts.text(1));
      if (rev < 0) {  // the winning edition
        rev = static_cast<int>(texts.integer(3));
        winner_facts = nlohmann::json::parse(texts.text(2));
        start_with = parts.contains("start_with") ? parts["start_with"].get<std::string>() : texts.text(0);
      }
      if (texts.integer(3) != rev) continue;
      const std::string want = parts.contains("want") ? parts["want"].get<std::string>() : texts.text(0);
      const auto pr = kbq::dsl::parse(lexicon, want);
      if (pr.query.mode) mode = pr.query.mode;
      intents.insert(pr.query.intents.begin(), pr.query.intents.end());
      if (!pr.query.scale.empty()) scale = pr.query.scale;
    }
    texts.reset();
    if (rev < 0) continue;
    long long gpus = 0;
    bool single = false;
    std::string g;
    if (winner_facts.contains("gpus") && !winner_facts["gpus"].empty()) {
      g = winner_facts["gpus"].front().get<std::string>();
    } else {
      fallback.bind(1, id);
      if (fallback.step()) g = kb::split(fallback.text(0), ',').front();
      fallback.reset();
    }
    if (!g.empty()) {
      single = !g.empty() && g.find_first_not_of("0123456789") == std::string::npos;
      std::size_t digits = 0;
      while (digits < g.size() && digits < 18 && g[digits] >= '0' && g[digits] <= '9') ++digits;
      gpus = digits ? std::stoll(g.substr(0, digits)) : 0;
    }
    // The recipes in the order the row names them.
    std::vector<std::pair<std::size_t, std::string>> named;
    if (winner_facts.contains("recipe"))
      for (const auto& name : winner_facts["recipe"]) named.emplace_back(start_with.find(name.get<std::string>()), name.get<std::string>());
    std::sort(named.begin(), named.end());
    std::vector<std::string> recipes;
    for (const auto& n : named) recipes.push_back(n.second);
    insert
        .bind_all(++ordinal, key, mode.value_or(""), kb::join(std::vector<std::string>(intents.begin(), intents.end()), ","), scale, gpus,
                  single ? 1 : 0, kb::join(recipes, ","))
        .run();
  }
}

}  // namespace

// The recipes that run, one row per exported name of the newest snapshot:
// its layout and batch from the code facts of its function, its model (by
// the hf id it loads, else the longest model key its name starts with), the
// kind of model its forward step trains, and what its function's canonical
// name encodes (GPU count, hardware, precision).
void derive_recipes(kb::Db& db) {
  // The launcher's mode → task (lora, dora → peft).
  std::map<std::string, std::string> task_of;
  {
    kb::Stmt st(db, "SELECT item, value FROM launcher WHERE section = 'mode' AND attribute = 'task'");
    while (st.step()) task_of[st.text(0)] = st.text(1);
  }
  std::map<std::string, std::string> modality_of;
  {
    kb::Stmt st(db, "SELECT step, modality FROM steps");
    while (st.step()) modality_of[st.text(0)] = st.text(1);
  }
  std::map<std::string, std::string> model_by_hf;
  std::map<std::string, long long> experts_of;
  std::vector<std::string> keys;  // longest first
  {
    kb::Stmt st(db, "SELECT model_key, coalesce(hf_id, ''), coalesce(num_experts, 0) FROM models");
    while (st.step()) {
      if (!st.text(1).empty()) model_by_hf[st.text(1)] = st.text(0);
      experts_of[st.text(0)] = st.integer(2);
      keys.push_back(st.text(0));
    }
    std::sort(keys.begin(), keys.end(),
              [](const std::string& a, const std::string& b) { return a.size() != b.size() ? a.size() > b.size() : a < b; });
  }
  // What each canonical (pattern-matching) name encodes, by function name.
  struct Native {
    std::optional<long long> gpus;
    std::string hardware, precision, variant, model;
  };
  std::map<std::string, Native> native;
  {
    kb::Stmt st(db, "SELECT name, gpus, hardware, precision, variant, model FROM code_recipes WHERE hardware <> ''");
    while (st.step()) native[st.text(0)] = {st.opt_int(1), st.text(2), st.text(3), st.text(4), st.text(5)};
  }
  kb::Stmt facts(db, "SELECT field, state, value, type FROM code_facts WHERE target = ?");
  kb::Stmt recipes(db, "SELECT name, kind, target, mode, step FROM code_recipes ORDER BY name, kind");
  // The whole-number columns of the code facts (kNumericFacts, whose values
  // kbc checked against kbq's ranges when it read the snapshot).
  std::string numeric;
  for (const auto& n : kNumericFacts) numeric += std::string(n.range.column) + ", ";
  kb::Stmt insert(db, "INSERT INTO recipes(name, kind, target, mode, launch_mode, model_key, modality, moe, sp, " + numeric +
                          "dataset, precision, low_precision, native_gpus, native_hardware, native_precision, variant, min_gpus) "
                          "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  while (recipes.step()) {
    const std::string name = recipes.text(0), target = recipes.text(2), launch_mode = recipes.text(3);
    std::map<std::string, std::pair<std::string, std::string>> f;  // field → (value, type) of single values and defaults
    facts.bind(1, target);
    while (facts.step())
      if (const auto state = parse_kind<FactState>(facts.text(1)); state == FactState::Value || state == FactState::Default)
        f[facts.text(0)] = {facts.text(2), facts.text(3)};
    facts.reset();
    auto int_of = [&](const std::string& field) -> std::optional<long long> {
      auto it = f.find(field);
      if (it == f.end() || it->second.second != "int") return std::nullopt;
      try {
        return std::stoll(it->second.first);
      } catch (...) {
        return std::nullopt;
      }
    };
    auto text_of = [&](const char* field) {
      auto it = f.find(field);
      return it == f.end() || it->second.second == "none" ? std::string() : it->second.first;
    };
    // The model: the row of the Hugging Face id it loads; else (a provider
    // built inline) the model its canonical name encodes; else the longest
    // model key its name starts with.
    std::string model_key;
    const std::string function = target.substr(target.rfind('.') + 1);
    const auto nat = native.find(function);
    if (auto it = model_by_hf.find(text_of("hf_id")); it != model_by_hf.end()) model_key = it->second;
    if (model_key.empty() && nat != native.end()) model_key = nat->second.model;
    if (model_key.empty())
      for (const auto& k : keys)
        if (starts_with(name, k + "_")) {
          model_key = k;
          break;
        }
    const auto tp = int_of("tp"), pp = int_of("pp"), cp = int_of("cp"), ep = int_of("ep");
    const long long etp = int_of("etp").value_or(1);
    const long long experts = std::max(experts_of.count(model_key) ? experts_of[model_key] : 0, int_of("arch.num_moe_experts").value_or(0));
    const bool moe = experts > 0 || ep.value_or(1) > 1;
    std::optional<long long> min_gpus;
    if (tp && pp && cp && ep) min_gpus = layout_gpus(*tp, *pp, *cp, *ep, etp, moe);
    auto task = task_of.find(launch_mode);
    std::optional<bool> sp;
    if (auto it = f.find("sp"); it != f.end() && it->second.second == "bool") sp = it->second.first == "true";
    int i = 0;
    auto next = [&i] { return ++i; };
    insert.bind(next(), name).bind(next(), recipes.text(1)).bind(next(), target);
    insert.bind(next(), task == task_of.end() ? std::string() : task->second).bind(next(), launch_mode).bind(next(), model_key);
    auto mod = modality_of.find(recipes.text(4));
    insert.bind(next(), mod == modality_of.end() ? std::string() : mod->second).bind(next(), moe ? 1 : 0);
    if (sp)
      insert.bind(next(), *sp ? 1 : 0);
    else
      insert.bind_null(next());
    for (const auto& n : kNumericFacts) insert.bind_opt(next(), int_of(std::string(n.field)));
    insert.bind(next(), text_of("dataset_name")).bind(next(), text_of("mixed_precision"));
    // Below BF16: the FP4 format, else the FP8 format and its scaling recipe.
    const std::string fp4 = text_of("fp4"), fp8 = text_of("fp8");
    insert.bind(next(), !fp4.empty() ? "fp4 " + fp4 : !fp8.empty() ? "fp8 " + text_of("fp8_recipe") : std::string());
    insert.bind_opt(next(), nat == native.end() ? std::nullopt : nat->second.gpus);
    insert.bind(next(), nat == native.end() ? std::string() : nat->second.hardware);
    insert.bind(next(), nat == native.end() ? std::string() : nat->second.precision);
    insert.bind(next(), nat == native.end() ? std::string() : nat->second.variant);
    insert.bind_opt(next(), min_gpus).run();
  }
}

namespace {

// A value the reader gets back byte for byte as an integer: canonical
// decimal (no sign but '-', no leading zero), within 18 digits.
std::optional<long long> canonical_integer(const std::string& v) {
  const size_t digits = v.size() - (v.rfind('-', 0) == 0 ? 1 : 0);
  if (digits == 0 || digits > 18) return std::nullopt;
  const std::string d = v.substr(v.size() - digits);
  if (!std::all_of(d.begin(), d.end(), [](unsigned char c) { return c >= '0' && c <= '9'; }) || (d.size() > 1 && d[0] == '0') ||
      (d == "0" && digits != v.size()))
    return std::nullopt;
  return std::stoll(v);
}

// A fact's site `at` as file, line and the rest: "path:123|other:4" →
// (path, 123, "|other:4"); a text that does not start with path:line is all rest.
struct Site {
  std::string file;
  std::optional<long long> line;
  std::string more;
};
Site site_of(const std::string& at) {
  const std::string first = at.substr(0, at.find('|'));
  const size_t colon = first.rfind(':');
  if (colon != std::string::npos && colon > 0)
    if (auto line = canonical_integer(first.substr(colon + 1)); line && *line > 0)
      return {first.substr(0, colon), line, at.substr(first.size())};
  return {"", std::nullopt, at};
}

// The code facts as kbq reads them (recipe_facts and its dictionaries):
// each function, field, file and (state, value, type) once, ids in sorted
// order, integers as integers. code_facts keeps the full rows (and notes).
void derive_facts(kb::Db& db) {
  struct Row {
    std::string target, field, state, value, type;
    Site site;
  };
  std::vector<Row> rows;
  std::map<std::string, long long> targets, fields, files;
  std::map<std::tuple<std::string, std::string, std::string>, long long> values;
  {
    kb::Stmt st(db, "SELECT target, field, state, value, type, at FROM code_facts ORDER BY target, field");
    while (st.step()) {
      Row r{st.text(0), st.text(1), st.text(2), st.text(3), st.text(4), site_of(st.text(5))};
      targets[r.target];
      fields[r.field];
      if (!r.site.file.empty()) files[r.site.file];
      values[{r.state, r.value, r.type}];
      rows.push_back(std::move(r));
    }
  }
  const auto numbered = [&](auto& ids, const char* sql) {
    kb::Stmt ins(db, sql);
    long long id = 0;
    for (auto& [key, value] : ids) {
      value = ++id;
      ins.bind(1, value).bind(2, key).run();
    }
  };
  numbered(targets, "INSERT INTO fact_targets(id, target) VALUES (?, ?)");
  numbered(fields, "INSERT INTO fact_fields(id, field) VALUES (?, ?)");
  numbered(files, "INSERT INTO code_files(id, path) VALUES (?, ?)");
  {
    kb::Stmt ins(db, "INSERT INTO fact_values(id, state, value, type) VALUES (?, ?, ?, ?)");
    long long id = 0;
    for (auto& [key, value] : values) {
      value = ++id;
      const auto& [state, v, type] = key;
      ins.bind(1, value).bind(2, state);
      if (auto n = canonical_integer(v))
        ins.bind(3, *n);
      else
        ins.bind(3, v);
      ins.bind(4, type).run();
    }
  }
  // Each target's facts packed in one value (base/packed_facts.hpp), in
  // field order (the rows are in target, field order; ids follow names).
  kb::Stmt ins(db, "INSERT INTO recipe_facts(target_id, facts) VALUES (?, ?)");
  std::vector<kb::PackedFact> facts;
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    kb::PackedFact& f = facts.emplace_back();
    f.field_id = static_cast<std::uint64_t>(fields[r.field]);
    f.value_id = static_cast<std::uint64_t>(values[{r.state, r.value, r.type}]);
    if (!r.site.file.empty()) f.file_id = static_cast<std::uint64_t>(files[r.site.file]);
    if (r.site.line) f.line = static_cast<std::uint64_t>(*r.site.line);
    f.more = r.site.more;
    if (i + 1 < rows.size() && rows[i + 1].target == r.target) continue;
    const std::string packed = kb::pack_facts(facts);
    // kbc writes nothing kbq would refuse (a site longer than a KB value).
    try {
      kb::for_each_packed_fact(packed, [](const kb::PackedFact&) {});
    } catch (const kb::stored::Error& e) {
      throw std::runtime_error("the code facts of " + r.target + ": " + e.what());
    }
    ins.bind(1, targets[r.target]).bind_blob(2, packed).run();
    facts.clear();
  }
}

}  // namespace

namespace {

struct Precision {
  std::string key, match;
};

// The first row of data/precisions.tsv that a MixedPrecisionConfig's fields
// match (`one(field)`: its single value, "" when unknown): the row's key and
// the field that decided (nullptr for the `*` row: the object as a whole);
// {"", nullptr} when none does.
template <typename One>
std::pair<std::string, const char*> match_precision(const std::vector<Precision>& precisions, const One& one) {
  const std::string fp4 = one("fp4"), fp8 = one("fp8"), fp8_recipe = one("fp8_recipe"), fp16 = one("fp16");
  const bool fp4_set = !fp4.empty() && fp4 != "none", fp8_set = !fp8.empty() && fp8 != "none";
  for (const auto& p : precisions) {
    if (p.match == "fp4=set" && fp4_set) return {p.key, "fp4"};
    if (starts_with(p.match, "fp8_recipe=") && !fp4_set && fp8_set && fp8_recipe == p.match.substr(11)) return {p.key, "fp8_recipe"};
    if (p.match == "fp16=true" && !fp4_set && !fp8_set && fp16 == "true") return {p.key, "fp16"};
    if (p.match == "*" && !fp4_set && !fp8_set && !fp8.empty() && !fp4.empty()) return {p.key, nullptr};
  }
  return {"", nullptr};
}

// The precision each entry of a name registry builds (launcher rows of
// section `registry`, code-layout.tsv): one more row per entry, attribute
// `precision`, the precisions.tsv key its fields match ('' when none), at
// the entry's factory. kbq check judges a `mixed_precision=NAME` override
// by it, as it judges a recipe by the precision its code sets.
void derive_registry_precisions(kb::Db& db, const std::vector<Precision>& precisions) {
  std::map<std::string, std::map<std::string, std::string>> fields;  // item -> attribute -> state:value
  std::map<std::string, std::string> at;
  {
    kb::Stmt st(db, "SELECT item, attribute, value, at FROM launcher WHERE section = 'registry' AND attribute <> 'absent' ORDER BY rowid");
    while (st.step()) {
      fields[st.text(0)][st.text(1)] = st.text(2);
      if (st.text(1) == "factory") at[st.text(0)] = st.text(3);
    }
  }
  kb::Stmt ins(db, "INSERT INTO launcher(section, item, attribute, value, at) VALUES ('registry', ?, 'precision', ?, ?)");
  for (const auto& [item, f] : fields) {
    auto one = [&f = f](const char* field) {
      auto it = f.find(field);
      if (it == f.end()) return std::string();
      const auto colon = it->second.find(':');
      const std::string state = it->second.substr(0, colon);
      return colon == std::string::npos || (state != "value" && state != "default") ? std::string() : it->second.substr(colon + 1);
    };
    ins.bind_all(item, match_precision(precisions, one).first, at[item]).run();
  }
}

}  // namespace

// What the launcher does with each recipe (recipe_launch): the precision its
// code sets (data/precisions.tsv), the PEFT modes it runs with, whether its
// function raises, and the data it trains on without --dataset
// (data/dataset-kinds.tsv), each cited path:line@commit. The launcher's own
// rules come from its `function` rows (code-layout.tsv launcher-function):
// benchmark PEFT recipes are LoRA only and refuse --dataset
// (benchmark-scope); text SFT/PEFT benchmarks train on the mock preset
// (benchmark-dataset-default); a library recipe takes --mode dora when its
// function takes a PEFT scheme (peft-scheme-kwargs) and builds another PEFT
// class for it (the facts `peft@dora`).
void derive_recipe_launch(kb::Db& db) {
  std::string commit;
  {
    kb::Stmt st(db, "SELECT substr(commit_sha, 1, 9) FROM code_snapshots WHERE newest = 1");
    if (st.step()) commit = st.text(0);
  }
  auto cite = [&](const std::string& at) { return at.empty() ? at : at + "@" + commit; };
  // The launcher's rules: the line of a function's raise / assignment whose text holds `needle`.
  auto rule_at = [&](const char* item, const char* attribute, const char* needle) {
    kb::Stmt st(db,
                "SELECT at FROM launcher WHERE section = 'function' AND item = ? AND attribute = ? AND instr(value, ?) > 0 ORDER BY at");
    st.bind_all(item, attribute, needle);
    return st.step() ? cite(st.text(0)) : std::string();
  };
  const std::string peft_scope_at = rule_at("benchmark-scope", "raises", "--mode lora");
  const std::string dataset_refused_at = rule_at("benchmark-scope", "raises", "--dataset");
  const std::string dataset_replaces_at = rule_at("dataset-selection", "assigns", "recipe.dataset");
  const std::string bench_mock_at = rule_at("benchmark-dataset-default", "assigns", "recipe.dataset");
  // What that default builds (data/planner.tsv benchmark_finetune_data).
  std::string bench_data;
  {
    kb::Stmt st(db, "SELECT value FROM planner WHERE key = 'benchmark_finetune_data'");
    if (st.step()) bench_data = st.text(0);
  }
  const std::string no_scheme_at = rule_at("peft-scheme-kwargs", "raises", "PEFT scheme");
  std::string lookup_at;  // load_recipe's def: the benchmark definition first
  {
    kb::Stmt st(db, "SELECT at FROM launcher WHERE section = 'function' AND item = 'recipe-lookup' AND attribute = 'def'");
    if (st.step()) lookup_at = cite(st.text(0));
  }
  std::set<std::string> benchmark_names;
  {
    kb::Stmt st(db, "SELECT name FROM recipes WHERE kind = 'benchmark'");
    while (st.step()) benchmark_names.insert(st.text(0));
  }
  std::vector<Precision> precisions;
  {
    kb::Stmt st(db, "SELECT precision, match FROM precisions ORDER BY ordinal");
    while (st.step()) precisions.push_back({st.text(0), st.text(1)});
  }
  derive_registry_precisions(db, precisions);
  struct Kind {
    std::string cls, when, data;
    bool user_data;
  };
  std::vector<Kind> kinds;
  {
    kb::Stmt st(db, "SELECT class, when_fact, data, user_data FROM dataset_kinds ORDER BY ordinal");
    while (st.step()) kinds.push_back({st.text(0), st.text(1), st.text(2), st.integer(3) != 0});
  }
  std::map<std::string, std::string> modality_of;
  {
    kb::Stmt st(db, "SELECT step, modality FROM steps");
    while (st.step()) modality_of[st.text(0)] = st.text(1);
  }
  kb::Stmt facts(db, "SELECT field, state, value, type, at FROM code_facts WHERE target = ?");
  kb::Stmt recipes(
      db, "SELECT r.name, r.kind, r.target, r.mode, c.step FROM recipes r JOIN code_recipes c USING (name, kind) ORDER BY r.name, r.kind");
  // The rows, then their citations once each (launch_sites, in text order).
  struct Launch {
    std::string name, kind, precision, precision_at, peft_modes, peft_at, raises, raises_at, data, data_name;
    bool user_data;
    std::string data_at, dataset_flag, dataset_flag_at;
    bool shadowed;
    std::string shadowed_at;
  };
  std::vector<Launch> rows;
  while (recipes.step()) {
    const std::string name = recipes.text(0), kind = recipes.text(1), target = recipes.text(2), task = recipes.text(3);
    struct Fact {
      std::string state, value, type, at;
    };
    std::map<std::string, Fact> f;
    facts.bind(1, target);
    while (facts.step()) f[facts.text(0)] = {facts.text(1), facts.text(2), facts.text(3), facts.text(4)};
    facts.reset();
    // A single value (set by the code or a default); "" when unknown or undecided.
    auto one = [&](const char* field) {
      auto it = f.find(field);
      return it == f.end() || (it->second.state != "value" && it->second.state != "default") ? std::string() : it->second.value;
    };
    auto at_of = [&](const char* field) {
      auto it = f.find(field);
      return it == f.end() ? std::string() : cite(it->second.at);
    };
    const bool benchmark = kind == "benchmark";

    // The precision: the first row of precisions.tsv its facts match.
    std::string precision, precision_at;
    if (!one("fp8").empty() || !one("fp4").empty() || !one("mixed_precision").empty()) {
      const auto [key, by] = match_precision(precisions, one);
      precision = key, precision_at = key.empty() ? std::string() : at_of(by ? by : "mixed_precision");
    }

    // PEFT recipes: the modes the runner starts them with.
    std::string peft_modes, peft_at;
    if (task == kb::kPeftMode) {
      const std::string lora_class = one("peft"), dora_class = one("peft@dora");
      if (benchmark) {
        peft_modes = "lora", peft_at = peft_scope_at;
      } else if (f.count("peft@dora") == 0) {
        peft_modes = "lora", peft_at = no_scheme_at;  // takes no scheme: --mode dora is refused
      } else if (!dora_class.empty() && dora_class != lora_class) {
        peft_modes = "lora,dora", peft_at = at_of("peft@dora");
      } else {
        peft_modes = "lora", peft_at = at_of("peft@dora");  // the scheme is taken but builds the same class
      }
    }

    std::string raises = one("raises"), raises_at;
    if (raises == "false") raises.clear();
    if (!raises.empty()) raises_at = at_of("raises");

    // The data without --dataset: text SFT/PEFT benchmarks train on the mock preset; else the class's kind.
    std::string data, data_name, data_at;
    bool user_data = false;
    const auto modality = modality_of.find(recipes.text(4));
    if (benchmark && !bench_data.empty() && (task == kb::kSftMode || task == kb::kPeftMode) && modality != modality_of.end() &&
        modality->second == "text") {
      data = bench_data, data_at = bench_mock_at;
    } else if (const std::string cls = one("dataset"); !cls.empty()) {
      for (const auto& k : kinds) {
        if (k.cls != cls) continue;
        const auto eq = k.when.find('=');
        if (eq != std::string::npos && one(k.when.substr(0, eq).c_str()) != k.when.substr(eq + 1)) continue;
        data = k.data, user_data = k.user_data, data_at = at_of("dataset");
        break;
      }
      for (const char* n : {"dataset_name", "dataset_source"})
        if (const std::string v = one(n); data_name.empty() && !v.empty() && v != "none") data_name = v;
    }

    const bool shadowed = !benchmark && benchmark_names.count(name) > 0;
    rows.push_back({name, kind, precision, precision_at, peft_modes, peft_at, raises, raises_at, data, data_name, user_data, data_at,
                    benchmark ? "refused" : "replaces", benchmark ? dataset_refused_at : dataset_replaces_at, shadowed,
                    shadowed ? lookup_at : std::string()});
  }
  std::map<std::string, long long> sites;
  for (const auto& r : rows)
    for (const std::string* at : {&r.precision_at, &r.peft_at, &r.raises_at, &r.data_at, &r.dataset_flag_at, &r.shadowed_at})
      if (!at->empty()) sites[*at];
  {
    kb::Stmt ins(db, "INSERT INTO launch_sites(id, at) VALUES (?, ?)");
    long long id = 0;
    for (auto& [at, value] : sites) ins.bind(1, value = ++id).bind(2, at).run();
  }
  kb::Stmt insert(db,
                  "INSERT INTO recipe_launch(name, kind, precision, precision_at, peft_modes, peft_at, raises, raises_at, data, data_name, "
                  "user_data, data_at, dataset_flag, dataset_flag_at, shadowed, shadowed_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  const auto site = [&](const std::string& at) { return at.empty() ? std::optional<long long>() : sites.at(at); };
  for (const auto& r : rows)
    insert
        .bind_all(r.name, r.kind, r.precision, site(r.precision_at), r.peft_modes, site(r.peft_at), r.raises, site(r.raises_at), r.data,
                  r.data_name, r.user_data ? 1 : 0, site(r.data_at), r.dataset_flag, site(r.dataset_flag_at), r.shadowed ? 1 : 0,
                  site(r.shadowed_at))
        .run();
}

void derive(kb::Db& db) {
  derive_recipes(db);
  derive_recipe_launch(db);
  derive_facts(db);
  derive_quick_reference(db, kbq::dsl::load_lexicon(db));
}

}  // namespace kb
