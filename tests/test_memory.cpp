// Tests of the per-GPU memory model (query/memory): the constants file,
// parameter counts against published totals, sharding, activations
// (Korthikanti et al. 2022's per-layer formula and its variants), and the
// fit / no-fit verdicts for layouts whose answer is known.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <variant>

#include "query/memory/memory.hpp"

namespace mem = kbq::memory;

namespace {

#ifndef KB_SOURCE_DIR
#define KB_SOURCE_DIR "."
#endif

constexpr double kGB = 1e9;

// The checked-in constants (kb-sources/data/memory.tsv).
const mem::Params& params() {
  static const mem::Params p = [] {
    std::ifstream in(std::string(KB_SOURCE_DIR) + "/kb-sources/data/memory.tsv");
    std::stringstream ss;
    ss << in.rdbuf();
    auto r = mem::params_from_tsv(ss.str());
    if (auto* e = std::get_if<mem::InputError>(&r)) FAIL("memory.tsv: " << e->message);
    return std::get<mem::Params>(r);
  }();
  return p;
}

// A dense GQA transformer (every layer: attention + dense MLP).
mem::Architecture dense(std::int64_t layers, std::int64_t hidden, std::int64_t ffn, std::int64_t heads, std::int64_t kv_heads,
                        std::int64_t head_dim, std::int64_t vocab) {
  mem::Architecture a;
  a.layers = a.attention_layers = a.dense_mlp_layers = layers;
  a.hidden = hidden;
  a.ffn = ffn;
  a.heads = heads;
  a.kv_heads = kv_heads;
  a.head_dim = head_dim;
  a.vocab = vocab;
  return a;
}

// data/models.tsv llama3_8b.
mem::Architecture llama3_8b() { return dense(32, 4096, 14336, 32, 8, 128, 128256); }
// data/models.tsv llama3_70b.
mem::Architecture llama3_70b() { return dense(80, 8192, 28672, 64, 8, 128, 128256); }
// data/models.tsv qwen3_8b.
mem::Architecture qwen3_8b() { return dense(36, 4096, 12288, 32, 8, 128, 151936); }

// data/models.tsv qwen3_30b_a3b (all 48 layers MoE, 128 experts, top-8, expert ffn 768).
mem::Architecture qwen3_30b_a3b() {
  mem::Architecture a = dense(48, 2048, 6144, 32, 4, 128, 151936);
  a.dense_mlp_layers = 0;
  a.moe_layers = 48;
  a.experts = 128;
  a.experts_per_token = 8;
  a.moe_ffn = 768;
  return a;
}

// data/models.tsv qwen3_235b_a22b (all 94 layers MoE).
mem::Architecture qwen3_235b_a22b() {
  mem::Architecture a = dense(94, 4096, 12288, 64, 4, 128, 151936);
  a.dense_mlp_layers = 0;
  a.moe_layers = 94;
  a.experts = 128;
  a.experts_per_token = 8;
  a.moe_ffn = 1536;
  return a;
}

// data/models.tsv deepseek_v3: MLA (q_lora 1536, kv_lora 512, qk 128 + 64 rope, v 128),
// first 3 layers dense, 58 MoE with 256 experts (top-8) and one shared expert.
mem::Architecture deepseek_v3() {
  mem::Architecture a;
  a.layers = a.attention_layers = 61;
  a.hidden = 7168;
  a.ffn = 18432;
  a.heads = 128;
  a.vocab = 129280;
  a.mla = true;
  a.q_lora_rank = 1536;
  a.kv_lora_rank = 512;
  a.qk_head_dim = 128;
  a.qk_rope_head_dim = 64;
  a.v_head_dim = 128;
  a.experts = 256;
  a.experts_per_token = 8;
  a.moe_ffn = 2048;
  a.shared_expert_ffn = 2048;
  a.dense_mlp_layers = a.first_dense_layers = 3;
  a.moe_layers = 58;
  return a;
}

// data/models.tsv nemotronh_56b: Mamba hybrid, pattern M=54 *=10 -=54, squared-ReLU MLP,
// Mamba 256 heads x 64, 8 groups, state 256.
mem::Architecture nemotronh_56b() {
  mem::Architecture a;
  a.layers = 118;
  a.hidden = 8192;
  a.ffn = 32768;
  a.heads = 64;
  a.kv_heads = 8;
  a.head_dim = 128;
  a.vocab = 131072;
  a.mlp_kind = mem::MlpKind::kPlain;
  a.attention_layers = 10;
  a.mamba_layers = 54;
  a.dense_mlp_layers = 54;
  a.mamba_heads = 256;
  a.mamba_head_dim = 64;
  a.mamba_groups = 8;
  a.mamba_state = 256;
  a.conv_kernel = 4;
  return a;
}

mem::Layout layout(std::int64_t world, std::int64_t tp = 1, std::int64_t pp = 1, std::int64_t ep = 1) {
  mem::Layout l;
  l.world = world;
  l.tp = tp;
  l.pp = pp;
  l.ep = ep;
  return l;
}

mem::Training full(std::int64_t seq = 4096, std::int64_t mbs = 1) {
  mem::Training t;
  t.seq_length = seq;
  t.micro_batch = mbs;
  return t;
}

// Megatron Bridge's default LoRA: rank 32 on linear_qkv, linear_proj, linear_fc1, linear_fc2.
mem::Training lora(std::int64_t seq = 4096, std::int64_t rank = 32) {
  mem::Training t = full(seq);
  t.mode = mem::Mode::kLora;
  t.lora_rank = rank;
  for (auto x : {mem::LoraTarget::kQkv, mem::LoraTarget::kProj, mem::LoraTarget::kFc1, mem::LoraTarget::kFc2}) t.lora_targets.add(x);
  return t;
}

mem::Estimate run(const mem::Architecture& a, const mem::Layout& l, const mem::Training& t) {
  auto r = mem::estimate(a, l, t, params());
  if (auto* e = std::get_if<mem::InputError>(&r)) FAIL("estimate: " << e->message);
  return std::get<mem::Estimate>(r);
}

double layer_act(const mem::Architecture& a, const mem::Layout& l, const mem::Training& t) {
  auto r = mem::layer_activation_bytes(a, l, t, params());
  if (auto* e = std::get_if<mem::InputError>(&r)) FAIL("layer_activation_bytes: " << e->message);
  return std::get<double>(r);
}

const double kH100 = 80 * mem::kBytesPerGiB;  // data/gpus.tsv h100 memory_gb, read as GiB (docs/memory.md)

}  // namespace

