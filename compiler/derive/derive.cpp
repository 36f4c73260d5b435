// Derive stage: the ranking columns kbc computes once per knowledge base (see derive.hpp).
#include "compiler/derive/derive.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <optional>
#include <vector>

#include "base/dsl/kb_lexicon.hpp"
#include "base/text.hpp"

namespace kb {

void heading_intents(const kbq::dsl::Lexicon& lexicon, const std::string& heading, std::set<std::string>& into) {
  std::vector<std::string> words;
  std::string cur;
  for (char ch : kb::fold(heading)) {
    const bool sep = ch == ' ' || ch == '/' || ch == '(' || ch == ')' || ch == ',';
    if (!sep) cur += ch;
    if (sep && !cur.empty()) {
      words.push_back(cur);
      cur.clear();
    }
  }
  if (!cur.empty()) words.push_back(cur);
  for (size_t i = 0; i < words.size(); ++i) {
    if (auto v = lexicon.value_of(kbq::dsl::WordKind::Intent, words[i])) into.insert(*v);
    if (i + 1 < words.size())
      if (auto v = lexicon.value_of(kbq::dsl::WordKind::Intent, words[i] + " " + words[i + 1])) into.insert(*v);
  }
}

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

void derive_ranking_columns(kb::Db& db) {
  const auto lexicon = kbq::dsl::load_lexicon(db);
  derive_quick_reference(db, lexicon);

  // A family entity's intents are those of its heading in every edition;
  // any of its headings (as a recipe row names its family) maps to them.
  std::map<std::string, std::set<std::string>> by_heading;
  {
    std::map<long long, std::set<std::string>> texts;
    kb::Stmt st(db,
                "SELECT t.entity_id, t.text FROM entity_texts t JOIN entities e ON e.id = t.entity_id "
                "WHERE e.kind = 'family' ORDER BY t.entity_id");
    while (st.step()) texts[st.integer(0)].insert(st.text(1));
    for (const auto& [id, headings] : texts) {
      std::set<std::string> intents;
      for (const auto& h : headings) heading_intents(lexicon, h, intents);
      for (const auto& h : headings) by_heading[h].insert(intents.begin(), intents.end());
    }
  }
  std::set<std::string> moe_models;
  {
    kb::Stmt st(db, "SELECT model_key FROM models WHERE coalesce(num_experts, 0) > 0");
    while (st.step()) moe_models.insert(st.text(0));
  }

  // Every column the ranker reads of a recipe, except its name, model key
  // and id (which only query terms naming recipes score).
  kb::Stmt st(db,
              "SELECT id, family, coalesce(model_key, ''), kind, mode, is_pattern, tp_min, tp_max, tp_state, pp_min, pp_max, "
              "pp_state, cp_min, cp_max, cp_state, ep_min, ep_max, ep_state, vp_min, vp_max, vp_state, gpus_min, gpus_max, "
              "gpus_open, gpus_state, sp, seq_len, sizes, gpu_types FROM recipes ORDER BY id");
  kb::Stmt update(db, "UPDATE recipes SET family_intents = ?, model_moe = ?, shape = ? WHERE id = ?");
  struct Shape {
    long long id, first;
    std::string kind;
    long long members = 0;
  };
  std::map<std::string, Shape> shapes;
  std::map<std::string, std::set<std::string>> family_cache;
  while (st.step()) {
    const std::string family = st.text(1);
    auto [fam, fresh] = family_cache.try_emplace(family);
    if (fresh) {
      heading_intents(lexicon, family, fam->second);
      if (auto it = by_heading.find(family); it != by_heading.end()) fam->second.insert(it->second.begin(), it->second.end());
    }
    const std::string intents = kb::join(std::vector<std::string>(fam->second.begin(), fam->second.end()), ",");
    const int moe = moe_models.count(st.text(2)) ? 1 : 0;
    std::string key;
    for (int c = 3; c < st.columns(); ++c) {
      key += st.is_null(c) ? std::string("\x1e") : st.text(c);
      key += '\x1f';
    }
    key += intents + '\x1f' + std::to_string(moe);
    auto [shape, added] = shapes.try_emplace(key, Shape{static_cast<long long>(shapes.size()) + 1, st.integer(0), st.text(3)});
    ++shape->second.members;
    update.bind_all(intents, moe, shape->second.id, st.integer(0)).run();
  }
  kb::Stmt insert(db, "INSERT INTO shapes(id, kind, recipe_id, members) VALUES (?, ?, ?, ?)");
  for (const auto& [key, s] : shapes) insert.bind_all(s.id, s.kind, s.first, s.members).run();
}

}  // namespace kb
