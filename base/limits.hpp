// The limits that bound the work kbc and kbq do on input they did not
// write: source and data files, KB files, SQLite values and statements,
// kbq's memory, and the ranges a KB value must fall in before it is used.
// One place, so a limit is reviewed as a change to behaviour; each is
// documented in docs/security.md (why this number, what happens past it).
// To change one, edit it here and rebuild; the hostile-input tests
// (tests/test_hostile.cpp) read these constants, not copies of them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace kb::limits {

inline constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

// --- kbc: the sources -----------------------------------------------------
// One markdown edition or text export. The largest real edition is 60 KB,
// a synthetic 1000x unit 12 KB.
inline constexpr std::uint64_t kMaxSourceFileBytes = 16 * kMiB;
// One TSV file of the data folder (the largest real one is 40 KB).
inline constexpr std::uint64_t kMaxDataFileBytes = 16 * kMiB;
// One file of a code snapshot (code/<commit>/*.tsv, written by kbc
// extract-code): 067f987df's recipe-facts.tsv is 16.9 MB for 741 recipe
// functions, so room for fifteen times as many (issue 19 asks for answers
// at ten times the recipes: bench/gen_sources.py --code-scale 10 writes a
// 176 MB recipe-facts.tsv).
inline constexpr std::uint64_t kMaxCodeFileBytes = 256 * kMiB;
// Every file of one build together (1000x synthetic sources: 60 MB).
inline constexpr std::uint64_t kMaxSourcesBytes = 1024 * kMiB;
// Files (.md, .txt) one build compiles (1000x: 5 000).
inline constexpr int kMaxSourceFiles = 100000;
// Folder depth under the sources root (the real tree is 2 deep).
inline constexpr int kMaxFolderDepth = 32;

// --- kbc: what cmark-gfm is given (compiler/ingest/markdown.cpp) -----------
// cmark-gfm allocates a node per block, inline delimiter and table cell: up
// to about 230 bytes of memory per byte of a markdown body (a run of '['),
// and Debian's cmark-gfm pads every table row to its header's width, so a
// table costs columns x rows however short its rows are (4 000 x 4 000 in a
// 28 KB file: 3.7 GB, 14 s), and a row's cells cost their square in time.
// These bounds are checked on the raw lines before cmark-gfm parses them.
// A markdown edition (the largest real one is 60 KB; 1 MiB of '[' costs
// cmark-gfm 240 MB).
inline constexpr std::uint64_t kMaxMarkdownBytes = kMiB;
// Columns of a table, cells of one table row (the widest real table has 12).
inline constexpr int kMaxTableColumns = 64;
// Cells cmark-gfm makes for the tables of one document, columns x rows
// (the real editions have at most 718).
inline constexpr long long kMaxTableCells = 500000;
// Lists and block quotes nested in one another (the real editions nest 2).
inline constexpr int kMaxBlockNesting = 64;

