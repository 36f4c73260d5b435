// libFuzzer target: kbq's query language. parse() must never throw or
// crash on any bytes, its error span must lie inside the query (kbq prints a
// caret under it), and a query that parses must round-trip: its canonical
// form parses to the same constraints (docs/query-language.md). The lexicon
// is the real one (kb-sources/data/lexicon.tsv + gpus.tsv). Set
// KB_FUZZ_NO_ROUNDTRIP=1 to look for crashes only.
// Seeds: the golden and bad queries, lexicon phrases, and a few of them
// marked for the length dimension (expand, below; fuzz/seed_corpus.py).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "base/dsl/parse.hpp"
#include "base/text.hpp"
#include "base/tsv.hpp"
#include "fuzz_common.hpp"
#include "query/kbq.hpp"

// The error renderer (its caret line) lives beside the other renderers,
// which link kbq's KB access; the KB that kbq embeds (query/embed.S.in) is
// never opened here, so an empty one stands in for it.
extern "C" const unsigned char kb_embedded_begin[] = {0};
extern "C" const unsigned char kb_embedded_end[] = {0};

namespace {

using kbfuzz::invariant_failed;

const kbq::dsl::Lexicon& lexicon() {
  static const kbq::dsl::Lexicon lex = [] {
    kb::Diagnostics diags;
    const auto rows = kb::load_tsv(kbfuzz::data_dir() + "/lexicon.tsv", diags, {"lang", "kind", "word", "value"});
    const auto gpus = kb::load_tsv(kbfuzz::data_dir() + "/gpus.tsv", diags);
    if (!rows || !gpus || diags.has_errors()) {
      diags.print(stderr);
      std::abort();
    }
    std::vector<std::string> keys;
    for (const auto& row : gpus->rows) keys.push_back(gpus->get(row, "gpu_key"));
    return kbq::dsl::Lexicon(kbq::dsl::lexicon_rows_from_tsv(*rows), keys);
  }();
  return lex;
}

// Code points of the query, or -1 when it is not valid UTF-8 (the columns
// of invalid bytes are a matter of policy, so their spans are not checked).
int code_points(const std::string& text) {
  if (kb::find_invalid_utf8(text)) return -1;
  int n = 0;
  for (char ch : text) n += (static_cast<unsigned char>(ch) & 0xC0) != 0x80;
  return n;
}

// A span must lie inside the query: columns 1..n+1 of its n code points
// (a point at the end is where a missing word would go).
void check_span(int n, const kbq::dsl::Span& span, const std::string& what) {
  if (span.col < 1 || span.len < 0) invariant_failed(what + ": negative span", "");
  if (n < 0) return;
  if (span.col - 1 + span.len > n + 1 || span.col > n + 1)
    invariant_failed(what + ": span beyond the query",
                     "col " + std::to_string(span.col) + " len " + std::to_string(span.len) + " of " + std::to_string(n));
}

}  // namespace

// The length dimension: an input that starts with 0xFF (never a byte of
// UTF-8, so no seed question starts so) is its remainder repeated up to
// 2^k bytes, k = 10 + its second byte % 7 (1 KiB to 64 KiB): long questions
// from short inputs, in every shape the fuzzer finds. parse() is called
// without kbq's length limit (kbq::dsl::check_input), so a path that is not
// linear in the input shows up as a -timeout.
std::string expand(const std::uint8_t* data, std::size_t size) {
  const std::string raw(reinterpret_cast<const char*>(data), size);
  if (size < 3 || data[0] != 0xFF) return raw;
  const std::size_t target = std::size_t{1} << (10 + data[1] % 7);
  const std::string_view unit = std::string_view(raw).substr(2);
  std::string out;
  out.reserve(target);
  while (out.size() + unit.size() <= target) out += unit;
  return out;
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)lexicon();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const bool roundtrip = std::getenv("KB_FUZZ_NO_ROUNDTRIP") == nullptr;
  const std::string text = expand(data, size);
  const auto& lex = lexicon();
  const auto r = kbq::dsl::parse(lex, text);
  (void)kbq::dsl::describe(r.query);
  if (!r) {
    check_span(code_points(text), r.error->span, "error '" + r.error->message + "'");
    kbq::RenderOptions ro;
    (void)kbq::render_error(kbq::Error{r.error->message, r.error->hint, r.error->span.col, r.error->span.len}, text, ro);
    return 0;
  }
  const int n = code_points(text);
  for (const auto& t : r.query.terms) check_span(n, t.span, "term '" + t.text + "'");
  const std::string canonical = kbq::dsl::to_canonical(r.query);
  if (!roundtrip) return 0;
  const auto again = kbq::dsl::parse(lex, canonical);
  if (!again) invariant_failed("canonical form does not parse", "query '" + text + "' -> '" + canonical + "': " + again.error->message);
  if (!(again.query.constraints() == r.query.constraints()))
    invariant_failed(
        "canonical form parses to other constraints",
        "query '" + text + "' -> '" + canonical + "': [" + kbq::dsl::describe(r.query) + "] vs [" + kbq::dsl::describe(again.query) + "]");
  return 0;
}
