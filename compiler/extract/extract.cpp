// Extract stage: walks a document's blocks under their classified headings
// and turns list items, table rows, code blocks and paragraphs into entity
// editions and recipe rows (see extract.hpp).
#include "compiler/extract/extract.hpp"

#include <algorithm>
#include <cmath>

#include "base/escape.hpp"
#include "base/text.hpp"
#include "base/value_ranges.hpp"
#include "compiler/extract/unicode.hpp"

namespace kb {

BraceExpansion expand_braces(std::string_view pattern, size_t limit) {
  // The pattern as literal pieces and brace groups, checked before anything
  // is expanded, so a hostile pattern costs its length, not its product.
  struct Piece {
    std::string literal;            // text before the group (or the tail)
    std::vector<std::string> alts;  // the group's alternatives; empty for the tail
  };
  std::vector<Piece> pieces(1);
  BraceExpansion out;
  size_t open = std::string_view::npos, total = 1;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char ch = pattern[i];
    if (ch == '{') {
      if (open != std::string_view::npos) {
        out.error = "has a '{' inside braces";
        out.at = i;
        return out;
      }
      open = i;
    } else if (ch == '}') {
      if (open == std::string_view::npos) {
        out.error = "has a '}' with no '{' before it";
        out.at = i;
        return out;
      }
      Piece& p = pieces.back();
      for (const auto& alt : split(pattern.substr(open + 1, i - open - 1), ',')) {
        if (trim(alt).empty()) {
          out.error = "has an empty alternative in braces";
          out.at = open;
          return out;
        }
        p.alts.push_back(trim(alt));
      }
      total *= p.alts.size();
      if (total > limit) {
        out.error = "stands for more than " + std::to_string(limit) + " names";
        out.at = open;
        return out;
      }
      pieces.emplace_back();
      open = std::string_view::npos;
    } else if (open == std::string_view::npos) {
      pieces.back().literal += ch;
    }
  }
  if (open != std::string_view::npos) {
    out.error = "has a '{' that is never closed";
    out.at = open;
    return out;
  }
  out.names.emplace_back();
  for (const auto& p : pieces) {
    std::vector<std::string> next;
    for (const auto& head : out.names) {
      if (p.alts.empty()) next.push_back(head + p.literal);
      for (const auto& alt : p.alts) next.push_back(head + p.literal + alt);
    }
    out.names = std::move(next);
  }
  return out;
}

