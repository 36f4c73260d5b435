// Per-GPU memory model: parameter counting, sharding, optimizer state,
// activations under the pipeline schedule, overheads, and the reader of
// kb-sources/data/memory.tsv. docs/memory.md states each formula with its
// source; the comments here name the term each line computes.
#include "query/memory/memory.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <utility>
#include <vector>

namespace kbq::memory {

namespace {

using i64 = std::int64_t;

double d(i64 v) { return static_cast<double>(v); }

// ---------------------------------------------------------------------------
// Spelling tables
// ---------------------------------------------------------------------------

template <typename E>
struct Spelling {
  E value;
  std::string_view name;
};

constexpr std::array<Spelling<Module>, 9> kModules{{
    {Module::kCoreAttn, "core_attn"},
    {Module::kAttnProj, "attn_proj"},
    {Module::kLayernorm, "layernorm"},
    {Module::kMlaUpProj, "mla_up_proj"},
    {Module::kMlp, "mlp"},
    {Module::kMoe, "moe"},
    {Module::kMoeAct, "moe_act"},
    {Module::kSharedExperts, "shared_experts"},
    {Module::kExpertFc1, "expert_fc1"},
}};

constexpr std::array<Spelling<LoraTarget>, 11> kLoraTargets{{
    {LoraTarget::kQkv, "linear_qkv"},
    {LoraTarget::kProj, "linear_proj"},
    {LoraTarget::kFc1, "linear_fc1"},
    {LoraTarget::kFc2, "linear_fc2"},
    {LoraTarget::kMambaIn, "in_proj"},
    {LoraTarget::kMambaOut, "out_proj"},
    {LoraTarget::kQProj, "linear_q_proj"},
    {LoraTarget::kQDownProj, "linear_q_down_proj"},
    {LoraTarget::kQUpProj, "linear_q_up_proj"},
    {LoraTarget::kKvDownProj, "linear_kv_down_proj"},
    {LoraTarget::kKvUpProj, "linear_kv_up_proj"},
}};

constexpr std::array<Spelling<Mode>, 3> kModes{{{Mode::kFull, "full"}, {Mode::kLora, "lora"}, {Mode::kDora, "dora"}}};

constexpr std::array<Spelling<Precision>, 4> kPrecisions{
    {{Precision::kBf16, "bf16"}, {Precision::kFp8, "fp8"}, {Precision::kMxfp8, "mxfp8"}, {Precision::kNvfp4, "nvfp4"}}};

constexpr std::array<Spelling<DType>, 4> kDTypes{
    {{DType::kFp32, "fp32"}, {DType::kBf16, "bf16"}, {DType::kFp16, "fp16"}, {DType::kFp8, "fp8"}}};

constexpr std::array<Spelling<Optimizer>, 2> kOptimizers{{{Optimizer::kAdam, "adam"}, {Optimizer::kMuon, "muon"}}};

constexpr std::array<Spelling<Recompute>, 3> kRecomputes{
    {{Recompute::kNone, "none"}, {Recompute::kSelective, "selective"}, {Recompute::kFull, "full"}}};

constexpr std::array<Spelling<RecomputeMethod>, 2> kRecomputeMethods{
    {{RecomputeMethod::kUniform, "uniform"}, {RecomputeMethod::kBlock, "block"}}};

constexpr std::array<Spelling<Rank>, 3> kRanks{
    {{Rank::kOnly, "only pipeline rank"}, {Rank::kFirst, "first pipeline rank"}, {Rank::kLast, "last pipeline rank"}}};

template <typename E, std::size_t N>
std::string_view name_of(const std::array<Spelling<E>, N>& table, E v) {
  for (const auto& s : table)
    if (s.value == v) return s.name;
  return "?";
}

template <typename E, std::size_t N>
std::optional<E> parse_of(const std::array<Spelling<E>, N>& table, std::string_view name) {
  for (const auto& s : table)
    if (s.name == name) return s.value;
  return std::nullopt;
}

// ---------------------------------------------------------------------------
// Parameter counts per block (biases are not counted; docs/memory.md)
// ---------------------------------------------------------------------------

// fc1 output channels per intermediate channel: gate + up for gated MLPs.
double fc1_width(const Architecture& a) { return a.mlp_kind == MlpKind::kGated ? 2.0 : 1.0; }

// One MLP of intermediate size f on input width w: fc1 (w -> fc1_width*f) and fc2 (f -> w).
double mlp_params(const Architecture& a, double w, double f) { return (fc1_width(a) + 1.0) * w * f; }

// Softmax attention block (GQA/MHA or MLA), with its pre-norm.
double attention_params(const Architecture& a) {
  const double h = d(a.hidden), heads = d(a.heads);
  if (a.mla) {
    const double qk = d(a.qk_head_dim + a.qk_rope_head_dim);
    // Megatron estimator: q lora (+ q norm) or direct q; kv lora + kv norm + rotary k; output projection.
    const double q = a.q_lora_rank > 0 ? d(a.q_lora_rank) * (h + heads * qk + 1.0) : h * heads * qk;
    const double kv = d(a.kv_lora_rank) * (h + heads * d(a.qk_head_dim + a.v_head_dim) + 1.0) + h * d(a.qk_rope_head_dim);
    const double o = heads * d(a.v_head_dim) * h;
    return q + kv + o + h;
  }
  const double dh = d(a.head_dim);
  // q, k, v projections (a + 2g heads of d channels) and the output projection (a*d -> h).
  return h * dh * (heads + 2.0 * d(a.kv_heads)) + heads * dh * h + h;
}

// Mamba-2 block: in_proj to (z, x, B, C, dt), depthwise conv with bias,
// A_log / D / dt_bias per head, gated norm, out_proj, and the pre-norm.
double mamba_params(const Architecture& a) {
  const double h = d(a.hidden);
  const double inner = d(a.mamba_heads * a.mamba_head_dim);
  const double bc = 2.0 * d(a.mamba_groups * a.mamba_state);
  const double nh = d(a.mamba_heads);
  const double conv_dim = inner + bc;
  return h * (2.0 * inner + bc + nh) + conv_dim * (d(a.conv_kernel) + 1.0) + 3.0 * nh + inner + inner * h + h;
}

// Gated DeltaNet block: in_proj to (q, k, v, z) and (beta, alpha), conv over
// q/k/v, A_log and dt_bias per value head, gated norm, out_proj, pre-norm.
double gdn_params(const Architecture& a) {
  const double h = d(a.hidden);
  const double qk = d(a.gdn_key_heads * a.gdn_key_dim);
  const double v = d(a.gdn_value_heads * a.gdn_value_dim);
  const double vh = d(a.gdn_value_heads);
  return h * (2.0 * qk + 2.0 * v + 2.0 * vh) + (2.0 * qk + v) * d(a.conv_kernel) + 2.0 * vh + d(a.gdn_value_dim) + v * h + h;
}

double dense_mlp_block_params(const Architecture& a) { return mlp_params(a, d(a.hidden), d(a.ffn)) + d(a.hidden); }

// Width the routed experts work in: the latent size for latent MoE, else h.
double expert_width(const Architecture& a) { return a.moe_latent > 0 ? d(a.moe_latent) : d(a.hidden); }

// MoE block without the routed experts: router, shared expert(s), latent projections, pre-norm.
double moe_non_expert_params(const Architecture& a) {
  const double h = d(a.hidden);
  double p = h * d(a.experts) + h;
  if (a.shared_expert_ffn > 0) p += mlp_params(a, h, d(a.shared_expert_ffn));
  if (a.moe_latent > 0) p += 2.0 * h * d(a.moe_latent);  // down to latent, back up to h
  return p;
}

double one_expert_params(const Architecture& a) { return mlp_params(a, expert_width(a), d(a.moe_ffn)); }
double moe_expert_params(const Architecture& a) { return d(a.experts) * one_expert_params(a); }

// The decoder block kind an MTP depth uses: attention + (MoE if the model has MoE layers, else dense MLP),
// plus its input norms (2h), the projection of [embedding; hidden] (2h -> h) and a final norm.
double mtp_dense_params(const Architecture& a) {
  const double h = d(a.hidden);
  const double ffn_part = a.moe_layers > 0 ? moe_non_expert_params(a) : dense_mlp_block_params(a);
  return attention_params(a) + ffn_part + 2.0 * h * h + 3.0 * h;
}
double mtp_expert_params(const Architecture& a) { return a.moe_layers > 0 ? moe_expert_params(a) : 0.0; }
double mtp_weight_depths(const Architecture& a) { return a.mtp_shared ? std::min<double>(1.0, d(a.mtp_layers)) : d(a.mtp_layers); }

// ---------------------------------------------------------------------------
// Pipeline ranks
// ---------------------------------------------------------------------------

// The blocks one pipeline rank holds (counts may be fractional: an even split of the mix).
struct Stage {
  Rank rank = Rank::kOnly;
  i64 index = 0;         // pipeline rank index
  double layers = 0;     // decoder layers, all virtual chunks
  double attention = 0;  // softmax attention blocks
  double linear_attention = 0;
  double mamba = 0;
  double dense_mlp = 0;
  double moe = 0;
  bool embedding = false;            // holds the input embedding (and extra encoders)
  bool output = false;               // holds the output layer, logits and MTP
  std::vector<double> chunk_layers;  // decoder layers of each virtual chunk (VP entries); empty = layers / VP each
};

i64 ceil_div(i64 a, i64 b) { return (a + b - 1) / b; }

// Fills the block counts of a stage holding `n` layers; `first` places the leading dense layers there.
void compose(const Architecture& a, Stage& s, double n, bool first) {
  const double L = d(a.layers);
  s.layers = n;
  s.attention = n * d(a.attention_layers) / L;
  s.linear_attention = n * d(a.linear_attention_layers) / L;
  s.mamba = n * d(a.mamba_layers) / L;
  const bool plain = a.dense_mlp_layers + a.moe_layers == a.layers;  // one MLP-type block per layer
  const double D = d(a.first_dense_layers);
  if (plain && a.first_dense_layers > 0 && a.first_dense_layers < a.layers) {
    const double rest_dense_share = (d(a.dense_mlp_layers) - D) / (L - D);
    const double lead = first ? std::min(D, n) : 0.0;
    s.dense_mlp = lead + (n - lead) * rest_dense_share;
    s.moe = n - s.dense_mlp;
  } else {
    s.dense_mlp = n * d(a.dense_mlp_layers) / L;
    s.moe = n * d(a.moe_layers) / L;
  }
}

std::vector<Stage> stages(const Architecture& a, const Layout& l) {
  std::vector<Stage> out;
  out.reserve(3);  // the first rank, the second, the last
  if (l.pp == 1) {
    Stage s;
    s.rank = Rank::kOnly;
    compose(a, s, d(a.layers), true);
    s.embedding = s.output = true;
    out.push_back(s);
    return out;
  }
  if (l.embedding_in_split || l.loss_in_split) {
    // Megatron-Core account_for_{embedding,loss}_in_pipeline_split: the embedding and the loss each take one
    // layer's place, and layers + those places split evenly over the PP x VP virtual stages; rank r holds
    // virtual stages r, r + PP, ... (so the first rank's first chunk and the last rank's last chunk are lighter).
    const i64 vp = std::max<i64>(1, l.vp);
    const double per = d(a.layers + (l.embedding_in_split ? 1 : 0) + (l.loss_in_split ? 1 : 0)) / d(l.pp * vp);
    auto rank_stage = [&](Rank rank, i64 index) {
      Stage s;
      s.rank = rank;
      s.index = index;
      s.chunk_layers.assign(static_cast<std::size_t>(vp), per);
      if (index == 0 && l.embedding_in_split) s.chunk_layers.front() = std::max(0.0, per - 1.0);
      if (index == l.pp - 1 && l.loss_in_split) s.chunk_layers.back() = std::max(0.0, per - 1.0);
      double n = 0;
      for (double c : s.chunk_layers) n += c;
      compose(a, s, n, index == 0);
      return s;
    };
    Stage first = rank_stage(Rank::kFirst, 0);
    first.embedding = true;
    out.push_back(first);
    if (l.pp > 2) out.push_back(rank_stage(Rank::kFirst, 1));
    Stage last = rank_stage(Rank::kLast, l.pp - 1);
    last.output = true;
    out.push_back(last);
    return out;
  }
  // Megatron: explicit first/last stage counts, the remaining layers split evenly over the other ranks.
  const i64 fixed_first = l.first_stage_layers, fixed_last = l.last_stage_layers;
  const i64 other_ranks = l.pp - (fixed_first > 0 ? 1 : 0) - (fixed_last > 0 ? 1 : 0);
  const i64 other_layers = a.layers - fixed_first - fixed_last;
  const i64 each = other_ranks > 0 ? ceil_div(other_layers, other_ranks) : 0;
  Stage first;
  first.rank = Rank::kFirst;
  first.index = 0;
  compose(a, first, d(fixed_first > 0 ? fixed_first : each), true);
  first.embedding = true;
  out.push_back(first);
  if (l.pp > 2 && each > 0) {  // the second rank: most in-flight micro batches after the first
    Stage mid;
    mid.rank = Rank::kFirst;
    mid.index = 1;
    compose(a, mid, d(each), false);
    out.push_back(mid);
  }
  Stage last;
  last.rank = Rank::kLast;
  last.index = l.pp - 1;
  compose(a, last, d(fixed_last > 0 ? fixed_last : each), false);
  last.output = true;
  out.push_back(last);
  return out;
}

// Layer-micro-batches of activations pipeline rank `s` holds at its peak.
// 1F1B keeps min(pp - r, micro batches) micro batches of all its layers. The
// interleaved schedule runs (pp - r - 1) * 2 + (vp - 1) * pp forwards before
// its first backward (Megatron-Core's warm-up count), then one more; forward
// k runs chunk (k / pp) % vp (micro batches go through the chunks in groups of
// pp), so each forward holds that chunk's layers: a lighter chunk (the
// embedding's or the loss's place in the split) holds less.
double layer_micro_batches(const Layout& l, const Training& t, const Stage& s) {
  if (l.pp == 1) return s.layers;
  double micro_batches = std::numeric_limits<double>::infinity();
  if (t.global_batch > 0) micro_batches = std::max(1.0, d(t.global_batch) / (d(t.micro_batch) * d(l.dp())));
  if (l.vp <= 1) return s.layers * std::min(d(l.pp - s.index), micro_batches);
  const i64 warm_up = (l.pp - s.index - 1) * 2 + (l.vp - 1) * l.pp;
  const double forwards = std::min(d(warm_up + 1), micro_batches * d(l.vp));
  const i64 held = static_cast<i64>(std::ceil(forwards));
  double sum = 0;
  for (i64 k = 0; k < held; ++k) {
    const auto chunk = static_cast<std::size_t>((k / l.pp) % l.vp);
    sum += s.chunk_layers.empty() ? s.layers / d(l.vp) : s.chunk_layers[chunk];
  }
  return sum * forwards / d(held);
}

// ---------------------------------------------------------------------------
// Activations (bytes per token of one micro batch, before the TP split)
// ---------------------------------------------------------------------------

// Saved activations of one block, per token. `replicated` is held in full by
// every TP rank unless sequence parallelism splits it; `split` is divided by
// TP; `full` is held in full by every TP rank (MLA's duplicated latents).
struct Act {
  double replicated = 0;
  double split = 0;
  double full = 0;
  Act& operator+=(const Act& o) {
    replicated += o.replicated;
    split += o.split;
    full += o.full;
    return *this;
  }
  Act scaled(double k) const { return {replicated * k, split * k, full * k}; }
};

// What the activation formulas need to know besides the architecture.
struct ActCtx {
  double act = 0;     // bytes per saved activation element
  double lin = 0;     // bytes per saved linear-layer input (FP8/FP4 recipes save quantized inputs)
  double mask = 0;    // bytes per dropout-mask element, 0 without dropout
  double stats = 0;   // bytes per softmax statistic
  double router = 0;  // bytes per router entry
  double seq = 0;     // sequence length seen by attention (s / cp)
  bool flash = true;
  ModuleSet drop;      // modules whose activations are not kept (recompute or offload)
  LoraTargets saving;  // linear layers that save their input for the weight gradient: all when trained,
                       // only the adapted ones under LoRA/DoRA, none of the decoder when it is frozen
};

// Whether the input of linear layer `t` is saved: Transformer Engine keeps a
// linear layer's input only for its weight gradient (backward_needs_input =
// weight.requires_grad, transformer_engine/pytorch/module/linear.py), and a
// LoRA adapter keeps the same input for its own.
bool saves(const ActCtx& c, LoraTarget t) { return c.saving.has(t); }

// Whether an attention block's first linear layer(s) save the norm output.
bool attention_saves_input(const Architecture& a, const ActCtx& c) {
  if (a.mla) return saves(c, LoraTarget::kQProj) || saves(c, LoraTarget::kQDownProj) || saves(c, LoraTarget::kKvDownProj);
  return saves(c, LoraTarget::kQkv);
}

// Input of the block (always kept: the residual stream entering its pre-norm).
Act block_input(const Architecture& a, const ActCtx& c) { return {c.act * d(a.hidden), 0, 0}; }

// Norm output feeding the block's first linear layer, when that layer saves its input (`saved`).
Act norm_output(const Architecture& a, const ActCtx& c, bool saved) {
  if (c.drop.has(Module::kLayernorm) || !saved) return {};
  return {c.lin * d(a.hidden), 0, 0};
}

// Softmax attention block (Korthikanti et al. 2022, Table 1 / Section 4.1, generalized to GQA, MLA and flash attention).
Act attention_act(const Architecture& a, const ActCtx& c) {
  const double heads = d(a.heads), h = d(a.hidden);
  Act r = block_input(a, c);
  r += norm_output(a, c, attention_saves_input(a, c));
  double out_dim = heads * d(a.head_dim);  // channels of the attention output (projection input)
  if (a.mla) {
    out_dim = heads * d(a.v_head_dim);
    // Latents from the duplicated down projections: q latent and its norm, kv latent (+ rotary key) and its norm.
    const double q_up_in = saves(c, LoraTarget::kQUpProj) ? c.lin : 0.0;
    const double kv_up_in = saves(c, LoraTarget::kKvUpProj) ? c.lin : 0.0;
    const double q_latent = a.q_lora_rank > 0 ? c.act * d(a.q_lora_rank) + q_up_in * d(a.q_lora_rank) : 0.0;
    const double kv_latent = c.act * d(a.kv_lora_rank + a.qk_rope_head_dim) + kv_up_in * d(a.kv_lora_rank);
    r.full += q_latent + kv_latent;
    if (!c.drop.has(Module::kMlaUpProj)) {  // up-projected q, k (nope + rope) and v
      r.split += c.act * heads * (2.0 * d(a.qk_head_dim + a.qk_rope_head_dim) + d(a.v_head_dim));
    }
  } else {
    r.split += c.act * d(a.head_dim) * (heads + 2.0 * d(a.kv_heads));  // q, k, v
  }
  if (!c.drop.has(Module::kCoreAttn)) {
    if (c.flash) {
      r.split += c.stats * heads;  // log-sum-exp per head
    } else {
      // softmax output (act bytes), dropout mask and dropout output over a x s scores per token
      const double per_score = c.act + (c.mask > 0 ? c.mask + c.act : 0.0);
      r.split += per_score * heads * c.seq;
    }
  }
  // Output projection input: flash attention keeps its output for its own backward even when the projection is frozen.
  if (!c.drop.has(Module::kAttnProj) && (c.flash || saves(c, LoraTarget::kProj))) r.split += c.lin * out_dim;
  r.replicated += c.mask * h;  // dropout mask after the projection
  return r;
}

// Mamba-2 block on Megatron's memory-efficient path (mamba_split_conv1d_scan_combined,
// state-spaces/mamba ssd_combined.py): norm output, the in_proj output (z, x, B, C, dt)
// and the scan output are kept; the conv output is recomputed in the backward; the
// gated-norm output is kept as the out_proj input.
Act mamba_act(const Architecture& a, const ActCtx& c) {
  const double inner = d(a.mamba_heads * a.mamba_head_dim);
  const double bc = 2.0 * d(a.mamba_groups * a.mamba_state);
  Act r = block_input(a, c);
  r += norm_output(a, c, saves(c, LoraTarget::kMambaIn));
  const double out_in = saves(c, LoraTarget::kMambaOut) ? c.lin : 0.0;  // gated-norm output = out_proj input
  r.split += c.act * (2.0 * inner + bc + d(a.mamba_heads)) + c.act * inner + out_in * inner;
  return r;
}

// Gated DeltaNet block: norm output, in_proj outputs (q, k, v, z, beta, alpha), conv output,
// recurrence output and gated-norm output (out_proj input).
Act gdn_act(const Architecture& a, const ActCtx& c) {
  const double qk = d(a.gdn_key_heads * a.gdn_key_dim);
  const double v = d(a.gdn_value_heads * a.gdn_value_dim);
  Act r = block_input(a, c);
  r += norm_output(a, c, saves(c, LoraTarget::kMambaIn));
  const double out_in = saves(c, LoraTarget::kMambaOut) ? c.lin : 0.0;  // gated-norm output = out_proj input
  r.split += c.act * (2.0 * qk + 2.0 * v + 2.0 * d(a.gdn_value_heads)) + c.act * (2.0 * qk + v) + c.act * v + out_in * v;
  return r;
}

// One MLP's internals per token passing through it: activation-function input
// (fc1 output) and output (fc2 input). `drop_all` / `drop_act` model
// recomputing the whole MLP / only its activation function.
double mlp_internal(const Architecture& a, const ActCtx& c, double f, bool drop_all, bool drop_act) {
  if (drop_all) return 0.0;
  double r = c.act * fc1_width(a) * f;
  if (!drop_act && saves(c, LoraTarget::kFc2)) r += c.lin * f;  // fc2 input
  return r;
}

// Dense MLP block (Korthikanti: fc1 input, activation input and output, dropout mask).
Act dense_mlp_act(const Architecture& a, const ActCtx& c) {
  Act r = block_input(a, c);
  r += norm_output(a, c, saves(c, LoraTarget::kFc1));
  r.split += mlp_internal(a, c, d(a.ffn), c.drop.has(Module::kMlp), false);
  r.replicated += c.mask * d(a.hidden);
  return r;
}

// MoE block: router logits and probabilities per expert; each of the top-k
// routed copies of a token keeps its expert fc1 input, activation input and
// output (Megatron applies the routing probability inside the activation, so
// the expert output is not kept for the combine); shared experts as a dense
// MLP; latent projections.
Act moe_act(const Architecture& a, const ActCtx& c) {
  Act r = block_input(a, c);
  r += norm_output(a, c, saves(c, LoraTarget::kFc1));  // router and dispatched tokens
  r.replicated += c.mask * d(a.hidden);
  if (c.drop.has(Module::kMoe)) return r;
  r.replicated += 2.0 * c.router * d(a.experts);  // router logits and probabilities
  const double w = expert_width(a);
  const bool fc1_in = saves(c, LoraTarget::kFc1);
  if (a.moe_latent > 0 && fc1_in) r.split += c.lin * w;  // latent token (input of the routed experts)
  double routed = 0;
  if (!c.drop.has(Module::kExpertFc1) && fc1_in) routed += c.lin * w;
  routed += mlp_internal(a, c, d(a.moe_ffn), false, c.drop.has(Module::kMoeAct));
  r.split += d(a.experts_per_token) * routed;
  if (a.shared_expert_ffn > 0) r.split += mlp_internal(a, c, d(a.shared_expert_ffn), c.drop.has(Module::kSharedExperts), false);
  return r;
}

// The per-token activations of one block of each kind under one context,
// which no stage changes: each computed at its first use, then reused by
// every stage of an estimate (the same function of the same inputs, so the
// same bits as computing it again).
class BlockActs {
 public:
  BlockActs(const Architecture& a, const ActCtx& c) : a_(a), c_(c) {}
  const ActCtx& ctx() const { return c_; }
  // Per-token activations of all blocks on a stage (before dividing by layers).
  Act of(const Stage& s) {
    Act r;
    if (s.attention > 0) r += block(Kind::kAttention, attention_act).scaled(s.attention);
    if (s.linear_attention > 0) r += block(Kind::kGdn, gdn_act).scaled(s.linear_attention);
    if (s.mamba > 0) r += block(Kind::kMamba, mamba_act).scaled(s.mamba);
    if (s.dense_mlp > 0) r += block(Kind::kDenseMlp, dense_mlp_act).scaled(s.dense_mlp);
    if (s.moe > 0) r += block(Kind::kMoe, moe_act).scaled(s.moe);
    return r;
  }

