// Reading and writing files named by input kbc and kbq did not write:
// reads of regular files only, up to a size limit (a FIFO, a device or
// /dev/zero is an error, not a hang or an endless read); output files that
// are never devices, FIFOs or links; temporary files with unique names in
// the output's own folder; and OutputTree, the folder `kbc generate` owns,
// reached through file descriptors that never follow a link, with paths
// that are checked lexically before they are used. See docs/security.md.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace kb {

// A file system error about one path: what() is "path: problem" (control
// characters escaped); path and problem apart for a diagnostic.
class PathError : public std::runtime_error {
 public:
  PathError(std::string path, std::string problem);
  std::string path, problem;
};

// A whole file, or why it could not be read.
struct FileRead {
  std::optional<std::string> bytes;  // set when read
  std::string error;                 // else why: "not a regular file (a FIFO)", "larger than ...", strerror
};

// Reads a regular file of at most `max_bytes` bytes. Opens without blocking
// (a FIFO is refused, never waited on) and never reads past the limit (a
// file that grows while read is refused too).
FileRead read_regular_file(const std::string& path, std::uint64_t max_bytes);

// "a folder", "a FIFO", "a device", "a socket", "a symbolic link", "a regular file".
std::string file_kind(mode_t mode);

// Is `path` inside `root`, comparing their components (both absolute and
// canonical: weakly_canonical or canonical)? root itself counts as inside.
bool lexically_inside(const std::filesystem::path& root, const std::filesystem::path& path);

// Is `rel` a path kbc may create under an output folder: '/'-separated
// components, none empty, "." or "..", no leading '/', no backslash, no
// control character, at most 255 bytes a component and 4 096 in all.
bool safe_relative_path(std::string_view rel);

// Why `path` cannot be replaced by a new file, or "" when it can: it must
// not exist or be a regular file (never a link, a device, a FIFO, a folder).
std::string output_file_problem(const std::string& path);

// A new, empty temporary file beside `path` (same folder, so a rename
// replaces `path` atomically): "<path>.tmp.XXXXXX" made with mkstemp (a
// unique name, created exclusively, never through a link), readable as
// the umask allows. Returns its name; throws std::runtime_error. With
// `cleanup`, the file is registered there for removal on a signal
// (SignalCleanup, below) before any signal can end the process.
class SignalCleanup;
std::string make_temp_beside(const std::string& path, std::optional<SignalCleanup>* cleanup = nullptr);

// --- what an interrupted kbc leaves behind --------------------------------------
//
// A temporary file or folder that SIGTERM, SIGINT or SIGHUP must not leave
// behind (kbc build's FILE.tmp.XXXXXX, kbc generate's private
// kbc-generate-XXXXXX folder and the temporary files of its output tree).
// While a SignalCleanup lives, the handler that install_signal_cleanup()
// sets removes its path with unlinkat (async-signal-safe; files first,
// newest first, then folders), then lets the signal end the process as it
// would have (the same signal, the same exit status). SIGKILL cannot be
// caught: docs/kbc.md says what it can leave.

// Installs the handler for SIGTERM, SIGINT and SIGHUP (a signal the process
// ignores, as under nohup, stays ignored). Call once, at start.
void install_signal_cleanup();

// Holds SIGTERM, SIGINT and SIGHUP for its lifetime (delivered when it
// ends): around the creation of a temporary path and its SignalCleanup,
// so that no signal falls between the two.
class SignalsHeld {
 public:
  SignalsHeld();
  ~SignalsHeld();
  SignalsHeld(const SignalsHeld&) = delete;
  SignalsHeld& operator=(const SignalsHeld&) = delete;

 private:
  unsigned long long saved_[16] = {};  // the previous mask (a sigset_t)
};

class SignalCleanup {
 public:
  // `path` relative to the folder `dirfd` (AT_FDCWD: as given); `folder`:
  // removed with rmdir semantics (AT_REMOVEDIR), after every file. At most
  // 64 live at once; past that the path is simply not cleaned up.
  SignalCleanup(int dirfd, const std::string& path, bool folder = false);
  explicit SignalCleanup(const std::string& path, bool folder = false);
  ~SignalCleanup();
  SignalCleanup(const SignalCleanup&) = delete;
  SignalCleanup& operator=(const SignalCleanup&) = delete;

 private:
  int slot_ = -1;
};

// A new private folder under the system's temporary folder ($TMPDIR, else
// /tmp): "<prefix>-XXXXXX" made with mkdtemp (a unique name, mode 0700),
// removed with everything in it when the object goes out of scope. Folders
// inside that were made read-only are made writable first (never through
// a link), so nothing is left behind. Throws std::runtime_error.
//
// With `signal_cleanup` (kbc generate's private folder), SIGTERM, SIGINT
// and SIGHUP remove the folder too (SignalCleanup, above), and the files
// named there inside it (a file a rename put in place registers nothing
// itself): the signals are held from mkdtemp until all are registered.
class TempDir {
 public:
  explicit TempDir(std::string_view prefix);
  TempDir(std::string_view prefix, const std::vector<std::string>& signal_cleanup);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  // The path of `rel` inside the folder.
  std::string operator/(std::string_view rel) const { return path_ + "/" + std::string(rel); }

 private:
  std::string path_;
  std::vector<std::unique_ptr<SignalCleanup>> cleanups_;
};

// A folder that kbc generate writes. Everything below the root is reached
// with openat(O_NOFOLLOW): a link in the tree is never followed, replaced
// or deleted (writing through one is an error naming it), every relative
// path is checked with safe_relative_path, and files are written through a
// uniquely named temporary file in their own folder, renamed over them.
// Errors throw PathError.
class OutputTree {
 public:
  // Opens the root folder (following the path as given: the user named
  // it). With `create`, makes it (and its parents) when missing; without,
  // a missing root is an empty tree.
  OutputTree(const std::string& root, bool create);
  ~OutputTree();
  OutputTree(const OutputTree&) = delete;
  OutputTree& operator=(const OutputTree&) = delete;

  // The bytes of a file (at most max_bytes), nullopt when it does not exist
  // or is larger. A link or a non-regular file there is an error.
  std::optional<std::string> read(std::string_view rel, std::uint64_t max_bytes) const;
  // Writes the file atomically, making its folders.
  void write(std::string_view rel, std::string_view bytes);
  // Removes a regular file (a link or anything else is left alone).
  void remove(std::string_view rel);
  // The regular files under a folder of the tree, recursively, as paths
  // relative to the root, sorted; links are neither followed nor listed.
  std::vector<std::string> files_under(std::string_view sub) const;
  // Does the path exist (as anything, a link included)?
  bool exists(std::string_view rel) const;

 private:
  // An fd of the folder holding `rel` (created with `create`), or -1 when a
  // folder on the way is missing and not created; the file's name in it.
  int open_parent(std::string_view rel, bool create, std::string& name) const;
  void walk(int dir, const std::string& prefix, int depth, std::vector<std::string>& out) const;
  std::string root_;
  int fd_ = -1;
};

}  // namespace kb