// --- kbq (and kbc dump): a KB file ---------------------------------------
// A KB given with --kb (1000x: 145 MB).
inline constexpr std::uint64_t kMaxKbFileBytes = 1024 * kMiB;
// SQLITE_LIMIT_LENGTH: the longest text or blob value, or row, SQLite will
// hand back (the longest real value is 1.3 KB; 1000x the same). A longer
// one is an error, so a crafted value never costs more than this.
inline constexpr int kMaxValueBytes = 1 << 20;
// SQLITE_LIMIT_SQL_LENGTH: the longest statement, which bounds the schema
// statements of a crafted file (kbq's own are under 2 KB).
inline constexpr int kMaxSqlBytes = 100000;
// SQLITE_LIMIT_COLUMN (recipes has 41), _EXPR_DEPTH, _COMPOUND_SELECT,
// _VDBE_OP, _FUNCTION_ARG, _TRIGGER_DEPTH, _LIKE_PATTERN_LENGTH: SQLite's
// guidance for untrusted files, raised where kbq's own statements need it.
inline constexpr int kMaxColumns = 100;
inline constexpr int kMaxExprDepth = 100;
inline constexpr int kMaxCompoundSelect = 10;
inline constexpr int kMaxVdbeOps = 25000;
inline constexpr int kMaxFunctionArgs = 8;
inline constexpr int kMaxTriggerDepth = 10;
inline constexpr int kMaxLikePatternBytes = 50000;
// sqlite3_hard_heap_limit64: all of SQLite's memory in a process that opened
// a KB it did not build (kbq's whole peak RSS is under 10 MiB at 1000x).
inline constexpr std::int64_t kSqliteHeapBytes = 256 * std::int64_t{1 << 20};
// The progress handler runs every kTickOps virtual-machine operations; a
// statement that passes kMaxStatementTicks ticks is ended with an error
// (about 2 s of work). The costliest statement of kbq on the 1000x KB
// (docs/performance.md) takes 8 203 ticks (`kbq sources`, the conflicts
// join; a short free word's scan 4 789), so the budget is 6x that. PRAGMA
// quick_check takes about 0.5 tick per 4 KB page and gets
// kQuickCheckTicksPerPage more per page of the file.
inline constexpr int kTickOps = 1000;
inline constexpr long long kMaxStatementTicks = 50000;
inline constexpr long long kQuickCheckTicksPerPage = 4;
// The content checks of a KB file (kb::kb_content_problem: one scan of
// every table, about as much work per page as quick_check) get as much.
inline constexpr long long kContentCheckTicksPerPage = 8;

