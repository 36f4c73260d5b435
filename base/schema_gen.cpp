// Build tool (not linked into kbc or kbq): turns base/schema.sql into
// base/schema_objects.hpp, the structure a KB must have, which
// base/kb_schema.cpp checks every KB kbq opens against. It runs the schema
// in an in-memory SQLite database and writes what SQLite made of it: each
// table with its columns (name, declared type, NOT NULL, primary-key
// position), the virtual tables with their CREATE text and the shadow
// tables their module made, and each index (its CREATE text; none for the
// automatic ones), and whether a runtime KB holds it (a table the line
// `-- runtime: left out` comes right before is left out, with its indexes
// and, for a virtual table, its shadow tables; `-- runtime: left out, kbc
// only`, a table emptied before the derive step too). The build regenerates it
// whenever schema.sql changes, so a new table or column needs no change here.
//
//   schema_gen base/schema.sql OUT.hpp
#include <sqlite3.h>

#include <cctype>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "base/sql_text.hpp"

namespace {

struct Column {
  std::string name, type;
  bool not_null = false;
  int pk = 0;
};
struct Object {
  std::string type, name, table, sql;
  std::vector<Column> columns;
};

std::string literal(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\')
      out += '\\';
    else if (ch == '\n') {
      out += "\\n";
      continue;
    }
    out += ch;
  }
  return out + "\"";
}

