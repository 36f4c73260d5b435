// Child processes (see process.hpp): fork and exec with a close-on-exec
// pipe that carries exec's errno back, one poll loop for the streams, and
// waitpid retried on EINTR only.
#include "base/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

extern char** environ;

namespace kb {

namespace {

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// The parent's environment with `extra` NAME=VALUE entries added or
// replacing the entries of the same name.
std::vector<std::string> environment_with(const std::vector<std::string>& extra) {
  std::vector<std::string> out;
  const auto name_of = [](const std::string& kv) { return kv.substr(0, kv.find('=')); };
  for (char** e = environ; e && *e; ++e) {
    const std::string kv = *e;
    bool replaced = false;
    for (const auto& x : extra) replaced = replaced || name_of(x) == name_of(kv);
    if (!replaced) out.push_back(kv);
  }
  out.insert(out.end(), extra.begin(), extra.end());
  return out;
}

// In the child: makes `fd` the standard stream `target`, without the
// close-on-exec flag the pipes are made with.
bool put_stream(int fd, int target) {
  if (fd == target) return ::fcntl(fd, F_SETFD, 0) == 0;
  return ::dup2(fd, target) == target;
}

}  // namespace

Child spawn(const std::vector<std::string>& argv, const SpawnOptions& o) {
  Child c;
  if (argv.empty()) {
    c.error = EINVAL;
    return c;
  }
  int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1}, ready[2] = {-1, -1};
  const auto fail = [&](int e) {
    for (int* p : {in, out, err, ready}) {
      close_fd(p[0]);
      close_fd(p[1]);
    }
    c.error = e;
    return c;
  };
  if ((o.in == Stream::Pipe && ::pipe2(in, O_CLOEXEC) != 0) || (o.out == Stream::Pipe && ::pipe2(out, O_CLOEXEC) != 0) ||
      (o.err == Stream::Pipe && ::pipe2(err, O_CLOEXEC) != 0) || ::pipe2(ready, O_CLOEXEC) != 0)
    return fail(errno);
  // Everything the child uses is made before fork: it allocates nothing.
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const std::vector<std::string> env = o.env.empty() ? std::vector<std::string>{} : environment_with(o.env);
  std::vector<char*> envp;
  for (const auto& kv : env) envp.push_back(const_cast<char*>(kv.c_str()));
  envp.push_back(nullptr);
  const bool any_null = o.in == Stream::Null || o.out == Stream::Null || o.err == Stream::Null;

  const pid_t pid = ::fork();
  if (pid < 0) return fail(errno);
  if (pid == 0) {
    const auto die = [&](int e) {
      ssize_t ignored = ::write(ready[1], &e, sizeof e);
      (void)ignored;
      ::_exit(127);
    };
    const int null = any_null ? ::open("/dev/null", O_RDWR | O_CLOEXEC) : -1;
    if (any_null && null < 0) die(errno);
    const auto stream = [&](Stream s, int pipe_end, int target) {
      if (s == Stream::Inherit) return;
      if (!put_stream(s == Stream::Null ? null : pipe_end, target)) die(errno);
    };
    stream(o.in, in[0], 0);
    stream(o.out, out[1], 1);
    stream(o.err, err[1], 2);
    if (!o.cwd.empty() && ::chdir(o.cwd.c_str()) != 0) die(errno);
    if (o.in_child && !o.in_child()) die(errno ? errno : EPERM);
    if (o.env.empty())
      ::execvp(args[0], args.data());
    else
      ::execvpe(args[0], args.data(), envp.data());
    die(errno);
  }
  close_fd(ready[1]);
  close_fd(in[0]);
  close_fd(out[1]);
  close_fd(err[1]);
  // The pipe closes at exec (nothing to read) or carries exec's errno.
  int e = 0;
  ssize_t n = 0;
  while ((n = ::read(ready[0], &e, sizeof e)) < 0 && errno == EINTR) {
  }
  close_fd(ready[0]);
  if (n == static_cast<ssize_t>(sizeof e)) {
    wait_for(pid);
    return fail(e);
  }
  c.pid = pid;
  c.in = in[1];
  c.out = out[0];
  c.err = err[0];
  return c;
}