// --- kbq (and kbc build): what a KB file may hold --------------------------
// A crafted KB costs what it holds: every limit below is checked when kbq
// opens a --kb file (kb::kb_content_problem, base/kb_schema.cpp), before any
// answer, and by kbc build on the KB it writes (a KB kbq would refuse is
// never written). Past one, the file is refused with one line naming the
// table and column (docs/security.md lists each with its error). With them,
// an answer reads at most what the tables it reads hold, and a value is
// never long enough that joining or copying it costs more than that
// (docs/security.md, "Bounded work and memory", has the figures).
//
// A value of any column, as text (kMaxValueBytes above bounds what SQLite
// hands back at all). The longest real value outside the text columns below
// is 285 bytes.
inline constexpr std::uint64_t kMaxKbValueBytes = 1024;
// A value of a column of prose, provenance or JSON (the longest real one:
// an entity text of 1 959 bytes; a full-text index block, 4 051).
inline constexpr std::uint64_t kMaxKbTextBytes = 16 * 1024;
// The query lexicon kbc compiles and kbq reads whole at its first question
// (lexicon_compiled.bytes; base/dsl/lexicon_store.cpp). Its size bounds the
// words, meanings and trie nodes kbq builds from it (every item takes at
// least 5 bytes of it).
inline constexpr std::uint64_t kMaxCompiledLexiconBytes = 1 * kMiB;
// One function's code facts, packed (recipe_facts.facts;
// base/packed_facts.hpp; real: 1.5 KB at most, 0.7 KB on average). A
// recipe holds at most one fact per field (fact_fields: 1 000 rows), so
// reading one costs at most 1 000 facts whatever the value holds.
inline constexpr std::uint64_t kMaxPackedFactsBytes = 256 * 1024;
// NVIDIA's measured rows kbq reads (perf_rows in kKbTableLimits, and the
// rows of perf_compiled): each is about 2.5 KB in memory once read.
inline constexpr long long kMaxPerfRows = 20000;
// The throughput estimator's tables kbc compiles and kbq reads whole at an
// answer's first estimate (perf_compiled.bytes; query/perf/stored.cpp; real:
// 22 KB). A row takes at least 42 bytes of it, a text 4.
inline constexpr std::uint64_t kMaxCompiledPerfBytes = 1 * kMiB;
// The recipes kbc compiles and kbq reads whole at an answer's first recipe
// (recipes_compiled; query/kb/recipes_stored.cpp; real: 1 020 recipes in 4
// chunks, 180 KB): as many as the recipes table may hold, at most
// kMaxRecipesPerChunk a chunk, kbc beginning a new one past
// kRecipeChunkBytes; one chunk at most kMaxCompiledRecipeChunkBytes, all of
// them what the table limit below allows.
inline constexpr long long kMaxStoredRecipes = 20000;
inline constexpr std::size_t kMaxRecipesPerChunk = 256;
inline constexpr std::size_t kRecipeChunkBytes = 256 * 1024;
inline constexpr std::uint64_t kMaxCompiledRecipeChunkBytes = 1 * kMiB;
// The rows of the small tables every answer reads, as kbc stores them
// (rows_compiled; base/stored_rows.cpp; real: the part 'snapshot', 91 KB
// in one chunk): kbc cuts a part in chunks of kRowsChunkBytes; a chunk is at
// most kMaxCompiledRowsChunkBytes, a part's chunks together at most
// kMaxCompiledRowsBytes, room for the tables it is compiled from at their
// own limits (the case kb-at-the-limits). Each value takes a byte of it at
// least, so its size bounds the rows kbq reads from it; a text is at most
// kMaxKbTextBytes.
inline constexpr std::size_t kRowsChunkBytes = 256 * 1024;
inline constexpr std::uint64_t kMaxCompiledRowsChunkBytes = 1 * kMiB;
inline constexpr std::uint64_t kMaxCompiledRowsBytes = 8 * kMiB;
// The values of a part's rows, all its queries together: each becomes a
// string or a number once read (real: the snapshot's 2 976).
inline constexpr std::uint64_t kMaxStoredValues = 400000;
struct KbColumnRef {
  std::string_view table, column;
};
// The columns with a limit of their own.
struct KbColumnLimit {
  std::string_view table, column;
  std::uint64_t bytes;
};
inline constexpr KbColumnLimit kKbColumnLimits[] = {
    {"entity_texts", "text", kMaxKbTextBytes},
    {"entity_texts", "parts", kMaxKbTextBytes},
    {"entity_texts", "facts", kMaxKbTextBytes},
    {"search_content", "c0", kMaxKbTextBytes},
    {"search_data", "block", kMaxKbTextBytes},
    {"config_keys", "sentence", kMaxKbTextBytes},
    {"config_keys", "source", kMaxKbTextBytes},
    {"models", "notes", kMaxKbTextBytes},
    {"models", "source", kMaxKbTextBytes},
    {"model_rows", "value", kMaxKbTextBytes},
    {"gpus", "source", kMaxKbTextBytes},
    {"code_changes", "old_value", kMaxKbTextBytes},
    {"code_changes", "new_value", kMaxKbTextBytes},
    {"ranking", "description", kMaxKbTextBytes},
    {"planner", "source", kMaxKbTextBytes},
    {"model_arch", "source", kMaxKbTextBytes},
    {"memory_params", "source", kMaxKbTextBytes},
    {"lexicon", "source", kMaxKbTextBytes},
    // A word of the query lexicon: its search tree is as deep as its
    // longest word (kMaxLexiconWordBytes below).
    {"lexicon", "word", 256},
    {"lexicon", "value", 256},
    {"lexicon_compiled", "bytes", kMaxCompiledLexiconBytes},
    {"perf_compiled", "bytes", kMaxCompiledPerfBytes},
    {"recipes_compiled", "bytes", kMaxCompiledRecipeChunkBytes},
    {"rows_compiled", "bytes", kMaxCompiledRowsChunkBytes},
    {"recipe_facts", "facts", kMaxPackedFactsBytes},
    {"gpus", "gpu_key", 256},
};

