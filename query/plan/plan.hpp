// Plan, check and rank, public interface: a parsed query → the answer (the
// named IR every renderer prints). Candidate recipes come from the KB by
// kind and name prefix; each is fitted to the user's GPUs and sequence
// length (the layout), checked against the sizing rules (query/check),
// scored (query/rank) and given a launch command and overrides.
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "query/plan/kb.hpp"

namespace kbq {

// A fact shown in an answer with where it was read.
struct SourceRef {
  std::string file;  // kb-sources path
  int line = 0;
  int revision = 0;
  std::string what;  // which fact ("recipe row", "rule 1", "entry-point command", ...)
};

// A text of the KB in the answer's language, or the language it fell back to.
struct Prose {
  std::string text;
  std::string lang;       // language of `text`
  bool fallback = false;  // the wanted language has no text for this item
  SourceRef source;
};

// The parallel layout a recipe runs with on the user's GPUs.
struct Layout {
  long long gpus = 0;                // world size
  long long nodes = 1, nproc = 0;    // launch shape: nodes × processes per node
  long long per_node = 0;            // GPUs per node of the hardware
  std::string hardware;              // gpu key used for NVLink and node size
  bool hardware_assumed = false;     // the query named no hardware: the KB's default was used
  Dim tp, pp, cp, ep, etp, vp;       // sizes (may be ranges for pattern rows)
  bool sp = false;                   // sequence parallel on
  long long seq = 0;                 // sequence length in tokens (0 = recipe default unknown)
  std::optional<long long> dp, edp;  // dense and expert data parallel (when computable)
};

// One override of the launch command.
struct Override {
  std::string key, value;
  std::string impact;    // convergence | execution | benchmark-only | unknown
  std::string sentence;  // the source sentence that classifies it
  SourceRef source;
};

// One check's verdict on the layout.
struct Verdict {
  std::string id;      // check id (data/checks.tsv)
  std::string status;  // pass | fail | unknown
  std::string detail;  // the numbers, e.g. "TP 2 divides 8 kv heads"
  Prose rule;          // the rule's text
};

struct ScorePart {
  std::string name;  // mode, model, gpus, seq, hardware, intent, quick_ref, pattern, text
  int points = 0;
  std::string why;  // short explanation with numbers
};

struct Result {
  Recipe recipe;
  int score = 0;
  std::vector<ScorePart> parts;
  Layout layout;
  std::string dataset;  // preset passed with --dataset ("" for benchmark recipes)
  std::string command;  // full launch command
  std::vector<Override> overrides;
  std::vector<Verdict> rules;
  std::vector<Prose> pitfalls;
  std::vector<std::string> notes;  // superseded values, ranges, warnings, in the answer language
  std::vector<SourceRef> sources;
  bool any_fail() const;
};

struct Answer {
  std::string query;                  // as typed
  std::string canonical;              // canonical form of the parsed query
  std::string lang;                   // language of prose
  std::vector<std::string> warnings;  // unknown words, dataset advice
  std::vector<Result> results;
};

// A problem with the query that should stop it (exit 2), with a caret span.
struct QueryError {
  std::string message, hint;
  kbq::dsl::Span span;
};

struct PlanOptions {
  int limit = 3;
  std::string lang;  // empty: the query's own language, else en
};

// Answers a parsed query. Returns an error for contradictions that need KB
// facts (e.g. a TP that does not divide the model's kv heads).
std::variant<Answer, QueryError> answer(Kb& kb, const kbq::dsl::Query& q, const PlanOptions& opts);

// `kbq check RECIPE --gpus N KEY=VALUE...`: the user's own override set.
std::variant<Result, QueryError> check_recipe(Kb& kb, const std::string& recipe, long long gpus,
                                              const std::vector<std::pair<std::string, std::string>>& overrides, const std::string& lang,
                                              const std::string& hardware);

// `kbq show RECIPE`: the recipe's facts at its own default layout.
std::optional<Result> show_recipe(Kb& kb, const std::string& recipe, const std::string& lang);

// "revision N (file:line) said: ..." for each older value of an entity's
// fields (all fields when `fields` is empty), in `lang`.
std::vector<std::string> superseded_notes(Kb& kb, const std::string& kind, const std::string& key, const std::string& lang,
                                          const std::vector<std::string>& fields = {}, bool name_entity = true);

// Text of an entity in `lang`, falling back to the winning edition.
Prose prose(Kb& kb, const std::string& kind, const std::string& key, const std::string& lang, const std::string& part = {});

}  // namespace kbq
