// The launch-command builder (query/plan/command.hpp) on its own, from
// values written here: the documents' entry-point commands as the KB holds
// them and launcher flags as the code's launcher table lists them. Each case
// states the whole command a person would paste.
#include <catch2/catch.hpp>

#include <string>

#include "query/plan/command.hpp"

namespace {

const std::string kLibraryEntry =
    "uv run python -m torch.distributed.run --nproc_per_node=8 scripts/training/run_recipe.py \\\n"
    "    --recipe <recipe_function_name> \\\n"
    "    --dataset mock\n";
const std::string kBenchmarkEntry =
    "./scripts/training/train.sh \\\n"
    "    --nodes 2 --gpus-per-node 8 \\\n"
    "    --account ACCOUNT --partition PARTITION --container-image IMAGE \\\n"
    "    --recipe qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config \\\n"
    "    --mode pretrain";

kbq::Snapshot snapshot() {
  kbq::Snapshot kb;
  kbq::Settings& s = kb.settings;
  s.recipe_flag = "--recipe";
  s.dataset_flag = "--dataset";
  s.nproc_flag = "--nproc_per_node";
  s.multi_node_flags = "--nnodes={nodes} --node_rank=$NODE_RANK";
  s.bench_nodes_flag = "--nodes";
  s.bench_gpus_per_node_flag = "--gpus-per-node";
  s.bench_mode_flag = "--mode";
  s.launcher_parser = "run_recipe";
  s.launch_mode_flag = "mode";
  // By item, as the launcher table is read: short and long spellings, the config key set.
  kb.flags = {
      {"run_recipe:mode", "", "--mode --launch-mode", "", "run_recipe.py:10", ""},
      {"run_recipe:pipeline_model_parallel_size", "-pp", "--pipeline_model_parallel_size", "model.pipeline_model_parallel_size",
       "run_recipe.py:20", "int"},
      {"run_recipe:tensor_model_parallel_size", "-tp", "--tensor_model_parallel_size", "model.tensor_model_parallel_size",
       "run_recipe.py:30", "int"},
      {"run_recipe:virtual_pipeline_model_parallel_size", "-vp", "--virtual_pipeline_model_parallel_size",
       "model.virtual_pipeline_model_parallel_size", "run_recipe.py:35", "int"},
      {"run_recipe:lr", "", "--lr", "optimizer.lr", "run_recipe.py:40", "float"},
  };
  return kb;
}

kbq::LaunchSpec library(long long nodes, long long nproc) {
  kbq::LaunchSpec spec;
  spec.entry = kLibraryEntry;
  spec.recipe = "llama3_70b_pretrain_config";
  spec.recipe_mode = "pretrain";
  spec.launch_mode = "pretrain";
  spec.dataset = "mock";
  spec.nodes = nodes;
  spec.nproc = nproc;
  return spec;
}

}  // namespace

TEST_CASE("launch command: one node sets the processes, the recipe and the dataset, and trims the entry's last line end", "[command]") {
  const auto kb = snapshot();
  auto spec = library(1, 4);
  spec.dataset = "squad";
  CHECK(kbq::launch_command(spec, kb) ==
        "uv run python -m torch.distributed.run --nproc_per_node=4 scripts/training/run_recipe.py \\\n"
        "    --recipe llama3_70b_pretrain_config \\\n"
        "    --dataset squad");
}

TEST_CASE("launch command: several nodes put torchrun's multi-node flags before the processes per node", "[command]") {
  const auto kb = snapshot();
  CHECK(kbq::launch_command(library(2, 8), kb) ==
        "uv run python -m torch.distributed.run --nnodes=2 --node_rank=$NODE_RANK --nproc_per_node=8 scripts/training/run_recipe.py \\\n"
        "    --recipe llama3_70b_pretrain_config \\\n"
        "    --dataset mock");
}

