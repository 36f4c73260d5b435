// The mapping from recipe facts, model rows and architecture facts to the
// memory model's Architecture, Layout and Training. docs/memory.md
// ("Mapping from recipe facts") gives the rule for every field and the
// Megatron Bridge / Megatron-Core code each rule follows.
#include "query/memory/from_facts.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>

#include "base/text.hpp"

namespace kbq::memory {

namespace {

using i64 = std::int64_t;

std::optional<i64> to_int(std::string_view s) {
  i64 v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<double> to_double(std::string_view s) {
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// The fact of `field` when its state is `value` (or `default` when `defaults`).
const Fact* known(const RecipeFacts& f, std::string_view field, bool defaults = true) {
  auto it = f.find(field);
  if (it == f.end()) return nullptr;
  const FactState s = it->second.state;
  if (s == FactState::Value || (defaults && s == FactState::Default)) return &it->second;
  return nullptr;
}

bool is_none(const Fact* f) { return f == nullptr || f->value.empty() || f->value == "none"; }

std::optional<i64> fact_int(const RecipeFacts& f, std::string_view field, bool defaults = true) {
  const Fact* x = known(f, field, defaults);
  return x ? to_int(x->value) : std::nullopt;
}

std::optional<bool> fact_bool(const RecipeFacts& f, std::string_view field, bool defaults = true) {
  const Fact* x = known(f, field, defaults);
  if (!x) return std::nullopt;
  if (x->value == "true") return true;
  if (x->value == "false") return false;
  return std::nullopt;
}

std::string fact_text(const RecipeFacts& f, std::string_view field, bool defaults = true) {
  const Fact* x = known(f, field, defaults);
  return is_none(x) ? std::string() : x->value;
}

// Python list of strings or numbers as the extractor writes it: ["a", "b"], [0, 1].
std::optional<std::vector<std::string>> parse_list(std::string_view s) {
  if (s.size() < 2 || s.front() != '[' || s.back() != ']') return std::nullopt;
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false, any = false;
  for (std::size_t i = 1; i + 1 < s.size(); ++i) {
    const char c = s[i];
    if (c == '"') {
      quoted = !quoted;
      any = true;
    } else if (c == ',' && !quoted) {
      out.push_back(cur);
      cur.clear();
      any = false;
    } else if (c != ' ' || quoted) {
      cur += c;
      any = true;
    }
  }
  if (any || !cur.empty()) out.push_back(cur);
  return out;
}

// Megatron pipeline layout -> decoder layers per virtual stage. The string
// form ("Et*4|(t*4|)*14tmL": E embedding, t decoder layer, m MTP, L loss,
// '|' between stages, x*n and (...)*n repeats) or the list form
// ([["embedding", "decoder", ...], ...]).
std::optional<std::vector<i64>> layout_stages(std::string value) {
  std::string s;
  for (std::size_t i = 0; i < value.size(); ++i) {  // "\|" is a literal '|'
    if (value[i] == '\\' && i + 1 < value.size() && value[i + 1] == '|') continue;
    s += value[i];
  }
  if (!s.empty() && s.front() == '[') {
    if (s.find('?') != std::string::npos || s.find("unknown") != std::string::npos) return std::nullopt;
    std::vector<i64> out;
    i64 depth = 0, count = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '[') {
        ++depth;
        count = 0;
      } else if (s[i] == ']') {
        if (depth == 2) out.push_back(count);
        --depth;
      } else if (s.compare(i, 9, "\"decoder\"") == 0) {
        ++count;
        i += 8;
      }
    }
    return out;
  }
  // Expand (group)*n and x*n, innermost first.
  for (int guard = 0; guard < 64; ++guard) {
    const std::size_t close = s.find(')');
    if (close == std::string::npos) break;
    const std::size_t open = s.rfind('(', close);
    if (open == std::string::npos || close + 1 >= s.size() || s[close + 1] != '*') return std::nullopt;
    std::size_t e = close + 2;
    while (e < s.size() && std::isdigit(static_cast<unsigned char>(s[e]))) ++e;
    const auto n = to_int(std::string_view(s).substr(close + 2, e - close - 2));
    if (!n || *n < 0) return std::nullopt;
    std::string rep;
    for (i64 k = 0; k < *n; ++k) rep += s.substr(open + 1, close - open - 1);
    s = s.substr(0, open) + rep + s.substr(e);
  }
  std::vector<i64> out(1, 0);
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '|') {
      out.push_back(0);
      continue;
    }
    i64 times = 1;
    if (i + 1 < s.size() && s[i + 1] == '*') {
      std::size_t e = i + 2;
      while (e < s.size() && std::isdigit(static_cast<unsigned char>(s[e]))) ++e;
      const auto n = to_int(std::string_view(s).substr(i + 2, e - i - 2));
      if (!n) return std::nullopt;
      times = *n;
      i = e - 1;
    }
    if (c == 't') out.back() += times;
  }
  return out;
}

