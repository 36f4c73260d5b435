// `kbc extract-code` (see extract.hpp). The extractor is a Python program
// run as a child process: its stdin is the embedded script, its stdout and
// stderr go to kbc's, so its `path:line: error:` diagnostics reach the user
// unchanged.
#include "compiler/code/extract.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "base/process.hpp"
#include "base/text.hpp"
#include "compiler/code/extractor_py.hpp"

namespace kb {

namespace fs = std::filesystem;

namespace {

// Runs `argv` with `input` on its stdin, its stderr kbc's; returns its exit
// code (-1 if it could not start, errno set; 128 + signal when killed).
// Captures stdout when asked, else it is kbc's.
int run(const std::vector<std::string>& argv, const std::string& input, std::string* out = nullptr) {
  RunOptions o;
  o.in = Stream::Pipe;
  o.input = input;
  if (out) o.out = Stream::Pipe;
  const RunResult r = kb::run(argv, o);
  if (r.error) {
    errno = r.error;
    return -1;
  }
  if (out) *out = r.out;
  return r.status.shell_code();
}

std::string git(const std::string& checkout, const std::vector<std::string>& args) {
  std::vector<std::string> argv{"git", "-C", checkout};
  argv.insert(argv.end(), args.begin(), args.end());
  std::string out;
  if (run(argv, {}, &out) != 0) return {};
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
  const fs::path data = fs::path(o.sources) / "data";
  const fs::path code = fs::path(o.sources) / "code";
  const std::string folder = (code / commit.substr(0, 9)).string();
  std::vector<std::string> argv{o.python,    "-",
                                "--mbridge", o.checkout,
                                "--fields",  (data / "code-fields.tsv").string(),
                                "--layout",  (data / "code-layout.tsv").string(),
                                "--commit",  commit,
                                "--date",    date};
  argv.push_back(o.check ? "--check" : "--out");
  argv.push_back(folder);
  const int rc = run(argv, kExtractorPy);
  if (rc < 0) {
    diags.error({o.python, 0, 0}, std::string("cannot run Python 3: ") + std::strerror(errno), "install python3 (make deps does)");
    return kExitError;
  }
  if (rc != 0 || o.check) return rc == 0 ? kExitOk : rc == 1 ? kExitNoMatch : kExitError;
  // Refresh the comparison of each snapshot with the one before it.
  const auto snaps = snapshots(code);
  for (size_t i = 1; i < snaps.size(); ++i) {
    const std::string& a = snaps[i - 1].second;
    const std::string& b = snaps[i].second;
    const int c = run({o.python, "-", "--compare", (code / a).string(), (code / b).string(), "--out",
                       (code / ("changes-" + a + "-" + b + ".tsv")).string()},
                      kExtractorPy);
    if (c != 0) {
      diags.error({(code / b).string(), 0, 0}, "cannot compare snapshot " + a + " with " + b, "see the extractor's message above");
      return kExitError;
    }
  }
  return kExitOk;
}

}  // namespace kb
