// Internals of the KB reader (query/kb/*.cpp only).
#pragma once

#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "base/checked.hpp"
#include "base/kinds.hpp"
#include "base/limits.hpp"
#include "base/sqlite.hpp"
#include "base/stored_rows.hpp"
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

// The queries of rows_compiled's parts of a language (`lang`, the base
// language `base`): "labels/<lang>", its labels (load.cpp; an answer reads
// the base language's part too); "cited/<lang>", the texts of the entities
// of each kind the stages cite, in kind order (kb.cpp).
std::vector<kb::StoredQuery> labels_queries(const std::string& lang);
std::vector<kb::StoredQuery> cited_queries(const std::string& lang, const std::string& base, const std::set<std::string>& kinds);
// The code facts' dictionaries every recipe's packed facts name: the
// fields, then the files (rows_compiled's part 'facts').
std::vector<kb::StoredQuery> fact_dictionary_queries();

// Runs `read(next)`, where each next() gives the rows of the next of
// `queries`: as kbc stored them in rows_compiled's part `part`
// (base/stored_rows.hpp), else, when the KB has no such part and
// `required` is false, by running them (kbc stores the parts of the KB's
// languages only). `read` reads either kind of row alike (a generic
// lambda), with the same checks. A required part missing, or a stored value
// that is not what this kbq compiles, is a KbValueError naming the part.
template <class Read>
void read_part(kb::Db& db, const std::string& part, bool required, const std::vector<kb::StoredQuery>& queries, Read&& read) {
  const std::string bytes = kb::read_rows_part(db, part);
  std::size_t i = 0;
  if (bytes.empty() && required)
    throw kb::KbValueError("rows_compiled", "bytes", "'" + part + "'", "missing: kbc writes the rows of each language an answer reads");
  if (bytes.empty()) {
    read([&] {
      const kb::StoredQuery& q = queries.at(i++);
      kb::Stmt st(db, q.sql);
      for (std::size_t p = 0; p < q.params.size(); ++p) st.bind(static_cast<int>(p + 1), q.params[p]);
      return st;
    });
    return;
  }
  try {
    kb::StoredResults stored(bytes, kb::limits::kMaxKbTextBytes);
    read([&] { return stored.next(queries.at(i++)); });
    stored.finish();
  } catch (const kb::stored::Error& e) {
    throw kb::KbValueError("rows_compiled", "bytes", "'" + part + "'", e.what());
  }
}

}  // namespace kbq::kb_int
