// The floor under a recipe's parameter state (memory::state_floor,
// Recipe::state_floor) and what the ranking does with it (never_fits, the
// bound of the feasible criterion): no layout the memory model sizes is
// ever below it, kbc stores the floor the recipe's sizing gives, and a
// recipe said never to fit plans to a result that does not.
#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <variant>
#include <vector>

#include "query/check/check.hpp"
#include "query/kb/kb.hpp"
#include "query/memory/memory.hpp"
#include "query/plan/layout.hpp"
#include "query/plan/plan.hpp"
#include "query/rank/rank.hpp"
#include "query/stage.hpp"

namespace mem = kbq::memory;

namespace {

const std::string kKb = std::string(KB_BINARY_DIR) + "/kbq.sqlite";

// Every sized recipe's sizing, one per model and mode (the floor reads the
// architecture and training only).
struct Sized {
  kbq::Recipe recipe;
  kbq::Sizing sizing;
};
std::vector<Sized> sized_recipes(kbq::Kb& kb) {
  std::vector<Sized> out;
  std::set<std::string> seen;
  for (const auto kind : {kb::RecipeKind::Library, kb::RecipeKind::Benchmark})
    for (const auto& r : kb.catalog(kind).recipes) {
      if (!seen.insert(r.model_key + "|" + r.mode + "|" + r.precision).second) continue;
      kbq::Sizing s = kbq::size_recipe(kb.data_of(r));
      if (s.sized) out.push_back({r, std::move(s)});
    }
  return out;
}

}  // namespace

TEST_CASE("state floor: kbc stores the floor of every recipe's own sizing, 0 for one the model cannot size", "[memory][catalog]") {
  kbq::Kb kb(kKb);
  const mem::Params& params = kb.snapshot().memory;
  size_t sized = 0, unsized = 0;
  for (const auto kind : {kb::RecipeKind::Library, kb::RecipeKind::Benchmark})
    for (const auto& r : kb.catalog(kind).recipes) {
      INFO(r.name);
      const kbq::Sizing s = kbq::size_recipe(kb.data_of(r));
      if (s.sized) {
        ++sized;
        CHECK(r.state_floor == mem::state_floor(s.arch, s.training, params));
        CHECK(r.state_floor > 0);
      } else {
        ++unsized;
        CHECK(r.state_floor == 0);
      }
    }
  CHECK(sized > 800);
  CHECK(unsized > 0);
}

TEST_CASE("state floor: no layout of any world is sized below it", "[memory]") {
  kbq::Kb kb(kKb);
  const mem::Params& params = kb.snapshot().memory;
  const std::vector<Sized> all = sized_recipes(kb);
  REQUIRE(all.size() > 100);
  size_t compared = 0, tight = 0;
  for (const Sized& one : all) {
    INFO(one.recipe.name);
    const mem::Architecture& a = one.sizing.arch;
    const mem::Layout base = one.sizing.base;
    // The optimizer and gradient settings the planner never changes, and
    // those it could meet in another recipe of the model: each its own floor.
    std::vector<mem::Training> trainings{one.sizing.training};
    for (const bool fsdp : {false, true})
      for (const bool dist : {false, true}) {
        mem::Training t = one.sizing.training;
        t.fsdp = fsdp;
        t.distributed_optimizer = dist;
        t.recompute = mem::Recompute::kFull;
        t.seq_length = 1024;
        trainings.push_back(t);
      }
    for (const mem::Training& t : trainings) {
      const double floor = mem::state_floor(a, t, params);
      REQUIRE(floor > 0);
      for (const long long world : {1LL, 8LL, 64LL, 512LL})
        for (const long long tp : {1LL, 2LL, 8LL})
          for (const long long pp : {1LL, 2LL, 4LL, 16LL})
            for (const long long ep : {1LL, 8LL, 64LL})
              for (const long long vp : {1LL, 2LL})
                for (const bool keep_stages : {false, true}) {
                  mem::Layout l = base;
                  l.world = world;
                  l.tp = tp;
                  l.pp = pp;
                  l.ep = a.experts > 0 ? ep : 1;
                  l.etp = 1;
                  l.cp = 1;
                  l.vp = pp > 1 ? vp : 1;
                  l.sp = tp > 1;
                  if (!keep_stages || l.pp != base.pp) l.first_stage_layers = l.last_stage_layers = 0;
                  if (!keep_stages) l.embedding_in_split = l.loss_in_split = false;
                  const auto e = mem::estimate(a, l, t, params);
                  if (!std::holds_alternative<mem::Estimate>(e)) continue;
                  const double total = std::get<mem::Estimate>(e).total;
                  const double least = mem::total_floor(floor, world, params);
                  INFO("world " << world << " TP " << tp << " PP " << pp << " EP " << l.ep << " VP " << l.vp);
                  CHECK(total >= least);
                  ++compared;
                  if (least > 0.5 * total) ++tight;
                }
    }
  }
  CHECK(compared > 10000);
  CHECK(tight > 0);  // a floor that never comes near an estimate would prune nothing
}

