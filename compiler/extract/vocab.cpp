// Loading kb-sources/data into the extractor's lookups (see vocab.hpp).
#include "compiler/extract/vocab.hpp"

#include <algorithm>
#include <set>

#include "base/text.hpp"

namespace kb {

namespace {
bool lang_matches(const std::string& row_lang, const std::string& lang) { return row_lang == lang || row_lang == "*"; }
}  // namespace

bool load_vocab(const std::string& data_dir, Vocab& v, Diagnostics& diags) {
  v.dir = data_dir;
  const int before = diags.error_count();
  auto load = [&](const char* name, TsvTable& into, std::vector<std::string> required) {
    into = load_sourced_tsv(data_dir + "/" + name, diags, std::move(required));
  };
  load("models.tsv", v.models, {"model_key", "num_layers", "num_key_value_heads", "num_experts"});
  load("gpus.tsv", v.gpus, {"gpu_key", "short_name", "memory_gb", "nvlink_domain_size", "gpus_per_node", "arch"});
  load("lexicon.tsv", v.lexicon, {"lang", "kind", "word", "value"});
  load("columns.tsv", v.columns, {"lang", "header", "field"});
  load("cells.tsv", v.cells, {"lang", "field", "word", "value"});
  load("sections.tsv", v.sections, {"lang", "heading", "kind"});
  load("section-kinds.tsv", v.section_kinds, {"kind", "level", "parent"});
  load("heading-words.tsv", v.heading_words, {"lang", "what", "word", "value"});
  load("config-keys.tsv", v.config_keys, {"key", "layer", "dimension", "evidence", "aliases"});
  load("datasets.tsv", v.datasets, {"preset", "modes", "evidence"});
  load("editions.tsv", v.editions, {"origin", "path", "name", "lang", "revision", "date"});
  load("patterns.tsv", v.patterns, {"name", "pattern"});
  const int before_planner = diags.error_count();
  load("planner.tsv", v.planner, {"key", "value"});
  for (const auto& row : v.planner.rows)
    if (v.planner.get(row, "key") == "base_language") v.base_language = trim(v.planner.get(row, "value"));
  // (A planner.tsv that could not be read is one error already.)
  if (v.base_language.empty() && diags.error_count() == before_planner)
    diags.error({v.planner.path, 0, 0}, "no base_language row",
                "add one: the language the skill is written in, which every other language falls back to");
  load("checks.tsv", v.checks, {"check", "kind", "entity"});
  load("answer-labels.tsv", v.labels, {"lang", "key", "text"});
  load("models-extra.tsv", v.models_extra, {"model_key", "hf_id", "num_layers", "num_key_value_heads", "num_experts"});
  load("model-arch.tsv", v.model_arch, {"model_key", "field", "value"});
  load("gpu-memory.tsv", v.gpu_memory, {"gpu_key", "fp8_gemm_any_layout"});
  load("memory.tsv", v.memory, {"key", "value", "unit"});
  load("steps.tsv", v.steps, {"step", "modality"});
  load("ranking.tsv", v.ranking, {"position", "criterion", "description"});
  load("precisions.tsv", v.precisions, {"precision", "match", "archs", "display"});
  load("dataset-kinds.tsv", v.dataset_kinds, {"class", "when", "data", "user_data"});
  load("systems.tsv", v.systems, {"system", "display_name", "gpu_key", "gpus", "nodes"});

  for (const auto& row : v.dataset_kinds.rows)
    if (const auto& u = v.dataset_kinds.get(row, "user_data"); u != "yes" && u != "no")
      diags.error(v.dataset_kinds.span(row, "user_data"), "user_data must be yes or no, got '" + u + "'");
  {
    std::set<std::string> gpu_keys, archs;
    for (const auto& row : v.gpus.rows) gpu_keys.insert(v.gpus.get(row, "gpu_key"));
    for (const auto& row : v.precisions.rows)
      for (const auto& a : split(v.precisions.get(row, "archs"), ',')) archs.insert(trim(a));
    // Answers name an architecture by its label (arch.<key>), never by its key.
    std::set<std::string> named;
    for (const auto& row : v.labels.rows) named.insert(v.labels.get(row, "key"));
    // A GPU's architecture runs some precision (precisions.tsv archs), or
    // none and is named (arch.<key>: the T4's Turing, whose precisions the
    // answers then list as missing); anything else is a typo.
    for (const auto& row : v.gpus.rows)
      if (const std::string& a = v.gpus.get(row, "arch"); !archs.count(a) && !named.count("arch." + a))
        diags.error(v.gpus.span(row, "arch"), "unknown GPU architecture '" + a + "'",
                    "use an architecture data/precisions.tsv lists in its archs column, or name one that runs none of them with a row "
                    "arch." +
                        a + " in data/answer-labels.tsv");
    for (const auto& row : v.precisions.rows)
      for (const auto& part : split(v.precisions.get(row, "archs"), ','))
        if (const std::string a = trim(part); !named.count("arch." + a))
          diags.error(v.precisions.span(row, "archs"), "GPU architecture '" + a + "' has no name",
                      "add a row arch." + a + " to data/answer-labels.tsv: the name answers print");
    for (const auto& row : v.systems.rows) {
      if (!gpu_keys.count(v.systems.get(row, "gpu_key")))
        diags.error(v.systems.span(row, "gpu_key"), "unknown GPU '" + v.systems.get(row, "gpu_key") + "'",
                    "use a gpu_key of data/gpus.tsv");
      for (const char* c : {"gpus", "nodes"}) {
        const std::string& n = v.systems.get(row, c);
        if (n.empty() || n.find_first_not_of("0123456789") != std::string::npos || n.size() > 6 || std::stol(n) < 1)
          diags.error(v.systems.span(row, c), std::string(c) + " must be a whole number from 1, got '" + n + "'");
      }
    }
  }
  for (const auto& row : v.precisions.rows) {
    const auto& m = v.precisions.get(row, "match");
    if (m != "*" && m != "fp4=set" && m != "fp16=true" && !(starts_with(m, "fp8_recipe=") && m.size() > 11))
      diags.error(v.precisions.span(row, "match"), "unknown precision match '" + m + "'",
                  "write fp4=set, fp8_recipe=<value>, fp16=true or *");
  }
  for (const auto& row : v.sections.rows) {
    const auto& l = v.sections.get(row, "lang");
    if (l != "*") v.languages.insert(l);
  }
  for (const auto& row : v.heading_words.rows) {
    const auto& what = v.heading_words.get(row, "what");
    if (what != "ignore" && what != "suffix" && what != "synonym") {
      diags.error(v.heading_words.span(row, "what"), "unknown heading-word rule '" + what + "'", "write ignore, suffix or synonym");
      continue;
    }
    v.headings_.add_word(v.heading_words.get(row, "lang"), what, v.heading_words.get(row, "word"), v.heading_words.get(row, "value"));
  }
  for (const auto& row : v.section_kinds.rows) {
    const std::string& holds = v.section_kinds.get(row, "holds");
    if (holds.empty()) continue;
    SectionSignature sig;
    sig.kind = v.section_kinds.get(row, "kind");
    const auto colon = holds.find(':');
    const std::string what = holds.substr(0, colon);
    if (colon != std::string::npos)
      for (const auto& f : split(holds.substr(colon + 1), '+'))
        if (!trim(f).empty()) sig.fields.insert(trim(f));
    if (what == "first-heading" && sig.fields.empty()) {
      sig.what = SectionSignature::What::FirstHeading;
    } else if (what == "tree" && sig.fields.empty()) {
      sig.what = SectionSignature::What::Tree;
    } else if (what == "table" && !sig.fields.empty()) {
      sig.what = SectionSignature::What::Table;
    } else if (what == "child-table" && !sig.fields.empty()) {
      sig.what = SectionSignature::What::ChildTable;
    } else {
      diags.error(v.section_kinds.span(row, "holds"), "unknown section signature '" + holds + "'",
                  "write first-heading, tree, table:<field>+<field> or child-table:<field>+<field>");
      continue;
    }
    v.signatures_.push_back(std::move(sig));
  }
  for (const auto& row : v.sections.rows)
    v.headings_.add_heading(v.sections.get(row, "lang"), v.sections.get(row, "heading"), v.sections.get(row, "kind"),
                            v.section_level(v.sections.get(row, "kind")));
  for (const auto& row : v.patterns.rows) {
    RE2::Options opts;
    opts.set_log_errors(false);
    auto re = std::make_unique<RE2>(v.patterns.get(row, "pattern"), opts);
    if (!re->ok()) {
      diags.error(v.patterns.span(row, "pattern"), "invalid RE2 pattern: " + re->error(), "see https://github.com/google/re2/wiki/Syntax");
      continue;
    }
    v.patterns_[v.patterns.get(row, "name")] = std::move(re);
  }
  for (const auto& row : v.columns.rows)
    v.columns_by_header_[fold(normalize_space(v.columns.get(row, "header")))].emplace_back(v.columns.get(row, "lang"),
                                                                                           v.columns.get(row, "field"));
  v.lexicon_values_.clear();
  for (const auto& row : v.lexicon.rows)
    v.lexicon_values_.emplace(std::pair{v.lexicon.get(row, "kind"), fold(v.lexicon.get(row, "word"))}, v.lexicon.get(row, "value"));
  for (const auto& row : v.models.rows) v.model_keys_.push_back(v.models.get(row, "model_key"));
  for (const auto& row : v.models_extra.rows) v.model_keys_.push_back(v.models_extra.get(row, "model_key"));
  for (const auto& row : v.editions.rows) {
    EditionRow e;
    e.origin = v.editions.get(row, "origin");
    e.path = v.editions.get(row, "path");
    e.meta.name = v.editions.get(row, "name");
    e.meta.lang = v.editions.get(row, "lang");
    e.meta.date = v.editions.get(row, "date");
    e.meta.translated_from = v.editions.get(row, "translated_from");
    e.meta.span = v.editions.span(row, "origin");
    const std::string& rev = v.editions.get(row, "revision");
    char* end = nullptr;
    const long n = std::strtol(rev.c_str(), &end, 10);
    if (rev.empty() || *end != '\0' || n < 1 || n > 1000000) {
      diags.error(v.editions.span(row, "revision"), "revision '" + rev + "' is not a positive whole number",
                  "revisions are 1, 2, 3, ... (1 = oldest)");
      continue;
    }
    e.meta.revision = static_cast<int>(n);
    if (e.path.empty()) e.meta.origin = e.origin;
    v.edition_rows_.push_back(std::move(e));
  }
  std::sort(v.model_keys_.begin(), v.model_keys_.end(),
            [](const std::string& a, const std::string& b) { return a.size() != b.size() ? a.size() > b.size() : a < b; });
  return diags.error_count() == before;
}

HeadingLexicon::Match Vocab::section_kind(const std::string& lang, const std::string& heading, int level) const {
  return headings_.classify(lang, heading, level, base_language);
}

int Vocab::section_level(const std::string& kind) const {
  for (const auto& row : section_kinds.rows)
    if (section_kinds.get(row, "kind") == kind) return std::atoi(section_kinds.get(row, "level").c_str());
  return 0;
}

std::string Vocab::column_field(const std::string& lang, const std::string& header) const {
  auto it = columns_by_header_.find(fold(normalize_space(header)));
  if (it == columns_by_header_.end()) return {};
  for (const std::string& want : {lang, base_language, std::string("*")}) {
    for (const auto& [rl, field] : it->second)
      if (rl == want) return field;
  }
  return it->second.front().second;  // any language
}

std::optional<std::string> Vocab::cell_value(const std::string& lang, const std::string& field, const std::string& word) const {
  const std::string w = fold(normalize_space(word));
  for (const char* pass : {"exact", "any-field"}) {
    for (const auto& row : cells.rows) {
      const auto& rf = cells.get(row, "field");
      const bool field_ok = std::string(pass) == "exact" ? rf == field : rf == "*";
      if (!field_ok || !(lang_matches(cells.get(row, "lang"), lang) || cells.get(row, "lang") == base_language)) continue;
      if (fold(cells.get(row, "word")) == w) return cells.get(row, "value");
    }
  }
  return std::nullopt;
}

std::vector<std::string> Vocab::cell_words(const std::string& lang, const std::string& field) const {
  std::vector<std::string> out;
  for (const auto& row : cells.rows)
    if (cells.get(row, "field") == field && lang_matches(cells.get(row, "lang"), lang)) out.push_back(cells.get(row, "word"));
  return out;
}

std::optional<std::string> Vocab::lexicon_value(const std::string& kind, const std::string& word) const {
  if (auto it = lexicon_values_.find({kind, fold(word)}); it != lexicon_values_.end()) return it->second;
  return std::nullopt;
}

std::optional<double> Vocab::magnitude(const std::string& kind, const std::string& word) const {
  if (auto v = lexicon_value(kind, word)) {
    try {
      return std::stod(*v);
    } catch (...) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

std::string Vocab::model_key_of(const std::string& name) const {
  for (const auto& k : model_keys_)
    if (name.size() > k.size() && starts_with(name, k) && name[k.size()] == '_') return k;
  return {};
}

std::string Vocab::model_key_by_display(const std::string& display) const {
  auto alnum = [](std::string_view text) {
    std::string out;
    for (char ch : fold(text)) {
      if (ch == '(') break;
      if (std::isalnum(static_cast<unsigned char>(ch))) out += ch;
    }
    return out;
  };
  std::string d = display;
  for (const char* open : {"(", "\xEF\xBC\x88"})  // ASCII or full-width parenthesis
    if (auto at = d.find(open); at != std::string::npos) d = d.substr(0, at);
  const std::string want = alnum(d);
  if (want.empty()) return {};
  for (const auto& row : models.rows)
    if (alnum(models.get(row, "display_name")) == want) return models.get(row, "model_key");
  return {};
}

std::string Vocab::gpu_key(const std::string& lang, const std::string& word) const {
  if (auto v = cell_value(lang, "gpu_types", word)) return *v;
  const std::string w = fold(trim(word));
  for (const auto& row : gpus.rows)
    if (gpus.get(row, "gpu_key") == w) return w;
  return {};
}

const EditionRow* Vocab::markdown_edition(const std::string& path) const {
  for (const auto& e : edition_rows_)
    if (!e.path.empty() && e.path == path) return &e;
  return nullptr;
}

const RE2* Vocab::pattern(const std::string& name) const {
  auto it = patterns_.find(name);
  return it == patterns_.end() ? nullptr : it->second.get();
}

TextExportHints Vocab::text_export_hints() const {
  TextExportHints h;
  h.base_language = base_language;
  for (const auto& e : edition_rows_)
    if (e.path.empty()) h.editions.push_back(e);
  for (const auto& row : sections.rows) {
    const int level = section_level(sections.get(row, "kind"));
    h.headings.push_back({sections.get(row, "lang"), normalize_space(sections.get(row, "heading")), level > 0 ? level : 2});
  }
  return h;
}

}  // namespace kb
