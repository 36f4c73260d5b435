// The hostile-input corpus (issue 12): a KB file or a source tree from
// someone else cannot crash kbq or kbc, hang them, exhaust memory, reach the
// terminal, or make them read or write outside the folders they were given.
//
// Each case is a file tests/fixtures/hostile/<name>.case, registered as its
// own test. The harness builds the case's input in a fresh temporary folder
// {tmp}, snapshots that folder, runs kbq or kbc once under a time and a
// memory ceiling that it measures itself (kbtest::run_limited: SIGKILL past
// either), and checks the exact outcome. Format, one directive a line (#
// lines are comments: what the case shows and the issue that found it):
//
//   setup, in order (paths are under {tmp} unless absolute):
//     kb: PATH                    a copy of the KB the build compiled
//     sql: PATH: STATEMENTS       run on that KB (e.g. an UPDATE)
//     overflow-cycle: PATH        page-level damage: every overflowing labels
//                                 value of the KB declares ~1 MB and points
//                                 into one overflow chain made into a cycle
//     sources: PATH               tests/fixtures/good/minimal with a copy of
//                                 kb-sources/data as PATH/data
//     write: PATH: BYTES          a file (BYTES as in tests/bad-queries:
//     append: PATH: BYTES           "piece"*N "\x1b" ...)
//     big-file: PATH: N           a file of N bytes ('x' lines)
//     mkdir: PATH / mkfifo: PATH / symlink: PATH -> TARGET / chmod: PATH OCTAL
//     device: PATH                a character device like /dev/full (root only:
//                                 the case is skipped otherwise)
//     sentinel: PATH              a file with known bytes; like everything
//                                 under {tmp} it must be unchanged after the run
//   the run:
//     run: kbq | kbc              the program (the build's own)
//     arg: ARG                    one argument each ({tmp}, {root}, {data})
//     arg-bytes: BYTES            one argument in the BYTES notation
//     env: NAME=VALUE             in its environment
//     unprivileged                when the tests run as root, run as nobody
//                                 (so that a folder of mode 000 is unreadable)
//     seconds: S                  time ceiling (default 10; ×6 under ASan)
//     mib: M                      memory ceiling, peak resident set (default
//                                 256; ×4 under ASan)
//   what must come out:
//     exit: N
//     stderr: LINE                the exact stderr, line by line ('*' matches
//                                 any run of characters); none = empty
//     stdout-has: TEXT            (any number); without one, stdout is empty
//     writes: PATH                the run may create, change or delete under
//                                 PATH (default: nothing under {tmp} changes)
//     kind: PATH KIND             after the run PATH is: absent | file | dir |
//                                 link | fifo | char-device
//     cmark: DIR                  every .md under DIR rendered with
//                                 cmark-gfm --unsafe holds no raw HTML
//
// Always checked too: no signal, no hang, no blow-up, and not one raw
// control character (ESC, C1, bidirectional controls) on stdout or stderr.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "base/escape.hpp"
#include "base/sqlite.hpp"
#include "base/text.hpp"
#include "cases.hpp"
#include "process.hpp"

namespace {

namespace fs = std::filesystem;

const std::string kRoot = KB_SOURCE_DIR;

#if defined(__SANITIZE_ADDRESS__)
constexpr int kSlowdown = 6, kMemoryFactor = 4;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr int kSlowdown = 6, kMemoryFactor = 4;
#else
constexpr int kSlowdown = 1, kMemoryFactor = 1;
#endif
#else
constexpr int kSlowdown = 1, kMemoryFactor = 1;
#endif

struct Directive {
  std::string key, value;
  int line = 0;
};

std::vector<Directive> parse_case(const std::string& text) {
  std::vector<Directive> out;
  int n = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t eol = text.find('\n', pos);
    std::string line = text.substr(pos, eol == std::string::npos ? std::string::npos : eol - pos);
    ++n;
    pos = eol == std::string::npos ? text.size() + 1 : eol + 1;
    if (line.empty() || line[0] == '#') continue;
    const auto colon = line.find(": ");
    if (colon == std::string::npos)
      out.push_back({line, "", n});
    else
      out.push_back({line.substr(0, colon), line.substr(colon + 2), n});
  }
  return out;
}