// Rows of a table and bytes of all its values together. Tables kbq reads
// whole for an answer (the lexicon, labels, recipes, models, the planner's
// parameters, ...) are bounded closely: they are in memory at once. The
// others are read a key at a time (kKbKeyLimits) and bounded by what the
// 1000x synthetic KB holds, with room (docs/performance.md: drift 725 000
// rows, doc_recipes 145 000, the full-text index 306 000). A table not
// listed has the defaults.
inline constexpr long long kMaxKbTableRows = 4000000;
inline constexpr std::uint64_t kMaxKbTableBytes = 256 * kMiB;
struct KbTableLimit {
  std::string_view table;
  long long rows;       // real KB / 1000x: see the comment of each
  std::uint64_t bytes;  // of all values, as text
};
inline constexpr KbTableLimit kKbTableLimits[] = {
    // Read whole (or one language, one kind, one section of them) for an answer.
    {"lexicon", 6000, 256 * 1024},                          // 1019 rows, 64 KB (its words and values: kMaxLexiconTextBytes)
    {"lexicon_compiled", 4, kMaxCompiledLexiconBytes + 8},  // 1 row (its key is 1, counted as 8 bytes), 141 KB
    {"labels", 20000, 1 * kMiB},                            // 584, 61 KB
    {"planner", 1000, 256 * 1024},                          // 33, 5 KB
    {"gpus", 1000, 256 * 1024},                             // 12, 7 KB
    {"checks", 1000, 256 * 1024},                           // 19, 2 KB
    {"ranking", 1000, 256 * 1024},                          // 10, 3 KB
    {"quick_ref_picks", 1000, 256 * 1024},
    {"datasets", 1000, 256 * 1024},
    {"dataset_renames", 10000, 1 * kMiB},
    {"code_datasets", 10000, 1 * kMiB},     // 75, 9 KB
    {"launcher", 10000, 1 * kMiB},          // 321, 29 KB
    {"models", 10000, 2 * kMiB},            // 93, 72 KB
    {"recipes", 20000, 4 * kMiB},           // 1 020, 226 KB
    {"recipes_compiled", 1000, 8 * kMiB},   // 4 chunks, 180 KB
    {"rows_compiled", 1000, 16 * kMiB},     // 1 part in 1 chunk, 91 KB
    {"code_recipes", 20000, 4 * kMiB},      // 1 020, 308 KB
    {"code_config_keys", 20000, 4 * kMiB},  // 894, 153 KB
    {"config_keys", 10000, 1 * kMiB},       // 24, 17 KB
    {"entities", 20000, 1 * kMiB},          // 140, 5 KB
    {"memory_params", 1000, 256 * 1024},
    {"steps", 1000, 256 * 1024},
    {"columns", 10000, 1 * kMiB},
    {"meta", 100, 64 * 1024},
    {"code_snapshots", 100, 64 * 1024},
    {"search_config", 100, 64 * 1024},
    {"sources", 100000, 16 * kMiB},  // 39, 5 KB; 1000x: 5 300
    // The throughput stage's measured rows and their fit, read whole at the
    // first question with a layout.
    {"perf_rows", kMaxPerfRows, 4 * kMiB},            // 293 (the runtime KB; 568 in the full one), 104 KB
    {"perf_fit", 1000, 256 * 1024},                   // 19, 1 KB
    {"perf_compiled", 4, kMaxCompiledPerfBytes + 8},  // 1 row, 22 KB
    // The code facts' dictionaries, read whole once an answer needs a
    // recipe's facts. fact_fields also bounds the rows of one recipe in
    // recipe_facts (one per field: its primary key), and so, with each
    // fact_values value at most kMaxKbValueBytes, what one recipe's facts
    // cost: 1000 x 1 KiB, the key limit below.
    {"fact_fields", 1000, 256 * 1024},  // 94, 1.5 KB (the same at 1000x: one code snapshot)
    {"code_files", 10000, 1 * kMiB},    // 136, 7 KB
    {"fact_values", 20000, 4 * kMiB},   // 817, 111 KB (the same at 10x: one code snapshot)
    // Read a key at a time (kKbKeyLimits), a row at a time, or by kbq sources and kbc dump.
    {"recipe_facts", 100000, 128 * kMiB},  // 741 (a function each), 0.5 MB; the same at 1000x
    {"fact_targets", 100000, 16 * kMiB},   // 741, 69 KB
    {"model_rows", 100000, 16 * kMiB},     // 1 861, 118 KB
    {"model_arch", 100000, 16 * kMiB},     // 327, 34 KB
    {"code_providers", 100000, 16 * kMiB},
    {"code_changes", 100000, 16 * kMiB},
};

