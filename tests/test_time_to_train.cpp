// Time to train a token budget, asked in the four languages, against hand
// arithmetic: each question names a benchmark configuration NVIDIA measured
// (or, for the last, one it did not), and the expected seconds are the
// budget over the measured tokens/s/GPU times the GPUs, with the numbers
// copied from the tables (docs/throughput.md). kbq runs as a process with
// --format json; the text answer is checked for the duration in the
// question's language.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <cmath>
#include <string>

#include "process.hpp"

namespace {

struct Case {
  const char* question;
  const char* recipe;        // the result the question must get
  const char* source;        // the measured row: file:line
  double tokens_per_gpu;     // as the table writes it
  long long gpus, gbs, seq;  // of the configuration
  double budget;             // tokens × epochs, by hand
  double seconds;            // budget / (tokens_per_gpu × gpus), by hand
  const char* duration;      // in the text answer
};

constexpr const char* kNew = "upstream/megatron-bridge/067f987df/docs/performance-summary.md";
constexpr const char* kArchive = "upstream/megatron-bridge/067f987df/docs/performance-summary-archive.md";

std::string at(const char* file, int line) { return std::string(file) + ":" + std::to_string(line); }

}  // namespace

TEST_CASE("time to train: ten budgets in four languages equal the hand arithmetic on NVIDIA's measured rows", "[throughput]") {
  const std::vector<Case> cases = {
      // 1e12 / (44544 × 8) = 2,806,214.08 s = 32.5 days
      {"benchmark qwen3 30b-a3b 8 gb300 mxfp8 1T tokens", "qwen3_30b_a3b_pretrain_8gpu_gb300_fp8mx_config", nullptr, 44544, 8, 512, 4096,
       1e12, 2806214.0804597703, "32.5 days"},
      // 1e13 / (4912 × 256) = 7,952,463.36 s = 92.0 days
      {"benchmark deepseek v3 256 gb200 mxfp8 for 10T tokens", "deepseek_v3_pretrain_256gpu_gb200_fp8mx_config", nullptr, 4912, 256, 4096,
       4096, 1e13, 7952463.3550488595, "92.0 days"},
      // 3 × 2e9 = 6e9; 6e9 / (6206 × 8) = 120,850.79 s = 1.4 days
      {"benchmark llama3 70b lora 8 gb200 fp8 3 epochs of 2B tokens", "llama3_70b_peft_8gpu_gb200_fp8cs_config", nullptr, 6206, 8, 32, 4096,
       6e9, 120850.78955849179, "1.4 days"},
      // 5e11 / (39936 × 8) = 1,565,004.01 s = 18.1 jours
      {"combien de temps pour le benchmark qwen3 30b-a3b sur 8 gb200 mxfp8 avec 500 milliards de jetons",
       "qwen3_30b_a3b_pretrain_8gpu_gb200_fp8mx_config", nullptr, 39936, 8, 512, 4096, 5e11, 1565004.0064102565, "18.1 jours"},
      // 3 × 1e11 = 3e11; 3e11 / (39936 × 8) = 939,002.40 s = 10.9 jours
      {"benchmark nemotron 3 nano 8 gb300 mxfp8 3 époques de 100 milliards de jetons", "nemotron_3_nano_pretrain_8gpu_gb300_fp8mx_config",
       nullptr, 39936, 8, 512, 8192, 3e11, 939002.4038461539, "10.9 jours"},
      // 1e12 / (6288 × 256) = 621,222.96 s = 7.2 天
      {"基准测试 deepseek v3 256张gb300 mxfp8 1万亿个token需要多久", "deepseek_v3_pretrain_256gpu_gb300_fp8mx_config", nullptr, 6288, 256,
       4096, 4096, 1e12, 621222.9643765903, "7.2 天"},
      // 5e11 / (28672 × 64) = 272,478.38 s = 3.2 天
      {"基准测试 gpt-oss 120b 64张gb200 mxfp8 5000亿token", "gpt_oss_120b_pretrain_64gpu_gb200_fp8mx_config", nullptr, 28672, 64, 1280,
       4096, 5e11, 272478.3761160714, "3.2 天"},
      // 2e12 / (8816 × 256) = 886,172.87 s = 10.3 日
      {"ベンチマーク qwen3 235b-a22b 256枚 gb300 mxfp8 2兆トークン", "qwen3_235b_a22b_pretrain_256gpu_gb300_fp8mx_config", nullptr, 8816,
       256, 8192, 4096, 2e12, 886172.8675136116, "10.3 日"},
      // 3 × 1e11 = 3e11; 3e11 / (10240 × 64) = 457,763.67 s = 5.3 日
      {"ベンチマーク nemotron 3 super 64 枚 gb300 nvfp4 3 エポック 1000億トークン", "nemotron_3_super_pretrain_64gpu_gb300_nvfp4_config",
       nullptr, 10240, 64, 512, 8192, 3e11, 457763.671875, "5.3 日"},
  };
  const std::vector<std::string> sources = {at(kNew, 66), at(kNew, 46), at(kArchive, 189), at(kNew, 67), at(kNew, 80),
                                            at(kNew, 45), at(kNew, 60), at(kNew, 73),      at(kNew, 93)};
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    INFO(c.question);
    const auto r = kbtest::run(KBQ_PATH, {c.question, "--format", "json"});
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    const auto& top = j["results"][0];
    CHECK(top["recipe"] == c.recipe);
    const auto& t = top["throughput"];
    CHECK(t["basis"] == "measured");
    CHECK(t["source"] == sources[i]);
    CHECK(t["tokens_per_s_per_gpu"].get<double>() == c.tokens_per_gpu);
    CHECK(t["tokens_per_s"].get<double>() == c.tokens_per_gpu * static_cast<double>(c.gpus));
    // One step: GBS × sequence tokens at the job's rate.
    CHECK(std::fabs(t["step_time_s"].get<double>() -
                    static_cast<double>(c.gbs * c.seq) / (c.tokens_per_gpu * static_cast<double>(c.gpus))) < 1e-9);
    REQUIRE(top["time_to_train"].is_object());
    CHECK(top["time_to_train"]["tokens"].get<double>() == c.budget);
    CHECK(std::fabs(top["time_to_train"]["seconds"].get<double>() / c.seconds - 1) < 1e-9);
    const auto text = kbtest::run(KBQ_PATH, {c.question});
    CHECK(text.out.find(c.duration) != std::string::npos);
  }
}

