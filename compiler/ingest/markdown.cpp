// Markdown front end: YAML front matter (yaml-cpp) + CommonMark with GitHub
// tables (cmark-gfm) → the normalized Document. Inline markup is flattened
// to plain text (code spans keep their literal, escapes are resolved by
// cmark), so facts read the same whatever the edition's formatting.
#include <cmark-gfm-core-extensions.h>
#include <cmark-gfm-extension_api.h>
#include <cmark-gfm.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>

#include "base/limits.hpp"
#include "base/text.hpp"
#include "compiler/ingest/bytes.hpp"
#include "compiler/ingest/ingest.hpp"

namespace kb {
namespace {

struct NodeDeleter {
  void operator()(cmark_node* n) const { cmark_node_free(n); }
};
struct ParserDeleter {
  void operator()(cmark_parser* p) const { cmark_parser_free(p); }
};

// The raw lines of the body, for spans (code-point columns) and for checks
// cmark does not make (cell counts, unterminated fences).
struct Lines {
  std::vector<std::string_view> lines;
  explicit Lines(std::string_view text) {
    size_t start = 0;
    for (size_t i = 0; i <= text.size(); ++i) {
      if (i == text.size() || text[i] == '\n') {
        auto l = text.substr(start, i - start);
        if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
        lines.push_back(l);
        start = i + 1;
      }
    }
  }
  std::string_view at(int line) const {  // 1-based within the body
    if (line < 1 || static_cast<size_t>(line) > lines.size()) return {};
    return lines[static_cast<size_t>(line - 1)];
  }
};

// The cells of a table row as written: cmark-gfm pads short rows and drops
// extra cells silently; a fact table with a ragged row is an error, so
// count the cells in the raw line.
int raw_cell_count(std::string_view line) {
  std::string_view s = line;
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  if (!s.empty() && s.front() == '|') s.remove_prefix(1);
  if (!s.empty() && s.back() == '|' && !(s.size() >= 2 && s[s.size() - 2] == '\\')) s.remove_suffix(1);
  int cells = 1;
  bool in_code = false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\') {
      ++i;
      continue;
    }
    if (s[i] == '`') in_code = !in_code;
    if (s[i] == '|' && !in_code) ++cells;
  }
  return cells;
}

class Walker {
 public:
  Walker(const std::string& path, const Lines& lines, int line_offset, Document& doc, Diagnostics& diags)
      : path_(path), lines_(lines), offset_(line_offset), doc_(doc), diags_(diags) {}

  void block(cmark_node* node, int list_depth) {
    if (++depth_ > limits::kMaxBlockNesting) {
      too_deep(node);
      --depth_;
      return;
    }
    for (cmark_node* child = cmark_node_first_child(node); child; child = cmark_node_next(child)) one(child, list_depth);
    --depth_;
  }

 private:
  // `text_start`: a table cell's span is where its text starts, after the
  // blank cmark-gfm starts it at and after the backticks of a code span, so
  // a column inside the cell's text is its span plus its code points.
  Span span_of(cmark_node* n, bool text_start = false) const {
    const int line = cmark_node_get_start_line(n);
    const int byte_col = cmark_node_get_start_column(n);
    const auto raw = lines_.at(line);
    size_t at = byte_col > 0 ? static_cast<size_t>(byte_col - 1) : 0;
    while (at < raw.size() && (raw[at] == ' ' || raw[at] == '\t')) ++at;
    if (text_start)
      while (at < raw.size() && raw[at] == '`') ++at;
    return Span{path_, line + offset_, column(line, raw, at) + 1};
  }

  // Code-point column of a byte offset, counted on from the previous call
  // when it is on the same line and further right: the cells of a row are
  // visited left to right, so a row of N cells costs its length, not N times
  // its length.
  int column(int line, std::string_view raw, size_t at) const {
    at = std::min(at, raw.size());  // cmark may place a node past the line's end (found by fuzz_markdown)
    if (line != col_line_ || at < col_byte_) {
      col_line_ = line;
      col_byte_ = 0;
      col_ = 0;
    }
    col_ += code_point_column(raw.substr(col_byte_), at - col_byte_);
    col_byte_ = at;
    return col_;
  }

