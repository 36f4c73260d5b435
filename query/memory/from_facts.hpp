// From recipe facts to the memory model's inputs: the product mapping the
// planner uses to size a Megatron Bridge recipe. It turns
//   - one recipe's facts (kb-sources/code/<commit>/recipe-facts.tsv: field ->
//     state and value, the fields of kb-sources/data/code-fields.tsv),
//   - the model's row of data/models.tsv (or data/models-extra.tsv), and
//   - the model's extra architecture facts (data/model-arch.tsv)
// into Architecture, Layout and Training (query/memory/memory.hpp).
//
// Pure: the caller reads the rows (from the KB or the TSV files) and passes
// them as plain maps; nothing here opens a file. Every choice the facts leave
// open (a field the extractor could not see, a Megatron default) is taken the
// way docs/memory.md ("Mapping from recipe facts") says, and reported in
// `assumptions` so an answer can show it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "base/kinds.hpp"
#include "query/memory/memory.hpp"

namespace kbq::memory {

// How the extractor knew a fact (recipe-facts.tsv column `state`): the
// one enum both programs use, with its spelling table (base/kinds.hpp).
using kb::FactState;

// One fact of a recipe: its state and the value cell as recipe-facts.tsv writes
// it (Python spellings: true/false/none, lists as ["a", "b"]; in a layout
// string a literal '|' is written "\|").
//
// It is also the KB reader's fact (kbq::CodeFact, query/kb/snapshot.hpp):
// one type, so the sizing reads a recipe's facts where the reader put them
// rather than from a copy of every one.
struct Fact {
  FactState state = FactState::Unknown;  // how it was found
  std::string value;                     // the `value` cell, empty when unknown
  std::string type, at;                  // its Python type and "path:line..." (the KB's; read by kbq, not here)
};

// One recipe's facts, by field name (the rows of its target function).
using RecipeFacts = std::map<std::string, Fact, std::less<>>;

// One row of data/models.tsv or data/models-extra.tsv, by column name
// (model_key, hf_id, num_layers, hidden_size, ffn_hidden_size,
// num_attention_heads, num_key_value_heads, head_dim, vocab_size,
// num_experts, experts_per_token, moe_ffn_hidden_size, total_params_b,
// active_params_b, ...). Empty cells may be left out.
using ModelRow = std::map<std::string, std::string, std::less<>>;

// One model's rows of data/model-arch.tsv: field -> value (the fields are
// listed in that file's header and in docs/memory.md).
using ArchFacts = std::map<std::string, std::string, std::less<>>;

// A mapped input and the assumptions made to build it (one sentence each,
// naming the fact, e.g. "hidden_dropout unknown (set by the Hugging Face
// conversion): dropout off").
template <typename T>
struct Mapped {
  T value;                               // the mapped struct
  std::vector<std::string> assumptions;  // what the facts did not say and was assumed
};

// The model's architecture. `model` is its models.tsv / models-extra.tsv row,
// or nullptr when the recipe builds its provider inline (a snapshot provider
// class such as HybridModelProvider); `arch` its model-arch.tsv facts; `recipe`
// the recipe's facts, whose arch.* fields (and tokenizer vocabulary when
// use_tokenizer_vocab_size is set) override the row. With a row only `value`
// facts override it (an arch.* `default` is Megatron's, not the model's);
// without one, `default` facts (the provider class's own defaults) count too.
std::variant<Mapped<Architecture>, InputError> architecture_from_facts(const ModelRow* model, const ArchFacts& arch,
                                                                       const RecipeFacts& recipe);

// Whether architecture_from_facts reads a recipe fact: an arch.* field or
// one of the tokenizer's. A caller that wants the architecture alone (the
// throughput tables' benchmark recipes) reads only these facts.
bool architecture_reads(std::string_view field);

// The recipe's parallel layout on `world` GPUs (tp, pp, vp, cp, ep, etp, sp,
// first/last pipeline stage layers, pipeline_layout). `any_layout_fp8_gemm`
// is a property of the GPU (data/gpu-memory.tsv).
std::variant<Mapped<Layout>, InputError> layout_from_facts(const RecipeFacts& recipe, std::int64_t world, bool any_layout_fp8_gemm);

// How the recipe trains: mode (peft class), precision (fp8 / fp8_recipe / fp4
// and their param-gather flags), optimizer and its state dtypes, distributed
// optimizer, Megatron FSDP, gradient dtype, sequence (packed size when
// larger), micro and global batch, recompute, offloading, LoRA rank and
// targets, attention backend, dropout, fused cross entropy, frozen language
// model.
std::variant<Mapped<Training>, InputError> training_from_facts(const RecipeFacts& recipe);

}  // namespace kbq::memory
