// What an engine keeps between the answers of a --batch (query/plan/
// layout.hpp, Sizings): each recipe's sizing, its sizings with facts a
// question's overrides replaced, and the layout searches done with each.
// What is kept is bounded, and never changes an answer.
#include <catch2/catch.hpp>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "base/limits.hpp"
#include "process.hpp"
#include "query/kb/kb.hpp"
#include "query/plan/layout.hpp"

namespace {

const std::string kKb = std::string(KB_BINARY_DIR) + "/kbq.sqlite";
using Replaced = std::vector<std::pair<std::string, std::string>>;

}  // namespace

TEST_CASE("sizings: one entry per recipe and list of replaced facts, at most kMaxKeptSizings with replaced facts", "[sizings]") {
  kbq::Kb kb(kKb);
  const auto recipe = kb.recipe("llama3_70b_sft_config");
  REQUIRE(recipe);
  const kbq::RecipeData d = kb.data_of(*recipe);
  kbq::Sizings sizings;
  kbq::Sizings::Entry& own = sizings.of(d);
  CHECK(&sizings.of(d) == &own);
  CHECK(own.sizing.sized);

  const Replaced full{{"recompute_granularity", "full"}};
  kbq::Sizings::Entry* a = sizings.of(d, full);
  REQUIRE(a != nullptr);
  CHECK(a != &own);
  CHECK(sizings.of(d, full) == a);
  // Another value, another field, the same pairs in another order, or the
  // bytes of one pair split differently: another entry each.
  const std::vector<Replaced> others = {{{"recompute_granularity", "selective"}},
                                        {{"recompute_method", "full"}},
                                        {{"recompute_granularity", "full"}, {"recompute_method", "uniform"}},
                                        {{"recompute_method", "uniform"}, {"recompute_granularity", "full"}},
                                        {{"recompute_granularity=", "full"}},
                                        {{"recompute_granularity", "=full"}}};
  std::vector<const kbq::Sizings::Entry*> seen{&own, a};
  for (const auto& r : others) {
    const kbq::Sizings::Entry* e = sizings.of(d, r);
    REQUIRE(e != nullptr);
    CHECK(std::find(seen.begin(), seen.end(), e) == seen.end());
    seen.push_back(e);
  }
  // Up to the limit, then none: the caller sizes afresh. Those kept stay.
  size_t kept = 1 + others.size();
  for (size_t i = 0; kept < kb::limits::kMaxKeptSizings; ++i, ++kept)
    REQUIRE(sizings.of(d, Replaced{{"recompute_num_layers", std::to_string(i + 2)}}) != nullptr);
  CHECK(sizings.of(d, Replaced{{"recompute_num_layers", "100000"}}) == nullptr);
  CHECK(sizings.of(d, full) == a);
  CHECK(&sizings.of(d) == &own);
}

TEST_CASE("sizings: the kept searches are forgotten together when kMaxKeptPlacements are kept", "[sizings]") {
  kbq::Kb kb(kKb);
  const auto first = kb.recipe("llama3_70b_sft_config"), second = kb.recipe("qwen3_8b_sft_config");
  REQUIRE(first);
  REQUIRE(second);
  const kbq::RecipeData d1 = kb.data_of(*first), d2 = kb.data_of(*second);
  kbq::Sizings sizings;
  kbq::KeptPlacements& one = sizings.of(d1).placed;
  kbq::KeptPlacements& two = sizings.of(d2).placed;
  for (size_t i = 0; i + 1 < kb::limits::kMaxKeptPlacements; ++i) sizings.keep(one, "search " + std::to_string(i), std::nullopt);
  sizings.keep(two, "the last one kept", std::nullopt);
  CHECK(one.by_input.size() == kb::limits::kMaxKeptPlacements - 1);
  CHECK(two.by_input.size() == 1);
  sizings.keep(one, "one more", std::nullopt);
  CHECK(one.by_input.size() == 1);
  CHECK(one.by_input.count("one more") == 1);
  CHECK(two.by_input.empty());
}

