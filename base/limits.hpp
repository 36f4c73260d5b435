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

namespace kb::limits {

inline constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

// --- kbc: the sources -----------------------------------------------------
// One markdown edition or text export. The largest real edition is 60 KB,
// a synthetic 1000x unit 12 KB.
inline constexpr std::uint64_t kMaxSourceFileBytes = 16 * kMiB;
// One TSV file of the data folder (the largest real one is 40 KB).
inline constexpr std::uint64_t kMaxDataFileBytes = 16 * kMiB;
// One file of a code snapshot (kb-sources/code/<commit>/, written by kbc
// extract-code; the largest real one, recipe-facts.tsv, is 16.9 MB).
inline constexpr std::uint64_t kMaxCodeSnapshotFileBytes = 64 * kMiB;
// Every file of one build together (1000x synthetic sources: 60 MB).
inline constexpr std::uint64_t kMaxSourcesBytes = 1024 * kMiB;
// Files (.md, .txt) one build compiles (1000x: 5 000).
inline constexpr int kMaxSourceFiles = 100000;
// Folder depth under the sources root (the real tree is 2 deep).
inline constexpr int kMaxFolderDepth = 32;

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

// --- kbq: memory -----------------------------------------------------------
// kbq's bump arena (query/main.cpp): allocations of up to kArenaMaxAlloc
// bytes are carved from one reserved region of kArenaBytes; past it, and
// for larger blocks, the ordinary allocator (which frees).
inline constexpr std::uint64_t kArenaBytes = 64 * kMiB;
inline constexpr std::uint64_t kArenaMaxAlloc = 256 * 1024;
// A list read from the KB is sized up front from its row count (no moves
// while it grows), but never beyond this many rows: a crafted KB's count
// reserves no more than this, and a longer list grows as it is read.
inline constexpr long long kMaxReservedRows = 1 << 16;

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
// A word or value of the query lexicon (lexicon.word, lexicon.value,
// gpus.gpu_key; data/lexicon.tsv, data/gpus.tsv): the lexicon's search tree
// is as deep as its longest word, and tearing it down recurses per level
// (found by fuzz_kb: an 880 KB word overflowed the stack). The longest real
// word is 30 bytes.
inline constexpr std::size_t kMaxLexiconWordBytes = 256;

}  // namespace kb::limits
