// Derive stage: the ranking columns kbc computes once per knowledge base (see derive.hpp).
#include "compiler/derive/derive.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <optional>
#include <vector>

#include "base/dsl/kb_lexicon.hpp"
#include "base/kinds.hpp"
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

void derive(kb::Db& db) {
  derive_recipes(db);
  derive_quick_reference(db, kbq::dsl::load_lexicon(db));
}

}  // namespace kb
