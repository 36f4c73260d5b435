// Diagnostics shared by kbc and kbq: a source span on every message, the
// `file:line:col: severity: message` format, hints, and the error policy
// (typed errors for bad input, assertions only for programmer bugs).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kb {

// A position in an input: a file (or "<query>"), 1-based line and column.
// Column counts Unicode code points, not bytes, so carets line up.
struct Span {
  std::string file;  // path as given on the command line, relative when possible
  int line = 0;      // 1-based; 0 = whole file
  int col = 0;       // 1-based code point column; 0 = whole line
};

// The span of byte `offset` of `text` in `file`: the 1-based line, counted
// by LF as every line index of kbc counts it (a CRLF ends one line), and
// the 1-based code-point column.
Span span_of_byte(const std::string& file, std::string_view text, std::size_t offset);

enum class Severity { Error, Warning, Note };

struct Diagnostic {
  Severity severity = Severity::Error;
  Span span;
  std::string message;         // what is wrong, one line
  std::string hint;            // how to fix it, may be empty
  std::string render() const;  // "file:line:col: error: message\n  hint: ..."
};

// Collects diagnostics across documents so one bad file does not hide the
// next (keep going, remember failure, exit non-zero at the end).
class Diagnostics {
 public:
  void error(Span span, std::string message, std::string hint = {});
  void warning(Span span, std::string message, std::string hint = {});
  void note(Span span, std::string message, std::string hint = {});
  bool has_errors() const { return errors_ > 0; }
  int error_count() const { return errors_; }
  const std::vector<Diagnostic>& all() const { return items_; }
  // Every diagnostic, one render() per line; with `errors_only` (kbc build
  // -q) the warnings and notes are left out.
  void print(std::FILE* out, bool errors_only = false) const;
  std::string render_all(bool errors_only = false) const;
  void append(const Diagnostics& other);

 private:
  std::vector<Diagnostic> items_;
  int errors_ = 0;
};

// Documented exit codes (docs/kbc.md, docs/kbq.md).
enum ExitCode : int {
  kExitOk = 0,       // built / answered
  kExitNoMatch = 1,  // kbq: nothing matched, a rule failed; kbc generate --check: stale
  kExitError = 2,    // usage, bad input, bad KB
};

}  // namespace kb
