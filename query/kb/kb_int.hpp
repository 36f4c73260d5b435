// Internals of the KB reader (query/kb/*.cpp only).
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "base/kinds.hpp"
#include "base/sqlite.hpp"
#include "base/text.hpp"

namespace kbq::kb_int {

// An enum column; a spelling this kbq does not know is a damaged KB.
template <typename E>
inline E read_kind(std::string_view text, const char* what) {
  if (auto v = kb::parse_kind<E>(text)) return *v;
  throw std::runtime_error("knowledge base: unknown " + std::string(what) + " '" + std::string(text) + "' (rebuild it with kbc build)");
}
template <typename E>
inline E read_kind(kb::Stmt& st, int c, const char* what) {
  return read_kind<E>(st.view(c), what);
}

// A comma-separated list of the KB, empty items dropped.
inline std::vector<std::string> comma_list(const std::string& s) {
  std::vector<std::string> out;
  for (auto& x : kb::split(s, ','))
    if (!x.empty()) out.push_back(std::move(x));
  return out;
}

}  // namespace kbq::kb_int
