// Calibration driver for the memory model (not part of kbq): runs
// kbq::memory::estimate on every row of a cases TSV (calib/cases.tsv: a
// recipe NVIDIA ships, its architecture, layout and training settings, and
// the memory of the GPU it runs on) and reports how many the model judges
// to fit, listing each one it does not, and the parameter-count error per
// model. Built only by calib/CMakeLists.txt.
//
// Usage: memory_calibrate CASES_TSV MEMORY_TSV [--all]
//   --all  also print one line per fitting case
// Exit: 0 = ran (whatever the fit rate), 2 = unreadable input.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "memory/memory.hpp"

namespace mem = kbq::memory;

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, sep)) out.push_back(cur);
  if (!s.empty() && s.back() == sep) out.emplace_back();
  return out;
}

bool read_file(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return true;
}

// One row of the cases TSV, by column name.
struct Row {
  std::map<std::string, std::string> f;
  const std::string& s(const std::string& k) const {
    static const std::string empty;
    auto it = f.find(k);
    return it == f.end() ? empty : it->second;
  }
  long long i(const std::string& k) const {
    const std::string& v = s(k);
    return v.empty() || v == "-" ? 0 : std::stoll(v);
  }
  double d(const std::string& k) const {
    const std::string& v = s(k);
    return v.empty() || v == "-" ? 0.0 : std::stod(v);
  }
  bool b(const std::string& k) const { return i(k) != 0; }
};

