// Plan stage (private to the engine): from a parsed question to planned
// results. It resolves what the question asks (mode, model and size,
// modality, GPUs and hardware, sequence, precision), picks the recipes the
// code exports that satisfy its constraints, and plans each on the user's
// GPUs: a layout that fits (query/plan/layout), the memory per GPU, the
// batch arithmetic, the dataset preset, every change to the recipe with its
// impact class, and the launch command as the code's launcher takes it (the
// one command builder: `kbq show` and the generated site pages use it too).
#pragma once

#include <optional>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "base/dsl/parse.hpp"
#include "query/kb/kb.hpp"
#include "query/kbq.hpp"
#include "query/memory/memory.hpp"

namespace kbq {

// What every stage of one answer shares.
struct Context {
  Kb& kb;
  std::string lang;         // language of the answer's prose
  long long threshold = 0;  // long-context threshold in tokens (data/planner.tsv)
  memory::Params params;    // the memory model's constants (data/memory.tsv)
  bool params_ok = false;   // the constants were read
  std::string label(const std::string& key, const std::vector<std::pair<std::string, std::string>>& vars = {}) const;
};
Context make_context(Kb& kb, const std::string& lang);

using KeyValues = std::vector<std::pair<std::string, std::string>>;

// What a question (or `show` / `check`) asks, resolved against the KB.
struct Ask {
  std::string mode;                              // task asked: pretrain | sft | peft ("" any)
  std::string launch_mode;                       // a launcher mode named in the question (lora, dora), "" otherwise
  std::string model;                             // recipe-name prefix asked ("" any)
  std::string size_token;                        // size as in recipe names ("8b", "30b_a3b"), "" any
  double size_params = 0;                        // the size in parameters (0 unknown)
  std::set<std::string> modalities;              // modalities asked (vision, audio, diffusion, omni); empty = text
  bool benchmark = false;                        // throughput benchmark recipes
  long long gpus = 0;                            // GPUs asked (0: the recipe's own)
  std::string hardware;                          // GPU key
  bool hardware_assumed = false;                 // the question named none: the KB's default
  long long seq = 0;                             // sequence length asked (0: the recipe's own)
  std::string precision;                         // precision asked (benchmark names), "" any
  std::string dataset;                           // --dataset preset asked, "" the mode's default
  KeyValues fixed;                               // the user's own overrides (check, tp:… filters): config key → value
  std::set<std::string> intents;                 // intent ids of the question
  std::string scale;                             // scale word value
  std::vector<std::string> unknown_model_words;  // free words that look like a model name no recipe has
  std::vector<std::string> name_words;  // free words that are tokens of recipe names ("vl", "thinking"): every one must be in the name
  bool understood = false;              // some word of the question has a meaning (not only free words)
  bool fewest = false;                  // without a GPU count: the fewest GPUs that fit, not the recipe's own count first
};

// Resolves a parsed question; warnings go to the answer.
std::variant<Ask, Error> resolve_question(Context& c, const kbq::dsl::Query& q, Answer& a);

// The recipes a question's constraints allow (mode, model and size,
// modality, kind; substitutes marked); empty with a.no_match set when none.
struct Candidate {
  const Recipe* recipe = nullptr;
  bool substitute = false;  // the asked model or size has no recipe: the nearest of the family
};
std::vector<Candidate> candidates(Context& c, const Ask& ask, Answer& a);

// One recipe planned on the asked GPUs (layout, memory, batch, dataset,
// overrides, command, notes and sources). Check and rank come after.
Result plan_recipe(Context& c, const Recipe& r, const Ask& ask, bool substitute);

// Checks `check`'s KEY=VALUE overrides and rewrites aliases (training. →
// train., model.seq_length → dataset.seq_length), with a note for each
// rewrite; unknown keys are an error naming the nearest real keys.
std::variant<KeyValues, Error> resolve_overrides(Context& c, const KeyValues& overrides, std::vector<std::string>& notes);

// When nothing fits the asked GPUs: what does (LoRA instead of full
// training, a GPU with more memory, a smaller model of the family).
std::vector<Alternative> alternatives(Context& c, const Ask& ask, const Recipe& best);

}  // namespace kbq