TEST_CASE("memory: memory.tsv gives every constant, with a source", "[memory]") {
  const mem::Params& p = params();
  CHECK(p.bytes_fp32 == 4);
  CHECK(p.bytes_bf16 == 2);
  CHECK(p.activation_bytes == 2);
  CHECK(p.cuda_context_gib > 0);
}

TEST_CASE("memory: params_from_tsv rejects malformed constants files", "[memory]") {
  const std::string header = "# comment\nkey\tvalue\tunit\tsource\n";
  auto error_of = [](const std::string& text) {
    auto r = mem::params_from_tsv(text);
    REQUIRE(std::holds_alternative<mem::InputError>(r));
    return std::get<mem::InputError>(r).message;
  };
  CHECK_THAT(error_of(header), Catch::Contains("is missing"));
  CHECK_THAT(error_of(header + "no_such_key\t1\tx\tsrc\n"), Catch::Contains("unknown constant 'no_such_key'"));
  CHECK_THAT(error_of(header + "bytes_fp32\t4\tb\tsrc\nbytes_fp32\t4\tb\tsrc\n"), Catch::Contains("given twice"));
  CHECK_THAT(error_of(header + "bytes_fp32\tfour\tb\tsrc\n"), Catch::Contains("not a number"));
  CHECK_THAT(error_of(header + "bytes_fp32\t4\tb\t\n"), Catch::Contains("has no source"));
  CHECK_THAT(error_of("key\tvalue\n"), Catch::Contains("expected the header"));
}

