// `kbc drift`: a published skill checked against a Megatron Bridge checkout,
// for other people's CI. The skill folder is compiled as it is (files that
// state no language or revision take --lang and --revision), the checkout
// is read by the code front end (kbc extract-code) into a private folder,
// and every place where the skill says what the code does not do is a
// finding (compiler/resolve/drift.hpp), printed as compiler warnings,
// GitHub Actions annotations or SARIF 2.1.0. Exit codes: 0 no finding (or
// no --check), 1 findings with --check, 2 error (docs/drift-check.md).
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "compiler/pipeline.hpp"

namespace kb {

// How findings are printed.
enum class DriftFormat : std::uint8_t {
  Text,    // file:line: warning: message (one line each, as compilers print)
  Github,  // ::warning file=...,line=...,title=...::message (GitHub Actions workflow commands)
  Sarif,   // one SARIF 2.1.0 log (JSON) for code-scanning tools
};
// Their spellings (the --format values), in declaration order.
inline constexpr std::array<std::pair<DriftFormat, std::string_view>, 3> kDriftFormatNames{{
    {DriftFormat::Text, "text"},
    {DriftFormat::Github, "github"},
    {DriftFormat::Sarif, "sarif"},
}};
// Spelling → format; nullopt for a spelling the table does not have.
constexpr std::optional<DriftFormat> parse_drift_format(std::string_view s) {
  for (const auto& [f, name] : kDriftFormatNames)
    if (name == s) return f;
  return std::nullopt;
}

struct DriftCheckOptions {
  std::string skill;                     // the published skill folder (SKILL.md, references/)
  std::string mbridge;                   // a Megatron Bridge checkout, read with the code front end ...
  std::string code;                      // ... or a folder of extracted snapshots (kb-sources/code layout)
  std::string data = "kb-sources/data";  // kbq's data folder (vocabulary, labels, code fields)
  std::string lang;                      // language of skill files that state none, and of the messages ("" = base_language)
  int revision = 1;                      // revision of skill files that state none
  std::string commit, date;              // the checkout's commit and date ("" = ask git)
  std::string extractor;                 // extract_mbridge.py ("" = the installed one, else the source tree's)
  DriftFormat format = DriftFormat::Text;
  bool check = false;        // exit 1 when there is a finding
  std::string tool_version;  // kbc's version, named in the SARIF log
};

// The findings of a compiled skill, printed in a format. `skill_root` is
// prefixed to each document path (the paths a CI annotation points at);
// labels come from data/ui.tsv (drift.*) in `lang`, else en. Empty
// findings: "" for text and github, a log with no results for SARIF.
std::string render_drift_findings(const Compilation& c, const std::string& skill_root, const std::string& lang, DriftFormat format,
                                  const std::string& tool_version, Diagnostics& diags);

// Runs the check. Output text in `out`; exit code as above.
int drift_check(const DriftCheckOptions& o, std::string& out, Diagnostics& diags);

}  // namespace kb
