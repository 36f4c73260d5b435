// The sizing rules' arithmetic (see rules.hpp). Each rule reads only the
// numbers it states; a number that is not known gives `unknown`, never a
// guess, and no rule divides by a size it has not checked to be positive.
#include "query/rules/rules.hpp"

#include <algorithm>

namespace kbq {

namespace {

std::string n(long long v) { return std::to_string(v); }

std::string divisors(long long v) {
  std::string out;
  for (long long d = 1; d <= v && d <= 1024; ++d)
    if (v % d == 0) out += (out.empty() ? "" : ", ") + n(d);
  return out;
}

using Vars = std::vector<std::pair<std::string, std::string>>;

// Every rule, in the documents' order, handed to `add` with its status and
// a function that makes its numbers' text: the layout search asks only
// whether one fails and never pays for the text (rules_pass).
template <typename Add>
void each_rule(const RuleInput& in, Add&& add) {
  const long long tp = std::max(1LL, in.tp), pp = std::max(1LL, in.pp), cp = std::max(1LL, in.cp), ep = std::max(1LL, in.ep),
                  etp = std::max(1LL, in.etp);
  // 1. TP divides the KV heads (GQA).
  if (in.kv_heads <= 0)
    add("tp_divides_kv_heads", Status::Unknown, [&] { return Vars{{"tp", n(tp)}}; });
  else
    add("tp_divides_kv_heads", in.kv_heads % tp == 0 ? Status::Pass : Status::Fail, [&] {
      return Vars{{"tp", n(tp)}, {"kv_heads", n(in.kv_heads)}, {"valid", divisors(in.kv_heads)}};
    });
  // 2. TP within one NVLink domain.
  if (in.nvlink <= 0)
    add("tp_within_nvlink", Status::Unknown, [&] { return Vars{{"tp", n(tp)}}; });
  else
    add("tp_within_nvlink", tp <= in.nvlink ? Status::Pass : Status::Fail, [&] { return Vars{{"tp", n(tp)}, {"nvlink", n(in.nvlink)}}; });
  // 3. SP whenever TP > 1.
  add("sp_when_tp", tp == 1 || in.sp ? Status::Pass : Status::Fail, [&] { return Vars{{"tp", n(tp)}}; });
  // 4. CP for long context.
  if (in.seq > in.threshold && in.threshold > 0)
    add("cp_for_long_context", cp > 1 ? Status::Pass : Status::Fail, [&] {
      return Vars{{"seq", n(in.seq)}, {"threshold", n(in.threshold)}, {"cp", n(cp)}};
    });
  else
    add("cp_for_long_context", Status::Pass, [&] {
      return Vars{{"seq", in.seq > 0 ? n(in.seq) : std::string("?")}, {"threshold", n(in.threshold)}, {"cp", n(cp)}};
    });
  // 5. World size divisible by the dense mesh, and by the expert mesh for MoE.
  const long long dense = tp * pp * cp, expert = pp * ep * etp;
  const bool dense_ok = in.world >= dense && in.world % dense == 0;
  const bool expert_ok = !in.moe || (in.world >= expert && in.world % expert == 0);
  add("world_size_divisible", dense_ok && expert_ok ? Status::Pass : Status::Fail, [&] {
    return Vars{{"world", n(in.world)},
                {"dense", n(dense)},
                {"dp", dense_ok ? n(in.world / dense) : std::string("—")},
                {"expert", n(expert)},
                {"edp", in.moe && expert_ok ? n(in.world / expert) : std::string("—")}};
  });
  // 6. Experts divisible by EP (MoE).
  if (in.moe) {
    if (in.experts <= 0)
      add("experts_divisible_by_ep", Status::Unknown, [&] { return Vars{{"ep", n(ep)}}; });
    else
      add("experts_divisible_by_ep", in.experts % ep == 0 ? Status::Pass : Status::Fail, [&] {
        return Vars{{"ep", n(ep)}, {"experts", n(in.experts)}, {"per_rank", in.experts % ep == 0 ? n(in.experts / ep) : std::string("—")}};
      });
  }
  // 7. Layers divisible by PP (and by PP × VP with a virtual pipeline).
  // The embedding and the loss count as layers when the recipe says so.
  const long long stages = pp * std::max(1LL, in.vp);
  const long long split = in.layers + in.split_extra;
  const auto layers = [&] { return in.split_extra > 0 ? n(in.layers) + "+" + n(in.split_extra) : n(in.layers); };
  if (in.layers <= 0)
    add("layers_divisible_by_pp", Status::Unknown, [&] { return Vars{{"pp", n(pp)}}; });
  else if (in.stage_layout)
    add("layers_divisible_by_pp", Status::Pass, [&] { return Vars{{"pp", n(pp)}, {"layers", layers()}, {"per_stage", "—"}}; });
  else
    add("layers_divisible_by_pp", split % stages == 0 ? Status::Pass : Status::Fail, [&] {
      return Vars{{"pp", n(stages)}, {"layers", layers()}, {"per_stage", split % stages == 0 ? n(split / stages) : std::string("—")}};
    });
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
  return in;
}

std::vector<RuleOutcome> evaluate_rules(const RuleInput& in) {
  std::vector<RuleOutcome> out;
  each_rule(in, [&](const char* check, Status s, auto&& vars) { out.push_back({check, s, vars()}); });
  return out;
}

bool rules_pass(const RuleInput& in) {
  bool ok = true;
  each_rule(in, [&](const char*, Status s, auto&&) { ok = ok && s != Status::Fail; });
  return ok;
}

}  // namespace kbq
