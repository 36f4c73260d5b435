// Child processes, the one home for starting and waiting for one: kbc runs
// the code extractor and git with it, the tests run kbc, kbq and Python.
// No shell is involved (arguments need no quoting). A child that cannot
// start is an error of spawn (the exec is reported back through a
// close-on-exec pipe), not an exit code 127 found later; waiting retries
// on EINTR and gives up, with the errno, on any other failure of waitpid
// (a loop that retried every failure would spin forever on ECHILD).
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kb {

// Where one of a child's standard streams goes.
enum class Stream : unsigned char {
  Inherit,  // the parent's own
  Null,     // /dev/null
  Pipe,     // a pipe to the parent: stdin is written from RunOptions::input, stdout and stderr are collected
};

struct SpawnOptions {
  Stream in = Stream::Inherit, out = Stream::Inherit, err = Stream::Inherit;
  std::string cwd;               // the child's working folder ("" = the parent's)
  std::vector<std::string> env;  // NAME=VALUE entries added to (or replacing in) the parent's environment
  // Called in the child after fork, before exec (after the streams and the
  // folder are set): async-signal-safe calls only (setuid, setgid, ...);
  // false makes the child exit 125 without running the program.
  bool (*in_child)() = nullptr;
};

// A started child and the parent's ends of its pipes (-1 when not piped).
struct Child {
  pid_t pid = -1;  // -1: it did not start, `error` says why
  int error = 0;   // errno of the pipe, fork or exec that failed
  int in = -1, out = -1, err = -1;
};

// How a child ended.
struct ExitStatus {
  int code = -1;   // exit status; -1 when killed by a signal or when waiting failed
  int signal = 0;  // the signal that ended it, 0 if none
  int error = 0;   // errno of waitpid when waiting failed (the child's end is unknown)
  // The shell's number: the exit status, 128 + signal, -1 when unknown.
  int shell_code() const { return signal ? 128 + signal : code; }
};

// Starts argv[0] (searched on PATH when it holds no '/') with argv as its
// arguments. Returns once the program runs (its exec succeeded) or with
// pid -1 and the errno when it could not start.
Child spawn(const std::vector<std::string>& argv, const SpawnOptions& options = {});

// Waits for a child to end (EINTR retried).
ExitStatus wait_for(pid_t pid);
// The child's end when it has ended, nullopt while it runs (waitpid WNOHANG);
// a failure of waitpid is an ended child with `error` set.
std::optional<ExitStatus> try_wait(pid_t pid);

struct RunOptions : SpawnOptions {
  std::string input;  // written to the child's stdin when `in` is Stream::Pipe, then closed
  // While the child runs, on_tick(pid) is called about every tick_ms (and
  // once right after the start): to sample it or to kill it.
  int tick_ms = 0;  // 0: no ticks
  std::function<void(pid_t)> on_tick;
};

// What a run gave: how it ended and what it wrote to the piped streams.
struct RunResult {
  int error = 0;  // errno when the program could not start (status then unknown)
  ExitStatus status;
  std::string out, err;
};

// Runs a program to its end: starts it, writes `input`, collects stdout and
// stderr, all in one poll loop (a child that fills one pipe while the
// parent writes the other never deadlocks), then waits for it. A child
// that closes its streams and keeps running is waited for.
RunResult run(const std::vector<std::string>& argv, const RunOptions& options = {});

}  // namespace kb
