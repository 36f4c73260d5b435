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

std::string read_file(const std::string& path);
void write_file(const std::string& path, const std::string& text);

}  // namespace kbtest
