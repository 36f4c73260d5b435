// SQLite RAII wrappers (see sqlite.hpp).
#include "support/sqlite.hpp"

#include <cstring>

namespace kb {

Stmt::Stmt(Db& db, std::string_view sql) : db_(db) {
  if (sqlite3_prepare_v2(db.handle(), sql.data(), static_cast<int>(sql.size()), &s_, nullptr) != SQLITE_OK)
    throw SqliteError("cannot prepare statement: " + db.errmsg() + " in: " + std::string(sql.substr(0, 80)));
}
Stmt::~Stmt() { sqlite3_finalize(s_); }

Stmt& Stmt::bind(int i, std::string_view v) {
  sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  return *this;
}
Stmt& Stmt::bind(int i, long long v) {
  sqlite3_bind_int64(s_, i, v);
  return *this;
}
Stmt& Stmt::bind(int i, double v) {
  sqlite3_bind_double(s_, i, v);
  return *this;
}
Stmt& Stmt::bind_null(int i) {
  sqlite3_bind_null(s_, i);
  return *this;
}

bool Stmt::step() {
  const int rc = sqlite3_step(s_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  throw SqliteError(db_.errmsg());
}
void Stmt::run() {
  while (step()) {
  }
  reset();
}
void Stmt::reset() {
  sqlite3_reset(s_);
  sqlite3_clear_bindings(s_);
}
std::string Stmt::text(int c) const {
  const auto* p = sqlite3_column_text(s_, c);
  return p ? std::string(reinterpret_cast<const char*>(p), static_cast<size_t>(sqlite3_column_bytes(s_, c))) : std::string{};
}

Db::Db(const std::string& path, Mode mode) {
  const int flags = mode == Mode::ReadOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
    std::string msg = errmsg();
    sqlite3_close(db_);
    db_ = nullptr;
    throw SqliteError(msg);
  }
}

Db Db::from_bytes(const unsigned char* data, size_t size) {
  Db db;
  if (sqlite3_open_v2(":memory:", &db.db_, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK)
    throw SqliteError("cannot open an in-memory database");
  auto* copy = static_cast<unsigned char*>(sqlite3_malloc64(size));
  if (!copy) throw SqliteError("out of memory");
  std::memcpy(copy, data, size);
  const int rc = sqlite3_deserialize(db.db_, "main", copy, static_cast<sqlite3_int64>(size), static_cast<sqlite3_int64>(size),
                                     SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_READONLY);
  if (rc != SQLITE_OK) throw SqliteError("cannot load the embedded knowledge base: " + db.errmsg());
  return db;
}

Db::~Db() {
  if (db_) sqlite3_close(db_);
}

void Db::exec(std::string_view sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, std::string(sql).c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    throw SqliteError(msg);
  }
}

}  // namespace kb
