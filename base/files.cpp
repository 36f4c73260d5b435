// Bounded reads, safe output files and the generated tree (see files.hpp).
#include "base/files.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "base/escape.hpp"
#include "base/limits.hpp"

namespace kb {

namespace fs = std::filesystem;

namespace {

// Closes a descriptor when it goes out of scope.
struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
};

[[noreturn]] void fail(const std::string& path, const std::string& what) { throw PathError(path, what); }

std::vector<std::string_view> components(std::string_view rel) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (start <= rel.size()) {
    const std::size_t slash = rel.find('/', start);
    const std::size_t end = slash == std::string_view::npos ? rel.size() : slash;
    out.push_back(rel.substr(start, end - start));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return out;
}

std::string random_suffix() {
  static const char kChars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  unsigned char bytes[8] = {};
  if (::getrandom(bytes, sizeof bytes, 0) != static_cast<ssize_t>(sizeof bytes))
    for (auto& b : bytes) b = static_cast<unsigned char>(std::rand());
  std::string out;
  for (unsigned char b : bytes) out += kChars[b % (sizeof kChars - 1)];
  return out;
}

}  // namespace

PathError::PathError(std::string p, std::string what)
    : std::runtime_error(escape_controls(p + ": " + what, EscapeNewlines::Yes)), path(std::move(p)), problem(std::move(what)) {}

std::string file_kind(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  return "not a regular file";
}

FileRead read_regular_file(const std::string& path, std::uint64_t max_bytes) {
  FileRead r;
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
  Fd f(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (f.fd < 0) {
    r.error = std::strerror(errno);
    return r;
  }
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) {
    r.error = std::strerror(errno);
    return r;
  }
  if (!S_ISREG(st.st_mode)) {
    r.error = "not a regular file (" + file_kind(st.st_mode) + ")";
    return r;
  }
  const auto too_big = [&] {
    r.error = "larger than the limit of " + std::to_string(max_bytes) + " bytes (docs/security.md)";
    return r;
  };
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes) return too_big();
  std::string bytes;
  bytes.reserve(static_cast<std::size_t>(st.st_size));
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(f.fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      r.error = std::strerror(errno);
      return r;
    }
    if (n == 0) break;
    if (bytes.size() + static_cast<std::size_t>(n) > max_bytes) return too_big();
    bytes.append(buf, static_cast<std::size_t>(n));
  }
  r.bytes = std::move(bytes);
  return r;
}

bool lexically_inside(const fs::path& root, const fs::path& path) {
  auto r = root.begin(), p = path.begin();
  for (; r != root.end(); ++r, ++p) {
    if (r->empty() && std::next(r) == root.end()) return true;  // root written with a trailing '/'
    if (p == path.end() || *r != *p) return false;
  }
  return true;
}

bool safe_relative_path(std::string_view rel) {
  if (rel.empty() || rel.size() > 4096 || rel.front() == '/') return false;
  if (rel.find('\\') != std::string_view::npos || rel.find('\0') != std::string_view::npos || find_control(rel) ||
      rel.find('\r') != std::string_view::npos)
    return false;
  for (const auto c : components(rel))
    if (c.empty() || c == "." || c == ".." || c.size() > 255) return false;
  return true;
}

std::string output_file_problem(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return errno == ENOENT ? std::string() : std::string(std::strerror(errno));
  if (S_ISREG(st.st_mode)) return {};
  if (S_ISLNK(st.st_mode)) return "is a symbolic link: kbc never writes through a link (remove it, or name its target)";
  return "is " + file_kind(st.st_mode) + ", not a regular file: kbc replaces only regular files";
}

std::string make_temp_beside(const std::string& path, std::optional<SignalCleanup>* cleanup) {
  std::string name = path + ".tmp.XXXXXX";
  const SignalsHeld held;
  const int fd = ::mkstemp(name.data());
  if (fd < 0) fail(path, std::string("cannot create a temporary file beside it: ") + std::strerror(errno));
  if (cleanup) cleanup->emplace(name);
  // mkstemp makes it 0600; the KB is as readable as any new file.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  ::close(fd);
  return name;
}

