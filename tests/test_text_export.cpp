// Tests of the plain-text export front end (compiler/ingest/text_export.cpp)
// on the three seed documents and on small bad inputs. The hints come from
// the reviewable data files (editions.tsv, sections.tsv, section-kinds.tsv);
// the restored markdown editions (kb-sources/skill/SKILL.{fr,zh,ja}.md), read
// through the markdown front end, are the reference block sequence.
#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "base/text.hpp"
#include "base/tsv.hpp"
#include "compiler/ingest/ingest.hpp"

#ifndef KB_SOURCE_DIR
#error "KB_SOURCE_DIR must name the repository root"
#endif

namespace {

using kb::Block;
using kb::BlockKind;
using kb::Diagnostics;
using kb::Document;
using kb::SourceFile;
using kb::TextExportHints;

const std::string kRoot = KB_SOURCE_DIR;
const std::string kData = kRoot + "/kb-sources/data/";

const char* kFr = "000_e4869d421d2240c2.txt";
const char* kJa = "001_d67806c413528f8a.txt";
const char* kZh = "002_7a19b8649c0bf7c3.txt";

std::string errors_of(const Diagnostics& diags) {
  std::string out;
  for (const auto& d : diags.all()) out += d.render() + "\n";
  return out;
}

// Edition facts from editions.tsv (origin name lang revision date source).
void load_editions(TextExportHints& hints, Diagnostics& diags) {
  const auto table = kb::load_tsv(kData + "editions.tsv", diags, {"origin", "name", "lang", "revision"});
  if (!table) return;
  for (const auto& row : table->rows) {
    TextExportHints::Edition e;
    e.origin = table->get(row, "origin");
    e.meta.name = table->get(row, "name");
    e.meta.lang = table->get(row, "lang");
    e.meta.revision = std::stoi(table->get(row, "revision"));
    e.meta.date = table->get(row, "date");
    e.meta.origin = e.origin;
    hints.editions.push_back(std::move(e));
  }
}

// Known headings: sections.tsv (lang heading kind) joined with
// section-kinds.tsv (kind level parent ...) on kind.
void load_headings(TextExportHints& hints, Diagnostics& diags) {
  const auto kinds = kb::load_tsv(kData + "section-kinds.tsv", diags, {"kind", "level"});
  const auto sections = kb::load_tsv(kData + "sections.tsv", diags, {"lang", "heading", "kind"});
  if (!kinds || !sections) return;
  std::map<std::string, int> level_of;
  for (const auto& row : kinds->rows) level_of[kinds->get(row, "kind")] = std::stoi(kinds->get(row, "level"));
  for (const auto& row : sections->rows) {
    const auto level = level_of.find(sections->get(row, "kind"));
    if (level == level_of.end()) {
      diags.error(sections->span(row, "kind"), "unknown section kind '" + sections->get(row, "kind") + "'");
      continue;
    }
    hints.headings.push_back({sections->get(row, "lang"), kb::normalize_space(sections->get(row, "heading")), level->second});
  }
}

const TextExportHints& hints() {
  static const TextExportHints h = [] {
    TextExportHints out;
    Diagnostics diags;
    load_editions(out, diags);
    load_headings(out, diags);
    // data/planner.tsv base_language, as Vocab::text_export_hints reads it.
    if (const auto planner = kb::load_tsv(kData + "planner.tsv", diags, {"key", "value"}))
      for (const auto& row : planner->rows)
        if (planner->get(row, "key") == "base_language") out.base_language = planner->get(row, "value");
    REQUIRE_FALSE(out.base_language.empty());
    INFO(errors_of(diags));
    REQUIRE_FALSE(diags.has_errors());
    return out;
  }();
  return h;
}

// The seeds live outside kb-sources (seeds/README.md); look where a
// checkout puts them.
std::string seed_path(const std::string& name) {
  std::vector<std::string> dirs;
#ifdef KB_SEEDS_DIR
  dirs.push_back(KB_SEEDS_DIR);
#endif
  for (const char* rel : {"/seeds", "/kb-sources/seeds", "/../shared/seeds"}) dirs.push_back(kRoot + rel);
  for (const auto& d : dirs)
    if (std::filesystem::exists(d + "/" + name)) return d + "/" + name;
  FAIL("seed " << name << " not found under " << kb::join(dirs, ", "));
  return {};
}

Document ingest_seed(const std::string& name) {
  const std::string path = seed_path(name);
  const auto bytes = kb::read_file(path);
  REQUIRE(bytes);
  Diagnostics diags;
  auto doc = kb::ingest_text_export(SourceFile{"seeds/" + name, *bytes}, hints(), diags);
  INFO(errors_of(diags));
  REQUIRE(doc);
  REQUIRE(diags.all().empty());
  return std::move(*doc);
}

std::map<BlockKind, int> count_kinds(const Document& doc) {
  std::map<BlockKind, int> n;
  for (const auto& b : doc.blocks) ++n[b.kind];
  return n;
}

int count_code(const Document& doc, const std::string& info) {
  int n = 0;
  for (const auto& b : doc.blocks) n += (b.kind == BlockKind::Code && b.info == info);
  return n;
}

size_t heading_index(const Document& doc, const std::string& text) {
  for (size_t i = 0; i < doc.blocks.size(); ++i)
    if (doc.blocks[i].kind == BlockKind::Heading && doc.blocks[i].text == text) return i;
  FAIL("no heading '" << text << "'");
  return 0;
}

const char* kind_name(BlockKind k) {
  switch (k) {
    case BlockKind::Heading:
      return "heading";
    case BlockKind::Paragraph:
      return "paragraph";
    case BlockKind::ListItem:
      return "list item";
    case BlockKind::Table:
      return "table";
    case BlockKind::Code:
      return "code";
    case BlockKind::ThematicBreak:
      return "thematic break";
  }
  return "?";
}

// One block, everything but its span, as comparable text.
std::string describe(const Block& b) {
  std::string out = kind_name(b.kind);
  if (b.kind == BlockKind::Heading) out += " " + std::to_string(b.level);
  if (b.kind == BlockKind::ListItem)
    out += std::string(b.ordered ? " ordered" : " bullet") + " #" + std::to_string(b.ordinal) + " level " + std::to_string(b.level);
  if (b.kind == BlockKind::Code) out += " [" + b.info + "]";
  out += ": " + b.text;
  for (const auto& row : b.rows) {
    out += "\n  |";
    for (const auto& cell : row) out += " " + cell.text + " |";
  }
  return out;
}

// Tiny inputs need an edition for their file name.
TextExportHints test_hints(const std::string& origin) {
  TextExportHints h = hints();
  TextExportHints::Edition e;
  e.origin = origin;
  e.meta.name = "test-skill";
  e.meta.lang = "en";
  e.meta.revision = 1;
  h.editions.push_back(e);
  return h;
}

}  // namespace

