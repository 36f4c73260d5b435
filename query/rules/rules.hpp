// The sizing rules' arithmetic, once: the planner's layout search keeps only
// layouts that pass them, and the check stage reports each verdict with its
// numbers. Which documented rule a check enforces, and the words of its
// verdict, are data (data/checks.tsv, data/answer-labels.tsv `rule.*`).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "query/kbq.hpp"

namespace kbq {

// What the rules read of the model and the recipe, from its sizing
// (query/plan/layout.hpp size_recipe): computed once per planned recipe, read
// by the layout search and by the check stage.
struct RuleModel {
  long long kv_heads = 0;     // 0 = not a plain count (MLA) or unknown
  long long heads = 0;        // attention heads, 0 = unknown
  long long layers = 0;       // decoder layers, 0 = unknown
  long long split_extra = 0;  // the embedding and/or the loss counted as layers in the pipeline split (0-2)
  long long experts = 0;      // routed experts, 0 = dense
  bool stage_layout = false;  // the recipe sets its own pipeline layout or stage sizes
  // A pipeline layout the recipe sets: the PP and VP it is written for (0 = none).
  long long layout_pp = 0, layout_vp = 0;
  // The (PP, VP) pairs the recipe's layout builder has a layout for (VP 1 =
  // none), sorted; empty when the recipe has no builder or it is not known.
  std::vector<std::pair<long long, long long>> layout_pairs;
};

// What the rules read of a layout and the model.
struct RuleInput {
  long long world = 1;
  long long tp = 1, pp = 1, vp = 0, cp = 1, ep = 1, etp = 1;
  bool sp = false;
  long long seq = 0;          // sequence length in tokens (0 = unknown)
  long long threshold = 0;    // long-context threshold (data/planner.tsv)
  long long kv_heads = 0;     // 0 = not a plain count (MLA) or unknown
  long long heads = 0;        // attention heads, 0 = unknown
  long long layers = 0;       // decoder layers, 0 = unknown
  long long split_extra = 0;  // the embedding and/or the loss counted as layers in the pipeline split (0-2)
  long long experts = 0;      // routed experts, 0 = dense
  long long nvlink = 0;       // GPUs in one NVLink domain, 0 = unknown hardware
  bool moe = false;
  bool stage_layout = false;               // the recipe sets its own pipeline layout or stage sizes (uneven stages are fine)
  long long layout_pp = 0, layout_vp = 0;  // the PP and VP of the pipeline layout the recipe sets (0 = none)
  const std::vector<std::pair<long long, long long>>* layout_pairs = nullptr;  // RuleModel::layout_pairs
};

// The model's part of a rule input (the layout's sizes are the caller's).
RuleInput rule_input(const RuleModel& m, long long nvlink, bool moe, long long threshold);

// One rule's outcome: its check id (data/checks.tsv), its status and the
// numbers it compared, each with the text a label fills in
// (`rule.<check>.<status>` with {name} fields).
struct RuleOutcome {
  std::string check;
  Status status = Status::Unknown;
  std::vector<VerdictValue> numbers;
  std::string variant;  // the wording, when a status has more than one: label rule.<check>.<status>_<variant>
};

// Every sizing rule on a layout, in the documents' order.
std::vector<RuleOutcome> evaluate_rules(const RuleInput& in);

// True when no rule fails (unknown is not a failure).
bool rules_pass(const RuleInput& in);

// Rule 5, world_size_divisible: the world is a whole number of dense
// meshes (TP × PP × CP), and for MoE of expert meshes (PP × EP × ETP),
// each size below 1 read as 1. A size that does not divide the world fails
// it in any layout (the layout search leaves such sizes out).
inline bool whole_meshes(long long world, long long mesh) { return world >= mesh && world % mesh == 0; }
inline bool world_divisible(long long world, long long dense, long long expert, bool moe) {
  return whole_meshes(world, dense) && (!moe || whole_meshes(world, expert));
}
inline bool size_divides_world(long long world, long long size) { return size <= 1 || whole_meshes(world, size); }

}  // namespace kbq
