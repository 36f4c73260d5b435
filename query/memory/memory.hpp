// Per-GPU memory model, public interface: how many bytes one GPU holds when
// a model is trained with a Megatron Bridge layout (TP/PP/VP/CP/EP/ETP/DP/SP),
// so the planner can tell whether the layout fits the user's GPUs.
//
// The model counts parameters from the architecture, shards them the way
// Megatron-Core does (dense weights over TP x PP, expert weights over
// EP x ETP x PP, distributed-optimizer state over the data-parallel groups),
// and sizes activations per micro batch after Korthikanti et al. 2022 with
// the number of micro batches the pipeline schedule keeps in flight. It is
// anchored on Megatron-LM's theoretical memory estimator
// (NVIDIA/Megatron-LM@00caa53 megatron/training/theoretical_memory_usage.py);
// docs/memory.md gives every formula with its source.
//
// Pure: no I/O, no SQLite, nothing else from the tree (from_facts.hpp maps
// the KB's recipe facts onto these inputs). Every constant lives
// in Params, which has no defaults: kb-sources/data/memory.tsv is the one
// place the values are written, and params_from_tsv() reads its text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace kbq::memory {

// ---------------------------------------------------------------------------
// Inputs
// ---------------------------------------------------------------------------

// How the MLP's first linear layer is shaped.
enum class MlpKind : std::uint8_t {
  kGated,  // SwiGLU / GeGLU: fc1 produces 2 x ffn (gate and up), 3 matrices in all
  kPlain,  // GeLU / squared ReLU: fc1 produces ffn, 2 matrices in all
};

// The model, as the architecture facts (data/models.tsv) describe it. Counts
// are of the language model; a vision or audio encoder enters as extra_params.
// Megatron counts one "layer" per transformer block (attention + MLP); a
// hybrid model (hybrid_layer_pattern) counts one layer per pattern character.
struct Architecture {
  std::int64_t layers = 0;             // decoder layers Megatron splits over pipeline stages
  std::int64_t hidden = 0;             // h: hidden size
  std::int64_t ffn = 0;                // dense MLP intermediate size (0 when no layer has a dense MLP)
  std::int64_t heads = 0;              // a: attention (query) heads
  std::int64_t kv_heads = 0;           // g: key/value heads (GQA; = heads for MHA); unused with MLA
  std::int64_t head_dim = 0;           // d: channels per attention head (kv_channels)
  std::int64_t vocab = 0;              // V: vocabulary rows of the embedding (padded size when known)
  bool tied_embeddings = false;        // the output layer reuses the input embedding
  MlpKind mlp_kind = MlpKind::kGated;  // shape of every MLP (dense, shared and routed experts)

  // Multi-latent attention (DeepSeek V2/V3, Kimi K2, GLM-5); mla = false for GQA/MHA.
  bool mla = false;                   // attention is MLA
  std::int64_t q_lora_rank = 0;       // query compression rank (0 = queries projected directly)
  std::int64_t kv_lora_rank = 0;      // key/value compression rank
  std::int64_t qk_head_dim = 0;       // per-head query/key channels without rotary part (qk_nope_head_dim)
  std::int64_t qk_rope_head_dim = 0;  // per-head rotary channels (qk_pos_emb_head_dim)
  std::int64_t v_head_dim = 0;        // per-head value channels

  // Mixture of experts.
  std::int64_t experts = 0;            // routed experts per MoE layer (0 = dense model)
  std::int64_t experts_per_token = 0;  // top-k: routed experts each token visits
  std::int64_t moe_ffn = 0;            // intermediate size of one routed expert
  std::int64_t shared_expert_ffn = 0;  // total intermediate size of the shared expert(s) (0 = none)
  std::int64_t moe_latent = 0;         // latent MoE width: experts work in this size, not h (0 = off)