std::string ident(const std::string& s) {
  std::string out;
  for (char ch : s) out += (std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_');
  return out;
}

// The tables the line "-- runtime: left out" comes right before, and in
// `kbc_only` those "-- runtime: left out, kbc only" comes right before. A
// marker before anything else is an error: it would mark nothing.
bool runtime_left_out(const std::string& schema, std::set<std::string>& out, std::set<std::string>& kbc_only) {
  static const std::string kMarker = "-- runtime: left out", kKbcOnly = kMarker + ", kbc only";
  std::istringstream lines(schema);
  std::string line, marked;
  int n = 0;
  while (std::getline(lines, line)) {
    ++n;
    if (!marked.empty()) {
      std::string name;
      for (const char* create : {"CREATE TABLE ", "CREATE VIRTUAL TABLE "})
        if (line.rfind(create, 0) == 0)
          for (std::size_t i = std::string(create).size();
               i < line.size() && (std::isalnum(static_cast<unsigned char>(line[i])) || line[i] == '_'); ++i)
            name += line[i];
      if (name.empty()) {
        std::fprintf(stderr, "schema_gen: line %d: '%s' is not right before a CREATE TABLE\n", n - 1, marked.c_str());
        return false;
      }
      out.insert(name);
      if (marked == kKbcOnly) kbc_only.insert(name);
    }
    marked = line == kMarker || line == kKbcOnly ? line : std::string();
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: schema_gen SCHEMA.sql OUT.hpp\n");
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) {
    std::fprintf(stderr, "schema_gen: cannot read %s\n", argv[1]);
    return 2;
  }
  std::set<std::string> left_out, kbc_only;
  if (!runtime_left_out(text.str(), left_out, kbc_only)) return 2;
  sqlite3* db = nullptr;
  char* err = nullptr;
  if (sqlite3_open(":memory:", &db) != SQLITE_OK || sqlite3_exec(db, text.str().c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::fprintf(stderr, "schema_gen: %s: %s\n", argv[1], err ? err : sqlite3_errmsg(db));
    sqlite3_free(err);
    sqlite3_close(db);
    return 2;
  }
  std::vector<Object> objects;
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_schema ORDER BY rowid", -1, &st, nullptr);
  while (sqlite3_step(st) == SQLITE_ROW) {
    Object o;
    for (int c = 0; c < 4; ++c) {
      const auto* t = reinterpret_cast<const char*>(sqlite3_column_text(st, c));
      (c == 0 ? o.type : c == 1 ? o.name : c == 2 ? o.table : o.sql) = t ? t : "";
    }
    objects.push_back(o);
  }
  sqlite3_finalize(st);
  sqlite3_prepare_v2(db, "SELECT name, type, \"notnull\", pk FROM pragma_table_info(?)", -1, &st, nullptr);
  for (auto& o : objects) {
    if (o.type != "table") continue;
    sqlite3_bind_text(st, 1, o.name.c_str(), -1, SQLITE_TRANSIENT);
    while (sqlite3_step(st) == SQLITE_ROW)
      o.columns.push_back({reinterpret_cast<const char*>(sqlite3_column_text(st, 0)),
                           reinterpret_cast<const char*>(sqlite3_column_text(st, 1)), sqlite3_column_int(st, 2) != 0,
                           sqlite3_column_int(st, 3)});
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
  sqlite3_close(db);

  // Virtual tables, then the shadow tables their modules made ("search_data").
  std::vector<std::string> virtual_names;
  for (const auto& o : objects)
    if (o.type == "table" && o.sql.rfind("CREATE VIRTUAL TABLE", 0) == 0) virtual_names.push_back(o.name);
  auto owner = [&](const Object& o) -> std::string {  // the virtual table a shadow table belongs to, or ""
    for (const auto& v : virtual_names)
      if (o.name.size() > v.size() + 1 && o.name.compare(0, v.size() + 1, v + "_") == 0) return v;
    return {};
  };
  auto shadow = [&](const Object& o) { return !owner(o).empty(); };
  // In a runtime KB: a table not marked, a shadow table of one not marked,
  // an index of one that is.
  auto in_runtime = [&](const std::string& table) { return !left_out.count(table); };
  for (const auto& name : left_out) {
    bool found = false;
    for (const auto& o : objects) found = found || (o.type == "table" && o.name == name);
    if (!found) {
      std::fprintf(stderr, "schema_gen: %s: '%s' marked 'runtime: left out' is not a table\n", argv[1], name.c_str());
      return 2;
    }
  }

  std::ostringstream out;
  out << "// Generated from base/schema.sql by base/schema_gen.cpp at build time: do not edit.\n"
         "// The structure every KB must have (base/kb_schema.cpp checks it).\n"
         "#pragma once\n\n#include <string_view>\n\nnamespace kb::schema {\n\n"
         "struct Column {\n  std::string_view name, type;  // as pragma_table_info gives them\n  bool not_null;\n  int pk;  // "
         "position in the primary key, 0 = not in it\n};\n\n"
         "enum class TableKind { Plain, Virtual, Shadow };\n\n"
         "struct Table {\n  std::string_view name;\n  TableKind kind;\n  bool runtime;  // a runtime KB holds it (schema.sql: not "
         "'runtime: left out')\n  bool kbc_only;  // only kbc reads it: a runtime KB empties it before the derive step "
         "(schema.sql: 'runtime: left out, kbc only')\n  std::string_view sql;  // CREATE text, normalized "
         "(base/sql_text.hpp); empty for shadow tables\n  const Column* columns;  // as pragma_table_info gives them\n  int "
         "column_count;\n};\n\n"
         "struct Index {\n  std::string_view name, table;\n  bool runtime;  // a runtime KB holds it (its table's)\n  std::string_view "
         "sql;  // CREATE text, normalized; empty for automatic "
         "indexes\n};\n\n";
  for (const auto& o : objects) {
    if (o.type != "table" || o.columns.empty()) continue;
    out << "inline constexpr Column kColumns_" << ident(o.name) << "[] = {\n";
    for (const auto& c : o.columns)
      out << "    {" << literal(c.name) << ", " << literal(c.type) << ", " << (c.not_null ? "true" : "false") << ", " << c.pk << "},\n";
    out << "};\n";
  }
  out << "\ninline constexpr Table kTables[] = {\n";
  for (const auto& o : objects) {
    if (o.type != "table") continue;
    const bool is_virtual = o.sql.rfind("CREATE VIRTUAL TABLE", 0) == 0;
    const char* kind = is_virtual ? "TableKind::Virtual" : shadow(o) ? "TableKind::Shadow" : "TableKind::Plain";
    const bool runtime = in_runtime(shadow(o) ? owner(o) : o.name);
    out << "    {" << literal(o.name) << ", " << kind << ", " << (runtime ? "true" : "false") << ", "
        << (kbc_only.count(shadow(o) ? owner(o) : o.name) ? "true" : "false") << ", "
        << literal(shadow(o) ? std::string() : kb::normalized_sql(o.sql)) << ", "
        << (o.columns.empty() ? std::string("nullptr") : "kColumns_" + ident(o.name)) << ", " << o.columns.size() << "},\n";
  }
  out << "};\n\ninline constexpr Index kIndexes[] = {\n";
  for (const auto& o : objects)
    if (o.type == "index")
      out << "    {" << literal(o.name) << ", " << literal(o.table) << ", " << (in_runtime(o.table) ? "true" : "false") << ", "
          << literal(kb::normalized_sql(o.sql)) << "},\n";
  out << "};\n\n}  // namespace kb::schema\n";

  // Written only when it changes, so dependents are not rebuilt for nothing.
  std::ifstream old(argv[2], std::ios::binary);
  std::stringstream old_text;
  old_text << old.rdbuf();
  if (old && old_text.str() == out.str()) return 0;
  std::ofstream f(argv[2], std::ios::binary | std::ios::trunc);
  f << out.str();
  return f ? 0 : 2;
}