  // Flattens inline content with cmark's iterator (no recursion, so deeply
  // nested emphasis cannot exhaust the stack).
  static void inline_text(cmark_node* n, std::string& out) {
    cmark_iter* it = cmark_iter_new(n);
    cmark_event_type ev;
    while ((ev = cmark_iter_next(it)) != CMARK_EVENT_DONE) {
      if (ev != CMARK_EVENT_ENTER) continue;
      cmark_node* c = cmark_iter_get_node(it);
      if (c == n) continue;
      switch (cmark_node_get_type(c)) {
        case CMARK_NODE_TEXT:
        case CMARK_NODE_CODE:
        case CMARK_NODE_HTML_INLINE:
          if (const char* lit = cmark_node_get_literal(c)) out += lit;
          break;
        case CMARK_NODE_SOFTBREAK:  // a wrapped line: a space, as Markdown renders it
          out += ' ';
          break;
        case CMARK_NODE_LINEBREAK:
          out += '\n';
          break;
        default:
          break;
      }
    }
    cmark_iter_free(it);
  }

  static std::string text_of(cmark_node* n) {
    std::string out;
    inline_text(n, out);
    return out;
  }

  void push(Block b, cmark_node* n) {
    b.span = span_of(n);
    b.end_line = cmark_node_get_end_line(n) + offset_;
    doc_.blocks.push_back(std::move(b));
  }

  // The nesting error, reported once per document.
  void too_deep(cmark_node* n) {
    if (!nesting_reported_)
      diags_.error(span_of(n), "blocks nested more than " + std::to_string(limits::kMaxBlockNesting) + " levels deep",
                   "flatten the nested lists or block quotes; the content below this level is skipped");
    nesting_reported_ = true;
  }

  void one(cmark_node* n, int list_depth) {
    const auto type = cmark_node_get_type(n);
    const char* type_name = cmark_node_get_type_string(n);
    Block b;
    switch (type) {
      case CMARK_NODE_HEADING:
        b.kind = BlockKind::Heading;
        b.level = cmark_node_get_heading_level(n);
        b.text = normalize_space(text_of(n));
        push(std::move(b), n);
        return;
      case CMARK_NODE_PARAGRAPH:
        b.kind = BlockKind::Paragraph;
        b.text = trim(text_of(n));
        push(std::move(b), n);
        return;
      case CMARK_NODE_THEMATIC_BREAK:
        b.kind = BlockKind::ThematicBreak;
        push(std::move(b), n);
        return;
      case CMARK_NODE_HTML_BLOCK:
        b.kind = BlockKind::Paragraph;
        b.html = true;
        if (const char* lit = cmark_node_get_literal(n)) b.text = trim(lit);
        push(std::move(b), n);
        return;
      case CMARK_NODE_CODE_BLOCK:
        code_block(n);
        return;
      case CMARK_NODE_LIST:
        list(n, list_depth);
        return;
      case CMARK_NODE_BLOCK_QUOTE:
        block(n, list_depth);
        return;
      default:
        break;
    }
    if (type_name && std::string_view(type_name) == "table") {
      table(n);
      return;
    }
    block(n, list_depth);
  }

  // A code block: its literal without the final newlines, and its info string.
  void code_block(cmark_node* n) {
    Block b;
    b.kind = BlockKind::Code;
    if (const char* info = cmark_node_get_fence_info(n)) b.info = trim(info);
    std::string lit = cmark_node_get_literal(n) ? cmark_node_get_literal(n) : "";
    while (!lit.empty() && lit.back() == '\n') lit.pop_back();
    b.text = lit;
    int fence_length = 0, fence_offset = 0;
    char fence_char = 0;
    const bool fenced = cmark_node_get_fenced(n, &fence_length, &fence_offset, &fence_char) && fence_length > 0;
    b.text_line = cmark_node_get_start_line(n) + offset_ + (fenced ? 1 : 0);
    check_fence(n);
    push(std::move(b), n);
  }

