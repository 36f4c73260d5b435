// Drift between the documents and the code (see drift.hpp).
#include "compiler/resolve/drift.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "base/text.hpp"
#include "compiler/extract/extract.hpp"

namespace kb {

std::string_view to_string(DriftKind k) {
  switch (k) {
    case DriftKind::RecipeFact:
      return "recipe-fact";
    case DriftKind::MissingRecipe:
      return "missing-recipe";
    case DriftKind::UnknownKey:
      return "unknown-key";
    case DriftKind::OverwrittenKey:
      return "overwritten-key";
    case DriftKind::Dataset:
      return "dataset";
    case DriftKind::BenchmarkModel:
      return "benchmark-model";
  }
  return {};
}

std::map<std::string, std::string> task_of_mode(const CodeSnapshot& s) {
  std::map<std::string, std::string> out;
  for (const auto& row : s.launcher)
    if (row.cells.size() >= 4 && row.cells[0] == "mode" && row.cells[2] == "task") out[row.cells[1]] = row.cells[3];
  return out;
}

long long mesh_world(long long tp, long long pp, long long cp, long long ep, long long etp) {
  return pp * std::max(tp * cp, ep * std::max(1LL, etp));
}

CodeValues code_values(const CodeSnapshot& s, const CodeRecipe& r, const std::map<std::string, std::string>& modes) {
  CodeValues cv;
  cv.recipe = &r;
  for (const char* f : {"tp", "pp", "cp", "ep", "etp", "seq_length"}) {
    const CodeFact* fact = s.fact(r, f);
    if (auto n = fact_int(fact)) cv.ints[f] = {*n, s.cite(fact->at)};
  }
  if (const CodeFact* f = s.fact(r, "sp"); auto b = fact_bool(f)) cv.sp = std::make_pair(*b, s.cite(f->at));
  auto t = modes.find(r.mode);
  cv.task = t == modes.end() ? std::string() : t->second;
  auto get = [&](const char* f) { return cv.ints.count(f) ? cv.ints.at(f).first : 1; };
  if (cv.ints.count("tp") && cv.ints.count("pp"))
    cv.ints["layout_gpus"] = {mesh_world(get("tp"), get("pp"), get("cp"), get("ep"), get("etp")), s.cite(r.defined_at)};
  // The GPU count the defining function's name encodes (an alias such as
  // qwen3_8b_pretrain_config names a function ..._16gpu_h100_bf16_config):
  // the world the recipe was written for, cited at that function's def.
  const std::string function = r.target.substr(r.target.rfind('.') + 1);
  for (const CodeRecipe* named : {&r, s.recipe(function, r.kind)})
    if (named && !named->gpus.empty() && named->gpus.find_first_not_of("0123456789") == std::string::npos && named->gpus.size() < 10) {
      cv.ints["named_gpus"] = {std::stoll(named->gpus), s.cite(named->defined_at)};
      break;
    }
  const auto layout = cv.ints.find("layout_gpus"), named = cv.ints.find("named_gpus");
  if (layout != cv.ints.end() && (named == cv.ints.end() || layout->second.first >= named->second.first))
    cv.ints["min_gpus"] = layout->second;
  else if (named != cv.ints.end())
    cv.ints["min_gpus"] = named->second;
  return cv;
}

namespace {

using CodeView = CodeValues;

class DriftFinder {
 public:
  DriftFinder(const Extracted& x, const CodeSnapshot& s) : x_(x), s_(s) {
    for (const auto& r : s.recipes) {
      (r.kind == RecipeKind::Library ? library_ : benchmark_)[r.name] = &r;
      exported_.insert(r.name);
    }
    task_of_mode_ = task_of_mode(s);  // the launcher's mode → task (lora, dora → peft)
    for (const auto& row : x.recipes)
      if (row.kind != RecipeKind::Benchmark && !row.pattern) named_.insert({row.prov.lang, row.prov.revision, row.name});
    read_keys();
    read_overwritten_keys();
    for (const auto& row : s.datasets)
      if (row.cells.size() >= 4 && row.cells[1] == "modes") preset_modes_[row.cells[0]] = split_words(row.cells[2]);
  }

  std::vector<Drift> run() {
    for (const auto& row : x_.recipes) {
      if (row.kind == RecipeKind::Benchmark) continue;
      if (row.pattern)
        pattern_row(row);
      else
        name_row(row);
    }
    benchmark_rows();
    mentions();
    std::sort(out_.begin(), out_.end(), [](const Drift& a, const Drift& b) {
      return std::make_tuple(a.subject, a.field, -a.doc.revision, a.doc.file, a.doc.line, a.doc_value) <
             std::make_tuple(b.subject, b.field, -b.doc.revision, b.doc.file, b.doc.line, b.doc_value);
    });
    out_.erase(std::unique(out_.begin(), out_.end(),
                           [](const Drift& a, const Drift& b) {
                             return a.kind == b.kind && a.subject == b.subject && a.field == b.field && a.doc_value == b.doc_value &&
                                    a.doc.file == b.doc.file && a.doc.line == b.doc.line;
                           }),
               out_.end());
    return std::move(out_);
  }