TEST_CASE("sizings: a --batch answers each question as it did before, whatever its earlier answers kept", "[sizings]") {
  // Questions whose layout does not fit (each plans the recipe again with
  // the memory lever's recompute, a sizing with replaced facts), ones that
  // fit, and their neighbours on other GPU counts, then the same in reverse:
  // the second answer of each question is the first, byte for byte.
  const std::vector<std::string> questions = {"sft llama3 70b 16 gpus",
                                              "sft llama3 70b 8 gpus",
                                              "sft llama3 70b 32 gpus",
                                              "pretrain llama3 8b 1 gpu",
                                              "sft qwen3 235b on 8 gpus",
                                              "sft qwen3 235b on 16 gpus",
                                              "peft qwen3 1 gpu",
                                              "sft qwen3 32b 1 gpu rtx4090",
                                              "sft qwen3 32b 2 gpus rtx4090",
                                              "pretrain deepseek v3 64 gpus",
                                              "sft glm45 air 106b 8 gpus h100",
                                              "sft llama3 70b 16 gpus a100",
                                              "sft llama3 70b 24 gpus a100"};
  std::string input;
  for (const auto& q : questions) input += q + "\n";
  for (auto it = questions.rbegin(); it != questions.rend(); ++it) input += *it + "\n";
  const auto r = kbtest::run(KBQ_PATH, {"--batch"}, input);
  REQUIRE(r.exit_code == 0);
  std::vector<std::string> lines;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  REQUIRE(lines.size() == 2 * questions.size());
  size_t lever = 0;
  for (size_t i = 0; i < questions.size(); ++i) {
    INFO(questions[i]);
    CHECK(lines[i] == lines[lines.size() - 1 - i]);
    lever += lines[i].find("model.recompute_granularity=full") != std::string::npos;
  }
  CHECK(lever >= 3);  // the lever's sizings were planned, and kept
}

TEST_CASE("layout search: the sizes it leaves out fail the world-size rule in every layout", "[sizings]") {
  // The search tries no TP, PP, CP or EP that does not divide the world and
  // sizes no shape world_divisible refuses (query/plan/layout.cpp): both must
  // be what rule 5 says, on every shape, or the search would drop a layout
  // the rules pass.
  const std::vector<long long> sizes{0, 1, 2, 3, 4, 6, 8, 12, 16, 32};
  long long shapes = 0, refused = 0;
  for (long long world : {1LL, 2LL, 3LL, 4LL, 6LL, 8LL, 12LL, 16LL, 24LL, 64LL, 96LL})
    for (bool moe : {false, true})
      for (long long tp : sizes)
        for (long long pp : sizes)
          for (long long cp : {1LL, 2LL, 3LL, 8LL})
            for (long long ep : {1LL, 4LL, 6LL})
              for (long long etp : {0LL, 1LL, 2LL}) {
                kbq::RuleInput in;
                in.world = world;
                in.moe = moe;
                in.tp = tp;
                in.pp = pp;
                in.cp = cp;
                in.ep = ep;
                in.etp = etp;
                kbq::Status rule5 = kbq::Status::Unknown;
                for (const auto& o : kbq::evaluate_rules(in))
                  if (o.check == "world_size_divisible") rule5 = o.status;
                const auto one = [](long long v) { return std::max(1LL, v); };
                const bool divisible = kbq::world_divisible(world, one(tp) * one(pp) * one(cp), one(pp) * one(ep) * one(etp), moe);
                INFO("world " << world << " moe " << moe << " tp " << tp << " pp " << pp << " cp " << cp << " ep " << ep << " etp " << etp);
                CHECK(divisible == (rule5 == kbq::Status::Pass));
                // A size that does not divide the world: the rule fails.
                for (long long v : {tp, pp, cp})
                  if (!kbq::size_divides_world(world, v)) CHECK(rule5 == kbq::Status::Fail);
                if (moe && !kbq::size_divides_world(world, ep)) CHECK(rule5 == kbq::Status::Fail);
                ++shapes;
                refused += divisible ? 0 : 1;
              }
  CHECK(shapes > 10000);
  CHECK(refused > shapes / 2);
  CHECK(refused < shapes);
}
