// Ingest front end for the plain-text exports the seed documents arrived as
// (seeds/README.md): a markdown document whose structure was flattened.
// Headings became bare lines, code fences vanished, `•` and `1.` list
// markers survived, tables became tab-separated lines. This file rebuilds
// the same normalized Document (document.hpp) that the markdown front end
// yields from the hand-restored edition, using only structural cues plus
// the hints the export lost: the edition facts (data/editions.tsv, keyed by
// file name) and the known section headings with their levels
// (data/sections.tsv joined with data/section-kinds.tsv).
//
// Recognition order for a non-blank line (first match wins):
//   `---` → thematic break; a line with a tab → table (run of tab lines);
//   a box-drawing tree (root line + `│├└─` lines) → code "text";
//   `# comment` + command, or a command → code "bash" with its `\`
//   continuations; `• ` / `<n>. ` → list item; a known heading → heading;
//   a standalone bare line that is the document title (level 1) or a
//   family title inside an index section (hints.family_level) → heading;
//   anything else → paragraph.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/text.hpp"
#include "compiler/ingest/bytes.hpp"
#include "compiler/ingest/ingest.hpp"

namespace kb {
namespace {

// Longest family title we accept as a heading, in code points: family
// titles are short names ("Qwen3 (Dense)", "VLM 配方"); anything longer is
// prose that happened to lack final punctuation.
constexpr int kMaxFamilyTitleLength = 40;
constexpr int kTitleLevel = 1;

struct Line {
  std::string_view text;  // without the line terminator (LF or CRLF)
  int number = 0;         // 1-based line in the file
};

bool is_blank(std::string_view s) {
  for (char c : s)
    if (c != ' ' && c != '\t' && c != '\f' && c != '\v') return false;
  return true;
}

std::string_view rtrim_view(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool starts_with_space(std::string_view s) { return !s.empty() && (s[0] == ' ' || s[0] == '\t'); }

int code_point_count(std::string_view s) { return code_point_column(s, s.size()); }

char32_t last_code_point(std::string_view s) {
  if (s.empty()) return 0;
  size_t i = s.size() - 1;
  while (i > 0 && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) --i;
  return next_code_point(s, i);
}

// A line of a box-drawing tree: optional spaces, then a box-drawing char.
bool is_tree_line(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && s[i] == ' ') ++i;
  if (i == s.size()) return false;
  return is_box_drawing(next_code_point(s, i));
}

// Sentence-final punctuation: a line ending with one is prose, not a title.
// A closing parenthesis is not one ("Qwen3 (Dense)" is a family title).
bool ends_sentence(std::string_view s) {
  switch (last_code_point(rtrim_view(s))) {
    case U'.':
    case U'。':
    case U'!':
    case U'！':
    case U'?':
    case U'？':
    case U':':
    case U'：':
    case U';':
    case U'；':
    case U'…':
      return true;
    default:
      return false;
  }
}

bool is_thematic_break(std::string_view s) { return trim(s) == "---"; }
bool has_tab(std::string_view s) { return s.find('\t') != std::string_view::npos; }
bool ends_with_backslash(std::string_view s) {
  s = rtrim_view(s);
  return !s.empty() && s.back() == '\\';
}

// `# ` then text: a shell comment (the zh "#2803 合并后…" is not one).
bool is_comment(std::string_view s) { return starts_with(s, "# "); }

constexpr std::string_view kBullet = "\xE2\x80\xA2 ";  // "• "

// `<digits>. ` → the number and the byte offset of the item text.
bool ordered_marker(std::string_view s, int& number, size_t& text_at) {
  size_t i = 0;
  int n = 0;
  while (i < s.size() && i < 9 && s[i] >= '0' && s[i] <= '9') {
    n = n * 10 + (s[i] - '0');
    ++i;
  }
  if (i == 0 || i + 1 >= s.size() || s[i] != '.' || s[i + 1] != ' ') return false;
  number = n;
  text_at = i + 2;
  return true;
}

bool is_list_line(std::string_view s) {
  int n = 0;
  size_t at = 0;
  return starts_with(s, kBullet) || ordered_marker(s, n, at);
}

class Parser {
 public:
  Parser(const SourceFile& file, const TextExportHints& hints, const std::string& lang, std::vector<Line> lines, size_t skip,
         Diagnostics& diags)
      : file_(file), hints_(hints), lines_(std::move(lines)), skip_(skip), diags_(diags) {
    // Known headings: the edition's language first, then the base language
    // (parts of the zh and ja editions are left in it), then "*".
    for (const std::string& l : {lang, hints_.base_language, std::string("*")})
      for (const auto& h : hints_.headings)
        if (h.lang == l) known_.emplace(normalize_space(h.text), h.level);  // first wins
  }

  std::vector<Block> run() {
    size_t i = 0;
    while (i < lines_.size()) {
      if (blank_at(i)) {
        ++i;
        continue;
      }
      i = block_at(i);
    }
    return std::move(blocks_);
  }

