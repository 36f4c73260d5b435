// Tests of the shared layer's own helpers (base/): starting and waiting
// for child processes (process.hpp), the temporary folder (files.hpp).
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "base/files.hpp"
#include "base/process.hpp"

namespace {

// Runs `body` in a forked copy of this test process and reports whether it
// exited 0 within `seconds` (a body that never returns is killed: a loop
// that does not end fails the test instead of hanging it).
bool ends_well_within(double seconds, bool (*body)()) {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(body() ? 0 : 1);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (auto s = kb::try_wait(pid)) return s->code == 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(pid, SIGKILL);
  kb::wait_for(pid);
  return false;
}

extern "C" void on_alarm(int) {}

}  // namespace

TEST_CASE("process: a program that cannot start is an error of spawn, with its errno", "[base][process]") {
  const kb::Child c = kb::spawn({"/nonexistent/kbtests-no-such-program"});
  CHECK(c.pid == -1);
  CHECK(c.error == ENOENT);
  const kb::RunResult r = kb::run({"kbtests-no-such-program-on-path"});
  CHECK(r.error == ENOENT);
  CHECK(r.status.shell_code() == -1);
}

TEST_CASE("process: exit codes and signals are told apart", "[base][process]") {
  CHECK(kb::run({"sh", "-c", "exit 3"}).status.code == 3);
  const kb::RunResult killed = kb::run({"sh", "-c", "kill -9 $$"});
  CHECK(killed.status.code == -1);
  CHECK(killed.status.signal == SIGKILL);
  CHECK(killed.status.shell_code() == 128 + SIGKILL);
}

TEST_CASE("process: waiting for a pid that is not a child fails with ECHILD instead of looping", "[base][process]") {
  CHECK(ends_well_within(10, [] {
    const pid_t pid = ::fork();
    if (pid == 0) ::_exit(0);
    kb::wait_for(pid);  // reaped: waiting again can only fail
    const kb::ExitStatus again = kb::wait_for(pid);
    const auto polled = kb::try_wait(pid);
    return again.error == ECHILD && again.code == -1 && polled && polled->error == ECHILD;
  }));
}

TEST_CASE("process: a signal that interrupts waitpid does not end the wait", "[base][process]") {
  CHECK(ends_well_within(20, [] {
    struct sigaction sa {};
    sa.sa_handler = on_alarm;  // no SA_RESTART: waitpid returns EINTR
    ::sigaction(SIGALRM, &sa, nullptr);
    const kb::Child c = kb::spawn({"sleep", "1"});
    if (c.pid < 0) return false;
    ::ualarm(200000, 0);
    const kb::ExitStatus s = kb::wait_for(c.pid);
    return s.error == 0 && s.code == 0;
  }));
}

TEST_CASE("process: input and output larger than a pipe flow both ways without a deadlock", "[base][process]") {
  std::string input;
  for (int i = 0; input.size() < (4u << 20); ++i) input += "line " + std::to_string(i) + "\n";
  kb::RunOptions o;
  o.in = o.out = o.err = kb::Stream::Pipe;
  o.input = input;
  // cat writes back while it reads: a runner that wrote all of stdin before
  // reading stdout would block forever on a full pipe.
  const kb::RunResult r = kb::run({"cat"}, o);
  CHECK(r.status.code == 0);
  CHECK(r.out.size() == input.size());
  CHECK(r.out == input);
  CHECK(r.err.empty());
}

TEST_CASE("process: a child that exits without reading its input does not kill the runner", "[base][process]") {
  kb::RunOptions o;
  o.in = kb::Stream::Pipe;
  o.out = kb::Stream::Pipe;
  o.input = std::string(4u << 20, 'x');
  const kb::RunResult r = kb::run({"sh", "-c", "echo early; exit 4"}, o);
  CHECK(r.status.code == 4);
  CHECK(r.out == "early\n");
}

TEST_CASE("process: streams, folder and environment are set as asked", "[base][process]") {
  kb::RunOptions o;
  o.in = kb::Stream::Null;
  o.out = kb::Stream::Pipe;
  o.err = kb::Stream::Null;
  o.cwd = "/";
  o.env = {"KBTESTS_PROCESS=yes", "HOME=/nowhere"};
  const kb::RunResult r = kb::run({"sh", "-c", "pwd; echo $KBTESTS_PROCESS $HOME; cat; echo gone >&2"}, o);
  CHECK(r.status.code == 0);
  CHECK(r.out == "/\nyes /nowhere\n");
  CHECK(r.err.empty());
}

TEST_CASE("process: ticks come while the child runs, and can stop it", "[base][process]") {
  kb::RunOptions o;
  o.out = kb::Stream::Pipe;
  int ticks = 0;
  o.tick_ms = 5;
  o.on_tick = [&](pid_t pid) {
    if (++ticks == 20) ::kill(pid, SIGTERM);
  };
  const auto t0 = std::chrono::steady_clock::now();
  const kb::RunResult r = kb::run({"sleep", "30"}, o);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10));
  CHECK(ticks >= 20);
  CHECK(r.status.signal == SIGTERM);
}

TEST_CASE("temporary folder: removed with its content, read-only folders too, never through a link", "[base][files]") {
  namespace fs = std::filesystem;
  const kb::TempDir outside("kbtests-outside");
  fs::create_directories(outside / "keep");
  ::chmod((outside / "keep").c_str(), 0500);
  std::string path;
  {
    const kb::TempDir tmp("kbtests-base");
    path = tmp.path();
    CHECK(fs::is_directory(path));
    struct stat st {};
    REQUIRE(::stat(path.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0700);
    fs::create_directories(tmp / "ro/inner");
    std::ofstream(tmp / "ro/inner/file") << "x";
    ::chmod((tmp / "ro/inner").c_str(), 0500);
    ::chmod((tmp / "ro").c_str(), 0500);
    fs::create_directory_symlink(outside / "keep", tmp / "link");
  }
  CHECK_FALSE(fs::exists(path));
  struct stat st {};
  REQUIRE(::stat((outside / "keep").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0500);  // the link's target kept its mode
  ::chmod((outside / "keep").c_str(), 0700);
}
