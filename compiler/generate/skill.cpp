// Generate stage: skill/SKILL.<lang>.md for every language. The newest
// original skill edition is the template: its blocks, in order, are slots
// (a heading, a paragraph, a list item, a code block, a table row), each
// aligned to an entity of the KB. For each language a slot shows that
// language's usable edition of the entity, else en's, else the winner's,
// with a visible fallback marker; headings come from data/sections.tsv.
// Sections the template does not have (superseded or moved ones) are left
// out, so every edition is complete and states the newest facts.
#include <algorithm>
#include <tuple>

#include "base/text.hpp"
#include "compiler/generate/generate_int.hpp"

namespace kb::gen {

namespace {

// The newest original edition of the skill (not the recipe index): the
// one whose order and slots every language follows.
const Document* template_doc(const Inputs& ctx) {
  const Document* best = nullptr;
  auto key = [](const Document& d) { return std::make_tuple(-d.meta.revision, !d.meta.translated_from.empty(), d.meta.lang, d.path); };
  for (const auto& d : ctx.c.documents)
    if (is_skill_edition(d) && (!best || key(d) < key(*best))) best = &d;
  return best;
}

bool replaced(const Inputs& ctx, const std::string& kind) {
  const auto& t = ctx.c.vocab.section_kinds;
  for (const auto& row : t.rows)
    if (t.get(row, "kind") == kind) return !t.get(row, "replaced_by").empty();
  return false;
}

// A table row reads the same in two languages: no marker.
bool neutral_row(const Entity& e, const EntityEdition& ed) {
  std::set<std::string> langs;
  for (const auto* x : e.editions)
    if (x->parts == ed.parts) langs.insert(x->prov.lang);
  return langs.size() >= 2;
}

std::string indent_continuation(const std::string& text, size_t width) {
  std::string out;
  for (char ch : text) {
    out += ch;
    if (ch == '\n') out += std::string(width, ' ');
  }
  return out;
}

class SkillWriter {
 public:
  SkillWriter(const Inputs& ctx, const Document& tpl, const std::string& lang) : ctx_(ctx), tpl_(tpl), lang_(lang) {
    for (const auto& s : ctx.c.extracted.sections)
      if (s.prov.file == tpl.path) sections_[s.prov.line] = &s;
    for (const auto& e : ctx.c.extracted.entities)
      if (e.prov.file == tpl.path && e.kind != "title" && e.kind != "family") entities_[e.prov.line] = &e;
  }

  std::string run() {
    std::vector<std::string> blocks;
    std::string list;  // the list being built (consecutive items)
    auto flush = [&] {
      if (!list.empty()) blocks.push_back(list);
      list.clear();
    };
    int skip_level = 0;  // inside a superseded section: skip until a heading this high
    for (const auto& b : tpl_.blocks) {
      if (b.kind == BlockKind::Heading && skip_level && b.level <= skip_level) skip_level = 0;
      if (skip_level) continue;
      if (b.kind != BlockKind::ListItem) flush();
      switch (b.kind) {
        case BlockKind::Heading: {
          auto it = sections_.find(b.span.line);
          const SectionRecord* s = it == sections_.end() ? nullptr : it->second;
          if (s && !s->kind.empty() && replaced(ctx_, s->kind)) {
            skip_level = b.level;
            continue;
          }
          blocks.push_back(std::string(static_cast<size_t>(b.level), '#') + " " + heading(b, s));
          break;
        }
        case BlockKind::Paragraph:
          blocks.push_back(paragraph_of(b));
          break;
        case BlockKind::ListItem: {
          const std::string bullet = b.ordered ? std::to_string(b.ordinal) + ". " : "- ";
          const std::string pad(static_cast<size_t>(std::max(0, b.level - 1)) * 3, ' ');
          if (!list.empty()) list += "\n";
          list += pad + bullet + indent_continuation(item_text(b), pad.size() + bullet.size());
          break;
        }
        case BlockKind::Code:
          blocks.push_back(code(b));
          break;
        case BlockKind::Table:
          blocks.push_back(table(b));
          break;
        case BlockKind::ThematicBreak:
          blocks.push_back("---");
          break;
      }
    }
    flush();
    std::string body;
    for (const auto& b : blocks) body += "\n" + b + "\n";
    std::vector<std::pair<std::string, std::string>> fm;
    if (!tpl_.meta.name.empty()) fm.emplace_back("name", yaml_scalar(tpl_.meta.name));
    fm.emplace_back("lang", lang_);
    fm.emplace_back("revision", std::to_string(st_.revision));
    fm.emplace_back("generated-from", yaml_list({st_.sources.begin(), st_.sources.end()}));
    return front_matter(fm) + body;
  }