TEST_CASE("time to train: an unmeasured configuration is estimated, cited and banded, and its days follow from the estimate",
          "[throughput]") {
  const auto r = kbtest::run(KBQ_PATH, {"how long to pretrain llama3 70b on 1T tokens with 64 H100", "--format", "json"});
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  const auto& top = j["results"][0];
  CHECK(top["recipe"] == "llama3_70b_pretrain_config");
  const auto& t = top["throughput"];
  CHECK(t["basis"] == "estimated");
  CHECK(t["method"] == "same_model");
  CHECK(t["error_band_pct"].get<double>() > 0);
  CHECK(t["source"].get<std::string>().find("performance-summary-archive.md:") != std::string::npos);  // the nearest LLAMA3_70B row
  const double tokens_per_s = t["tokens_per_s_per_gpu"].get<double>() * 64;
  CHECK(t["tokens_per_s"].get<double>() == tokens_per_s);
  CHECK(top["time_to_train"]["tokens"].get<double>() == 1e12);
  CHECK(std::fabs(top["time_to_train"]["seconds"].get<double>() - 1e12 / tokens_per_s) < 1e-6);
  // No budget, no time to train; a throughput still.
  const auto plain = nlohmann::json::parse(kbtest::run(KBQ_PATH, {"pretrain llama3 70b 64 h100", "--format", "json"}).out);
  CHECK(plain["results"][0]["time_to_train"].is_null());
  CHECK(plain["results"][0]["throughput"]["basis"] != "none");
}
