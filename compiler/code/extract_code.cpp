// `kbc extract-code` (see extract.hpp). The extractor is a Python program
// (compiler/code/extract_mbridge.py and its package mbridge_extractor/) run
// by its path as a child process, so a traceback names its real files; its
// stdout and stderr go to kbc's, so its `path:line: error:` diagnostics reach
// the user unchanged. The end of its stderr is kept too: a crash (a Python
// traceback, a signal) is reported as the extractor's failure, never taken
// for a finding of --check (Python exits 1 on an uncaught exception).
#include "compiler/code/extract_code.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

#include "base/escape.hpp"
#include "base/process.hpp"
#include "base/text.hpp"

#ifndef KB_EXTRACTOR_SOURCE
#error "KB_EXTRACTOR_SOURCE must name compiler/code/extract_mbridge.py of the source tree"
#endif

namespace kb {

namespace fs = std::filesystem;

namespace {

// How a child process ended, and the end of what it wrote on stderr.
struct Ran {
  int code = -1;           // exit status; 128 + N when killed by signal N; -1 when it could not start
  int signal = 0;          // the signal that killed it, or 0
  std::string err_tail;    // the last kErrTail bytes of its stderr (which is also passed on to kbc's)
  bool traceback = false;  // did its stderr hold a Python traceback?
  static constexpr size_t kErrTail = 64 * 1024;
};

// Runs `argv` with stdin from /dev/null (base/process). Its stderr is
// collected and passed on to kbc's (the extractor's `path:line: error:`
// lines reach the user unchanged), and its end kept, so a crash can be told
// from a finding; stdout is captured when `out` is given, else kbc's.
Ran run_extractor(const std::vector<std::string>& argv, std::string* out = nullptr) {
  RunOptions o;
  o.in = Stream::Null;
  o.err = Stream::Pipe;
  if (out) o.out = Stream::Pipe;
  const RunResult r = kb::run(argv, o);
  Ran ran;
  if (r.error) {
    errno = r.error;
    return ran;
  }
  std::fwrite(r.err.data(), 1, r.err.size(), stderr);
  std::fflush(stderr);
  ran.signal = r.status.signal;
  ran.code = r.status.shell_code();
  ran.traceback = r.err.find("Traceback (most recent call last):") != std::string::npos;
  ran.err_tail = r.err.size() > Ran::kErrTail ? r.err.substr(r.err.size() - Ran::kErrTail) : r.err;
  if (out) *out = r.out;
  return ran;
}

// A run that crashed rather than reported: killed by a signal, or ended by
// an exception Python did not catch (it prints a traceback and exits 1,
// the code of "the facts differ"). The last line of the traceback is the
// exception ("RecursionError: maximum recursion depth exceeded ...").
std::optional<std::string> crash_of(const Ran& ran) {
  if (ran.signal) return std::string("killed by signal ") + std::to_string(ran.signal) + " (" + ::strsignal(ran.signal) + ")";
  if (ran.code == 0 || !ran.traceback) return std::nullopt;
  std::string last;
  for (const auto& line : split(ran.err_tail, '\n'))
    if (!trim(line).empty() && line[0] != ' ') last = trim(line);
  return last.empty() ? std::string("an uncaught exception") : last;
}

// The diagnostic of a crashed extractor run.
void report_crash(const std::string& checkout, const std::string& python, const Ran& ran, const std::string& what, Diagnostics& diags) {
  diags.error({checkout, 0, 0}, "the code extractor failed: " + first_code_points(what, 400),
              ran.signal ? "the system ended " + python + " (out of memory?) or Python itself crashed; its output is above"
                         : "a bug of kbc's extractor (compiler/code/) or an input it cannot handle; its traceback is above. Report it with "
                           "the traceback (" +
                               python + " ran it)");
}

std::string git(const std::string& checkout, const std::vector<std::string>& args) {
  std::vector<std::string> argv{"git", "-C", checkout};
  argv.insert(argv.end(), args.begin(), args.end());
  std::string out;
  if (run_extractor(argv, &out).code != 0) return {};
  return trim(out);
}

// The snapshot folders under <sources>/code, oldest first (by snapshot.tsv date).
std::vector<std::pair<std::string, std::string>> snapshots(const fs::path& code) {
  std::vector<std::pair<std::string, std::string>> out;  // (date, folder name)
  std::error_code ec;
  for (auto it = fs::directory_iterator(code, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const auto bytes = read_file((it->path() / "snapshot.tsv").string());
    if (!bytes) continue;
    std::string date;
    for (const auto& line : split(*bytes, '\n'))
      if (starts_with(line, "date\t")) date = line.substr(5);
    out.emplace_back(date, it->path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The extractor's entry script: --extractor when given; else the installed
// copy beside kbc (<prefix>/bin/kbc -> <prefix>/share/kbq/extractor/); else
// the source tree kbc was built from. "" when none exists.
std::string find_extractor(const std::string& given, std::vector<std::string>& tried) {
  std::error_code ec;
  if (!given.empty()) {
    tried.push_back(given);
    return fs::is_regular_file(given, ec) ? given : std::string{};
  }
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path installed = exe.parent_path().parent_path() / "share" / "kbq" / "extractor" / "extract_mbridge.py";
    tried.push_back(installed.string());
    if (fs::is_regular_file(installed, ec)) return installed.string();
  }
  tried.push_back(KB_EXTRACTOR_SOURCE);
  return fs::is_regular_file(KB_EXTRACTOR_SOURCE, ec) ? std::string(KB_EXTRACTOR_SOURCE) : std::string{};
}

}  // namespace

int extract_code(const ExtractOptions& o, Diagnostics& diags) {
  std::error_code ec;
  if (!fs::is_directory(fs::path(o.checkout) / "src" / "megatron" / "bridge", ec)) {
    diags.error({o.checkout, 0, 0}, "not a Megatron Bridge checkout (no src/megatron/bridge)",
                "pass --mbridge PATH, the folder holding src/ and scripts/");
    return kExitError;
  }
  std::string commit = o.commit, date = o.date;
  if (commit.empty()) commit = git(o.checkout, {"rev-parse", "HEAD"});
  if (date.empty()) date = git(o.checkout, {"log", "-1", "--format=%cs"});
  if (commit.size() < 9 || date.size() != 10) {
    diags.error({o.checkout, 0, 0}, "cannot tell the checkout's commit and date (not a git checkout?)",
                "pass --commit SHA --date YYYY-MM-DD");
    return kExitError;
  }
  std::vector<std::string> tried;
  const std::string script = find_extractor(o.extractor, tried);
  if (script.empty()) {
    std::string where;
    for (const auto& t : tried) where += (where.empty() ? "" : ", ") + t;
    diags.error({tried.back(), 0, 0}, "cannot find the extractor extract_mbridge.py (looked at " + where + ")",
                "reinstall kbq, or pass --extractor PATH/compiler/code/extract_mbridge.py of a kbq source tree");
    return kExitError;
  }
  const fs::path data = fs::path(o.sources) / "data";
  const fs::path code = fs::path(o.sources) / "code";
  const std::string folder = (code / commit.substr(0, 9)).string();
  // -B: no __pycache__ written beside the scripts; -E -s: no PYTHON* variables
  // or user site-packages change what runs.
  std::vector<std::string> argv{o.python,
                                "-B",
                                "-E",
                                "-s",
                                script,
                                "--mbridge",
                                o.checkout,
                                "--fields",
                                (data / "code-fields.tsv").string(),
                                "--layout",
                                (data / "code-layout.tsv").string(),
                                "--commit",
                                commit,
                                "--date",
                                date};
  argv.push_back(o.check ? "--check" : "--out");
  argv.push_back(folder);
  const Ran ran = run_extractor(argv);
  const int rc = ran.code;
  if (rc < 0) {
    diags.error({o.python, 0, 0}, std::string("cannot run Python 3: ") + std::strerror(errno), "install python3 (make deps does)");
    return kExitError;
  }
  if (const auto crash = crash_of(ran)) {
    report_crash(o.checkout, o.python, ran, *crash, diags);
    return kExitError;
  }
  // 1 is a finding of --check (the facts differ); without --check the
  // extractor has no such finding, and any failure is an error.
  if (rc != 0 || o.check) return rc == 0 ? kExitOk : rc == 1 && o.check ? kExitNoMatch : kExitError;
  // Refresh the comparison of each snapshot with the one before it.
  const auto snaps = snapshots(code);
  for (size_t i = 1; i < snaps.size(); ++i) {
    const std::string& a = snaps[i - 1].second;
    const std::string& b = snaps[i].second;
    const Ran c = run_extractor({o.python, "-B", "-E", "-s", script, "--compare", (code / a).string(), (code / b).string(), "--out",
                                 (code / ("changes-" + a + "-" + b + ".tsv")).string()},
                                nullptr);
    if (const auto crash = crash_of(c)) {
      report_crash(o.checkout, o.python, c, *crash, diags);
      return kExitError;
    }
    if (c.code != 0) {
      diags.error({(code / b).string(), 0, 0}, "cannot compare snapshot " + a + " with " + b, "see the extractor's message above");
      return kExitError;
    }
  }
  return kExitOk;
}

}  // namespace kb