  // A list: one ListItem block per item, numbered as the list counts.
  void list(cmark_node* n, int list_depth) {
    const bool ordered = cmark_node_get_list_type(n) == CMARK_ORDERED_LIST;
    int number = ordered ? cmark_node_get_list_start(n) : 1;
    for (cmark_node* item = cmark_node_first_child(n); item; item = cmark_node_next(item), ++number) {
      Block li;
      li.kind = BlockKind::ListItem;
      li.ordered = ordered;
      li.ordinal = number;
      li.level = list_depth + 1;
      li.text = item_text(item);
      push(std::move(li), item);
      if (++depth_ > limits::kMaxBlockNesting) {
        too_deep(item);
      } else {
        for (cmark_node* c = cmark_node_first_child(item); c; c = cmark_node_next(c))
          if (cmark_node_get_type(c) != CMARK_NODE_PARAGRAPH) one(c, list_depth + 1);
      }
      --depth_;
    }
  }

  // The item's own text is its leading paragraphs; nested lists become
  // items of their own, one level deeper (see list).
  static std::string item_text(cmark_node* item) {
    std::string text;
    for (cmark_node* c = cmark_node_first_child(item); c; c = cmark_node_next(c)) {
      if (cmark_node_get_type(c) == CMARK_NODE_PARAGRAPH) {
        if (!text.empty()) text += '\n';
        text += text_of(c);
      }
    }
    return trim(text);
  }

  void table(cmark_node* n) {
    Block b;
    b.kind = BlockKind::Table;
    size_t header_cells = 0;
    for (cmark_node* row = cmark_node_first_child(n); row; row = cmark_node_next(row)) {
      std::vector<Cell> cells;
      for (cmark_node* cell = cmark_node_first_child(row); cell; cell = cmark_node_next(cell))
        cells.push_back({trim(text_of(cell)), span_of(cell, /*text_start=*/true)});
      const int line = cmark_node_get_start_line(row);
      const int raw = raw_cell_count(lines_.at(line));
      if (b.rows.empty()) {
        header_cells = cells.size();
      } else if (static_cast<size_t>(raw) != header_cells) {
        diags_.error({path_, line + offset_, 1},
                     "table row has " + std::to_string(raw) + " cells, the header has " + std::to_string(header_cells),
                     "every row of a table needs one cell per header column; leave a cell empty "
                     "(`| |`) rather than dropping it");
        continue;
      }
      b.rows.push_back(std::move(cells));
    }
    push(std::move(b), n);
  }

  void check_fence(cmark_node* n) {
    int fence_length = 0, fence_offset = 0;
    char fence_char = 0;
    if (!cmark_node_get_fenced(n, &fence_length, &fence_offset, &fence_char) || fence_length == 0) return;
    const int end = cmark_node_get_end_line(n);
    const std::string closing(static_cast<size_t>(fence_length), fence_char);
    const auto last = trim(lines_.at(end));
    if (end == cmark_node_get_start_line(n) || !starts_with(last, closing)) {
      diags_.error(span_of(n), "unterminated code fence", "close the block with a line of " + closing);
    }
  }

  // Containers (lists, block quotes) deeper than limits::kMaxBlockNesting are
  // an error: no recipe document nests that deep, and the walk must not
  // exhaust the stack. One line's markers are refused before cmark-gfm
  // parses the body (within_parse_bounds); nesting by indentation is found here.
  mutable int col_line_ = 0;  // column(): the line, byte offset and column of the last call
  mutable size_t col_byte_ = 0;
  mutable int col_ = 0;
  int depth_ = -1;  // the document itself is not a nesting level
  bool nesting_reported_ = false;
  const std::string& path_;
  const Lines& lines_;
  int offset_;
  Document& doc_;
  Diagnostics& diags_;
};