std::string substitute(std::string s, const std::string& tmp) {
  for (const auto& [from, to] :
       std::vector<std::pair<std::string, std::string>>{{"{tmp}", tmp}, {"{root}", kRoot}, {"{data}", kRoot + "/kb-sources/data"}}) {
    for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  }
  return s;
}

// "PATH: REST" → (PATH, REST); PATH may be written in the BYTES notation
// ("a\nb.md") when it holds ": " or a control character.
std::pair<std::string, std::string> path_and_rest(const std::string& v) {
  if (!v.empty() && v[0] == '"') {
    size_t i = 1;
    while (i < v.size() && v[i] != '"') i += v[i] == '\\' ? 2 : 1;
    return {kbtest::decode_bytes(v.substr(0, i + 1)), v.size() > i + 3 ? v.substr(i + 3) : std::string()};
  }
  const auto colon = v.find(": ");
  return {v.substr(0, colon), colon == std::string::npos ? std::string() : v.substr(colon + 2)};
}

std::string under(const std::string& tmp, const std::string& path) {
  const std::string p = substitute(path, tmp);
  return p.empty() || p[0] == '/' ? p : tmp + "/" + p;
}

// '*' matches any run of characters; everything else literally.
bool glob_match(const std::string& pattern, const std::string& text) {
  size_t p = 0, t = 0, star = std::string::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (p < pattern.size() && pattern[p] == text[t]) {
      ++p;
      ++t;
    } else if (star != std::string::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t eol = text.find('\n', pos);
    out.push_back(text.substr(pos, eol == std::string::npos ? std::string::npos : eol - pos));
    pos = eol == std::string::npos ? text.size() : eol + 1;
  }
  return out;
}

// --- the folder snapshot ------------------------------------------------------------

// What is at each path under the case folder, links never followed: kind,
// size, and the bytes of small files (a hash would do; they are small).
std::map<std::string, std::string> snapshot(const std::string& root) {
  std::map<std::string, std::string> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, fs::directory_options::skip_permission_denied, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) != 0) continue;
    std::string what = std::to_string(st.st_mode) + ":" + std::to_string(st.st_size);
    if (S_ISLNK(st.st_mode)) {
      what += ":" + fs::read_symlink(it->path(), ec).string();
    } else if (S_ISREG(st.st_mode)) {
      if (st.st_size <= (1 << 20))
        what += ":" + kbtest::read_file(it->path().string());
      else
        what += ":" + std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec) + ":" + std::to_string(st.st_ino);
    }
    out[it->path().string()] = what;
  }
  return out;
}

// --- page-level damage ----------------------------------------------------------------

// An SQLite varint at b[i] (value, length).
std::pair<std::uint64_t, int> varint(const std::string& b, size_t i) {
  std::uint64_t v = 0;
  for (int k = 0; k < 9; ++k) {
    const auto x = static_cast<unsigned char>(b.at(i + static_cast<size_t>(k)));
    if (k == 8) return {(v << 8) | x, 9};
    v = (v << 7) | (x & 0x7F);
    if (!(x & 0x80)) return {v, k + 1};
  }
  return {v, 9};
}

void put3(std::string& b, size_t i, std::uint64_t v) {
  REQUIRE(v < (1u << 21));
  b[i] = static_cast<char>(0x80 | ((v >> 14) & 0x7F));
  b[i + 1] = static_cast<char>(0x80 | ((v >> 7) & 0x7F));
  b[i + 2] = static_cast<char>(v & 0x7F);
}

std::uint32_t be32(const std::string& b, size_t i) {
  std::uint32_t v = 0;
  for (size_t k = 0; k < 4; ++k) v = (v << 8) | static_cast<unsigned char>(b.at(i + k));
  return v;
}
void put32(std::string& b, size_t i, std::uint32_t v) {
  for (size_t k = 0; k < 4; ++k) b[i + k] = static_cast<char>((v >> (8 * (3 - k))) & 0xFF);
}