// --- cleanup on SIGTERM, SIGINT, SIGHUP ------------------------------------------

namespace {

// One path to remove if a signal ends the process. `used` is set after the
// other fields are filled and cleared before they are reused, so the
// handler never reads half a slot. A slot is all zero until used (dirfd is
// set with the path), so the 64 slots of PATH_MAX bytes lie in .bss, not in
// every binary's file (260 KB of .data).
struct CleanupSlot {
  std::atomic<bool> used{false};
  int dirfd = 0;
  bool folder = false;
  char path[PATH_MAX] = {};
};
constexpr int kCleanupSlots = 64;
CleanupSlot g_cleanup[kCleanupSlots];
std::atomic<int> g_cleanup_top{0};  // one past the highest slot ever used

extern "C" void cleanup_and_die(int sig) {
  const int saved = errno;
  const int top = g_cleanup_top.load();
  for (const bool folders : {false, true})
    for (int i = top - 1; i >= 0; --i)
      if (g_cleanup[i].used.load() && g_cleanup[i].folder == folders)
        ::unlinkat(g_cleanup[i].dirfd, g_cleanup[i].path, folders ? AT_REMOVEDIR : 0);
  errno = saved;
  ::signal(sig, SIG_DFL);  // the process ends as the signal would have ended it
  ::raise(sig);
}

}  // namespace

void install_signal_cleanup() {
  for (const int sig : {SIGTERM, SIGINT, SIGHUP}) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;  // nohup: stays ignored
    struct sigaction sa {};
    sa.sa_handler = cleanup_and_die;
    sigemptyset(&sa.sa_mask);
    for (const int other : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&sa.sa_mask, other);  // one cleanup at a time
    ::sigaction(sig, &sa, nullptr);
  }
}

SignalsHeld::SignalsHeld() {
  static_assert(sizeof(sigset_t) <= sizeof saved_, "a sigset_t fits");
  sigset_t block;
  sigemptyset(&block);
  for (const int sig : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&block, sig);
  ::sigprocmask(SIG_BLOCK, &block, reinterpret_cast<sigset_t*>(saved_));
}

SignalsHeld::~SignalsHeld() { ::sigprocmask(SIG_SETMASK, reinterpret_cast<sigset_t*>(saved_), nullptr); }

SignalCleanup::SignalCleanup(int dirfd, const std::string& path, bool folder) {
  if (path.size() >= PATH_MAX) return;
  for (int i = 0; i < kCleanupSlots; ++i) {
    CleanupSlot& s = g_cleanup[i];
    if (s.used.load()) continue;
    s.dirfd = dirfd;
    s.folder = folder;
    std::memcpy(s.path, path.c_str(), path.size() + 1);
    if (i + 1 > g_cleanup_top.load()) g_cleanup_top.store(i + 1);
    s.used.store(true);
    slot_ = i;
    return;
  }
}

SignalCleanup::SignalCleanup(const std::string& path, bool folder) : SignalCleanup(AT_FDCWD, path, folder) {}

SignalCleanup::~SignalCleanup() {
  if (slot_ >= 0) g_cleanup[slot_].used.store(false);
}

TempDir::TempDir(std::string_view prefix) {
  std::string pattern = (fs::temp_directory_path() / (std::string(prefix) + "-XXXXXX")).string();
  if (!::mkdtemp(pattern.data())) throw std::runtime_error("cannot create a temporary folder: " + std::string(std::strerror(errno)));
  path_ = pattern;
}

TempDir::TempDir(std::string_view prefix, const std::vector<std::string>& signal_cleanup) {
  const SignalsHeld held;
  std::string pattern = (fs::temp_directory_path() / (std::string(prefix) + "-XXXXXX")).string();
  if (!::mkdtemp(pattern.data())) throw std::runtime_error("cannot create a temporary folder: " + std::string(std::strerror(errno)));
  path_ = pattern;
  cleanups_.push_back(std::make_unique<SignalCleanup>(path_, true));
  for (const auto& rel : signal_cleanup) cleanups_.push_back(std::make_unique<SignalCleanup>(path_ + "/" + rel));
}