// Splits "---\n<yaml>\n---\n<body>"; returns false when there is no front matter.
bool split_front_matter(std::string_view text, std::string_view& yaml, std::string_view& body, int& body_line) {
  if (!(starts_with(text, "---\n") || starts_with(text, "---\r\n"))) return false;
  size_t pos = text.find('\n') + 1;
  int line = 2;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    auto l = text.substr(pos, eol - pos);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    if (l == "---" || l == "...") {
      yaml = text.substr(text.find('\n') + 1, pos - text.find('\n') - 1);
      body = eol < text.size() ? text.substr(eol + 1) : std::string_view{};
      body_line = line + 1;
      return true;
    }
    pos = eol + 1;
    ++line;
  }
  return false;
}

void attach_extensions(cmark_parser* parser) {
  static std::once_flag once;
  std::call_once(once, [] { cmark_gfm_core_extensions_ensure_registered(); });
  if (cmark_syntax_extension* table = cmark_find_syntax_extension("table")) cmark_parser_attach_syntax_extension(parser, table);
}

// Byte-level problems, one per file: the text cannot be read reliably past
// them. `text` is the file without its BOM (columns do not count it).
bool readable_bytes(const std::string& path, std::string_view text, Diagnostics& diags) {
  if (auto bad = find_invalid_utf8(text)) {
    diags.error(span_of_byte(path, text, *bad), "invalid UTF-8 byte sequence", "save the file as UTF-8");
    return false;
  }
  if (const size_t nul = text.find('\0'); nul != std::string_view::npos) {
    diags.error(span_of_byte(path, text, nul), "NUL byte in a text file", "kb-sources are UTF-8 text");
    return false;
  }
  if (auto cr = find_lone_carriage_return(text)) {
    diags.error(span_of_byte(path, text, *cr), "carriage return without a line feed", "end every line with LF or CRLF");
    return false;
  }
  return true;
}

// yaml-cpp keeps the last of two equal keys; a front matter that says
// two things is an error. Top-level keys start a line.
bool unique_keys(const std::string& path, std::string_view yaml, Diagnostics& diags) {
  std::map<std::string, int> seen;
  int line = 2;
  for (const auto& l : split(yaml, '\n')) {
    const auto colon = l.find(':');
    if (!l.empty() && l[0] != ' ' && l[0] != '#' && l[0] != '-' && colon != std::string::npos) {
      const std::string key = trim(l.substr(0, colon));
      if (seen.count(key)) {
        diags.error({path, line, 1}, "front matter has two '" + key + "' keys",
                    "keep one (line " + std::to_string(seen[key]) + " has the other)");
        return false;
      }
      seen[key] = line;
    }
    ++line;
  }
  return true;
}

// The revision as a number in 1..1000000; 0 (reported) when it is missing
// or not one.
int read_revision(const std::string& path, std::string_view yaml, const std::string& rev, Diagnostics& diags) {
  if (rev.empty()) {
    diags.error({path, 2, 1}, "front matter has no 'revision'", "add revision: <n> (1 = oldest; the newest revision wins)");
    return 0;
  }
  size_t used = 0;
  long v = 0;
  try {
    v = std::stol(rev, &used);
  } catch (...) {
    used = 0;
  }
  if (used != rev.size() || v < 1 || v > 1000000) {
    int line = 2;
    for (auto& l : split(yaml, '\n')) {
      if (starts_with(l, "revision")) break;
      ++line;
    }
    diags.error({path, line, 11}, "revision '" + rev + "' is not a positive whole number", "revisions are 1, 2, 3, ... (1 = oldest)");
    return 0;
  }
  return static_cast<int>(v);
}

