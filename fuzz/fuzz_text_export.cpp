// libFuzzer target: the plain-text-export front end of kbc (the seed
// documents' format), then extract and resolve, as `kbc build` runs them.
// A text export is known by its file name (data/editions.tsv): the first
// input byte picks the edition (or an unknown name), the rest is the file.
// Seeds: ../shared/seeds/*.txt with their edition byte (fuzz/seed_corpus.py).
#include <cstddef>
#include <cstdint>
#include <string>

#include "compiler/ingest/ingest.hpp"
#include "fuzz_common.hpp"

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
  const auto& h = hints();
  const std::size_t pick = data[0] % (h.editions.size() + 1);
  const std::string name = pick < h.editions.size() ? h.editions[pick].origin : "999_unknown.txt";
  kb::SourceFile file{name, std::string(reinterpret_cast<const char*>(data) + 1, size - 1)};
  kb::Diagnostics diags;
  auto doc = kb::ingest_text_export(file, h, diags);
  kbfuzz::finish_document(doc, diags, file, "ingest_text_export");
  return 0;
}