// The shape of a small file that once cost kbq gigabytes: every English
// label made long enough to overflow, then, in the file's bytes, each such
// cell declaring ~1 MB and pointing to the same overflow chain, whose last
// page points back to its first. SQLite follows the cycle for as long as the
// declared size asks.
void overflow_cycle(const std::string& path) {
  {
    kb::Db db(path, kb::Db::Mode::ReadWriteCreate);
    db.exec("UPDATE labels SET text = printf('%.*c', 20000, 'x') WHERE lang = 'en'");
  }
  std::vector<long long> leaves;
  {
    kb::Db db(path, kb::Db::Mode::ReadOnly);
    kb::Stmt st(db, "SELECT pageno FROM dbstat WHERE name = 'labels' AND pagetype = 'leaf'");
    while (st.step()) leaves.push_back(st.integer(0));
  }
  REQUIRE_FALSE(leaves.empty());
  std::string b = kbtest::read_file(path);
  const size_t U = 4096, X = U - 35, M = ((U - 12) * 32 / 255) - 23;
  struct Cell {
    size_t off, payload;
    std::uint64_t size;
    size_t local;
  };
  std::vector<Cell> cells;
  for (long long pg : leaves) {
    const size_t base = static_cast<size_t>(pg - 1) * U, h = base + (pg == 1 ? 100 : 0);
    REQUIRE(static_cast<unsigned char>(b[h]) == 0x0D);
    const auto byte = [&](size_t i) { return static_cast<size_t>(static_cast<unsigned char>(b[i])); };
    const size_t n = byte(h + 3) << 8 | byte(h + 4);
    for (size_t i = 0; i < n; ++i) {
      const size_t off = base + (byte(h + 8 + 2 * i) << 8 | byte(h + 9 + 2 * i));
      const auto [size, sl] = varint(b, off);
      const auto [rowid, rl] = varint(b, off + static_cast<size_t>(sl));
      (void)rowid;
      if (size <= X) continue;
      REQUIRE(sl == 3);
      const size_t k = M + (size - M) % (U - 4);
      cells.push_back({off, off + static_cast<size_t>(sl + rl), size, k <= X ? k : M});
    }
  }
  REQUIRE(cells.size() >= 10);
  const std::uint32_t first = be32(b, cells[0].payload + cells[0].local);
  std::uint32_t last = first;
  for (int guard = 0; guard < 100 && be32(b, (last - 1) * U) != 0; ++guard) last = be32(b, (last - 1) * U);
  put32(b, (last - 1) * U, first);
  for (const auto& c : cells) {
    // The text column's serial type (third of labels) and the payload size
    // grow by the same whole number of overflow pages, so the local part and
    // the overflow pointer stay where they are.
    const auto [header, hl] = varint(b, c.payload);
    size_t j = c.payload + static_cast<size_t>(hl);
    std::vector<std::pair<size_t, std::uint64_t>> types;
    while (j < c.payload + header) {
      const auto [t, tl] = varint(b, j);
      types.emplace_back(j, t);
      j += static_cast<size_t>(tl);
    }
    REQUIRE(types.size() >= 3);
    const std::uint64_t len = (types[2].second - 13) / 2, k = (1000000 - len) / (U - 4);
    put3(b, types[2].first, 2 * (len + k * (U - 4)) + 13);
    put3(b, c.off, c.size + k * (U - 4));
    put32(b, c.payload + c.local, first);
  }
  kbtest::write_file(path, b);
}

// --- raw HTML in rendered pages ---------------------------------------------------------

// The tags cmark-gfm writes for Markdown itself; anything else in its
// output came from the page as raw HTML.
const std::set<std::string> kMarkdownTags = {"p",          "h1", "h2", "h3",    "h4",    "h5",     "h6",  "ul",   "ol",
                                             "li",         "em", "a",  "table", "thead", "tbody",  "tr",  "th",   "td",
                                             "blockquote", "hr", "br", "code",  "pre",   "strong", "del", "input"};