TEST_CASE("memory: parameter counts match published totals", "[memory]") {
  // Llama 3 8B: 8.03 B; Llama 3 70B: 70.6 B (Meta model cards).
  CHECK(mem::count_params(llama3_8b()).total == Approx(8.03e9).epsilon(0.01));
  CHECK(mem::count_params(llama3_70b()).total == Approx(70.6e9).epsilon(0.01));
  // Qwen3-30B-A3B: 30.5 B total, 3.3 B activated (Qwen3 model card).
  const auto q = mem::count_params(qwen3_30b_a3b());
  CHECK(q.total == Approx(30.5e9).epsilon(0.02));
  CHECK(q.active == Approx(3.3e9).epsilon(0.05));
  // DeepSeek-V3: 671 B total, 37 B activated per token (main model, without the MTP module).
  const auto ds = mem::count_params(deepseek_v3());
  CHECK(ds.total == Approx(671e9).epsilon(0.02));
  CHECK(ds.active == Approx(37e9).epsilon(0.05));
  // Nemotron-H 56B (Mamba hybrid).
  CHECK(mem::count_params(nemotronh_56b()).total == Approx(56e9).epsilon(0.03));
  // The cross-check against Architecture::total_params.
  mem::Architecture a = llama3_8b();
  a.total_params = 8.03e9;
  CHECK(std::abs(mem::count_params(a).relative_error) < 0.01);
}

TEST_CASE("memory: tied embeddings and MTP change the count by their size", "[memory]") {
  mem::Architecture a = llama3_8b();
  const double untied = mem::count_params(a).total;
  a.tied_embeddings = true;
  CHECK(untied - mem::count_params(a).total == Approx(128256.0 * 4096));
  mem::Architecture ds = deepseek_v3();
  ds.mtp_layers = 1;
  // DeepSeek-V3's MTP module: 14 B in the checkpoint (model card: 671 B main + 14 B MTP), which
  // stores its own copies of the embedding and output head; Megatron shares those.
  CHECK(mem::count_params(ds).mtp == Approx(14e9 - 2.0 * 129280 * 7168).epsilon(0.05));
}

TEST_CASE("memory: doubling TP halves the dense weights per GPU", "[memory]") {
  const auto a = llama3_70b();
  const auto t1 = run(a, layout(8, 4), full());
  const auto t2 = run(a, layout(8, 8), full());
  CHECK(t2.weights == Approx(t1.weights / 2));
  CHECK(t2.grads == Approx(t1.grads / 2));
}

TEST_CASE("memory: the distributed optimizer scales with 1/DP, the rest does not", "[memory]") {
  const auto a = llama3_8b();
  const auto dp8 = run(a, layout(8), full());
  const auto dp16 = run(a, layout(16), full());
  CHECK(dp16.optimizer == Approx(dp8.optimizer / 2));
  CHECK(dp16.weights == Approx(dp8.weights));
  CHECK(dp16.grads == Approx(dp8.grads));
  mem::Training plain = full();
  plain.distributed_optimizer = false;
  CHECK(run(a, layout(16), plain).optimizer == Approx(run(a, layout(8), plain).optimizer));
}

TEST_CASE("memory: EP shards the routed experts only", "[memory]") {
  const auto a = qwen3_30b_a3b();
  const auto c = mem::count_params(a);
  const auto ep4 = run(a, layout(8, 1, 1, 4), full());
  const auto ep8 = run(a, layout(8, 1, 1, 8), full());
  const double bf16 = params().bytes_bf16;
  // Only the expert shard changes: experts/4 -> experts/8.
  CHECK(ep4.weights - ep8.weights == Approx(c.experts * bf16 * (1.0 / 4 - 1.0 / 8)));
  // A dense model does not care about EP.
  const auto d = llama3_8b();
  CHECK(run(d, layout(8, 1, 1, 8), full()).weights == Approx(run(d, layout(8), full()).weights));
}

