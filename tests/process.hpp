// Test helper: run a program with arguments, capture stdout, stderr and
// the exit code (no shell involved, so arguments need no quoting).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace kbtest {

// A fresh folder under the system temp folder, removed with its content.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "kbtests");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string str() const { return path_.string(); }
  std::string operator/(const std::string& rel) const { return (path_ / rel).string(); }

 private:
  std::filesystem::path path_;
};

struct RunResult {
  int exit_code = -1;  // exit status, or 128 + signal
  std::string out, err;
};

RunResult run(const std::string& program, const std::vector<std::string>& args, const std::string& stdin_text = {});

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