  // Which blocks the layers hold. For a plain transformer: attention_layers =
  // layers and dense_mlp_layers + moe_layers = layers. For a hybrid model each
  // count is the number of its pattern characters.
  std::int64_t attention_layers = 0;         // softmax self-attention blocks (GQA or MLA)
  std::int64_t linear_attention_layers = 0;  // Gated DeltaNet blocks (Qwen3-Next, Qwen3.5)
  std::int64_t mamba_layers = 0;             // Mamba-2 blocks
  std::int64_t dense_mlp_layers = 0;         // dense MLP blocks
  std::int64_t moe_layers = 0;               // MoE blocks
  std::int64_t first_dense_layers = 0;       // leading dense layers (DeepSeek first_k_dense_replace); they sit on the first stage

  // Mamba-2 block dimensions (mamba_layers > 0).
  std::int64_t mamba_heads = 0;     // SSM heads
  std::int64_t mamba_head_dim = 0;  // channels per SSM head (d_inner = heads x head_dim)
  std::int64_t mamba_groups = 0;    // B/C groups
  std::int64_t mamba_state = 0;     // SSM state size per group
  std::int64_t conv_kernel = 0;     // causal-conv width of Mamba and Gated DeltaNet blocks

  // Gated DeltaNet block dimensions (linear_attention_layers > 0).
  std::int64_t gdn_key_heads = 0;    // linear-attention key (and query) heads
  std::int64_t gdn_value_heads = 0;  // linear-attention value heads
  std::int64_t gdn_key_dim = 0;      // channels per key head
  std::int64_t gdn_value_dim = 0;    // channels per value head

  std::int64_t mtp_layers = 0;  // multi-token-prediction depths, on the last pipeline stage
  bool mtp_shared = false;      // all MTP depths reuse one layer's weights (mtp_use_repeated_layer)
  double extra_params = 0;      // parameters outside the decoder (vision/audio encoder, projector), first stage

  double total_params = 0;   // published total parameter count (cross-check only; 0 = unknown)
  double active_params = 0;  // published parameters active per token (cross-check only; 0 = unknown)

  bool operator==(const Architecture&) const = default;
};

// The parallel layout on the user's GPUs. dp is derived: world / (tp x pp x cp).
struct Layout {
  std::int64_t tp = 1;                  // tensor parallel size
  std::int64_t pp = 1;                  // pipeline parallel size
  std::int64_t vp = 1;                  // virtual pipeline chunks per rank (1 = no interleaving)
  std::int64_t cp = 1;                  // context parallel size (sequence split for attention)
  std::int64_t ep = 1;                  // expert parallel size
  std::int64_t etp = 1;                 // expert tensor parallel size
  bool sp = false;                      // sequence parallel (activations outside TP regions split over TP)
  std::int64_t world = 1;               // GPUs in the job
  std::int64_t first_stage_layers = 0;  // decoder layers the first pipeline rank holds, all chunks (0 = even split)
  std::int64_t last_stage_layers = 0;   // decoder layers the last pipeline rank holds, all chunks (0 = even split)
  bool embedding_in_split = false;      // the input embedding takes one layer's place in the pipeline split (Megatron-Core
                                        // account_for_embedding_in_pipeline_split): the first virtual stage holds a layer less
  bool loss_in_split = false;           // the output layer and loss take one (account_for_loss_in_pipeline_split): the last
                                        // virtual stage holds a layer less
  bool any_layout_fp8_gemm = false;     // the GPU runs FP8 GEMMs in any operand layout (Blackwell and later), so a
                                        // per-tensor-scaled FP8 weight needs no transposed copy; Hopper does

  std::int64_t dp() const { return world / (tp * pp * cp); }          // data parallel size
  std::int64_t expert_dp() const { return world / (pp * ep * etp); }  // expert data parallel size
};

// What is trained.
enum class Mode : std::uint8_t {
  kFull,  // pretrain or full SFT: every parameter has grads and optimizer state
  kLora,  // LoRA: frozen base weights, trainable low-rank adapters
  kDora,  // DoRA: LoRA plus a trainable magnitude vector per adapted layer
};

