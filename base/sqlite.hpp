// A thin RAII layer over the SQLite C API: statements are prepared once and
// every value is bound as a parameter (never spliced into SQL text). A KB
// file kbq or kbc did not write is opened with Db::open_untrusted, which
// follows SQLite's guidance for untrusted database files
// (docs/security.md).
#pragma once

#include <sqlite3.h>

#include <map>
#include <memory>
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
  Stmt(Stmt&& o) noexcept : db_(o.db_), s_(o.s_), borrowed_(o.borrowed_), ticks_(o.ticks_) {
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
  Stmt& bind_blob(int i, std::string_view bytes);
  Stmt& bind_opt(int i, const std::optional<long long>& v) { return v ? bind(i, *v) : bind_null(i); }
  Stmt& bind(int i, const std::optional<long long>& v) { return bind_opt(i, v); }  // NULL when empty

  // Binds all arguments from index 1 on.
  template <typename... Args>
  Stmt& bind_all(const Args&... args) {
    int i = 1;
    (bind(i++, args), ...);
    return *this;
  }

  // True while a row is available. On a connection with a statement budget
  // (Db::open_untrusted), a statement that runs past it throws SqliteError.
  bool step();
  void run();  // step to completion, then reset
  void reset();

  int columns() const { return sqlite3_column_count(s_); }
  bool is_null(int c) const { return sqlite3_column_type(s_, c) == SQLITE_NULL; }
  std::string text(int c) const;
  // The column's text without a copy: valid until the next step or reset.
  std::string_view view(int c) const;
  // The column's bytes as a blob, without a copy (valid as view's).
  std::string_view blob(int c) const;
  long long integer(int c) const { return sqlite3_column_int64(s_, c); }
  double real(int c) const { return sqlite3_column_double(s_, c); }
  std::optional<long long> opt_int(int c) const { return is_null(c) ? std::nullopt : std::optional<long long>(integer(c)); }
  // Bytes of the column's text or blob (read after type(c): an integer or a
  // real would be converted to text first).
  int bytes(int c) const { return sqlite3_column_bytes(s_, c); }
  const char* name(int c) const { return sqlite3_column_name(s_, c); }
  int type(int c) const { return sqlite3_column_type(s_, c); }

 private:
  Db& db_;
  sqlite3_stmt* s_ = nullptr;
  bool* borrowed_ = nullptr;  // the cache entry's busy flag when s_ is borrowed from Db's cache
  long long ticks_ = 0;       // progress-handler ticks this statement has used since it started
};

// For a program that calls SQLite from one thread only (kbq): SQLite's
// mutexes off for the process (SQLITE_CONFIG_SINGLETHREAD; each call took
// and released several). Memory statistics stay on: the heap limit of
// open_untrusted needs them. Call before anything else calls SQLite;
// false when that is too late (nothing changed).
bool use_sqlite_from_one_thread();

class Db {
 public:
  enum class Mode { ReadOnly, ReadWriteCreate };
  Db(const std::string& path, Mode mode);
  // Opens serialized database bytes in place, read-only; they must outlive
  // the Db (kbq's KB embedded in the binary). The SQLite settings of
  // open_untrusted apply (limits, budget), not its file checks.
  static Db from_bytes(const unsigned char* data, size_t size);
  // Opens a database file someone else may have written (kbq --kb, kbc
  // dump): a regular file of at most limits::kMaxKbFileBytes (a FIFO, a
  // device or a folder is refused before SQLite sees it), read-only and
  // immutable (no lock, journal, -wal or -shm file is read or created),
  // SQLITE_DBCONFIG_DEFENSIVE on, trusted_schema, views and triggers off,
  // cell_size_check on, the limits of base/limits.hpp (value length, SQL
  // length, columns, expression depth, ...; no ATTACH), SQLite's heap
  // limited for the process, and a budget of progress-handler ticks per
  // statement (`max_ticks`, limits::kMaxStatementTicks by default; 0 = none).
  // Throws SqliteError.
  static Db open_untrusted(const std::string& path, long long max_ticks = -1);
  ~Db();
  Db(Db&& o) noexcept : db_(o.db_), cache_(std::move(o.cache_)), caching_(o.caching_), progress_(std::move(o.progress_)) {
    o.db_ = nullptr;
  }
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

  // The statement budget in progress-handler ticks (0 = none); a statement
  // may be given more (PRAGMA quick_check on a large file) and set back.
  long long statement_budget() const { return progress_ ? progress_->max_ticks : 0; }
  void set_statement_budget(long long max_ticks);

 private:
  friend class Stmt;
  struct Cached {
    sqlite3_stmt* stmt = nullptr;
    bool busy = false;
  };
  // The progress handler's state, at a fixed address (a Db moves).
  struct Progress {
    long long max_ticks = 0;     // a statement past this many ticks is interrupted
    long long* ticks = nullptr;  // the counter of the statement being stepped
  };
  Db() = default;
  // The settings of open_untrusted, after the connection is open
  // (`check_cells`: PRAGMA cell_size_check, for files).
  void harden(long long max_ticks, bool check_cells);
  static int on_progress(void* progress);
  sqlite3* db_ = nullptr;
  std::map<std::string, Cached, std::less<>> cache_;
  bool caching_ = false;
  std::unique_ptr<Progress> progress_;
};

}  // namespace kb
