// The estimator's inputs from the KB (see measured.hpp). Every value is
// bound as a parameter; the tables are read whole, once per KB.
#include "query/perf/measured.hpp"

#include <algorithm>

#include "base/text.hpp"
#include "query/memory/from_facts.hpp"

namespace kbq::perf {

namespace {

memory::FactState state_of(kb::FactState s) {
  switch (s) {
    case kb::FactState::Value:
      return memory::FactState::kValue;
    case kb::FactState::Default:
      return memory::FactState::kDefault;
    case kb::FactState::Alternatives:
      return memory::FactState::kAlternatives;
    case kb::FactState::Unknown:
      break;
  }
  return memory::FactState::kUnknown;
}

std::optional<long long> opt(const kb::Stmt& st, int c) { return st.is_null(c) ? std::nullopt : std::optional<long long>(st.integer(c)); }

}  // namespace

std::string arch_class(const memory::Architecture& a) {
  const bool hybrid = a.mamba_layers > 0 || a.linear_attention_layers > 0;
  const bool moe = a.experts > 0;
  return std::string(hybrid ? "hybrid" : moe ? "moe" : "dense") + (hybrid && moe ? "-moe" : "");
}

std::optional<memory::Architecture> architecture_of(Kb& kb, const Recipe& r, std::string& why) {
  memory::RecipeFacts facts;
  for (const auto& [field, f] : kb.facts(r.target)) facts[field] = {state_of(f.state), f.value};
  const Model* model = r.model_key.empty() ? nullptr : kb.model(r.model_key);
  // A model without a models.tsv row (a recipe that builds its provider inline) may still have
  // model-arch.tsv facts under its recipe-name key (docs/memory.md, section 8).
  memory::ArchFacts arch;
  if (model) {
    arch = model->arch;
  } else if (!r.model_key.empty()) {
    kb::Stmt st(kb.db(), "SELECT field, value FROM model_arch WHERE model_key = ? ORDER BY field");
    st.bind(1, r.model_key);
    while (st.step()) arch[st.text(0)] = st.text(1);
  }
  auto mapped = memory::architecture_from_facts(model ? &model->row : nullptr, arch, facts);
  if (auto* err = std::get_if<memory::InputError>(&mapped)) {
    why = err->message;
    return std::nullopt;
  }
  return std::get<memory::Mapped<memory::Architecture>>(mapped).value;
}

FlopsMode flops_mode(const PerfSet& set, const CodeFacts& facts) {
  auto value = [&](const char* field) -> std::string {
    auto it = facts.find(field);
    return it == facts.end() || it->second.state == kb::FactState::Unknown ? std::string{} : it->second.value;
  };
  auto param = [&](const char* key) -> std::string {
    auto it = set.raw_params.find(key);
    return it == set.raw_params.end() ? std::string{} : it->second;
  };
  const std::string peft = value("peft"), dataset = value("dataset_name"), hf = value("hf_id"), id = param("lora_frozen_hf_id_contains");
  if (peft.find("LoRA") == std::string::npos || value("offline_packing") != "true" || id.empty() || hf.find(id) == std::string::npos)
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

PerfSet load_perf(Kb& kb) {
  PerfSet set;
  kb::Db& db = kb.db();
  {
    kb::Stmt st(db, "SELECT key, value FROM perf_params ORDER BY key");
    while (st.step()) set.raw_params[st.text(0)] = st.text(1);
  }
  {
    kb::Stmt st(db, "SELECT model_key, field, value FROM flops_arch ORDER BY model_key, field");
    while (st.step()) set.flops_arch[st.text(0)][st.text(1)] = st.text(2);
  }
  std::map<std::pair<std::string, std::string>, double> peaks;
  {
    kb::Stmt st(db, "SELECT gpu_key, precision, tflops FROM gpu_peaks ORDER BY gpu_key, precision");
    while (st.step()) peaks[{st.text(0), st.text(1)}] = st.real(2);
  }
  std::map<std::string, std::string> classes;
  std::map<std::string, std::string> footnotes;
  {
    kb::Stmt st(db, "SELECT kind, word, value FROM perf_vocab WHERE kind IN ('precision_class') ORDER BY word");
    while (st.step()) classes[st.text(1)] = st.text(2);
  }
  std::map<std::string, long long> domains;
  for (const auto& g : kb.gpus()) domains[g.key] = g.nvlink;
  auto params = params_from_rows(set.raw_params, peaks, classes, domains);
  if (auto* err = std::get_if<std::string>(&params))
    set.error = *err;
  else
    set.params = std::get<Params>(params);
  std::map<std::pair<std::string, std::string>, std::string> exceptions;
  {
    kb::Stmt st(db, "SELECT model_key, release, cause FROM perf_flops_exceptions ORDER BY model_key, release");
    while (st.step()) exceptions[{st.text(0), st.text(1)}] = st.text(2);
  }

  // The architecture of each row's benchmark recipe, mapped once per recipe.
  std::map<std::string, std::pair<std::optional<memory::Architecture>, std::string>> archs;
  std::map<std::string, FlopsMode> modes;
  kb::Stmt st(db,
              "SELECT r.id, r.model_key, r.variant, r.arch_override, r.task, r.gpu, r.precision, r.gpus, r.gbs, r.mbs, r.seq, "
              "r.tp, r.pp, r.cp, r.vp, r.ep, r.release, r.release_order, s.path, r.line, r.tokens_per_gpu, r.tflops_per_gpu, "
              "r.note_kind, r.model_written, r.system, r.precision_written, r.status, r.edition, r.recipe, r.notes, r.fsdp, r.ga, "
              "coalesce(r.superseded_by, 0), r.col, r.alternate, r.arch_recipe "
              "FROM perf_rows r JOIN sources s ON s.id = r.source_id WHERE r.status != 'copy' ORDER BY r.id");
  while (st.step()) {
    MeasuredRow row;
    Measurement& m = row.m;
    m.id = st.integer(0);
    m.model_key = st.text(1);
    const std::string variant = st.text(2), override_ = st.text(3);
    m.variant = variant + (override_.empty() ? "" : (variant.empty() ? "" : "; ") + override_);
    m.task = st.text(4);
    m.gpu = st.text(5);
    m.precision = st.text(6);
    m.gpus = st.integer(7);
    m.gbs = st.integer(8);
    m.mbs = st.integer(9);
    m.seq = st.integer(10);
    row.tp = opt(st, 11);
    row.pp = opt(st, 12);
    row.cp = opt(st, 13);
    row.vp = opt(st, 14);
    row.ep = opt(st, 15);
    m.tp = row.tp.value_or(1);
    m.pp = row.pp.value_or(1);
    m.cp = row.cp.value_or(1);
    m.vp = row.vp.value_or(1);
    m.ep = row.ep.value_or(1);
    m.release = st.text(16);
    m.release_order = static_cast<int>(st.integer(17));
    m.file = st.text(18);
    m.line = static_cast<int>(st.integer(19));
    m.tokens = st.real(20);
    m.tflops = st.real(21);
    row.note_kind = st.text(22);
    m.usable = row.note_kind != "regression";
    row.model_written = st.text(23);
    row.system = st.text(24);
    row.precision_written = st.text(25);
    row.status = st.text(26);
    row.edition = st.text(27);
    row.recipe = st.text(28);
    for (const auto& n : kb::split(st.text(29), '\n'))
      if (!n.empty()) row.notes.push_back(n);
    row.fsdp = opt(st, 30);
    row.ga = opt(st, 31);
    row.superseded_by = st.integer(32);
    row.col = static_cast<int>(st.integer(33));
    row.alternate = st.integer(34) != 0;
    const std::string arch_recipe = st.text(35);
    if (auto e = exceptions.find({m.model_key, m.release}); e != exceptions.end()) row.flops_exception = e->second;

    auto a = archs.find(arch_recipe);
    if (a == archs.end()) {
      std::string why = "no benchmark recipe of the model gives its architecture";
      std::optional<memory::Architecture> arch;
      if (auto r = kb.recipe(arch_recipe, RecipeKind::Benchmark)) {
        arch = architecture_of(kb, *r, why);
        modes[arch_recipe] = flops_mode(set, kb.facts(r->target));
      }
      a = archs.emplace(arch_recipe, std::make_pair(arch, why)).first;
    }
    if (a->second.first) {
      m.arch_class = arch_class(*a->second.first);
      auto f = flops_of(set, m.model_key, *a->second.first, m.seq, m.tp, modes[arch_recipe], override_);
      if (auto* v = std::get_if<double>(&f))
        m.flops = *v;
      else
        row.flops_error = std::get<std::string>(f);
    } else {
      row.flops_error = a->second.second;
    }
    set.measurements.push_back(m);
    set.rows.push_back(std::move(row));
  }
  if (set.error.empty()) set.factors = fit_platform_factors(set.measurements, set.params);
  return set;
}

}  // namespace kbq::perf