// Builds the model inputs from a row; returns an error text for a value the spellings do not know.
std::string to_inputs(const Row& r, mem::Architecture& a, mem::Layout& l, mem::Training& t) {
  a.layers = r.i("layers");
  a.hidden = r.i("hidden");
  a.ffn = r.i("ffn");
  a.heads = r.i("heads");
  a.kv_heads = r.i("kv_heads");
  a.head_dim = r.i("head_dim");
  a.vocab = r.i("vocab");
  a.tied_embeddings = r.b("tied");
  a.mlp_kind = r.s("mlp") == "plain" ? mem::MlpKind::kPlain : mem::MlpKind::kGated;
  a.mla = r.b("mla");
  a.q_lora_rank = r.i("q_lora");
  a.kv_lora_rank = r.i("kv_lora");
  a.qk_head_dim = r.i("qk_nope");
  a.qk_rope_head_dim = r.i("qk_rope");
  a.v_head_dim = r.i("v_head");
  a.experts = r.i("experts");
  a.experts_per_token = r.i("topk");
  a.moe_ffn = r.i("moe_ffn");
  a.shared_expert_ffn = r.i("shared_ffn");
  a.moe_latent = r.i("latent");
  a.attention_layers = r.i("attn");
  a.linear_attention_layers = r.i("gdn");
  a.mamba_layers = r.i("mamba");
  a.dense_mlp_layers = r.i("mlp_layers");
  a.moe_layers = r.i("moe_layers");
  a.first_dense_layers = r.i("first_dense");
  a.mamba_heads = r.i("mamba_heads");
  a.mamba_head_dim = r.i("mamba_head_dim");
  a.mamba_groups = r.i("mamba_groups");
  a.mamba_state = r.i("mamba_state");
  a.conv_kernel = r.i("conv_kernel");
  a.gdn_key_heads = r.i("gdn_kh");
  a.gdn_value_heads = r.i("gdn_vh");
  a.gdn_key_dim = r.i("gdn_kd");
  a.gdn_value_dim = r.i("gdn_vd");
  a.mtp_layers = r.i("mtp");
  a.mtp_shared = r.b("mtp_shared");
  a.extra_params = r.d("extra_params");
  a.total_params = r.d("total_params");
  a.active_params = r.d("active_params");

  l.tp = r.i("tp");
  l.pp = r.i("pp");
  l.vp = r.i("vp");
  l.cp = r.i("cp");
  l.ep = r.i("ep");
  l.etp = r.i("etp");
  l.sp = r.b("sp");
  l.world = r.i("gpus");
  l.first_stage_layers = r.i("first_layers");
  l.last_stage_layers = r.i("last_layers");
  l.any_layout_fp8_gemm = r.s("hw") != "h100" && r.s("hw") != "h200" && r.s("hw") != "a100";  // Blackwell and later

  auto mode = mem::parse_mode(r.s("mode"));
  auto precision = mem::parse_precision(r.s("precision"));
  auto optimizer = mem::parse_optimizer(r.s("optimizer"));
  auto main_dtype = mem::parse_dtype(r.s("main_dtype"));
  auto m1 = mem::parse_dtype(r.s("exp_avg_dtype"));
  auto m2 = mem::parse_dtype(r.s("exp_avg_sq_dtype"));
  auto recompute = mem::parse_recompute(r.s("recompute"));
  auto method = mem::parse_recompute_method(r.s("recompute_method"));
  if (!mode || !precision || !optimizer || !main_dtype || !m1 || !m2 || !recompute || !method) return "unknown enum spelling";
  t.mode = *mode;
  t.precision = *precision;
  t.low_precision_params = r.b("lp_params");
  t.freeze_decoder = r.b("freeze_lm");
  t.optimizer = *optimizer;
  t.main_param_dtype = *main_dtype;
  t.exp_avg_dtype = *m1;
  t.exp_avg_sq_dtype = *m2;
  t.distributed_optimizer = r.b("dist_opt");
  t.fsdp = r.b("fsdp");
  t.grad_reduce_in_fp32 = r.b("grad_fp32");
  t.seq_length = r.i("seq");
  t.micro_batch = r.i("mbs");
  t.global_batch = r.i("gbs");
  t.recompute = *recompute;
  t.recompute_method = *method;
  t.recompute_layers = r.i("recompute_layers");
  for (const auto& name : split(r.s("recompute_modules"), ','))
    if (auto m = mem::parse_module(name)) t.recompute_modules.add(*m);
  for (const auto& name : split(r.s("offload_modules"), ','))
    if (auto m = mem::parse_module(name)) t.offload_modules.add(*m);
  t.offload_layers = r.i("offload_layers");
  t.lora_rank = r.i("lora_rank");
  for (const auto& name : split(r.s("lora_targets"), ','))
    if (auto x = mem::parse_lora_target(name)) t.lora_targets.add(*x);
  t.lora_per_expert = r.b("lora_per_expert");
  t.te_cross_entropy = r.b("te_ce");
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s CASES_TSV MEMORY_TSV [--all]\n", argv[0]);
    return 2;
  }
  const bool all = argc > 3 && std::string_view(argv[3]) == "--all";
  std::string cases_text, params_text;
  if (!read_file(argv[1], cases_text) || !read_file(argv[2], params_text)) {
    std::fprintf(stderr, "cannot read %s or %s\n", argv[1], argv[2]);
    return 2;
  }
  auto params = mem::params_from_tsv(params_text);
  if (auto* e = std::get_if<mem::InputError>(&params)) {
    std::fprintf(stderr, "%s\n", e->message.c_str());
    return 2;
  }
  const mem::Params& p = std::get<mem::Params>(params);

  std::istringstream in(cases_text);
  std::string line;
  std::vector<std::string> header;
  int evaluated = 0, fit = 0, skipped = 0, errors = 0;
  std::map<std::string, std::pair<int, int>> by_kind;  // kind -> (evaluated, fit)
  std::map<std::string, double> param_error;           // model -> relative error of the count
  std::vector<std::string> misfits, skips, errs;
  std::printf("%-72s %-6s %5s %7s %8s %s\n", "recipe", "hw", "gpus", "cap", "est GiB", "verdict");
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    auto cols = split(line, '\t');
    if (header.empty()) {
      header = cols;
      continue;
    }
    Row r;
    for (std::size_t k = 0; k < header.size() && k < cols.size(); ++k) r.f[header[k]] = cols[k];
    if (r.s("status") != "ok") {
      ++skipped;
      skips.push_back(r.s("recipe") + ": " + r.s("note"));
      continue;
    }
    mem::Architecture a;
    mem::Layout l;
    mem::Training t;
    std::string bad = to_inputs(r, a, l, t);
    if (!bad.empty()) {
      ++errors;
      errs.push_back(r.s("recipe") + ": " + bad);
      continue;
    }
    auto result = mem::estimate(a, l, t, p);
    if (auto* e = std::get_if<mem::InputError>(&result)) {
      ++errors;
      errs.push_back(r.s("recipe") + ": " + e->message);
      continue;
    }
    const mem::Estimate& est = std::get<mem::Estimate>(result);
    const double cap = r.d("capacity_gib") * mem::kBytesPerGiB;
    const bool ok = est.fits(cap);
    ++evaluated;
    auto& k = by_kind[r.s("kind")];
    ++k.first;
    if (ok) {
      ++fit;
      ++k.second;
    }
    if (a.total_params > 0) param_error[r.s("model_key")] = mem::count_params(a).relative_error;
    char buf[512];
    std::snprintf(buf, sizeof buf, "%-72s %-6s %5lld %7.0f %8.1f %s", r.s("recipe").c_str(), r.s("hw").c_str(), r.i("gpus"),
                  r.d("capacity_gib"), est.total / mem::kBytesPerGiB, ok ? "fits" : "DOES NOT FIT");
    if (all || !ok)
      std::printf("%s\n    %s%s%s\n", buf, est.breakdown().c_str(),
                  r.s("note") == "-" ? "" : "\n    note: ", r.s("note") == "-" ? "" : r.s("note").c_str());
    if (!ok) misfits.push_back(r.s("recipe"));
  }
  std::printf("\nevaluated %d, fit %d (%.1f %%), do not fit %d, skipped %d, input errors %d\n", evaluated, fit,
              evaluated ? 100.0 * fit / evaluated : 0.0, evaluated - fit, skipped, errors);
  for (const auto& [kind, c] : by_kind)
    std::printf("  %-10s evaluated %d, fit %d (%.1f %%)\n", kind.c_str(), c.first, c.second, c.first ? 100.0 * c.second / c.first : 0.0);
  std::printf("\nskipped:\n");
  for (const auto& s : skips) std::printf("  %s\n", s.c_str());
  if (!errs.empty()) std::printf("\ninput errors:\n");
  for (const auto& s : errs) std::printf("  %s\n", s.c_str());
  std::printf("\nparameter count vs published total (relative error):\n");
  for (const auto& [model, err] : param_error) std::printf("  %-26s %+6.1f %%\n", model.c_str(), 100.0 * err);
  return 0;
}