// Compute precision of the linear layers (Transformer Engine recipes).
enum class Precision : std::uint8_t {
  kBf16,   // BF16 mixed precision
  kFp8,    // FP8 with per-tensor (delayed / current) or blockwise scaling
  kMxfp8,  // MXFP8: FP8 with one E8M0 scale per 32 elements (Blackwell)
  kNvfp4,  // NVFP4: FP4 with one E4M3 scale per 16 elements (Blackwell)
};

// Element types of optimizer state and main parameters.
enum class DType : std::uint8_t {
  kFp32,  // IEEE single (Params::bytes_fp32)
  kBf16,  // bfloat16 (Params::bytes_bf16)
  kFp16,  // IEEE half (Params::bytes_fp16)
  kFp8,   // E4M3 / E5M2 (Params::bytes_fp8)
};

// Optimizer algorithm.
enum class Optimizer : std::uint8_t {
  kAdam,  // Adam/AdamW: two moments (exp_avg, exp_avg_sq) per parameter
  kMuon,  // Muon: one momentum buffer per parameter
};

// Activation recomputation (Megatron recompute_granularity).
enum class Recompute : std::uint8_t {
  kNone,       // every activation is kept
  kSelective,  // the modules in Training::recompute_modules are recomputed
  kFull,       // whole layers are recomputed from their inputs
};

// Which layers full recompute applies to (Megatron recompute_method).
enum class RecomputeMethod : std::uint8_t {
  kUniform,  // layers are grouped by recompute_layers; each group keeps its input only
  kBlock,    // the first recompute_layers layers of each pipeline chunk keep their input only
};

// Parts of a layer whose saved activations selective recompute
// (recompute_modules) or activation offloading (offload_modules) drops.
// Spellings are Megatron-Core's; module_name()/parse_module() map them.
enum class Module : std::uint32_t {
  kCoreAttn = 1u << 0,       // core_attn: attention scores / softmax internals
  kAttnProj = 1u << 1,       // attn_proj: input of the attention output projection
  kLayernorm = 1u << 2,      // layernorm: outputs of the pre-attention / pre-MLP norms
  kMlaUpProj = 1u << 3,      // mla_up_proj: MLA up-projected queries, keys, values
  kMlp = 1u << 4,            // mlp: dense MLP internals
  kMoe = 1u << 5,            // moe: the whole MoE block except its input
  kMoeAct = 1u << 6,         // moe_act: expert activation-function outputs
  kSharedExperts = 1u << 7,  // shared_experts: shared-expert MLP internals
  kExpertFc1 = 1u << 8,      // expert_fc1: routed tokens at the expert fc1 input
};

// A set of Modules.
struct ModuleSet {
  std::uint32_t bits = 0;  // OR of Module values
  bool has(Module m) const { return (bits & static_cast<std::uint32_t>(m)) != 0; }
  void add(Module m) { bits |= static_cast<std::uint32_t>(m); }
};

// Linear layers LoRA/DoRA adapts. Spellings are Megatron Bridge's target_modules.
enum class LoraTarget : std::uint32_t {
  kQkv = 1u << 0,         // linear_qkv (GQA/MHA query-key-value projection)
  kProj = 1u << 1,        // linear_proj (attention output projection)
  kFc1 = 1u << 2,         // linear_fc1 (dense, shared and routed expert MLPs)
  kFc2 = 1u << 3,         // linear_fc2
  kMambaIn = 1u << 4,     // in_proj (Mamba / Gated DeltaNet input projection)
  kMambaOut = 1u << 5,    // out_proj
  kQProj = 1u << 6,       // linear_q_proj (MLA without query compression)
  kQDownProj = 1u << 7,   // linear_q_down_proj
  kQUpProj = 1u << 8,     // linear_q_up_proj
  kKvDownProj = 1u << 9,  // linear_kv_down_proj
  kKvUpProj = 1u << 10,   // linear_kv_up_proj
};