 private:
  enum Kind : std::size_t { kAttention, kGdn, kMamba, kDenseMlp, kMoe, kKinds };
  const Act& block(Kind k, Act (*act)(const Architecture&, const ActCtx&)) {
    if (!known_[k]) {
      acts_[k] = act(a_, c_);
      known_[k] = true;
    }
    return acts_[k];
  }
  const Architecture& a_;
  const ActCtx c_;
  std::array<Act, kKinds> acts_{};
  std::array<bool, kKinds> known_{};
};

// Bytes per GPU for `tokens` tokens of activations `x`.
double per_gpu(const Act& x, double tokens, const Layout& l) {
  const double tp = d(l.tp);
  return tokens * (x.replicated / (l.sp ? tp : 1.0) + x.split / tp + x.full);
}

// ---------------------------------------------------------------------------
// Bytes per element
// ---------------------------------------------------------------------------

double dtype_bytes(DType t, const Params& p) {
  switch (t) {
    case DType::kFp32:
      return p.bytes_fp32;
    case DType::kBf16:
      return p.bytes_bf16;
    case DType::kFp16:
      return p.bytes_fp16;
    case DType::kFp8:
      return p.bytes_fp8;
  }
  return p.bytes_fp32;
}

// One quantized copy of an element in the training precision (data + scales).
double quantized_bytes(Precision pr, const Params& p) {
  switch (pr) {
    case Precision::kBf16:
      return p.bytes_bf16;
    case Precision::kFp8:
      return p.bytes_fp8;
    case Precision::kMxfp8:
      return p.bytes_fp8 + p.mxfp8_scale_bytes;
    case Precision::kNvfp4:
      return p.bytes_fp4 + p.nvfp4_scale_bytes;
  }
  return p.bytes_bf16;
}

// Bytes per decoder-layer weight: BF16 weights, plus the rowwise and
// columnwise quantized copies Transformer Engine caches for FP8/FP4 GEMMs
// (one copy for per-tensor FP8 on GPUs that run FP8 GEMMs in any layout);
// with FP8/FP4 parameters the quantized copies are the weights.
double layer_weight_bytes(const Training& t, const Layout& l, const Params& p) {
  if (t.mode != Mode::kFull || t.precision == Precision::kBf16) return p.bytes_bf16;
  const bool one_copy = t.precision == Precision::kFp8 && l.any_layout_fp8_gemm;
  const double copies = (one_copy ? 1.0 : p.low_precision_weight_copies) * quantized_bytes(t.precision, p);
  return t.low_precision_params ? copies : p.bytes_bf16 + copies;
}

// Optimizer bytes per trainable parameter on the GPU: master copy plus the
// moments, less the share of the moments offloaded to the CPU (Bridge's
// docs/training/cpu-offloading.md: "Optimizer states (Adam momentum +
// variance)"; its measured 15.3 GB saved at fraction 1.0 on Qwen3-30B-A3B TP2
// PP2 EP4 is the moments' two thirds of the optimizer state on 16 GPUs).
double optimizer_bytes(const Training& t, const Params& p) {
  double moments = dtype_bytes(t.exp_avg_dtype, p);
  if (t.optimizer == Optimizer::kAdam) moments += dtype_bytes(t.exp_avg_sq_dtype, p);
  return dtype_bytes(t.main_param_dtype, p) + moments * (1.0 - std::clamp(t.optimizer_offload, 0.0, 1.0));
}

// ---------------------------------------------------------------------------
// LoRA / DoRA adapters
// ---------------------------------------------------------------------------

// Adapter parameters for one linear layer (in -> out): A (in x r) and B (r x out), plus DoRA's magnitude (out).
double adapter(double in, double out, const Training& t) {
  double p = d(t.lora_rank) * (in + out);
  if (t.mode == Mode::kDora) p += out;
  return p;
}

struct AdapterCount {
  double dense = 0;   // adapters on TP-sharded (non-expert) layers, summed over a stage
  double expert = 0;  // adapters on routed experts, per EP rank (before the ETP split)
};

AdapterCount stage_adapters(const Architecture& a, const Layout& l, const Stage& s, const Training& t) {
  AdapterCount r;
  const double h = d(a.hidden), heads = d(a.heads);
  const auto& tg = t.lora_targets;
  double attn = 0;
  if (a.mla) {
    const double qk = d(a.qk_head_dim + a.qk_rope_head_dim);
    if (a.q_lora_rank > 0) {
      if (tg.has(LoraTarget::kQDownProj)) attn += adapter(h, d(a.q_lora_rank), t);
      if (tg.has(LoraTarget::kQUpProj)) attn += adapter(d(a.q_lora_rank), heads * qk, t);
    } else if (tg.has(LoraTarget::kQProj)) {
      attn += adapter(h, heads * qk, t);
    }
    if (tg.has(LoraTarget::kKvDownProj)) attn += adapter(h, d(a.kv_lora_rank + a.qk_rope_head_dim), t);
    if (tg.has(LoraTarget::kKvUpProj)) attn += adapter(d(a.kv_lora_rank), heads * d(a.qk_head_dim + a.v_head_dim), t);
    if (tg.has(LoraTarget::kProj)) attn += adapter(heads * d(a.v_head_dim), h, t);
  } else {
    if (tg.has(LoraTarget::kQkv)) attn += adapter(h, d(a.head_dim) * (heads + 2.0 * d(a.kv_heads)), t);
    if (tg.has(LoraTarget::kProj)) attn += adapter(heads * d(a.head_dim), h, t);
  }
  r.dense += s.attention * attn;
  auto mlp = [&](double w, double f) {
    double m = 0;
    if (tg.has(LoraTarget::kFc1)) m += adapter(w, fc1_width(a) * f, t);
    if (tg.has(LoraTarget::kFc2)) m += adapter(f, w, t);
    return m;
  };
  r.dense += s.dense_mlp * mlp(h, d(a.ffn));
  if (a.shared_expert_ffn > 0) r.dense += s.moe * mlp(h, d(a.shared_expert_ffn));
  // Routed experts: one adapter per local expert, or one shared by the EP rank's experts.
  const double adapters_per_rank = t.lora_per_expert ? d(a.experts) / d(l.ep) : 1.0;
  r.expert += s.moe * adapters_per_rank * mlp(expert_width(a), d(a.moe_ffn));
  const double inner = d(a.mamba_heads * a.mamba_head_dim);
  if (tg.has(LoraTarget::kMambaIn))
    r.dense += s.mamba * adapter(h, 2.0 * inner + 2.0 * d(a.mamba_groups * a.mamba_state) + d(a.mamba_heads), t);
  if (tg.has(LoraTarget::kMambaOut)) r.dense += s.mamba * adapter(inner, h, t);
  const double qk = d(a.gdn_key_heads * a.gdn_key_dim), v = d(a.gdn_value_heads * a.gdn_value_dim);
  if (tg.has(LoraTarget::kMambaIn)) r.dense += s.linear_attention * adapter(h, 2.0 * qk + 2.0 * v, t);
  if (tg.has(LoraTarget::kMambaOut)) r.dense += s.linear_attention * adapter(v, h, t);
  return r;
}

// The activation context of a training setup; `selective` applies selective recompute.
ActCtx act_context(const Layout& l, const Training& t, const Params& p, bool selective) {
  ActCtx c;
  c.act = p.activation_bytes;
  c.lin = t.precision == Precision::kBf16 ? p.activation_bytes : quantized_bytes(t.precision, p);
  c.mask = t.dropout ? p.dropout_mask_bytes : 0.0;
  c.stats = p.softmax_stats_bytes;
  c.router = p.router_bytes;
  c.seq = d(t.seq_length) / d(l.cp);
  c.flash = t.flash_attention;
  c.drop = t.offload_modules;
  if (t.mode == Mode::kFull)
    c.saving.bits = t.freeze_decoder ? 0u : ~0u;
  else
    c.saving = t.lora_targets;
  if (selective && t.recompute == Recompute::kSelective) {
    c.drop.bits |= t.recompute_modules.bits;
    if (t.recompute_modules.bits == 0) c.drop.add(Module::kCoreAttn);  // Megatron's default recompute_modules
  }
  return c;
}

// Tokens of one micro batch on one GPU before the TP split: CP splits the sequence.
double tokens_per_gpu(const Layout& l, const Training& t) { return d(t.seq_length) * d(t.micro_batch) / d(l.cp); }

std::string fmt_gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / kBytesPerGiB);
  return buf;
}

