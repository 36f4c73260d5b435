// Diagnostic rendering and the collecting sink.
#include "base/diag.hpp"

#include <cstdio>

#include "base/escape.hpp"
#include "base/text.hpp"

namespace kb {

Span span_of_byte(const std::string& file, std::string_view text, std::size_t offset) {
  int line = 1;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i)
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  return Span{file, line, code_point_column(text.substr(line_start), offset - line_start) + 1};
}

// A diagnostic is one line (and a hint line): a file name or a quoted input
// holding a line feed or a terminal escape would forge or hide lines, so
// every part is written with its control characters escaped.
std::string Diagnostic::render() const {
  std::string out;
  out += span.file.empty() ? std::string("kbc") : escape_controls(span.file, EscapeNewlines::Yes);
  if (span.line > 0) {
    out += ":" + std::to_string(span.line);
    if (span.col > 0) out += ":" + std::to_string(span.col);
  }
  switch (severity) {
    case Severity::Error:
      out += ": error: ";
      break;
    case Severity::Warning:
      out += ": warning: ";
      break;
    case Severity::Note:
      out += ": note: ";
      break;
  }
  // A message quotes input; never a megabyte of it.
  constexpr size_t kMaxMessage = 400;
  if (message.size() > kMaxMessage) {
    size_t cut = kMaxMessage;
    while (cut > 0 && (static_cast<unsigned char>(message[cut]) & 0xC0) == 0x80) --cut;
    out += escape_controls(message.substr(0, cut), EscapeNewlines::Yes) + "… (" + std::to_string(message.size()) + " bytes)";
  } else {
    out += escape_controls(message, EscapeNewlines::Yes);
  }
  if (!hint.empty()) out += "\n  hint: " + escape_controls(hint, EscapeNewlines::Yes);
  return out;
}

void Diagnostics::error(Span span, std::string message, std::string hint) {
  items_.push_back({Severity::Error, std::move(span), std::move(message), std::move(hint)});
  ++errors_;
}
void Diagnostics::warning(Span span, std::string message, std::string hint) {
  items_.push_back({Severity::Warning, std::move(span), std::move(message), std::move(hint)});
}
void Diagnostics::note(Span span, std::string message, std::string hint) {
  items_.push_back({Severity::Note, std::move(span), std::move(message), std::move(hint)});
}
std::string Diagnostics::render_all(bool errors_only) const {
  std::string out;
  for (const auto& d : items_)
    if (!errors_only || d.severity == Severity::Error) out += d.render() + "\n";
  return out;
}
void Diagnostics::print(std::FILE* out, bool errors_only) const { std::fputs(render_all(errors_only).c_str(), out); }
void Diagnostics::append(const Diagnostics& other) {
  for (const auto& d : other.items_) {
    items_.push_back(d);
    if (d.severity == Severity::Error) ++errors_;
  }
}

}  // namespace kb
