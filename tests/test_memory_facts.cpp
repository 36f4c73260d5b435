// Tests of the mapping from recipe facts to the memory model's inputs
// (query/memory/from_facts.hpp): each rule on a small hand-written fact set
// shaped like recipe-facts.tsv rows.
#include <catch2/catch.hpp>

#include <string>
#include <variant>

#include "query/memory/from_facts.hpp"

namespace mem = kbq::memory;

namespace {

mem::Fact v(std::string value) { return {kb::FactState::Value, std::move(value), {}, {}}; }
mem::Fact d(std::string value) { return {kb::FactState::Default, std::move(value), {}, {}}; }
mem::Fact u() { return {kb::FactState::Unknown, "", {}, {}}; }

template <typename T>
const T& ok(const std::variant<mem::Mapped<T>, mem::InputError>& r) {
  if (const auto* e = std::get_if<mem::InputError>(&r)) FAIL(e->message);
  return std::get<mem::Mapped<T>>(r).value;
}

// models.tsv llama3_8b (the columns the mapping reads).
mem::ModelRow llama3_8b_row() {
  return {{"model_key", "llama3_8b"},   {"hf_id", "meta-llama/Meta-Llama-3-8B"},
          {"num_layers", "32"},         {"hidden_size", "4096"},
          {"ffn_hidden_size", "14336"}, {"num_attention_heads", "32"},
          {"num_key_value_heads", "8"}, {"head_dim", "128"},
          {"vocab_size", "128256"},     {"num_experts", "0"},
          {"total_params_b", "8"}};
}

// The facts of llama3_8b_pretrain_2gpu_h100_bf16_config (kb-sources/code/067f987df/recipe-facts.tsv).
mem::RecipeFacts llama3_8b_pretrain_2gpu() {
  return {
      {"tp", v("1")},
      {"pp", v("1")},
      {"vp", v("none")},
      {"cp", v("2")},
      {"ep", d("1")},
      {"etp", d("none")},
      {"sp", v("false")},
      {"seq_length", v("8192")},
      {"micro_batch_size", v("1")},
      {"global_batch_size", v("512")},
      {"peft", d("none")},
      {"fp8", d("none")},
      {"fp4", d("none")},
      {"optimizer", v("adam")},
      {"optimizer_distributed", v("true")},
      {"ddp_distributed_optimizer", v("true")},
      {"precision_aware_optimizer", v("false")},
      {"grad_reduce_in_fp32", v("true")},
      {"use_megatron_fsdp", v("false")},
      {"recompute_granularity", v("none")},
      {"attention_backend", v("none")},
      {"cross_entropy_loss_fusion", v("true")},
      {"cross_entropy_fusion_impl", v("te")},
      {"hidden_dropout", u()},
      {"tokenizer_type", v("NullTokenizer")},
      {"tokenizer_vocab_size", v("32000")},
      {"use_tokenizer_vocab_size", v("true")},
      {"arch.moe_router_topk", d("2")},
  };
}

}  // namespace

TEST_CASE("memory facts: a recipe's layout and training", "[memory]") {
  const auto f = llama3_8b_pretrain_2gpu();
  const mem::Layout l = ok(mem::layout_from_facts(f, 2, false));
  CHECK(l.tp == 1);
  CHECK(l.cp == 2);
  CHECK(l.vp == 1);
  CHECK(l.etp == 1);
  CHECK(l.dp() == 1);
  const mem::Training t = ok(mem::training_from_facts(f));
  CHECK(t.mode == mem::Mode::kFull);
  CHECK(t.precision == mem::Precision::kBf16);
  CHECK(t.distributed_optimizer);
  CHECK(t.grad_reduce_in_fp32);
  CHECK(t.seq_length == 8192);
  CHECK(t.global_batch == 512);
  CHECK(t.flash_attention);
  CHECK_FALSE(t.dropout);  // unknown: set to 0 by the Hugging Face conversion
  CHECK(t.te_cross_entropy);
}