namespace {
ExitStatus status_of(int status) {
  ExitStatus s;
  if (WIFEXITED(status)) s.code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) s.signal = WTERMSIG(status);
  return s;
}
}  // namespace

ExitStatus wait_for(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno == EINTR) continue;
    ExitStatus failed;
    failed.error = errno;
    return failed;
  }
  return status_of(status);
}

std::optional<ExitStatus> try_wait(pid_t pid) {
  int status = 0;
  for (;;) {
    const pid_t got = ::waitpid(pid, &status, WNOHANG);
    if (got == pid) return status_of(status);
    if (got == 0) return std::nullopt;
    if (errno == EINTR) continue;
    ExitStatus failed;
    failed.error = errno;
    return failed;
  }
}

RunResult run(const std::vector<std::string>& argv, const RunOptions& o) {
  RunResult r;
  Child c = spawn(argv, o);
  if (c.pid < 0) {
    r.error = c.error;
    return r;
  }
  // A child that exits before reading its input must not end the parent
  // with SIGPIPE: the signal is blocked while writing, and one our writes
  // raised is taken back before unblocking.
  sigset_t pipe_signal, old_mask;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &pipe_signal, &old_mask);
  bool broke_pipe = false;

  if (c.in >= 0) {
    ::fcntl(c.in, F_SETFL, ::fcntl(c.in, F_GETFL) | O_NONBLOCK);
    if (o.input.empty()) close_fd(c.in);
  }
  size_t written = 0;
  const bool ticking = o.tick_ms > 0 && o.on_tick;
  using Clock = std::chrono::steady_clock;
  auto next_tick = Clock::now();
  const auto tick = [&] {
    if (!ticking || Clock::now() < next_tick) return;
    o.on_tick(c.pid);
    next_tick = Clock::now() + std::chrono::milliseconds(o.tick_ms);
  };
  char buf[65536];
  for (;;) {
    pollfd fds[3];
    int* owner[3];
    nfds_t n = 0;
    const auto watch = [&](int& fd, short events) {
      if (fd < 0) return;
      fds[n] = {fd, events, 0};
      owner[n++] = &fd;
    };
    watch(c.in, POLLOUT);
    watch(c.out, POLLIN);
    watch(c.err, POLLIN);
    if (n == 0) break;
    tick();
    int timeout = -1;
    if (ticking)
      timeout =
          static_cast<int>(std::max<long long>(0, std::chrono::duration_cast<std::chrono::milliseconds>(next_tick - Clock::now()).count()));
    if (::poll(fds, n, timeout) < 0) {
      if (errno == EINTR) continue;
      break;  // cannot wait for the streams: stop reading them
    }
    for (nfds_t i = 0; i < n; ++i) {
      if (!fds[i].revents) continue;
      int& fd = *owner[i];
      if (&fd == &c.in) {
        const ssize_t w = ::write(fd, o.input.data() + written, o.input.size() - written);
        if (w > 0) written += static_cast<size_t>(w);
        if (w < 0 && errno == EPIPE) broke_pipe = true;
        if ((w < 0 && errno != EAGAIN && errno != EINTR) || written == o.input.size()) close_fd(fd);
        continue;
      }
      const ssize_t got = ::read(fd, buf, sizeof buf);
      if (got > 0)
        (&fd == &c.out ? r.out : r.err).append(buf, static_cast<size_t>(got));
      else if (got == 0 || (errno != EINTR && errno != EAGAIN))
        close_fd(fd);
    }
  }
  close_fd(c.in);
  close_fd(c.out);
  close_fd(c.err);
  if (ticking) {
    // The streams are closed; the child may still run: keep ticking.
    for (;;) {
      if (auto s = try_wait(c.pid)) {
        r.status = *s;
        break;
      }
      tick();
      std::this_thread::sleep_for(std::chrono::milliseconds(std::min(o.tick_ms, 2)));
    }
  } else {
    r.status = wait_for(c.pid);
  }
  if (broke_pipe) {
    const timespec now{0, 0};
    while (::sigtimedwait(&pipe_signal, nullptr, &now) < 0 && errno == EINTR) {
    }
  }
  ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  return r;
}

}  // namespace kb