// Renders every .md under `dir` with cmark-gfm --unsafe (what a careless
// site would do) and fails on any tag Markdown itself does not make, an
// event-handler attribute, or a javascript: link.
void check_no_raw_html(const std::string& dir) {
  const std::vector<std::string> candidates = {"/usr/bin/cmark-gfm", "/usr/local/bin/cmark-gfm"};
  std::string cmark;
  for (const auto& c : candidates)
    if (::access(c.c_str(), X_OK) == 0) cmark = c;
  if (cmark.empty()) {
    WARN("cmark-gfm not installed: the rendering check is skipped (make deps installs it)");
    return;
  }
  size_t pages = 0;
  const std::regex tag(R"(<(/?)([A-Za-z][A-Za-z0-9-]*))"), handler(R"(<[^>]*\son[a-z]+\s*=)"), js(R"(href="\s*javascript:)");
  for (const auto& f : kbtest::files_in(dir, ".md")) {
    ++pages;
    const auto r = kbtest::run(cmark, {"--unsafe", "-e", "table", "-e", "strikethrough", "-e", "autolink", f.string()});
    REQUIRE(r.exit_code == 0);
    INFO(f.string());
    for (auto it = std::sregex_iterator(r.out.begin(), r.out.end(), tag); it != std::sregex_iterator(); ++it) {
      std::string name = (*it)[2];
      std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      INFO("raw HTML tag <" << name << "> in the rendered page");
      CHECK(kMarkdownTags.count(name) == 1);
    }
    CHECK_FALSE(std::regex_search(r.out, handler));
    CHECK_FALSE(std::regex_search(r.out, js));
    CHECK(r.out.find('\x1b') == std::string::npos);
  }
  CHECK(pages > 0);
}

// --- one case ---------------------------------------------------------------------------

void copy_tree(const std::string& from, const std::string& to) {
  fs::create_directories(to);
  fs::copy(from, to, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
}

void chown_tree(const std::string& root) {
  ::lchown(root.c_str(), 65534, 65534);
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec); it != fs::recursive_directory_iterator(); it.increment(ec))
    ::lchown(it->path().c_str(), 65534, 65534);
}