 private:
  static std::set<std::string> split_words(const std::string& s) {
    std::set<std::string> out;
    for (auto& w : split(s, ' '))
      if (!trim(w).empty()) out.insert(trim(w));
    return out;
  }

  void add(DriftKind kind, std::string subject, std::string field, std::string doc_value, const Provenance& doc, std::string code_value,
           std::string code_at, std::string note = {}) {
    out_.push_back({kind,
                    std::move(subject),
                    std::move(field),
                    std::move(doc_value),
                    doc,
                    std::move(code_value),
                    std::move(code_at),
                    std::move(note),
                    {},
                    {}});
  }
  // The same, for a table row: `cell` is the row's value as compared,
  // `suffix` what doc_value adds to it (the pattern row's name).
  void add_row(const std::string& row, DriftKind kind, std::string subject, std::string field, const std::string& cell,
               const std::string& suffix, const Provenance& doc, std::string code_value, std::string code_at, std::string note = {}) {
    out_.push_back({kind, std::move(subject), std::move(field), cell + suffix, doc, std::move(code_value), std::move(code_at),
                    std::move(note), row, cell});
  }

  CodeView view(const CodeRecipe& r) const { return code_values(s_, r, task_of_mode_); }

  static bool in_range(const Range& rg, long long v) {
    switch (rg.state) {
      case RangeState::None:
        return v == 1;
      case RangeState::Value:
        return v >= rg.lo && (rg.open || v <= rg.hi);
      case RangeState::Unknown:
      case RangeState::Varies:
        break;
    }
    return true;
  }

  // The document's cells against one code recipe.
  void compare(const RecipeRow& row, const CodeView& cv, const std::string& doc_suffix) {
    const std::string& name = cv.recipe->name;
    const std::pair<const char*, const Range*> cells[] = {
        {"tp", &row.tp}, {"pp", &row.pp}, {"cp", &row.cp}, {"ep", &row.ep}, {"min_gpus", &row.gpus}};
    for (const auto& [field, rg] : cells) {
      if (!rg->known() || rg->state == RangeState::Varies || !cv.ints.count(field)) continue;
      if (std::string(field) == "min_gpus" && rg->state == RangeState::None) continue;
      const auto& [v, at] = cv.ints.at(field);
      if (!in_range(*rg, v))
        add_row(row.name, DriftKind::RecipeFact, name, field, format_range(*rg, kFactWords), doc_suffix, row.prov, std::to_string(v), at);
    }
    if (row.sp && cv.sp && *row.sp != cv.sp->first)
      add_row(row.name, DriftKind::RecipeFact, name, "sp", *row.sp ? "true" : "false", doc_suffix, row.prov,
              cv.sp->first ? "true" : "false", cv.sp->second);
    if (row.seq_len > 0 && cv.ints.count("seq_length") && cv.ints.at("seq_length").first != row.seq_len)
      add_row(row.name, DriftKind::RecipeFact, name, "seq_len", std::to_string(row.seq_len), doc_suffix, row.prov,
              std::to_string(cv.ints.at("seq_length").first), cv.ints.at("seq_length").second);
    if (!row.mode.empty() && !cv.task.empty() && row.mode != cv.task)
      add_row(row.name, DriftKind::RecipeFact, name, "mode", row.mode, doc_suffix, row.prov, cv.task, s_.cite(cv.recipe->exported_at));
  }

  void name_row(const RecipeRow& row) {
    auto it = library_.find(row.name);
    if (it == library_.end()) {
      const bool bench = benchmark_.count(row.name) > 0;
      add_row(row.name, DriftKind::MissingRecipe, row.name, "", row.name, "", row.prov, bench ? "benchmark recipe only" : "",
              bench ? s_.cite(benchmark_.at(row.name)->exported_at) : std::string(),
              bench ? "exported as a benchmark recipe, not a library one" : "no recipe of this name is exported");
      return;
    }
    compare(row, view(*it->second), "");
  }

