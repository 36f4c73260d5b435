// Nothing raw reaches a terminal or a page: the invisible and control
// characters kbc refuses in sources and kbq escapes in everything it
// prints. The class is Unicode's, read from ICU's character database at
// build time (base/unicode_gen.cpp writes base/invisible.hpp):
//   - Cc, the controls but tab and line feed: ESC starts the CSI and OSC
//     sequences that move the cursor, retitle the window or write the
//     clipboard; DEL; the C1 controls (U+009B is CSI on its own);
//   - Cf, the format characters: zero-width space, joiners, the
//     bidirectional marks, embeddings, overrides and isolates (U+200E,
//     U+200F, U+061C, U+202A..U+202E, U+2066..U+2069: they reorder what a
//     reader sees, e.g. of a launch command, without changing what is
//     copied), the byte order mark U+FEFF, the soft hyphen, tags;
//   - Zl and Zp, U+2028 and U+2029 (a line break to some viewers, none to
//     others);
//   - the other default-ignorable code points (fillers such as U+3164),
//     but not the variation selectors, which pick a glyph's form (the
//     emoji "⚠️") and hide nothing.
// A byte of invalid UTF-8 is treated as one too (a lone 0x9B is CSI to an
// 8-bit terminal). "Control character" below means any of these.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kb {

// Is this code point a control character in the sense above (tab and line
// feed are not)?
bool is_control(char32_t cp);

// Byte offset of the first control character of source text, or nullopt.
// Tab, line feed and carriage return are allowed (line ends are checked by
// the ingest stage), and so is a byte order mark at the very start (a
// file's encoding signature); invalid UTF-8 is checked there too and
// skipped here.
std::optional<std::size_t> find_control(std::string_view text);

// "U+001B".
std::string code_point_name(char32_t cp);

enum class EscapeNewlines { No, Yes };

// The text with every control character written visibly, as the C escape
// kbq users can read and search for: \x1b, \x7f, \u009b, \u202e,
// \U000e0001 (past U+FFFF); a byte of invalid UTF-8 as \xNN. With
// EscapeNewlines::Yes (one-line output: file names, diagnostics) also \n,
// \r, \t. Text without any comes back as is.
std::string escape_controls(std::string_view text, EscapeNewlines newlines = EscapeNewlines::No);

// escape_controls for a terminal in colour: the exact sequences of `keep`
// (kbq's own SGR colour codes) pass through, every other control is escaped.
std::string escape_controls_keeping(std::string_view text, const std::vector<std::string_view>& keep);

// JSON text as a serializer wrote it (C0 controls already \u00XX): the
// other control characters inside its strings written as \u escapes too
// (a surrogate pair past U+FFFF), which leaves the JSON value unchanged.
std::string escape_json_controls(std::string_view json);
// The same for a string the caller gives up: returned as it is, without a
// copy, when nothing needs escaping (a --batch record is ~30 KB).
std::string escape_json_controls_owned(std::string json);

// Appends `s` as a JSON string exactly as nlohmann::json's dump() writes it
// (ensure_ascii off): UTF-8 kept as it is, '"', '\\' and the control
// characters below U+0020 escaped (\b \f \n \r \t, the others \u00xx).
// The bytes are copied in runs between those that need escaping, eight at
// a time where none does. Returns false, appending nothing, when `s` is not
// UTF-8 (which JSON cannot hold): the caller says whose text it is.
[[nodiscard]] bool append_json_string(std::string_view s, std::string& out);

// A name kbq prints inside code spans and launch commands (a recipe, its
// function, a model key, a dataset preset, a GPU key): letters, digits,
// '_', '.' and '-', not starting with '.' or '-' (an option), at most
// limits::kMaxNameBytes. The empty name (no value) is one too.
bool is_name(std::string_view s);

// --- shell text: what may reach a command kbq prints ----------------------
// A command is built from a KB's text (a document's entry-point command,
// the planner's multi-node flags, the launcher's option names) and values
// (recipe names, dataset presets, sizes, the user's overrides). The text is
// checked, the values are quoted, so that a crafted KB cannot make a
// printed command do more than run the launcher with its arguments.

// `v` in single quotes for a POSIX shell ('it'\''s').
std::string shell_quote(std::string_view v);
// `v` as one shell word: as it is when it holds only [A-Za-z0-9_./:=,+-],
// else shell_quote(v).
std::string shell_word(std::string_view v);
// What in command text would be shell syntax, or nullopt: the text may hold
// letters, digits, spaces, the punctuation of options and paths
// (- _ . / : = , + @ %), a line continuation (" \" at a line's end), a
// variable of the environment ($NODE_RANK, $MASTER_ADDR: '$' and a name,
// never "$(" or "${"), and single-quoted words (what shell_word writes).
// Anything else (; | & < > ( ) ` " * ? [ ] { } ~ # ! a lone '\' or a line
// feed, a control character) is named: "';' at byte 12".
std::optional<std::string> shell_problem(std::string_view text);
// The words a POSIX shell splits command text into, without expanding
// anything: blanks separate words, a backslash-newline joins lines, a
// backslash outside quotes keeps the next character, single quotes keep
// everything to the next one, double quotes everything but \\, \" \$ \`
// (unescaped there). `$NAME` stays as written (what Python's
// shlex.split(posix=True) gives: the JSON answer's argv).
// Throws std::invalid_argument for an unterminated quote or escape.
std::vector<std::string> shell_split(std::string_view text);
// Is `name` an option name: "-" or "--", then [A-Za-z0-9][A-Za-z0-9_-]*?
bool is_shell_option(std::string_view name);

// The first n code points of valid UTF-8 text, with "…" when cut.
std::string first_code_points(std::string_view text, std::size_t n);

}  // namespace kb
