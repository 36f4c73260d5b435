// Generate stage, entry point (see generate.hpp): builds every generated
// file in memory from the compilation, then writes the ones that changed
// (removing files of the generated folders that are no longer generated),
// or with --check compares and names the stale ones. Nothing it writes
// depends on the time, the machine or the output folder. Writes stay
// inside the output folder: paths are checked lexically, and the folder is
// reached through base/files.hpp's OutputTree, which never follows, replaces
// or deletes a link (docs/security.md).
#include "compiler/generate/generate.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

#include "base/escape.hpp"
#include "base/files.hpp"
#include "base/limits.hpp"
#include "base/text.hpp"
#include "compiler/generate/generate_int.hpp"
#include "compiler/generate/perf_fit.hpp"
#include "query/kbq.hpp"

namespace kb {

namespace fs = std::filesystem;

namespace {

// --- the manifest of kbc generate's own outputs -----------------------------------------
//
// kbc generate removes a file only when it wrote it: every run records the
// files it wrote, with their SHA-256, in kManifest at the output folder's
// root (the format of sha256sum: "<hex>  <path>" per line, sorted by path,
// after '#' comment lines; `sha256sum -c` checks it). A later run removes a
// file that the manifest lists, that the sources no longer give, and that
// still holds the bytes it recorded; a file it lists that someone changed
// since, and any file it does not list (a site's conf.py, scripts, pages
// written by hand), are left alone. A folder without a manifest (the first
// run, or one written by a kbc before the manifest) has nothing removed.

constexpr const char* kManifest = ".kbc-generate.sha256";

std::string manifest_of(const gen::OutputFiles& files) {
  std::string out =
      "# The files kbc generate wrote in this folder, with their SHA-256 (sha256sum -c checks them).\n"
      "# A later kbc generate removes a listed file the sources no longer give, if it is unchanged; nothing else.\n";
  for (const auto& [rel, bytes] : files)
    if (rel != kManifest) out += sha256_hex(bytes) + "  " + rel + "\n";
  return out;
}

// The previous run's manifest: path → SHA-256 (nullopt when there is none).
// A line that is not "<64 hex>  <safe relative path>" is skipped: it names
// nothing kbc may remove.
std::optional<std::map<std::string, std::string>> read_manifest(const OutputTree& tree) {
  const auto bytes = tree.read(kManifest, limits::kMaxDataFileBytes);
  if (!bytes) return std::nullopt;
  std::map<std::string, std::string> out;
  for (const auto& line : split(*bytes, '\n')) {
    if (line.size() < 67 || line[0] == '#' || line.compare(64, 2, "  ") != 0) continue;
    const std::string hash = line.substr(0, 64), rel = line.substr(66);
    if (hash.find_first_not_of("0123456789abcdef") != std::string::npos || !safe_relative_path(rel) || rel == kManifest) continue;
    out[rel] = hash;
  }
  return out;
}

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
    const TempDir tmp("kbc-generate", {"kb.sqlite"});
    const std::string kb_path = tmp.path() + "/kb.sqlite";
    write_kb(c, kb_path, store_perf_derivation);
    kbq::Engine engine = kbq::Engine::open(kb_path);
    gen::Inputs ctx(c, local, engine, kb_path);
    if (!local.has_errors()) {
      gen::write_index(ctx, files);
      gen::write_skill(ctx, files);
      gen::write_status(ctx, files);
      gen::write_drift(ctx, files);
      gen::write_changelog(ctx, files);
      gen::write_site(ctx, files);
      gen::write_answers(ctx, files);
      gen::write_finder(ctx, files);
    }
    // Nothing raw reaches a page: kbc refuses control characters in the
    // sources and the data, and every generated file is escaped once more
    // here, whatever a generator put in it (Markdown as readable escapes,
    // JSON as \u escapes, which leave its values unchanged).
    for (auto& [rel, bytes] : files) bytes = ends_with(rel, ".json") ? escape_json_controls(bytes) : escape_controls(bytes);
    if (!local.has_errors()) files[kManifest] = manifest_of(files);
  } catch (const std::exception& e) {
    local.error({out_dir, 0, 0}, std::string("cannot generate: ") + e.what());
  }
}