// ---------------------------------------------------------------------------
// One pipeline rank
// ---------------------------------------------------------------------------

// The parameters of one block of each kind: what every stage of an
// estimate multiplies by its block counts, computed once for them all.
struct BlockParams {
  explicit BlockParams(const Architecture& a)
      : attention(attention_params(a)),
        gdn(gdn_params(a)),
        mamba(mamba_params(a)),
        dense_mlp(dense_mlp_block_params(a)),
        moe_non_expert(moe_non_expert_params(a)),
        moe_expert(moe_expert_params(a)) {}
  double attention, gdn, mamba, dense_mlp, moe_non_expert, moe_expert;
};

// What the stages of one estimate share: the blocks' parameters and their
// activations with selective recompute applied (`selective`) and without
// (`plain`).
struct StageInputs {
  StageInputs(const Architecture& a, const Layout& l, const Training& t, const Params& p)
      : params(a), selective(a, act_context(l, t, p, true)), plain(a, act_context(l, t, p, false)) {}
  BlockParams params;
  BlockActs selective, plain;
};

Estimate estimate_stage(const Architecture& a, const Layout& l, const Training& t, const Params& p, const Stage& s, StageInputs& in) {
  const double tp = d(l.tp), h = d(a.hidden), V = d(a.vocab);
  const double dense_dp = d(l.world / (l.tp * l.pp));  // distributed-optimizer group for dense params: DP x CP
  const double expert_dp = d(l.expert_dp());
  const double expert_shards = d(l.ep * l.etp);

  // Parameters this GPU holds.
  const BlockParams& bp = in.params;
  double layer_dense = s.attention * bp.attention + s.linear_attention * bp.gdn + s.mamba * bp.mamba + s.dense_mlp * bp.dense_mlp +
                       s.moe * bp.moe_non_expert;
  double layer_expert = s.moe * bp.moe_expert;
  double other = 0;  // embeddings, output layer, encoders: kept in BF16
  if (s.embedding) other += V * h + a.extra_params;
  const bool mtp_here = s.output && a.mtp_layers > 0;
  if (s.output) {
    if (!a.tied_embeddings)
      other += V * h;
    else if (l.pp > 1)
      other += V * h;  // tied: the last stage keeps its own copy of the embedding as output weight
    if (mtp_here && a.tied_embeddings == false && l.pp > 1) other += V * h;  // MTP embeds tokens on the last stage
    other += h;                                                              // final norm
  }
  if (mtp_here) {
    layer_dense += mtp_weight_depths(a) * mtp_dense_params(a);
    layer_expert += mtp_weight_depths(a) * mtp_expert_params(a);
  }
  const double dense_gpu = (layer_dense + other) / tp;
  const double expert_gpu = layer_expert / expert_shards;
  const double layer_dense_gpu = layer_dense / tp;

  Estimate e;
  e.rank = s.rank;
  e.rank_index = s.index;
  const double grad_bytes = t.grad_reduce_in_fp32 ? p.bytes_fp32 : p.bytes_bf16;
  const double opt_bytes = optimizer_bytes(t, p);
  const double w_layer = layer_weight_bytes(t, l, p);
  if (t.mode == Mode::kFull && t.freeze_decoder) {
    // Frozen language model: BF16 weights only; the encoder/projector on the first stage is trained.
    const double trained = s.embedding ? a.extra_params / tp : 0.0;
    e.weights = (dense_gpu + expert_gpu) * p.bytes_bf16;
    e.grads = trained * grad_bytes;
    e.optimizer = trained * opt_bytes / (t.distributed_optimizer ? dense_dp : 1.0);
    e.trainable_on_gpu = trained;
  } else if (t.mode == Mode::kFull) {
    double w = layer_dense_gpu * w_layer + (other / tp) * p.bytes_bf16 + expert_gpu * w_layer;
    double g = (dense_gpu + expert_gpu) * grad_bytes;
    if (t.fsdp) {
      // Megatron FSDP (optim_grads_params): weights and grads sharded like the optimizer state, plus
      // the layers gathered for compute (current and prefetched).
      const double per_layer = (s.layers > 0) ? (layer_dense_gpu * w_layer + expert_gpu * w_layer) / s.layers : 0.0;
      const double per_layer_grads = (s.layers > 0) ? (layer_dense_gpu + expert_gpu) * grad_bytes / s.layers : 0.0;
      w = (layer_dense_gpu * w_layer + (other / tp) * p.bytes_bf16) / dense_dp + expert_gpu * w_layer / expert_dp +
          p.fsdp_unsharded_layers * per_layer;
      g = dense_gpu * grad_bytes / dense_dp + expert_gpu * grad_bytes / expert_dp + p.fsdp_unsharded_layers * per_layer_grads;
    }
    e.weights = w;
    e.grads = g;
    const bool shard = t.distributed_optimizer || t.fsdp;
    e.optimizer = dense_gpu * opt_bytes / (shard ? dense_dp : 1.0) + expert_gpu * opt_bytes / (shard ? expert_dp : 1.0);
    e.trainable_on_gpu = dense_gpu + expert_gpu;
  } else {
    // LoRA / DoRA: frozen base in BF16 without grads or optimizer state; adapters trained in full.
    const AdapterCount ad = stage_adapters(a, l, s, t);
    const double ad_dense = ad.dense / tp, ad_expert = ad.expert / d(l.etp);
    e.weights = (dense_gpu + expert_gpu + ad_dense + ad_expert) * p.bytes_bf16;
    e.grads = (ad_dense + ad_expert) * grad_bytes;
    const bool shard = t.distributed_optimizer;
    e.optimizer = ad_dense * opt_bytes / (shard ? dense_dp : 1.0) + ad_expert * opt_bytes / (shard ? expert_dp : 1.0);
    e.trainable_on_gpu = ad_dense + ad_expert;
  }
  e.params_on_gpu = dense_gpu + expert_gpu;

  // Activations; `plain`: nothing recomputed, the backward working set of one layer.
  const ActCtx& c = in.selective.ctx();
  const double tokens = tokens_per_gpu(l, t);
  const double layers = std::max(1.0, s.layers);
  const double per_layer_plain = per_gpu(in.plain.of(s), tokens, l) / layers;
  const double per_layer = per_gpu(in.selective.of(s), tokens, l) / layers;
  const double checkpoint = per_gpu(block_input(a, c), tokens, l);  // a layer's input

  const double layer_mbs = layer_micro_batches(l, t, s);
  const double flight = s.layers > 0 ? layer_mbs / s.layers : 1.0;  // micro batches in flight, layer-weighted
  e.in_flight = flight;
  double stored_per_layer = per_layer;  // per layer and in-flight micro batch
  double working_layers = p.backward_working_layers;
  if (t.recompute == Recompute::kFull) {
    const double n = d(std::max<i64>(1, t.recompute_layers));
    const double chunk_layers = s.layers / d(std::max<i64>(1, l.vp));
    if (t.recompute_method == RecomputeMethod::kUniform) {
      stored_per_layer = checkpoint / n;  // one input per group of n layers
      working_layers = std::max(working_layers, std::min(n, chunk_layers));
    } else {
      const double recomputed = std::min(n, chunk_layers);
      stored_per_layer = chunk_layers > 0 ? (recomputed * checkpoint + (chunk_layers - recomputed) * per_layer_plain) / chunk_layers : 0.0;
    }
  }
  // Layer-wise CPU offloading moves whole layers' activations to the host; the layer being computed stays.
  const double kept_layers = s.layers - std::min(d(t.offload_layers), std::max(0.0, s.layers - 1.0));
  double acts = kept_layers * flight * stored_per_layer + working_layers * per_layer_plain;
  if (s.output) {
    // The last pipeline chunk runs each micro batch's backward right after its forward, so its
    // logits and MTP activations exist for one micro batch at a time.
    // Final norm input and output, and the logits kept for the cross-entropy backward (vocab-parallel).
    const double logit_bytes = t.te_cross_entropy ? p.activation_bytes : p.logits_bytes;
    Act out{2.0 * c.act * h, logit_bytes * V, 0};
    acts += per_gpu(out, tokens, l);
    if (mtp_here) {
      // Each MTP depth: one decoder layer (attention + MLP/MoE), its embedding and norms (5 h), its own logits.
      Stage m;
      m.attention = 1;
      (a.moe_layers > 0 ? m.moe : m.dense_mlp) = 1;
      Act depth = in.selective.of(m);
      depth.replicated += 5.0 * c.act * h;
      depth.split += logit_bytes * V;
      acts += per_gpu(depth, tokens, l) * d(a.mtp_layers);
    }
  }
  e.activations = acts;

  const double tensors = e.weights + e.grads + e.optimizer + e.activations;
  e.overhead = (p.cuda_context_gib + p.nccl_buffers_gib) * kBytesPerGiB + p.allocator_fragmentation * tensors;
  e.total = tensors + e.overhead;
  return e;
}

