// libFuzzer target: the markdown front end of kbc (YAML front matter +
// cmark-gfm), then extract and resolve on the document, as `kbc build`
// runs them on one edition (a document with errors contributes no facts).
// Seeds: kb-sources/**/*.md and tests/fixtures/**/*.md (fuzz/seed_corpus.py).
#include <cstddef>
#include <cstdint>
#include <string>

#include "compiler/ingest/ingest.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)kbfuzz::vocab();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  kb::SourceFile file{"skill/SKILL.en.md", std::string(reinterpret_cast<const char*>(data), size)};
  kb::Diagnostics diags;
  auto doc = kb::ingest_markdown(file, diags);
  kbfuzz::finish_document(doc, diags, file, "ingest_markdown");
  return 0;
}
