// Generate stage: the library recipes a user can pass to `--recipe`, as the
// generated recipe index lists them (Inputs::code_lines), and the family
// each goes to. The names and values are the newest code snapshot's (its
// facts, and the KB's recipe_launch rows derived from them: precision, data,
// whether the function raises); the families are the documents' own
// headings. No recipe name or family is written here: a name is placed by
// the documents' rows (its exact row, else a pattern row that covers it),
// else by its model stem among the families' recipes of its modality, else
// in the family that gathers the most models of its modality.
#include <algorithm>
#include <cctype>

#include "base/text.hpp"
#include "compiler/extract/extract.hpp"
#include "compiler/generate/generate_int.hpp"

namespace kb::gen {

namespace {

// The leading letters of a name: its model stem ("gemma" of gemma4_e4b_…).
std::string stem_of(const std::string& name) {
  size_t i = 0;
  while (i < name.size() && std::isalpha(static_cast<unsigned char>(name[i]))) ++i;
  return name.substr(0, i);
}

size_t common_prefix(const std::string& a, const std::string& b) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  return i;
}

}  // namespace

// kbq's memory estimate for a recipe at the code's minimum (`kbq check NAME
// --gpus MIN` on its own hardware, which pins every size the user leaves);
// when it does not fit there, the fewest GPUs kbq finds where it does at
// that layout. A note beside GPUs (min), never its value: the estimate is
// kbq's (docs/memory.md), pessimistic for some recipes, not what the code sets.
void Inputs::judge_memory(CodeLine& l) {
  const auto own = l.cv->ints.find("min_gpus");
  if (own == l.cv->ints.end()) return;
  auto res = engine.check(l.name, own->second.first, {}, l.hardware, languages.front());
  const auto* a = std::get_if<kbq::Answer>(&res);
  if (!a || a->results.empty()) return;
  const kbq::Result& r = a->results.front();
  l.hardware = r.layout.hardware;
  if (!r.memory.known) return;
  l.memory_gib = r.memory.per_gpu_gib;
  if (r.runnable || r.memory.fits) {
    l.fit = r.runnable ? Fit::Fits : Fit::Unknown;  // memory fits but a rule fails: not a memory question
    return;
  }
  l.fit = r.min_gpus > 0 ? Fit::Above : Fit::Never;
  l.memory_gpus = r.min_gpus;
}

