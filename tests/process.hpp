// Test helper: run a program with arguments, capture stdout, stderr and
// the exit code (no shell involved, so arguments need no quoting).
#pragma once

#include <string>
#include <vector>

namespace kbtest {

struct RunResult {
  int exit_code = -1;   // exit status, or 128 + signal
  std::string out, err;
};

RunResult run(const std::string& program, const std::vector<std::string>& args, const std::string& stdin_text = {});

std::string read_file(const std::string& path);
void write_file(const std::string& path, const std::string& text);

}  // namespace kbtest
