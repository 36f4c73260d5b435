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

}  // namespace

int generate(const Compilation& c, const std::string& out_dir, bool check, Diagnostics& diags) {
  Diagnostics local;
  gen::OutputFiles files;
  const fs::path root(out_dir);
  std::error_code ec;
  if (fs::exists(root / "data" / "sections.tsv", ec)) {
    local.error({out_dir, 0, 0}, "output folder looks like a sources folder (it has data/sections.tsv)",
                "generate into its own folder, e.g. -o generated");
  } else {
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
        gen::write_site(ctx, files);
        gen::write_answers(ctx, files);
      }
    } catch (const std::exception& e) {
      local.error({out_dir, 0, 0}, std::string("cannot generate: ") + e.what());
    }
  }
  local.print(stderr);
  diags.append(local);
  if (local.has_errors()) return kExitError;

  // Compare with what is on disk.
  std::vector<std::string> changed, extra;
  std::set<std::string> roots;  // generated sub-folders, fully owned by generate
  for (const auto& [rel, bytes] : files) {
    if (const auto slash = rel.find('/'); slash != std::string::npos) roots.insert(rel.substr(0, slash));
    auto have = read_file((root / rel).string());
    if (!have || *have != bytes) changed.push_back(rel);
  }
  for (const auto& sub : roots) {
    if (!fs::is_directory(root / sub, ec)) continue;
    for (auto it = fs::recursive_directory_iterator(root / sub, ec); it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (ec) break;
      if (!it->is_regular_file()) continue;
      const std::string rel = fs::relative(it->path(), root, ec).generic_string();
      if (!files.count(rel)) extra.push_back(rel);
    }
  }
  std::sort(extra.begin(), extra.end());
  auto shown = [&](const std::string& rel) { return (root / rel).generic_string(); };

  if (check) {
    for (const auto& rel : changed)
      std::fprintf(stderr, "%s: stale: %s\n", shown(rel).c_str(),
                   fs::exists(root / rel, ec) ? "differs from what the sources give" : "missing");
    for (const auto& rel : extra) std::fprintf(stderr, "%s: stale: no longer generated\n", shown(rel).c_str());
    if (changed.empty() && extra.empty()) return kExitOk;
    std::fprintf(stderr, "kbc: %zu stale file(s) in %s; regenerate with `make generate`\n", changed.size() + extra.size(), out_dir.c_str());
    return kExitNoMatch;
  }

  try {
    for (const auto& rel : changed) {
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
    for (const auto& rel : extra) fs::remove(root / rel);
  } catch (const std::exception& e) {
    diags.error({out_dir, 0, 0}, std::string("cannot write the generated files: ") + e.what(), "check that the output folder is writable");
    diags.print(stderr);
    return kExitError;
  }
  std::fprintf(stderr, "kbc: generated %zu files in %s (%zu written, %zu removed)\n", files.size(), out_dir.c_str(), changed.size(),
               extra.size());
  return kExitOk;
}

}  // namespace kb
