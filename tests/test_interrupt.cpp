// kbc interrupted by SIGTERM or SIGINT (a CI job cancelled, Ctrl-C) leaves
// no temporary file or folder behind: kbc build's FILE.tmp.XXXXXX, kbc
// generate's private kbc-generate-XXXXXX folder (under TMPDIR) and the
// temporary files of its output tree are removed by the signal handler of
// base/files.hpp, and the process still ends by the signal (exit status
// 128 + N to a shell). Each test starts kbc, waits until the temporary
// file or folder exists, sends the signal after a delay (several moments
// of the run), and looks for leftovers. SIGKILL cannot be caught; the
// "killed midway" test of tests/test_compiler.cpp covers what it leaves.
#include <catch2/catch.hpp>

#include <signal.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/process.hpp"
#include "process.hpp"

namespace {

namespace fs = std::filesystem;
const std::string kRoot = KB_SOURCE_DIR;

// The paths under `dir` (recursively) whose name contains `part`.
std::vector<std::string> named(const fs::path& dir, const std::string& part) {
  std::vector<std::string> out;
  std::error_code ec;
  if (!fs::exists(dir, ec)) return out;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
    if (it->path().filename().string().find(part) != std::string::npos) out.push_back(it->path().string());
  return out;
}

// Starts kbc, waits (up to a minute) until `ready` is true or kbc ends,
// sleeps `delay`, sends `sig`, and returns how kbc ended: the signal that
// ended it, or -1 when it finished first.
template <class Ready>
int interrupt(const std::vector<std::string>& args, const std::vector<std::string>& env, Ready ready, std::chrono::milliseconds delay,
              int sig) {
  // stdout and stderr to /dev/null: the test looks at the file system.
  kb::SpawnOptions options;
  options.out = options.err = kb::Stream::Null;
  options.env = env;
  const kb::Child child = kb::spawn(args, options);
  INFO("spawn: " << (child.error ? std::strerror(child.error) : "no error"));  // fork's or exec's errno
  REQUIRE(child.pid > 0);
  std::optional<kb::ExitStatus> ended;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!ready() && std::chrono::steady_clock::now() < deadline) {
    if ((ended = kb::try_wait(child.pid))) break;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  if (!ended) {
    std::this_thread::sleep_for(delay);
    ::kill(child.pid, sig);
    ended = kb::wait_for(child.pid);
  }
  REQUIRE(ended->error == 0);
  return ended->signal ? ended->signal : -1;
}

}  // namespace

TEST_CASE("interrupt: SIGTERM or SIGINT during kbc build leaves no FILE.tmp.XXXXXX, and the previous KB", "[interrupt]") {
  using namespace std::chrono_literals;
  kbtest::TempDir tmp("kbtests-interrupt");
  const std::string out = tmp / "out/kb.sqlite";
  fs::create_directories(tmp / "out");
  fs::create_directories(tmp / "t");
  kbtest::write_file(out, "the previous knowledge base\n");
  int interrupted = 0;
  for (const int sig : {SIGTERM, SIGINT})
    for (const auto delay : {0ms, 5ms, 50ms}) {
      INFO("signal " << sig << " " << delay.count() << " ms after the temporary file appears");
      // TMPDIR: a build without --mbridge makes no temporary folder there
      // (one left by every interrupted build filled /tmp).
      const int ended = interrupt(
          {KBC_PATH, "build", "--sources", kRoot + "/kb-sources", "-o", out}, {"TMPDIR=" + tmp / "t"},
          [&] { return !named(tmp / "out", ".tmp.").empty(); }, delay, sig);
      if (ended == sig) ++interrupted;
      CHECK(named(tmp / "out", ".tmp.").empty());
      CHECK(fs::is_empty(tmp / "t"));
      if (ended == sig) CHECK(kbtest::read_file(out) == "the previous knowledge base\n");
    }
  CHECK(interrupted >= 2);  // a build finishing before a late signal is no failure, but most must be interrupted
}

TEST_CASE("interrupt: SIGTERM or SIGINT during kbc generate leaves no kbc-generate folder and no temporary file", "[interrupt]") {
  using namespace std::chrono_literals;
  // Both signals reach the same handler. A sanitizer build (a generate
  // there takes some 15 s) sends SIGTERM at each moment and SIGINT once, at
  // the writes of the output tree; other builds send both every time.
  const std::vector<int> at_moments = kbtest::kSanitized ? std::vector<int>{SIGTERM} : std::vector<int>{SIGTERM, SIGINT};
  const std::vector<int> at_writes = kbtest::kSanitized ? std::vector<int>{SIGINT} : std::vector<int>{SIGTERM, SIGINT};
  int interrupted = 0;
  for (const int sig : at_moments)
    for (const auto delay : {0ms, 100ms, 1000ms}) {
      kbtest::TempDir tmp("kbtests-interrupt");
      fs::create_directories(tmp / "t");
      INFO("signal " << sig << " " << delay.count() << " ms after kbc-generate-XXXXXX appears");
      const int ended = interrupt(
          {KBC_PATH, "generate", "--sources", kRoot + "/kb-sources", "-o", tmp / "gen"}, {"TMPDIR=" + tmp / "t"},
          [&] { return !named(tmp / "t", "kbc-generate-").empty(); }, delay, sig);
      if (ended == sig) ++interrupted;
      CHECK(fs::is_empty(tmp / "t"));
      CHECK(named(tmp / "gen", ".tmp.").empty());
    }
  // The writes of the output tree: the signal as soon as the folder appears.
  for (const int sig : at_writes) {
    kbtest::TempDir tmp("kbtests-interrupt");
    fs::create_directories(tmp / "t");
    const int ended = interrupt(
        {KBC_PATH, "generate", "--sources", kRoot + "/kb-sources", "-o", tmp / "gen"}, {"TMPDIR=" + tmp / "t"},
        [&] { return fs::exists(tmp / "gen"); }, 0ms, sig);
    if (ended == sig) ++interrupted;
    CHECK(fs::is_empty(tmp / "t"));
    CHECK(named(tmp / "gen", ".tmp.").empty());
  }
  CHECK(interrupted >= static_cast<int>(at_moments.size() + at_writes.size()));  // half the runs, or more
}
