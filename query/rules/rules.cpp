// The sizing rules' arithmetic (see rules.hpp). Each rule reads only the
// numbers it states; a number that is not known gives `unknown`, never a
// guess, and no rule divides by a size it has not checked to be positive.
#include "query/rules/rules.hpp"

#include <algorithm>

namespace kbq {

namespace {

std::string n(long long v) { return std::to_string(v); }

// A verdict's number and its text.
VerdictValue num(const char* name, long long v) { return {name, v, n(v)}; }
// A number that does not exist or is not known, printed as `shown`.
VerdictValue none(const char* name, const char* shown) { return {name, std::monostate{}, shown}; }
// A whole quotient, or none ("—").
VerdictValue quotient(const char* name, bool whole, long long v) { return whole ? num(name, v) : none(name, "—"); }

VerdictValue divisors(const char* name, long long v) {
  std::vector<long long> ds;
  std::string text;
  for (long long d = 1; d <= v && d <= 1024; ++d)
    if (v % d == 0) {
      ds.push_back(d);
      text += (text.empty() ? "" : ", ") + n(d);
    }
  return {name, std::move(ds), std::move(text)};
}

using Vars = std::vector<VerdictValue>;

// Every rule, in the documents' order, handed to `add` with its status and
// a function that makes its numbers: the layout search asks only whether
// one fails and never pays for them (rules_pass).
template <typename Add>
void each_rule(const RuleInput& in, Add&& add) {
  const long long tp = std::max(1LL, in.tp), pp = std::max(1LL, in.pp), cp = std::max(1LL, in.cp), ep = std::max(1LL, in.ep),
                  etp = std::max(1LL, in.etp);
  // 1. TP divides the KV heads (GQA).
  if (in.kv_heads <= 0)
    add("tp_divides_kv_heads", Status::Unknown, [&] { return Vars{num("tp", tp)}; });
  else
    add("tp_divides_kv_heads", in.kv_heads % tp == 0 ? Status::Pass : Status::Fail, [&] {
      return Vars{num("tp", tp), num("kv_heads", in.kv_heads), divisors("valid", in.kv_heads)};
    });
  // 2. TP within one NVLink domain.
  if (in.nvlink <= 0)
    add("tp_within_nvlink", Status::Unknown, [&] { return Vars{num("tp", tp)}; });
  else
    add("tp_within_nvlink", tp <= in.nvlink ? Status::Pass : Status::Fail, [&] { return Vars{num("tp", tp), num("nvlink", in.nvlink)}; });
  // 3. SP whenever TP > 1.
  add("sp_when_tp", tp == 1 || in.sp ? Status::Pass : Status::Fail, [&] { return Vars{num("tp", tp)}; });
  // 4. CP for long context.
  if (in.seq > in.threshold && in.threshold > 0)
    add("cp_for_long_context", cp > 1 ? Status::Pass : Status::Fail, [&] {
      return Vars{num("seq", in.seq), num("threshold", in.threshold), num("cp", cp)};
    });
  else if (in.seq > 0)
    // Not a long context: no CP needed (a CP the plan sets then splits
    // activations for memory), said as such, never as "long context".
    add(
        "cp_for_long_context", Status::Pass,
        [&] {
          return Vars{num("seq", in.seq), num("threshold", in.threshold), num("cp", cp)};
        },
        "short");
  else
    add("cp_for_long_context", Status::Unknown, [&] { return Vars{none("seq", "?"), num("threshold", in.threshold), num("cp", cp)}; });
  // 5. World size divisible by the dense mesh, and by the expert mesh for MoE.
  const long long dense = tp * pp * cp, expert = pp * ep * etp;
  const bool dense_ok = whole_meshes(in.world, dense);
  const bool expert_ok = !in.moe || whole_meshes(in.world, expert);
  add("world_size_divisible", dense_ok && expert_ok ? Status::Pass : Status::Fail, [&] {
    return Vars{num("world", in.world), num("dense", dense), quotient("dp", dense_ok, dense_ok ? in.world / dense : 0),
                num("expert", expert), quotient("edp", in.moe && expert_ok, in.moe && expert_ok ? in.world / expert : 0)};
  });
  // 6. Experts divisible by EP (MoE).
  if (in.moe) {
    if (in.experts <= 0)
      add("experts_divisible_by_ep", Status::Unknown, [&] { return Vars{num("ep", ep)}; });
    else
      add("experts_divisible_by_ep", in.experts % ep == 0 ? Status::Pass : Status::Fail, [&] {
        return Vars{num("ep", ep), num("experts", in.experts), quotient("per_rank", in.experts % ep == 0, in.experts / ep)};
      });
  }
  // 7. Layers divisible by PP (and by PP × VP with a virtual pipeline).
  // The embedding and the loss count as layers when the recipe says so.
  const long long stages = pp * std::max(1LL, in.vp);
  const long long split = in.layers + in.split_extra;
  // The layers as the words print them: "32+1" with the embedding or loss counted.
  const auto layers = [&] {
    VerdictValue v = num("layers", in.layers);
    if (in.split_extra > 0) v.text += "+" + n(in.split_extra);
    return v;
  };
  const auto extra = [&](Vars v) {
    if (in.split_extra > 0) v.push_back(num("split_extra", in.split_extra));
    return v;
  };
  if (in.layers <= 0)
    add("layers_divisible_by_pp", Status::Unknown, [&] { return Vars{num("pp", pp)}; });
  else if (in.layout_pairs && !in.layout_pairs->empty())
    // The launcher rebuilds the layout with the recipe's builder after a PP
    // or VP override; the builder raises for a pair its map lacks.
    add(
        "layers_divisible_by_pp",
        std::binary_search(in.layout_pairs->begin(), in.layout_pairs->end(), std::make_pair(pp, std::max(1LL, in.vp))) ? Status::Pass
                                                                                                                       : Status::Fail,
        [&] {
          std::string known;
          std::size_t shown = 0;  // a long map is cut: its first pairs say what kind it is
          for (const auto& [p, v] : *in.layout_pairs) {
            if (++shown > 12) {
              known += ", …";
              break;
            }
            known += (known.empty() ? "" : ", ") + n(p) + "/" + n(v);
          }
          return Vars{num("pp", pp), num("vp", std::max(1LL, in.vp)), VerdictValue{"pairs", std::monostate{}, known}};
        },
        "builder");
  else if (in.layout_pp > 0 && (pp != in.layout_pp || std::max(1LL, in.vp) != std::max(1LL, in.layout_vp)))
    // Another PP or VP than the recipe's layout is written for: the launcher
    // rebuilds the layout with the recipe's builder, which raises for a pair
    // its map lacks (scripts/training/recipe_runner.py sync_model_pipeline_layout).
    add(
        "layers_divisible_by_pp", Status::Unknown,
        [&] {
          return Vars{num("pp", pp), num("vp", std::max(1LL, in.vp)), num("own_pp", in.layout_pp),
                      num("own_vp", std::max(1LL, in.layout_vp))};
        },
        "rebuilt");
  else if (in.stage_layout)
    add("layers_divisible_by_pp", Status::Pass, [&] { return extra({num("pp", pp), layers(), none("per_stage", "—")}); });
  else
    add("layers_divisible_by_pp", split % stages == 0 ? Status::Pass : Status::Fail, [&] {
      return extra({num("pp", stages), layers(), quotient("per_stage", split % stages == 0, split / stages)});
    });
  // 8. A virtual pipeline needs a pipeline: Megatron Core's
  // initialize_model_parallel refuses VP on fewer than 2 stages (said only
  // where a VP is set, as kbq check's PP 1 under a recipe's VP).
  if (in.vp > 0) add("vp_needs_pp", pp >= 2 ? Status::Pass : Status::Fail, [&] { return Vars{num("vp", in.vp), num("pp", pp)}; });
}

}  // namespace

RuleInput rule_input(const RuleModel& m, long long nvlink, bool moe, long long threshold) {
  RuleInput in;
  in.threshold = threshold;
  in.kv_heads = m.kv_heads;
  in.heads = m.heads;
  in.layers = m.layers;
  in.split_extra = m.split_extra;
  in.experts = m.experts;
  in.nvlink = nvlink;
  in.moe = moe;
  in.stage_layout = m.stage_layout;
  in.layout_pp = m.layout_pp;
  in.layout_vp = m.layout_vp;
  in.layout_pairs = &m.layout_pairs;
  return in;
}

std::vector<RuleOutcome> evaluate_rules(const RuleInput& in) {
  std::vector<RuleOutcome> out;
  each_rule(in, [&](const char* check, Status s, auto&& numbers, const char* variant = "") {
    out.push_back({check, s, numbers(), variant});
  });
  return out;
}

bool rules_pass(const RuleInput& in) {
  bool ok = true;
  each_rule(in, [&](const char*, Status s, auto&&, const char* = "") { ok = ok && s != Status::Fail; });
  return ok;
}

}  // namespace kbq