TEST_CASE("memory: PP splits the layers, the first stage keeps the embedding", "[memory]") {
  const auto a = llama3_70b();
  const auto pp1 = run(a, layout(8, 8, 1), full());
  const auto pp4 = run(a, layout(32, 8, 4), full());
  CHECK(pp4.params_on_gpu < pp1.params_on_gpu / 3);
  CHECK(pp4.params_on_gpu > pp1.params_on_gpu / 5);
}

TEST_CASE("memory: LoRA keeps the base frozen: no base grads or optimizer state", "[memory]") {
  const auto a = llama3_8b();
  const auto l = run(a, layout(1), lora());
  const auto f = run(a, layout(1), full());
  CHECK(l.trainable_on_gpu < 0.01 * l.params_on_gpu);
  CHECK(l.grads == Approx(l.trainable_on_gpu * params().bytes_fp32));
  CHECK(l.weights == Approx(f.weights).epsilon(0.02));  // BF16 base (+ small adapters)
  CHECK(l.grads < f.grads / 100);
  CHECK(l.optimizer < f.optimizer / 100);
  mem::Training d = lora();
  d.mode = mem::Mode::kDora;  // DoRA adds a magnitude vector per adapted layer
  CHECK(run(a, layout(1), d).trainable_on_gpu > l.trainable_on_gpu);
}

TEST_CASE("memory: Korthikanti's per-layer activations for a GPT layer", "[memory]") {
  // GPT-3 175B layer shape: h = 12288, a = 96 heads, 4h GeLU MLP, dropout, no flash attention.
  mem::Architecture g = dense(96, 12288, 4 * 12288, 96, 96, 128, 51200);
  g.mlp_kind = mem::MlpKind::kPlain;
  mem::Training t = full(2048, 1);
  t.flash_attention = false;
  t.dropout = true;
  const double s = 2048, b = 1, h = 12288, a = 96;
  // No parallelism: s*b*h*(34 + 5*a*s/h).
  CHECK(layer_act(g, layout(1), t) == Approx(s * b * h * (34 + 5 * a * s / h)));
  // TP without SP: s*b*h*(10 + 24/t + 5*a*s/(h*t)).
  const double tp = 8;
  CHECK(layer_act(g, layout(8, 8), t) == Approx(s * b * h * (10 + 24 / tp + 5 * a * s / (h * tp))));
  // TP with SP: s*b*h/t*(34 + 5*a*s/h).
  mem::Layout sp = layout(8, 8);
  sp.sp = true;
  CHECK(layer_act(g, sp, t) == Approx(s * b * h / tp * (34 + 5 * a * s / h)));
  // TP with SP and selective recompute of core attention: s*b*h/t*34.
  mem::Training sel = t;
  sel.recompute = mem::Recompute::kSelective;
  CHECK(layer_act(g, sp, sel) == Approx(s * b * h / tp * 34));
  // CP splits the sequence: half the tokens (and half the keys each query sees).
  mem::Layout cp = sp;
  cp.cp = 2;
  cp.world = 16;
  CHECK(layer_act(g, cp, sel) == Approx(layer_act(g, sp, sel) / 2));
}

TEST_CASE("memory: activations grow with sequence and micro batch, recompute shrinks them", "[memory]") {
  const auto a = llama3_8b();
  const auto l = layout(8);
  const double base = run(a, l, full(4096, 1)).activations;
  CHECK(run(a, l, full(8192, 1)).activations > base);
  CHECK(run(a, l, full(4096, 2)).activations > base);
  mem::Training sel = full(4096, 1);
  sel.recompute = mem::Recompute::kSelective;
  sel.recompute_modules.add(mem::Module::kMlp);
  const double selective = run(a, l, sel).activations;
  CHECK(selective < base);
  mem::Training whole = full(4096, 1);
  whole.recompute = mem::Recompute::kFull;
  const double full_recompute = run(a, l, whole).activations;
  CHECK(full_recompute < selective);
  // Full recompute keeps each layer's input (2 bytes x h per token), one layer being recomputed and the logits.
  const double tokens = 4096, h = 4096, V = 128256;
  const double expected = 32 * tokens * 2 * h + layer_act(a, l, full(4096, 1)) + tokens * (2 * 2 * h + params().logits_bytes * V);
  CHECK(full_recompute == Approx(expected).epsilon(0.01));
  // Offloading a module's activations also shrinks them.
  mem::Training off = full(4096, 1);
  off.offload_modules.add(mem::Module::kAttnProj);
  CHECK(run(a, l, off).activations < base);
}