// Reads the front matter's keys into `m` (the revision as written into
// `rev`). False (reported) when it is not a YAML mapping of single values.
bool read_front_matter(const std::string& path, std::string_view yaml, FrontMatter& m, std::string& rev, Diagnostics& diags) {
  try {
    YAML::Node root = YAML::Load(std::string(yaml));
    if (!root.IsMap()) throw YAML::Exception(YAML::Mark::null_mark(), "front matter is not a mapping");
    bool bad_value = false;
    auto str = [&](const char* key) -> std::string {
      const YAML::Node v = root[key];
      if (v && !v.IsScalar() && !v.IsNull() && !bad_value) {
        diags.error({path, v.Mark().line + 2, v.Mark().column + 1}, std::string("front matter '") + key + "' is not a single value",
                    "write key: value on one line");
        bad_value = true;
      }
      return v && v.IsScalar() ? v.as<std::string>() : std::string{};
    };
    m.name = str("name");
    m.lang = str("lang");
    m.date = str("date");
    m.origin = str("origin");
    m.translated_from = str("translated-from");
    rev = str("revision");
    if (bad_value) return false;
  } catch (const YAML::Exception& e) {
    const int line = e.mark.is_null() ? 2 : e.mark.line + 2;
    const int col = e.mark.is_null() ? 1 : e.mark.column + 1;
    diags.error({path, line, col}, "malformed front matter: " + e.msg, "front matter is YAML key: value lines between two --- lines");
    return false;
  }
  return true;
}

// Line of a top-level key in the front matter (2 = the line after `---`),
// or 0 when the front matter does not have the key.
int yaml_key_line(std::string_view yaml, std::string_view key) {
  int line = 2;
  for (const auto& l : split(yaml, '\n')) {
    if (starts_with(l, std::string(key) + ":")) return line;
    ++line;
  }
  return 0;
}

// The edition's row of data/editions.tsv fills the keys the front matter
// does not state; a key stated by both must agree. False (reported) on a
// disagreement.
bool apply_sidecar(const std::string& path, std::string_view yaml, const EditionRow& row, FrontMatter& m, std::string& rev,
                   Diagnostics& diags) {
  const std::string where = "data/editions.tsv (line " + std::to_string(row.meta.span.line) + ")";
  bool ok = true;
  auto merge = [&](const char* key, std::string& mine, const std::string& theirs) {
    if (theirs.empty()) return;
    if (mine.empty()) {
      mine = theirs;
    } else if (mine != theirs) {
      diags.error({path, std::max(2, yaml_key_line(yaml, key)), 1},
                  std::string("front matter says ") + key + " '" + mine + "' but its row in " + where + " says '" + theirs + "'",
                  "state each edition fact once: in the front matter or in data/editions.tsv");
      ok = false;
    }
  };
  merge("name", m.name, row.meta.name);
  merge("lang", m.lang, row.meta.lang);
  merge("revision", rev, row.meta.revision > 0 ? std::to_string(row.meta.revision) : std::string{});
  merge("date", m.date, row.meta.date);
  merge("origin", m.origin, row.origin);
  merge("translated-from", m.translated_from, row.meta.translated_from);
  return ok;
}

// --- bounds checked before cmark-gfm parses a body --------------------------

// Where the content of a line starts after its container markers (block
// quotes '>', list items "- ", "* ", "+ ", "1. ", "1) "), how many there
// are, and where the one past kMaxBlockNesting starts (npos when none).
size_t after_markers(std::string_view line, int& depth, size_t& too_deep_at) {
  size_t i = 0;
  depth = 0;
  too_deep_at = std::string_view::npos;
  const auto count = [&](size_t at) {
    if (++depth == limits::kMaxBlockNesting + 1) too_deep_at = at;
  };
  for (;;) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    if (i >= line.size()) return i;
    const char c = line[i];
    if (c == '>') {
      count(i);
      ++i;
      continue;
    }
    size_t j = i;
    if (c == '-' || c == '*' || c == '+') {
      j = i + 1;
    } else {
      while (j < line.size() && j - i < 9 && line[j] >= '0' && line[j] <= '9') ++j;
      if (j == i || j >= line.size() || (line[j] != '.' && line[j] != ')')) return i;
      ++j;
    }
    if (j < line.size() && line[j] != ' ' && line[j] != '\t') return i;
    count(i);
    i = j;
  }
}