// Tables kbq never reads (kbc's own records, code_facts, which kbq reads
// as recipe_facts and its dictionaries, and the full-text index, which
// only kbc dump and the generated site read): they cost an answer nothing,
// and the content check leaves them out (quick_check still reads their
// pages). tests/test_hostile.cpp checks that no statement of query/ or
// base/dsl/ names one.
inline constexpr std::string_view kKbTablesNotRead[] = {
    "sections", "findings", "fallbacks",     "code_facts",     "code_recipes", "code_changes",   "code_providers", "columns",
    "steps",    "search",   "search_config", "search_content", "search_data",  "search_docsize", "search_idx",
};

// The rows of one key of a table kbq reads a key at a time (a recipe's code
// facts, a model's rows, an entity's texts, ...), all values together: what
// one lookup can cost. The largest real: an entity's texts, 15 KB (1000x:
// 150 KB); a recipe's rows of recipe_facts, 5 KB.
inline constexpr std::uint64_t kMaxKbKeyBytes = 1 * kMiB;
inline constexpr KbColumnRef kKbKeyLimits[] = {
    {"recipe_facts", "target_id"},      {"drift", "subject"},        {"doc_recipes", "name"},
    {"entity_texts", "entity_id"},      {"model_rows", "model_key"}, {"model_arch", "model_key"},
    {"conflict_values", "conflict_id"},
};

// Placeholders ("{name}") of one label: a label is filled once (a value is
// never read for placeholders again, kb::fill_placeholders), so a filled
// label is at most its length plus this many values. The most a real label
// has is 6.
inline constexpr int kMaxLabelPlaceholders = 16;

// Columns whose values kbq prints as names, inside code spans and launch
// commands: each must be a name (kb::is_name: letters, digits, '_', '.',
// '-', not starting with '.' or '-', at most kMaxNameBytes), the rule every
// name of the recipe index and of the code snapshot meets (kbc checks the
// same at the code facts' lines).
inline constexpr std::size_t kMaxNameBytes = 256;
inline constexpr KbColumnRef kKbNameColumns[] = {
    {"recipes", "name"},
    {"recipes", "target"},
    {"recipes", "model_key"},
    {"recipes", "dataset"},
    {"recipes", "mode"},
    {"recipes", "launch_mode"},
    {"recipes", "modality"},
    {"recipes", "precision"},
    {"recipes", "native_hardware"},
    {"recipes", "native_precision"},
    {"recipes", "variant"},
    {"code_recipes", "name"},
    {"code_recipes", "target"},
    {"code_recipes", "alias_of"},
    {"fact_targets", "target"},
    // Not fact_fields.field: a fact's field is a key kbq looks facts up by
    // (and prints as a JSON key), never in a command; a field under a
    // variant holds '@' ('peft@dora', the fact as the DoRA scheme builds it).
    {"gpus", "gpu_key"},
    {"models", "model_key"},
};

