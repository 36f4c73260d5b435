// Generate stage, entry point (see generate.hpp): builds every generated
// file in memory from the compilation, then writes the ones that changed
// (removing files of the generated folders that are no longer generated),
// or with --check compares and names the stale ones. Nothing it writes
// depends on the time, the machine or the output folder. Writes stay
// inside the output folder: paths are checked lexically, and the folder is
// reached through base/files.hpp's OutputTree, which never follows, replaces
// or deletes a link (docs/security.md).
#include "compiler/generate/generate.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "base/escape.hpp"
#include "base/files.hpp"
#include "base/text.hpp"
#include "compiler/generate/generate_int.hpp"
#include "query/kbq.hpp"

namespace kb {

namespace fs = std::filesystem;

namespace {

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
    const gen::TempDir tmp("kbc-generate");
    const std::string kb_path = tmp.path() + "/kb.sqlite";
    write_kb(c, kb_path);
    kbq::Engine engine = kbq::Engine::open(kb_path);
    gen::Context ctx(c, local, engine, kb_path);
    if (!local.has_errors()) {
      gen::write_index(ctx, files);
      gen::write_skill(ctx, files);
      gen::write_status(ctx, files);
      gen::write_drift(ctx, files);
      gen::write_changes(ctx, files);
      gen::write_site(ctx, files);
      gen::write_answers(ctx, files);
      gen::write_finder(ctx, files);
    }
    // Nothing raw reaches a page: kbc refuses control characters in the
    // sources and the data, and every generated file is escaped once more
    // here, whatever a generator put in it (Markdown as readable escapes,
    // JSON as \u escapes, which leave its values unchanged).
    for (auto& [rel, bytes] : files) bytes = ends_with(rel, ".json") ? escape_json_controls(bytes) : escape_controls(bytes);
  } catch (const std::exception& e) {
    local.error({out_dir, 0, 0}, std::string("cannot generate: ") + e.what());
  }
}

// How the output folder differs from the generated files.
struct Stale {
  std::vector<std::string> changed;  // generated files that are missing or differ on disk
  std::vector<std::string> extra;    // files of the generated sub-folders no longer generated, sorted
};

// Every generated path must stay inside the output folder, decided on the
// path's own components (no '..', no absolute path, no control character),
// before the file system is asked anything: a language code or a slug from
// the sources could otherwise name ../anything.
void check_paths(const gen::OutputFiles& files, const std::string& out_dir, Diagnostics& local) {
  for (const auto& [rel, bytes] : files)
    if (!safe_relative_path(rel))
      local.error({out_dir, 0, 0}, "a generated path would leave the output folder: '" + rel + "'",
                  "a language code (data/sections.tsv) or another value of the sources makes it; fix that value");
}

// The output folder is read through OutputTree: links are never followed,
// and one at a generated path is an error (it throws).
Stale compare_with_disk(const OutputTree& tree, const gen::OutputFiles& files) {
  Stale s;
  std::set<std::string> roots;  // generated sub-folders, fully owned by generate
  for (const auto& [rel, bytes] : files) {
    if (const auto slash = rel.find('/'); slash != std::string::npos) roots.insert(rel.substr(0, slash));
    const auto have = tree.read(rel, bytes.size() + 1);  // a larger file differs: never read more
    if (!have || *have != bytes) s.changed.push_back(rel);
  }
  for (const auto& sub : roots)
    for (const auto& rel : tree.files_under(sub))
      if (!files.count(rel)) s.extra.push_back(rel);
  std::sort(s.extra.begin(), s.extra.end());
  return s;
}

// --check: names every stale file; kExitOk when there is none.
int report_stale(const OutputTree& tree, const std::string& out_dir, const Stale& s) {
  const std::string root = escape_controls(out_dir, EscapeNewlines::Yes);
  auto shown = [&](const std::string& rel) { return (fs::path(root) / escape_controls(rel, EscapeNewlines::Yes)).generic_string(); };
  for (const auto& rel : s.changed)
    std::fprintf(stderr, "%s: stale: %s\n", shown(rel).c_str(), tree.exists(rel) ? "differs from what the sources give" : "missing");
  for (const auto& rel : s.extra) std::fprintf(stderr, "%s: stale: no longer generated\n", shown(rel).c_str());
  if (s.changed.empty() && s.extra.empty()) return kExitOk;
  std::fprintf(stderr, "kbc: %zu stale file(s) in %s; regenerate with `make generate`\n", s.changed.size() + s.extra.size(), root.c_str());
  return kExitNoMatch;
}

// Writes the changed files (each through a uniquely named temporary file
// in its own folder, renamed over it, so a reader never sees half a file)
// and removes the extra ones (regular files only). Throws on a file system
// error or a link in the way.
void write_changes(OutputTree& tree, const gen::OutputFiles& files, const Stale& s) {
  for (const auto& rel : s.changed) tree.write(rel, files.at(rel));
  for (const auto& rel : s.extra) tree.remove(rel);
}

}  // namespace

int generate(const Compilation& c, const std::string& out_dir, bool check, Diagnostics& diags) {
  Diagnostics local;
  gen::OutputFiles files;
  build_files(c, out_dir, files, local);
  if (!local.has_errors()) check_paths(files, out_dir, local);
  local.print(stderr);
  diags.append(local);
  if (local.has_errors()) return kExitError;

  Stale stale;
  try {
    OutputTree tree(out_dir, !check);
    stale = compare_with_disk(tree, files);
    if (check) return report_stale(tree, out_dir, stale);
    write_changes(tree, files, stale);
  } catch (const std::exception& e) {
    Diagnostics failed;
    const auto* pe = dynamic_cast<const PathError*>(&e);
    failed.error({pe ? pe->path : out_dir, 0, 0},
                 std::string(check ? "cannot read the generated files: " : "cannot write the generated files: ") +
                     (pe ? pe->problem : std::string(e.what())),
                 "check that the output folder is writable and holds no links where kbc writes");
    failed.print(stderr);
    diags.append(failed);
    return kExitError;
  }
  std::fprintf(stderr, "kbc: generated %zu files in %s (%zu written, %zu removed)\n", files.size(),
               escape_controls(out_dir, EscapeNewlines::Yes).c_str(), stale.changed.size(), stale.extra.size());
  return kExitOk;
}

}  // namespace kb