TEST_CASE("text export: edition facts come from editions.tsv", "[text-export]") {
  const Document ja = ingest_seed(kJa);
  CHECK(ja.meta.lang == "ja");
  CHECK(ja.meta.revision == 3);
  CHECK(ja.meta.date == "2026-08-03");
  CHECK(ja.meta.name == "nemo-mbridge-recipe-recommender");
  CHECK(ja.meta.origin == kJa);
  CHECK(ja.meta.span.line == 1);
  CHECK(ja.path == std::string("seeds/") + kJa);
  CHECK(ja.sha256.size() == 64);

  const Document fr = ingest_seed(kFr);
  CHECK(fr.meta.lang == "fr");
  CHECK(fr.meta.revision == 1);
  CHECK(fr.meta.date.empty());
}

TEST_CASE("text export: the skill id line is front matter, the title a level-1 heading", "[text-export]") {
  for (const char* name : {kFr, kZh, kJa}) {
    const Document doc = ingest_seed(name);
    INFO(name);
    REQUIRE_FALSE(doc.blocks.empty());
    const Block& title = doc.blocks.front();
    CHECK(title.kind == BlockKind::Heading);
    CHECK(title.level == 1);
    CHECK(kb::starts_with(title.text, "Auto Recipe — "));
    for (const auto& b : doc.blocks) CHECK(b.text != "nemo-mbridge-recipe-recommender");
  }
  CHECK(ingest_seed(kZh).blocks.front().span.line == 3);  // line 1 is the skill id
  CHECK(ingest_seed(kFr).blocks.front().span.line == 1);  // the fr export has no skill id
}