void Inputs::place_code_lines() {
  const CodeSnapshot* snap = c.code.newest();
  if (!snap) return;
  // The KB's view of each passable name: its task, modality and launch facts.
  Db db(kb_path, Db::Mode::ReadOnly);
  Stmt st(db,
          "SELECT r.name, r.mode, r.modality, COALESCE(p.display, l.precision), coalesce(sp.at, ''), l.data, l.data_name, "
          "coalesce(sd.at, ''), l.raises, coalesce(sr.at, ''), r.native_hardware FROM recipes r JOIN recipe_launch l ON l.name = r.name "
          "AND l.kind = r.kind "
          "LEFT JOIN precisions p ON p.precision = l.precision LEFT JOIN launch_sites sp ON sp.id = l.precision_at "
          "LEFT JOIN launch_sites sd ON sd.id = l.data_at LEFT JOIN launch_sites sr ON sr.id = l.raises_at WHERE r.kind = ?");
  st.bind(1, std::string(to_string(RecipeKind::Library)));
  std::map<std::string, const CodeRecipe*> library;
  for (const auto& r : snap->recipes)
    if (r.kind == RecipeKind::Library) library[r.name] = &r;
  const RE2* gpu_count = c.vocab.pattern("gpu_count_in_name");  // data/patterns.tsv
  while (st.step()) {
    CodeLine l;
    l.name = st.text(0);
    if (gpu_count && RE2::PartialMatch(l.name, *gpu_count)) continue;
    auto cv = code_library.find(l.name);
    auto rec = library.find(l.name);
    if (cv == code_library.end() || rec == library.end()) continue;
    l.cv = &cv->second;
    l.task = st.text(1);
    l.modality = st.text(2);
    l.precision = st.text(3);
    l.precision_at = st.text(4);
    l.dataset = st.text(6).empty() ? st.text(5) : st.text(6);
    l.dataset_at = st.text(7);
    l.raises = st.text(8);
    l.raises_at = st.text(9);
    l.defined_at = snap->cite(rec->second->defined_at);
    l.hardware = st.text(10);
    judge_memory(l);
    code_lines.push_back(std::move(l));
  }
  std::sort(code_lines.begin(), code_lines.end(), [](const CodeLine& a, const CodeLine& b) { return natural_less(a.name, b.name); });

  // The documents' library rows: exact names, and patterns in family order.
  std::map<std::string, const IndexEntry*> exact;
  std::vector<std::pair<const IndexEntry*, const RecipeRow*>> patterns;
  for (const auto& e : entries) {
    if (e.kind != RecipeKind::Library || !e.rows.front()->mentioned_in.empty()) continue;
    if (e.rows.front()->pattern)
      for (const auto* r : e.rows) patterns.emplace_back(&e, r);
    else
      exact[e.name] = &e;
  }
  std::stable_sort(patterns.begin(), patterns.end(),
                   [](const auto& a, const auto& b) { return a.first->family_ordinal < b.first->family_ordinal; });
  const std::string library_index = std::string(to_string(RecipeKind::Library)) + "_index";
  std::map<std::string, int> family_of_name;  // placed by the documents' rows
  std::vector<CodeLine*> unplaced;
  for (auto& l : code_lines) {
    if (auto it = exact.find(l.name); it != exact.end()) {
      l.entry = it->second;
      l.doc_row = it->second->rows.front();
      for (const auto* r : it->second->rows)
        if (r->mode == l.task) l.doc_row = r;
      l.placed_by = "name";
      family_of_name[l.name] = it->second->family_ordinal;
      continue;
    }
    for (const auto& [e, r] : patterns) {
      if (!glob_match(r->name, l.name) || (!r->mode.empty() && !l.task.empty() && r->mode != l.task)) continue;
      l.pattern_row = r;
      l.placed_by = "pattern";
      family_of_name[l.name] = e->family_ordinal;
      break;
    }
    if (l.placed_by.empty()) unplaced.push_back(&l);
  }
  // The rest, in order: by model stem among the placed recipes of its
  // modality; in the family gathering the most model stems of the families
  // mostly of its modality; by model stem among all placed recipes; in the
  // family gathering the most model stems.
  const std::map<std::string, int> by_documents = family_of_name;
  std::map<int, std::map<std::string, int>> modality_count;  // family → modality → placed recipes
  for (const auto& o : code_lines)
    if (auto it = by_documents.find(o.name); it != by_documents.end()) ++modality_count[it->second][o.modality];
  auto by_prefix = [&](const CodeLine& l, bool same_modality) {
    const std::string stem = stem_of(l.name);
    size_t best = 0;
    int family = 0;
    for (const auto& o : code_lines) {
      auto it = by_documents.find(o.name);
      if (it == by_documents.end() || (same_modality && o.modality != l.modality)) continue;
      const size_t n = common_prefix(l.name, o.name);
      if (n >= std::max<size_t>(stem.size(), 1) && (n > best || (n == best && it->second < family))) best = n, family = it->second;
    }
    return family;
  };
  auto catch_all = [&](const CodeLine& l, bool same_modality) {
    std::map<int, std::set<std::string>> stems;
    for (const auto& o : code_lines) {
      auto it = by_documents.find(o.name);
      if (it == by_documents.end()) continue;
      if (same_modality) {
        const auto& counts = modality_count[it->second];
        int all = 0;
        for (const auto& [m, n] : counts) all += n;
        auto own = counts.find(l.modality);
        if (own == counts.end() || 2 * own->second <= all) continue;
      }
      stems[it->second].insert(stem_of(o.name));
    }
    int family = 0;
    size_t most = 0;
    for (const auto& [f, s] : stems)
      if (s.size() > most) most = s.size(), family = f;
    return family;
  };
  for (CodeLine* l : unplaced) {
    int family = 0;
    if ((family = by_prefix(*l, true)) != 0)
      l->placed_by = "prefix";
    else if ((family = catch_all(*l, true)) != 0)
      l->placed_by = "catch-all";
    else if ((family = by_prefix(*l, false)) != 0)
      l->placed_by = "prefix";
    else if ((family = catch_all(*l, false)) != 0)
      l->placed_by = "catch-all";
    if (family != 0) family_of_name[l->name] = family;
  }
  for (const auto& l : code_lines)
    if (auto it = family_of_name.find(l.name); it != family_of_name.end()) code_lines_of[{library_index, it->second}].push_back(&l);
}

}  // namespace kb::gen
