// libFuzzer target: the markdown front end of kbc (YAML front matter +
// cmark-gfm), then extract and resolve on the document, as `kbc build`
// runs them on one edition (a document with errors contributes no facts).
// Seeds: kb-sources/**/*.md and tests/fixtures/**/*.md (fuzz/seed_corpus.py).
#include <cstddef>
#include <cstdint>
#include <string>

#include "extract/extract.hpp"
#include "fuzz_common.hpp"
#include "ingest/ingest.hpp"
#include "resolve/resolve.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)kbfuzz::vocab();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const kb::Vocab& vocab = kbfuzz::vocab();
  kb::SourceFile file{"skill/SKILL.en.md", std::string(reinterpret_cast<const char*>(data), size)};
  kb::Diagnostics diags;
  auto doc = kb::ingest_markdown(file, diags);
  if (!doc) {
    if (!diags.has_errors()) kbfuzz::invariant_failed("ingest_markdown gave no document and no error", "");
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