std::string_view trim_view(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// A GitHub table's delimiter row: only '-', ':', '|' and blanks, with a '-'
// and a '|' (cmark-gfm starts a table where one follows a header line).
bool delimiter_row(std::string_view s) {
  return s.find('-') != std::string_view::npos && s.find('|') != std::string_view::npos &&
         s.find_first_not_of("-:| \t") == std::string_view::npos;
}

// A code fence's opening or closing line: 3+ backticks or tildes.
size_t fence_run(std::string_view s, char& ch) {
  if (s.empty() || (s[0] != '`' && s[0] != '~')) return 0;
  ch = s[0];
  size_t n = 0;
  while (n < s.size() && s[n] == ch) ++n;
  return n >= 3 ? n : 0;
}

// Refuses, before cmark-gfm parses the body, what would make it work out of
// proportion to the bytes (base/limits.hpp): a table wider than
// kMaxTableColumns or a row with more cells, tables that make more than
// kMaxTableCells cells in all (every row padded to its table's width), a
// line nesting more than kMaxBlockNesting lists and block quotes. One error,
// at the line, and the document is not parsed. Lines inside code fences are
// code; a table runs from its delimiter row to the next blank line (more
// than cmark-gfm may count: the bound errs on the side of the work).
bool within_parse_bounds(const std::string& path, std::string_view body, int body_line, Diagnostics& diags) {
  const Lines lines(body);
  const auto at = [&](size_t i) { return Span{path, static_cast<int>(i) + body_line, 1}; };
  const std::string hint = "split it; docs/security.md lists the limits, which bound the work of cmark-gfm";
  long long cells = 0;
  size_t width = 0;  // the columns of the table being read, 0 outside tables
  char fence_ch = 0;
  size_t fence_len = 0;  // the open fence's length, 0 outside fences
  for (size_t i = 0; i < lines.lines.size(); ++i) {
    int depth = 0;
    size_t too_deep_at = 0;
    const std::string_view line = lines.lines[i];
    const std::string_view rest = trim_view(line.substr(after_markers(line, depth, too_deep_at)));
    char ch = 0;
    const size_t run = fence_run(rest, ch);
    if (fence_len) {
      if (run >= fence_len && ch == fence_ch && rest.find_first_not_of(ch) == std::string_view::npos) fence_len = 0;
      continue;
    }
    if (run && (ch == '~' || rest.find('`', run) == std::string_view::npos)) {
      fence_len = run;
      fence_ch = ch;
      width = 0;
      continue;
    }
    if (rest.empty()) {
      width = 0;
      continue;
    }
    if (depth > limits::kMaxBlockNesting) {
      Span where = at(i);
      where.col = code_point_column(line, too_deep_at) + 1;  // the marker past the limit
      diags.error(where, "blocks nested more than " + std::to_string(limits::kMaxBlockNesting) + " levels deep",
                  "flatten the nested lists or block quotes");
      return false;
    }
    const bool delimiter = !width && delimiter_row(rest);
    if (!width && !delimiter) continue;
    const int n = raw_cell_count(rest);
    if (n > limits::kMaxTableColumns) {
      diags.error(at(i),
                  std::string(delimiter ? "table of " : "table row of ") + std::to_string(n) + (delimiter ? " columns" : " cells") +
                      ", more than the limit of " + std::to_string(limits::kMaxTableColumns),
                  "a table is at most " + std::to_string(limits::kMaxTableColumns) + " columns wide: " + hint);
      return false;
    }
    if (delimiter) {
      width = static_cast<size_t>(n);
      cells += 2 * n;  // the header and the delimiter row
    } else {
      cells += static_cast<long long>(width);  // a row, padded to the width
    }
    if (cells > limits::kMaxTableCells) {
      diags.error(at(i),
                  "the tables of this document pass the limit of " + std::to_string(limits::kMaxTableCells) +
                      " cells (columns x rows; every row counts the whole width)",
                  "the document's tables are too large for one document: " + hint);
      return false;
    }
  }
  return true;
}

// The body's blocks, by cmark-gfm with the table extension. `body_line`
// is the file line the body starts on.
void read_body(const std::string& path, std::string_view body, int body_line, Document& doc, Diagnostics& diags) {
  std::unique_ptr<cmark_parser, ParserDeleter> parser(cmark_parser_new(CMARK_OPT_DEFAULT));
  attach_extensions(parser.get());
  cmark_parser_feed(parser.get(), body.data(), body.size());
  std::unique_ptr<cmark_node, NodeDeleter> root(cmark_parser_finish(parser.get()));
  const Lines lines(body);
  Walker walker(path, lines, body_line - 1, doc, diags);
  walker.block(root.get(), 0);
}

}  // namespace