 private:
  const Entity* slot(int line) const {
    auto it = entities_.find(line);
    if (it == entities_.end()) return nullptr;
    return ctx_.entity(it->second->kind, it->second->key);
  }

  std::string heading(const Block& b, const SectionRecord* s) {
    st_.use(Provenance{tpl_.path, b.span.line, tpl_.meta.lang, tpl_.meta.revision, false});
    if (s && s->kind == "family") {
      for (const auto& f : ctx_.families)
        if (f.index_kind == s->index_kind && f.ordinal == s->ordinal) return ctx_.family_heading(f, lang_, true);
    }
    if (s && !s->kind.empty()) {
      const std::string h = ctx_.heading(lang_, s->kind);
      if (!h.empty()) return md_text(h);
    }
    return md_text(b.text);
  }

  std::string paragraph_of(const Block& b) {
    if (const Entity* e = slot(b.span.line)) return paragraph(ctx_, *e, lang_, st_);
    st_.use(Provenance{tpl_.path, b.span.line, tpl_.meta.lang, tpl_.meta.revision, false});
    return md_text(b.text);
  }

  std::string item_text(const Block& b) { return paragraph_of(b); }

  std::string code(const Block& b) {
    // A block is one entity (the decision tree, other code) at its first
    // line, or several commands, each an entity at its own line.
    std::vector<const Entity*> slots;
    const Entity* whole = slot(b.span.line);
    if (whole && (whole->kind == "decision_tree" || whole->kind == "code"))
      slots.push_back(whole);
    else
      for (auto it = entities_.lower_bound(b.span.line); it != entities_.end() && it->first <= b.end_line; ++it)
        if (const Entity* e = ctx_.entity(it->second->kind, it->second->key)) slots.push_back(e);
    if (slots.empty()) return md_fence(b.text, b.info);
    // Commands and code are facts: the language's own edition when it
    // states the newest values, else the newest one (no marker: code reads
    // the same in every language).
    std::string text;
    for (const Entity* e : slots) {
      const Choice ch = ctx_.choose(*e, lang_);
      st_.use(ch.ed->prov);
      text += (text.empty() ? "" : "\n\n") + ch.ed->text;
    }
    return md_fence(text, b.info);
  }

  std::string table(const Block& b) {
    if (b.rows.empty()) return {};
    std::vector<std::string> fields, header;
    for (const auto& cell : b.rows[0]) {
      const std::string f = ctx_.c.vocab.column_field(tpl_.meta.lang, cell.text);
      fields.push_back(f);
      header.push_back(md_text(f.empty() ? cell.text : ctx_.header(lang_, f), true));
    }
    std::vector<std::vector<std::string>> rows;
    for (size_t r = 1; r < b.rows.size(); ++r) {
      std::vector<std::string> out;
      const Entity* e = b.rows[r].empty() ? nullptr : slot(b.rows[r][0].span.line);
      if (!e) {
        for (const auto& cell : b.rows[r]) out.push_back(md_text(cell.text, true));
        rows.push_back(std::move(out));
        continue;
      }
      const Choice ch = ctx_.choose(*e, lang_);
      st_.use(ch.ed->prov);
      // A quick-reference row's GPU count is the code's (quick_ref_gpus).
      const auto gpus = e->kind == "quick_ref" ? quick_ref_gpus(ctx_, *ch.ed) : std::nullopt;
      for (size_t i = 0; i < fields.size(); ++i) {
        auto it = ch.ed->parts.find(fields[i]);
        std::string cell = md_text(it == ch.ed->parts.end() ? std::string() : it->second, true);
        if (gpus && fields[i] == "gpus") cell = md_text(ctx_.range_cell(gpus->code, lang_, "gpus"), true);
        if (i == 0 && !ch.fallback.empty() && !neutral_row(*e, *ch.ed)) cell = ctx_.marker(lang_, ch.fallback) + " " + cell;
        out.push_back(cell);
      }
      rows.push_back(std::move(out));
    }
    return md_table(header, rows);
  }

  const Inputs& ctx_;
  const Document& tpl_;
  const std::string& lang_;
  DocState st_;
  std::map<int, const SectionRecord*> sections_;
  std::map<int, const EntityEdition*> entities_;
};

}  // namespace

void write_skill(const Inputs& ctx, OutputFiles& out) {
  const Document* tpl = template_doc(ctx);
  if (!tpl) return;
  for (const auto& lang : ctx.languages) out["skill/SKILL." + lang + ".md"] = SkillWriter(ctx, *tpl, lang).run();
}

}  // namespace kb::gen
