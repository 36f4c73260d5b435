// SQLite RAII wrappers (see sqlite.hpp).
#include "base/sqlite.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/files.hpp"
#include "base/limits.hpp"

namespace kb {

namespace {
sqlite3_stmt* prepare(Db& db, std::string_view sql, unsigned flags) {
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v3(db.handle(), sql.data(), static_cast<int>(sql.size()), flags, &s, nullptr) != SQLITE_OK)
    throw SqliteError("cannot prepare statement: " + db.errmsg() + " in: " + std::string(sql.substr(0, 80)));
  return s;
}

// A file name as an SQLite URI path: every byte but the unreserved ones and
// '/' percent-encoded (a '?' or '#' in the name is not a URI parameter).
std::string uri_path(const std::string& path) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (char ch : path) {
    const auto u = static_cast<unsigned char>(ch);
    if ((u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') || ch == '-' || ch == '.' || ch == '_' || ch == '~' ||
        ch == '/') {
      out += ch;
    } else {
      out += '%';
      out += hex[u >> 4];
      out += hex[u & 15];
    }
  }
  return out;
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
  Db::Progress* p = db_.progress_.get();
  long long* outer = nullptr;
  if (p) {
    outer = p->ticks;  // a statement stepped inside another's loop counts its own ticks
    p->ticks = &ticks_;
  }
  const int rc = sqlite3_step(s_);
  if (p) p->ticks = outer;
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  if (rc == SQLITE_INTERRUPT && p && p->max_ticks > 0 && ticks_ > p->max_ticks)
    throw SqliteError("a statement ran past its budget of " + std::to_string(p->max_ticks * limits::kTickOps) +
                      " steps and was stopped (a crafted database can make one run forever)");
  if (rc == SQLITE_TOOBIG)
    throw SqliteError("a value is longer than the limit of " + std::to_string(sqlite3_limit(db_.handle(), SQLITE_LIMIT_LENGTH, -1)) +
                      " bytes (" + db_.errmsg() + ")");
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
  ticks_ = 0;
}
Stmt& Stmt::bind_blob(int i, std::string_view bytes) {
  sqlite3_bind_blob(s_, i, bytes.data(), static_cast<int>(bytes.size()), SQLITE_TRANSIENT);
  return *this;
}
std::string_view Stmt::blob(int c) const {
  const auto* p = sqlite3_column_blob(s_, c);
  return p ? std::string_view(static_cast<const char*>(p), static_cast<size_t>(sqlite3_column_bytes(s_, c))) : std::string_view{};
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
  // With mmap_size at 0 (SQLite's default) the pager copies every page it
  // reads out of the image into its own cache; with the image's size it
  // reads the pages where they are (memdb's xFetch), which saves the copy
  // and the cache's memory (docs/performance.md).
  db.exec("PRAGMA mmap_size = " + std::to_string(size));
  // Built with this program: the settings cost nothing, the file checks
  // (cell_size_check) are left out.
  db.harden(limits::kMaxStatementTicks, false);
  return db;
}

Db Db::open_untrusted(const std::string& path, long long max_ticks) {
  // Only a regular file: opening a FIFO would block, a device (/dev/zero)
  // would read forever. O_NONBLOCK so that this check itself never waits.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) throw SqliteError(std::strerror(errno));
  struct stat st {};
  const int stat_rc = ::fstat(fd, &st);
  ::close(fd);
  if (stat_rc != 0) throw SqliteError(std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw SqliteError("is " + file_kind(st.st_mode) + ", not a regular file");
  if (static_cast<std::uint64_t>(st.st_size) > limits::kMaxKbFileBytes)
    throw SqliteError("is " + std::to_string(st.st_size) + " bytes, over the limit of " + std::to_string(limits::kMaxKbFileBytes) +
                      " (docs/security.md)");
  Db db;
  // immutable=1: the file is read as it is, without locks, and no journal,
  // -wal or -shm file is read or created beside it (a WAL-mode file too).
  const std::string uri = "file:" + uri_path(path) + "?mode=ro&immutable=1";
  if (sqlite3_open_v2(uri.c_str(), &db.db_, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK)
    throw SqliteError(db.errmsg());
  db.harden(max_ticks < 0 ? limits::kMaxStatementTicks : max_ticks, true);
  return db;
}

void Db::harden(long long max_ticks, bool check_cells) {
  int ignored = 0;
  sqlite3_db_config(db_, SQLITE_DBCONFIG_DEFENSIVE, 1, &ignored);
  sqlite3_db_config(db_, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, &ignored);
  sqlite3_db_config(db_, SQLITE_DBCONFIG_ENABLE_VIEW, 0, &ignored);
  sqlite3_db_config(db_, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, &ignored);
  sqlite3_db_config(db_, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, &ignored);
  sqlite3_limit(db_, SQLITE_LIMIT_LENGTH, limits::kMaxValueBytes);
  sqlite3_limit(db_, SQLITE_LIMIT_SQL_LENGTH, limits::kMaxSqlBytes);
  sqlite3_limit(db_, SQLITE_LIMIT_COLUMN, limits::kMaxColumns);
  sqlite3_limit(db_, SQLITE_LIMIT_EXPR_DEPTH, limits::kMaxExprDepth);
  sqlite3_limit(db_, SQLITE_LIMIT_COMPOUND_SELECT, limits::kMaxCompoundSelect);
  sqlite3_limit(db_, SQLITE_LIMIT_VDBE_OP, limits::kMaxVdbeOps);
  sqlite3_limit(db_, SQLITE_LIMIT_FUNCTION_ARG, limits::kMaxFunctionArgs);
  sqlite3_limit(db_, SQLITE_LIMIT_ATTACHED, 0);
  sqlite3_limit(db_, SQLITE_LIMIT_LIKE_PATTERN_LENGTH, limits::kMaxLikePatternBytes);
  sqlite3_limit(db_, SQLITE_LIMIT_TRIGGER_DEPTH, limits::kMaxTriggerDepth);
  // SQLite's heap, for the whole process (the setting is global): set once,
  // unless the program chose its own.
  if (sqlite3_hard_heap_limit64(-1) == 0) sqlite3_hard_heap_limit64(limits::kSqliteHeapBytes);
  progress_ = std::make_unique<Progress>();
  set_statement_budget(max_ticks);
  if (check_cells) exec("PRAGMA cell_size_check = ON");
}

bool use_sqlite_from_one_thread() { return sqlite3_config(SQLITE_CONFIG_SINGLETHREAD) == SQLITE_OK; }

void Db::set_statement_budget(long long max_ticks) {
  if (!progress_) progress_ = std::make_unique<Progress>();
  progress_->max_ticks = max_ticks;
  if (max_ticks > 0)
    sqlite3_progress_handler(db_, limits::kTickOps, &Db::on_progress, progress_.get());
  else
    sqlite3_progress_handler(db_, 0, nullptr, nullptr);
}

int Db::on_progress(void* progress) {
  auto* p = static_cast<Progress*>(progress);
  if (!p->ticks) return 0;  // sqlite3_exec of fixed SQL (pragmas): not a reader's statement
  return ++*p->ticks > p->max_ticks ? 1 : 0;
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
