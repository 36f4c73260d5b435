// Tests of the shared layer's own helpers (base/): starting and waiting
// for child processes (process.hpp), the temporary folder (files.hpp), the
// folds and Unicode classes (text.hpp).
#include <utf8proc.h>
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
#include "base/text.hpp"

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

TEST_CASE("fold: full-width forms made narrow, then Unicode's lowercase, one code point for one", "[base][text]") {
  CHECK(kb::fold("PEFT Qwen3") == "peft qwen3");
  CHECK(kb::fold("\xEF\xBC\xB0\xEF\xBC\xA5\xEF\xBC\xA6\xEF\xBC\xB4\xE3\x80\x80\xEF\xBC\x91") == "peft 1");  // ＰＥＦＴ　１
  CHECK(kb::fold("\xC3\x89"
                 "COLE") ==
        "\xC3\xA9"
        "cole");                                                              // ÉCOLE → école
  CHECK(kb::fold("\xC4\xB9\xC4\xBA\xC5\xB8") == "\xC4\xBA\xC4\xBA\xC3\xBF");  // ĹĺŸ → ĺĺÿ
  CHECK(kb::fold("\xCE\xA3\xD0\x96") == "\xCF\x83\xD0\xB6");                  // ΣЖ → σж
  CHECK(kb::fold("\xC3\x9F") == "\xC3\x9F");                                  // ß stays one code point (no full folding to "ss")
  CHECK(kb::fold("\xE3\x82\xAD\xE3\x83\xA5") == "\xE3\x82\xAD\xE3\x83\xA5");  // kana unchanged
  // Spans rely on it: the k-th code point of the fold is the k-th of the input.
  for (const std::string s : {"\xEF\xBC\xA1\xC4\xB0\xE2\x84\xAA x", "\xEF\xBD\x9E\xEF\xBF\xA5\xE3\x80\x80", "\xC7\x85\xE1\xBA\x9E"}) {
    INFO(s);
    CHECK(kb::code_point_column(kb::fold(s), kb::fold(s).size()) == kb::code_point_column(s, s.size()));
  }
}

TEST_CASE("normalization: NFKC and NFKC_Casefold as Unicode defines them", "[base][text]") {
  CHECK(kb::nfkc("\xEF\xAC\x81") == "fi");                // ﬁ
  CHECK(kb::nfkc("\xEF\xBC\x88x\xEF\xBC\x89") == "(x)");  // （x）
  CHECK(kb::nfkc("Qwen3") == "Qwen3");                    // case kept
  CHECK(kb::nfkc_casefold("\xEF\xBC\xA8\xEF\xBC\x91\xE2\x80\x8B"
                          "00") == "h100");  // Ｈ１ ZERO WIDTH SPACE 00
  CHECK(kb::nfkc_casefold("Stra\xC3\x9F"
                          "e") == "strasse");                              // full case folding
  CHECK(kb::nfkc_casefold("\xE3\x82\xAB\xE3\x82\x99") == "\xE3\x82\xAC");  // カ + combining voicing mark → ガ
}

TEST_CASE("Unicode classes: white space, letters and digits, marks, invisible characters", "[base][text]") {
  for (char32_t cp : {U' ', U'\t', U'\n', U'\u00A0', U'\u2003', U'\u2028', U'\u3000', U'\u0085'}) CHECK(kb::is_white_space(cp));
  for (char32_t cp : {U'x', U'\u200B', U'\u00AD', U'_'}) CHECK_FALSE(kb::is_white_space(cp));
  // The ASCII shortcut (no table lookup) says what the Unicode categories say.
  for (char32_t cp = 0; cp < 0x80; ++cp) {
    INFO(static_cast<int>(cp));
    const utf8proc_category_t c = utf8proc_category(static_cast<utf8proc_int32_t>(cp));
    const bool unicode = (cp >= 0x09 && cp <= 0x0D) || c == UTF8PROC_CATEGORY_ZS || c == UTF8PROC_CATEGORY_ZL || c == UTF8PROC_CATEGORY_ZP;
    CHECK(kb::is_white_space(cp) == unicode);
  }
  for (char32_t cp : {U'a', U'Z', U'7', U'\u00E9', U'\u4E00', U'\u30AB', U'\u0661'}) CHECK(kb::is_alnum(cp));
  for (char32_t cp : {U'-', U' ', U'\u3001', U'\u00B2'}) CHECK_FALSE(kb::is_alnum(cp));
  CHECK(kb::is_mark(U'\u3099'));
  CHECK(kb::is_mark(U'\u0301'));
  CHECK_FALSE(kb::is_mark(U'a'));
  for (char32_t cp : {U'\u200B', U'\u00AD', U'\u202E', U'\u0007', U'\uFEFF'}) CHECK(kb::is_invisible(cp));
  for (char32_t cp : {U'a', U' ', U'\u3000', U'\u4E00'}) CHECK_FALSE(kb::is_invisible(cp));
}

TEST_CASE("shared prefix: the leading bytes two names share, none past the shorter", "[base][text]") {
  CHECK(kb::shared_prefix("llama31_8b", "llama31_405b") == 8);
  CHECK(kb::shared_prefix("bf16_with_fp8", "bf16_with_mxfp8") == 10);
  CHECK(kb::shared_prefix("qwen3", "qwen3_8b") == 5);
  CHECK(kb::shared_prefix("", "x") == 0);
  CHECK(kb::shared_prefix("abc", "xbc") == 0);
}