void run_case(const fs::path& file) {
  const auto directives = parse_case(kbtest::read_file(file.string()));
  kbtest::TempDir dir("kbtests-hostile");
  const std::string tmp = dir.str();
  std::string program;
  std::vector<std::string> args;
  kbtest::Limits limits;
  limits.seconds = 10;
  long mib = 256;
  int exit_code = -1;
  std::vector<std::string> stderr_lines, stdout_has, writes, cmark_dirs;
  std::vector<std::pair<std::string, std::string>> kinds;
  std::vector<std::string> chmods;  // applied last (after the folder is handed to nobody)

  for (const auto& d : directives) {
    INFO(file.filename().string() << ":" << d.line << ": " << d.key);
    const std::string v = substitute(d.value, tmp);
    if (d.key == "kb") {
      fs::create_directories(fs::path(under(tmp, v)).parent_path());
      fs::copy_file(std::string(KB_BINARY_DIR) + "/kb.sqlite", under(tmp, v), fs::copy_options::overwrite_existing);
    } else if (d.key == "sql") {
      const auto colon = v.find(": ");
      kb::Db db(under(tmp, v.substr(0, colon)), kb::Db::Mode::ReadWriteCreate);
      db.exec(v.substr(colon + 2));
    } else if (d.key == "overflow-cycle") {
      overflow_cycle(under(tmp, v));
    } else if (d.key == "sources") {
      copy_tree(kRoot + "/tests/fixtures/good/minimal", under(tmp, v));
      copy_tree(kRoot + "/kb-sources/data", under(tmp, v) + "/data");
    } else if (d.key == "write" || d.key == "append") {
      const auto [name, bytes] = path_and_rest(v);
      const std::string path = under(tmp, name);
      fs::create_directories(fs::path(path).parent_path());
      std::ofstream out(path, std::ios::binary | (d.key == "append" ? std::ios::app : std::ios::trunc));
      out << kbtest::decode_bytes(bytes);
    } else if (d.key == "big-file") {
      const auto colon = v.find(": ");
      std::ofstream out(under(tmp, v.substr(0, colon)), std::ios::binary | std::ios::trunc);
      const std::string line(1023, 'x');
      for (long n = std::stol(v.substr(colon + 2)); n > 0; n -= 1024) out << line << '\n';
    } else if (d.key == "mkdir") {
      fs::create_directories(under(tmp, v));
    } else if (d.key == "mkfifo") {
      REQUIRE(::mkfifo(under(tmp, v).c_str(), 0644) == 0);
    } else if (d.key == "device") {
      // A copy of /dev/full's node, so that a regression replaces this one,
      // never the system's. Only root can make one, and only root could
      // replace a device in /dev: as another user the case has nothing to show.
      if (::geteuid() != 0) return kbtest::skip("making a device node needs root (and so does replacing one)");
      REQUIRE(::mknod(under(tmp, v).c_str(), S_IFCHR | 0666, ::makedev(1, 7)) == 0);
    } else if (d.key == "symlink") {
      const auto arrow = v.find(" -> ");
      fs::create_directories(fs::path(under(tmp, v.substr(0, arrow))).parent_path());
      fs::remove(under(tmp, v.substr(0, arrow)));  // a file of the copied sources it replaces
      fs::create_symlink(v.substr(arrow + 4), under(tmp, v.substr(0, arrow)));
    } else if (d.key == "chmod") {
      chmods.push_back(v);
    } else if (d.key == "sentinel") {
      fs::create_directories(fs::path(under(tmp, v)).parent_path());
      kbtest::write_file(under(tmp, v), "sentinel: kbc and kbq must never touch this file\n");
    } else if (d.key == "run") {
      program = v == "kbq" ? KBQ_PATH : v == "kbc" ? KBC_PATH : v;
    } else if (d.key == "arg") {
      args.push_back(v);
    } else if (d.key == "arg-bytes") {
      args.push_back(kbtest::decode_bytes(v));
    } else if (d.key == "env") {
      limits.env.push_back(v);
    } else if (d.key == "unprivileged") {
      limits.unprivileged = true;
    } else if (d.key == "seconds") {
      limits.seconds = std::stod(v);
    } else if (d.key == "mib") {
      mib = std::stol(v);
    } else if (d.key == "exit") {
      exit_code = std::stoi(v);
    } else if (d.key == "stderr") {
      stderr_lines.push_back(v);
    } else if (d.key == "stdout-has") {
      stdout_has.push_back(v);
    } else if (d.key == "writes") {
      writes.push_back(under(tmp, v));
    } else if (d.key == "kind") {
      const auto space = v.rfind(' ');
      kinds.emplace_back(under(tmp, v.substr(0, space)), v.substr(space + 1));
    } else if (d.key == "cmark") {
      cmark_dirs.push_back(under(tmp, v));
    } else {
      FAIL("unknown directive '" << d.key << "' at line " << d.line);
    }
  }
  REQUIRE_FALSE(program.empty());
  REQUIRE(exit_code >= 0);
  // Every case has a sentinel beside its files.
  kbtest::write_file(tmp + "/sentinel.txt", "sentinel: kbc and kbq must never touch this file\n");
  if (limits.unprivileged && ::geteuid() == 0) chown_tree(tmp);
  for (const auto& c : chmods) {
    const auto space = c.rfind(' ');
    REQUIRE(::chmod(under(tmp, c.substr(0, space)).c_str(), static_cast<mode_t>(std::stoi(c.substr(space + 1), nullptr, 8))) == 0);
  }
  const auto before = snapshot(tmp);

  limits.seconds *= kSlowdown;
  limits.max_kib = mib * 1024 * kMemoryFactor;
  const auto r = kbtest::run_limited(program, args, limits);

  const auto after = snapshot(tmp);
  for (const auto& c : chmods) ::chmod(under(tmp, c.substr(0, c.rfind(' '))).c_str(), 0755);  // so the folder can be removed
  INFO("exit " << r.exit_code << ", signal " << r.signal << ", " << r.seconds << " s, peak " << r.peak_kib / 1024 << " MiB");
  INFO("stderr:\n" << r.err.substr(0, 3000));
  INFO("stdout (first 1000 bytes):\n" << r.out.substr(0, 1000));
  CHECK(r.signal == 0);
  CHECK_FALSE(r.timed_out);
  CHECK_FALSE(r.over_memory);
  CHECK(r.exit_code == exit_code);

  // Exactly the expected stderr lines.
  const auto err = lines_of(r.err);
  CHECK(err.size() == stderr_lines.size());
  for (size_t i = 0; i < std::min(err.size(), stderr_lines.size()); ++i) {
    INFO("stderr line " << i + 1 << " should match: " << stderr_lines[i]);
    CHECK(glob_match(stderr_lines[i], err[i]));
  }
  if (stdout_has.empty()) CHECK(r.out.empty());
  for (const auto& s : stdout_has) {
    INFO("stdout should contain: " << s);
    CHECK(r.out.find(substitute(s, tmp)) != std::string::npos);
  }
  // Nothing raw reaches the terminal.
  for (const std::string* s : {&r.out, &r.err}) {
    const auto at = kb::find_control(*s);
    INFO("a raw control character at byte " << (at ? *at : 0));
    CHECK_FALSE(at.has_value());
    CHECK(s->find('\r') == std::string::npos);
  }

  // Nothing written, changed or deleted under {tmp} but where the case allows.
  auto allowed = [&](const std::string& path) {
    return std::any_of(writes.begin(), writes.end(), [&](const std::string& w) { return path == w || path.rfind(w + "/", 0) == 0; });
  };
  for (const auto& [path, what] : before) {
    if (allowed(path)) continue;
    auto it = after.find(path);
    INFO("changed or removed: " << path);
    CHECK((it != after.end() && it->second == what));
  }
  for (const auto& [path, what] : after) {
    if (allowed(path)) continue;
    INFO("created: " << path);
    CHECK(before.count(path) == 1);
  }
  for (const auto& [path, kind] : kinds) {
    struct stat st {};
    const bool exists = ::lstat(path.c_str(), &st) == 0;
    const std::string is = !exists                ? "absent"
                           : S_ISLNK(st.st_mode)  ? "link"
                           : S_ISREG(st.st_mode)  ? "file"
                           : S_ISDIR(st.st_mode)  ? "dir"
                           : S_ISFIFO(st.st_mode) ? "fifo"
                           : S_ISCHR(st.st_mode)  ? "char-device"
                                                  : "other";
    INFO(path << " is " << is);
    CHECK(is == kind);
  }
  for (const auto& d : cmark_dirs) check_no_raw_html(d);
}

}  // namespace