TEST_CASE("text export: zh seed tables, code blocks and families", "[text-export]") {
  const Document zh = ingest_seed(kZh);
  auto kinds = count_kinds(zh);
  CHECK(kinds[BlockKind::Table] == 22);
  CHECK(kinds[BlockKind::Code] == 9);
  CHECK(count_code(zh, "bash") == 8);
  CHECK(count_code(zh, "text") == 1);
  CHECK(kinds[BlockKind::ThematicBreak] == 8);

  const size_t llama = heading_index(zh, "Llama");
  CHECK(zh.blocks[llama].level == 3);
  REQUIRE(llama + 1 < zh.blocks.size());
  const Block& table = zh.blocks[llama + 1];
  REQUIRE(table.kind == BlockKind::Table);
  std::vector<std::string> header;
  for (const auto& c : table.rows.at(0)) header.push_back(c.text);
  CHECK(header == std::vector<std::string>{"Recipe", "Mode", "TP", "PP", "CP", "SP", "GPUs (min)", "Seq Len"});
  CHECK(table.rows.size() == 16);  // header + 15 recipes
  CHECK(table.span.line == 80);
  CHECK(table.end_line == 95);
  CHECK(table.rows[1][0].text == "llama2_7b_pretrain_config");
  CHECK(table.rows[1][0].span.line == 81);
  CHECK(table.rows[1][1].span.col == 27);  // code-point column of "Pretrain"
  for (const auto& row : table.rows) CHECK(row.size() == 8);

  // Family titles that end with ")" or hold CJK are headings; "#2803 …" is prose.
  CHECK(zh.blocks[heading_index(zh, "Qwen3 (Dense)")].level == 3);
  CHECK(zh.blocks[heading_index(zh, "VLM 配方")].level == 3);
  CHECK(zh.blocks[heading_index(zh, "库配方索引")].level == 2);
  bool found_2803 = false;
  for (const auto& b : zh.blocks)
    if (kb::starts_with(b.text, "#2803 ")) {
      found_2803 = true;
      CHECK(b.kind == BlockKind::Paragraph);
    }
  CHECK(found_2803);
}

TEST_CASE("text export: the decision tree is one text code block, verbatim", "[text-export]") {
  const Document zh = ingest_seed(kZh);
  const size_t tree = heading_index(zh, "推荐决策树") + 1;
  REQUIRE(tree < zh.blocks.size());
  const Block& b = zh.blocks[tree];
  REQUIRE(b.kind == BlockKind::Code);
  CHECK(b.info == "text");
  CHECK(b.span.line == 245);
  CHECK(b.end_line == 271);
  CHECK(kb::starts_with(b.text, "User wants to train a model\n│\n├─ Know the model name?\n│   ├─ Yes → "));
  CHECK(kb::ends_with(b.text, "\n    └─ ≤ 8K → Default recipes work"));
}

TEST_CASE("text export: fr seed lost its tables", "[text-export]") {
  const Document fr = ingest_seed(kFr);
  auto kinds = count_kinds(fr);
  CHECK(kinds[BlockKind::Table] == 0);
  CHECK(count_code(fr, "bash") == 8);
  CHECK(count_code(fr, "text") == 1);

  const size_t pitfalls = heading_index(fr, "Pièges courants à avertir");
  CHECK(fr.blocks[pitfalls].level == 3);
  REQUIRE(pitfalls + 1 < fr.blocks.size());
  CHECK(fr.blocks[pitfalls + 1].kind == BlockKind::Heading);
  CHECK(fr.blocks[pitfalls + 1].text == "Exemples de remplacement de recette");
  CHECK(fr.blocks[pitfalls + 1].level == 3);

  // A known heading ending with "?" is still a heading.
  CHECK(fr.blocks[heading_index(fr, "Référence rapide : Quelle recette pour ma situation ?")].level == 2);
  CHECK(fr.blocks.back().kind == BlockKind::Heading);  // "Ancres de code", no newline at EOF
  CHECK(fr.blocks.back().text == "Ancres de code");
}

TEST_CASE("text export: ja seed code blocks and lists", "[text-export]") {
  const Document ja = ingest_seed(kJa);
  CHECK(count_code(ja, "bash") == 8);
  CHECK(count_code(ja, "text") == 1);
  CHECK(count_kinds(ja)[BlockKind::Table] == 3);

  const Block* peft = nullptr;
  for (const auto& b : ja.blocks)
    if (b.kind == BlockKind::Code && kb::starts_with(b.text, "# Run the native 4-GPU Qwen3-MoE 30B PEFT topology\n")) peft = &b;
  REQUIRE(peft);
  CHECK(peft->info == "bash");
  CHECK(peft->text.find("--dataset tulu3") != std::string::npos);
  CHECK(peft->span.line == 179);
  CHECK(peft->end_line == 182);

  // The train.sh launcher starts with "./" and keeps its continuation indentation.
  bool launcher = false;
  for (const auto& b : ja.blocks)
    if (b.kind == BlockKind::Code && kb::starts_with(b.text, "./scripts/training/train.sh \\\n    --nodes 2")) {
      launcher = true;
      CHECK(kb::ends_with(b.text, "\n    --mode pretrain"));
    }
  CHECK(launcher);

  // Ordered items keep their numbers; bullets count their position.
  const size_t rules = heading_index(ja, "並列度の調整ルール");
  int ordinal = 0;
  for (size_t i = rules + 1; i < ja.blocks.size() && ja.blocks[i].kind != BlockKind::Heading; ++i)
    if (ja.blocks[i].kind == BlockKind::ListItem) {
      CHECK(ja.blocks[i].ordered);
      CHECK(ja.blocks[i].ordinal == ++ordinal);
    }
  CHECK(ordinal == 7);
  const size_t batch = heading_index(ja, "バッチサイズの調整");
  REQUIRE(batch + 3 < ja.blocks.size());
  CHECK(ja.blocks[batch + 3].kind == BlockKind::ListItem);
  CHECK_FALSE(ja.blocks[batch + 3].ordered);
  CHECK(ja.blocks[batch + 3].ordinal == 3);
  CHECK(kb::starts_with(ja.blocks[batch + 1].text, "レシピの micro_batch_size から始めます。"));

  CHECK(ja.blocks[heading_index(ja, "Code Anchors")].level == 2);  // English heading in the ja edition
  CHECK(ja.blocks.back().kind == BlockKind::Paragraph);
  CHECK(ja.blocks.back().text == "Last signature refresh: 2026-08-03.");
}