// A set of LoraTargets.
struct LoraTargets {
  std::uint32_t bits = 0;  // OR of LoraTarget values
  bool has(LoraTarget t) const { return (bits & static_cast<std::uint32_t>(t)) != 0; }
  void add(LoraTarget t) { bits |= static_cast<std::uint32_t>(t); }
};

// How the model is trained.
struct Training {
  Mode mode = Mode::kFull;                 // full / LoRA / DoRA
  bool freeze_decoder = false;             // full mode with the language model frozen (VLM freeze_language_model):
                                           // only extra_params (encoder, projector) are trained
  Precision precision = Precision::kBf16;  // compute precision of the linear layers
  bool low_precision_params = false;       // weights stored in FP8/FP4 (fp8_param_gather / fp4_param_gather)
  Optimizer optimizer = Optimizer::kAdam;  // optimizer algorithm
  DType main_param_dtype = DType::kFp32;   // optimizer's master copy of the weights
  DType exp_avg_dtype = DType::kFp32;      // first moment (Adam) / momentum (Muon)
  DType exp_avg_sq_dtype = DType::kFp32;   // second moment (Adam only)
  bool distributed_optimizer = true;       // optimizer state and master weights sharded over data parallel ranks
  bool fsdp = false;                       // Megatron FSDP (optim_grads_params): weights and grads sharded too
  bool grad_reduce_in_fp32 = true;         // gradient buffer in FP32 (else in BF16)
  double optimizer_offload = 0;            // fraction of the optimizer's moments kept and updated on the CPU (optimizer_cpu_offload,
                                           // HybridDeviceOptimizer); the FP32 master shard stays on the GPU
  std::int64_t seq_length = 0;             // tokens per sample
  std::int64_t micro_batch = 1;            // samples per micro batch
  std::int64_t global_batch = 0;           // samples per step (0 = unknown: assume enough to fill the pipeline)
  Recompute recompute = Recompute::kNone;  // activation recomputation
  RecomputeMethod recompute_method = RecomputeMethod::kUniform;  // full recompute: how layers are chosen
  std::int64_t recompute_layers = 1;                             // full recompute: layers per group (uniform) or per chunk (block)
  ModuleSet recompute_modules;      // selective recompute: dropped modules (empty = core_attn, Megatron's default)
  ModuleSet offload_modules;        // activations offloaded to host memory (fine-grained offloading)
  std::int64_t offload_layers = 0;  // layers whose whole activations go to host memory (Megatron cpu_offloading_num_layers)
  std::int64_t lora_rank = 0;       // LoRA/DoRA rank r
  LoraTargets lora_targets;         // adapted linear layers
  bool lora_per_expert = false;     // one adapter per routed expert; Bridge's default (share_expert_adapters) is one
                                    // adapter shared by the experts of an EP rank
  bool flash_attention = true;      // fused/flash attention: no s x s score matrix is stored
  bool dropout = false;             // hidden/attention dropout on (stores 1-byte masks)
  bool te_cross_entropy = false;    // cross entropy fused in Transformer Engine: logits stay BF16, gradient in place
};

