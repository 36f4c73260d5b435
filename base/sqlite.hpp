// A thin RAII layer over the SQLite C API: statements are prepared once and
// every value is bound as a parameter (never spliced into SQL text).
#pragma once

#include <sqlite3.h>

#include <map>
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
  Stmt(Stmt&& o) noexcept : db_(o.db_), s_(o.s_), borrowed_(o.borrowed_) {
    o.s_ = nullptr;
    o.borrowed_ = nullptr;
  }

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
  // The column's text without a copy: valid until the next step or reset.
  std::string_view view(int c) const;
  long long integer(int c) const { return sqlite3_column_int64(s_, c); }
  double real(int c) const { return sqlite3_column_double(s_, c); }
  std::optional<long long> opt_int(int c) const { return is_null(c) ? std::nullopt : std::optional<long long>(integer(c)); }
  const char* name(int c) const { return sqlite3_column_name(s_, c); }
  int type(int c) const { return sqlite3_column_type(s_, c); }

 private:
  Db& db_;
  sqlite3_stmt* s_ = nullptr;
  bool* borrowed_ = nullptr;  // the cache entry's busy flag when s_ is borrowed from Db's cache
};

class Db {
 public:
  enum class Mode { ReadOnly, ReadWriteCreate };
  Db(const std::string& path, Mode mode);
  // Opens serialized database bytes in place, read-only; they must outlive
  // the Db (kbq's KB embedded in the binary).
  static Db from_bytes(const unsigned char* data, size_t size);
  ~Db();
  Db(Db&& o) noexcept : db_(o.db_), cache_(std::move(o.cache_)), caching_(o.caching_) { o.db_ = nullptr; }
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  void exec(std::string_view sql);  // for fixed SQL (schema, pragmas) only: no values
  sqlite3* handle() { return db_; }
  std::string errmsg() const { return db_ ? sqlite3_errmsg(db_) : "out of memory"; }

  // From now on a Stmt of SQL text seen before reuses its prepared
  // statement (reset, bindings cleared) instead of parsing the SQL again:
  // kbq runs the same few dozen statements a hundred times per answer. A
  // statement still in use (nested loops over the same SQL) is prepared
  // afresh.
  void cache_statements() { caching_ = true; }

 private:
  friend class Stmt;
  struct Cached {
    sqlite3_stmt* stmt = nullptr;
    bool busy = false;
  };
  Db() = default;
  sqlite3* db_ = nullptr;
  std::map<std::string, Cached, std::less<>> cache_;
  bool caching_ = false;
};

}  // namespace kb