bool parse_double(std::string_view s, double& out) {
  if (s.empty()) return false;
  const char* b = s.data();
  const char* e = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(b, e, out);
  return ec == std::errc() && ptr == e;
}

// The Params fields by TSV key: the one table that names the constants.
struct ParamField {
  std::string_view key;
  double Params::*field;
};

constexpr std::array<ParamField, 18> kParamFields{{
    {"bytes_fp32", &Params::bytes_fp32},
    {"bytes_bf16", &Params::bytes_bf16},
    {"bytes_fp16", &Params::bytes_fp16},
    {"bytes_fp8", &Params::bytes_fp8},
    {"bytes_fp4", &Params::bytes_fp4},
    {"mxfp8_scale_bytes", &Params::mxfp8_scale_bytes},
    {"nvfp4_scale_bytes", &Params::nvfp4_scale_bytes},
    {"low_precision_weight_copies", &Params::low_precision_weight_copies},
    {"activation_bytes", &Params::activation_bytes},
    {"dropout_mask_bytes", &Params::dropout_mask_bytes},
    {"softmax_stats_bytes", &Params::softmax_stats_bytes},
    {"router_bytes", &Params::router_bytes},
    {"logits_bytes", &Params::logits_bytes},
    {"backward_working_layers", &Params::backward_working_layers},
    {"fsdp_unsharded_layers", &Params::fsdp_unsharded_layers},
    {"cuda_context_gib", &Params::cuda_context_gib},
    {"nccl_buffers_gib", &Params::nccl_buffers_gib},
    {"allocator_fragmentation", &Params::allocator_fragmentation},
}};

