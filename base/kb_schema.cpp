// The structure and integrity checks of an untrusted KB (see kb_schema.hpp).
#include "base/kb_schema.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string_view>
#include <vector>

#include "base/escape.hpp"
#include "base/limits.hpp"
#include "base/schema_objects.hpp"
#include "base/sql_text.hpp"

namespace kb {

namespace {

std::string quoted(std::string_view name) { return "'" + escape_controls(name, EscapeNewlines::Yes) + "'"; }

const schema::Table* expected_table(std::string_view name) {
  for (const auto& t : schema::kTables)
    if (t.name == name) return &t;
  return nullptr;
}

const schema::Index* expected_index(std::string_view name) {
  for (const auto& i : schema::kIndexes)
    if (i.name == name) return &i;
  return nullptr;
}

}  // namespace

bool holds_left_out_tables(Db& db) {
  Stmt st(db, "SELECT name FROM sqlite_schema WHERE type = 'table'");
  while (st.step())
    if (const schema::Table* t = expected_table(st.view(0)); t && !t->runtime) return true;
  return false;
}

namespace {
// Why a table's CREATE text differs from the schema's, column by column
// (the slow path, run only when the texts differ).
std::string column_problem(Db& db, const schema::Table& t) {
  Stmt cols(db, "SELECT name, type, \"notnull\", pk FROM pragma_table_info(?)");
  cols.bind(1, t.name);
  int n = 0;
  while (cols.step()) {
    if (n >= t.column_count)
      return "table '" + std::string(t.name) + "' has a column " + quoted(cols.view(0)) + " the schema does not define";
    const schema::Column& c = t.columns[n];
    if (cols.view(0) != c.name || cols.view(1) != c.type || (cols.integer(2) != 0) != c.not_null || cols.integer(3) != c.pk)
      return "table '" + std::string(t.name) + "' column " + std::to_string(n + 1) + " is " + quoted(cols.view(0)) + " " +
             escape_controls(cols.view(1), EscapeNewlines::Yes) + ", the schema says '" + std::string(c.name) + "' " + std::string(c.type);
    ++n;
  }
  if (n != t.column_count)
    return "table '" + std::string(t.name) + "' lacks the column '" + std::string(t.columns[n].name) + "' (rebuild it with kbc build)";
  return "table '" + std::string(t.name) + "' is not the one base/schema.sql defines (its constraints differ)";
}
}  // namespace

std::string kb_structure_problem(Db& db) {
  // One scan of the schema: every object must be one schema.sql makes, with
  // the same CREATE text (normalized: base/sql_text.hpp), so the same
  // columns, types and constraints.
  std::set<std::string, std::less<>> tables, indexes;
  std::vector<const schema::Table*> differing;
  {
    Stmt st(db, "SELECT type, name, tbl_name, sql FROM sqlite_schema");
    while (st.step()) {
      const std::string_view type = st.view(0), name = st.view(1), table = st.view(2), sql = st.view(3);
      if (type == "table") {
        const schema::Table* t = expected_table(name);
        if (!t) return "knowledge base holds an unknown table " + quoted(name) + " (not one of base/schema.sql)";
        if (t->kind != schema::TableKind::Shadow && normalized_sql(sql) != t->sql) {
          if (t->kind == schema::TableKind::Virtual) return "table " + quoted(name) + " is not the full-text index the schema defines";
          differing.push_back(t);
        }
        tables.emplace(name);
      } else if (type == "index") {
        const schema::Index* i = expected_index(name);
        if (!i || i->table != table || normalized_sql(sql) != i->sql) return "knowledge base holds an unknown index " + quoted(name);
        indexes.emplace(name);
      } else if (type == "view") {
        if (expected_table(name)) return "table " + quoted(name) + " is a view, not a table (a kbq knowledge base holds no views)";
        return "knowledge base holds a view " + quoted(name) + " (a kbq knowledge base holds none)";
      } else {
        return "knowledge base holds a " + escape_controls(type, EscapeNewlines::Yes) + " " + quoted(name) +
               " (a kbq knowledge base holds none)";
      }
    }
  }
  // A full KB holds every object; a runtime KB (kbc build --runtime) every
  // one but the tables schema.sql marks 'runtime: left out' and their
  // indexes. Some of those and not the others is neither.
  const bool full = std::any_of(std::begin(schema::kTables), std::end(schema::kTables),
                                [&](const schema::Table& t) { return !t.runtime && tables.count(t.name); });
  for (const auto& t : schema::kTables)
    if ((full || t.runtime) && !tables.count(t.name))
      return "knowledge base is incomplete: no table '" + std::string(t.name) + "' (rebuild it with kbc build)";
  for (const auto& i : schema::kIndexes)
    if ((full || i.runtime) && !indexes.count(i.name))
      return "knowledge base is incomplete: no index '" + std::string(i.name) + "' (rebuild it with kbc build)";
  if (!differing.empty()) return column_problem(db, *differing.front());
  return {};
}

namespace {

// An identifier of the schema (trusted: from schema_objects.hpp) quoted for SQL.
std::string ident(std::string_view name) { return "\"" + std::string(name) + "\""; }

std::string number(std::uint64_t n) { return std::to_string(n); }

std::string shown(std::string_view v) { return escape_controls(first_code_points(v, 60), EscapeNewlines::Yes); }

// What a table may hold (limits::kKbTableLimits, else the defaults), and
// how each of its columns is checked.
struct TablePlan {
  long long max_rows = limits::kMaxKbTableRows;
  std::uint64_t max_bytes = limits::kMaxKbTableBytes;
  std::vector<std::uint64_t> value_limit;  // per column
  std::vector<bool> name;                  // per column: must be a name
  int key = -1;                            // the column one lookup reads by (kKbKeyLimits), or -1
  int placeholders = -1;                   // the column whose '{' are counted (labels.text), or -1
  int label_key = -1, label_lang = -1;     // labels.key and labels.lang, to name the label
  std::vector<bool> lexicon_text;          // per column: a word or value of the lexicon (kMaxLexiconTextBytes)
  int source_id = -1, line = -1;           // the row's source and line, when the table records them
};

TablePlan plan_for(const schema::Table& t) {
  TablePlan p;
  for (const auto& l : limits::kKbTableLimits)
    if (l.table == t.name) {
      p.max_rows = l.rows;
      p.max_bytes = l.bytes;
    }
  for (int i = 0; i < t.column_count; ++i) {
    const std::string_view column = t.columns[i].name;
    const auto is = [&](const limits::KbColumnRef& c) { return c.table == t.name && c.column == column; };
    std::uint64_t limit = limits::kMaxKbValueBytes;
    for (const auto& c : limits::kKbColumnLimits)
      if (c.table == t.name && c.column == column) limit = c.bytes;
    p.value_limit.push_back(limit);
    p.name.push_back(std::any_of(std::begin(limits::kKbNameColumns), std::end(limits::kKbNameColumns), is));
    if (std::any_of(std::begin(limits::kKbKeyLimits), std::end(limits::kKbKeyLimits), is)) p.key = i;
    if (t.name == "labels" && column == "text") p.placeholders = i;
    if (t.name == "labels" && column == "key") p.label_key = i;
    if (t.name == "labels" && column == "lang") p.label_lang = i;
    p.lexicon_text.push_back(t.name == "lexicon" && (column == "word" || column == "value"));
    if (column == "source_id") p.source_id = i;
    if (column == "line") p.line = i;
  }
  return p;
}

// The bytes of the rows of each key of a table, by a 64-bit hash of the key
// (open addressing): a few bytes per key, whatever the keys hold (a
// std::map of the keys cost 40 MB on the 1000x KB's drift table). Two keys
// of one hash would count together: stricter, never looser.
class KeyBytes {
 public:
  std::uint64_t add(std::string_view key, std::uint64_t n) {
    std::uint64_t h = 1469598103934665603ULL;  // FNV-1a
    for (char ch : key) h = (h ^ static_cast<unsigned char>(ch)) * 1099511628211ULL;
    if (h == 0) h = 1;  // 0 marks an empty slot
    if (2 * (used_ + 1) > slots_.size()) grow();
    const std::uint64_t total = (place(h)->second += n);
    return total;
  }