TEST_CASE("memory facts: the model row, overridden by the recipe's tokenizer", "[memory]") {
  const auto row = llama3_8b_row();
  auto r = mem::architecture_from_facts(&row, {}, llama3_8b_pretrain_2gpu());
  const auto& m = std::get<mem::Mapped<mem::Architecture>>(r);
  CHECK(m.value.vocab == 32000);  // use_tokenizer_vocab_size with the mock-data tokenizer
  CHECK(m.value.attention_layers == 32);
  CHECK(m.value.dense_mlp_layers == 32);
  CHECK(m.value.experts_per_token == 0);  // Megatron's top-k default means nothing for a dense model
  CHECK_FALSE(m.assumptions.empty());
  // Without use_tokenizer_vocab_size the model keeps its own vocabulary.
  auto f = llama3_8b_pretrain_2gpu();
  f["use_tokenizer_vocab_size"] = v("false");
  CHECK(ok(mem::architecture_from_facts(&row, {}, f)).vocab == 128256);
}

TEST_CASE("memory facts: an inline hybrid provider's pattern and Mamba sizes", "[memory]") {
  mem::RecipeFacts f = {
      {"arch.hybrid_layer_pattern", v("M-M*-ME")},
      {"arch.hidden_size", v("1024")},
      {"arch.ffn_hidden_size", v("4096")},
      {"arch.num_attention_heads", v("8")},
      {"arch.num_query_groups", v("2")},
      {"arch.kv_channels", v("128")},
      {"arch.vocab_size", d("none")},
      {"arch.num_moe_experts", v("8")},
      {"arch.moe_router_topk", v("2")},
      {"arch.moe_ffn_hidden_size", v("512")},
      {"arch.mamba_num_heads", v("32")},
      {"arch.mamba_head_dim", v("64")},
      {"arch.mamba_num_groups", v("8")},
      {"arch.mamba_state_dim", v("128")},
      {"arch.activation_func", v("megatron.core.activations.squared_relu")},
      {"tokenizer_vocab_size", v("32000")},
  };
  const mem::Architecture a = ok(mem::architecture_from_facts(nullptr, {}, f));
  CHECK(a.layers == 7);
  CHECK(a.mamba_layers == 3);
  CHECK(a.attention_layers == 1);
  CHECK(a.dense_mlp_layers == 2);
  CHECK(a.moe_layers == 1);
  CHECK(a.conv_kernel == 4);
  CHECK(a.vocab == 32000);  // the model has none: the tokenizer's
  CHECK(a.mlp_kind == mem::MlpKind::kPlain);
}

TEST_CASE("memory facts: model-arch.tsv facts and their errors", "[memory]") {
  const auto row = llama3_8b_row();
  const mem::Architecture a = ok(mem::architecture_from_facts(&row, {{"tied_embeddings", "true"}, {"extra_params_b", "0.4"}}, {}));
  CHECK(a.tied_embeddings);
  CHECK(a.extra_params == Approx(0.4e9));
  auto bad = mem::architecture_from_facts(&row, {{"no_such_field", "1"}}, {});
  REQUIRE(std::holds_alternative<mem::InputError>(bad));
  CHECK(std::get<mem::InputError>(bad).message.find("no_such_field") != std::string::npos);
  auto bad2 = mem::architecture_from_facts(&row, {{"mlp_kind", "swiglu"}}, {});
  CHECK(std::holds_alternative<mem::InputError>(bad2));
}

TEST_CASE("memory facts: pipeline layouts give the first and last stage", "[memory]") {
  mem::RecipeFacts f = {{"tp", v("1")}, {"pp", v("4")}, {"pipeline_layout", v("Et*4\\|(t*4\\|)*2tmL")}};
  const mem::Layout l = ok(mem::layout_from_facts(f, 4, false));
  CHECK(l.first_stage_layers == 4);
  CHECK(l.last_stage_layers == 1);
  CHECK(l.vp == 1);
  mem::RecipeFacts g = {
      {"pp", v("2")},
      {"pipeline_layout", v("[[\"embedding\", \"decoder\"], [\"decoder\", \"decoder\"], [\"decoder\"], [\"decoder\", \"loss\"]]")}};
  const mem::Layout m = ok(mem::layout_from_facts(g, 2, false));
  CHECK(m.vp == 2);
  CHECK(m.first_stage_layers == 2);  // stages 0 and 2
  CHECK(m.last_stage_layers == 3);   // stages 1 and 3
  // A layout the extractor could not decide leaves the even split.
  mem::RecipeFacts h = {{"pp", v("2")}, {"pipeline_layout", {kb::FactState::Alternatives, "[[?], [?]]|none", {}, {}}}};
  const auto r = mem::layout_from_facts(h, 2, false);
  CHECK(std::get<mem::Mapped<mem::Layout>>(r).value.first_stage_layers == 0);
  CHECK_FALSE(std::get<mem::Mapped<mem::Layout>>(r).assumptions.empty());
}