TEST_CASE("memory: the pipeline's first stage holds pp micro batches, interleaving adds more", "[memory]") {
  const auto a = llama3_70b();
  mem::Training t = full(4096, 1);
  t.global_batch = 512;
  mem::Layout l = layout(32, 4, 8);
  l.sp = true;
  const auto e = run(a, l, t);
  CHECK(e.in_flight == Approx(8));
  l.vp = 5;
  const auto v = run(a, l, t);
  CHECK(v.in_flight == Approx(8 + 7.0 / 5));  // pp + (pp - 1) / vp (Megatron's interleaved warm-up)
  CHECK(v.activations > e.activations);
  // Fewer micro batches than stages: only those are in flight.
  t.global_batch = 2;
  l.vp = 1;
  CHECK(run(a, l, t).in_flight == Approx(2));
}

TEST_CASE("memory: the embedding and the loss take a layer's place in the pipeline split", "[memory]") {
  // Llama 3.1 405B as llama31_405b_pretrain_128gpu_b200_bf16_config runs it: 126 layers, TP 4, PP 16, VP 8,
  // account_for_{embedding,loss}_in_pipeline_split: 128 places, one layer per virtual stage, the first
  // rank's first chunk and the last rank's last chunk empty.
  const auto a = dense(126, 16384, 53248, 128, 8, 128, 128256);
  mem::Training t = full(8192, 1);
  t.global_batch = 768;
  mem::Layout l = layout(128, 4, 16);
  l.sp = true;
  l.vp = 8;
  const auto even = run(a, l, t);
  CHECK(even.rank_index == 0);  // without the flags: 126 / 128 layers per chunk everywhere, rank 0 busiest
  l.embedding_in_split = l.loss_in_split = true;
  const auto split = run(a, l, t);
  // Rank 0 runs (16 - 1) x 2 + 7 x 16 + 1 = 143 forwards, the first 16 on its empty chunk: 127 layer-micro-
  // batches; rank 1 runs 141, all on full chunks: 141 of its 8 layers' micro batches.
  CHECK(split.rank_index == 1);
  CHECK(split.in_flight == Approx(141.0 / 8));
  CHECK(even.in_flight == Approx(143.0 / 8));  // without the flags: 143 forwards on equal chunks
}

TEST_CASE("memory: rejects LoRA of Qwen3-235B-A22B on one H100", "[memory]") {
  const auto e = run(qwen3_235b_a22b(), layout(1), lora(2048, 8));
  CHECK(e.weights > 400 * kGB);  // 235 B BF16 weights alone
  CHECK_FALSE(e.fits(kH100));
}

TEST_CASE("memory: rejects full pretraining of Llama 3 8B on one H100", "[memory]") {
  const auto e = run(llama3_8b(), layout(1), full(8192, 1));
  // 8.03 B x (2 weight + 4 grad + 12 Adam/master) bytes = 144.5 GB.
  CHECK(e.weights + e.grads + e.optimizer == Approx(144.5 * kGB).epsilon(0.01));
  CHECK_FALSE(e.fits(kH100));
}

TEST_CASE("memory: rejects full SFT of Qwen3-30B-A3B on 4 H100 with EP 4", "[memory]") {
  const auto e = run(qwen3_30b_a3b(), layout(4, 1, 1, 4), full(2048, 1));
  // 1.5 B dense params + 29 B / 4 expert params per GPU; experts' optimizer state not sharded (expert DP = 1).
  CHECK(e.weights + e.grads + e.optimizer > 130 * kGB);
  CHECK(e.weights + e.grads + e.optimizer < 150 * kGB);
  CHECK_FALSE(e.fits(kH100));
}

