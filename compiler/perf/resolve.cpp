// Resolve for the performance pages (see perf.hpp). Rows are grouped by
// configuration (model with its qualifier, task, GPU type and count,
// precision, sequence: PerfRow::config):
//   - the same release and global batch in two editions (the archive of a
//     newer snapshot repeats the newest page of an older one): the newer
//     edition's row wins, the older is a copy; values that differ are a
//     conflict for kbc lint;
//   - the newest release's rows of a configuration are current; an older
//     release's rows are superseded by them and stay as history.
// The current row of each configuration is then matched to the benchmark
// recipe of the newest code snapshot that runs it (<model>_<task>_<N>gpu_
// <gpu>_<precision>_config, read from the parsed names, not rebuilt as a
// string), and its layout compared with that recipe's facts: drift.
#include <algorithm>
#include <map>
#include <tuple>

#include "compiler/perf/perf.hpp"

namespace kb {

namespace {

std::string show(const std::optional<long long>& v) { return v ? std::to_string(*v) : std::string("n/a"); }

// A row by its index (rows point at each other with int indices).
PerfRow& row(PerfCompiled& p, int i) { return p.rows[static_cast<size_t>(i)]; }
const PerfRow& row(const PerfCompiled& p, int i) { return p.rows[static_cast<size_t>(i)]; }

// A dimension the table leaves unset ("n/a") or sets to 1 runs without it.
long long dim(const std::optional<long long>& v) { return v.value_or(1); }

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// Newer first: release, then edition.
bool newer(const PerfRow& a, const PerfRow& b) { return std::tie(a.release_key, a.edition) > std::tie(b.release_key, b.edition); }

void compare_copies(PerfCompiled& p, int older, int newer_row) {
  const PerfRow& o = row(p, older);
  const PerfRow& n = row(p, newer_row);
  auto diff = [&](const char* field, const std::string& a, const std::string& b) {
    if (a != b) p.conflicts.push_back({older, newer_row, field, a, b});
  };
  diff("tokens", number(o.tokens), number(n.tokens));
  diff("tflops", number(o.tflops), number(n.tflops));
  diff("mbs", std::to_string(o.mbs), std::to_string(n.mbs));
  diff("fsdp", show(o.fsdp), show(n.fsdp));
  diff("tp", show(o.tp), show(n.tp));
  diff("pp", show(o.pp), show(n.pp));
  diff("cp", show(o.cp), show(n.cp));
  diff("vp", show(o.vp), show(n.vp));
  diff("ep", show(o.ep), show(n.ep));
  diff("ga", show(o.ga), show(n.ga));
}

}  // namespace

void resolve_perf(PerfCompiled& p, const CodeFacts& code) {
  std::map<std::string, std::vector<int>> by_config;
  for (size_t i = 0; i < p.rows.size(); ++i) by_config[p.rows[i].config()].push_back(static_cast<int>(i));
  for (auto& [config, idx] : by_config) {
    std::stable_sort(idx.begin(), idx.end(), [&](int a, int b) { return newer(row(p, a), row(p, b)); });
    const PerfRow& top = row(p, idx.front());  // the newest release, in its newest edition
    for (int i : idx) {
      PerfRow& r = row(p, i);
      // The same release and batch in a newer edition: this row is an older copy of it.
      int copy_of = -1;
      for (int j : idx)
        if (row(p, j).release_key == r.release_key && row(p, j).gbs == r.gbs && row(p, j).edition > r.edition &&
            (copy_of < 0 || row(p, j).edition > row(p, copy_of).edition))
          copy_of = j;
      if (copy_of >= 0) {
        r.status = PerfStatus::Copy;
        compare_copies(p, i, copy_of);
      } else {
        r.status = r.release_key == top.release_key && r.edition == top.edition ? PerfStatus::Current : PerfStatus::Superseded;
      }
    }
    // Each row points at the current row of its configuration: the one with its batch, else the first.
    for (int i : idx) {
      PerfRow& r = row(p, i);
      r.winner = -1;
      for (int j : idx)
        if (row(p, j).status == PerfStatus::Current && (r.winner < 0 || row(p, j).gbs == r.gbs)) r.winner = j;
      if (r.status == PerfStatus::Current) r.winner = i;
    }
  }

  const CodeSnapshot* snap = code.newest();
  if (!snap) return;
  // The benchmark recipes by the parts of their names.
  std::map<std::tuple<std::string, std::string, std::string, std::string, std::string>, const CodeRecipe*> runs;
  for (const auto& r : snap->recipes)
    if (r.kind == RecipeKind::Benchmark && r.variant.empty() && !r.model.empty())
      runs.emplace(std::make_tuple(r.model, r.task, r.gpus, r.hardware, r.precision), &r);
  for (size_t i = 0; i < p.rows.size(); ++i) {
    PerfRow& row = p.rows[i];
    if (auto it = runs.find({row.recipe_model, row.task, std::to_string(row.gpus), row.gpu, row.precision}); it != runs.end())
      row.recipe = it->second->name;
    // The architecture: one benchmark recipe per model and task (the first by name), so that every
    // row of a model maps its architecture from the same facts (and kbq maps each model once).
    const CodeRecipe* arch = nullptr;
    for (const auto& r : snap->recipes) {
      if (r.kind != RecipeKind::Benchmark || r.model != row.recipe_model) continue;
      const int rank = (r.task == row.task ? 0 : 2) + (r.variant.empty() ? 0 : 1);
      const int best_rank = arch ? (arch->task == row.task ? 0 : 2) + (arch->variant.empty() ? 0 : 1) : 99;
      if (rank < best_rank) arch = &r;  // the recipes are sorted by name: the first of the best rank
    }
    row.arch_recipe = arch ? arch->name : std::string{};
    if (row.status != PerfStatus::Current) continue;
    if (row.recipe.empty()) {
      p.drift.push_back({static_cast<int>(i), "",
                         row.recipe_model + " " + row.task + " on " + std::to_string(row.gpus) + " " + row.gpu + " " + row.precision, "",
                         "", "no benchmark recipe of the code runs this measured configuration"});
      continue;
    }
    const CodeRecipe& rc = *runs.at({row.recipe_model, row.task, std::to_string(row.gpus), row.gpu, row.precision});
    struct Check {
      const char* field;
      const char* fact;
      long long table;
      bool unset_is_one;
    };
    const Check checks[] = {{"tp", "tp", dim(row.tp), true},
                            {"pp", "pp", dim(row.pp), true},
                            {"cp", "cp", dim(row.cp), true},
                            {"vp", "vp", dim(row.vp), true},
                            {"ep", "ep", dim(row.ep), true},
                            {"mbs", "micro_batch_size", row.mbs, false},
                            {"gbs", "global_batch_size", row.gbs, false},
                            {"seq", "seq_length", row.seq, false}};
    for (const auto& c : checks) {
      const CodeFact* f = snap->fact(rc, c.fact);
      if (!f) continue;
      std::optional<long long> v = fact_int(f);
      if (!v && c.unset_is_one && fact_text(f) && fact_text(f)->empty()) v = 1;  // None: not used
      if (!v) continue;
      if (*v != c.table)
        p.drift.push_back({static_cast<int>(i), c.field, std::to_string(c.table), std::to_string(*v), snap->cite(f->at),
                           "the table measured a layout the recipe " + rc.name + " no longer sets"});
    }
  }
}

std::vector<std::string> perf_lint_lines(const PerfCompiled& p) {
  std::vector<std::string> out;
  auto loc = [&](int i) { return row(p, i).file + ":" + std::to_string(row(p, i).line); };
  auto what = [&](int i) {
    const PerfRow& r = row(p, i);
    return r.model_written + " " + r.task + " " + std::to_string(r.gpus) + " " + r.gpu + " " + r.precision + " (release " + r.release + ")";
  };
  for (const auto& c : p.conflicts)
    out.push_back(loc(c.older) + ": perf-conflict: " + what(c.older) + " " + c.field + ": '" + c.older_value + "' (edition " +
                  row(p, c.older).commit + ") -> '" + c.newer_value + "' (edition " + row(p, c.newer).commit + ", " + loc(c.newer) +
                  ", wins)");
  for (const auto& d : p.drift) {
    if (d.field.empty())
      out.push_back(loc(d.row) + ": drift: perf-recipe " + what(d.row) + ": " + d.note);
    else
      out.push_back(loc(d.row) + ": drift: perf-layout " + row(p, d.row).recipe + " " + d.field + ": table '" + d.table_value +
                    "' (release " + row(p, d.row).release + ") -> code '" + d.code_value + "' (" + d.code_at + ")");
  }
  return out;
}

}  // namespace kb