// How the output folder differs from the generated files.
struct Stale {
  std::vector<std::string> changed;  // generated files that are missing or differ on disk
  std::vector<std::string> extra;    // files the last run wrote that are no longer generated (removed), sorted
  std::vector<std::string> kept;     // such files changed since that run (left alone), sorted
  size_t unlisted = 0;               // no manifest (a first run): files where kbc writes that it did not generate
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
// and one at a generated path is an error (it throws). Only files the
// previous run's manifest lists are candidates for removal.
Stale compare_with_disk(const OutputTree& tree, const gen::OutputFiles& files) {
  Stale s;
  for (const auto& [rel, bytes] : files) {
    const auto have = tree.read(rel, bytes.size() + 1);  // a larger file differs: never read more
    if (!have || *have != bytes) s.changed.push_back(rel);
  }
  const auto manifest = read_manifest(tree);
  if (!manifest) {
    // A first run: nothing is removed; count what is left alone where kbc
    // writes, so the user can tell whether old outputs remain.
    std::set<std::string> roots;
    for (const auto& [rel, bytes] : files)
      if (const auto slash = rel.find('/'); slash != std::string::npos) roots.insert(rel.substr(0, slash));
    for (const auto& sub : roots)
      for (const auto& rel : tree.files_under(sub))
        if (!files.count(rel)) ++s.unlisted;
    return s;
  }
  for (const auto& [rel, hash] : *manifest) {
    if (files.count(rel) || !tree.exists(rel)) continue;
    std::optional<std::string> have;
    try {
      have = tree.read(rel, limits::kMaxSourceFileBytes);
    } catch (const PathError&) {
      continue;  // a link (or one on the way), a folder, a FIFO: not what kbc wrote, left alone
    }
    (have && sha256_hex(*have) == hash ? s.extra : s.kept).push_back(rel);
  }
  return s;
}

// --check: names every stale file; kExitOk when there is none.
int report_stale(const OutputTree& tree, const std::string& out_dir, const Stale& s) {
  const std::string root = escape_controls(out_dir, EscapeNewlines::Yes);
  auto shown = [&](const std::string& rel) { return (fs::path(root) / escape_controls(rel, EscapeNewlines::Yes)).generic_string(); };
  for (const auto& rel : s.changed)
    std::fprintf(stderr, "%s: stale: %s\n", shown(rel).c_str(), tree.exists(rel) ? "differs from what the sources give" : "missing");
  for (const auto& rel : s.extra) std::fprintf(stderr, "%s: stale: no longer generated\n", shown(rel).c_str());
  for (const auto& rel : s.kept)
    std::fprintf(stderr, "%s: note: no longer generated, but changed since kbc wrote it: left alone\n", shown(rel).c_str());
  if (s.changed.empty() && s.extra.empty()) return kExitOk;
  std::fprintf(stderr, "kbc: %zu stale file(s) in %s; regenerate with `make generate`\n", s.changed.size() + s.extra.size(), root.c_str());
  return kExitNoMatch;
}

// Writes the changed files (each through a uniquely named temporary file
// in its own folder, renamed over it, so a reader never sees half a file)
// and removes the extra ones (regular files only), the manifest last, so an
// interrupted run leaves the previous manifest, which still lists every
// file this run may have written over. Throws on a file system error or a
// link in the way.
void write_changes(OutputTree& tree, const gen::OutputFiles& files, const Stale& s) {
  for (const auto& rel : s.changed)
    if (rel != kManifest) tree.write(rel, files.at(rel));
  for (const auto& rel : s.extra) tree.remove(rel);
  if (std::find(s.changed.begin(), s.changed.end(), kManifest) != s.changed.end()) tree.write(kManifest, files.at(kManifest));
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
  const std::string root = escape_controls(out_dir, EscapeNewlines::Yes);
  for (const auto& rel : stale.kept)
    std::fprintf(stderr, "%s: note: no longer generated, but changed since kbc wrote it: left alone\n",
                 (fs::path(root) / escape_controls(rel, EscapeNewlines::Yes)).generic_string().c_str());
  if (stale.unlisted)
    std::fprintf(stderr, "kbc: %s had no %s (a first run): %zu file(s) kbc did not generate were left alone\n", root.c_str(), kManifest,
                 stale.unlisted);
  std::fprintf(stderr, "kbc: generated %zu files in %s (%zu written, %zu removed)\n", files.size(), root.c_str(), stale.changed.size(),
               stale.extra.size());
  return kExitOk;
}

}  // namespace kb