// ---------------------------------------------------------------------------
// Architecture fields by name (data/model-arch.tsv `field`)
// ---------------------------------------------------------------------------

struct IntField {
  std::string_view name;
  std::int64_t Architecture::*member;
};

constexpr std::array<IntField, 30> kIntFields{{
    {"layers", &Architecture::layers},
    {"hidden", &Architecture::hidden},
    {"ffn", &Architecture::ffn},
    {"heads", &Architecture::heads},
    {"kv_heads", &Architecture::kv_heads},
    {"head_dim", &Architecture::head_dim},
    {"vocab", &Architecture::vocab},
    {"q_lora_rank", &Architecture::q_lora_rank},
    {"kv_lora_rank", &Architecture::kv_lora_rank},
    {"qk_head_dim", &Architecture::qk_head_dim},
    {"qk_rope_head_dim", &Architecture::qk_rope_head_dim},
    {"v_head_dim", &Architecture::v_head_dim},
    {"experts", &Architecture::experts},
    {"experts_per_token", &Architecture::experts_per_token},
    {"moe_ffn", &Architecture::moe_ffn},
    {"shared_expert_ffn", &Architecture::shared_expert_ffn},
    {"moe_latent", &Architecture::moe_latent},
    {"attention_layers", &Architecture::attention_layers},
    {"linear_attention_layers", &Architecture::linear_attention_layers},
    {"mamba_layers", &Architecture::mamba_layers},
    {"dense_mlp_layers", &Architecture::dense_mlp_layers},
    {"moe_layers", &Architecture::moe_layers},
    {"first_dense_layers", &Architecture::first_dense_layers},
    {"mamba_heads", &Architecture::mamba_heads},
    {"mamba_head_dim", &Architecture::mamba_head_dim},
    {"mamba_groups", &Architecture::mamba_groups},
    {"mamba_state", &Architecture::mamba_state},
    {"conv_kernel", &Architecture::conv_kernel},
    {"mtp_layers", &Architecture::mtp_layers},
    {"gdn_key_heads", &Architecture::gdn_key_heads},
}};

constexpr std::array<IntField, 3> kMoreIntFields{{
    {"gdn_value_heads", &Architecture::gdn_value_heads},
    {"gdn_key_dim", &Architecture::gdn_key_dim},
    {"gdn_value_dim", &Architecture::gdn_value_dim},
}};

const IntField* int_field(std::string_view name) {
  for (const auto& f : kIntFields)
    if (f.name == name) return &f;
  for (const auto& f : kMoreIntFields)
    if (f.name == name) return &f;
  return nullptr;
}

// Recipe arch.* fields (code-fields.tsv) that map one to one onto an Architecture count.
constexpr std::array<std::pair<std::string_view, std::string_view>, 14> kRecipeArch{{
    {"arch.num_layers", "layers"},
    {"arch.hidden_size", "hidden"},
    {"arch.ffn_hidden_size", "ffn"},
    {"arch.num_attention_heads", "heads"},
    {"arch.num_query_groups", "kv_heads"},
    {"arch.kv_channels", "head_dim"},
    {"arch.vocab_size", "vocab"},
    {"arch.num_moe_experts", "experts"},
    {"arch.moe_router_topk", "experts_per_token"},
    {"arch.moe_ffn_hidden_size", "moe_ffn"},
    {"arch.moe_shared_expert_intermediate_size", "shared_expert_ffn"},
    {"arch.moe_latent_size", "moe_latent"},
    {"arch.mamba_num_heads", "mamba_heads"},
    {"arch.mamba_head_dim", "mamba_head_dim"},
}};

