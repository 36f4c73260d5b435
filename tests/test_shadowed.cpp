// The planner leaves a candidate unplanned when a planned result of its own
// distinct key already ranks before the best it could reach (query/rank/
// rank.hpp, shadowed): an answer shows one result per key. Table-driven on
// results built here; tests/test_questions.cpp and bench/compare_answers.py
// check that the answers stay those planning every candidate gives.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "query/rank/rank.hpp"

namespace {

const std::string kDefault = "bf16_mixed";

kbq::Recipe recipe(const std::string& name, const std::string& model, const std::string& mode, long long seq, const std::string& runs_in) {
  kbq::Recipe r;
  r.name = name;
  r.model_key = model;
  r.mode = mode;
  r.seq_len = seq;
  r.runs_in = runs_in;
  return r;
}

// Score parts: a fit (0 fits, 2 does not) then a tie-break, then the name.
std::vector<kbq::ScorePart> parts(int feasible, int changes) {
  return {{"feasible", feasible, {}}, {"changes", changes, {}}, {"name", 0, {}}};
}

kbq::Result planned(const kbq::Recipe& r, int feasible, int changes) {
  kbq::Result x;
  x.recipe = r;
  x.parts = parts(feasible, changes);
  return x;
}

}  // namespace

TEST_CASE("shadowed: a candidate is skipped only behind a planned result of its own distinct key", "[rank][plan]") {
  const kbq::Recipe bf16_16 = recipe("m_pretrain_16gpu_h100_bf16_config", "m", "pretrain", 4096, kDefault);
  const kbq::Recipe fp8_16 = recipe("m_pretrain_16gpu_h100_fp8cs_config", "m", "pretrain", 4096, "bf16_with_fp8_current_scaling_mixed");
  const std::vector<kbq::Result> done{planned(bf16_16, 0, 0)};
  struct Row {
    const char* what;
    kbq::Recipe cand;
    std::vector<kbq::ScorePart> bound;
    bool skipped;
  };
  const std::vector<Row> rows{
      {"same key, bound after the planned one", recipe("m_pretrain_64gpu_h100_bf16_config", "m", "pretrain", 4096, kDefault), parts(0, 0),
       true},
      {"same key, a worse bound", recipe("m_pretrain_8gpu_b200_bf16_config", "m", "pretrain", 4096, kDefault), parts(0, 1), true},
      {"same key, a bound before the planned one", recipe("m_pretrain_8gpu_h100_bf16_config", "m", "pretrain", 4096, kDefault), parts(0, 0),
       false},
      {"same key, a better bound than its name",
       recipe("m_pretrain_64gpu_gb200_bf16_config", "m", "pretrain", 4096, kDefault),
       {{"feasible", -1, {}}, {"changes", 0, {}}, {"name", 0, {}}},
       false},
      {"a low precision: another key", fp8_16, parts(0, 0), false},
      {"another mode", recipe("m_sft_config", "m", "sft", 4096, kDefault), parts(2, 9), false},
      {"another sequence", recipe("m_pretrain_128k_config", "m", "pretrain", 131072, kDefault), parts(2, 9), false},
      {"another model", recipe("n_pretrain_config", "n", "pretrain", 4096, kDefault), parts(2, 9), false},
      {"no model: its own key", recipe("x_config", "", "pretrain", 4096, kDefault), parts(2, 9), false},
  };
  for (const auto& row : rows) {
    INFO(row.what);
    CHECK(kbq::shadowed(done, row.cand, row.bound, kDefault) == row.skipped);
    CHECK_FALSE(kbq::shadowed({}, row.cand, row.bound, kDefault));
  }
  // The first of a key in rank order decides: behind a planned result that
  // does not fit, a candidate that may fit is planned; behind one that fits, it is not.
  const kbq::Recipe c = recipe("m_pretrain_32gpu_h100_bf16_config", "m", "pretrain", 4096, kDefault);
  CHECK_FALSE(kbq::shadowed({planned(bf16_16, 2, 0)}, c, parts(0, 0), kDefault));
  CHECK(kbq::shadowed({planned(bf16_16, 0, 0), planned(c, 2, 0)}, c, parts(1, 0), kDefault));
  CHECK(kbq::shadowed({planned(fp8_16, 0, 0), planned(bf16_16, 1, 0)}, c, parts(1, 0), kDefault));
  CHECK_FALSE(kbq::shadowed({planned(fp8_16, 0, 0), planned(bf16_16, 1, 0)}, c, parts(0, 5), kDefault));
}