std::vector<std::string_view> split_tabs(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t tab = line.find('\t', start);
    if (tab == std::string_view::npos) {
      out.push_back(line.substr(start));
      return out;
    }
    out.push_back(line.substr(start, tab - start));
    start = tab + 1;
  }
}

}  // namespace

// ---------------------------------------------------------------------------
// Public functions
// ---------------------------------------------------------------------------

std::string_view module_name(Module m) { return name_of(kModules, m); }
std::optional<Module> parse_module(std::string_view name) { return parse_of(kModules, name); }
std::string_view lora_target_name(LoraTarget t) { return name_of(kLoraTargets, t); }
std::optional<LoraTarget> parse_lora_target(std::string_view name) { return parse_of(kLoraTargets, name); }
std::string_view mode_name(Mode m) { return name_of(kModes, m); }
std::optional<Mode> parse_mode(std::string_view name) { return parse_of(kModes, name); }
std::string_view precision_name(Precision p) { return name_of(kPrecisions, p); }
std::optional<Precision> parse_precision(std::string_view name) { return parse_of(kPrecisions, name); }
std::string_view dtype_name(DType t) { return name_of(kDTypes, t); }
std::optional<DType> parse_dtype(std::string_view name) { return parse_of(kDTypes, name); }
std::string_view optimizer_name(Optimizer o) { return name_of(kOptimizers, o); }
std::optional<Optimizer> parse_optimizer(std::string_view name) { return parse_of(kOptimizers, name); }
std::string_view recompute_name(Recompute r) { return name_of(kRecomputes, r); }
std::optional<Recompute> parse_recompute(std::string_view name) { return parse_of(kRecomputes, name); }
std::string_view recompute_method_name(RecomputeMethod r) { return name_of(kRecomputeMethods, r); }
std::optional<RecomputeMethod> parse_recompute_method(std::string_view name) { return parse_of(kRecomputeMethods, name); }
std::string_view rank_name(Rank r) { return name_of(kRanks, r); }

