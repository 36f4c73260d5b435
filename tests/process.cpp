// Test helper implementation (see process.hpp): the runs go through
// base/process.hpp, the one home of child processes; this file adds the
// harness's limits and the test folders.
#include "process.hpp"

#include <grp.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "base/process.hpp"

namespace kbtest {

std::string python3() {
  if (::access("/usr/bin/python3", X_OK) == 0) return "/usr/bin/python3";
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');)
    if (!dir.empty() && ::access((dir + "/python3").c_str(), X_OK) == 0) return dir + "/python3";
  return "python3";  // not found: run() fails with exit 127
}

void skip(const std::string& reason) {
  std::printf("SKIPPED: %s\n", reason.c_str());
  std::fflush(stdout);
}

RunResult run(const std::string& program, const std::vector<std::string>& args, const std::string& stdin_text) {
  std::vector<std::string> argv{program};
  argv.insert(argv.end(), args.begin(), args.end());
  kb::RunOptions o;
  o.in = o.out = o.err = kb::Stream::Pipe;
  o.input = stdin_text;
  const kb::RunResult k = kb::run(argv, o);
  RunResult r;
  r.out = k.out;
  r.err = k.error ? "cannot run " + program + ": " + std::strerror(k.error) + "\n" : k.err;
  r.exit_code = k.error ? 127 : k.status.shell_code();
  return r;
}

namespace {
// The child's peak resident set (VmHWM, KiB), 0 when it cannot be read.
long peak_kib_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
  return 0;
}

// nobody:nogroup, so that permissions (a folder with mode 000) apply.
bool become_nobody() { return ::setgroups(0, nullptr) == 0 && ::setgid(65534) == 0 && ::setuid(65534) == 0; }
}  // namespace

Outcome run_limited(const std::string& program, const std::vector<std::string>& args, double limit_seconds) {
  Limits l;
  l.seconds = limit_seconds;
  return run_limited(program, args, l);
}

Outcome run_limited(const std::string& program, const std::vector<std::string>& args, const Limits& limits) {
  std::vector<std::string> argv{program};
  argv.insert(argv.end(), args.begin(), args.end());
  kb::RunOptions o;
  if (limits.stdin_path.empty()) {
    o.in = kb::Stream::Null;
  } else {  // the file's bytes through a pipe (run writes them as the child reads)
    o.in = kb::Stream::Pipe;
    o.input = kbtest::read_file(limits.stdin_path);
  }
  o.out = o.err = kb::Stream::Pipe;
  o.cwd = limits.cwd;
  o.env = limits.env;
  if (limits.unprivileged && ::geteuid() == 0) o.in_child = become_nobody;
  Outcome r;
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::milliseconds(static_cast<long>(limits.seconds * 1000));
  // kb::spawn returns once the child has exec'd, so its memory is its own
  // from the first tick (before exec it would be a copy of this runner's).
  o.tick_ms = 5;
  o.on_tick = [&](pid_t pid) {
    if (r.timed_out || r.over_memory) return;  // killed already
    if (std::chrono::steady_clock::now() >= deadline) {
      r.timed_out = true;
      ::kill(pid, SIGKILL);
      return;
    }
    const long peak = peak_kib_of(pid);
    r.peak_kib = std::max(r.peak_kib, peak);
    if (limits.max_kib > 0 && peak > limits.max_kib) {
      r.over_memory = true;
      ::kill(pid, SIGKILL);
    }
  };
  const kb::RunResult k = kb::run(argv, o);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.out = k.out;
  r.err = k.error ? "cannot run " + program + ": " + std::strerror(k.error) + "\n" : k.err;
  r.exit_code = k.error ? 127 : k.status.code;
  r.signal = k.status.signal;
  return r;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_file(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

}  // namespace kbtest