TEST_CASE("launch command: changes with a launcher option go on one line (short spelling first), the others one quoted KEY=VALUE per line",
          "[command]") {
  const auto kb = snapshot();
  auto spec = library(1, 8);
  spec.changes = {{"model.tensor_model_parallel_size", "4"},
                  {"model.sequence_parallel", "true"},
                  {"optimizer.lr", "1e-4"},
                  {"model.pipeline_model_parallel_size", "2"},
                  {"checkpoint.pretrained_checkpoint", "/path/it's here"}};
  CHECK(kbq::launch_command(spec, kb) ==
        "uv run python -m torch.distributed.run --nproc_per_node=8 scripts/training/run_recipe.py \\\n"
        "    --recipe llama3_70b_pretrain_config \\\n"
        "    --dataset mock \\\n"
        "    -tp 4 --lr 1e-4 -pp 2 \\\n"
        "    'model.sequence_parallel=true' \\\n"
        "    'checkpoint.pretrained_checkpoint=/path/it'\\''s here'");
}

TEST_CASE("launch command: a value the option's argparse type refuses (None for an int) goes as KEY=VALUE, not as the option",
          "[command]") {
  const auto kb = snapshot();
  auto spec = library(1, 8);
  spec.changes = {{"model.pipeline_model_parallel_size", "1"}, {"model.virtual_pipeline_model_parallel_size", "null"}};
  CHECK(kbq::launch_command(spec, kb) ==
        "uv run python -m torch.distributed.run --nproc_per_node=8 scripts/training/run_recipe.py \\\n"
        "    --recipe llama3_70b_pretrain_config \\\n"
        "    --dataset mock \\\n"
        "    -pp 1 \\\n"
        "    'model.virtual_pipeline_model_parallel_size=null'");
  spec.changes = {{"model.virtual_pipeline_model_parallel_size", "-2"}};  // a whole number argparse takes: the option
  CHECK(kbq::launch_command(spec, kb).find("-vp -2") != std::string::npos);
}

TEST_CASE("launch command: another launcher mode than the recipe's is passed first, by the first long spelling of its flag", "[command]") {
  const auto kb = snapshot();
  auto spec = library(1, 1);
  spec.recipe = "qwen3_8b_peft_config";
  spec.recipe_mode = "lora";
  spec.launch_mode = "dora";
  spec.changes = {{"model.tensor_model_parallel_size", "1"}};
  CHECK(kbq::launch_command(spec, kb) ==
        "uv run python -m torch.distributed.run --nproc_per_node=1 scripts/training/run_recipe.py \\\n"
        "    --recipe qwen3_8b_peft_config \\\n"
        "    --dataset mock \\\n"
        "    --mode dora -tp 1");
  spec.launch_mode = "lora";  // the recipe's own: nothing passed
  CHECK(kbq::launch_command(spec, kb).find("--mode") == std::string::npos);
}

TEST_CASE("launch command: a benchmark sets only its launcher's nodes, GPUs per node, recipe and mode", "[command]") {
  const auto kb = snapshot();
  kbq::LaunchSpec spec;
  spec.entry = kBenchmarkEntry;
  spec.kind = kbq::RecipeKind::Benchmark;
  spec.recipe = "llama3_8b_pretrain_8gpu_h100_bf16_config";
  spec.recipe_mode = "pretrain";
  spec.nodes = 1;
  spec.nproc = 8;
  spec.dataset = "ignored";
  spec.changes = {{"model.tensor_model_parallel_size", "4"}};
  CHECK(kbq::launch_command(spec, kb) ==
        "./scripts/training/train.sh \\\n"
        "    --nodes 1 --gpus-per-node 8 \\\n"
        "    --account ACCOUNT --partition PARTITION --container-image IMAGE \\\n"
        "    --recipe llama3_8b_pretrain_8gpu_h100_bf16_config \\\n"
        "    --mode pretrain");
}

TEST_CASE("launch command: a value is one shell word, quoted unless plain", "[command]") {
  CHECK(kbq::shell_word("squad") == "squad");
  CHECK(kbq::shell_word("/data/a_b-c.d:1,2+3=4") == "/data/a_b-c.d:1,2+3=4");
  CHECK(kbq::shell_word("") == "''");
  CHECK(kbq::shell_word("a b") == "'a b'");
  CHECK(kbq::shell_word("$(rm -rf ~)") == "'$(rm -rf ~)'");
  CHECK(kbq::shell_word("it's") == "'it'\\''s'");
  // A recipe name that is not plain cannot break out of its flag.
  const auto kb = snapshot();
  auto spec = library(1, 1);
  spec.recipe = "x; echo PWNED";
  CHECK(kbq::launch_command(spec, kb).find("--recipe 'x; echo PWNED'") != std::string::npos);
}
