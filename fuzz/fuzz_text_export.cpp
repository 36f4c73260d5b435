// libFuzzer target: the plain-text-export front end of kbc (the seed
// documents' format), then extract and resolve, as `kbc build` runs them.
// A text export is known by its file name (data/editions.tsv): the first
// input byte picks the edition (or an unknown name), the rest is the file.
// Seeds: ../shared/seeds/*.txt with their edition byte (fuzz/seed_corpus.py).
#include <cstddef>
#include <cstdint>
#include <string>

#include "extract/extract.hpp"
#include "fuzz_common.hpp"
#include "ingest/ingest.hpp"
#include "resolve/resolve.hpp"

namespace {
const kb::TextExportHints& hints() {
  static const kb::TextExportHints h = kbfuzz::vocab().text_export_hints();
  return h;
}
}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)hints();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const kb::Vocab& vocab = kbfuzz::vocab();
  const auto& h = hints();
  const std::size_t pick = data[0] % (h.editions.size() + 1);
  const std::string name = pick < h.editions.size() ? h.editions[pick].origin : "999_unknown.txt";
  kb::SourceFile file{name, std::string(reinterpret_cast<const char*>(data) + 1, size - 1)};
  kb::Diagnostics diags;
  auto doc = kb::ingest_text_export(file, h, diags);
  if (!doc) {
    if (!diags.has_errors()) kbfuzz::invariant_failed("ingest_text_export gave no document and no error", name);
    return 0;
  }
  kbfuzz::check_document(*doc, diags, kbfuzz::count_lines(file.bytes));
  if (diags.has_errors() || !vocab.languages.count(doc->meta.lang)) return 0;
  kb::Extracted extracted;
  kb::extract(*doc, vocab, extracted, diags);
  (void)kb::resolve(extracted, vocab, diags);
  for (const auto& d : diags.all()) (void)d.render();
  return 0;
}