KB_REGISTER_CASES(register_hostile) {
  for (const auto& f : kbtest::files_in(kRoot + "/tests/fixtures/hostile", ".case"))
    kbtest::add_case("hostile: " + f.stem().string(), "[hostile]", [f] { run_case(f); });
}

TEST_CASE("hostile: the corpus holds every required case", "[hostile]") {
  // Each case is one hostile input (docs/security.md's threats), by name:
  // deleting or renaming one fails here instead of lowering a count.
  std::set<std::string> have;
  for (const auto& f : kbtest::files_in(kRoot + "/tests/fixtures/hostile", ".case")) have.insert(f.stem().string());
  for (const char* required : {"build-output-device",
                               "build-output-fifo",
                               "build-output-new",
                               "build-output-symlink",
                               "check-seq-override-largest",
                               "check-seq-override-next-pow2",
                               "dump-fifo",
                               "dump-nul-in-value",
                               "dump-quote-in-table-name",
                               "generate-check-site-link",
                               "generate-planted-file-link",
                               "generate-planted-temp-link",
                               "generate-raw-html-and-fences",
                               "generate-site-link-sweep",
                               "generate-temp-folder",
                               "kb-100mb-value",
                               "kb-column-renamed",
                               "kb-constraint-changed",
                               "kb-device",
                               "kb-entity-json-not-object",
                               "kb-fifo",
                               "kb-gpus-per-node-zero",
                               "kb-huge-gpu-count",
                               "kb-lexicon-word-long",
                               "kb-overflow-cycle",
                               "kb-parallel-size-zero",
                               "kb-parallel-size-zero-show",
                               "kb-planner-change-order-partial",
                               "kb-planner-key-missing",
                               "kb-planner-value-not-a-number",
                               "kb-seq-len-overflow",
                               "kb-terminal-escapes-error",
                               "kb-terminal-escapes-json",
                               "kb-terminal-escapes-markdown",
                               "kb-terminal-escapes-text",
                               "kb-text-in-integer-column",
                               "kb-trigger",
                               "kb-unknown-table",
                               "kb-view-for-table",
                               "kb-wal-mode",
                               "src-bidi-control",
                               "src-control-character",
                               "src-control-character-in-data",
                               "src-data-fifo",
                               "src-data-folder-link-outside",
                               "src-data-link-to-dev-zero",
                               "src-fifo-source",
                               "src-file-name-with-newline",
                               "src-language-code-path",
                               "src-lexicon-word-long",
                               "src-oversized-source",
                               "src-source-link-inside",
                               "src-source-link-outside",
                               "src-unreadable-folder"}) {
    INFO(required);
    CHECK(have.count(required) == 1);
  }
}