constexpr std::array<std::pair<std::string_view, std::string_view>, 3> kRecipeArchMore{{
    {"arch.mamba_num_groups", "mamba_groups"},
    {"arch.mamba_state_dim", "mamba_state"},
    {"arch.mtp_num_layers", "mtp_layers"},
}};

// The tokenizer's facts (section 3 of architecture_from_facts); every other
// recipe fact it reads is an arch.* field.
constexpr std::string_view kTokenizerVocab = "tokenizer_vocab_size";
constexpr std::string_view kUseTokenizerVocab = "use_tokenizer_vocab_size";
constexpr std::string_view kTokenizerType = "tokenizer_type";
constexpr std::string_view kArchPrefix = "arch.";

// models.tsv columns read as counts.
constexpr std::array<std::pair<std::string_view, std::string_view>, 9> kRowInts{{
    {"num_layers", "layers"},
    {"hidden_size", "hidden"},
    {"ffn_hidden_size", "ffn"},
    {"num_attention_heads", "heads"},
    {"num_key_value_heads", "kv_heads"},
    {"head_dim", "head_dim"},
    {"vocab_size", "vocab"},
    {"num_experts", "experts"},
    {"experts_per_token", "experts_per_token"},
}};

std::optional<bool> parse_bool_word(std::string_view v) {
  if (v == "true" || v == "1" || v == "yes") return true;
  if (v == "false" || v == "0" || v == "no") return false;
  return std::nullopt;
}

std::optional<DType> torch_dtype(std::string_view v) {
  if (v == "torch.float32" || v == "torch.float") return DType::kFp32;
  if (v == "torch.bfloat16") return DType::kBf16;
  if (v == "torch.float16" || v == "torch.half") return DType::kFp16;
  if (v == "torch.uint8" || v.find("float8") != std::string_view::npos) return DType::kFp8;
  return std::nullopt;
}

}  // namespace

