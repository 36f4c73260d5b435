// The layout planner (private to the engine): a recipe on the user's GPUs.
// It starts from the recipe's own layout in the code and changes as little
// as possible: the micro batch first on OOM (the skill's advice), then one
// parallel size, then two, ... in the order data/planner.tsv `change_order`
// gives (EP before TP for MoE memory, TP within the NVLink domain before PP,
// CP for long sequences). A layout is kept only when every sizing rule
// passes (query/check/rules.hpp) and the memory model (query/memory) says it
// fits the GPU; a shape the memory model cannot size, when it sizes the
// recipe, is not offered. PP values are those the rules accept: the divisors
// of the layers plus the embedding and loss when the recipe counts them in
// the split (account_for_*_in_pipeline_split), or a layout builder's map.
// The fewest changes win, then the smallest steps, then the lowest memory
// per GPU.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "query/kb/snapshot.hpp"
#include "query/memory/from_facts.hpp"
#include "query/rules/rules.hpp"

namespace kbq {

// What the memory model and the rules need of one recipe, read once.
struct Sizing {
  bool sized = false;   // the memory model can size it
  std::string why_not;  // when not: why (no model facts, an input it refuses)
  memory::Architecture arch;
  memory::Training training;             // at the recipe's own sequence and batch
  memory::Layout base;                   // the recipe's layout (stage sizes, pipeline layout)
  std::vector<std::string> assumptions;  // what the facts left open
  RuleModel rules;                       // what the sizing rules read of the model (layers, heads, experts, stages)
  // The recipe sets model.pipeline_model_parallel_layout: the planner keeps
  // its PP and VP. The runner keeps a set layout under a new PP, or rebuilds
  // it with the recipe's layout builder, which raises for a (PP, VP) outside
  // its own map (scripts/training/recipe_runner.py sync_model_pipeline_layout).
  bool pipeline_layout = false;
  // PP and VP stay as the recipe has them when no other pair is known to
  // work: a pinned layout, or a builder map (which may not hold PP 1).
  bool keeps_pipeline() const { return pipeline_layout || !rules.layout_pairs.empty(); }
};
// The one sizing pass of a recipe: its facts and model mapped for the memory
// model and the rules. The check stage reads the result, never sizes again.
Sizing size_recipe(const RecipeData& d);

// The sizes of one layout.
struct Shape {
  long long tp = 1, pp = 1, vp = 0, cp = 1, ep = 1, etp = 1, mbs = 1;  // vp 0 = no virtual pipeline
  bool operator==(const Shape&) const = default;
  // The size of one dimension.
  long long& at(Dim d) {
    switch (d) {
      case Dim::TP:
        return tp;
      case Dim::PP:
        return pp;
      case Dim::CP:
        return cp;
      case Dim::EP:
        return ep;
      case Dim::ETP:
        return etp;
      case Dim::VP:
        break;
    }
    return vp;
  }
  long long at(Dim d) const { return const_cast<Shape&>(*this).at(d); }
};

// A layout placed on a world size: whether it fits and passes the rules.
struct Placement {
  Shape shape;
  long long world = 0;
  bool fits = false;          // memory and rules
  bool rules_ok = false;      // the rules alone
  bool sized = false;         // the memory model gave an estimate
  memory::Estimate estimate;  // when sized
  int changes = 0;            // sizes changed from the recipe's own (micro batch included)
};

struct KeptPlacements;  // place()'s results kept for one recipe's sizing (below)

struct SearchInput {
  const Sizing* sizing = nullptr;
  Shape start;          // the recipe's own sizes (CP already raised for a longer sequence)
  std::set<Dim> fixed;  // sizes the user set: never changed
  bool mbs_fixed = false;
  const Gpu* gpu = nullptr;
  long long seq = 0;        // the sequence the job trains with
  long long gbs = 0;        // global batch (pipeline in-flight micro batches)
  long long threshold = 0;  // long-context threshold
  long long cp_min = 1;     // CP the sequence asks for: kept when a layout on the world can (see place)
  bool moe = false;
  std::vector<Dim> change_order;  // which size to change first (data/planner.tsv)
  // The recipe's own layout on its own GPUs (the count and hardware its
  // code states) is trusted within the memory model's error: the code
  // wins for what runs (data/planner.tsv own_layout_tolerance).
  long long own_world = 0;
  double own_tolerance = 0;
  // A layout the planner changed, sized above this share of the GPU's
  // memory, is within the memory model's error of the limit: one under it
  // is preferred, even with more changes (data/planner.tsv
  // memory_headroom; 0: off).
  double headroom = 0;
  const memory::Params* params = nullptr;
  // place()'s results so far, when the sizing is a recipe's own (Sizings
  // keeps them); none: every call searches.
  KeptPlacements* placed = nullptr;
};

class Sizings;

// Placements searched with one kept sizing, by the rest of the search input
// and the world; `sizings` keeps them all (Sizings::keep).
struct KeptPlacements {
  std::map<std::string, std::optional<Placement>, std::less<>> by_input;
  Sizings* sizings = nullptr;
};

// The memory model and the rules on one layout.
Placement evaluate(const SearchInput& in, const Shape& s, long long world);

// The best placement on exactly `world` GPUs, or none. With `memory` off,
// a layout only has to pass the rules (what a job that does not fit would
// run with, to show how much memory it needs).
std::optional<Placement> place(const SearchInput& in, long long world, bool memory = true);

// The sizings of recipes, each computed once: an engine keeps one across
// its answers (a --batch plans the same recipes for question after
// question). Keyed by everything size_recipe reads: the recipe's name,
// function, model, GPU floor and kind (its facts are its function's, its
// model row its model's), and the facts an override replaced.
// Each also keeps the placements searched with it (SearchInput::placed):
// the fewest-GPU searches of a batch's answers try the same worlds again.
class Sizings {
 public:
  struct Entry {
    Sizing sizing;
    KeptPlacements placed;
  };
  // The recipe's own sizing.
  Entry& of(const RecipeData& d);
  // Its sizing with some of its facts replaced by overrides (the memory
  // lever's model.recompute_granularity=full, which the alternatives of a
  // layout that does not fit plan, or a check's own): `replaced` names
  // them, field and value, in the order they were applied; `as_run` is
  // the recipe with them replaced. At most kb::limits::kMaxKeptSizings such
  // sizings are kept; past them, null (the caller sizes it afresh).
  Entry* of(const RecipeData& as_run, const std::vector<std::pair<std::string, std::string>>& replaced);
  // Keeps a search's result. When kb::limits::kMaxKeptPlacements are kept,
  // every kept search is forgotten first: a batch moves on from model to
  // model, and the newest searches are the ones its next answers repeat.
  void keep(KeptPlacements& in, std::string key, const std::optional<Placement>& found);

 private:
  Entry& entry(std::string key, const RecipeData& d);
  std::map<std::string, Entry, std::less<>> by_key_;
  std::size_t kept_ = 0;             // placements kept, every entry's together
  std::size_t kept_overridden_ = 0;  // entries with replaced facts
};

// The smallest world size in [from, limit] with a placement (world sizes a
// cluster has: powers of two and whole nodes), or 0.
long long min_world(const SearchInput& in, long long from, long long limit);

// How torchrun launches `world` ranks on nodes of `per_node` GPUs: nodes ×
// processes per node, equal on every node (torchrun starts nnodes ×
// nproc_per_node ranks). One node up to per_node; else the fewest nodes,
// when the world divides evenly over them (12 on nodes of 8: 2 × 6);
// nullopt when it does not (13 on nodes of 8).
struct LaunchShape {
  long long nodes = 1, nproc = 1;
};
std::optional<LaunchShape> launch_shape(long long world, long long per_node);
// The world a job asked on `world` GPUs runs on: that one when torchrun can
// start it evenly, else the largest below it that it can.
long long launched_world(long long world, long long per_node);

}  // namespace kbq