 private:
  // True for blank lines and for the skipped front-matter line.
  bool blank_at(size_t i) const { return i >= lines_.size() || i == skip_ || is_blank(lines_[i].text); }
  std::string_view text(size_t i) const { return lines_[i].text; }
  Span span(size_t i, int col = 1) const { return Span{file_.path, lines_[i].number, col}; }

  // A command line: starts like a launch command, or ends with a `\` that
  // the next (non-blank) line continues. Tab lines are table rows.
  bool is_command_start(size_t i) const {
    if (blank_at(i)) return false;
    const std::string_view s = text(i);
    if (has_tab(s) || starts_with_space(s)) return false;
    for (std::string_view p : {"uv run ", "python ", "python3 ", "./"})
      if (starts_with(s, p)) return true;
    return ends_with_backslash(s) && !blank_at(i + 1) && starts_with_space(text(i + 1));
  }

  bool is_tree_root(size_t i) const { return !blank_at(i + 1) && is_tree_line(text(i + 1)); }

  const int* known_level(std::string_view s) const {
    auto it = known_.find(normalize_space(s));
    return it == known_.end() ? nullptr : &it->second;
  }

  // Does line i start a block other than a paragraph? (Ends a paragraph.)
  bool starts_structure(size_t i) const {
    const std::string_view s = text(i);
    return is_thematic_break(s) || has_tab(s) || is_tree_line(s) || is_tree_root(i) || (is_comment(s) && is_command_start(i + 1)) ||
           is_command_start(i) || is_list_line(s) || known_level(s) != nullptr;
  }

  Block& emit(BlockKind kind, size_t first, size_t last) {
    Block b;
    b.kind = kind;
    b.span = span(first);
    b.end_line = lines_[last].number;
    blocks_.push_back(std::move(b));
    if (kind != BlockKind::ListItem) list_run_ = 0;
    return blocks_.back();
  }

  // Parses the block starting at non-blank line i; returns the next line.
  size_t block_at(size_t i) {
    const std::string_view s = text(i);
    if (is_thematic_break(s)) {
      emit(BlockKind::ThematicBreak, i, i);
      return i + 1;
    }
    if (has_tab(s)) return table_at(i);
    if (is_tree_line(s) || is_tree_root(i)) return tree_at(i);
    if (is_comment(s) && is_command_start(i + 1)) return command_at(i, i + 1);
    if (is_command_start(i)) return command_at(i, i);
    if (is_list_line(s)) return list_item_at(i);
    if (const int* level = known_level(s)) {
      heading(i, *level);
      last_known_level_ = *level;
      return i + 1;
    }
    const bool standalone = (i == 0 || blank_at(i - 1)) && blank_at(i + 1);
    if (standalone && !ends_sentence(s)) {
      if (blocks_.empty()) {  // the document title
        heading(i, kTitleLevel);
        return i + 1;
      }
      if (last_known_level_ > 0 && last_known_level_ < hints_.family_level && code_point_count(trim(s)) <= kMaxFamilyTitleLength) {
        heading(i, hints_.family_level);
        return i + 1;
      }
    }
    return paragraph_at(i);
  }

  void heading(size_t i, int level) {
    Block& b = emit(BlockKind::Heading, i, i);
    b.level = level;
    b.text = normalize_space(text(i));
  }

  size_t table_at(size_t i) {
    size_t j = i;
    while (j < lines_.size() && j != skip_ && has_tab(text(j))) ++j;
    Block& b = emit(BlockKind::Table, i, j - 1);
    for (size_t k = i; k < j; ++k) {
      const std::string_view s = text(k);
      std::vector<Cell> row;
      size_t start = 0, counted = 0;  // columns are counted on from the previous cell (linear in the row)
      int col = 0;
      for (;;) {
        const size_t tab = s.find('\t', start);
        const std::string_view raw = s.substr(start, tab == std::string_view::npos ? s.npos : tab - start);
        size_t lead = 0;
        while (lead < raw.size() && (raw[lead] == ' ' || raw[lead] == '\f' || raw[lead] == '\v')) ++lead;
        col += code_point_column(s.substr(counted), start + lead - counted);
        counted = start + lead;
        row.push_back(Cell{trim(raw), span(k, col + 1)});
        if (tab == std::string_view::npos) break;
        start = tab + 1;
      }
      if (!b.rows.empty() && row.size() != b.rows[0].size()) {
        diags_.error(span(k), "table row has " + std::to_string(row.size()) + " cells, the header has " + std::to_string(b.rows[0].size()),
                     "separate cells with exactly one tab; every row needs the header's " + std::to_string(b.rows[0].size()) + " cells");
        continue;
      }
      b.rows.push_back(std::move(row));
    }
    return j;
  }

  size_t tree_at(size_t i) {
    size_t j = i + 1;
    while (!blank_at(j) && is_tree_line(text(j))) ++j;
    Block& b = emit(BlockKind::Code, i, j - 1);
    b.text_line = lines_[i].number;
    b.info = "text";
    b.text = joined(i, j);
    return j;
  }