ParamCount count_params(const Architecture& a) {
  ParamCount c;
  const double h = d(a.hidden), V = d(a.vocab);
  c.embedding = V * h;
  c.output = a.tied_embeddings ? 0.0 : V * h;
  c.attention = d(a.attention_layers) * attention_params(a) + d(a.linear_attention_layers) * gdn_params(a) +
                d(a.mamba_layers) * mamba_params(a) + h;  // + final norm
  c.dense_mlp = d(a.dense_mlp_layers) * dense_mlp_block_params(a);
  c.moe_non_expert = d(a.moe_layers) * moe_non_expert_params(a);
  c.experts = d(a.moe_layers) * moe_expert_params(a);
  const double depths = mtp_weight_depths(a);
  c.mtp = depths * (mtp_dense_params(a) + mtp_expert_params(a));
  c.extra = a.extra_params;
  c.total = c.embedding + c.output + c.attention + c.dense_mlp + c.moe_non_expert + c.experts + c.mtp + c.extra;
  const double active_experts = d(a.moe_layers) * d(a.experts_per_token) * one_expert_params(a);
  const double mtp_active = a.moe_layers > 0 ? depths * (mtp_dense_params(a) + d(a.experts_per_token) * one_expert_params(a)) : c.mtp;
  c.active = c.total - c.experts - c.mtp + active_experts + mtp_active;
  if (a.total_params > 0) c.relative_error = (c.total - a.total_params) / a.total_params;
  return c;
}

