// SQLite RAII wrappers (see sqlite.hpp).
#include "base/sqlite.hpp"

#include <cstring>

namespace kb {

namespace {
sqlite3_stmt* prepare(Db& db, std::string_view sql, unsigned flags) {
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v3(db.handle(), sql.data(), static_cast<int>(sql.size()), flags, &s, nullptr) != SQLITE_OK)
    throw SqliteError("cannot prepare statement: " + db.errmsg() + " in: " + std::string(sql.substr(0, 80)));
  return s;
}
}  // namespace

Stmt::Stmt(Db& db, std::string_view sql) : db_(db) {
  if (!db.caching_) {
    s_ = prepare(db, sql, 0);
    return;
  }
  auto it = db.cache_.find(sql);
  if (it == db.cache_.end()) {
    sqlite3_stmt* s = prepare(db, sql, SQLITE_PREPARE_PERSISTENT);
    it = db.cache_.emplace(std::string(sql), Db::Cached{s, false}).first;
  }
  if (it->second.busy) {
    s_ = prepare(db, sql, 0);
    return;
  }
  s_ = it->second.stmt;
  borrowed_ = &it->second.busy;
  *borrowed_ = true;
}

Stmt::~Stmt() {
  if (!borrowed_) {
    sqlite3_finalize(s_);
    return;
  }
  sqlite3_reset(s_);
  sqlite3_clear_bindings(s_);
  *borrowed_ = false;
}

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
std::string_view Stmt::view(int c) const {
  const auto* p = sqlite3_column_text(s_, c);
  return p ? std::string_view(reinterpret_cast<const char*>(p), static_cast<size_t>(sqlite3_column_bytes(s_, c))) : std::string_view{};
}
std::string Stmt::text(int c) const {
  const auto* p = sqlite3_column_text(s_, c);
  return p ? std::string(reinterpret_cast<const char*>(p), static_cast<size_t>(sqlite3_column_bytes(s_, c))) : std::string{};
}

Db::Db(const std::string& path, Mode mode) {
  // A connection is used by one thread only: without its mutex, every
  // step and column read is cheaper (kbq reads thousands of rows).
  const int flags = (mode == Mode::ReadOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)) | SQLITE_OPEN_NOMUTEX;
  if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
    std::string msg = errmsg();
    sqlite3_close(db_);
    db_ = nullptr;
    throw SqliteError(msg);
  }
}

Db Db::from_bytes(const unsigned char* data, size_t size) {
  Db db;
  if (sqlite3_open_v2(":memory:", &db.db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK)
    throw SqliteError("cannot open an in-memory database");
  // Read in place, not copied: SQLite never writes to a READONLY
  // deserialized image, and without FREEONCLOSE never frees it. Pages the
  // queries do not touch are never faulted in.
  const int rc = sqlite3_deserialize(db.db_, "main", const_cast<unsigned char*>(data), static_cast<sqlite3_int64>(size),
                                     static_cast<sqlite3_int64>(size), SQLITE_DESERIALIZE_READONLY);
  if (rc != SQLITE_OK) throw SqliteError("cannot load the embedded knowledge base: " + db.errmsg());
  return db;
}

Db::~Db() {
  for (auto& [sql, c] : cache_) sqlite3_finalize(c.stmt);
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