TEST_CASE("memory facts: LoRA, precision-aware optimizer, FSDP, recompute and offloading", "[memory]") {
  mem::RecipeFacts f = llama3_8b_pretrain_2gpu();
  f["peft"] = v("megatron.bridge.peft.lora.LoRA");
  f["peft_dim"] = d("32");
  f["peft_target_modules"] = v("[\"linear_qkv\", \"linear_proj\"]");
  f["peft_share_expert_adapters"] = d("true");
  f["fp8"] = v("e4m3");
  f["fp8_recipe"] = v("mxfp8");
  f["fp8_param_gather"] = v("true");
  f["precision_aware_optimizer"] = v("true");
  f["main_params_dtype"] = v("torch.float32");
  f["exp_avg_dtype"] = v("torch.bfloat16");
  f["exp_avg_sq_dtype"] = v("torch.bfloat16");
  f["recompute_granularity"] = v("selective");
  f["recompute_modules"] = v("[\"mla_up_proj\", \"mhc\"]");
  f["activation_offloading"] = v("true");
  f["offload_modules"] = v("[\"expert_fc1\"]");
  f["hidden_dropout"] = v("0.1");
  const auto r = mem::training_from_facts(f);
  const auto& m = std::get<mem::Mapped<mem::Training>>(r);
  const mem::Training& t = m.value;
  CHECK(t.mode == mem::Mode::kLora);
  CHECK(t.lora_rank == 32);
  CHECK(t.lora_targets.has(mem::LoraTarget::kQkv));
  CHECK_FALSE(t.lora_targets.has(mem::LoraTarget::kFc1));
  CHECK_FALSE(t.lora_per_expert);
  CHECK(t.precision == mem::Precision::kMxfp8);
  CHECK(t.low_precision_params);
  CHECK(t.exp_avg_dtype == mem::DType::kBf16);
  CHECK(t.recompute == mem::Recompute::kSelective);
  CHECK(t.recompute_modules.has(mem::Module::kMlaUpProj));
  CHECK(t.offload_modules.has(mem::Module::kExpertFc1));
  CHECK(t.dropout);
  bool noted_mhc = false;
  for (const auto& s : m.assumptions) noted_mhc = noted_mhc || s.find("mhc") != std::string::npos;
  CHECK(noted_mhc);
  // An explicit empty module list recomputes nothing; Megatron FSDP optim_grads_params shards everything.
  f["recompute_modules"] = v("[]");
  f["use_megatron_fsdp"] = v("true");
  f["fsdp_sharding"] = v("optim_grads_params");
  const mem::Training t2 = ok(mem::training_from_facts(f));
  CHECK(t2.recompute == mem::Recompute::kNone);
  CHECK(t2.fsdp);
  // Packed SFT samples fill packed_sequence_size tokens.
  f["seq_length"] = v("2048");
  f["packed_sequence_size"] = v("4096");
  CHECK(ok(mem::training_from_facts(f)).seq_length == 4096);
  f.erase("seq_length");
  f.erase("packed_sequence_size");
  CHECK(std::holds_alternative<mem::InputError>(mem::training_from_facts(f)));
}

TEST_CASE("memory facts: fact states spell as recipe-facts.tsv writes them", "[memory]") {
  for (auto s : {kb::FactState::Value, kb::FactState::Default, kb::FactState::Alternatives, kb::FactState::Unknown})
    CHECK(kb::parse_kind<kb::FactState>(kb::to_string(s)) == s);
  CHECK_FALSE(kb::parse_kind<kb::FactState>("maybe"));
}