 private:
  std::vector<std::pair<std::uint64_t, std::uint64_t>> slots_ = std::vector<std::pair<std::uint64_t, std::uint64_t>>(64);
  std::size_t used_ = 0;
  std::pair<std::uint64_t, std::uint64_t>* place(std::uint64_t h) {
    for (std::size_t i = h & (slots_.size() - 1);; i = (i + 1) & (slots_.size() - 1)) {
      if (slots_[i].first == h) return &slots_[i];
      if (slots_[i].first == 0) {
        slots_[i].first = h;
        ++used_;
        return &slots_[i];
      }
    }
  }
  void grow() {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> old(slots_.size() * 2);
    old.swap(slots_);
    used_ = 0;
    for (const auto& [h, n] : old)
      if (h != 0) place(h)->second = n;
  }
};

// " of FILE:LINE" for a row that records its source (entity_texts,
// doc_recipes, drift, ...): kbc's message then names the source line.
std::string where_from(Db& db, const Stmt& row, const TablePlan& p) {
  if (p.source_id < 0 || p.line < 0 || row.type(p.source_id) != SQLITE_INTEGER) return {};
  Stmt st(db, "SELECT path FROM sources WHERE id = ?");
  st.bind(1, row.integer(p.source_id));
  if (!st.step()) return {};
  return " of " + shown(st.view(0)) + ":" + std::to_string(row.integer(p.line));
}

// One scan of a table: its rows, the bytes of its values (text and blobs
// as their bytes, a number as 8), each value's length, the bytes of each
// key's rows, names and placeholders. Stops at the first value past a
// limit, so a crafted table costs the check no more than the limits allow.
std::string table_problem(Db& db, const schema::Table& t) {
  const TablePlan p = plan_for(t);
  std::string sql = "SELECT ";
  for (int i = 0; i < t.column_count; ++i) sql += (i ? ", " : "") + ident(t.columns[i].name);
  Stmt st(db, sql + " FROM " + ident(t.name));
  const std::string table(t.name);
  long long rows = 0;
  std::uint64_t bytes = 0, lexicon_text = 0;
  KeyBytes by_key;
  while (st.step()) {
    if (++rows > p.max_rows) return "table '" + table + "' has more than " + number(static_cast<std::uint64_t>(p.max_rows)) + " rows";
    std::uint64_t row_bytes = 0;
    for (int i = 0; i < t.column_count; ++i) {
      const int type = st.type(i);
      if (type == SQLITE_NULL) continue;
      if (type == SQLITE_INTEGER || type == SQLITE_FLOAT) {
        row_bytes += 8;
        continue;
      }
      const auto n = static_cast<std::uint64_t>(st.bytes(i));
      row_bytes += n;
      const std::string column(t.columns[i].name);
      if (n > p.value_limit[static_cast<size_t>(i)])
        return table + "." + column + where_from(db, st, p) + " holds a value of " + number(n) + " bytes, over the limit of " +
               number(p.value_limit[static_cast<size_t>(i)]);
      if (p.lexicon_text[static_cast<size_t>(i)] && (lexicon_text += n) > limits::kMaxLexiconTextBytes)
        return "the words and values of the lexicon hold more than " + number(limits::kMaxLexiconTextBytes) + " bytes";
      if (p.name[static_cast<size_t>(i)] && (type != SQLITE_TEXT || !is_name(st.view(i))))
        return table + "." + column + " holds '" + shown(type == SQLITE_TEXT ? st.view(i) : "(a blob)") +
               "', not a name (letters, digits, '_', '.', '-'; kbq prints it in code and commands)";
      if (i == p.placeholders) {
        const std::string_view text = st.view(i);
        const auto braces = std::count(text.begin(), text.end(), '{');
        if (braces > limits::kMaxLabelPlaceholders)
          return "labels.text of '" + shown(p.label_key >= 0 ? st.view(p.label_key) : "") + "' (" +
                 shown(p.label_lang >= 0 ? st.view(p.label_lang) : "") + ") has " + std::to_string(braces) +
                 " placeholders, over the limit of " + std::to_string(limits::kMaxLabelPlaceholders);
      }
    }
    bytes += row_bytes;
    if (bytes > p.max_bytes) return "table '" + table + "' holds more than " + number(p.max_bytes) + " bytes";
    if (p.key >= 0) {
      const std::string_view key = st.type(p.key) == SQLITE_NULL ? std::string_view() : st.view(p.key);
      if (by_key.add(key, row_bytes) > limits::kMaxKbKeyBytes)
        return "the rows of one " + table + "." + std::string(t.columns[p.key].name) + " ('" + shown(key) + "') hold more than " +
               number(limits::kMaxKbKeyBytes) + " bytes";
    }
  }
  return {};
}

// Runs `scan` with the statement budget raised by `ticks_per_page` for
// each page of the file (a scan of the whole file costs about that much per
// page; bounded by limits::kMaxKbFileBytes), and puts the budget back
// whatever happens.
template <class Scan>
std::string with_budget_per_page(Db& db, long long ticks_per_page, Scan scan) {
  long long pages = 0;
  {
    Stmt st(db, "PRAGMA page_count");
    if (st.step()) pages = st.integer(0);
  }
  const long long saved = db.statement_budget();
  db.set_statement_budget(saved > 0 ? saved + ticks_per_page * pages : 0);
  std::string problem;
  try {
    problem = scan();
  } catch (...) {
    db.set_statement_budget(saved);
    throw;
  }
  db.set_statement_budget(saved);
  return problem;
}

}  // namespace

std::string kb_content_problem(Db& db) {
  // One scan of every table, about as much work per page as quick_check.
  const bool full = holds_left_out_tables(db);
  const std::string problem = with_budget_per_page(db, limits::kContentCheckTicksPerPage, [&] {
    for (const auto& t : schema::kTables) {
      if (!t.runtime && !full) continue;                   // a runtime KB has no such table
      if (t.kind == schema::TableKind::Virtual) continue;  // its shadow tables hold its content
      if (std::find(std::begin(limits::kKbTablesNotRead), std::end(limits::kKbTablesNotRead), t.name) != std::end(limits::kKbTablesNotRead))
        continue;  // kbq never reads it: it costs an answer nothing
      if (std::string p = table_problem(db, t); !p.empty()) return p;
    }
    return std::string();
  });
  return problem.empty() ? problem : "knowledge base: " + problem + " (docs/security.md)";
}

std::string kb_integrity_problem(Db& db) {
  // quick_check visits every page (about half a tick each).
  const std::string problem = with_budget_per_page(db, limits::kQuickCheckTicksPerPage, [&] {
    Stmt st(db, "PRAGMA quick_check(1)");
    if (st.step() && st.view(0) != "ok") return escape_controls(first_code_points(st.view(0), 200), EscapeNewlines::Yes);
    return std::string();
  });
  return problem.empty() ? problem : "knowledge base is damaged (quick_check: " + problem + ")";
}

}  // namespace kb
