// The structure and integrity checks of an untrusted KB (see kb_schema.hpp).
#include "base/kb_schema.hpp"

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
  for (const auto& t : schema::kTables)
    if (!tables.count(t.name)) return "knowledge base is incomplete: no table '" + std::string(t.name) + "' (rebuild it with kbc build)";
  for (const auto& i : schema::kIndexes)
    if (!indexes.count(i.name)) return "knowledge base is incomplete: no index '" + std::string(i.name) + "' (rebuild it with kbc build)";
  if (!differing.empty()) return column_problem(db, *differing.front());
  return {};
}

std::string kb_integrity_problem(Db& db) {
  // quick_check visits every page (about half a tick each), so its budget
  // follows the file's size (bounded by limits::kMaxKbFileBytes).
  long long pages = 0;
  {
    Stmt st(db, "PRAGMA page_count");
    if (st.step()) pages = st.integer(0);
  }
  const long long saved = db.statement_budget();
  db.set_statement_budget(saved > 0 ? saved + limits::kQuickCheckTicksPerPage * pages : 0);
  std::string problem;
  try {
    Stmt st(db, "PRAGMA quick_check(1)");
    if (st.step() && st.view(0) != "ok") problem = escape_controls(first_code_points(st.view(0), 200), EscapeNewlines::Yes);
  } catch (...) {
    db.set_statement_budget(saved);
    throw;
  }
  db.set_statement_budget(saved);
  return problem.empty() ? problem : "knowledge base is damaged (quick_check: " + problem + ")";
}

}  // namespace kb
