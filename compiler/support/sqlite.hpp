// A thin RAII layer over the SQLite C API: statements are prepared once and
// every value is bound as a parameter (never spliced into SQL text).
#pragma once

#include <sqlite3.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace kb {

class SqliteError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Db;

class Stmt {
 public:
  Stmt(Db& db, std::string_view sql);
  ~Stmt();
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  Stmt(Stmt&& o) noexcept : db_(o.db_), s_(o.s_) { o.s_ = nullptr; }

  Stmt& bind(int i, std::string_view v);
  Stmt& bind(int i, const std::string& v) { return bind(i, std::string_view(v)); }
  Stmt& bind(int i, const char* v) { return bind(i, std::string_view(v)); }
  Stmt& bind(int i, long long v);
  Stmt& bind(int i, long v) { return bind(i, static_cast<long long>(v)); }
  Stmt& bind(int i, int v) { return bind(i, static_cast<long long>(v)); }
  Stmt& bind(int i, double v);
  Stmt& bind_null(int i);
  Stmt& bind_opt(int i, const std::optional<long long>& v) { return v ? bind(i, *v) : bind_null(i); }

  // Binds all arguments from index 1 on.
  template <typename... Args>
  Stmt& bind_all(const Args&... args) {
    int i = 1;
    (bind(i++, args), ...);
    return *this;
  }

  bool step();  // true while a row is available
  void run();   // step to completion, then reset
  void reset();

  int columns() const { return sqlite3_column_count(s_); }
  bool is_null(int c) const { return sqlite3_column_type(s_, c) == SQLITE_NULL; }
  std::string text(int c) const;
  long long integer(int c) const { return sqlite3_column_int64(s_, c); }
  double real(int c) const { return sqlite3_column_double(s_, c); }
  std::optional<long long> opt_int(int c) const {
    return is_null(c) ? std::nullopt : std::optional<long long>(integer(c));
  }
  const char* name(int c) const { return sqlite3_column_name(s_, c); }
  int type(int c) const { return sqlite3_column_type(s_, c); }

 private:
  Db& db_;
  sqlite3_stmt* s_ = nullptr;
};

class Db {
 public:
  enum class Mode { ReadOnly, ReadWriteCreate };
  Db(const std::string& path, Mode mode);
  // Opens an in-memory copy of serialized database bytes (read-only use).
  static Db from_bytes(const unsigned char* data, size_t size);
  ~Db();
  Db(Db&& o) noexcept : db_(o.db_) { o.db_ = nullptr; }
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  void exec(std::string_view sql);  // for fixed SQL (schema, pragmas) only: no values
  sqlite3* handle() { return db_; }
  std::string errmsg() const { return db_ ? sqlite3_errmsg(db_) : "out of memory"; }

 private:
  Db() = default;
  sqlite3* db_ = nullptr;
};

}  // namespace kb