TEST_CASE("hostile: the harness's time and memory ceilings hold", "[hostile]") {
  // A process past the memory ceiling is killed and reported, not waited for.
  kbtest::Limits l;
  l.seconds = 20;
  l.max_kib = 64 * 1024;
  const auto r = kbtest::run_limited("/usr/bin/python3", {"-c", "x = b'x' * (512 << 20); import time; time.sleep(30)"}, l);
  if (r.exit_code == 127 && r.err.empty()) return kbtest::skip("no /usr/bin/python3");
  CHECK(r.over_memory);
  CHECK(r.seconds < 15);
  l.max_kib = 0;
  l.seconds = 1;
  const auto t = kbtest::run_limited("/bin/sleep", {"30"}, l);
  CHECK(t.timed_out);
  CHECK(t.seconds < 5);
}

TEST_CASE("hostile: escaping keeps text, colour codes and JSON values, and nothing raw", "[hostile]") {
  CHECK(kb::escape_controls("plain\ttext\nline 2 — 日本語") == "plain\ttext\nline 2 — 日本語");
  CHECK(kb::escape_controls("a\x1b]0;x\x07z") == "a\\x1b]0;x\\x07z");
  CHECK(kb::escape_controls("a\nb", kb::EscapeNewlines::Yes) == "a\\nb");
  CHECK(kb::escape_controls("\xc2\x9b"
                            "2J \xe2\x80\xae"
                            "x \xff") == "\\u009b2J \\u202ex \\xff");
  CHECK(kb::escape_controls_keeping("\x1b[1mbold\x1b[0m \x1b[2J", {"\x1b[1m", "\x1b[0m"}) == "\x1b[1mbold\x1b[0m \\x1b[2J");
  CHECK(kb::escape_json_controls("{\"a\": \"x\xc2\x9by\x7f\"}") == "{\"a\": \"x\\u009by\\u007f\"}");
  CHECK(kb::find_control("ok\r\n\tfine") == std::nullopt);
  CHECK(kb::find_control("bad \x1b") == std::optional<size_t>(4));
}

TEST_CASE("hostile: a statement past its budget is stopped with a clear error", "[hostile]") {
  kbtest::TempDir dir("kbtests-hostile");
  const std::string path = dir / "x.sqlite";
  {
    kb::Db db(path, kb::Db::Mode::ReadWriteCreate);
    db.exec("CREATE TABLE t(x)");
  }
  kb::Db db = kb::Db::open_untrusted(path, 1000);
  kb::Stmt st(db, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c");
  try {
    st.step();
    FAIL("an endless statement ran to its end");
  } catch (const kb::SqliteError& e) {
    CHECK(std::string(e.what()).find("ran past its budget") != std::string::npos);
  }
}
