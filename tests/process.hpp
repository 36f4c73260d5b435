// Test helper: run a program with arguments, capture stdout, stderr and
// the exit code (no shell involved, so arguments need no quoting), through
// base/process.hpp; and a temporary folder.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "base/files.hpp"

namespace kbtest {

// Is this runner built with AddressSanitizer (gcc's macro, or clang's
// feature)? Sanitizer builds run several times slower: time limits stretch
// and the longest grids thin with it.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

// A fresh folder under the system temp folder, removed with its content
// (base/files.hpp's TempDir) and read as a std::filesystem::path too.
class TempDir : public kb::TempDir {
 public:
  explicit TempDir(const std::string& prefix = "kbtests") : kb::TempDir(prefix), fs_path_(kb::TempDir::path()) {}
  const std::filesystem::path& path() const { return fs_path_; }
  const std::string& str() const { return kb::TempDir::path(); }

 private:
  std::filesystem::path fs_path_;
};

struct RunResult {
  int exit_code = -1;  // exit status, or 128 + signal
  std::string out, err;
};

RunResult run(const std::string& program, const std::vector<std::string>& args, const std::string& stdin_text = {});

// What a run under limits did.
struct Outcome {
  int exit_code = -1;        // exit status; -1 when killed by a signal or a limit
  int signal = 0;            // the signal that ended it, 0 if none
  bool timed_out = false;    // killed at the time limit
  bool over_memory = false;  // killed at the memory limit
  double seconds = 0;
  long peak_kib = 0;  // the highest resident set seen (VmHWM), sampled every few milliseconds
  std::string out, err;
};

// The limits of one run, enforced and measured by the harness.
struct Limits {
  double seconds = 10;           // wall-clock limit; SIGKILL past it
  long max_kib = 0;              // resident-set limit (0 = none); SIGKILL past it
  std::vector<std::string> env;  // extra NAME=VALUE entries
  bool unprivileged = false;     // when running as root: run as nobody (so file permissions apply)
  std::string cwd;               // working folder ("" = the runner's)
  std::string stdin_path;        // a file read as standard input ("" = /dev/null)
};

// Runs a program (no shell) with a time and a memory limit: the child's
// VmHWM is read from /proc every few milliseconds (wait4's ru_maxrss would
// carry the runner's own peak over fork and exec), and the child is killed
// with SIGKILL when it passes either limit. stdin is /dev/null, or
// limits.stdin_path.
Outcome run_limited(const std::string& program, const std::vector<std::string>& args, const Limits& limits);
Outcome run_limited(const std::string& program, const std::vector<std::string>& args, double limit_seconds);

// Marks the running test as skipped: prints "SKIPPED: <reason>", which
// CTest's SKIP_REGULAR_EXPRESSION (tests/CMakeLists.txt) reports as a skip,
// not a pass. The caller returns right after.
void skip(const std::string& reason);

// The Python 3 the tests run helper scripts with: Debian's /usr/bin/python3
// (where make deps installs python3-jsonschema), else the first on PATH.
std::string python3();

std::string read_file(const std::string& path);
void write_file(const std::string& path, const std::string& text);

}  // namespace kbtest
