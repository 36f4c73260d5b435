// kbc: the knowledge-base compiler's command line. Subcommands build (the
// KB), lint (conflicts and missing translations), dump (deterministic text
// export), generate (docs and site files from the KB) and drift (a published
// skill against a Megatron Bridge checkout). Exit codes: 0 ok, 1 stale
// (generate --check) or disagreeing (drift --check), 2 error (usage, bad input).
#include <CLI/CLI.hpp>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/escape.hpp"
#include "base/files.hpp"
#include "base/schema_version.hpp"
#include "base/text.hpp"
#include "base/version.hpp"
#include "compiler/code/extract_code.hpp"
#include "compiler/generate/drift_check.hpp"
#include "compiler/generate/generate.hpp"
#include "compiler/generate/perf_fit.hpp"
#include "compiler/pipeline.hpp"

namespace {
// Writes to stdout; a closed pipe ends quietly, any other write error says
// so (exit 2).
int write_out(const std::string& text) {
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0) {
    if (errno == EPIPE) return kb::kExitOk;
    std::fprintf(stderr, "kbc: error: cannot write the output: %s\n", std::strerror(errno));
    return kb::kExitError;
  }
  return kb::kExitOk;
}

// A path or message as printed: control characters (a newline in a file
// name would forge a diagnostic line) escaped.
std::string shown(const std::string& s) { return kb::escape_controls(s, kb::EscapeNewlines::Yes); }

// `kbc build --mbridge PATH`: the checkout's code facts, extracted into a
// private temporary sources root (its data/ a link to the real one, its
// code/ holding only this snapshot), become the KB's code facts; the
// checkout's commit is recorded as any snapshot's (code_snapshots). The
// temporary folder (base/files.hpp TempDir, made only for --mbridge) is
// removed on every path, and on SIGTERM, SIGINT or SIGHUP when the
// extraction has not yet written into it; the KB is written only when
// extraction and compilation both succeed.
bool extract_for_build(kb::ExtractOptions xo, kb::CompileOptions& opts, std::optional<kb::TempDir>& tmp, kb::Diagnostics& diags) {
  namespace fs = std::filesystem;
  try {
    tmp.emplace("kbc-mbridge", std::vector<std::string>{"data"});
  } catch (const std::runtime_error& e) {
    // Named as set: temp_directory_path() itself throws when $TMPDIR is no folder.
    const char* where = std::getenv("TMPDIR");
    diags.error({where && *where ? where : "/tmp", 0, 0}, e.what(), "set TMPDIR to a writable folder");
    return false;
  }
  std::error_code ec;
  const fs::path data = fs::absolute(opts.data.empty() ? fs::path(opts.sources) / "data" : fs::path(opts.data), ec);
  fs::create_directory_symlink(data, fs::path(tmp->path()) / "data", ec);
  if (ec) {
    diags.error({data.string(), 0, 0}, "cannot link the data folder: " + ec.message(), "check --sources / --data");
    return false;
  }
  xo.sources = tmp->path();
  if (kb::extract_code(xo, diags) != kb::kExitOk) return false;
  opts.code = (fs::path(tmp->path()) / "code").string();
  return true;
}
}  // namespace

