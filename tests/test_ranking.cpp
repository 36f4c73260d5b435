// The ranking oracle: kbq's answers must be in the documented order
// (docs/ranking.md, data/ranking.tsv): constraints first — mode, model and
// size, modality, the precision asked (a low-precision variant never stands
// in for a plain recipe that does not fit), feasible on the user's GPUs —
// then preferences — the sequence variant that covers the request, the fewest
// changes from the recipe's own layout; quick-reference picks, the recipe's
// own GPU count and the name only break ties. The oracle states each
// criterion from what the question asks (written in the table below, not
// parsed) and a result's own facts (its recipe, layout, overrides), never
// from the ranker's score parts, and checks every adjacent pair.
#include <catch2/catch.hpp>

#include <cmath>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "process.hpp"
#include "query/kbq.hpp"

namespace {

struct Question {
  std::string text;
  std::string mode;          // the mode asked ("" none); a quick-reference intent row's mode counts as asked
  std::string intent_model;  // "model_key/mode" a quick-reference intent row names, when the question names no model
  std::string modality;      // the modality asked ("text" unless the question asks for another)
  long long seq;             // the sequence length asked, 0 none
  bool low_precision;        // the question asks for FP8 / FP4
};

const std::vector<Question> kQuestions = {
    {"peft qwen3 1 gpu", "peft", "", "text", 0, false},
    {"sft llama3 70b 16 gpus", "sft", "", "text", 0, false},
    {"SFT, 8×H100, 16K sequence", "sft", "", "text", 16384, false},
    {"pretrain deepseek v3 32 nodes", "pretrain", "", "text", 0, false},
    {"first time trying bridge", "", "llama3_8b/pretrain", "text", 0, false},
    {"llama3 8b 64k context pretrain", "pretrain", "", "text", 65536, false},
    {"pretrain llama3 70b 64 gpus", "pretrain", "", "text", 0, false},
    {"qwen3 moe 30b sft 16 gpus", "sft", "", "text", 0, false},
    {"pretrain 8 gpus", "pretrain", "", "text", 0, false},
    {"sft", "sft", "", "text", 0, false},
    {"peft llama", "peft", "", "text", 0, false},
    {"vlm sft", "sft", "", "vision", 0, false},
    {"long context 64k", "", "llama3_8b/pretrain", "text", 65536, false},
    {"qwen3 の LoRA を 1 GPU で", "peft", "", "text", 0, false},
    {"affiner llama3 8b sur 2 nœuds", "sft", "", "text", 0, false},
    {"在 1 个 GPU 上使用 LoRA", "peft", "", "text", 0, false},
    {"pretrain 2 nodes 128k sequence", "pretrain", "", "text", 131072, false},
    {"sft 1 gpu", "sft", "", "text", 0, false},
    {"nemotron pretrain", "pretrain", "", "text", 0, false},
    {"pretrain llama3 8b fp8 8 gpus", "pretrain", "", "text", 0, true},
    {"pretrain llama3 8b 2 gpus", "pretrain", "", "text", 0, false},
    {"pretrain llama3 8b nvfp4 2 gpus", "pretrain", "", "text", 0, true},
};

const long long kLongContext = 8192;  // the decision tree's "> 8K → Need CP"

using Key = std::tuple<int, int, int, int, int, int, long long>;

Key oracle_key(const Question& q, const kbq::Result& r) {
  const auto& rc = r.recipe;
  const int mode = q.mode.empty() || rc.mode == q.mode ? 0 : 1;
  const int model = r.substitute || (!q.intent_model.empty() && rc.model_key + "/" + rc.mode != q.intent_model) ? 1 : 0;
  const int modality = rc.modality == q.modality ? 0 : 1;
  const int feasible = r.runnable ? (r.memory.known ? 0 : 1) : 2;
  const long long own = rc.seq_len.value_or(0);
  // A longer variant by how many doublings its length is from the asked one
  // (the nearest covering variant first), a shorter one after them all.
  const int longer =
      own > q.seq && q.seq > 0 ? static_cast<int>(std::ceil(std::log2(static_cast<double>(own) / static_cast<double>(q.seq)))) : 0;
  const int seq = q.seq > 0 ? (own == q.seq ? 0 : own > q.seq ? longer : 1000) : (own > kLongContext ? 1 : 0);
  const bool low = !rc.low_precision.empty() || (!rc.native_precision.empty() && rc.native_precision != "bf16");
  const int precision = low == q.low_precision ? 0 : 1;
  long long changes = 0;
  for (const auto& o : r.overrides)
    if (!o.pinned_only && o.key != "checkpoint.pretrained_checkpoint" && o.key != "model.sequence_parallel") ++changes;
  return {mode, model, modality, precision, feasible, seq, changes};
}

std::string show(const Key& k) {
  return "mode " + std::to_string(std::get<0>(k)) + ", model " + std::to_string(std::get<1>(k)) + ", modality " +
         std::to_string(std::get<2>(k)) + ", precision " + std::to_string(std::get<3>(k)) + ", feasible " + std::to_string(std::get<4>(k)) +
         ", sequence " + std::to_string(std::get<5>(k)) + ", changes " + std::to_string(std::get<6>(k));
}

}  // namespace

TEST_CASE("ranking: every answer is in the documented order of constraints, then preferences", "[ranking]") {
  kbq::Engine engine = kbq::Engine::open(std::string(KB_BINARY_DIR) + "/kb.sqlite");
  size_t pairs = 0;
  for (const auto& q : kQuestions) {
    INFO("question: " << q.text);
    kbq::AskOptions opts;
    opts.limit = 50;
    auto res = engine.ask(q.text, opts);
    REQUIRE(std::holds_alternative<kbq::Answer>(res));
    const auto& a = std::get<kbq::Answer>(res);
    for (size_t i = 1; i < a.results.size(); ++i) {
      const auto& x = a.results[i - 1];
      const auto& y = a.results[i];
      INFO(x.recipe.name << " (" << show(oracle_key(q, x)) << ") before " << y.recipe.name << " (" << show(oracle_key(q, y)) << ")");
      CHECK(oracle_key(q, x) <= oracle_key(q, y));
      ++pairs;
    }
  }
  CHECK(pairs > 100);
}

TEST_CASE("ranking: the oracle's order is not vacuous", "[ranking]") {
  // An answer holds results the oracle tells apart (not all equal keys).
  kbq::Engine engine = kbq::Engine::open(std::string(KB_BINARY_DIR) + "/kb.sqlite");
  kbq::AskOptions opts;
  opts.limit = 50;
  auto res = engine.ask("pretrain 8 gpus", opts);
  REQUIRE(std::holds_alternative<kbq::Answer>(res));
  const auto& a = std::get<kbq::Answer>(res);
  REQUIRE(a.results.size() >= 2);
  std::set<Key> keys;
  for (const auto& r : a.results) keys.insert(oracle_key(kQuestions[8], r));
  CHECK(keys.size() >= 2);
}