TEST_CASE("text export: same blocks as the restored markdown editions", "[text-export]") {
  const std::pair<const char*, const char*> editions[] = {{kFr, "fr"}, {kZh, "zh"}, {kJa, "ja"}};
  for (const auto& [seed, lang] : editions) {
    const std::string md_path = kRoot + "/kb-sources/skill/SKILL." + lang + ".md";
    if (!std::filesystem::exists(md_path)) {
      WARN("no " << md_path << ": comparison skipped");
      continue;
    }
    INFO(md_path);
    const Document text = ingest_seed(seed);
    Diagnostics diags;
    const auto md = kb::ingest_markdown(SourceFile{md_path, *kb::read_file(md_path)}, diags);
    INFO(errors_of(diags));
    REQUIRE(md);
    CHECK(md->meta.lang == text.meta.lang);
    CHECK(md->meta.revision == text.meta.revision);
    CHECK(md->meta.date == text.meta.date);
    CHECK(md->meta.origin == text.meta.origin);
    const size_t n = std::min(text.blocks.size(), md->blocks.size());
    for (size_t i = 0; i < n; ++i) {
      INFO("block " << i << ": text export line " << text.blocks[i].span.line << ", markdown line " << md->blocks[i].span.line);
      CHECK(describe(text.blocks[i]) == describe(md->blocks[i]));
      if (text.blocks[i].kind != md->blocks[i].kind) break;  // a missing block shifts the rest
    }
    CHECK(text.blocks.size() == md->blocks.size());
  }
}

TEST_CASE("text export: CRLF and a BOM change nothing", "[text-export]") {
  const std::string path = seed_path(kZh);
  const std::string lf = *kb::read_file(path);
  std::string crlf = "\xEF\xBB\xBF";
  for (char c : lf) {
    if (c == '\n') crlf += '\r';
    crlf += c;
  }
  Diagnostics d1, d2;
  const auto a = kb::ingest_text_export(SourceFile{kZh, lf}, hints(), d1);
  const auto b = kb::ingest_text_export(SourceFile{kZh, crlf}, hints(), d2);
  REQUIRE(a);
  REQUIRE(b);
  CHECK(d2.all().empty());
  REQUIRE(a->blocks.size() == b->blocks.size());
  for (size_t i = 0; i < a->blocks.size(); ++i) {
    CHECK(describe(a->blocks[i]) == describe(b->blocks[i]));
    CHECK(a->blocks[i].span.line == b->blocks[i].span.line);
    CHECK(a->blocks[i].end_line == b->blocks[i].end_line);
  }
}

TEST_CASE("text export: a ragged table row is an error, the rest is kept", "[text-export]") {
  const std::string text =
      "Title\n"
      "\n"
      "a\tb\tc\n"
      "1\t2\t3\n"
      "4\t5\n"
      "6\t7\t8\n";
  Diagnostics diags;
  const auto doc = kb::ingest_text_export(SourceFile{"in/ragged.txt", text}, test_hints("ragged.txt"), diags);
  REQUIRE(doc);
  REQUIRE(diags.error_count() == 1);
  const auto& d = diags.all()[0];
  CHECK(d.render().rfind("in/ragged.txt:5:1: error: table row has 2 cells, the header has 3", 0) == 0);
  CHECK(d.hint.find("tab") != std::string::npos);
  REQUIRE(doc->blocks.size() == 2);
  const Block& table = doc->blocks[1];
  REQUIRE(table.kind == BlockKind::Table);
  REQUIRE(table.rows.size() == 3);
  CHECK(table.rows[2][0].text == "6");
  CHECK(table.end_line == 6);
}

