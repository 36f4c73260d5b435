// The launch command, built in one place (private to the engine): kbq's
// answers and the documentation site's recipe pages print what this builds.
// It starts from the documents' entry-point command of the recipe's kind
// (data/planner.tsv library_command / benchmark_command) and sets the
// launcher's own flags: --nproc_per_node (and torchrun's multi-node flags
// before it on more than one node), --recipe, --dataset, the launcher mode
// when the question asks for another (DoRA for a LoRA recipe), then one
// flag per change the launcher has an option for, and every other change as
// a quoted KEY=VALUE override, one per line. A benchmark recipe runs as its
// code sets it: only the benchmark launcher's nodes, GPUs per node, recipe
// and mode are set. Flag names come from the KB (data/planner.tsv, the
// code's launcher table); values are shell-quoted unless plain, and the
// command text is checked for shell syntax (kb::shell_problem: a crafted
// KB's text is an error, never part of a printed command).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "query/kb/snapshot.hpp"
#include "query/kbq.hpp"

namespace kbq {

// What the command launches.
struct LaunchSpec {
  std::string entry;                                         // the entry-point command text (its `command` part)
  std::string entry_ref;                                     // its entity ("command/library_entry/1"), for errors
  RecipeKind kind = RecipeKind::Library;                     // which launcher
  std::string recipe;                                        // the recipe name (--recipe)
  std::string recipe_mode;                                   // the launcher mode its name implies
  std::string launch_mode;                                   // the mode to run ("" or recipe_mode: none passed)
  std::string dataset;                                       // --dataset preset ("" none)
  long long nodes = 1, nproc = 1;                            // the launch shape
  std::vector<std::pair<std::string, std::string>> changes;  // config key → value, in order
};

// The full command. `kb` gives the flag names (settings and launcher flags).
std::string launch_command(const LaunchSpec& spec, const Snapshot& kb);

// What each node of a multi-node library command runs: the same command,
// with the variables of data/planner.tsv multi_node_env that it reads
// ($NAME), each with its meaning from `labels` (launch.<role>). One node,
// or a benchmark (its launcher places the nodes): no variables.
NodeLaunch node_launch(const LaunchSpec& spec, const std::string& command, const Snapshot& kb, const Labels& labels);

// An sbatch script running `command` (a library recipe's) under srun, from
// data/planner.tsv slurm_script; "" for a benchmark recipe.
std::string slurm_script(const LaunchSpec& spec, const std::string& command, const std::string& hardware, const Snapshot& kb);

// The steps before the run: how to get the --pretrained_checkpoint (the
// Hugging Face import command of data/planner.tsv checkpoint_import, with
// `hf_id` or the placeholder) when `checkpoint` names the path the command
// passes, and the launcher's dry run when its code has one.
std::vector<BeforeRun> before_run(const LaunchSpec& spec, const std::string& checkpoint, const std::string& hf_id, const Snapshot& kb,
                                  const Labels& labels);

// A value as one shell word: as is when plain, single-quoted otherwise.
std::string shell_word(const std::string& v);

}  // namespace kbq