  void pattern_row(const RecipeRow& row) {
    std::vector<const CodeRecipe*> matched;
    bool any = false;
    for (const auto& [name, r] : library_)
      if (glob_match(row.name, name)) {
        any = true;
        // A recipe its edition names in a row of its own is that row's: the
        // pattern does not stand for it (a family's pattern of "other sizes"
        // also matches the names another table lists one by one).
        if (!named_.count({row.prov.lang, row.prov.revision, name})) matched.push_back(r);
      }
    if (!any) {
      add_row(row.name, DriftKind::MissingRecipe, row.name, "", row.name, "", row.prov, "", "", "the pattern matches no exported recipe");
      return;
    }
    // A pattern row stands for the recipes of its own mode (a P/S/PEFT row is
    // one row per mode): the pattern's other modes are not its recipes.
    for (const CodeRecipe* r : matched) {
      const CodeView cv = view(*r);
      if (!row.mode.empty() && !cv.task.empty() && row.mode != cv.task) continue;
      compare(row, cv, " (pattern " + row.name + ")");
    }
  }

  // Benchmark rows name a model: its exported benchmark recipes must have
  // the GPU counts and hardware the row lists.
  void benchmark_rows() {
    std::map<std::string, std::pair<std::set<long long>, std::set<std::string>>> by_model;  // model → (gpus, hardware)
    std::map<std::string, std::string> first_at;
    for (const auto& [name, r] : benchmark_) {
      if (r->model.empty()) continue;
      try {
        by_model[r->model].first.insert(std::stoll(r->gpus));
      } catch (...) {
      }
      by_model[r->model].second.insert(r->hardware);
      if (!first_at.count(r->model)) first_at[r->model] = s_.cite(r->exported_at);
    }
    for (const auto& row : x_.recipes) {
      if (row.kind != RecipeKind::Benchmark || row.model_key.empty()) continue;
      auto it = by_model.find(row.model_key);
      if (it == by_model.end()) {
        add_row(row.name, DriftKind::BenchmarkModel, row.model.empty() ? row.name : row.model, "", row.model_key, "", row.prov, "", "",
                "no benchmark recipe of this model is exported");
        continue;
      }
      const auto& [gpus, hardware] = it->second;
      const std::string subject = row.model.empty() ? row.name : row.model;
      std::vector<std::string> outside;
      for (long long g : gpus)
        if (!in_range(row.gpus, g)) outside.push_back(std::to_string(g));
      if (row.gpus.known() && row.gpus.state != RangeState::Varies && !outside.empty()) {
        std::vector<std::string> all;
        for (long long g : gpus) all.push_back(std::to_string(g));
        add_row(row.name, DriftKind::BenchmarkModel, subject, "gpus", format_range(row.gpus, kFactWords), "", row.prov, join(all, ","),
                first_at[row.model_key], "exported GPU counts outside the row: " + join(outside, ","));
      }
      if (!row.gpu_types.empty()) {
        const std::set<std::string> doc(row.gpu_types.begin(), row.gpu_types.end());
        std::vector<std::string> missing, extra;
        for (const auto& h : hardware)
          if (!doc.count(h)) extra.push_back(h);
        for (const auto& h : doc)
          if (!hardware.count(h)) missing.push_back(h);
        if (!missing.empty() || !extra.empty())
          add_row(row.name, DriftKind::BenchmarkModel, subject, "hardware", join(row.gpu_types, ","), "", row.prov,
                  join(std::vector<std::string>(hardware.begin(), hardware.end()), ","), first_at[row.model_key],
                  (missing.empty() ? std::string() : "not exported for " + join(missing, ",")) +
                      (missing.empty() || extra.empty() ? "" : "; ") +
                      (extra.empty() ? std::string() : "also exported for " + join(extra, ",")));
      }
    }
  }

  // ConfigContainer keys: fields, and sections whose class lies outside
  // the snapshot (open: any key under them may exist).
  void read_keys() {
    std::set<std::string> described;  // sections whose class the snapshot defines
    for (const auto& row : s_.config_keys) {
      if (row.cells.size() < 7) continue;
      const std::string& key = row.cells[0];
      if (row.cells[1] == "section") {
        sections_.insert(key);
        described.insert(key);
        if (row.cells[3] == "open") open_sections_.insert(key);
      } else {
        keys_[key] = s_.cite(row.cells[6]);
      }
    }
    // A top-level field whose class lies outside the snapshot (e.g. rng:
    // RNGConfig of Megatron-LM) is a section whose keys cannot be checked.
    for (const auto& [key, at] : keys_)
      if (key.find('.') == std::string::npos && !described.count(key)) {
        sections_.insert(key);
        open_sections_.insert(key);
      }
  }