std::optional<Document> ingest_markdown(const SourceFile& file, Diagnostics& diags, const EditionRow* sidecar) {
  if (file.bytes.size() > limits::kMaxMarkdownBytes) {
    diags.error({file.path, 0, 0},
                "a markdown edition of " + std::to_string(file.bytes.size()) + " bytes, more than the limit of " +
                    std::to_string(limits::kMaxMarkdownBytes),
                "split the edition; cmark-gfm's memory grows with a markdown file's size (docs/security.md)");
    return std::nullopt;
  }
  std::string_view text = file.bytes;
  if (starts_with(text, "\xEF\xBB\xBF")) text.remove_prefix(3);
  if (!readable_bytes(file.path, text, diags)) return std::nullopt;

  Document doc;
  doc.path = file.path;
  doc.sha256 = sha256_hex(file.bytes);

  std::string_view yaml, body = text;
  int body_line = 1;
  FrontMatter& m = doc.meta;
  m.span = {file.path, 1, 1};
  std::string rev;
  if (split_front_matter(text, yaml, body, body_line)) {
    if (!unique_keys(file.path, yaml, diags) || !read_front_matter(file.path, yaml, m, rev, diags)) return std::nullopt;
  } else if (!sidecar) {
    diags.error({file.path, 1, 1}, "missing front matter",
                "start the file with a YAML block: ---, lang: <en|fr|ja|zh>, revision: <n>, ---; "
                "or, for a file kept as published, give its path a row in data/editions.tsv");
    return std::nullopt;
  }
  if (sidecar) {
    const bool own_facts = yaml_key_line(yaml, "lang") > 0 || yaml_key_line(yaml, "revision") > 0;
    if (!apply_sidecar(file.path, yaml, *sidecar, m, rev, diags)) return std::nullopt;
    if (!own_facts) m.span = sidecar->meta.span;  // the edition facts are stated there
  }
  if (m.lang.empty()) diags.error({file.path, 2, 1}, "front matter has no 'lang'", "add lang: en, fr, ja or zh");
  m.revision = read_revision(file.path, yaml, rev, diags);
  if (m.lang.empty() || m.revision == 0) return std::nullopt;

  if (!within_parse_bounds(file.path, body, body_line, diags)) return std::nullopt;
  read_body(file.path, body, body_line, doc, diags);
  return doc;
}

std::optional<Document> ingest_markdown_page(const SourceFile& file, Diagnostics& diags) {
  std::string_view text = file.bytes;
  if (starts_with(text, "\xEF\xBB\xBF")) text.remove_prefix(3);
  if (!readable_bytes(file.path, text, diags)) return std::nullopt;
  Document doc;
  doc.path = file.path;
  doc.sha256 = sha256_hex(file.bytes);
  doc.meta.span = {file.path, 1, 1};
  read_body(file.path, text, 1, doc, diags);
  return doc;
}

}  // namespace kb