// --- kbq: memory -----------------------------------------------------------
// kbq's bump arena (query/arena.cpp): allocations of up to kArenaMaxAlloc
// bytes are carved from one reserved region of kArenaBytes; past it, and
// for larger blocks, the ordinary allocator (which frees).
inline constexpr std::uint64_t kArenaBytes = 64 * kMiB;
inline constexpr std::uint64_t kArenaMaxAlloc = 256 * 1024;
// The layout searches an engine keeps for reuse across its answers (about
// 500 bytes each: at most 8 MiB; the finder grid of one language would keep
// 97 000): when this many are kept, they are all forgotten and keeping
// starts again, so a batch of endless distinct questions cannot grow the
// process.
inline constexpr std::size_t kMaxKeptPlacements = 16384;
// The sizings an engine keeps of recipes with facts replaced by overrides
// (Sizings::of): the memory levers of data/planner.tsv, which every answer
// whose layout does not fit plans again for its alternatives, and a `check`'s
// own overrides. Past this many, such a recipe is sized afresh each time,
// so what is kept stays bounded whatever the KB and the questions hold.
inline constexpr std::size_t kMaxKeptSizings = 1024;
// A list read from the KB is sized up front from its row count (no moves
// while it grows), but never beyond this many rows: a crafted KB's count
// reserves no more than this, and a longer list grows as it is read.
inline constexpr long long kMaxReservedRows = 1 << 16;

// --- kbq: what a user types ----------------------------------------------
// A question (the argument, each line of --batch), a recipe name (show,
// check), a --hardware value and each KEY=VALUE override of check: at most
// this many bytes and words (runs of text between spaces), checked before
// anything is parsed or looked up (kbq::dsl::check_input). The longest
// question of the tests is 120 bytes and 21 words; a long question in
// Japanese, 60 characters, is 180 bytes. The parser is linear in its input
// (make bench), so the limit bounds what one question costs, not a
// weakness of the parser: a 1 KiB question parses in well under 1 ms.
inline constexpr std::size_t kMaxQuestionBytes = 1024;
inline constexpr std::size_t kMaxQuestionWords = 64;

// --- the ranges of KB values (query/kb/kb.cpp validates them when read) ----
// A parallel size (TP, PP, CP, EP, VP): 1 .. 2^20. Three of them multiply
// to at most 2^60, so no product kbq forms can overflow.
inline constexpr long long kMaxParallel = 1LL << 20;
// A GPU count (recipes.gpus_*, quick_ref_picks.gpus, gpus.gpus_per_node,
// gpus.nvlink_domain_size).
inline constexpr long long kMaxGpus = 1LL << 20;
// A sequence length in tokens (the query language's own limit).
inline constexpr long long kMaxSeqLen = 2147483647LL;
// A model's layers, heads, kv heads and experts.
inline constexpr long long kMaxModelCount = 1LL << 20;
// A line number or a revision.
inline constexpr long long kMaxLine = 2147483647LL;
// The measured pairs that informed a platform's factor (perf_fit.pairs;
// the estimator counts them in an int).
inline constexpr long long kMaxPerfPairs = 2147483647LL;
// The words and values of the query lexicon together (lexicon.word,
// lexicon.value; real: 12.4 KB since the lexicon reads hardware, systems,
// number words, GPU memory, token budgets, unknown GPUs and models and the
// largest-model intent: 64 KiB keeps the real one under a quarter of it).
// kbc compiles the lexicon from them (kbq reads the compiled one,
// kMaxCompiledLexiconBytes); when kbq still built Boost.Spirit's search trees
// from the rows, they cost about 450 bytes of memory per byte of a word.
inline constexpr std::uint64_t kMaxLexiconTextBytes = 64 * 1024;
// A word or value of the query lexicon (lexicon.word, lexicon.value,
// gpus.gpu_key; data/lexicon.tsv, data/gpus.tsv): the lexicon's spelling
// trie is as deep as its longest word, and building it recurses per level
// (found by fuzz_kb: an 880 KB word overflowed the stack when the search
// trees of Boost.Spirit, since replaced, were torn down). The longest real
// word is 30 bytes. (kKbColumnLimits holds the same number for a KB file.)
inline constexpr std::size_t kMaxLexiconWordBytes = 256;

}  // namespace kb::limits
