// Test helper implementation: fork/exec with pipes (see process.hpp).
#include "process.hpp"

#include <algorithm>
#include <cerrno>

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace kbtest {

TempDir::TempDir(const std::string& prefix) {
  std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
  if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

TempDir::~TempDir() {
  namespace fs = std::filesystem;
  std::error_code ec;
  // Undo read-only folders a test made, so everything can be removed.
  for (auto it = fs::recursive_directory_iterator(path_, ec); it != fs::recursive_directory_iterator(); it.increment(ec))
    if (it->is_directory(ec)) ::chmod(it->path().c_str(), 0755);
  ::chmod(path_.c_str(), 0755);
  fs::remove_all(path_, ec);
}

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
  int out[2], err[2], in[2];
  if (pipe(out) || pipe(err) || pipe(in)) throw std::runtime_error("pipe failed");
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    close(in[1]);
    close(out[0]);
    close(err[0]);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(program.c_str()));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(program.c_str(), argv.data());
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  close(err[1]);
  if (!stdin_text.empty()) {
    ssize_t ignored = write(in[1], stdin_text.data(), stdin_text.size());
    (void)ignored;
  }
  close(in[1]);
  RunResult r;
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  int open_fds = 2;
  char buf[65536];
  while (open_fds > 0) {
    if (poll(fds, 2, -1) < 0) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
      const ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      } else {
        (i == 0 ? r.out : r.err).append(buf, static_cast<size_t>(n));
      }
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
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
}  // namespace

Outcome run_limited(const std::string& program, const std::vector<std::string>& args, double limit_seconds) {
  Limits l;
  l.seconds = limit_seconds;
  return run_limited(program, args, l);
}

Outcome run_limited(const std::string& program, const std::vector<std::string>& args, const Limits& limits) {
  int out[2], err[2], exec_done[2];
  if (::pipe(out) || ::pipe(err) || ::pipe2(exec_done, O_CLOEXEC)) throw std::runtime_error("pipe failed");
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    ::close(exec_done[0]);
    const int null = ::open(limits.stdin_path.empty() ? "/dev/null" : limits.stdin_path.c_str(), O_RDONLY);
    if (null < 0) ::_exit(124);
    ::dup2(null, 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    ::close(out[0]);
    ::close(err[0]);
    if (!limits.cwd.empty() && ::chdir(limits.cwd.c_str()) != 0) ::_exit(126);
    for (const auto& kv : limits.env) ::putenv(const_cast<char*>(kv.c_str()));
    if (limits.unprivileged && ::geteuid() == 0) {
      // nobody:nogroup, so that permissions (a folder with mode 000) apply.
      if (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(125);
    }
    std::vector<char*> argv{const_cast<char*>(program.c_str())};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(program.c_str(), argv.data());
    ::_exit(127);
  }
  ::close(out[1]);
  ::close(err[1]);
  // Until exec, the child is a copy of this runner, with its peak: wait for
  // the close-on-exec pipe to close before sampling the child's memory.
  ::close(exec_done[1]);
  {
    char ignored = 0;
    while (::read(exec_done[0], &ignored, 1) < 0 && errno == EINTR) {
    }
    ::close(exec_done[0]);
  }
  Outcome r;
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  int open_fds = 2;
  char buf[65536];
  const auto deadline = start + std::chrono::milliseconds(static_cast<long>(limits.seconds * 1000));
  bool exited = false;
  int status = 0;
  while (!exited) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      r.timed_out = true;
      ::kill(pid, SIGKILL);
      break;
    }
    // Sample the memory every 5 ms while the child runs.
    const long peak = peak_kib_of(pid);
    r.peak_kib = std::max(r.peak_kib, peak);
    if (limits.max_kib > 0 && peak > limits.max_kib) {
      r.over_memory = true;
      ::kill(pid, SIGKILL);
      break;
    }
    if (open_fds > 0) {
      if (::poll(fds, 2, static_cast<int>(std::min<long long>(left, 5))) < 0 && errno != EINTR) break;
      for (int i = 0; i < 2; ++i) {
        if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
        if (n <= 0) {
          ::close(fds[i].fd);
          fds[i].fd = -1;
          --open_fds;
        } else {
          (i == 0 ? r.out : r.err).append(buf, static_cast<size_t>(n));
        }
      }
    } else {
      ::usleep(2000);
    }
    // Reap without blocking once the output is closed (a child may close its
    // output and keep running).
    if (open_fds == 0 && ::waitpid(pid, &status, WNOHANG) == pid) exited = true;
  }
  for (auto& f : fds)
    if (f.fd >= 0) {
      // Whatever is left in the pipes.
      for (ssize_t n; (n = ::read(f.fd, buf, sizeof buf)) > 0;) (&f == &fds[0] ? r.out : r.err).append(buf, static_cast<size_t>(n));
      ::close(f.fd);
    }
  if (!exited)
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
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