std::optional<InputError> validate(const Architecture& a) {
  auto err = [](std::string m) { return std::optional<InputError>(InputError{std::move(m)}); };
  if (a.layers <= 0 || a.hidden <= 0 || a.vocab <= 0) return err("the architecture needs layers, hidden size and vocabulary > 0");
  const i64 blocks = std::max(a.attention_layers + a.linear_attention_layers + a.mamba_layers, a.dense_mlp_layers + a.moe_layers);
  if (blocks <= 0) return err("the architecture has no attention, Mamba or MLP blocks (set attention_layers, dense_mlp_layers, ...)");
  if (a.attention_layers > 0 && a.heads <= 0) return err("attention layers need attention heads > 0");
  if (a.attention_layers > 0 && !a.mla && (a.kv_heads <= 0 || a.head_dim <= 0))
    return err("GQA/MHA attention needs kv_heads and head_dim > 0");
  if (a.attention_layers > 0 && a.mla && (a.kv_lora_rank <= 0 || a.qk_head_dim <= 0 || a.v_head_dim <= 0))
    return err("MLA needs kv_lora_rank, qk_head_dim and v_head_dim > 0");
  if (a.dense_mlp_layers > 0 && a.ffn <= 0) return err("dense MLP layers need ffn > 0");
  if (a.moe_layers > 0 && (a.experts <= 0 || a.experts_per_token <= 0 || a.moe_ffn <= 0))
    return err("MoE layers need experts, experts_per_token and moe_ffn > 0");
  if (a.experts_per_token > a.experts) return err("experts_per_token exceeds experts");
  if (a.mamba_layers > 0 && (a.mamba_heads <= 0 || a.mamba_head_dim <= 0 || a.mamba_groups <= 0 || a.mamba_state <= 0))
    return err("Mamba layers need mamba_heads, mamba_head_dim, mamba_groups and mamba_state > 0");
  if (a.linear_attention_layers > 0 && (a.gdn_key_heads <= 0 || a.gdn_value_heads <= 0 || a.gdn_key_dim <= 0 || a.gdn_value_dim <= 0))
    return err("Gated DeltaNet layers need gdn_key_heads, gdn_value_heads, gdn_key_dim and gdn_value_dim > 0");
  if (a.first_dense_layers > a.layers) return err("first_dense_layers exceeds layers");
  return std::nullopt;
}