TempDir::~TempDir() {
  std::error_code ec;
  // A folder inside made read-only (by a test of permissions) would stop
  // remove_all; symlink_status, so that a link is never followed.
  for (auto it = fs::recursive_directory_iterator(path_, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
    if (fs::is_directory(it->symlink_status(ec))) ::chmod(it->path().c_str(), 0700);
  ::chmod(path_.c_str(), 0700);
  fs::remove_all(path_, ec);
}

// --- OutputTree ----------------------------------------------------------------

OutputTree::OutputTree(const std::string& root, bool create) : root_(root) {
  if (create) {
    std::error_code ec;
    fs::create_directories(root, ec);  // the path the user named, links in it included
    if (ec) fail(root, "cannot create the output folder: " + ec.message());
  }
  fd_ = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd_ < 0 && !(errno == ENOENT && !create)) fail(root, std::string("cannot open the output folder: ") + std::strerror(errno));
}

OutputTree::~OutputTree() {
  if (fd_ >= 0) ::close(fd_);
}

int OutputTree::open_parent(std::string_view rel, bool create, std::string& name) const {
  if (!safe_relative_path(rel))
    fail(root_ + "/" + std::string(rel), "not a path kbc may write (an absolute path, '..', or a control character)");
  if (fd_ < 0) return -1;
  const auto parts = components(rel);
  int dir = ::dup(fd_);
  if (dir < 0) fail(root_, std::strerror(errno));
  std::string so_far = root_;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    const std::string part(parts[i]);
    so_far += "/" + part;
    int next = ::openat(dir, part.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0 && errno == ENOENT) {
      if (!create) {
        ::close(dir);
        return -1;
      }
      if (::mkdirat(dir, part.c_str(), 0777) != 0 && errno != EEXIST) {
        const int e = errno;
        ::close(dir);
        fail(so_far, std::string("cannot create the folder: ") + std::strerror(e));
      }
      next = ::openat(dir, part.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
    if (next < 0) {
      const int e = errno;
      struct stat st {};
      const bool is_link = ::fstatat(dir, part.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
      ::close(dir);
      if (is_link) fail(so_far, "is a symbolic link: kbc generate never writes through a link in its output folder (remove it)");
      fail(so_far, e == ENOTDIR ? std::string("is not a folder") : std::string(std::strerror(e)));
    }
    ::close(dir);
    dir = next;
  }
  name = std::string(parts.back());
  return dir;
}

std::optional<std::string> OutputTree::read(std::string_view rel, std::uint64_t max_bytes) const {
  std::string name;
  const int dir = open_parent(rel, false, name);
  if (dir < 0) return std::nullopt;
  Fd d(dir);
  struct stat st {};
  if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return std::nullopt;
    fail(root_ + "/" + std::string(rel), std::strerror(errno));
  }
  if (S_ISLNK(st.st_mode))
    fail(root_ + "/" + std::string(rel),
         "is a symbolic link: kbc generate never reads or replaces a link in its output folder (remove it)");
  if (!S_ISREG(st.st_mode)) fail(root_ + "/" + std::string(rel), "is " + file_kind(st.st_mode) + ", not a regular file");
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes) return std::nullopt;
  Fd f(::openat(dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (f.fd < 0) fail(root_ + "/" + std::string(rel), std::strerror(errno));
  std::string bytes;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(f.fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(root_ + "/" + std::string(rel), std::strerror(errno));
    if (n == 0) break;
    if (bytes.size() + static_cast<std::size_t>(n) > max_bytes) return std::nullopt;
    bytes.append(buf, static_cast<std::size_t>(n));
  }
  return bytes;
}

void OutputTree::write(std::string_view rel, std::string_view bytes) {
  std::string name;
  const int dir = open_parent(rel, true, name);
  Fd d(dir);
  const std::string path = root_ + "/" + std::string(rel);
  struct stat st {};
  if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode))
    fail(path, S_ISLNK(st.st_mode) ? std::string("is a symbolic link: kbc generate never replaces a link in its output folder (remove it)")
                                   : "is " + file_kind(st.st_mode) + ", not a regular file");
  // A unique temporary name in the same folder, created exclusively (never
  // through a planted link), then renamed over the file.
  std::string tmp;
  int fd = -1;
  std::optional<SignalCleanup> cleanup;  // a signal removes the temporary file (destroyed before `d` closes dir)
  {
    const SignalsHeld held;
    for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
      tmp = "." + name.substr(0, 200) + ".tmp." + random_suffix();
      fd = ::openat(dir, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
      if (fd < 0 && errno != EEXIST) fail(path, std::string("cannot create a temporary file: ") + std::strerror(errno));
    }
    if (fd < 0) fail(path, "cannot find a free temporary file name");
    cleanup.emplace(dir, tmp);
  }
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int e = errno;
      ::close(fd);
      ::unlinkat(dir, tmp.c_str(), 0);
      fail(path, std::string("cannot write: ") + std::strerror(e));
    }
    done += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0 || ::renameat(dir, tmp.c_str(), dir, name.c_str()) != 0) {
    const int e = errno;
    ::unlinkat(dir, tmp.c_str(), 0);
    fail(path, std::string("cannot write: ") + std::strerror(e));
  }
}

