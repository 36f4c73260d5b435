// Drift: where the documents and the Megatron Bridge code disagree. The code
// of the newest compiled snapshot decides what runs; every document edition
// that says otherwise is a finding, with both sides cited (file:line and
// revision of the document, path:line@commit of the code). kbc lint prints
// them, the KB keeps them (table drift), generated/drift*.md lists them for
// documentation maintainers, and kbq mentions the ones about a fact it shows.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "compiler/code/code.hpp"
#include "compiler/extract/facts.hpp"
#include "compiler/extract/vocab.hpp"
#include "compiler/resolve/resolve.hpp"

namespace kb {

// What a drift finding is about.
enum class DriftKind : std::uint8_t {
  RecipeFact,      // a recipe row's value (TP, PP, CP, EP, SP, sequence length, minimum GPUs) differs from the code
  MissingRecipe,   // a recipe (or pattern) the documents name, which the code does not export
  UnknownKey,      // an override or config key the documents use, which the code's ConfigContainer does not have
  OverwrittenKey,  // an override the documents advise, which the runner rewrites after the overrides
  Dataset,         // a dataset preset the documents use, which the launcher does not offer (or not for that mode)
  BenchmarkModel,  // a benchmark row's GPU counts or hardware differ from the exported benchmark names
};
std::string_view to_string(DriftKind k);

struct Drift {
  DriftKind kind = DriftKind::RecipeFact;
  std::string subject;     // recipe name, pattern, key or preset
  std::string field;       // tp, pp, cp, ep, sp, seq_len, min_gpus, gpus, hardware, ... ("" for whole-subject findings)
  std::string doc_value;   // what the document says
  Provenance doc;          // where
  std::string code_value;  // what the code says ("" when the code has nothing)
  std::string code_at;     // path:line@commit of the code fact ("" when none)
  std::string note;        // one sentence for a person (e.g. "the runner copies dataset.seq_length into it")
  // The table row the document's side is (its name as the row writes it: a
  // recipe, a `*` pattern, a benchmark model's row); "" when the document's
  // side is prose (a mention, a key or preset in a sentence or command).
  std::string row;
  std::string doc_cell;  // the row's cell as compared (doc_value without the note naming a pattern row)
};

// What the code sets for one exported recipe, in the documents' columns.
struct CodeValues {
  const CodeRecipe* recipe = nullptr;
  // tp, pp, cp, ep, etp, seq_length; layout_gpus (the smallest world the
  // layout spans: PP × max(TP × CP, EP × ETP)); named_gpus (the GPU count
  // the name of the function that defines it encodes, when it does); and
  // min_gpus, the larger of the two: a recipe written for 16 GPUs is not
  // said to need 1 because its layout spans 1 → (value, path:line@commit
  // that sets it)
  std::map<std::string, std::pair<long long, std::string>> ints;
  std::optional<std::pair<bool, std::string>> sp;  // sequence parallel, and where it is set
  std::string task;                                // pretrain | sft | peft ("" when the launcher does not say)
};
// The launcher's mode → task (lora, dora → peft) of a snapshot.
std::map<std::string, std::string> task_of_mode(const CodeSnapshot& s);
// The smallest world a layout runs on: the dense mesh, or for MoE the larger
// of the dense and expert meshes on each pipeline stage,
// PP × max(TP × CP, EP × ETP) (an ETP below 1 counts as 1).
long long mesh_world(long long tp, long long pp, long long cp, long long ep, long long etp);
// The values of one recipe of `s`; `modes` from task_of_mode(s).
CodeValues code_values(const CodeSnapshot& s, const CodeRecipe& r, const std::map<std::string, std::string>& modes);

// Compares every edition's recipe rows, mentions, keys and presets with the
// newest code snapshot. No snapshot: no drift. A pattern row stands for the
// exported recipes it matches that no table row of its own edition names
// (the named row is what that edition says of them; the generated index
// places them the same way). Sorted by subject, field,
// document revision (newest first), file, line.
std::vector<Drift> find_drift(const Extracted& x, const Resolved& r, const CodeFacts& code, const Vocab& v);

}  // namespace kb