std::optional<InputError> validate(const Layout& l, const Architecture& a) {
  auto err = [](std::string m) { return std::optional<InputError>(InputError{std::move(m)}); };
  if (l.tp < 1 || l.pp < 1 || l.vp < 1 || l.cp < 1 || l.ep < 1 || l.etp < 1 || l.world < 1)
    return err("parallel sizes and the world size must be >= 1");
  const i64 model = l.tp * l.pp * l.cp;
  if (l.world % model != 0)
    return err("world size " + std::to_string(l.world) + " is not a multiple of TP x PP x CP = " + std::to_string(model));
  const i64 expert = l.pp * l.ep * l.etp;
  if (l.world % expert != 0)
    return err("world size " + std::to_string(l.world) + " is not a multiple of PP x EP x ETP = " + std::to_string(expert));
  if (a.experts > 0 && a.experts % l.ep != 0)
    return err("EP " + std::to_string(l.ep) + " does not divide " + std::to_string(a.experts) + " experts");
  if (l.vp > 1 && l.pp == 1) return err("virtual pipeline (VP > 1) needs PP > 1");
  if (l.pp > a.layers) return err("PP " + std::to_string(l.pp) + " exceeds " + std::to_string(a.layers) + " layers");
  if (l.first_stage_layers < 0 || l.last_stage_layers < 0 || l.first_stage_layers + l.last_stage_layers > a.layers)
    return err("first/last stage layer counts do not fit the model's layers");
  return std::nullopt;
}

std::variant<Estimate, InputError> estimate(const Architecture& a, const Layout& l, const Training& t, const Params& p) {
  if (auto e = validate(a)) return *e;
  if (auto e = validate(l, a)) return *e;
  if (t.seq_length <= 0 || t.micro_batch <= 0) return InputError{"sequence length and micro batch size must be > 0"};
  if (t.mode != Mode::kFull && t.lora_rank <= 0) return InputError{"LoRA/DoRA needs a rank > 0"};
  if (t.mode != Mode::kFull && t.lora_targets.bits == 0) return InputError{"LoRA/DoRA needs at least one target module"};
  Estimate best;
  bool first = true;
  StageInputs in(a, l, t, p);
  for (const Stage& s : stages(a, l)) {
    Estimate e = estimate_stage(a, l, t, p, s, in);
    if (first || e.total > best.total) best = e;
    first = false;
  }
  return best;
}

double state_floor(const Architecture& a, const Training& t, const Params& p) {
  if (validate(a)) return 0;
  const double V = d(a.vocab), h = d(a.hidden);
  // compose() gives the stages at least every block of each kind, save the
  // leading dense layers of a plain model (DeepSeek's first_k_dense_replace):
  // a first stage holding fewer layers than them holds no more, and the
  // other stages hold the rest at the share of dense layers after them, so
  // the stages hold at least that share of every layer as dense, and every
  // MoE layer.
  const double L = d(a.layers), D = d(a.first_dense_layers);
  const bool plain = a.dense_mlp_layers + a.moe_layers == a.layers;
  const double dense_layers = plain && a.first_dense_layers > 0 && a.first_dense_layers < a.layers
                                  ? L * (d(a.dense_mlp_layers) - D) / (L - D)
                                  : d(a.dense_mlp_layers);
  double params = d(a.attention_layers) * attention_params(a) + d(a.linear_attention_layers) * gdn_params(a) +
                  d(a.mamba_layers) * mamba_params(a) + std::max(0.0, dense_layers) * dense_mlp_block_params(a) +
                  d(a.moe_layers) * (moe_non_expert_params(a) + moe_expert_params(a));
  // The embedding and encoders on the first stage, the output layer (a
  // tied one only past one stage) and the final norm on the last.
  params += V * h + a.extra_params + h + (a.tied_embeddings ? 0.0 : V * h);
  const bool frozen = t.mode != Mode::kFull || t.freeze_decoder;
  const double grad_bytes = t.grad_reduce_in_fp32 ? p.bytes_fp32 : p.bytes_bf16;
  const double bytes = frozen ? p.bytes_bf16 : grad_bytes + optimizer_bytes(t, p);
  const double floor = params * bytes;
  return std::isfinite(floor) && floor > 0 ? floor : 0;
}

double total_floor(double state_floor, std::int64_t world, const Params& p) {
  const double fixed = (p.cuda_context_gib + p.nccl_buffers_gib) * kBytesPerGiB;
  if (world < 1 || !(state_floor > 0) || p.allocator_fragmentation < 0 || fixed < 0) return 0;
  return state_floor / d(world) * (1.0 + p.allocator_fragmentation) + fixed;
}

std::variant<double, InputError> layer_activation_bytes(const Architecture& a, const Layout& l, const Training& t, const Params& p) {
  if (auto e = validate(a)) return *e;
  if (auto e = validate(l, a)) return *e;
  if (t.seq_length <= 0 || t.micro_batch <= 0) return InputError{"sequence length and micro batch size must be > 0"};
  const Stage first = stages(a, l).front();
  const double layers = std::max(1.0, first.layers);
  return per_gpu(BlockActs(a, act_context(l, t, p, true)).of(first), tokens_per_gpu(l, t), l) / layers;
}

std::string Estimate::breakdown() const {
  char flight[64];
  std::snprintf(flight, sizeof flight, "%.3g micro batch%s in flight", in_flight, in_flight == 1.0 ? "" : "es");
  return "weights " + fmt_gib(weights) + " + grads " + fmt_gib(grads) + " + optimizer " + fmt_gib(optimizer) + " + activations " +
         fmt_gib(activations) + " + overhead " + fmt_gib(overhead) + " = " + fmt_gib(total) + " per GPU (" + std::string(rank_name(rank)) +
         ", " + flight + ")";
}

std::variant<Params, InputError> params_from_tsv(std::string_view text) {
  Params out{};
  std::array<bool, kParamFields.size()> seen{};
  bool header = false;
  int line_no = 0;
  std::size_t pos = 0;
  auto err = [&](const std::string& m) { return InputError{"memory.tsv:" + std::to_string(line_no) + ": " + m}; };
  while (pos <= text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line.front() == '#') {
      if (nl == text.size()) break;
      continue;
    }
    const auto cols = split_tabs(line);
    if (!header) {
      if (cols.size() != 4 || cols[0] != "key" || cols[1] != "value" || cols[2] != "unit" || cols[3] != "source")
        return err("expected the header 'key<TAB>value<TAB>unit<TAB>source'");
      header = true;
      continue;
    }
    if (cols.size() != 4) return err("expected 4 tab-separated columns, found " + std::to_string(cols.size()));
    if (cols[3].empty()) return err("constant '" + std::string(cols[0]) + "' has no source");
    std::size_t i = 0;
    while (i < kParamFields.size() && kParamFields[i].key != cols[0]) ++i;
    if (i == kParamFields.size()) return err("unknown constant '" + std::string(cols[0]) + "'");
    if (seen[i]) return err("constant '" + std::string(cols[0]) + "' given twice");
    double v = 0;
    if (!parse_double(cols[1], v) || !std::isfinite(v) || v < 0)
      return err("constant '" + std::string(cols[0]) + "' has value '" + std::string(cols[1]) + "', not a number >= 0");
    out.*(kParamFields[i].field) = v;
    seen[i] = true;
    if (nl == text.size()) break;
  }
  if (!header) return InputError{"memory.tsv: no header line"};
  for (std::size_t i = 0; i < kParamFields.size(); ++i)
    if (!seen[i]) return InputError{"memory.tsv: constant '" + std::string(kParamFields[i].key) + "' is missing"};
  return out;
}

}  // namespace kbq::memory