  // A bash block: the comment line (first < cmd) if any, the command line
  // and every line continuing a line that ends with `\`.
  size_t command_at(size_t first, size_t cmd) {
    size_t j = cmd;
    while (ends_with_backslash(text(j)) && !blank_at(j + 1)) ++j;
    Block& b = emit(BlockKind::Code, first, j);
    b.text_line = lines_[first].number;
    b.info = "bash";
    b.text = joined(first, j + 1);
    return j + 1;
  }

  std::string joined(size_t from, size_t to) const {
    std::string out;
    for (size_t k = from; k < to; ++k) {
      if (k > from) out += '\n';
      out += text(k);
    }
    return out;
  }

  size_t list_item_at(size_t i) {
    const std::string_view s = text(i);
    int number = 0;
    size_t at = 0;
    const bool ordered = !starts_with(s, kBullet);
    if (ordered)
      ordered_marker(s, number, at);
    else
      at = kBullet.size();
    // A run continues over blank lines, as a markdown list does; any other
    // block, or the other kind of marker, starts a new one.
    if (list_run_ == 0 || list_ordered_ != ordered) list_run_ = 0;
    ++list_run_;
    list_ordered_ = ordered;
    const int position = list_run_;
    Block& b = emit(BlockKind::ListItem, i, i);
    b.level = 1;
    b.ordered = ordered;
    b.ordinal = ordered ? number : position;
    b.text = trim(s.substr(at));
    return i + 1;
  }

  size_t paragraph_at(size_t i) {
    size_t j = i + 1;
    while (!blank_at(j) && !starts_structure(j)) ++j;
    Block& b = emit(BlockKind::Paragraph, i, j - 1);
    for (size_t k = i; k < j; ++k) {
      if (k > i) b.text += ' ';  // a wrapped line, as a markdown soft break
      b.text += trim(text(k));
    }
    return j;
  }

  const SourceFile& file_;
  const TextExportHints& hints_;
  std::vector<Line> lines_;
  size_t skip_;  // index of the front-matter line, or npos
  Diagnostics& diags_;
  std::map<std::string, int> known_;  // normalized heading text → level
  std::vector<Block> blocks_;
  int last_known_level_ = 0;  // level of the nearest previous known heading
  int list_run_ = 0;          // items so far in the current list run
  bool list_ordered_ = false;
};

std::string base_name(const std::string& path) {
  const size_t slash = path.find_last_of("/\\");
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

std::optional<Document> ingest_text_export(const SourceFile& file, const TextExportHints& hints, Diagnostics& diags) {
  std::string_view bytes = file.bytes;
  if (starts_with(bytes, "\xEF\xBB\xBF")) bytes.remove_prefix(3);

  // Byte-level problems, one per file (as in the markdown front end); the
  // edition is still looked up so an unknown file is reported too.
  bool usable = true;
  if (auto bad = find_invalid_utf8(bytes)) {
    diags.error(span_of_byte(file.path, bytes, *bad), "invalid UTF-8 in text export", "re-export the document as UTF-8");
    usable = false;
  } else if (const size_t nul = bytes.find('\0'); nul != std::string_view::npos) {
    diags.error(span_of_byte(file.path, bytes, nul), "NUL byte in a text file", "re-export the document as UTF-8 text");
    usable = false;
  }

  const std::string name = base_name(file.path);
  const TextExportHints::Edition* edition = nullptr;
  for (const auto& e : hints.editions)
    if (e.origin == name) {
      edition = &e;
      break;
    }
  if (!edition) {
    diags.error(Span{file.path, 1, 1}, "unknown text export '" + name + "'",
                "add a row for '" + name + "' to data/editions.tsv (origin, name, lang, revision, date, source)");
    usable = false;
  }
  if (!usable) return std::nullopt;

  Document doc;
  doc.path = file.path;
  doc.sha256 = sha256_hex(file.bytes);
  doc.meta = edition->meta;
  if (doc.meta.origin.empty()) doc.meta.origin = name;
  doc.meta.span = Span{file.path, 1, 1};

  std::vector<Line> lines;
  size_t start = 0;
  int number = 1;
  while (start < bytes.size()) {
    size_t end = bytes.find('\n', start);
    if (end == std::string_view::npos) end = bytes.size();
    std::string_view s = bytes.substr(start, end - start);
    if (!s.empty() && s.back() == '\r') s.remove_suffix(1);
    lines.push_back(Line{s, number++});
    start = end + 1;
  }

  // The skill id on the first non-blank line is front matter that survived.
  size_t skip = std::string::npos;
  for (size_t k = 0; k < lines.size(); ++k) {
    if (is_blank(lines[k].text)) continue;
    if (!doc.meta.name.empty() && trim(lines[k].text) == doc.meta.name) skip = k;
    break;
  }

  Parser parser(file, hints, doc.meta.lang, std::move(lines), skip, diags);
  doc.blocks = parser.run();
  return doc;
}

}  // namespace kb