TEST_CASE("state floor: a world of fewer GPUs, a larger one, no floor", "[memory]") {
  kbq::Kb kb(kKb);
  const mem::Params& params = kb.snapshot().memory;
  CHECK(mem::total_floor(0, 8, params) == 0);
  CHECK(mem::total_floor(1e12, 0, params) == 0);
  const double fixed = (params.cuda_context_gib + params.nccl_buffers_gib) * mem::kBytesPerGiB;
  CHECK(mem::total_floor(8e11, 8, params) == Approx(1e11 * (1 + params.allocator_fragmentation) + fixed));
  CHECK(mem::total_floor(8e11, 4, params) > mem::total_floor(8e11, 8, params));
}

// Through the planner: every library recipe, asked on counts and GPU types
// where its floor says it cannot fit (never_fits, what the ranking's bound
// reads), plans to a result that does not fit there; and the floor leaves
// most recipes to the plan on a count they fit.
TEST_CASE("state floor: a recipe said never to fit plans to a result that does not fit", "[memory][ranking]") {
  kbq::Kb kb(kKb);
  const kbq::Context c{kb.snapshot(), kb.labels("en"), kb.cited_texts("en"), "en"};
  size_t never = 0, planned_fit = 0;
  for (const auto& r : kb.catalog(kb::RecipeKind::Library).recipes)
    for (const long long gpus : {1LL, 2LL, 8LL, 16LL, 64LL})
      for (const std::string hw : {"", "h100", "gb200", "a100_40gb"}) {
        kbq::Ask ask;
        ask.mode = r.mode;
        ask.gpus = gpus;
        ask.hardware = hw;
        ask.hardware_assumed = hw.empty();
        if (!kbq::never_fits(c, r, ask)) continue;
        ++never;
        if (never % 7 != 1) continue;  // a sample: a plan searches every layout
        INFO(r.name << " on " << gpus << " x " << (hw.empty() ? "the default GPU" : hw));
        const kbq::Planned p =
            kbq::plan_recipe(c, kb.data_of(r), ask, false, kbq::Fewest::Later, nullptr, kbq::Command::Later);  // as plan_shown
        CHECK_FALSE(p.result.runnable);
        if (p.result.runnable) ++planned_fit;
      }
  CHECK(never > 500);
  CHECK(planned_fit == 0);
  // Overridden sizes, or the recipe's own count within the GPUs asked: the plan decides.
  const auto big = kb.recipe("llama3_70b_sft_config");
  REQUIRE(big);
  kbq::Ask ask;
  ask.gpus = 1;
  CHECK(kbq::never_fits(c, *big, ask));
  ask.fixed.emplace_back("model.tensor_model_parallel_size", "1");
  CHECK_FALSE(kbq::never_fits(c, *big, ask));
  ask.fixed.clear();
  ask.gpus = *big->native_gpus;
  CHECK_FALSE(kbq::never_fits(c, *big, ask));
}

// The invariant the engine plans by (engine.cpp plan_shown): a candidate's
// planned result never ranks before its bound, whatever the bound foresees
// (the state floor's "does not fit", the GPUs it runs on, a layout that
// must change). Every library recipe of each mode, on counts torchrun can
// and cannot start on a node (12 and 13 on nodes of 8), on GPUs of several
// memories, a sample planned.
TEST_CASE("bound: no planned result ranks before the bound of its candidate", "[ranking]") {
  kbq::Kb kb(kKb);
  const kbq::Context c{kb.snapshot(), kb.labels("en"), kb.cited_texts("en"), "en"};
  size_t planned = 0, foreseen = 0, n = 0;
  for (const auto& r : kb.catalog(kb::RecipeKind::Library).recipes)
    for (const long long gpus : {1LL, 8LL, 12LL, 13LL, 64LL})
      for (const std::string hw : {"", "gb200", "a100_40gb"}) {
        if (++n % 11 != 0) continue;  // a sample: a plan searches every layout
        kbq::Ask ask;
        ask.mode = r.mode;
        ask.gpus = gpus;
        ask.hardware = hw;
        ask.hardware_assumed = hw.empty();
        const kbq::QuickRefPicks picks = kbq::quick_ref_picks(kb.quick_ref_rows(), ask);
        const auto bound = kbq::bound(c, ask, picks, r, false);
        kbq::Planned p = kbq::plan_recipe(c, kb.data_of(r), ask, false, kbq::Fewest::Later, nullptr, kbq::Command::Later);  // as plan_shown
        kbq::check_verdicts(c, p.model, p.result);
        const auto parts = kbq::score_parts(c, ask, picks, p.result);
        std::string keys;
        for (size_t i = 0; i < parts.size() && i < bound.size(); ++i)
          keys += parts[i].name + " " + std::to_string(parts[i].points) + "/" + std::to_string(bound[i].points) + "; ";
        INFO(r.name << " on " << gpus << " x " << (hw.empty() ? "the default GPU" : hw) << ": planned/bound " << keys);
        CHECK_FALSE(kbq::ranks_before(parts, r.name, bound, r.name));
        const kbq::Foreseen f = kbq::foresee(c, r, ask);
        CHECK(f.world == p.result.layout.gpus);
        if (f.never_fits || f.changes_layout || kbq::own_count(r) != f.world) ++foreseen;
        ++planned;
      }
  CHECK(planned > 500);
  CHECK(foreseen > planned / 4);  // the bound foresees something for many of them
}