// Every constant of the model, one per row of kb-sources/data/memory.tsv.
// No defaults: the TSV is the single source (params_from_tsv).
struct Params {
  double bytes_fp32;                   // bytes per FP32 element
  double bytes_bf16;                   // bytes per BF16 element
  double bytes_fp16;                   // bytes per FP16 element
  double bytes_fp8;                    // bytes per FP8 element
  double bytes_fp4;                    // bytes per FP4 element
  double mxfp8_scale_bytes;            // scale bytes per MXFP8 element (one E8M0 per 32)
  double nvfp4_scale_bytes;            // scale bytes per NVFP4 element (one E4M3 per 16)
  double low_precision_weight_copies;  // quantized copies per weight (rowwise + columnwise)
  double activation_bytes;             // bytes per saved activation element
  double dropout_mask_bytes;           // bytes per dropout-mask element
  double softmax_stats_bytes;          // bytes per flash-attention log-sum-exp entry (per head, per token)
  double router_bytes;                 // bytes per router logit / probability entry (per expert, per token)
  double logits_bytes;                 // bytes per output logit held for the cross-entropy backward
  double backward_working_layers;      // layers of un-recomputed activations alive as backward working set
  double fsdp_unsharded_layers;        // layers Megatron FSDP holds gathered (current + prefetched)
  double cuda_context_gib;             // CUDA context, kernels and library workspaces, GiB per GPU
  double nccl_buffers_gib;             // NCCL communicator buffers, GiB per GPU
  double allocator_fragmentation;      // caching-allocator fragmentation, fraction of the tensor bytes
};

// ---------------------------------------------------------------------------
// Outputs
// ---------------------------------------------------------------------------

// Bad input (an impossible layout, a missing dimension, a malformed TSV).
struct InputError {
  std::string message;  // what is wrong, with the numbers
};

// Parameter counts of the whole model (not per GPU).
struct ParamCount {
  double embedding = 0;       // input embedding V x h
  double output = 0;          // output layer V x h (0 when tied)
  double attention = 0;       // all attention-type blocks (softmax, MLA, Gated DeltaNet, Mamba) incl. their norms
  double dense_mlp = 0;       // dense MLP blocks incl. norms
  double moe_non_expert = 0;  // routers, shared experts, latent projections, MoE norms
  double experts = 0;         // routed experts
  double mtp = 0;             // multi-token-prediction layers
  double extra = 0;           // encoders outside the decoder (Architecture::extra_params)
  double total = 0;           // sum of the above
  double active = 0;          // parameters a token passes through (top-k experts only)
  double relative_error = 0;  // total vs Architecture::total_params, (computed - published) / published (0 if unknown)
};

// Which pipeline rank the figures are for.
enum class Rank : std::uint8_t {
  kOnly,   // pp = 1
  kFirst,  // first pipeline rank (embedding, most micro batches in flight)
  kLast,   // last pipeline rank (output layer, logits, MTP)
};

// Per-GPU memory on the busiest pipeline rank, in bytes.
struct Estimate {
  double weights = 0;           // model weights (frozen base included)
  double grads = 0;             // gradient buffers
  double optimizer = 0;         // master weights and optimizer moments
  double activations = 0;       // saved activations of the in-flight micro batches, logits and backward working set
  double overhead = 0;          // CUDA context, NCCL buffers, allocator fragmentation
  double total = 0;             // sum of the above
  Rank rank = Rank::kOnly;      // the pipeline rank these figures describe
  std::int64_t rank_index = 0;  // its index (0 = first, pp - 1 = last)
  double params_on_gpu = 0;     // parameters this GPU holds (dense shard + expert shard)
  double trainable_on_gpu = 0;  // of which trainable (all in full mode; adapters under LoRA/DoRA)
  double in_flight = 0;         // micro batches whose activations the rank holds at peak (chunk-weighted)

  bool fits(double capacity_bytes) const { return total <= capacity_bytes; }
  // One line, e.g. "weights 15.0 GiB + grads 29.9 GiB + ... = 150.3 GiB per GPU (only rank, 1 micro batch in flight)".
  std::string breakdown() const;
};

// ---------------------------------------------------------------------------
// Functions
// ---------------------------------------------------------------------------

// Bytes in one GiB (2^30), the unit of the human-readable figures.
inline constexpr double kBytesPerGiB = 1024.0 * 1024.0 * 1024.0;

// Parameter counts from the architecture (Megatron's estimator's terms, with
// hybrid blocks, latent MoE and MTP added). Never fails; zero fields count zero.
ParamCount count_params(const Architecture& arch);

