// Ranking columns derived at build time (see shapes.hpp).
#include "rank/shapes.hpp"

#include <map>
#include <vector>

#include "support/text.hpp"

namespace kbq {

kbq::dsl::Lexicon load_lexicon(kb::Db& db) {
  std::vector<kbq::dsl::LexiconRow> rows;
  kb::Stmt lx(db, "SELECT lang, kind, word, value FROM lexicon ORDER BY lang, kind, word");
  while (lx.step()) rows.push_back({lx.text(0), lx.text(1), lx.text(2), lx.text(3)});
  std::vector<std::string> hardware;
  kb::Stmt g(db, "SELECT gpu_key FROM gpus ORDER BY gpu_key");
  while (g.step()) hardware.push_back(g.text(0));
  return kbq::dsl::Lexicon(rows, hardware);
}

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

void derive_ranking_columns(kb::Db& db) {
  const auto lexicon = load_lexicon(db);

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

}  // namespace kbq
