// Markdown escaping: text from sources or a KB written into Markdown so
// that a renderer reads back exactly that text and nothing else (no
// emphasis, link, raw HTML, block or fence the writer did not make). One
// home for kbc generate's pages and kbq's --format markdown answers, one
// function per context a value can land in.
#pragma once

#include <string>
#include <vector>

namespace kb::md {

// Plain text for a paragraph, list item, heading, block quote or (with
// `in_table`) a table cell: identifier-like runs with '_' or '*' become code
// spans, other specials are backslash-escaped, and what would open a block
// at a line's start ('#', '>', '-', '+', '=', "1.") is neutralized. Line
// breaks: kept between lines (trimmed, blank lines dropped), joined with
// spaces in a table cell.
std::string text(const std::string& s, bool in_table = false);
// A code span holding `s` literally: as many backticks around it as it
// needs (one more than its longest run), padded when it starts or ends
// with one; '|' escaped in a table cell; a line break becomes a space (as
// a renderer shows it), so that no line of it can open a block.
std::string code(const std::string& s, bool in_table = false);
// A fenced code block of `body` with an info string (one line, escaped):
// longer than any run of its fence character in the body, so the body
// cannot close it; tildes when the info string holds a backtick.
std::string fence(const std::string& body, const std::string& info);
// A GitHub table of cells already escaped for a cell (text(.., true), code(.., true)).
std::string table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows);

}  // namespace kb::md
