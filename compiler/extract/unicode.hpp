// Names for the compiler: the forms two spellings of one name are compared
// in (NFKC and NFKC_Casefold are base/text.hpp's, through utf8proc). A heading, a family title or a benchmark model
// written with full-width brackets, another case or a zero-width space is
// the same name as its plain ASCII spelling; these functions say so, and
// every comparison of names across editions goes through them.
#pragma once

#include <string>
#include <string_view>

#include "base/text.hpp"

namespace kb {

// A name's identity: NFKC_Casefold with every white space removed, so
// "DeepSeek V3（671B MoE）" and "DeepSeek V3 (671B MoE)" are one model and
// "Qwen3 (Dense)" one family whatever the spacing.
std::string name_key(std::string_view s);

// NFKC with typographic spacing made uniform: runs of white space become one
// space, none just inside brackets, one before an opening bracket that
// follows a letter or digit. "DeepSeek V3（671B MoE）" → "DeepSeek V3 (671B MoE)".
std::string display_name(std::string_view s);

// The first code point that is invisible or not printable (a zero-width
// space, a control character, a format character): its byte offset, or
// npos. Such a character makes two names that look equal differ.
size_t find_invisible(std::string_view s);

// "U+200B ZERO WIDTH SPACE": the code point at byte `at`, for diagnostics.
std::string describe_code_point(std::string_view s, size_t at);

}  // namespace kb
