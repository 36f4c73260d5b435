// Markdown escaping (see markdown.hpp): the one home of the generator's
// page text and kbq's --format markdown answers.
#include "base/markdown.hpp"

#include <algorithm>
#include <cctype>
#include <string_view>

#include "base/escape.hpp"
#include "base/text.hpp"

namespace kb::md {

namespace {

// Characters escaped wherever they are. CommonMark's own: '\\', '`', '*',
// '_', '[', ']', '<', '&', '~'. MyST's (docs/security.md, "Generated
// pages"): '{' starts a role (`{name}` + code span), a substitution
// (`{{ x }}`) or an attribute block, '$' a math span (dollarmath). A
// backslash before any ASCII punctuation is CommonMark's escape, so the
// text renders the same, and markdown-it's escape rule consumes `\{`
// before the role rule could see the brace.
bool special(char ch, bool in_table) {
  switch (ch) {
    case '\\':
    case '`':
    case '*':
    case '_':
    case '[':
    case ']':
    case '<':
    case '&':
    case '~':
    case '{':
    case '$':
      return true;
    case '|':
      return in_table;
    default:
      return false;
  }
}

std::string escape_chars(std::string_view s, bool in_table) {
  std::string out;
  for (char ch : s) {
    if (special(ch, in_table)) out += '\\';
    out += ch;
  }
  return out;
}

long count(std::string_view s, char ch) { return static_cast<long>(std::count(s.begin(), s.end(), ch)); }

// One run of printable ASCII (no backtick): an identifier-like core with
// '_' or '*' becomes a code span; sentence punctuation around it stays text.
std::string escape_run(std::string_view run, bool in_table) {
  size_t b = 0, e = run.size();
  for (bool changed = true; changed && b < e;) {
    changed = false;
    const std::string_view core = run.substr(b, e - b);
    const char first = run[b], last = run[e - 1];
    if (first == '(' && last == ')' && core.size() > 2 && count(core, '(') == 1 && count(core, ')') == 1) {
      ++b;  // "(path)": the parentheses are prose
      --e;
      changed = true;
    } else if (first == '"' || first == '\'' || (first == '(' && count(core, '(') > count(core, ')')) ||
               (first == '[' && count(core, '[') > count(core, ']'))) {
      ++b;
      changed = true;
    } else if (std::string_view(".,;:!?\"'").find(last) != std::string_view::npos || (last == ')' && count(core, ')') > count(core, '(')) ||
               (last == ']' && count(core, ']') > count(core, '['))) {
      --e;
      changed = true;
    }
  }
  const std::string_view core = run.substr(b, e - b);
  const bool code_like = (core.find('_') != std::string_view::npos || core.find('*') != std::string_view::npos) &&
                         std::any_of(core.begin(), core.end(), [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)); });
  if (!code_like) return escape_chars(run, in_table);
  return escape_chars(run.substr(0, b), in_table) + code(std::string(core), in_table) + escape_chars(run.substr(e), in_table);
}

std::string escape_line(std::string_view line, bool in_table) {
  std::string out;
  size_t i = 0;
  while (i < line.size()) {
    const char ch = line[i];
    if (ch > 0x20 && ch < 0x7F && ch != '`') {
      size_t j = i;
      while (j < line.size() && line[j] > 0x20 && line[j] < 0x7F && line[j] != '`') ++j;
      out += escape_run(line.substr(i, j - i), in_table);
      i = j;
      continue;
    }
    if (ch == '`') out += '\\';
    out += ch;
    ++i;
  }
  if (in_table) return out;
  // Neutralize what would open a block at the start of a line: CommonMark's
  // headings, quotes, lists, breaks and tables ('#', '>', '-', '+', '=',
  // '|'), and MyST's (markdown-it-py and mdit_py_plugins, as Sphinx reads
  // the pages): ':' opens a colon fence (`:::{directive}`), a field list or
  // a definition, '%' a comment that hides the line, `(name)=` a reference
  // target, `+++` a block break.
  if (!out.empty() && std::string_view("#>-+=|:%").find(out[0]) != std::string_view::npos) return "\\" + out;
  if (!out.empty() && out[0] == '(' && ends_with(trim(out), ")=")) return "\\" + out;
  size_t d = 0;
  while (d < out.size() && std::isdigit(static_cast<unsigned char>(out[d]))) ++d;
  if (d > 0 && d < 10 && d < out.size() && (out[d] == '.' || out[d] == ')')) return out.substr(0, d) + "\\" + out.substr(d);
  return out;
}

}  // namespace

std::string code(const std::string& s, bool in_table) {
  size_t longest = 0, run = 0;
  for (char ch : s) {
    run = ch == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  const std::string ticks(longest + 1, '`');
  // A line break inside a code span renders as a space, but a line it
  // starts could open a block ("# ", "```") before the span is read.
  std::string body = s;
  std::replace(body.begin(), body.end(), '\n', ' ');
  std::replace(body.begin(), body.end(), '\r', ' ');
  if (in_table) {
    std::string t;
    for (char ch : body) {
      if (ch == '|') t += '\\';
      t += ch;
    }
    body = t;
  }
  const bool pad = !body.empty() && (body.front() == '`' || body.back() == '`');
  return ticks + (pad ? " " : "") + body + (pad ? " " : "") + ticks;
}

std::string text(const std::string& s, bool in_table) {
  std::vector<std::string> lines;
  for (const auto& l : split(s, '\n')) {
    auto t = trim(l);
    if (!t.empty()) lines.push_back(t);
  }
  if (in_table) {
    std::string joined = join(lines, " ");
    return escape_line(joined, true);
  }
  std::vector<std::string> out;
  for (const auto& l : lines) out.push_back(escape_line(l, false));
  return join(out, "\n");
}

std::string fence(const std::string& body, const std::string& raw_info) {
  // The info string is one line of text: a backtick in it would end a
  // backtick fence's opening line early (CommonMark), and what followed
  // would be read as Markdown, raw HTML included. Such an info string gets
  // a tilde fence, where backticks are plain text; the fence is longer
  // than any run of its character in the code, so the code cannot close it.
  //
  // MyST runs a fence whose info string starts with '{' as a directive
  // (`{raw} html`, `{include} /etc/passwd`, `{eval-rst}`): a '{' of the
  // source's info string is written `\{`, which CommonMark reads back as
  // '{' and MyST does not take for a directive (it reads the info string
  // raw); '\\' and '&' are escaped too, so the info string reads back as
  // it was. The generator's own directives (toctree, raw html) are written
  // without md_fence.
  std::string info;
  for (char ch : escape_controls(trim(raw_info), EscapeNewlines::Yes)) {
    if (ch == '{' || ch == '\\' || ch == '&') info += '\\';
    info += ch;
  }
  const char mark = info.find('`') == std::string::npos ? '`' : '~';
  size_t longest = 0, run = 0;
  for (char ch : body) {
    run = ch == mark ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  const std::string marks(std::max<size_t>(3, longest + 1), mark);
  return marks + info + "\n" + body + "\n" + marks;
}

std::string table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  auto line = [](const std::vector<std::string>& cells) {
    std::string s = "|";
    for (const auto& cell : cells) s += " " + cell + " |";
    return s;
  };
  std::string out = line(header) + "\n|";
  for (size_t i = 0; i < header.size(); ++i) out += "---|";
  for (const auto& r : rows) out += "\n" + line(r);
  return out;
}

}  // namespace kb::md
