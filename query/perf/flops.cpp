// Model FLOPs per token (see flops.hpp). Every term cites the line of
// flop_utils.py (NVIDIA-NeMo/Megatron-Bridge@067f987df) it ports; the count
// is per token of a dense batch, so the code's seqlen_sum is 1 and its
// core_attn_seq_factor is the sequence length.
#include "query/perf/flops.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace kbq::perf {

namespace {

bool to_int(const std::string& s, long long& v) {
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

// calculate_padded_vocab_size (Megatron-LM megatron/training/vocab_utils.py):
// the vocabulary rounded up to a multiple of divisor x TP.
double padded_vocab(long long vocab, long long divisor, long long tp) {
  const long long m = std::max(1LL, divisor) * std::max(1LL, tp);
  const long long padded = (vocab + m - 1) / m * m;  // a whole number of multiples (integer division on purpose)
  return static_cast<double>(padded);
}

// flop_utils.py:1073-1165, the dsv4_hybrid branch: projections and the
// sparse, compressed and indexer terms per token (`self_attn`), and the term
// that grows with the sequence (`core`, multiplied by seq by the caller).
std::variant<std::pair<double, double>, std::string> dsv4_attention(const FlopsExtras& x, double h, double heads, double nl, double s) {
  if (x.dsv4_q_lora_rank <= 0) return std::string("q_lora_rank must be set for dsv4_hybrid FLOPs (flops-arch.tsv dsv4_q_lora_rank)");
  if (static_cast<double>(x.dsv4_compress_ratios.size()) != nl)
    return "dsv4_compress_ratios has " + std::to_string(x.dsv4_compress_ratios.size()) + " entries, the model " +
           std::to_string(static_cast<long long>(nl)) + " layers with its MTP depths";
  const double ql = static_cast<double>(x.dsv4_q_lora_rank), qk = static_cast<double>(x.dsv4_qk_head_dim);
  const double rope = static_cast<double>(x.dsv4_qk_rope_head_dim), v = static_cast<double>(x.dsv4_v_head_dim);
  const double ol = static_cast<double>(x.dsv4_o_lora_rank), og = static_cast<double>(x.dsv4_o_groups);
  const double window = static_cast<double>(x.dsv4_window > 0 ? x.dsv4_window : 128);
  const double q_term = ql * (h + heads * (qk + rope) + 1);  // :1087
  const double kv_term = h * v + v;                          // :1092
  const double o_term = heads * v * ol + og * ol * h;        // :1093
  double self_attn = 3 * 2 * nl * (q_term + kv_term + o_term);
  double n0 = 0, n4 = 0, n128 = 0;
  for (long long r : x.dsv4_compress_ratios) {
    if (r == 0)
      ++n0;
    else if (r == 4)
      ++n4;
    else if (r == 128)
      ++n128;
    else
      return "dsv4_compress_ratios holds " + std::to_string(r) + "; only 0, 4 and 128 are supported (flop_utils.py:1110)";
  }
  const double sparse_r0 = n0 * heads * window * v * 2;  // :1126
  const double sparse_r128 = n128 * heads * window * v * 2;
  const double sparse_r128_core = n128 * heads * v / 128;
  const double compressor = n4 * h * (2 * v) * 2 + n128 * h * v * 2;  // :1131
  double sparse_r4 = 0, indexer = 0, indexer_core = 0;
  if (n4 > 0) {  // :1136
    if (x.dsv4_index_heads <= 0 || x.dsv4_index_head_dim <= 0 || x.dsv4_index_topk <= 0)
      return std::string("dsv4_hybrid ratio-4 layers need dsv4_index_heads, dsv4_index_head_dim and dsv4_index_topk");
    const double ih = static_cast<double>(x.dsv4_index_heads), id = static_cast<double>(x.dsv4_index_head_dim);
    const double topk4 = std::min(static_cast<double>(x.dsv4_index_topk), std::floor(s / 4));
    const double avg_comp4 = topk4 * (1 - topk4 * 4 / (2 * s));
    sparse_r4 = n4 * heads * (window + avg_comp4) * v * 2;
    indexer = n4 * h * (2 * id) * 2 + n4 * ql * ih * id + n4 * h * ih;
    indexer_core = n4 * ih * id / 4;
  }
  self_attn += 3 * 2 * (sparse_r0 + sparse_r4 + sparse_r128 + compressor + indexer);  // :1163
  const double core = 3 * 2 * (sparse_r128_core + indexer_core);                      // :1164
  return std::make_pair(self_attn, core);
}

std::variant<double, std::string> transformer(const FlopsInput& in) {
  const memory::Architecture& a = *in.arch;
  const FlopsExtras& x = *in.extras;
  const double s = static_cast<double>(in.seq), h = static_cast<double>(a.hidden), heads = static_cast<double>(a.heads);
  const long long L = a.layers;
  const long long mtp = x.mtp_layers >= 0 ? x.mtp_layers : a.mtp_layers;
  // flop_utils.py:1013-1040: dense and MoE MLPs, MTP depths on the last layer's kind.
  long long n_moe = 0, n_dense = L, k = 0, last_moe = 0;
  if (a.experts > 0) {
    n_moe = a.moe_layers > 0 ? a.moe_layers : L - a.first_dense_layers;
    n_dense = L - n_moe;
    k = a.experts_per_token;
    last_moe = n_moe > 0 ? 1 : 0;
  }
  n_moe += last_moe * mtp;
  n_dense += (1 - last_moe) * mtp;
  const double nl = static_cast<double>(L + mtp);
  if (n_dense > 0 && a.ffn <= 0) return std::string("the dense MLP width (ffn_hidden_size) is not known");
  const double moe_ffn = static_cast<double>(a.moe_ffn > 0 ? a.moe_ffn : a.ffn);
  const double latent = static_cast<double>(a.moe_latent), shared = static_cast<double>(a.shared_expert_ffn);
  const double fe = a.mlp_kind == memory::MlpKind::kGated ? 3 : 2;  // :1051

  double self_attn = 0, core = 0;
  if (x.attention_variant == "dsv4_hybrid") {
    auto r = dsv4_attention(x, h, heads, nl, s);
    if (auto* err = std::get_if<std::string>(&r)) return *err;
    std::tie(self_attn, core) = std::get<std::pair<double, double>>(r);
  } else if (!x.attention_variant.empty()) {
    return "its attention (" + x.attention_variant + ") is one the FLOPs count of kbq does not model";
  } else if (a.mla) {  // :1303 MLA
    const double qk = static_cast<double>(a.qk_head_dim > 0 ? a.qk_head_dim : 64), rope = static_cast<double>(a.qk_rope_head_dim);
    const double v = static_cast<double>(a.v_head_dim > 0 ? a.v_head_dim : 64), kvl = static_cast<double>(a.kv_lora_rank);
    const double ql = static_cast<double>(a.q_lora_rank);
    const double q_term = ql <= 0 ? h * heads * (qk + rope) : ql * (h + heads * (qk + rope) + 1);
    self_attn = 3 * 2 * nl *
                (q_term + kvl * (h + heads * (qk + v) + 1) + h * rope + heads * v * h + s * heads * (qk + rope) / 2 + s * heads * v / 2);
  } else {  // :1351 MHA or GQA
    if (a.head_dim <= 0 || a.kv_heads <= 0) return std::string("the attention's head dimension or KV heads are not known");
    const double q = static_cast<double>(a.head_dim) * heads, kv = static_cast<double>(a.head_dim * a.kv_heads);
    const double gate = x.attention_output_gate ? q : 0;
    const double proj = h * (q + 2 * kv + gate) + q * h;
    const double full_core = q * s;  // q * core_attn_seq_factor / 2 * 2
    if (x.window > 0) {              // :1364 sliding windows
      const double w = static_cast<double>(x.window);
      const double swa_context = w < s ? w - w * (w - 1) / (2 * s) : s / 2;
      double n_swa = nl;
      if (x.window_skip_freq > 0) {
        n_swa = 0;
        for (long long i = 0; i < L + mtp; ++i)
          if ((i + 1) % x.window_skip_freq != 0) ++n_swa;
      }
      self_attn = 3 * 2 * ((nl - n_swa) * (proj + full_core) + n_swa * (proj + q * swa_context * 2));
    } else {
      self_attn = 3 * 2 * nl * (proj + full_core);
    }
  }
  // :1412 Gated DeltaNet layers replace their share of the softmax attention.
  if (a.linear_attention_layers > 0) {
    const long long last_is_gdn = a.attention_layers > 0 ? 0 : 1;  // the 1-in-n softmax layer ends the stack
    const double n_gdn = static_cast<double>(a.linear_attention_layers + last_is_gdn * mtp);
    const double qk_dim = static_cast<double>(a.gdn_key_dim * a.gdn_key_heads),
                 v_dim = static_cast<double>(a.gdn_value_dim * a.gdn_value_heads);
    const double nv = static_cast<double>(a.gdn_value_heads), vd = static_cast<double>(a.gdn_value_dim);
    const double kernel = static_cast<double>(a.conv_kernel > 0 ? a.conv_kernel : 4);
    const double in_proj = 2 * qk_dim + 2 * v_dim + 2 * nv;
    const double gdn = 3 * 2 * (h * in_proj + kernel * (2 * qk_dim + v_dim) + nv * vd * vd * 4 + h * v_dim);
    self_attn = gdn * n_gdn + (nl > 0 ? self_attn / nl : 0) * (nl - n_gdn);
  }
  const double vocab = padded_vocab(a.vocab, in.vocab_divisor, in.tp);
  const double routed =
      latent <= 0 ? moe_ffn * static_cast<double>(k) * fe : moe_ffn * static_cast<double>(k) * fe * latent / h + 2 * latent;  // :1530
  const double m = static_cast<double>(mtp);
  double total = 3 * 2 * h *
                     (static_cast<double>(a.ffn) * fe * static_cast<double>(n_dense) + routed * static_cast<double>(n_moe) +
                      shared * fe * static_cast<double>(n_moe))  // :1542 MLP
                 + self_attn                                     // self attention
                 + 3 * 2 * m * (3 * h + 2 * h * h)               // MTP norms and projection
                 + 3 * 2 * h * vocab * (m + 1);                  // logits
  total += s * core;                                             // :1584 effective_seqlen_squared_sum x dsv4 core
  return total;
}

// flop_utils.py:849 hybrid_flops, per token.
std::variant<double, std::string> hybrid(const FlopsInput& in) {
  const memory::Architecture& a = *in.arch;
  const FlopsExtras& x = *in.extras;
  const double s = static_cast<double>(in.seq), h = static_cast<double>(a.hidden);
  const long long mtp = x.mtp_layers >= 0 ? x.mtp_layers : a.mtp_layers;
  double n_attn = static_cast<double>(a.attention_layers), n_mamba = static_cast<double>(a.mamba_layers);
  double n_mlp = static_cast<double>(a.dense_mlp_layers), n_moe = static_cast<double>(a.moe_layers);
  double n_gdn = static_cast<double>(a.linear_attention_layers);
  // The MTP depths' blocks join the pattern (models/hybrid/hybrid_provider.py:198-210: one copy per
  // depth, at least one when the layer is repeated).
  if (!x.mtp_pattern.empty() && mtp > 0) {
    const double copies = static_cast<double>(std::max(1LL, mtp));
    for (char c : x.mtp_pattern) {
      switch (c) {
        case '*':
          n_attn += copies;
          break;
        case 'M':
          n_mamba += copies;
          break;
        case '-':
          n_mlp += copies;
          break;
        case 'E':
          n_moe += copies;
          break;
        case 'G':
          n_gdn += copies;
          break;
        default:
          return std::string("mtp_pattern letter '") + c + "' is not one of * M - E G";
      }
    }
  }
  if (!x.attention_variant.empty()) return "its attention (" + x.attention_variant + ") is one the FLOPs count of kbq does not model";
  const double heads = static_cast<double>(a.heads), g = static_cast<double>(a.kv_heads > 0 ? a.kv_heads : a.heads);
  const double p = a.head_dim > 0 && h > 0 ? static_cast<double>(a.head_dim) * heads / h : 1;
  const double sf = a.mlp_kind == memory::MlpKind::kGated ? 1.5 : 1.0;
  // Per token (the code's batch_size x seq_len is 1 x s, divided out).
  const double attn = heads > 0 ? 4 * h * p * (h + h * (g / heads)) + 2 * h * p * s : 0;  // :734 attn_layer_flops
  const double mlp = 4 * (static_cast<double>(a.ffn) / h) * sf * h * h;                   // :703 mlp_layer_flops
  const double d_in = 2 * h;                                                              // :801 mamba_layer_flops
  const double mamba = 2 * h * (2 * d_in + 2 * static_cast<double>(a.mamba_groups * a.mamba_state) + static_cast<double>(a.mamba_heads)) +
                       7 * d_in * static_cast<double>(a.mamba_state) + 2 * d_in * h;
  const double latent = static_cast<double>(a.moe_latent), moe_ffn = static_cast<double>(a.moe_ffn > 0 ? a.moe_ffn : a.ffn);
  const double k = static_cast<double>(a.experts_per_token);
  const double routed = latent <= 0 ? 4 * h * moe_ffn * k * sf : 4 * latent * moe_ffn * k * sf + 4 * h * latent;  // :708
  const double moe = routed + 4 * h * static_cast<double>(a.shared_expert_ffn) * sf;
  const double qk_dim = static_cast<double>(a.gdn_key_dim * a.gdn_key_heads),
               v_dim = static_cast<double>(a.gdn_value_dim * a.gdn_value_heads);
  const double nv = static_cast<double>(a.gdn_value_heads), vd = static_cast<double>(a.gdn_value_dim);
  const double kernel = static_cast<double>(a.conv_kernel > 0 ? a.conv_kernel : 4);
  const double gdn = 2 * (h * (2 * qk_dim + 2 * v_dim + 2 * nv) + kernel * (2 * qk_dim + v_dim) + nv * vd * vd * 4 + h * v_dim);  // :824
  const double vocab = padded_vocab(a.vocab, in.vocab_divisor, in.tp);
  const double fwd = n_attn * attn + n_mlp * mlp + n_mamba * mamba + n_moe * moe + n_gdn * gdn +
                     2 * h * vocab * (1 + static_cast<double>(mtp));  // :935 logits
  return fwd * 3;
}

// flop_utils.py:983-1010: LoRA of the checkpoints and datasets the code
// names, per padded token of a full pack, without the attention term of the
// packed samples (Σ s_i² comes from the packed file).
std::variant<double, std::string> lora_frozen(const FlopsInput& in) {
  const memory::Architecture& a = *in.arch;
  if (a.experts > 0 || a.mla || a.mamba_layers > 0) return std::string("the LoRA count of the code is for a dense GQA transformer");
  const double h = static_cast<double>(a.hidden), L = static_cast<double>(a.layers), n = static_cast<double>(a.heads);
  const double g = static_cast<double>(a.kv_heads > 0 ? a.kv_heads : a.heads);
  const double frozen = L * h * h * (12 + 12 * g / n + 18 * static_cast<double>(a.ffn) / h + 6 * static_cast<double>(a.vocab) / (L * h));
  return frozen * (2.0 / 3.0);
}

}  // namespace

std::variant<FlopsExtras, std::string> extras_from_facts(const std::map<std::string, std::string, std::less<>>& fields,
                                                         const std::string& arch_override) {
  FlopsExtras x;
  auto number = [](const std::string& field, const std::string& v, long long& into) -> std::string {
    if (!to_int(v, into) || into < 0) return "flops-arch.tsv: " + field + " is '" + v + "', not a whole number";
    return {};
  };
  std::map<std::string, std::string, std::less<>> all = fields;
  for (size_t at = 0; at < arch_override.size();) {  // "field=value,field=value"
    size_t end = arch_override.find(',', at);
    if (end == std::string::npos) end = arch_override.size();
    const std::string part = arch_override.substr(at, end - at);
    const auto eq = part.find('=');
    if (eq == std::string::npos) return "model qualifier change '" + part + "' is not field=value";
    all[part.substr(0, eq)] = part.substr(eq + 1);
    at = end + 1;
  }
  for (const auto& [field, value] : all) {
    std::string err;
    if (field == "window") {
      err = number(field, value, x.window);
    } else if (field == "window_skip_freq") {
      err = number(field, value, x.window_skip_freq);
    } else if (field == "attention_output_gate") {
      if (value != "true" && value != "false") err = "flops-arch.tsv: attention_output_gate is '" + value + "', not true or false";
      x.attention_output_gate = value == "true";
    } else if (field == "mtp_pattern") {
      x.mtp_pattern = value;
    } else if (field == "mtp_layers") {
      err = number(field, value, x.mtp_layers);
    } else if (field == "attention_variant") {
      x.attention_variant = value;
    } else if (field == "dsv4_compress_ratios") {
      for (size_t at = 0; at <= value.size();) {
        size_t end = value.find(',', at);
        if (end == std::string::npos) end = value.size();
        long long r = 0;
        if (!to_int(value.substr(at, end - at), r))
          return "flops-arch.tsv: dsv4_compress_ratios holds '" + value.substr(at, end - at) + "'";
        x.dsv4_compress_ratios.push_back(r);
        at = end + 1;
      }
    } else {
      struct Int {
        const char* name;
        long long FlopsExtras::*member;
      };
      static const Int ints[] = {{"dsv4_q_lora_rank", &FlopsExtras::dsv4_q_lora_rank},
                                 {"dsv4_qk_head_dim", &FlopsExtras::dsv4_qk_head_dim},
                                 {"dsv4_qk_rope_head_dim", &FlopsExtras::dsv4_qk_rope_head_dim},
                                 {"dsv4_v_head_dim", &FlopsExtras::dsv4_v_head_dim},
                                 {"dsv4_o_lora_rank", &FlopsExtras::dsv4_o_lora_rank},
                                 {"dsv4_o_groups", &FlopsExtras::dsv4_o_groups},
                                 {"dsv4_window", &FlopsExtras::dsv4_window},
                                 {"dsv4_index_heads", &FlopsExtras::dsv4_index_heads},
                                 {"dsv4_index_head_dim", &FlopsExtras::dsv4_index_head_dim},
                                 {"dsv4_index_topk", &FlopsExtras::dsv4_index_topk}};
      const Int* f = nullptr;
      for (const auto& i : ints)
        if (field == i.name) f = &i;
      if (!f) return "flops-arch.tsv: unknown field '" + field + "'";
      err = number(field, value, x.*(f->member));
    }
    if (!err.empty()) return err;
  }
  return x;
}

std::variant<double, std::string> flops_per_token(const FlopsInput& in) {
  if (!in.arch || !in.extras) return std::string("no architecture");
  const memory::Architecture& a = *in.arch;
  if (in.seq <= 0) return std::string("no sequence length");
  if (a.layers <= 0 || a.hidden <= 0 || a.vocab <= 0) return std::string("the model's layers, hidden size or vocabulary are not known");
  std::variant<double, std::string> r = in.mode == FlopsMode::kLoraFrozen ? lora_frozen(in)
                                        : a.mamba_layers > 0              ? hybrid(in)
                                                                          : transformer(in);
  if (auto* v = std::get_if<double>(&r); v && !(std::isfinite(*v) && *v > 0)) return std::string("the count is not a positive number");
  return r;
}

}  // namespace kbq::perf
