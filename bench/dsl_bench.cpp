// The query language's cost against its input (docs/performance.md,
// "the query parser is linear"): times kbq::dsl::parse() directly, so the
// question length limit of kbq (base/limits.hpp, kMaxQuestionBytes) is not
// in the way, on lines of 10 KB, 100 KB and 1 MB of shapes that once cost
// quadratic time (a hyphenated run "x-x-x-...", "1-1-1-...") and of
// ordinary shapes (words, counts with units, CJK text, quoted text, filters,
// one word without separators). Prints, per shape, the time and the time per
// KB at each size, and the growth of the time per byte over the last step
// of sizes (1.0 = linear; a quadratic parser shows the step's size ratio,
// 10 by default). The smallest size often runs faster per byte (its data
// fit the CPU's caches), so the last step is the one that tells. The
// lexicon is the real one (kb-sources/data).
//
// Usage: kb_dsl_bench [--data DIR] [--sizes 10000,100000,1000000] [--runs N]
//                     [--shape NAME-PREFIX]
// Exit 1 when a shape's time per byte grows more than 3x over the last
// step (not linear).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "base/diag.hpp"
#include "base/dsl/parse.hpp"
#include "base/tsv.hpp"

namespace {

kbq::dsl::Lexicon load(const std::string& data) {
  kb::Diagnostics diags;
  const auto rows = kb::load_tsv(data + "/lexicon.tsv", diags, {"lang", "kind", "word", "value"});
  const auto gpus = kb::load_tsv(data + "/gpus.tsv", diags);
  if (!rows || !gpus || diags.has_errors()) {
    diags.print(stderr);
    std::exit(2);
  }
  std::vector<std::string> keys;
  for (const auto& row : gpus->rows) keys.push_back(gpus->get(row, "gpu_key"));
  return kbq::dsl::Lexicon(kbq::dsl::lexicon_rows_from_tsv(*rows), keys);
}

struct Shape {
  const char* name;
  const char* unit;  // repeated to the size
};

// The shapes: each unit repeated until the line has the size asked.
const Shape kShapes[] = {
    {"x-x-x- (hyphenated run)", "x-"},
    {"1-1-1- (numbers joined)", "1-"},
    {"aaaa (one word)", "a"},
    {"words and spaces", "lora qwen3 fine tune "},
    {"counts with units", "8 gpus "},
    {"unknown words", "zorglub blorp "},
    {"typos", "qwenn llamma "},
    {"CJK text", "\xe3\x81\xae\x4c\x6f\x52\x41\xe3\x82\x92"},  // のLoRAを
    {"CJK run (unknown)", "\xe9\xbe\x98"},                     // 龘
    {"filters", "tp:2 "},
    {"quoted text", "\"a b\" "},
    {"times operators", "8x"},
};

double seconds_for(const kbq::dsl::Lexicon& lex, const std::string& text, int runs) {
  double best = 1e300;
  for (int r = 0; r < runs; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto res = kbq::dsl::parse(lex, text);
    const auto t1 = std::chrono::steady_clock::now();
    if (res.query.text.size() != text.size()) std::abort();  // keep the call
    best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  std::string data = std::string(KB_SOURCE_DIR) + "/kb-sources/data";
  std::vector<std::size_t> sizes = {10000, 100000, 1000000};
  int runs = 3;
  std::string only;  // --shape NAME: only the shapes whose name starts so
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--data")) {
      data = argv[i + 1];
    } else if (!std::strcmp(argv[i], "--runs")) {
      runs = std::max(1, std::atoi(argv[i + 1]));
    } else if (!std::strcmp(argv[i], "--shape")) {
      only = argv[i + 1];
    } else if (!std::strcmp(argv[i], "--sizes")) {
      sizes.clear();
      for (const char* p = argv[i + 1]; *p;) {
        char* end = nullptr;
        sizes.push_back(std::strtoull(p, &end, 10));
        p = *end ? end + 1 : end;
      }
    }
  }
  const auto lex = load(data);
  std::printf("%-26s", "shape");
  for (auto n : sizes) std::printf(" %12zu B", n);
  std::printf("   us/KB at the largest   growth per byte, last step\n");
  bool linear = true;
  for (const auto& s : kShapes) {
    if (std::string(s.name).rfind(only, 0) != 0) continue;
    std::printf("%-26s", s.name);
    std::vector<double> per_byte;
    for (auto n : sizes) {
      std::string text;
      while (text.size() < n) text += s.unit;
      const double t = seconds_for(lex, text, runs);
      per_byte.push_back(t / static_cast<double>(text.size()));
      std::printf(" %10.1f ms", t * 1000);
    }
    const double growth = per_byte.size() < 2 ? 1 : per_byte.back() / per_byte[per_byte.size() - 2];
    if (growth > 3) linear = false;
    std::printf("   %10.1f   %.2fx%s\n", per_byte.back() * 1e9, growth, growth > 3 ? "  NOT LINEAR" : "");
  }
  return linear ? 0 : 1;
}