void OutputTree::remove(std::string_view rel) {
  std::string name;
  const int dir = open_parent(rel, false, name);
  if (dir < 0) return;
  Fd d(dir);
  struct stat st {};
  if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) return;
  if (::unlinkat(dir, name.c_str(), 0) != 0) fail(root_ + "/" + std::string(rel), std::string("cannot remove: ") + std::strerror(errno));
}

bool OutputTree::exists(std::string_view rel) const {
  std::string name;
  const int dir = open_parent(rel, false, name);
  if (dir < 0) return false;
  Fd d(dir);
  struct stat st {};
  return ::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
}

std::vector<std::string> OutputTree::files_under(std::string_view sub) const {
  std::vector<std::string> out;
  std::string name;
  const int parent = open_parent(std::string(sub) + "/x", false, name);
  if (parent < 0) return out;
  Fd p(parent);
  walk(parent, std::string(sub) + "/", 0, out);
  std::sort(out.begin(), out.end());
  return out;
}

void OutputTree::walk(int dir, const std::string& prefix, int depth, std::vector<std::string>& out) const {
  if (depth > limits::kMaxFolderDepth) fail(root_ + "/" + prefix, "folders nested too deep");
  const int copy = ::dup(dir);
  if (copy < 0) fail(root_ + "/" + prefix, std::strerror(errno));
  DIR* d = ::fdopendir(copy);
  if (!d) {
    ::close(copy);
    fail(root_ + "/" + prefix, std::string("cannot read the folder: ") + std::strerror(errno));
  }
  ::rewinddir(d);
  std::vector<std::pair<std::string, bool>> entries;  // name, is a folder
  errno = 0;
  while (const dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n == "." || n == "..") continue;
    struct stat st {};
    if (::fstatat(dir, n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone meanwhile
    if (S_ISDIR(st.st_mode))
      entries.emplace_back(n, true);
    else if (S_ISREG(st.st_mode))
      entries.emplace_back(n, false);
    // Links, FIFOs, devices: not ours, neither followed nor listed.
    errno = 0;
  }
  const int read_error = errno;
  ::closedir(d);
  if (read_error != 0) fail(root_ + "/" + prefix, std::string("cannot read the folder: ") + std::strerror(read_error));
  for (const auto& [n, is_dir] : entries) {
    if (!is_dir) {
      out.push_back(prefix + n);
      continue;
    }
    Fd sub(::openat(dir, n.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (sub.fd < 0) fail(root_ + "/" + prefix + n, std::string("cannot read the folder: ") + std::strerror(errno));
    walk(sub.fd, prefix + n + "/", depth + 1, out);
  }
}

}  // namespace kb