std::variant<Mapped<Architecture>, InputError> architecture_from_facts(const ModelRow* model, const ArchFacts& arch,
                                                                       const RecipeFacts& recipe) {
  Mapped<Architecture> out;
  Architecture& a = out.value;
  auto set = [&](std::string_view name, i64 v) {
    if (const IntField* f = int_field(name)) a.*(f->member) = v;
  };

  // 1. The model row.
  if (model) {
    for (const auto& [col, name] : kRowInts) {
      auto it = model->find(col);
      if (it == model->end()) continue;
      std::string_view cell = it->second;
      if (col == "num_key_value_heads" && cell.rfind("mla:", 0) == 0) continue;  // MLA: dims from model-arch.tsv
      if (auto v = to_int(cell)) set(name, *v);
    }
    if (auto it = model->find("moe_ffn_hidden_size"); it != model->end())
      if (auto v = to_int(it->second)) a.moe_ffn = *v;
    if (auto it = model->find("total_params_b"); it != model->end())
      if (auto v = to_double(it->second)) a.total_params = *v * 1e9;
    if (auto it = model->find("active_params_b"); it != model->end())
      if (auto v = to_double(it->second)) a.active_params = *v * 1e9;
  }

  // 2. model-arch.tsv facts.
  for (const auto& [field, value] : arch) {
    if (field == "mlp_kind") {
      if (value != "gated" && value != "plain") return InputError{"model-arch.tsv: mlp_kind is '" + value + "', not gated or plain"};
      a.mlp_kind = value == "plain" ? MlpKind::kPlain : MlpKind::kGated;
    } else if (field == "tied_embeddings" || field == "mtp_shared") {
      auto b = parse_bool_word(value);
      if (!b) return InputError{"model-arch.tsv: " + field + " is '" + value + "', not true or false"};
      (field == "tied_embeddings" ? a.tied_embeddings : a.mtp_shared) = *b;
    } else if (field == "extra_params_b") {
      auto v = to_double(value);
      if (!v) return InputError{"model-arch.tsv: extra_params_b is '" + value + "', not a number"};
      a.extra_params = *v * 1e9;
    } else if (field == "approximation") {
      out.assumptions.push_back("architecture approximated: " + value);
    } else if (const IntField* f = int_field(field)) {
      auto v = to_int(value);
      if (!v) return InputError{"model-arch.tsv: " + field + " is '" + value + "', not an integer"};
      a.*(f->member) = *v;
    } else {
      return InputError{"model-arch.tsv: unknown field '" + field + "'"};
    }
  }

  // 3. The recipe's own architecture facts.
  const bool defaults = model == nullptr;
  for (const auto& [field, name] : kRecipeArch)
    if (auto v = fact_int(recipe, field, defaults)) set(name, *v);
  for (const auto& [field, name] : kRecipeArchMore)
    if (auto v = fact_int(recipe, field, defaults)) set(name, *v);
  if (auto b = fact_bool(recipe, "arch.share_embeddings_and_output_weights", defaults)) a.tied_embeddings = *b;
  if (auto b = fact_bool(recipe, "arch.mtp_use_repeated_layer", defaults)) a.mtp_shared = *b;
  {
    const std::string act = fact_text(recipe, "arch.activation_func", defaults);
    const auto glu = fact_bool(recipe, "arch.gated_linear_unit", defaults);
    if (glu) a.mlp_kind = *glu ? MlpKind::kGated : MlpKind::kPlain;
    if (act.find("squared_relu") != std::string::npos) a.mlp_kind = MlpKind::kPlain;
  }
  // Tokenizer vocabulary: Bridge's setup takes it when use_tokenizer_vocab_size
  // is set (training/setup.py _validate_and_set_vocab_size), and when the model has none.
  if (auto tv = fact_int(recipe, kTokenizerVocab)) {
    const bool use = fact_bool(recipe, kUseTokenizerVocab).value_or(false);
    if (use || a.vocab <= 0) {
      if (a.vocab != *tv)
        out.assumptions.push_back("vocabulary " + std::to_string(*tv) + " of the recipe's tokenizer (" + fact_text(recipe, kTokenizerType) +
                                  "), not the model's " + std::to_string(a.vocab));
      a.vocab = *tv;
    }
  }

  // 4. Block counts: a hybrid pattern, model-arch.tsv counts, or a plain transformer.
  std::string pattern = fact_text(recipe, "arch.hybrid_layer_pattern", defaults);
  if (pattern.empty()) pattern = fact_text(recipe, "arch.hybrid_override_pattern", defaults);
  if (!pattern.empty()) {
    const std::size_t slash = pattern.find('/');
    const std::string main = pattern.substr(0, slash);
    if (slash != std::string::npos)
      a.mtp_layers = static_cast<i64>(std::count(pattern.begin() + static_cast<long>(slash), pattern.end(), '/'));
    a.layers = static_cast<i64>(main.size());
    a.attention_layers = static_cast<i64>(std::count(main.begin(), main.end(), '*'));
    a.mamba_layers = static_cast<i64>(std::count(main.begin(), main.end(), 'M'));
    a.dense_mlp_layers = static_cast<i64>(std::count(main.begin(), main.end(), '-'));
    a.moe_layers = static_cast<i64>(std::count(main.begin(), main.end(), 'E'));
    a.linear_attention_layers = static_cast<i64>(std::count(main.begin(), main.end(), 'G'));
    if (a.mamba_layers > 0 && a.conv_kernel == 0) {
      a.conv_kernel = 4;  // Megatron-Core MambaMixer d_conv default
      out.assumptions.push_back("Mamba conv kernel 4 (Megatron-Core default)");
    }
  } else if (a.attention_layers + a.linear_attention_layers + a.mamba_layers == 0) {
    a.attention_layers = a.layers;
    if (const Fact* freq = known(recipe, "arch.moe_layer_freq", defaults); freq && !is_none(freq)) {
      if (auto list = parse_list(freq->value); list && static_cast<i64>(list->size()) == a.layers) {
        i64 moe = 0, first = -1;
        for (std::size_t i = 0; i < list->size(); ++i)
          if ((*list)[i] == "1") {
            ++moe;
            if (first < 0) first = static_cast<i64>(i);
          }
        a.moe_layers = moe;
        a.first_dense_layers = std::max<i64>(0, first);
      }
    } else if (a.moe_layers == 0 && a.experts > 0) {
      a.moe_layers = a.layers - a.first_dense_layers;
    }
    if (a.experts == 0) a.moe_layers = 0;
    if (a.dense_mlp_layers == 0) a.dense_mlp_layers = a.layers - a.moe_layers;
  }
  if (a.experts == 0) {
    a.moe_layers = 0;
    a.experts_per_token = 0;  // a top-k default means nothing without experts
  }
  if (a.kv_heads <= 0) a.kv_heads = a.heads;
  if (a.head_dim <= 0 && a.heads > 0) a.head_dim = a.hidden / a.heads;
  a.mla = a.kv_lora_rank > 0;
  if (model == nullptr && a.total_params == 0) out.assumptions.push_back("no published parameter count to cross-check");
  if (auto e = validate(a)) return InputError{"architecture incomplete: " + e->message};
  return out;
}

