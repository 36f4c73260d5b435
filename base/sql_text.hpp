// The normalized text of a CREATE statement, which the KB structure check
// compares (base/kb_schema.cpp) with the one base/schema.sql gives
// (base/schema_gen.cpp writes it at build time): comments dropped, runs of
// whitespace made one space, no space next to ( ) , ; — so two statements
// that differ only in layout or comments compare equal, and any difference
// in a name, a type, a constraint or a default does not. Header-only: the
// build tool includes it without linking the base library.
#pragma once

#include <string>
#include <string_view>

namespace kb {

inline std::string normalized_sql(std::string_view sql) {
  std::string out;
  out.reserve(sql.size());
  bool space = false;  // whitespace or a comment seen since the last character kept
  const auto tight = [](char c) { return c == '(' || c == ')' || c == ',' || c == ';'; };
  for (std::size_t i = 0; i < sql.size();) {
    const char c = sql[i];
    if (c == '-' && i + 1 < sql.size() && sql[i + 1] == '-') {
      while (i < sql.size() && sql[i] != '\n') ++i;
      space = true;
      continue;
    }
    if (c == '/' && i + 1 < sql.size() && sql[i + 1] == '*') {
      const auto end = sql.find("*/", i + 2);
      i = end == std::string_view::npos ? sql.size() : end + 2;
      space = true;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      space = true;
      ++i;
      continue;
    }
    if (space && !out.empty() && !tight(out.back()) && !tight(c)) out += ' ';
    space = false;
    if (c == '\'' || c == '"' || c == '`' || c == '[') {
      // A literal or a quoted name, kept byte for byte.
      const char close = c == '[' ? ']' : c;
      std::size_t j = i + 1;
      for (; j < sql.size(); ++j)
        if (sql[j] == close) {
          if (close != ']' && j + 1 < sql.size() && sql[j + 1] == close) {
            ++j;  // a doubled quote inside
            continue;
          }
          break;
        }
      const std::size_t end = j < sql.size() ? j + 1 : sql.size();
      out.append(sql.substr(i, end - i));
      i = end;
      continue;
    }
    out += c;
    ++i;
  }
  return out;
}

}  // namespace kb
