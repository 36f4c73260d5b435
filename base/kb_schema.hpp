// The structure check of a KB file kbq or kbc did not write: exactly the
// objects base/schema.sql makes (base/schema_objects.hpp, generated from it
// at build time), or all but the tables a runtime KB leaves out and their
// indexes, each with the same CREATE text up to layout and comments
// (base/sql_text.hpp), so that every statement kbq runs reads real tables
// with the expected columns, types and constraints. One scan of
// sqlite_schema (about 20 µs); the columns are compared one by one only to
// say what differs. A view or a trigger anywhere, a view
// standing in for a table, a table of another shape, an unknown table or
// index, or a virtual table of another definition is refused before any
// reader runs. Then PRAGMA quick_check: a file whose pages do not hold
// together (a cycle, a page used twice, a truncated chain) is refused too.
// Then the content: a file that holds more than the limits allow (a
// megabyte value, a million lexicon rows) is refused before it costs that.
#pragma once

#include <string>

#include "base/sqlite.hpp"

namespace kb {

// What is wrong with the structure of the database, one line, or "" when
// it is the schema's own. Assumes the schema version was checked.
std::string kb_structure_problem(Db& db);

// Whether the KB holds a table base/schema.sql marks 'runtime: left out':
// a full KB does, a runtime KB (kbc build --runtime) does not.
bool holds_left_out_tables(Db& db);

// What a KB holds past the limits of base/limits.hpp (rows and bytes of
// each table, bytes of each value, bytes of one key's rows, placeholders
// of a label, names), one line naming the table and column, or "" when it
// is within them. One scan of every table (about as long as quick_check);
// its statement budget grows with the file.
std::string kb_content_problem(Db& db);

// What PRAGMA quick_check finds (its first message, escaped, one line), or
// "" when the file is sound. Its statement budget grows with the file.
std::string kb_integrity_problem(Db& db);

}  // namespace kb
