// Model FLOPs per token, as Megatron Bridge counts them: a port of
// num_floating_point_operations (NVIDIA-NeMo/Megatron-Bridge@067f987df
// src/megatron/bridge/training/utils/flop_utils.py:617), the number its
// training loop divides by the step time to print "model TFLOP/s/GPU" and
// the one NVIDIA's performance tables publish. The count is of one training
// step, forward and backward (3 x the forward matmuls), per token of a
// dense (not packed) batch of `seq` tokens:
//   - a plain transformer (flop_utils.py:947 transformer_flops): GQA/MHA
//     attention with sliding windows and an output gate, MLA, DeepSeek-V4's
//     compressed sparse attention (dsv4_hybrid), Gated DeltaNet layers, dense
//     and MoE MLPs (routed, shared, latent), MTP depths, and the logits over
//     the vocabulary padded to a multiple of 128 x TP;
//   - a hybrid model with Mamba layers (flop_utils.py:849 hybrid_flops): one
//     term per block of the pattern, MTP depths included;
//   - LoRA fine-tuning of the checkpoints and datasets the code names
//     (flop_utils.py:983): the frozen base counted at 2/3 (no weight
//     gradients), with full packs and the attention term of the packed
//     samples left out (its sum of squared lengths is in the packed file).
// Pure: the architecture comes from the memory model's mapping of the KB's
// facts (query/memory/from_facts.hpp) and FlopsExtras from data/
// flops-arch.tsv; docs/throughput.md gives the formulas and their checks.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "query/memory/memory.hpp"

namespace kbq::perf {

// What the FLOPs count reads beyond memory::Architecture (data/flops-arch.tsv).
struct FlopsExtras {
  long long window = 0;                // sliding-window span (window_size[0] + window_size[1] + 1); 0 = full attention
  long long window_skip_freq = 0;      // every n-th layer (1-based) keeps full attention; 0 = every layer windowed
  bool attention_output_gate = false;  // a query-wide gate projection (Qwen3-Next, Qwen3.5)
  std::string mtp_pattern;             // hybrid: the pattern letters of one MTP depth ("*E")
  long long mtp_layers = -1;           // MTP depths when set (>= 0): overrides the architecture's
  std::string attention_variant;       // "" | dsv4_hybrid | an unmodelled variant (dsa: no count)
  // DeepSeek-V4 compressed sparse attention (attention_variant dsv4_hybrid).
  long long dsv4_q_lora_rank = 0, dsv4_qk_head_dim = 0, dsv4_qk_rope_head_dim = 0, dsv4_v_head_dim = 0;
  long long dsv4_o_lora_rank = 0, dsv4_o_groups = 1, dsv4_window = 0;
  long long dsv4_index_heads = 0, dsv4_index_head_dim = 0, dsv4_index_topk = 0;
  std::vector<long long> dsv4_compress_ratios;  // one per layer and MTP depth: 0, 4 or 128
};

// Reads one model's flops-arch.tsv rows (field -> value) and the
// `arch_override` of a measured row ("mtp_layers=0"). An unknown field or a
// value that is not a number is an error (its text).
std::variant<FlopsExtras, std::string> extras_from_facts(const std::map<std::string, std::string, std::less<>>& fields,
                                                         const std::string& arch_override = {});

// How the step trains the weights.
enum class FlopsMode : std::uint8_t {
  kFull,        // every weight gets gradients: pretraining, full SFT, and LoRA outside the cases below
  kLoraFrozen,  // LoRA where the code counts the frozen base at 2/3 (flop_utils.py:983; the caller decides, from data)
};

struct FlopsInput {
  const memory::Architecture* arch = nullptr;
  const FlopsExtras* extras = nullptr;
  long long seq = 0;              // tokens per sample (dense batch)
  long long tp = 1;               // tensor parallel size: the vocabulary is padded to a multiple of divisor x TP
  long long vocab_divisor = 128;  // make_vocab_size_divisible_by (data/perf-params.tsv)
  FlopsMode mode = FlopsMode::kFull;
};

// FLOPs per token of one training step; an error text when the count cannot
// be made (an attention variant it does not model, a missing dimension).
std::variant<double, std::string> flops_per_token(const FlopsInput& in);

}  // namespace kbq::perf