bool architecture_reads(std::string_view field) {
  return kb::starts_with(field, kArchPrefix) || field == kTokenizerVocab || field == kUseTokenizerVocab || field == kTokenizerType;
}

std::variant<Mapped<Layout>, InputError> layout_from_facts(const RecipeFacts& recipe, std::int64_t world, bool any_layout_fp8_gemm) {
  Mapped<Layout> out;
  Layout& l = out.value;
  l.world = world;
  l.any_layout_fp8_gemm = any_layout_fp8_gemm;
  auto size = [&](std::string_view field, i64 fallback) -> i64 {
    auto v = fact_int(recipe, field);
    return v && *v >= 1 ? *v : fallback;
  };
  for (std::string_view f : {"tp", "pp", "cp", "ep"}) {
    const auto it = recipe.find(f);
    if (it == recipe.end() || it->second.state == FactState::Unknown || it->second.state == FactState::Alternatives)
      out.assumptions.push_back(std::string(f) + " not known from the recipe: 1");
  }
  l.tp = size("tp", 1);
  l.pp = size("pp", 1);
  l.vp = size("vp", 1);
  l.cp = size("cp", 1);
  l.ep = size("ep", 1);
  // Bridge: an unset ETP is 1 when EP > 1 (models/transformer_config.py); Megatron-Core makes it TP otherwise.
  l.etp = size("etp", l.ep > 1 ? 1 : l.tp);
  l.sp = fact_bool(recipe, "sp").value_or(false);
  if (l.pp > 1) {
    const Fact* lay = known(recipe, "pipeline_layout");
    const auto alt = recipe.find("pipeline_layout");
    if (!is_none(lay)) {
      auto stages = layout_stages(lay->value);
      if (!stages || stages->empty() || static_cast<i64>(stages->size()) % l.pp != 0) {
        out.assumptions.push_back("pipeline layout not read: layers split evenly");
      } else {
        std::vector<i64> per_rank(static_cast<std::size_t>(l.pp), 0);
        for (std::size_t i = 0; i < stages->size(); ++i) per_rank[i % static_cast<std::size_t>(l.pp)] += (*stages)[i];
        l.first_stage_layers = per_rank.front();
        l.last_stage_layers = per_rank.back();
        l.vp = static_cast<i64>(stages->size()) / l.pp;
      }
    } else if (alt != recipe.end() && alt->second.state == FactState::Alternatives) {
      out.assumptions.push_back("pipeline layout depends on a run-time condition: layers split evenly");
    } else {
      l.first_stage_layers = fact_int(recipe, "first_stage_layers").value_or(0);
      l.last_stage_layers = fact_int(recipe, "last_stage_layers").value_or(0);
      // Megatron-Core ignores the account_for_* flags when stage sizes or a layout are given.
      if (l.first_stage_layers == 0 && l.last_stage_layers == 0) {
        l.embedding_in_split = fact_bool(recipe, "embedding_in_pp_split").value_or(false);
        l.loss_in_split = fact_bool(recipe, "loss_in_pp_split").value_or(false);
      }
    }
  }
  return out;
}