TEST_CASE("memory: accepts LoRA of Llama 3 8B and of Qwen3 8B on one GPU", "[memory]") {
  const auto l = run(llama3_8b(), layout(1), lora(4096, 8));
  CHECK(l.fits(kH100));
  CHECK(l.total < 50 * mem::kBytesPerGiB);
  const auto q = run(qwen3_8b(), layout(1), lora(2048, 8));
  CHECK(q.fits(kH100));
  CHECK(q.total < 40 * mem::kBytesPerGiB);
}

TEST_CASE("memory: bad layouts and architectures are input errors, not estimates", "[memory]") {
  auto error_of = [](const mem::Architecture& a, const mem::Layout& l, const mem::Training& t) {
    auto r = mem::estimate(a, l, t, params());
    REQUIRE(std::holds_alternative<mem::InputError>(r));
    return std::get<mem::InputError>(r).message;
  };
  CHECK_THAT(error_of(llama3_8b(), layout(6, 4), full()), Catch::Contains("not a multiple of TP x PP x CP"));
  CHECK_THAT(error_of(qwen3_30b_a3b(), layout(8, 1, 1, 16), full()), Catch::Contains("PP x EP x ETP"));
  mem::Layout vp = layout(8);
  vp.vp = 2;
  CHECK_THAT(error_of(llama3_8b(), vp, full()), Catch::Contains("needs PP > 1"));
  mem::Architecture broken = qwen3_30b_a3b();
  broken.moe_ffn = 0;
  CHECK_THAT(error_of(broken, layout(8), full()), Catch::Contains("moe_ffn"));
  CHECK_THAT(error_of(llama3_8b(), layout(1), lora(4096, 0)), Catch::Contains("rank"));
}

TEST_CASE("memory: spellings round-trip", "[memory]") {
  for (auto m : {mem::Module::kCoreAttn, mem::Module::kMlaUpProj, mem::Module::kMoeAct, mem::Module::kExpertFc1})
    CHECK(mem::parse_module(mem::module_name(m)) == m);
  CHECK_FALSE(mem::parse_module("no_such_module").has_value());
  for (auto p : {mem::Precision::kBf16, mem::Precision::kFp8, mem::Precision::kMxfp8, mem::Precision::kNvfp4})
    CHECK(mem::parse_precision(mem::precision_name(p)) == p);
  CHECK(mem::parse_lora_target("linear_fc1") == mem::LoraTarget::kFc1);
}

TEST_CASE("memory: the breakdown names every component and the total", "[memory]") {
  const auto e = run(llama3_8b(), layout(1), full(8192, 1));
  const std::string s = e.breakdown();
  for (const char* part : {"weights", "grads", "optimizer", "activations", "overhead", "per GPU"}) CHECK_THAT(s, Catch::Contains(part));
}

TEST_CASE("memory: a frozen linear layer saves no input", "[memory]") {
  // Transformer Engine keeps a linear layer's input only for its weight gradient: with LoRA on
  // linear_qkv alone, the MLP's and projection's inputs are not kept; a frozen decoder keeps none.
  auto l = layout(1);
  auto all = lora(4096, 8);
  auto qkv_only = all;
  qkv_only.lora_targets = {};
  qkv_only.lora_targets.add(mem::LoraTarget::kQkv);
  qkv_only.flash_attention = false;
  all.flash_attention = false;
  CHECK(layer_act(llama3_8b(), l, qkv_only) < layer_act(llama3_8b(), l, all));
  auto full_t = full(4096, 1);
  auto frozen = full_t;
  frozen.freeze_decoder = true;
  CHECK(layer_act(llama3_8b(), l, frozen) < layer_act(llama3_8b(), l, full_t));
}