TEST_CASE("text export: invalid UTF-8 is an error with line and column", "[text-export]") {
  const std::string text = "Title\n\nd\xC3\xA9j\xC3\xA0 vu \xFF here\n";
  Diagnostics diags;
  const auto doc = kb::ingest_text_export(SourceFile{"in/bad.txt", text}, test_hints("bad.txt"), diags);
  CHECK_FALSE(doc);
  REQUIRE(diags.error_count() == 1);
  CHECK(diags.all()[0].span.line == 3);
  CHECK(diags.all()[0].span.col == 9);  // code points: d é j à ␠ v u ␠ → 9th
  CHECK(diags.all()[0].render().rfind("in/bad.txt:3:9: error: invalid UTF-8", 0) == 0);
}

TEST_CASE("text export: a NUL byte is an error with line and column", "[text-export]") {
  // After a BOM (not a column) and a CRLF (one line end), like the markdown front end.
  const std::string text = std::string("\xEF\xBB\xBFTitle\r\n\nd\xC3\xA9j\xC3\xA0") + '\0' + "vu\n";
  Diagnostics diags;
  const auto doc = kb::ingest_text_export(SourceFile{"in/nul.txt", text}, test_hints("nul.txt"), diags);
  CHECK_FALSE(doc);
  REQUIRE(diags.error_count() == 1);
  CHECK(diags.all()[0].render().rfind("in/nul.txt:3:5: error: NUL byte in a text file", 0) == 0);
}

TEST_CASE("text export: an unknown file name is an error", "[text-export]") {
  Diagnostics diags;
  const auto doc = kb::ingest_text_export(SourceFile{"seeds/999_unknown.txt", "Hello\n"}, hints(), diags);
  CHECK_FALSE(doc);
  REQUIRE(diags.error_count() == 1);
  CHECK(diags.all()[0].render().rfind("seeds/999_unknown.txt:1:1: error: unknown text export '999_unknown.txt'", 0) == 0);
  CHECK(diags.all()[0].hint.find("data/editions.tsv") != std::string::npos);
}

TEST_CASE("text export: degenerate inputs", "[text-export]") {
  const TextExportHints h = test_hints("edge.txt");
  for (const std::string& text : {std::string(), std::string("\n\n"), std::string("test-skill\n"), std::string("\xEF\xBB\xBF"),
                                  std::string("a\tb"), std::string("x \\"), std::string("root\n\xE2\x94\x82"), std::string(100000, 'x')}) {
    Diagnostics diags;
    const auto doc = kb::ingest_text_export(SourceFile{"edge.txt", text}, h, diags);
    REQUIRE(doc);
    CHECK(diags.all().empty());
    for (const auto& b : doc->blocks) {
      CHECK(b.span.line >= 1);
      CHECK(b.end_line >= b.span.line);
    }
  }
}

TEST_CASE("text export: commands, comments and continuations", "[text-export]") {
  const std::string text =
      "Title\n"
      "\n"
      "Run it:\n"
      "\n"
      "# first\n"
      "uv run a.py \\\n"
      "    --x 1 \\\n"
      "\t--y 2\n"
      "# second\n"
      "python b.py\n"
      "\n"
      "# not a comment: no command follows\n"
      "\n"
      "#42 is an issue, not a comment\n"
      "\n"
      "tool \\\n"
      "  --flag\n"
      "\n"
      "• one\n"
      "\n"
      "• two\n"
      "1. first\n"
      "---\n";
  Diagnostics diags;
  const auto doc = kb::ingest_text_export(SourceFile{"cmd.txt", text}, test_hints("cmd.txt"), diags);
  REQUIRE(doc);
  CHECK(diags.all().empty());
  std::vector<std::string> got;
  for (const auto& b : doc->blocks) got.push_back(describe(b));
  CHECK(got == std::vector<std::string>{
                   "heading 1: Title",
                   "paragraph: Run it:",
                   "code [bash]: # first\nuv run a.py \\\n    --x 1 \\\n\t--y 2",
                   "code [bash]: # second\npython b.py",
                   "paragraph: # not a comment: no command follows",
                   "paragraph: #42 is an issue, not a comment",
                   "code [bash]: tool \\\n  --flag",
                   "list item bullet #1 level 1: one",
                   "list item bullet #2 level 1: two",
                   "list item ordered #1 level 1: first",
                   "thematic break: ",
               });
  CHECK(doc->blocks[2].span.line == 5);
  CHECK(doc->blocks[2].end_line == 8);
}