std::variant<Mapped<Training>, InputError> training_from_facts(const RecipeFacts& recipe) {
  Mapped<Training> out;
  Training& t = out.value;
  auto note = [&](std::string s) { out.assumptions.push_back(std::move(s)); };

  // Mode.
  const std::string peft = fact_text(recipe, "peft");
  if (peft.find("DoRA") != std::string::npos)
    t.mode = Mode::kDora;
  else if (peft.find("LoRA") != std::string::npos)
    t.mode = Mode::kLora;
  t.freeze_decoder = t.mode == Mode::kFull && fact_bool(recipe, "freeze_language_model").value_or(false);

  // Precision. fp8/fp4 are read through get_mixed_precision_config when the recipe names a preset.
  const std::string fp4 = fact_text(recipe, "fp4");
  const std::string fp8 = fact_text(recipe, "fp8");
  if (!fp4.empty()) {
    t.precision = Precision::kNvfp4;
    t.low_precision_params = fact_bool(recipe, "fp4_param_gather").value_or(false);
  } else if (!fp8.empty()) {
    t.precision = fact_text(recipe, "fp8_recipe") == "mxfp8" ? Precision::kMxfp8 : Precision::kFp8;
    t.low_precision_params = fact_bool(recipe, "fp8_param_gather").value_or(false);
  }

  // Optimizer.
  const std::string opt = fact_text(recipe, "optimizer");
  t.optimizer = opt.find("muon") != std::string::npos ? Optimizer::kMuon : Optimizer::kAdam;
  // Bridge enables the distributed optimizer when either config asks for it
  // (training/config.py _validate_and_sync_distributed_optimizer_settings); dist_muon shards its state too.
  t.distributed_optimizer = fact_bool(recipe, "optimizer_distributed").value_or(false) ||
                            fact_bool(recipe, "ddp_distributed_optimizer").value_or(false) || opt == "dist_muon";
  if (fact_bool(recipe, "precision_aware_optimizer").value_or(false)) {
    auto dt = [&](std::string_view field) {
      auto d = torch_dtype(fact_text(recipe, field));
      if (!d) note(std::string(field) + " not known: FP32");
      return d.value_or(DType::kFp32);
    };
    t.main_param_dtype = dt("main_params_dtype");
    t.exp_avg_dtype = dt("exp_avg_dtype");
    t.exp_avg_sq_dtype = dt("exp_avg_sq_dtype");
  }
  // Optimizer CPU offload (Megatron Core's HybridDeviceOptimizer): needs the
  // distributed optimizer (Bridge docs/training/cpu-offloading.md, feature interactions).
  if (fact_bool(recipe, "optimizer_cpu_offload").value_or(false) && t.distributed_optimizer) {
    const Fact* f = known(recipe, "optimizer_offload_fraction");
    const auto fraction = f ? to_double(f->value) : std::nullopt;
    if (!fraction) note("optimizer_offload_fraction not known: nothing offloaded");
    t.optimizer_offload = std::clamp(fraction.value_or(0.0), 0.0, 1.0);
  }
  if (fact_bool(recipe, "use_megatron_fsdp").value_or(false)) {
    const std::string sharding = fact_text(recipe, "fsdp_sharding");
    if (sharding == "optim_grads_params")
      t.fsdp = true;
    else
      t.distributed_optimizer = true;  // 'optim' / 'optim_grads': optimizer state sharded (grads counted whole)
  }
  if (auto g = fact_bool(recipe, "grad_reduce_in_fp32"))
    t.grad_reduce_in_fp32 = *g;
  else
    note("grad_reduce_in_fp32 not known: FP32 gradients (MixedPrecisionConfig default)");

  // Sequence and batch. Packed SFT samples fill packed_sequence_size tokens.
  const i64 seq = fact_int(recipe, "seq_length").value_or(0);
  const i64 packed = fact_int(recipe, "packed_sequence_size").value_or(0);
  t.seq_length = std::max(seq, packed);
  if (t.seq_length <= 0) t.seq_length = fact_int(recipe, "model_seq_length").value_or(0);
  if (t.seq_length <= 0) return InputError{"the recipe's sequence length is not known"};
  if (auto m = fact_int(recipe, "micro_batch_size"); m && *m > 0)
    t.micro_batch = *m;
  else
    note("micro batch size not known: 1");
  t.global_batch = fact_int(recipe, "global_batch_size").value_or(0);

  // Recompute.
  const std::string gran = fact_text(recipe, "recompute_granularity");
  if (gran == "full") t.recompute = Recompute::kFull;
  if (gran == "selective") t.recompute = Recompute::kSelective;
  if (fact_text(recipe, "recompute_method") == "block") t.recompute_method = RecomputeMethod::kBlock;
  if (auto n = fact_int(recipe, "recompute_num_layers"); n && *n > 0) t.recompute_layers = *n;
  auto modules = [&](std::string_view field, ModuleSet& set) -> bool {  // false when the list is absent
    const Fact* f = known(recipe, field);
    if (is_none(f)) return false;
    auto list = parse_list(f->value);
    if (!list) {
      note(std::string(field) + " not read: '" + f->value + "'");
      return false;
    }
    for (const auto& m : *list) {
      if (auto mod = parse_module(m))
        set.add(*mod);
      else
        note(std::string(field) + ": '" + m + "' not modelled (ignored)");
    }
    return true;
  };
  if (t.recompute == Recompute::kSelective) {
    const bool listed = modules("recompute_modules", t.recompute_modules);
    if (listed && t.recompute_modules.bits == 0 && known(recipe, "recompute_modules")->value == "[]")
      t.recompute = Recompute::kNone;  // an explicit empty list recomputes nothing
  }
  if (fact_bool(recipe, "activation_offloading").value_or(false)) modules("offload_modules", t.offload_modules);
  if (fact_bool(recipe, "cpu_offloading").value_or(false)) t.offload_layers = fact_int(recipe, "cpu_offloading_num_layers").value_or(0);

  // LoRA / DoRA.
  if (t.mode != Mode::kFull) {
    if (auto r = fact_int(recipe, "peft_dim"); r && *r > 0)
      t.lora_rank = *r;
    else {
      t.lora_rank = 32;
      note("LoRA rank not known: 32 (Bridge LoRA default)");
    }
    const Fact* tg = known(recipe, "peft_target_modules");
    auto list = tg ? parse_list(tg->value) : std::nullopt;
    if (!list) {
      list = std::vector<std::string>{"linear_qkv", "linear_proj", "linear_fc1", "linear_fc2"};
      note("LoRA targets not known: linear_qkv, linear_proj, linear_fc1, linear_fc2 (Bridge LoRA default)");
    }
    for (const auto& m : *list) {
      if (auto x = parse_lora_target(m))
        t.lora_targets.add(*x);
      else
        note("LoRA target '" + m + "' not modelled (ignored)");
    }
    t.lora_per_expert = fact_bool(recipe, "peft_share_expert_adapters") == std::optional<bool>(false);
  }

  // Attention, dropout, loss.
  const std::string backend = fact_text(recipe, "attention_backend");
  t.flash_attention = backend.find("unfused") == std::string::npos && backend.find("local") == std::string::npos;
  bool dropout_known = false;
  for (std::string_view f : {"hidden_dropout", "attention_dropout"}) {
    const Fact* x = known(recipe, f);
    if (!x) continue;
    dropout_known = true;
    if (auto v = to_double(x->value); v && *v > 0) t.dropout = true;
  }
  if (!dropout_known) note("dropout not known (set by the Hugging Face conversion, 0.0 for the converted models): off");
  t.te_cross_entropy =
      fact_bool(recipe, "cross_entropy_loss_fusion").value_or(false) && fact_text(recipe, "cross_entropy_fusion_impl") == "te";
  return out;
}

}  // namespace kbq::memory