bool glob_match(const std::string& pattern, const std::string& name) {
  // Iterative matcher where '*' needs at least one character.
  size_t p = 0, n = 0, star = std::string::npos, mark = 0;
  while (n < name.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = ++n;  // consume at least one character
    } else if (p < pattern.size() && pattern[p] == name[n]) {
      ++p;
      ++n;
    } else if (star != std::string::npos) {
      p = star + 1;
      n = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

namespace {

bool parse_long(std::string_view s, long& out) {
  s = std::string_view(s).substr(0);
  if (s.empty() || s.size() > 9) return false;
  long v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  out = v;
  return true;
}

// "8K" → 8192 using the seq_magnitude words of the lexicon; "4096" → 4096.
long parse_seq(const std::string& cell, const Vocab& v) {
  std::string s = fold(trim(cell));
  size_t i = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  long n = 0;
  if (i == 0 || !parse_long(std::string_view(s).substr(0, i), n)) return 0;
  const std::string suffix = trim(std::string_view(s).substr(i));
  if (suffix.empty()) return n;
  if (auto m = v.magnitude("seq_magnitude", suffix)) return static_cast<long>(std::lround(static_cast<double>(n) * *m));
  return 0;
}

std::vector<std::string> split_any(const std::string& text, const std::vector<std::string>& seps) {
  std::vector<std::string> out{text};
  for (const auto& sep : seps) {
    if (sep.empty()) continue;
    std::vector<std::string> next;
    for (const auto& part : out) {
      size_t start = 0, pos;
      while ((pos = part.find(sep, start)) != std::string::npos) {
        next.push_back(part.substr(start, pos - start));
        start = pos + sep.size();
      }
      next.push_back(part.substr(start));
    }
    out = std::move(next);
  }
  std::vector<std::string> trimmed;
  for (auto& p : out)
    if (auto t = trim(p); !t.empty()) trimmed.push_back(t);
  return trimmed;
}

void collect(const RE2* re, const std::string& text, std::set<std::string>& into, bool pair = false) {
  if (!re) return;
  re2::StringPiece input(text);
  std::string a, b;
  if (pair) {
    while (RE2::FindAndConsume(&input, *re, &a, &b)) into.insert(a + "=" + b);
  } else if (re->NumberOfCapturingGroups() >= 1) {
    while (RE2::FindAndConsume(&input, *re, &a)) into.insert(trim(a));
  }
}

class Extractor {
 public:
  Extractor(const Document& doc, const Vocab& v, Extracted& out, Diagnostics& diags) : doc_(doc), v_(v), out_(out), diags_(diags) {}

  void run() {
    survey();
    for (size_t i = 0; i < doc_.blocks.size(); ++i) {
      const Block& b = doc_.blocks[i];
      if (b.kind == BlockKind::Heading) {
        heading(b, i);
        continue;
      }
      if (b.kind == BlockKind::ThematicBreak) continue;
      content(b);
    }
  }

 private:
  struct Open {
    int level;
    std::string text;
    std::string kind;
  };

  Provenance prov(int line) const {
    return Provenance{doc_.path, line, doc_.meta.lang, doc_.meta.revision, !doc_.meta.translated_from.empty()};
  }

  // What a section holds: its blocks up to the next heading.
  struct Holds {
    std::vector<std::set<std::string>> tables;  // the fields of each table's header (known columns)
    int rows = 0;                               // data rows of its tables
    int items = 0;                              // list items
    int commands = 0;                           // commands of its code blocks
    bool tree = false;                          // a code block drawing a tree (box-drawing lines)
    bool empty() const { return tables.empty() && items == 0 && commands == 0 && !tree; }
  };

  // Reads what every section holds before any heading is classified: a
  // heading's words may not say what its section is, its content may.
  void survey() {
    holds_.assign(doc_.blocks.size(), Holds{});
    table_fields_.clear();
    size_t at = 0;
    bool in_section = false;
    for (size_t i = 0; i < doc_.blocks.size(); ++i) {
      const Block& b = doc_.blocks[i];
      if (b.kind == BlockKind::Heading) {
        at = i;
        in_section = true;
        continue;
      }
      if (!in_section) continue;
      Holds& h = holds_[at];
      if (b.kind == BlockKind::Table && !b.rows.empty()) {
        table_fields_[i] = column_fields(b);  // read once: header_fields reuses it
        std::set<std::string> fields;
        for (const auto& f : table_fields_[i])
          for (const auto& one : f) fields.insert(one);
        h.tables.push_back(std::move(fields));
        h.rows += static_cast<int>(b.rows.size()) - 1;
      } else if (b.kind == BlockKind::ListItem) {
        ++h.items;
      } else if (b.kind == BlockKind::Code) {
        if (is_tree(b.text))
          h.tree = true;
        else
          h.commands += static_cast<int>(split_commands(b).size());
      }
    }
  }

  // A drawn tree: most of its lines start with box-drawing characters.
  static bool is_tree(const std::string& text) {
    int lines = 0, drawn = 0;
    for (const auto& l : split(text, '\n')) {
      const std::string t = trim(l);
      if (t.empty()) continue;
      ++lines;
      size_t i = 0;
      const char32_t cp = next_code_point(t, i);
      if (is_box_drawing(cp)) ++drawn;
    }
    return lines >= 3 && drawn * 2 >= lines;
  }

  // Does a section's table read as recipe rows (a recipe or model column)?
  static bool recipe_table_fields(const std::set<std::string>& f) { return f.count("recipe") || f.count("model"); }

  // The section kind a heading's structure says (data/section-kinds.tsv,
  // column `holds`): the first heading of the document at the title's
  // level, a table with the columns of a kind, subsections holding such
  // tables (an index of recipe families), a drawn tree. "" when nothing or
  // two kinds fit.
  std::string kind_by_structure(const Block& b, size_t at) const {
    std::set<std::string> kinds;
    for (const auto& sig : v_.section_signatures()) {
      bool fits = false;
      switch (sig.what) {
        case SectionSignature::What::FirstHeading:
          fits = at == first_heading() && v_.section_level(sig.kind) == b.level;
          break;
        case SectionSignature::What::Table:
          for (const auto& t : holds_[at].tables) fits = fits || std::includes(t.begin(), t.end(), sig.fields.begin(), sig.fields.end());
          break;
        case SectionSignature::What::ChildTable: {
          int child_level = 0;  // the level of its direct subsections
          for (size_t j = at + 1; j < doc_.blocks.size(); ++j) {
            const Block& c = doc_.blocks[j];
            if (c.kind != BlockKind::Heading) continue;
            if (c.level <= b.level) break;
            if (child_level == 0) child_level = c.level;
            if (c.level != child_level) continue;
            for (const auto& t : holds_[j].tables) fits = fits || std::includes(t.begin(), t.end(), sig.fields.begin(), sig.fields.end());
          }
          break;
        }
        case SectionSignature::What::Tree:
          fits = holds_[at].tree;
          break;
      }
      if (fits) kinds.insert(sig.kind);
    }
    return kinds.size() == 1 ? *kinds.begin() : std::string{};
  }

  size_t first_heading() const {
    for (size_t i = 0; i < doc_.blocks.size(); ++i)
      if (doc_.blocks[i].kind == BlockKind::Heading) return i;
    return doc_.blocks.size();
  }

  // A heading's kind: its words (data/sections.tsv) when they name a kind of
  // its level; else what its section holds; else its words at another
  // level. A heading under a recipe index that is no other kind, or holds
  // recipe rows, is a family of that index.
  std::string classify(const Block& b, size_t at, const Open* index) {
    const auto m = v_.section_kind(doc_.meta.lang, b.text, b.level);
    const bool recipe_rows = std::any_of(holds_[at].tables.begin(), holds_[at].tables.end(), recipe_table_fields);
    if (index && (m.kind.empty() || recipe_rows)) return "family";
    if (!m.kind.empty() && v_.section_level(m.kind) == b.level) return m.kind;
    if (std::string k = kind_by_structure(b, at); !k.empty()) return k;
    if (!m.others.empty())
      diags_.warning(b.span, "heading '" + b.text + "' reads as more than one kind of section (" + join(m.others, ", ") + ")",
                     "reword it, or list it in data/sections.tsv with the kind it is");
    return m.kind;
  }

  // An unclassified heading whose section holds facts: say what is lost.
  void report_unclassified(const Block& b, size_t at) {
    const Holds& h = holds_[at];
    if (h.empty()) return;
    std::vector<std::string> what;
    if (!h.tables.empty())
      what.push_back(std::to_string(h.tables.size()) + (h.tables.size() == 1 ? " table" : " tables") + " (" + std::to_string(h.rows) +
                     (h.rows == 1 ? " row)" : " rows)"));
    if (h.items > 0) what.push_back("a list of " + std::to_string(h.items) + (h.items == 1 ? " item" : " items"));
    if (h.commands > 0) what.push_back(std::to_string(h.commands) + (h.commands == 1 ? " command" : " commands"));
    if (h.tree) what.push_back("a decision tree");
    diags_.warning(
        b.span,
        "heading '" + b.text + "' names no known section, so what it holds is kept as prose, not read as facts: " + join(what, ", "),
        "list the heading with its kind in data/sections.tsv, or a synonym of its words in data/heading-words.tsv");
  }

  void heading(const Block& b, size_t at) {
    while (!stack_.empty() && stack_.back().level >= b.level) stack_.pop_back();
    bool repeated = false;  // a family title seen before under the same index
    SectionRecord s;
    s.heading = b.text;
    s.level = b.level;
    s.prov = prov(b.span.line);
    std::vector<std::string> path;
    for (const auto& o : stack_) path.push_back(o.text);
    s.heading_path = join(path, " > ");
    // The nearest classified ancestor, when it is a recipe index.
    const Open* index = nullptr;
    for (auto it = stack_.rbegin(); it != stack_.rend(); ++it) {
      if (it->kind.empty() || it->kind == "family") continue;
      if (it->kind == "library_index" || it->kind == "benchmark_index") index = &*it;
      break;
    }
    std::string kind = classify(b, at, index);
    if (kind == "family") {
      s.index_kind = index->kind;
      s.ordinal = family_ordinal(index->kind, b, repeated);
    }
    if (kind.empty()) report_unclassified(b, at);
    s.kind = kind;
    stack_.push_back({b.level, b.text, kind});
    counters_.clear();
    section_ = kind;
    family_ = kind == "family" ? s.heading : std::string{};
    family_ordinal_ = s.ordinal;
    index_kind_ = s.index_kind;
    if (kind == "family" && !repeated) {
      EntityEdition e = entity("family", s.index_kind + "/" + std::to_string(s.ordinal), b.text, b.span.line);
      out_.entities.push_back(std::move(e));
    } else if (kind == "title") {
      out_.entities.push_back(entity("title", "1", b.text, b.span.line));
    }
    out_.sections.push_back(std::move(s));
  }

  // A family's position in its index. Families are aligned across languages
  // by position, so a family title written twice (in any spelling NFKC folds
  // together, "Qwen3 (Dense)" and "Qwen3（Dense）") keeps its first position
  // instead of shifting every family after it.
  int family_ordinal(const std::string& index_kind, const Block& b, bool& repeated) {
    auto [it, fresh] = family_ordinals_.try_emplace({index_kind, name_key(b.text)}, FamilySeen{0, b.span.line});
    repeated = !fresh;
    if (fresh) {
      it->second.ordinal = ++family_count_[index_kind];
    } else {
      diags_.warning(b.span,
                     "family '" + b.text + "' is already a family of this index (line " + std::to_string(it->second.line) +
                         "); its tables are read as the same family",
                     "merge the two sections, or name the families apart");
    }
    return it->second.ordinal;
  }

  EntityEdition entity(const std::string& kind, const std::string& key, const std::string& text, int line) {
    EntityEdition e;
    e.kind = kind;
    e.key = key;
    e.section_kind = section_;
    e.text = text;
    e.prov = prov(line);
    facts(e, text);
    return e;
  }

  void facts(EntityEdition& e, const std::string& text) const {
    collect(v_.pattern("recipe"), text, e.facts["recipe"]);
    collect(v_.pattern("path"), text, e.facts["path"]);
    collect(v_.pattern("script"), text, e.facts["script"]);
    collect(v_.pattern("dataset"), text, e.facts["dataset"]);
    collect(v_.pattern("config_key"), text, e.facts["config_key"]);
    collect(v_.pattern("formula"), text, e.facts["formula"]);
    for (auto it = e.facts.begin(); it != e.facts.end();) it = it->second.empty() ? e.facts.erase(it) : std::next(it);
  }

  int next(const std::string& counter) { return ++counters_[counter]; }

  void content(const Block& b) {
    const std::string& s = section_;
    if (b.kind == BlockKind::ListItem && b.level == 1) {
      static const std::map<std::string, std::string> list_kinds = {{"usage", "usage_step"},        {"checklist", "checklist"},
                                                                    {"sizing_rules", "rule"},       {"batch_tuning", "batch_rule"},
                                                                    {"unification", "layout_item"}, {"benchmark_layout", "layout_item"}};
      auto it = list_kinds.find(s);
      if (it != list_kinds.end()) {
        const int n = b.ordered ? b.ordinal : next("item");
        std::string key = std::to_string(n);
        if (it->second == "layout_item") key = s + "/" + key;
        out_.entities.push_back(entity(it->second, key, b.text, b.span.line));
        return;
      }
    }
    if (b.kind == BlockKind::Code) {
      if (s == "decision_tree") {
        // The tree as a whole (its text), and each of its branches as an
        // entity of its own, so the branches are compared one by one.
        EntityEdition tree = entity("decision_tree", "1", b.text, b.span.line);
        tree.facts.clear();
        out_.entities.push_back(std::move(tree));
        decision_paths(b);
      } else if (s == "library_entry" || s == "benchmark_entry" || s == "override_examples") {
        // Every command of the block is an entity of its own, numbered on
        // across the section's blocks: three commands in one block align
        // with three blocks of one command in another edition.
        const std::string kind = s == "override_examples" ? "override_example" : "command";
        for (const auto& cmd : split_commands(b)) {
          const std::string key = (kind == "command" ? s + "/" : std::string{}) + std::to_string(next("code"));
          out_.entities.push_back(command(kind, key, cmd));
        }
      } else {
        out_.entities.push_back(
            entity("code", (s.empty() ? std::string("preamble") : s) + "/" + std::to_string(next("code")), b.text, b.span.line));
      }
      return;
    }
    if (b.kind == BlockKind::Table) {
      if (s == "family") {
        recipe_table(b);
      } else if (s == "pitfalls" || s == "quick_reference" || s == "code_anchors") {
        row_entities(b);
      } else if (!s.empty()) {  // an unclassified section's content is reported at its heading
        diags_.warning(b.span, "a table in a section of kind '" + s + "' is not read as facts",
                       "move it under a heading of the kind its columns are (data/section-kinds.tsv)");
      }
      return;
    }
    if (s == "family" && (b.kind == BlockKind::ListItem || b.kind == BlockKind::Code || (b.html && b.text.find('|') != std::string::npos)))
      diags_.warning(b.span,
                     std::string(b.kind == BlockKind::ListItem ? "a list item"
                                 : b.kind == BlockKind::Code   ? "a code block"
                                                               : "an HTML block") +
                         " in family '" + family_ + "' is not read as recipe rows",
                     "recipe rows are the rows of a table: no list marker, no indentation of four spaces, no HTML comment");
    // Paragraphs (and list items of other sections) are prose: kept for the
    // full-text index and generated docs, aligned by position.
    const std::string kind = s == "config_layers" ? "config_layer" : "prose";
    const std::string base = s.empty() ? std::string("preamble") : s == "family" ? index_kind_ + "/" + std::to_string(family_ordinal_) : s;
    const std::string key = kind == "config_layer" ? std::to_string(next("para")) : base + "/" + std::to_string(next("para"));
    out_.entities.push_back(entity(kind, key, b.text, b.span.line));
  }

  // The branches of a drawn decision tree: each line that draws a branch
  // (`├─` or `└─` after the columns of its ancestors) is an entity keyed by
  // its position in the tree ("3.2": the root's third branch, its second
  // branch), which is the same in every language even where the labels are
  // translated. Depth is the branch's column among its ancestors' columns,
  // whatever the indentation. Its text is the label and what it leads to.
  void decision_paths(const Block& b) {
    std::vector<int> columns;  // the branch columns of the current branch's ancestors and itself
    std::vector<int> counts;   // branches seen at each of those depths
    int n = 0;
    const int first = b.text_line > 0 ? b.text_line : b.span.line;
    for (const auto& line : split(b.text, '\n')) {
      const int at_line = first + n++;
      size_t i = 0, label = std::string::npos;
      int col = 0, branch = -1;
      while (i < line.size()) {
        const size_t at = i;
        const char32_t cp = next_code_point(line, i);
        if (branch < 0 && (cp == U'\u251C' || cp == U'\u2514')) branch = col;  // ├ └
        if (branch >= 0 && !is_box_drawing(cp) && cp != U' ') {
          label = at;
          break;
        }
        ++col;
      }
      if (branch < 0 || label == std::string::npos) continue;
      while (!columns.empty() && columns.back() >= branch) columns.pop_back();
      columns.push_back(branch);
      counts.resize(columns.size(), 0);
      ++counts.back();
      std::vector<std::string> key;
      for (int c : counts) key.push_back(std::to_string(c));
      out_.entities.push_back(entity("decision_path", join(key, "."), trim(std::string_view(line).substr(label)), at_line));
    }
  }

  // One command of a code block: its `# comment` title and its lines.
  struct Command {
    std::string title;  // the comment lines just before it, without `#`; "" when none
    std::string text;   // the comment lines and the command lines, as written
    std::string cmd;    // the command lines only, as written (continuations kept)
    int line = 0;       // file line of its first line (its comment, if any)
  };

  // A code block as commands: blank lines and comment lines separate them,
  // a line ending in `\` continues on the next one, any other line ends its
  // command. Comment lines title the command that follows them.
  static std::vector<Command> split_commands(const Block& b) {
    std::vector<Command> out;
    Command cur;
    std::vector<std::string> comment;
    int comment_line = 0;
    bool continued = false;  // the previous command line ended with `\`
    const int first = b.text_line > 0 ? b.text_line : b.span.line;
    auto finish = [&] {
      if (!cur.cmd.empty()) out.push_back(std::move(cur));
      cur = Command{};
    };
    int n = 0;
    for (const auto& raw : split(b.text, '\n')) {
      const int line = first + n++;
      const std::string t = trim(raw);
      if (continued) {
        cur.cmd += "\n" + raw;
        cur.text += "\n" + raw;
        continued = ends_with(t, "\\");
        if (!continued) finish();
        continue;
      }
      if (t.empty()) {
        comment.clear();
        continue;
      }
      if (starts_with(t, "#")) {
        if (comment.empty()) comment_line = line;
        comment.push_back(raw);
        continue;
      }
      cur.line = comment.empty() ? line : comment_line;
      for (const auto& c : comment) {
        const std::string title = trim(std::string_view(trim(c)).substr(1));
        cur.title += (cur.title.empty() ? "" : " ") + title;
        cur.text += c + "\n";
      }
      comment.clear();
      cur.cmd = raw;
      cur.text += raw;
      continued = ends_with(t, "\\");
      if (!continued) finish();
    }
    finish();
    return out;
  }

  EntityEdition command(const std::string& kind, const std::string& key, const Command& c) {
    EntityEdition e = entity(kind, key, c.text, c.line);
    e.parts["title"] = c.title;
    e.parts["command"] = c.cmd;
    // Join continuation lines so patterns see one command line.
    std::string flat;
    for (const auto& line : split(c.cmd, '\n')) {
      std::string t = trim(line);
      if (ends_with(t, "\\")) t = trim(t.substr(0, t.size() - 1));
      if (!flat.empty()) flat += ' ';
      flat += t;
    }
    collect(v_.pattern("override"), flat, e.facts["override"], /*pair=*/true);
    collect(v_.pattern("nproc"), flat, e.facts["nproc"]);
    collect(v_.pattern("launcher"), flat, e.facts["launcher"]);
    for (auto it = e.facts.begin(); it != e.facts.end();) it = it->second.empty() ? e.facts.erase(it) : std::next(it);
    return e;
  }

  // The fields each header cell names (data/columns.tsv): one, or for a
  // header joining known headers with `/` ("Sizes / notes") each of them,
  // or none for an unknown column.
  std::vector<std::vector<std::string>> column_fields(const Block& b) const {
    std::vector<std::vector<std::string>> out;
    for (const auto& c : b.rows[0]) {
      std::vector<std::string> fields;
      if (std::string f = v_.column_field(doc_.meta.lang, c.text); !f.empty()) {
        fields.push_back(f);
      } else if (c.text.find('/') != std::string::npos) {
        for (const auto& piece : split(c.text, '/')) {
          std::string pf = v_.column_field(doc_.meta.lang, trim(piece));
          if (pf.empty()) {
            fields.clear();
            break;
          }
          fields.push_back(pf);
        }
      }
      out.push_back(std::move(fields));
    }
    return out;
  }

  // column_fields, reporting each unknown column: it is kept as written
  // (RecipeRow::extra, an entity part named by its header), not read.
  std::vector<std::vector<std::string>> header_fields(const Block& b) {
    auto cached = table_fields_.extract(static_cast<size_t>(&b - doc_.blocks.data()));
    auto fields = cached ? std::move(cached.mapped()) : column_fields(b);
    std::vector<size_t> unknown;
    for (size_t c = 0; c < fields.size(); ++c)
      if (fields[c].empty()) unknown.push_back(c);
    if (!unknown.empty()) {  // one warning per table, at its first unknown column
      constexpr size_t kNamed = 5;
      std::vector<std::string> names;
      for (size_t i = 0; i < unknown.size() && i < kNamed; ++i) names.push_back("'" + b.rows[0][unknown[i]].text + "'");
      if (unknown.size() > kNamed) names.push_back("and " + std::to_string(unknown.size() - kNamed) + " more");
      diags_.warning(b.rows[0][unknown[0]].span,
                     std::string(unknown.size() == 1 ? "unknown table column " : "unknown table columns ") + join(names, ", ") +
                         ": the cells are kept as written, not read as facts",
                     "map the header to a field in data/columns.tsv");
    }
    return fields;
  }

  void row_entities(const Block& b) {
    if (b.rows.empty()) return;
    const auto fields = header_fields(b);
    const std::string kind = section_ == "pitfalls" ? "pitfall" : section_ == "quick_reference" ? "quick_ref" : "code_anchor";
    for (size_t r = 1; r < b.rows.size(); ++r) {
      const auto& row = b.rows[r];
      std::map<std::string, std::string> parts;
      std::string all;
      for (size_t c = 0; c < row.size() && c < fields.size(); ++c) {
        if (fields[c].empty()) parts[b.rows[0][c].text] = row[c].text;  // an unknown column, kept under its header
        for (const auto& f : fields[c]) parts[f] = row[c].text;
        if (!all.empty()) all += " | ";
        all += row[c].text;
      }
      std::string key = std::to_string(r);
      if (kind == "code_anchor") {
        std::set<std::string> paths;
        collect(v_.pattern("path"), parts["path"], paths);
        key = paths.empty() ? parts["path"] : *paths.begin();
      }
      const std::string text = kind == "pitfall" ? parts["pitfall"] : kind == "quick_ref" ? parts["want"] : parts["what"];
      EntityEdition e = entity(kind, key, text, row[0].span.line);
      e.parts = parts;
      facts(e, all);
      if (kind == "quick_ref") {
        const auto gpus_cell = [&]() -> Span {
          for (size_t c = 0; c < fields.size() && c < row.size(); ++c)
            if (std::find(fields[c].begin(), fields[c].end(), "gpus") != fields[c].end()) return row[c].span;
          return row[0].span;
        };
        if (auto g = parse_range(parts["gpus"], doc_.meta.lang, "gpus", v_); g && g->known()) {
          // Its first number becomes quick_ref_picks.gpus, which kbq reads
          // only in range (base/value_ranges.hpp).
          const IntRange& range = int_range("quick_ref_picks", "gpus");
          if (const std::string problem = g->is_value() ? range_problem(range, g->lo) : std::string(); !problem.empty())
            diags_.error(gpus_cell(), "GPU cell '" + first_code_points(parts["gpus"], 40) + "': " + problem,
                         "a quick-reference row names at most " + std::to_string(range.hi) + " GPUs");
          e.facts["gpus"].insert(format_range(*g, kFactWords));
        } else if (!trim(parts["gpus"]).empty()) {
          e.unread.insert("gpus");
          for (size_t c = 0; c < fields.size(); ++c)
            if (std::find(fields[c].begin(), fields[c].end(), "gpus") != fields[c].end() && c < row.size())
              diags_.warning(row[c].span, "GPU cell '" + row[c].text + "' is not a number, a range or a word of data/cells.tsv: not read",
                             "write a number (8), a range (2–4), an open range (16+), or add the words to data/cells.tsv (field gpus)");
        }
      }
      out_.entities.push_back(std::move(e));
    }
  }

  // The cells of a table row by field (columns without a field left out).
  using Cells = std::map<std::string, const Cell*>;

  void recipe_table(const Block& b) {
    if (b.rows.empty()) return;
    const auto fields = header_fields(b);
    const bool benchmark = index_kind_ == "benchmark_index";
    const auto& lang = doc_.meta.lang;
    const char* id_field = benchmark ? "model" : "recipe";
    if (!std::any_of(fields.begin(), fields.end(), [&](const auto& f) { return std::find(f.begin(), f.end(), id_field) != f.end(); })) {
      diags_.error(b.span,
                   "table of family '" + family_ + "' has no " + (benchmark ? "Model" : "Recipe") + " column: its " +
                       std::to_string(b.rows.size() - 1) + " rows cannot be read",
                   "name the column that holds the " + std::string(benchmark ? "model" : "recipe name") + " as data/columns.tsv does");
      return;
    }
    auto list_seps = v_.cell_words(lang, "list_sep");
    for (size_t r = 1; r < b.rows.size(); ++r) {
      const auto& row = b.rows[r];
      Cells cell;
      std::map<std::string, std::string> extra;
      for (size_t c = 0; c < row.size() && c < fields.size(); ++c) {
        if (fields[c].empty()) extra[b.rows[0][c].text] = row[c].text;
        for (const auto& f : fields[c]) cell[f] = &row[c];
      }
      RecipeRow base;
      base.extra = std::move(extra);
      base.kind = benchmark ? RecipeKind::Benchmark : RecipeKind::Library;
      base.family = family_;
      base.family_ordinal = family_ordinal_;
      base.prov = prov(row[0].span.line);
      if (!read_cells(cell, benchmark, base)) continue;
      if (benchmark)
        benchmark_row(cell, list_seps, base);
      else
        library_rows(cell, base);
    }
  }

  // The fact cells of a recipe row (parallelism, GPUs, SP, sequence
  // length, sizes, notes) into `base`, and the parallelism its notes state.
  // False after reporting a cell that does not read.
  bool read_cells(const Cells& cell, bool benchmark, RecipeRow& base) {
    const auto& lang = doc_.meta.lang;
    bool ok = true;
    auto range = [&](const char* field, Range& into) {
      auto it = cell.find(field);
      if (it == cell.end()) return;
      auto rg = parse_range(it->second->text, lang, field, v_);
      if (rg && rg->is_value() && rg->lo < 1) rg.reset();  // sizes start at 1
      if (!rg) {
        diags_.error(it->second->span, upper_ascii(field) + " cell '" + it->second->text + "' is not a number or range",
                     "write a number (2), a range (1–8), an open range (512+), — or a word of data/cells.tsv");
        ok = false;
        return;
      }
      into = *rg;
    };
    range("tp", base.tp);
    range("pp", base.pp);
    range("cp", base.cp);
    range("ep", base.ep);
    range("vp", base.vp);
    range(benchmark || cell.count("min_gpus") == 0 ? "gpus" : "min_gpus", base.gpus);
    if (auto it = cell.find("sp"); it != cell.end()) {
      auto val = v_.cell_value(lang, "sp", it->second->text);
      if (val == "true")
        base.sp = true;
      else if (val == "none")
        base.sp = false;
    }
    if (auto it = cell.find("seq_len"); it != cell.end()) {
      base.seq_len = parse_seq(it->second->text, v_);
      const auto marker = v_.cell_value(lang, "seq_len", it->second->text);
      if (base.seq_len == 0 && !trim(it->second->text).empty() && !marker) {
        diags_.error(it->second->span, "Seq Len cell '" + it->second->text + "' is not a sequence length",
                     "write a length such as 4K, 8K, 128K (K = 1024) or a number of tokens");
        ok = false;
      }
    }
    if (auto it = cell.find("sizes"); it != cell.end()) base.sizes = it->second->text;
    if (auto it = cell.find("notes"); it != cell.end()) base.notes = it->second->text;
    if (auto it = cell.find("features"); it != cell.end()) base.notes = it->second->text;
    facts_from_text_cells(cell, benchmark, base);
    return ok;
  }

  // The facts the row's notes state (read_cell_facts) fill what
  // its own columns leave unknown; a column that says otherwise wins, and
  // the disagreement is reported.
  void facts_from_text_cells(const Cells& cell, bool benchmark, RecipeRow& base) {
    const auto& lang = doc_.meta.lang;
    std::set<const Cell*> seen;
    // Notes and key features (a `Sizes / notes` column is both); a Sizes
    // cell alone lists sizes ("1B (32K seq)" is the model's, not the row's).
    for (const char* field : {"notes", "features"}) {
      auto it = cell.find(field);
      if (it == cell.end() || !seen.insert(it->second).second) continue;
      const Cell& c = *it->second;
      const CellFacts f = read_cell_facts(c.text, lang, v_);
      auto disagree = [&](const std::string& what, const std::string& said, const std::string& column) {
        diags_.warning(
            c.span, "'" + c.text + "' says " + what + " " + said + " but the " + what + " column says " + column + ": the column is used",
            "make the cell and the column agree");
      };
      for (const auto& t : f.twice)
        diags_.warning(c.span, "'" + c.text + "' states " + t + " twice with different values: the first is used",
                       "state each fact once per cell");
      for (const auto& [dim, rg] : f.dims) {
        Range* target = dim == "tp" ? &base.tp : dim == "pp" ? &base.pp : dim == "cp" ? &base.cp : dim == "ep" ? &base.ep : &base.vp;
        const std::string upper = upper_ascii(dim);
        if (!target->known())
          *target = rg;
        else if (!(*target == rg))
          disagree(upper, format_range(rg), format_range(*target));
      }
      if (f.gpus) {
        if (!base.gpus.known())
          base.gpus = *f.gpus;
        else if (!(base.gpus == *f.gpus))
          disagree(benchmark ? "GPUs" : "GPU", format_range(*f.gpus), format_range(base.gpus));
      }
      if (f.seq_len > 0) {
        if (base.seq_len == 0)
          base.seq_len = f.seq_len;
        else if (base.seq_len != f.seq_len)
          disagree("sequence length", std::to_string(f.seq_len), std::to_string(base.seq_len));
      }
    }
  }

  // A benchmark row: one recipe per model, with its GPU types.
  void benchmark_row(const Cells& cell, const std::vector<std::string>& list_seps, RecipeRow base) {
    const auto& lang = doc_.meta.lang;
    auto it = cell.find("model");
    if (it == cell.end()) return;
    // The model is the row's identity across editions: compared in its
    // NFKC display form, so full-width brackets name the same model.
    base.name = display_name(it->second->text);
    base.model = it->second->text;
    base.model_key = v_.model_key_by_display(base.model);
    if (auto t = cell.find("gpu_types"); t != cell.end())
      for (const auto& g : split_any(t->second->text, list_seps)) {
        std::string key = v_.gpu_key(lang, g);
        if (key.empty()) {
          diags_.error(t->second->span, "unknown GPU type '" + g + "'",
                       "add it to data/gpus.tsv or map it in data/cells.tsv (field gpu_types)");
          continue;
        }
        base.gpu_types.push_back(key);
      }
    out_.recipes.push_back(base);
  }

  // A library row: one recipe per name its brace pattern expands to, and
  // per mode when neither the name nor one mode cell says which.
  void library_rows(const Cells& cell, const RecipeRow& base) {
    auto it = cell.find("recipe");
    if (it == cell.end()) return;
    const std::string written = it->second->text;
    // A span inside the cell: the cell's text starts at its span.
    auto at = [&](size_t byte) {
      Span sp = it->second->span;
      sp.col += code_point_column(written, byte);
      return sp;
    };
    if (const size_t bad = find_invisible(written); bad != std::string::npos) {
      diags_.error(at(bad), "recipe cell '" + written + "' has an invisible character, " + describe_code_point(written, bad),
                   "delete it: a recipe name is a Python function name, and the character would make it another name");
      return;
    }
    const BraceExpansion expansion = expand_braces(written);
    if (!expansion.error.empty()) {
      diags_.error(at(expansion.at), "recipe cell '" + written + "' " + expansion.error,
                   "write {a,b} alternatives, one level deep, at most " + std::to_string(kMaxBraceExpansion) +
                       " names per cell (docs/kbc.md, Limits)");
      return;
    }
    if (const RE2* re = v_.pattern("recipe"); re && !RE2::FullMatch(written, *re)) {
      diags_.error(it->second->span, "recipe cell '" + written + "' is not a recipe name",
                   "a recipe is a Python function name ending in _config, e.g. llama3_8b_sft_config; "
                   "braces and * mark patterns");
      return;
    }
    const std::vector<std::string> cell_modes = modes_cell(cell);
    const auto& names = expansion.names;
    for (const auto& name : names) {
      RecipeRow rr = base;
      rr.name = name;
      rr.pattern = name.find('*') != std::string::npos;
      if (names.size() > 1 || name != written) rr.expanded_from = written;
      rr.model_key = rr.pattern ? std::string{} : v_.model_key_of(name);
      const NameFacts said = name_facts(name);
      if (rr.seq_len == 0 && said.seq_len > 0) rr.seq_len = said.seq_len;
      if (!said.mode.empty()) {
        rr.mode = said.mode;
        out_.recipes.push_back(rr);
      } else if (cell_modes.empty()) {
        out_.recipes.push_back(rr);
      } else {
        for (const auto& m : cell_modes) {
          RecipeRow per = rr;
          per.mode = trim(m);
          out_.recipes.push_back(per);
        }
      }
    }
  }

  // The modes a row's mode cell stands for (data/cells.tsv); none when the
  // cell is absent or unknown (reported).
  std::vector<std::string> modes_cell(const Cells& cell) {
    std::vector<std::string> cell_modes;
    if (auto m = cell.find("mode"); m != cell.end() && !trim(m->second->text).empty()) {
      if (auto val = v_.cell_value(doc_.meta.lang, "mode", m->second->text))
        cell_modes = split(*val, ',');
      else
        diags_.error(m->second->span, "unknown mode '" + m->second->text + "'",
                     "map it to pretrain/sft/peft in data/cells.tsv (field mode)");
    }
    return cell_modes;
  }

  // What a recipe name says itself: its first mode word, and its first
  // sequence-length token of at least 1K (not a size such as "8b").
  struct NameFacts {
    std::string mode;  // mode id, or ""
    long seq_len = 0;  // tokens, or 0
  };
  NameFacts name_facts(const std::string& name) const {
    NameFacts out;
    for (const auto& tok : split(name, '_')) {
      if (auto m = v_.lexicon_value("mode", tok); m && out.mode.empty()) out.mode = *m;
      if (!tok.empty() && std::isdigit(static_cast<unsigned char>(tok[0])) && out.seq_len == 0) {
        const long s = parse_seq(tok, v_);
        if (s >= 1024 && fold(tok).back() != 'b' && fold(tok).back() != 'm') out.seq_len = s;
      }
    }
    return out;
  }

  const Document& doc_;
  const Vocab& v_;
  Extracted& out_;
  Diagnostics& diags_;
  std::vector<Open> stack_;
  std::map<std::string, int> counters_;
  std::vector<Holds> holds_;                                              // survey(): what each heading's section holds, by block index
  std::map<size_t, std::vector<std::vector<std::string>>> table_fields_;  // survey(): column_fields of each table, by block index
  std::map<std::string, int> family_count_;
  struct FamilySeen {
    int ordinal = 0, line = 0;
  };
  std::map<std::pair<std::string, std::string>, FamilySeen> family_ordinals_;  // (index kind, name_key) → first
  std::string section_, family_, index_kind_;
  int family_ordinal_ = 0;
};

}  // namespace

std::optional<Range> parse_range(const std::string& cell, const std::string& lang, const std::string& field, const Vocab& v) {
  Range r;
  r.raw = cell;
  const std::string t = trim(cell);
  if (t.empty()) return r;  // unknown
  if (auto val = v.cell_value(lang, field, t)) {
    if (*val == "none") {
      r.state = RangeState::None;
      return r;
    }
    if (*val == "varies") {
      r.state = RangeState::Varies;
      return r;
    }
  }
  std::string s = t;
  for (const auto& open : v.cell_words(lang, "open_max")) {
    if (!open.empty() && ends_with(s, open)) {
      r.open = true;
      s = trim(s.substr(0, s.size() - open.size()));
      break;
    }
  }
  for (const auto& sep : v.cell_words(lang, "range_sep")) {
    if (sep.empty()) continue;
    const size_t pos = s.find(sep);
    if (pos != std::string::npos && pos > 0) {
      long lo = 0, hi = 0;
      if (parse_long(trim(s.substr(0, pos)), lo) && parse_long(trim(s.substr(pos + sep.size())), hi) && lo <= hi) {
        r.state = RangeState::Value;
        r.lo = lo;
        r.hi = hi;
        return r;
      }
      return std::nullopt;
    }
  }
  long n = 0;
  if (!parse_long(s, n)) return std::nullopt;
  r.state = RangeState::Value;
  r.lo = r.hi = n;
  return r;
}

namespace {

// A piece of a free-text cell: a run of ASCII letters, a run of digits, a
// run of white space, or one other code point.
struct Token {
  enum class Kind { Word, Number, Space, Other } kind;
  std::string text;
};

std::vector<Token> tokenize(const std::string& folded) {
  std::vector<Token> out;
  size_t i = 0;
  while (i < folded.size()) {
    const size_t at = i;
    const char32_t cp = next_code_point(folded, i);
    Token::Kind k = Token::Kind::Other;
    if ((cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z'))
      k = Token::Kind::Word;
    else if (cp >= '0' && cp <= '9')
      k = Token::Kind::Number;
    else if (cp == ' ' || cp == '\t' || cp == '\n')
      k = Token::Kind::Space;
    if (k != Token::Kind::Other && !out.empty() && out.back().kind == k)
      out.back().text.append(folded, at, i - at);
    else
      out.push_back({k, folded.substr(at, i - at)});
  }
  return out;
}

}  // namespace

CellFacts read_cell_facts(const std::string& text, const std::string& lang, const Vocab& v) {
  CellFacts out;
  const auto t = tokenize(fold(text));
  auto skip_space = [&](size_t j) {
    while (j < t.size() && t[j].kind == Token::Kind::Space) ++j;
    return j;
  };
  auto is_word = [&](size_t j, const std::vector<std::string>& words) {
    return j < t.size() && std::find(words.begin(), words.end(), t[j].text) != words.end();
  };
  const auto range_seps = v.cell_words(lang, "range_sep");
  const auto open_max = v.cell_words(lang, "open_max");
  // A number or range at t[j] ("8", "1–8", "64 - 128", "16+"): its text and
  // the token after it; npos when t[j] is no number.
  auto number_at = [&](size_t j, std::string& value) -> size_t {
    if (j >= t.size() || t[j].kind != Token::Kind::Number) return std::string::npos;
    value = t[j].text;
    size_t k = skip_space(j + 1);
    if (is_word(k, range_seps)) {
      const size_t hi = skip_space(k + 1);
      if (hi < t.size() && t[hi].kind == Token::Kind::Number) {
        value += "–" + t[hi].text;
        return hi + 1;
      }
    }
    if (j + 1 < t.size() && is_word(j + 1, open_max)) {
      value += "+";
      return j + 2;
    }
    return j + 1;
  };
  auto keep = [&](const std::string& field, Range rg, auto& slot) {
    if (!slot) {
      slot = rg;
    } else if (!(*slot == rg)) {
      out.twice.push_back(field);
    }
  };
  std::map<std::string, std::optional<Range>> dims;
  std::optional<Range> gpus;
  std::optional<long> seq;
  for (size_t i = 0; i < t.size(); ++i) {
    std::string value;
    if (t[i].kind == Token::Kind::Word) {
      // A parallel dimension's column header, then `=` or blanks, then a number.
      const std::string f = v.column_field(lang, t[i].text);
      if (f != "tp" && f != "pp" && f != "cp" && f != "ep" && f != "vp") continue;
      size_t j = skip_space(i + 1);
      if (j < t.size() && t[j].text == "=") j = skip_space(j + 1);
      const size_t after = number_at(j, value);
      if (after == std::string::npos || (after < t.size() && t[after].kind == Token::Kind::Word)) continue;
      if (auto rg = parse_range(value, lang, f, v); rg && rg->is_value() && rg->lo >= 1) keep(f, *rg, dims[f]);
      i = after - 1;
      continue;
    }
    if (t[i].kind != Token::Kind::Number || (i > 0 && t[i - 1].kind == Token::Kind::Word)) continue;
    // A sequence length: digits and a magnitude ("2K", "128K"); not one that
    // is also a parameter magnitude ("600M" in prose is a model size, as the
    // query grammar reads it without a sequence word after it).
    if (i + 1 < t.size() && t[i + 1].kind == Token::Kind::Word && (i + 2 >= t.size() || t[i + 2].kind != Token::Kind::Word)) {
      if (auto m = v.magnitude("seq_magnitude", t[i + 1].text); m && !v.magnitude("param_magnitude", t[i + 1].text)) {
        long n = 0;
        if (t[i].text.size() <= 9) n = std::stol(t[i].text);
        if (n > 0) {
          const long len = static_cast<long>(static_cast<double>(n) * *m);
          if (!seq)
            seq = len;
          else if (*seq != len)
            out.twice.push_back("sequence length");
        }
        continue;
      }
    }
    // A GPU count: a number or range, the words that may stand between
    // (stopwords: a counter such as 个), then a GPU unit.
    const size_t after = number_at(i, value);
    size_t j = skip_space(after);
    while (j < t.size() && t[j].kind != Token::Kind::Number) {
      const auto stop = v.lexicon_value("stopword", t[j].text);
      if (!stop || t[j].kind == Token::Kind::Space) break;
      j = skip_space(j + 1);
    }
    if (j < t.size() && v.lexicon_value("gpu_unit", t[j].text)) {
      if (auto rg = parse_range(value, lang, "gpus", v); rg && rg->is_value() && rg->lo >= 1) keep("GPUs", *rg, gpus);
      i = j;
    }
  }
  for (const auto& [f, rg] : dims)
    if (rg) out.dims[f] = *rg;
  out.gpus = gpus;
  if (seq) out.seq_len = *seq;
  return out;
}

void extract(const Document& doc, const Vocab& vocab, Extracted& out, Diagnostics& diags) { Extractor(doc, vocab, out, diags).run(); }

}  // namespace kb