int main(int argc, char** argv) {
  using namespace kb;
  std::signal(SIGPIPE, SIG_IGN);
  install_signal_cleanup();  // SIGTERM, Ctrl-C: no temporary file or folder left behind (base/files.hpp)
  CLI::App app{"kbc: compile the Megatron Bridge recipe knowledge base from kb-sources", "kbc"};
  app.require_subcommand(0, 1);
  bool version = false;
  app.add_flag("--version", version, "print kbc's version and the KB schema version it writes");
  CompileOptions opts;
  std::string out = "build/kb.sqlite";
  bool quiet = false;
  auto add_source_flags = [&](CLI::App* sub) {
    sub->add_option("--sources", opts.sources, "sources root: skill/, references/, data/ (default: kb-sources)");
    sub->add_option("--data", opts.data, "data folder (default: <sources>/data)");
    sub->add_option("--code", opts.code, "code-facts folder, one subfolder per snapshot (default: <sources>/code)");
  };

  auto* build = app.add_subcommand("build", "compile kb-sources into the SQLite knowledge base");
  add_source_flags(build);
  build->add_option("-o,--output", out, "KB file to write (default: build/kb.sqlite); replaced atomically");
  build->add_flag("-q,--quiet", quiet, "print errors only");
  bool runtime = false;
  build->add_flag("--runtime", runtime,
                  "write only the tables kbq reads at run time (the KB kbq embeds; no code_facts notes, lint findings or "
                  "full-text index: docs/schema.md)");
  ExtractOptions xo;
  build->add_option("--mbridge", xo.checkout,
                    "a Megatron Bridge checkout: extract its code facts (Python 3) and build from them instead of <sources>/code; its "
                    "commit is recorded in the KB");
  build->add_option("--commit", xo.commit, "with --mbridge: the checkout's commit (default: git rev-parse HEAD in it)");
  build->add_option("--date", xo.date, "with --mbridge: its commit date, YYYY-MM-DD (default: from git)");

  auto* lint = app.add_subcommand("lint", "print every conflict, rename and missing translation");
  add_source_flags(lint);

  std::string kb_path = "build/kb.sqlite", format = "sql";
  auto* dump = app.add_subcommand("dump", "deterministic text export of a compiled KB");
  dump->add_option("--kb", kb_path, "KB file to read (default: build/kb.sqlite)");
  std::vector<std::string> format_names;
  for (const auto& [f, name] : kDumpFormatNames) format_names.emplace_back(name);
  dump->add_option("--format", format, "sql or json")->check(CLI::IsMember(format_names));

  std::string gen_out = "generated";
  bool check = false;
  auto* gen = app.add_subcommand("generate", "regenerate docs, recipe indexes and site files from the sources");
  add_source_flags(gen);
  gen->add_option("-o,--output", gen_out, "output folder (default: generated)");
  gen->add_flag("--check", check, "write nothing; exit 1 naming the files that differ");

  auto* extract =
      app.add_subcommand("extract-code", "read a Megatron Bridge checkout statically into kb-sources/code/<commit>/ (Python 3)");
  extract->add_option("--mbridge", xo.checkout, "the checkout: the folder holding src/megatron/bridge and scripts")->required();
  extract->add_option("--sources", xo.sources, "sources root to write into (default: kb-sources)");
  extract->add_option("--commit", xo.commit, "the checkout's commit (default: git rev-parse HEAD in it)");
  extract->add_option("--date", xo.date, "its commit date, YYYY-MM-DD (default: from git)");
  extract->add_flag("--check", xo.check, "write nothing; exit 1 when the checked-in facts differ from the checkout");
  extract->add_option("--extractor", xo.extractor,
                      "the extractor's extract_mbridge.py (default: share/kbq/extractor beside kbc, else the source tree)");

  DriftCheckOptions dco;
  dco.tool_version = kb::kVersion;
  std::string drift_format = "text";
  auto* drift =
      app.add_subcommand("drift", "check a published skill against a Megatron Bridge checkout: exit 1 (with --check) when they disagree");
  drift->add_option("--skill", dco.skill, "the published skill folder (SKILL.md, references/)")->required();
  auto* drift_mb = drift->add_option("--mbridge", dco.mbridge, "a Megatron Bridge checkout (read with Python 3, as extract-code does)");
  auto* drift_code = drift->add_option("--code", dco.code,
                                       "instead of --mbridge: snapshots already extracted (a kb-sources/code folder; the newest is used)");
  drift_mb->excludes(drift_code);
  drift->add_option("--data", dco.data, "kbq's data folder (default: kb-sources/data)");
  drift->add_option("--lang", dco.lang,
                    "language of skill files whose front matter states none, and of the messages (default: base_language)");
  drift->add_option("--revision", dco.revision, "revision of skill files whose front matter states none (default: 1)");
  drift->add_option("--commit", dco.commit, "the checkout's commit (default: git rev-parse HEAD in it)");
  drift->add_option("--date", dco.date, "its commit date, YYYY-MM-DD (default: from git)");
  drift->add_option("--extractor", dco.extractor, "the extractor's extract_mbridge.py (default: as extract-code)");
  std::vector<std::string> drift_format_names;
  for (const auto& [f, name] : kDriftFormatNames) drift_format_names.emplace_back(name);
  drift->add_option("--format", drift_format, "text (file:line: warning: ...), github (workflow annotations) or sarif (SARIF 2.1.0)")
      ->check(CLI::IsMember(drift_format_names));
  drift->add_flag("--check", dco.check, "exit 1 when the skill disagrees with the code");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help: CLI11 prints it (escaped); any other parse error in kbc's own
    // form, escaped too (an argument holding ESC bytes would otherwise reach
    // the terminal raw).
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) {
      std::ostringstream said, complained;
      const int rc = app.exit(e, said, complained);
      std::fputs(kb::escape_controls(said.str()).c_str(), stdout);
      std::fputs(kb::escape_controls(complained.str()).c_str(), stderr);
      return rc == 0 ? 0 : kExitError;
    }
    std::fprintf(stderr, "kbc: error: %s\n  hint: kbc --help lists the subcommands, kbc SUBCOMMAND --help a subcommand's options\n",
                 shown(e.what()).c_str());
    return kExitError;
  }

  if (version) {
    std::printf("kbc %s\nknowledge base: writes schema version %d (base/schema.sql)\n", kb::kVersion, kSchemaVersion);
    return kExitOk;
  }
  if (app.get_subcommands().empty()) {
    std::fputs(app.help().c_str(), stderr);
    return kExitError;
  }
  Diagnostics diags;
  if (*extract) {
    const int rc = extract_code(xo, diags);
    diags.print(stderr);
    if (rc == kExitNoMatch)
      std::fprintf(stderr, "kbc: the facts in %s/code differ from %s; regenerate with kbc extract-code\n", xo.sources.c_str(),
                   xo.checkout.c_str());
    return rc;
  }
  if (*drift) {
    dco.format = *parse_drift_format(drift_format);  // --format is checked
    std::string text;
    const int rc = drift_check(dco, text, diags);
    diags.print(stderr);
    if (rc == kExitError) return rc;
    if (const int w = write_out(text); w != kExitOk) return w;
    return rc;
  }
  if (*build) {
    std::optional<TempDir> tmp;  // --mbridge's sources root; a build without it makes none
    if (!xo.checkout.empty() && !extract_for_build(xo, opts, tmp, diags)) {
      diags.print(stderr);
      std::fprintf(stderr, "kbc: error: cannot read the Megatron Bridge checkout %s; %s left unchanged\n", shown(xo.checkout).c_str(),
                   shown(out).c_str());
      return kExitError;
    }
    const bool ok = build_kb(opts, out, diags, store_perf_derivation, runtime ? KbContents::Runtime : KbContents::Full);
    diags.print(stderr, /*errors_only=*/quiet);
    if (!ok) {
      std::fprintf(stderr, "kbc: %d error(s); %s left unchanged\n", diags.error_count(), shown(out).c_str());
      return kExitError;
    }
    if (!quiet) std::fprintf(stderr, "kbc: wrote %s\n", shown(out).c_str());
    return kExitOk;
  }
  if (*lint) {
    auto c = compile(opts, diags);
    diags.print(stderr);
    if (!c || diags.has_errors()) return kExitError;
    std::string text;
    for (const auto& line : lint_lines(*c)) text += line + "\n";
    return write_out(text);
  }
  if (*dump) {
    std::string text;
    try {
      text = dump_kb(kb_path, *parse_dump_format(format));  // --format is checked
    } catch (const std::exception& e) {
      std::fprintf(stderr, "kbc: error: %s: %s\n  hint: kbc dump --kb FILE reads a KB written by kbc build\n", shown(kb_path).c_str(),
                   shown(e.what()).c_str());
      return kExitError;
    }
    return write_out(text);
  }
  if (*gen) {
    auto c = compile(opts, diags);
    diags.print(stderr);
    if (!c || diags.has_errors()) return kExitError;
    return generate(*c, gen_out, check, diags);
  }
  return kExitError;
}
