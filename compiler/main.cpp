// kbc: the knowledge-base compiler's command line. Subcommands build (the
// KB), lint (conflicts and missing translations), dump (deterministic text
// export) and generate (docs and site files from the KB). Exit codes: 0 ok,
// 1 stale (generate --check), 2 error (usage, bad input).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>

#include "base/text.hpp"
#include "compiler/generate/generate.hpp"
#include "compiler/pipeline.hpp"

int main(int argc, char** argv) {
  using namespace kb;
  CLI::App app{"kbc: compile the Megatron Bridge recipe knowledge base from kb-sources"};
  app.require_subcommand(1);
  CompileOptions opts;
  std::string out = "build/kb.sqlite";
  bool quiet = false;
  auto add_source_flags = [&](CLI::App* sub) {
    sub->add_option("--sources", opts.sources, "sources root: skill/, references/, data/ (default: kb-sources)");
    sub->add_option("--data", opts.data, "data folder (default: <sources>/data)");
  };

  auto* build = app.add_subcommand("build", "compile kb-sources into the SQLite knowledge base");
  add_source_flags(build);
  build->add_option("-o,--output", out, "KB file to write (default: build/kb.sqlite); replaced atomically");
  build->add_flag("-q,--quiet", quiet, "print errors only");

  auto* lint = app.add_subcommand("lint", "print every conflict, rename and missing translation");
  add_source_flags(lint);

  std::string kb_path = "build/kb.sqlite", format = "sql";
  auto* dump = app.add_subcommand("dump", "deterministic text export of a compiled KB");
  dump->add_option("--kb", kb_path, "KB file to read (default: build/kb.sqlite)");
  dump->add_option("--format", format, "sql or json")->check(CLI::IsMember({"sql", "json"}));

  std::string gen_out = "generated";
  bool check = false;
  auto* gen = app.add_subcommand("generate", "regenerate docs, recipe indexes and site files from the sources");
  add_source_flags(gen);
  gen->add_option("-o,--output", gen_out, "output folder (default: generated)");
  gen->add_flag("--check", check, "write nothing; exit 1 naming the files that differ");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : kExitError;
  }

  Diagnostics diags;
  if (*build) {
    const bool ok = build_kb(opts, out, diags);
    diags.print(stderr);
    if (!ok) {
      std::fprintf(stderr, "kbc: %d error(s); %s left unchanged\n", diags.error_count(), out.c_str());
      return kExitError;
    }
    if (!quiet) std::fprintf(stderr, "kbc: wrote %s\n", out.c_str());
    return kExitOk;
  }
  if (*lint) {
    auto c = compile(opts, diags);
    diags.print(stderr);
    if (!c || diags.has_errors()) return kExitError;
    for (const auto& line : lint_lines(*c)) std::printf("%s\n", line.c_str());
    return kExitOk;
  }
  if (*dump) {
    try {
      std::fputs(dump_kb(kb_path, format).c_str(), stdout);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s: error: %s\n", kb_path.c_str(), e.what());
      return kExitError;
    }
    return kExitOk;
  }
  if (*gen) {
    auto c = compile(opts, diags);
    diags.print(stderr);
    if (!c || diags.has_errors()) return kExitError;
    return generate(*c, gen_out, check, diags);
  }
  return kExitError;
}
