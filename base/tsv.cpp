// TSV reader for kb-sources/data (see tsv.hpp).
#include "base/tsv.hpp"

#include "base/escape.hpp"
#include "base/files.hpp"
#include "base/limits.hpp"
#include "base/text.hpp"

namespace kb {

int TsvTable::column(std::string_view name) const {
  for (size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return static_cast<int>(i);
  return -1;
}

const std::string& TsvTable::get(const TsvRow& row, std::string_view name) const {
  static const std::string empty;
  const int c = column(name);
  if (c < 0 || static_cast<size_t>(c) >= row.cells.size()) return empty;
  return row.cells[static_cast<size_t>(c)];
}

Span TsvTable::span(const TsvRow& row, std::string_view column_name) const {
  int col = 1;
  const int c = column_name.empty() ? -1 : column(column_name);
  for (int i = 0; i < c && static_cast<size_t>(i) < row.cells.size(); ++i)
    col += code_point_column(row.cells[static_cast<size_t>(i)], row.cells[static_cast<size_t>(i)].size()) + 1;
  return Span{path, row.line, col};
}

TsvTable parse_tsv(const std::string& path, std::string_view text, Diagnostics& diags, const std::vector<std::string>& required) {
  TsvTable t;
  t.path = path;
  if (auto bad = find_invalid_utf8(text)) {
    diags.error(span_of_byte(path, text, *bad), "invalid UTF-8 byte sequence", "save the file as UTF-8");
    return t;
  }
  // A control character (ESC, a C1 or bidirectional control) would reach
  // terminals and generated pages through every value of the file.
  if (auto bad = find_control(text)) {
    size_t at = *bad;
    diags.error(span_of_byte(path, text, *bad), "control character " + code_point_name(next_code_point(text, at)) + " in a data file",
                "remove it: data values reach terminals and generated pages");
    return t;
  }
  if (starts_with(text, "\xEF\xBB\xBF")) text.remove_prefix(3);
  int line_no = 0;
  // Lines and cells are views of `text`: each cell is copied once, trimmed
  // (a code-facts snapshot has some 70 000 rows).
  for (size_t start = 0; start <= text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> cells;
    cells.reserve(t.header.empty() ? 8 : t.header.size());
    for (size_t from = 0;;) {
      const size_t tab = line.find('\t', from);
      cells.push_back(trim(line.substr(from, tab == std::string_view::npos ? std::string_view::npos : tab - from)));
      if (tab == std::string_view::npos) break;
      from = tab + 1;
    }
    if (t.header.empty()) {
      t.header = cells;
      continue;
    }
    if (cells.size() != t.header.size()) {
      diags.error({path, line_no, 1},
                  "row has " + std::to_string(cells.size()) + " cells, the header has " + std::to_string(t.header.size()),
                  "separate cells with exactly one tab; leave a cell empty rather than dropping it");
      continue;
    }
    t.rows.push_back({std::move(cells), line_no});
  }
  if (t.header.empty()) {
    diags.error({path, 1, 1}, "no header line", "the first non-comment line names the columns");
    return t;
  }
  for (const auto& r : required)
    if (t.column(r) < 0) diags.error({path, 1, 1}, "missing column '" + r + "'", "add the column to the header line");
  return t;
}

std::optional<TsvTable> load_tsv(const std::string& path, Diagnostics& diags, const std::vector<std::string>& required,
                                 std::uint64_t max_bytes) {
  auto text = read_regular_file(path, max_bytes ? max_bytes : limits::kMaxDataFileBytes);
  if (!text.bytes) {
    diags.error({path, 0, 0}, "cannot read data file: " + text.error, "check that the file exists and is readable");
    return std::nullopt;
  }
  return parse_tsv(path, *text.bytes, diags, required);
}

TsvTable load_sourced_tsv(const std::string& path, Diagnostics& diags, std::vector<std::string> required) {
  required.push_back("source");
  TsvTable t;
  if (auto loaded = load_tsv(path, diags, required)) t = std::move(*loaded);
  for (const auto& row : t.rows)
    if (t.get(row, "source").empty())
      diags.error(t.span(row, "source"), "row has no source", "every data row cites where its fact comes from");
  return t;
}

}  // namespace kb