  // Keys the runner assigns after it applied the overrides: an override of
  // one of them is undone or rewritten. A step that is passed the overrides
  // too can tell an explicit one from the recipe's value (run_recipe.py's
  // weak scaling keeps an explicit train.global_batch_size), so its
  // assignments are not counted.
  void read_overwritten_keys() {
    std::string override_step;
    std::map<std::string, std::string> doc_of;  // step → its docstring
    std::set<std::string> reads_overrides;      // steps passed the overrides
    for (const auto& row : s_.launcher) {
      if (row.cells.size() < 4 || row.cells[0] != "runner-step") continue;
      if (row.cells[2] == "applies-overrides") override_step = row.cells[1];
      if (row.cells[2] == "doc") doc_of[row.cells[1]] = row.cells[3];
      if (row.cells[2] == "reads-overrides") reads_overrides.insert(row.cells[1]);
    }
    if (override_step.empty()) return;
    for (const auto& row : s_.launcher) {
      if (row.cells.size() < 5 || row.cells[0] != "runner-step" || row.cells[2] != "assigns" || row.cells[1] <= override_step ||
          reads_overrides.count(row.cells[1]))
        continue;
      const std::string& assign = row.cells[3];
      const auto eq = assign.find(" = ");
      if (eq == std::string::npos) continue;
      std::string lhs = assign.substr(0, eq);
      if (starts_with(lhs, "config.")) lhs = lhs.substr(7);
      const auto dot = lhs.find('.');
      if (dot == std::string::npos || !sections_.count(lhs.substr(0, dot))) continue;
      overwritten_[lhs] = {assign.substr(eq + 3), s_.cite(row.cells[4]), doc_of[row.cells[1]]};
    }
  }

  bool key_exists(const std::string& key) const {
    if (keys_.count(key)) return true;
    const auto dot = key.find('.');
    return dot != std::string::npos && open_sections_.count(key.substr(0, dot)) > 0;
  }

  // Recipe names, keys and presets mentioned anywhere in the editions.
  void mentions() {
    for (const auto& e : x_.entities) {
      if (auto it = e.facts.find("recipe"); it != e.facts.end())
        for (const auto& name : it->second) {
          if (name.find_first_of("*{}<>") != std::string::npos || exported_.count(name)) continue;
          add(DriftKind::MissingRecipe, name, "", name, e.prov, "", "", "named in the text; no recipe of this name is exported");
        }
      std::set<std::string> keys;
      if (auto it = e.facts.find("config_key"); it != e.facts.end()) keys.insert(it->second.begin(), it->second.end());
      std::map<std::string, std::string> overrides;
      if (auto it = e.facts.find("override"); it != e.facts.end())
        for (const auto& kv : it->second) {
          const auto eq = kv.find('=');
          if (eq == std::string::npos) continue;
          overrides[kv.substr(0, eq)] = kv.substr(eq + 1);
          keys.insert(kv.substr(0, eq));
        }
      for (const auto& key : keys) {
        const auto dot = key.find('.');
        if (dot == std::string::npos || key_exists(key)) continue;
        if (!sections_.count(key.substr(0, dot)) || !open_sections_.count(key.substr(0, dot)))
          add(DriftKind::UnknownKey, key, "", key, e.prov, "", "",
              sections_.count(key.substr(0, dot)) ? "no such field in the ConfigContainer"
                                                  : "no ConfigContainer section '" + key.substr(0, dot) + "'");
      }
      for (const auto& [key, value] : overrides)
        if (auto it = overwritten_.find(key); it != overwritten_.end())
          add(DriftKind::OverwrittenKey, key, "", key + "=" + value, e.prov, std::get<0>(it->second), std::get<1>(it->second),
              "the runner sets it after the overrides: " + std::get<2>(it->second));
      if (auto it = e.facts.find("dataset"); it != e.facts.end() && !preset_modes_.empty())
        for (const auto& preset : it->second)
          if (!preset_modes_.count(preset))
            add(DriftKind::Dataset, preset, "", preset, e.prov, "", "", "the launcher offers no such --dataset preset");
    }
  }

  const Extracted& x_;
  const CodeSnapshot& s_;
  std::map<std::string, const CodeRecipe*> library_, benchmark_;
  std::set<std::string> exported_;
  std::set<std::tuple<std::string, int, std::string>> named_;  // (lang, revision, recipe) a non-pattern row of that edition names
  std::map<std::string, std::string> task_of_mode_;
  std::set<std::string> sections_, open_sections_;
  std::map<std::string, std::string> keys_;                                               // key → where it is defined
  std::map<std::string, std::tuple<std::string, std::string, std::string>> overwritten_;  // key → (value, at, step doc)
  std::map<std::string, std::set<std::string>> preset_modes_;
  std::vector<Drift> out_;
};

}  // namespace

std::vector<Drift> find_drift(const Extracted& x, const Resolved& /*r*/, const CodeFacts& code, const Vocab& /*v*/) {
  const CodeSnapshot* s = code.newest();
  if (!s) return {};
  return DriftFinder(x, *s).run();
}

}  // namespace kb
