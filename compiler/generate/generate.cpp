// Generate stage, entry point (see generate.hpp): builds every generated
// file in memory from the compilation, then writes the ones that changed
// (removing files of the generated folders that are no longer generated),
// or with --check compares and names the stale ones. Nothing it writes
// depends on the time, the machine or the output folder.
#include "compiler/generate/generate.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "base/text.hpp"
#include "compiler/generate/generate_int.hpp"
#include "query/kbq.hpp"

namespace kb {

namespace fs = std::filesystem;

namespace {

// A new private folder (mkdtemp: a unique name, mode 0700) under the system's
// temporary folder, removed with everything in it when it goes out of scope.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "kbc-generate-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("cannot create a temporary folder: " + std::string(std::strerror(errno)));
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Every generated file, built in memory; errors go to `local` (a sources
// folder given as the output, a generator that fails).
void build_files(const Compilation& c, const std::string& out_dir, gen::OutputFiles& files, Diagnostics& local) {
  const fs::path root(out_dir);
  std::error_code ec;
  if (fs::exists(root / "data" / "sections.tsv", ec)) {
    local.error({out_dir, 0, 0}, "output folder looks like a sources folder (it has data/sections.tsv)",
                "generate into its own folder, e.g. -o generated");
    return;
  }
  try {
    // One KB for every generator: written once into a private folder,
    // read by the query engine (commands, answers) and dumped (kb.json).
    const TempDir tmp;
    const std::string kb_path = tmp.path() + "/kb.sqlite";
    write_kb(c, kb_path);
    kbq::Engine engine = kbq::Engine::open(kb_path);
    gen::Context ctx(c, local, engine, kb_path);
    if (!local.has_errors()) {
      gen::write_index(ctx, files);
      gen::write_skill(ctx, files);
      gen::write_status(ctx, files);
      gen::write_drift(ctx, files);
      gen::write_site(ctx, files);
      gen::write_answers(ctx, files);
    }
  } catch (const std::exception& e) {
    local.error({out_dir, 0, 0}, std::string("cannot generate: ") + e.what());
  }
}

// How the output folder differs from the generated files.
struct Stale {
  std::vector<std::string> changed;  // generated files that are missing or differ on disk
  std::vector<std::string> extra;    // files of the generated sub-folders no longer generated, sorted
};

Stale compare_with_disk(const fs::path& root, const gen::OutputFiles& files) {
  Stale s;
  std::error_code ec;
  std::set<std::string> roots;  // generated sub-folders, fully owned by generate
  for (const auto& [rel, bytes] : files) {
    if (const auto slash = rel.find('/'); slash != std::string::npos) roots.insert(rel.substr(0, slash));
    auto have = read_file((root / rel).string());
    if (!have || *have != bytes) s.changed.push_back(rel);
  }
  for (const auto& sub : roots) {
    if (!fs::is_directory(root / sub, ec)) continue;
    for (auto it = fs::recursive_directory_iterator(root / sub, ec); it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (ec) break;
      if (!it->is_regular_file()) continue;
      const std::string rel = fs::relative(it->path(), root, ec).generic_string();
      if (!files.count(rel)) s.extra.push_back(rel);
    }
  }
  std::sort(s.extra.begin(), s.extra.end());
  return s;
}

// --check: names every stale file; kExitOk when there is none.
int report_stale(const fs::path& root, const std::string& out_dir, const Stale& s) {
  std::error_code ec;
  auto shown = [&](const std::string& rel) { return (root / rel).generic_string(); };
  for (const auto& rel : s.changed)
    std::fprintf(stderr, "%s: stale: %s\n", shown(rel).c_str(),
                 fs::exists(root / rel, ec) ? "differs from what the sources give" : "missing");
  for (const auto& rel : s.extra) std::fprintf(stderr, "%s: stale: no longer generated\n", shown(rel).c_str());
  if (s.changed.empty() && s.extra.empty()) return kExitOk;
  std::fprintf(stderr, "kbc: %zu stale file(s) in %s; regenerate with `make generate`\n", s.changed.size() + s.extra.size(),
               out_dir.c_str());
  return kExitNoMatch;
}

// Writes the changed files (each through a temporary file renamed over it,
// so a reader never sees half a file) and removes the extra ones. Throws on
// a file system error.
void write_changes(const fs::path& root, const gen::OutputFiles& files, const Stale& s) {
  for (const auto& rel : s.changed) {
    const fs::path p = root / rel;
    fs::create_directories(p.parent_path());
    const fs::path tmp = p.string() + ".tmp";
    {
      std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
      f << files.at(rel);
      if (!f) throw std::runtime_error("cannot write " + tmp.string());
    }
    fs::rename(tmp, p);
  }
  for (const auto& rel : s.extra) fs::remove(root / rel);
}

}  // namespace

int generate(const Compilation& c, const std::string& out_dir, bool check, Diagnostics& diags) {
  Diagnostics local;
  gen::OutputFiles files;
  build_files(c, out_dir, files, local);
  local.print(stderr);
  diags.append(local);
  if (local.has_errors()) return kExitError;

  const fs::path root(out_dir);
  const Stale stale = compare_with_disk(root, files);
  if (check) return report_stale(root, out_dir, stale);
  try {
    write_changes(root, files, stale);
  } catch (const std::exception& e) {
    diags.error({out_dir, 0, 0}, std::string("cannot write the generated files: ") + e.what(), "check that the output folder is writable");
    diags.print(stderr);
    return kExitError;
  }
  std::fprintf(stderr, "kbc: generated %zu files in %s (%zu written, %zu removed)\n", files.size(), out_dir.c_str(), stale.changed.size(),
               stale.extra.size());
  return kExitOk;
}

}  // namespace kb
