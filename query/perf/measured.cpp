// The estimator's inputs from the KB's throughput tables (see measured.hpp).
#include "query/perf/measured.hpp"

#include <algorithm>

#include "base/text.hpp"
#include "query/memory/from_facts.hpp"

namespace kbq::perf {

std::string arch_class(const memory::Architecture& a) {
  const bool hybrid = a.mamba_layers > 0 || a.linear_attention_layers > 0;
  const bool moe = a.experts > 0;
  return std::string(hybrid ? "hybrid" : moe ? "moe" : "dense") + (hybrid && moe ? "-moe" : "");
}

namespace {

// The facts flops_mode reads.
constexpr std::string_view kPeft = "peft", kDataset = "dataset_name", kHfId = "hf_id", kOfflinePacking = "offline_packing";

}  // namespace

bool arch_source_reads(std::string_view field) {
  return memory::architecture_reads(field) || field == kPeft || field == kDataset || field == kHfId || field == kOfflinePacking;
}

std::optional<memory::Architecture> architecture_of(const PerfArchSource& a, std::string& why) {
  auto mapped = memory::architecture_from_facts(a.model ? &a.model->row : nullptr, a.arch, a.facts);
  if (auto* err = std::get_if<memory::InputError>(&mapped)) {
    why = err->message;
    return std::nullopt;
  }
  return std::get<memory::Mapped<memory::Architecture>>(mapped).value;
}

FlopsMode flops_mode(const PerfSet& set, const CodeFacts& facts) {
  auto value = [&](std::string_view field) -> std::string {
    auto it = facts.find(field);
    return it == facts.end() || it->second.state == kb::FactState::Unknown ? std::string{} : it->second.value;
  };
  auto param = [&](const char* key) -> std::string {
    auto it = set.raw_params.find(key);
    return it == set.raw_params.end() ? std::string{} : it->second;
  };
  const std::string peft = value(kPeft), dataset = value(kDataset), hf = value(kHfId), id = param("lora_frozen_hf_id_contains");
  if (peft.find("LoRA") == std::string::npos || value(kOfflinePacking) != "true" || id.empty() || hf.find(id) == std::string::npos)
    return FlopsMode::kFull;
  for (const auto& d : kb::split(param("lora_frozen_datasets"), ','))
    if (!d.empty() && kb::trim(d) == dataset) return FlopsMode::kLoraFrozen;
  return FlopsMode::kFull;
}

std::variant<double, std::string> flops_of(const PerfSet& set, const std::string& model_key, const memory::Architecture& arch,
                                           long long seq, long long tp, FlopsMode mode, const std::string& arch_override) {
  static const std::map<std::string, std::string, std::less<>> kNone;
  auto it = set.flops_arch.find(model_key);
  auto extras = extras_from_facts(it == set.flops_arch.end() ? kNone : it->second, arch_override);
  if (auto* err = std::get_if<std::string>(&extras)) return *err;
  FlopsInput in;
  in.arch = &arch;
  in.extras = &std::get<FlopsExtras>(extras);
  in.seq = seq;
  in.tp = tp;
  in.mode = mode;
  if (auto d = set.raw_params.find("vocab_divisible_by"); d != set.raw_params.end()) in.vocab_divisor = std::atoll(d->second.c_str());
  return flops_per_token(in);
}

PerfSet build_perf(PerfTables t) {
  PerfSet set;
  auto params = params_from_rows(t.params, t.peaks, t.precision_class, t.nvlink);
  if (auto* err = std::get_if<std::string>(&params))
    set.error = *err;
  else
    set.params = std::get<Params>(params);
  set.raw_params = std::move(t.params);
  set.flops_arch = std::move(t.flops_arch);
  // The architecture of each row's benchmark recipe, mapped once per recipe.
  std::map<std::string, std::pair<std::optional<memory::Architecture>, std::string>> archs;
  std::map<std::string, FlopsMode> modes;
  for (const auto& [name, source] : t.archs) {
    std::string why = "no benchmark recipe of the model gives its architecture";
    std::optional<memory::Architecture> arch;
    if (source.recipe) {
      arch = architecture_of(source, why);
      modes[name] = flops_mode(set, source.facts);
    }
    archs.emplace(name, std::make_pair(arch, why));
  }
  set.rows.reserve(t.rows.size());
  set.measurements.reserve(t.rows.size());
  // The rows' strings are moved out of the tables, which are read once for
  // this set (a copy cost about 300 instructions a string, 13 a row).
  for (auto& tr : t.rows) {
    MeasuredRow& row = set.rows.emplace_back();
    Measurement& m = row.m;
    m.id = tr.id;
    m.model_key = std::move(tr.model_key);
    m.variant = tr.arch_override.empty() ? std::move(tr.variant) : tr.variant + (tr.variant.empty() ? "" : "; ") + tr.arch_override;
    m.task = std::move(tr.task);
    m.gpu = std::move(tr.gpu);
    m.precision = std::move(tr.precision);
    m.gpus = tr.gpus;
    m.gbs = tr.gbs;
    m.mbs = tr.mbs;
    m.seq = tr.seq;
    row.tp = tr.tp;
    row.pp = tr.pp;
    row.cp = tr.cp;
    row.vp = tr.vp;
    row.ep = tr.ep;
    m.tp = tr.tp.value_or(1);
    m.pp = tr.pp.value_or(1);
    m.cp = tr.cp.value_or(1);
    m.vp = tr.vp.value_or(1);
    m.ep = tr.ep.value_or(1);
    m.release = std::move(tr.release);
    m.release_order = tr.release_order;
    m.file = std::move(tr.file);
    m.line = tr.line;
    m.tokens = tr.tokens;
    m.tflops = tr.tflops;
    row.note_kind = std::move(tr.note_kind);
    m.usable = row.note_kind != "regression";
    row.model_written = std::move(tr.model_written);
    row.system = std::move(tr.system);
    row.precision_written = std::move(tr.precision_written);
    row.status = std::move(tr.status);
    row.edition = std::move(tr.edition);
    row.recipe = std::move(tr.recipe);
    row.notes = std::move(tr.notes);
    row.fsdp = tr.fsdp;
    row.ga = tr.ga;
    row.superseded_by = tr.superseded_by;
    row.col = tr.col;
    row.alternate = tr.alternate;
    if (auto e = t.exceptions.find({m.model_key, m.release}); e != t.exceptions.end()) row.flops_exception = e->second;
    if (t.read != PerfRead::Sources) {  // Derived or Estimate: what kbc stored
      m.arch_class = std::move(tr.arch_class);
      m.flops = tr.flops.value_or(0);
      row.flops_error = std::move(tr.flops_error);
    } else if (const auto a = archs.find(tr.arch_recipe); a != archs.end() && a->second.first) {
      m.arch_class = arch_class(*a->second.first);
      auto f = flops_of(set, m.model_key, *a->second.first, m.seq, m.tp, modes[tr.arch_recipe], tr.arch_override);
      if (auto* v = std::get_if<double>(&f))
        m.flops = *v;
      else
        row.flops_error = std::get<std::string>(f);
    } else {
      row.flops_error = a != archs.end() ? a->second.second : "no benchmark recipe of the model gives its architecture";
    }
    set.measurements.push_back(m);
  }
  if (!set.error.empty()) return set;
  if (t.read == PerfRead::Sources) {
    set.factors = fit_platform_factors(set.measurements, set.params);
    return set;
  }
  for (const auto& [platform, fit] : t.platforms) {
    set.factors.pairs[platform] = fit.pairs;
    if (fit.log_factor) set.factors.log_factor[platform] = *fit.log_factor;
  }
  set.factors.bf16_bridged = std::move(t.bf16_bridged);
  return set;
}

}  // namespace kbq::perf