// Checks that the architecture is complete enough to size (hidden, layers,
// heads, block counts add up, MoE fields when experts > 0, ...).
std::optional<InputError> validate(const Architecture& arch);
// Checks the layout (sizes >= 1, world divisible by tp x pp x cp and by
// pp x ep x etp, vp only with pp > 1, stage layer counts within the model).
std::optional<InputError> validate(const Layout& layout, const Architecture& arch);

// Per-GPU memory of training `arch` with `layout` and `training`.
std::variant<Estimate, InputError> estimate(const Architecture& arch, const Layout& layout, const Training& training, const Params& params);

// A floor under every estimate on a world of GPUs, known before any layout
// is searched. The parameter state (weights, gradients, optimizer) of the
// busiest pipeline rank, per GPU, times the world: every layout of a world
// of N GPUs has a GPU whose estimate holds at least state_floor / N bytes of
// it, because each parameter sits on some rank of its pipeline stage and a
// stage's dense shard divides over TP x PP <= N, its expert shard over
// EP x ETP x PP <= N (validate(Layout)), and the busiest of the stages
// estimate() compares holds at least their mean. Counted per parameter:
// gradient and optimizer bytes in full training (weights not at all, since
// their precision depends on the GPU), the frozen BF16 weights under LoRA,
// DoRA or a frozen decoder. The blocks counted are the fewest any split of
// the layers over the stages gives them (memory.cpp).
// 0 when the architecture or training does not validate.
double state_floor(const Architecture& arch, const Training& training, const Params& params);
// The least total estimate() gives on any layout of at most `world` GPUs for
// a model of that state floor: the state per GPU, the allocator's share of
// it and the fixed overhead (activations counted as none). 0 when the
// params give no such floor (a negative constant).
double total_floor(double state_floor, std::int64_t world, const Params& params);

// Saved activations of one decoder layer for one micro batch on one GPU, in
// bytes: the average layer of the first pipeline stage, with sequence/tensor/
// context parallel splits, selective recompute and offloading applied (full
// recompute and the pipeline's in-flight micro batches are not). For a GPT
// layer (MHA, 4h GeLU MLP, dropout, no flash attention) this is Korthikanti
// et al.'s s*b*h*(34 + 5*a*s/h) and its TP / SP / selective variants.
std::variant<double, InputError> layer_activation_bytes(const Architecture& arch, const Layout& layout, const Training& training,
                                                        const Params& params);

// Reads Params from the text of kb-sources/data/memory.tsv (lines starting
// with '#' are comments; a header `key value unit source`; one row per
// constant). Every Params field must appear exactly once; unknown keys,
// duplicates and non-numbers are errors naming the line.
std::variant<Params, InputError> params_from_tsv(std::string_view text);

// Spellings (one table each): Megatron / Bridge names of modules and LoRA
// targets, and the spellings of the enums (docs/memory.md).
std::string_view module_name(Module m);
std::optional<Module> parse_module(std::string_view name);
std::string_view lora_target_name(LoraTarget t);
std::optional<LoraTarget> parse_lora_target(std::string_view name);
std::string_view mode_name(Mode m);
std::optional<Mode> parse_mode(std::string_view name);
std::string_view precision_name(Precision p);
std::optional<Precision> parse_precision(std::string_view name);
std::string_view dtype_name(DType d);
std::optional<DType> parse_dtype(std::string_view name);
std::string_view optimizer_name(Optimizer o);
std::optional<Optimizer> parse_optimizer(std::string_view name);
std::string_view recompute_name(Recompute r);
std::optional<Recompute> parse_recompute(std::string_view name);
std::string_view recompute_method_name(RecomputeMethod r);
std::optional<RecomputeMethod> parse_recompute_method(std::string_view name);
std::string_view rank_name(Rank r);

}  // namespace kbq::memory
