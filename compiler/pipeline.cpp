// The compiler pipeline (see pipeline.hpp), the only file that calls the
// passes in order: compile() loads the data, ingests every source (a
// performance page through extract_perf), extracts, resolves, loads the code
// facts, finds the drift and resolves the perf rows; write_kb() emits and
// derives (docs/architecture.md lists them, and its test checks the order).
#include "compiler/pipeline.hpp"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>

#include <re2/re2.h>

#include "base/checked.hpp"
#include "base/escape.hpp"
#include "base/files.hpp"
#include "base/limits.hpp"
#include "base/text.hpp"
#include "base/value_ranges.hpp"
#include "compiler/derive/derive.hpp"
#include "compiler/extract/unicode.hpp"
#include "compiler/ingest/ingest.hpp"

namespace kb {
namespace fs = std::filesystem;

namespace {

// Line of a front-matter key, for diagnostics that point at it.
int key_line(const std::string& bytes, const std::string& key) {
  int line = 1;
  size_t pos = 0;
  while (pos < bytes.size() && line < 64) {
    const size_t eol = bytes.find('\n', pos);
    const auto l = std::string_view(bytes).substr(pos, (eol == std::string::npos ? bytes.size() : eol) - pos);
    if (starts_with(l, key + ":")) return line;
    if (eol == std::string::npos) break;
    pos = eol + 1;
    ++line;
  }
  return 1;
}

// Does a markdown file's front matter state its language or revision?
bool states_edition(const std::string& bytes) {
  if (!starts_with(bytes, "---")) return false;
  const size_t end = bytes.find("\n---", 3);
  const std::string yaml = bytes.substr(0, end == std::string::npos ? bytes.size() : end);
  for (const auto& l : split(yaml, '\n'))
    if (starts_with(l, "lang:") || starts_with(l, "revision:")) return true;
  return false;
}

std::string document_name(const Document& d) {
  if (!d.meta.name.empty()) return d.meta.name;
  std::string stem = fs::path(d.path).stem().string();  // recipe-index.fr → recipe-index
  const auto dot = stem.rfind('.');
  return dot == std::string::npos ? stem : stem.substr(0, dot);
}

// A markdown edition restored from a text export (front matter `origin:`)
// and that export, when both are among the sources, are one edition: the
// reviewed markdown is compiled, the export is checked against it block for
// block (a block the restoration lost or changed is an error at the export's
// line), then set aside so no fact is read twice.
void check_restorations(std::vector<Document>& docs, Diagnostics& diags) {
  std::map<std::string, const Document*> restored;  // origin file name → markdown edition
  for (const auto& d : docs)
    if (!d.meta.origin.empty() && ends_with(d.path, ".md")) restored[d.meta.origin] = &d;
  std::vector<bool> drop(docs.size(), false);
  for (size_t i = 0; i < docs.size(); ++i) {
    const Document& t = docs[i];
    if (ends_with(t.path, ".md")) continue;
    auto it = restored.find(fs::path(t.path).filename().string());
    if (it == restored.end()) continue;
    const Document& md = *it->second;
    drop[i] = true;
    const size_t n = std::min(t.blocks.size(), md.blocks.size());
    size_t k = 0;
    while (k < n && same_content(t.blocks[k], md.blocks[k])) ++k;
    if (k < n)
      diags.error(t.blocks[k].span,
                  "the restored edition " + md.path + " differs from this export at its line " + std::to_string(md.blocks[k].span.line),
                  "restore the block as the export has it, or fix the export's reading (docs/sources.md, text exports)");
    else if (t.blocks.size() != md.blocks.size())
      diags.error({t.path, k < t.blocks.size() ? t.blocks[k].span.line : 0, 0},
                  "the restored edition " + md.path + " has " + std::to_string(md.blocks.size()) + " blocks, this export " +
                      std::to_string(t.blocks.size()),
                  "restore every block of the export, in order");
  }
  size_t out = 0;
  for (size_t i = 0; i < docs.size(); ++i) {
    if (drop[i]) continue;
    if (out != i) docs[out] = std::move(docs[i]);
    ++out;
  }
  docs.resize(out);
}

// Revisions count up with time: an edition whose revision is higher than
// another's but whose date is earlier has one of the two wrong, and would
// silently win every conflict. A warning at its date, naming the other.
void check_revision_dates(const std::vector<Document>& docs, const std::string& root, Diagnostics& diags) {
  for (const auto& d : docs) {
    if (d.meta.date.empty()) continue;
    const Document* later = nullptr;  // the lowest revision dated after d
    for (const auto& o : docs)
      if (o.meta.revision < d.meta.revision && !o.meta.date.empty() && o.meta.date > d.meta.date &&
          (!later || o.meta.date > later->meta.date))
        later = &o;
    if (!later) continue;
    const auto bytes = read_file((fs::path(root) / d.path).string());
    diags.warning({d.path, bytes ? key_line(*bytes, "date") : 0, 0},
                  "revision " + std::to_string(d.meta.revision) + " is dated " + d.meta.date + ", before revision " +
                      std::to_string(later->meta.revision) + " (" + later->path + ", " + later->meta.date +
                      "); the higher revision wins every conflict",
                  "check the revision and the date of both editions");
  }
}

// Does a file name say it is a source (*.md but README.md, *.txt)?
bool source_name(const fs::path& p) {
  const auto ext = p.extension().string();
  return (ext == ".md" && p.filename() != "README.md") || ext == ".txt";
}

// The data folder: the default <sources>/data must resolve inside the
// sources folder; every file in it must resolve inside the data folder (a
// link to /dev/zero or to a file elsewhere is an error naming it).
bool check_data_folder(const fs::path& real_root, const std::string& data_dir, bool given, Diagnostics& diags) {
  std::error_code ec;
  const int before = diags.error_count();
  const fs::path real_data = fs::canonical(data_dir, ec);
  if (ec) return true;  // missing: load_vocab names the files it cannot read
  if (!given && !lexically_inside(real_root, real_data)) {
    diags.error({data_dir, 0, 0}, "links outside the sources folder (to " + real_data.string() + ")",
                "the data folder is part of the sources: keep it inside, or pass --data DIR");
    return false;
  }
  fs::directory_iterator it(data_dir, ec);
  if (ec) {
    diags.error({data_dir, 0, 0}, "cannot read folder: " + ec.message(), "check its permissions");
    return false;
  }
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) {
      diags.error({data_dir, 0, 0}, "cannot read folder: " + ec.message(), "check its permissions");
      return false;
    }
    const fs::path p = it->path();
    const std::string shown = (fs::path(data_dir) / p.filename()).generic_string();
    std::error_code lec;
    if (!it->is_symlink(lec)) continue;
    const fs::path target = fs::canonical(p, lec);
    if (lec) continue;  // a dangling link: load_vocab reports it if it is a data file
    if (!lexically_inside(real_data, target))
      diags.error({shown, 0, 0}, "links outside the data folder (to " + target.string() + ")",
                  "kbc reads only files inside the sources; copy the file in instead");
  }
  return diags.error_count() == before;
}

// Values of the data that bound structures elsewhere: language codes
// become parts of generated paths and KB keys, so each must be a plain
// language tag (en, fr, ja, zh, pt-BR); the query lexicon's words and GPU
// keys set the depth of its search tree (at most kMaxLexiconWordBytes).
bool check_vocab_values(const Vocab& v, Diagnostics& diags) {
  static const RE2 tag("[a-z]{2,3}(-[A-Za-z0-9]{1,8})*");
  const int before = diags.error_count();
  for (const auto& lang : v.languages) {
    if (RE2::FullMatch(lang, tag)) continue;
    Span at{v.sections.path, 0, 0};
    for (const auto& row : v.sections.rows)
      if (v.sections.get(row, "lang") == lang) {
        at = v.sections.span(row, "lang");
        break;
      }
    diags.error(at, "language code '" + lang + "' is not a language tag", "write a tag such as en, fr, ja, zh or pt-BR");
  }
  const auto long_cells = [&](const TsvTable& t, std::initializer_list<const char*> columns) {
    for (const auto& row : t.rows)
      for (const char* column : columns)
        if (t.get(row, column).size() > limits::kMaxLexiconWordBytes)
          diags.error(t.span(row, column), std::string(column) + " longer than " + std::to_string(limits::kMaxLexiconWordBytes) + " bytes",
                      "a word of the query language is a word or a short phrase");
  };
  long_cells(v.lexicon, {"word", "value"});
  long_cells(v.gpus, {"gpu_key"});
  // The numbers emit writes into models and gpus: in the range kbq checks
  // when it reads them (base/value_ranges.hpp), never a word that would
  // become NULL silently.
  const auto numbers = [&](const TsvTable& t, std::initializer_list<const IntRange*> ints, std::initializer_list<const RealRange*> reals) {
    for (const auto& row : t.rows) {
      for (const IntRange* r : ints) {
        if (t.column(r->column) < 0) continue;
        std::string_view cell = t.get(row, r->column);
        // KV heads may be written "mla:N" (kept as written in kv_heads_raw,
        // docs/schema.md): N is the count.
        if (r->column == "num_key_value_heads")
          if (const auto colon = cell.find(':');
              colon != std::string_view::npos && colon > 0 &&
              cell.substr(0, colon).find_first_not_of("abcdefghijklmnopqrstuvwxyz") == std::string_view::npos)
            cell.remove_prefix(colon + 1);
        if (const std::string problem = int_cell_problem(*r, cell); !problem.empty())
          diags.error(t.span(row, r->column), std::string(r->column) + ": " + problem,
                      "it becomes " + std::string(r->table) + "." + std::string(r->column) +
                          ", which kbq reads only as a whole number from " + std::to_string(r->lo) + " to " + std::to_string(r->hi) +
                          (r->null_ok ? " (or an empty cell)" : ""));
      }
      for (const RealRange* r : reals)
        if (t.column(r->column) >= 0)
          if (const std::string problem = real_cell_problem(*r, t.get(row, r->column)); !problem.empty())
            diags.error(
                t.span(row, r->column), std::string(r->column) + ": " + problem,
                "it becomes " + std::string(r->table) + "." + std::string(r->column) + ", which kbq reads only as a number in range");
    }
  };
  for (const TsvTable* m : {&v.models, &v.models_extra})
    numbers(
        *m,
        {&int_range("models", "num_layers"), &int_range("models", "num_attention_heads"), &int_range("models", "num_key_value_heads"),
         &int_range("models", "num_experts"), &int_range("models", "experts_per_token"), &int_range("models", "max_position_embeddings")},
        {&real_range("models", "total_params_b"), &real_range("models", "active_params_b")});
  numbers(v.gpus, {&int_range("gpus", "nvlink_domain_size"), &int_range("gpus", "gpus_per_node")},
          {&real_range("gpus", "memory_gb"), &real_range("gpus", "bf16_dense_tflops")});
  return diags.error_count() == before;
}

// The documents of the sources folder: walked folder by folder without
// following folder links; a folder that cannot be read is an error naming
// it; a file link must resolve inside the sources folder; a source that is
// not a regular file is an error. Bounded in depth and count
// (base/limits.hpp).
struct SourceWalk {
  const fs::path& root;
  const fs::path& real_root;
  fs::path real_data;
  Diagnostics& diags;
  std::vector<std::pair<fs::path, std::string>> files;  // path, and relative to the root (lexically: a link is not resolved)
  std::string prefix;                                   // the folder being walked, relative to the root, with a '/'

  std::string rel(const fs::path& p) const { return prefix + p.filename().string(); }

  void folder(const fs::path& dir, int depth) {
    const std::string shown = prefix.empty() ? root.generic_string() : prefix.substr(0, prefix.size() - 1);
    if (depth > limits::kMaxFolderDepth) {
      diags.error({shown, 0, 0}, "folders nested more than " + std::to_string(limits::kMaxFolderDepth) + " deep",
                  "docs/security.md says how to change the limit");
      return;
    }
    std::error_code ec;
    fs::directory_iterator it(dir, ec);
    if (ec) {
      diags.error({shown, 0, 0}, "cannot read folder: " + ec.message(), "check its permissions: every file under the sources is compiled");
      return;
    }
    std::vector<fs::directory_entry> entries;
    for (; it != fs::directory_iterator(); it.increment(ec)) {
      if (ec) {
        diags.error({shown, 0, 0}, "cannot read folder: " + ec.message(),
                    "check its permissions: every file under the sources is compiled");
        return;
      }
      entries.push_back(*it);
    }
    std::sort(entries.begin(), entries.end());
    for (const auto& e : entries) {
      const fs::path& p = e.path();
      const auto st = e.symlink_status(ec);
      if (fs::is_symlink(st)) {
        if (!source_name(p)) continue;  // links to folders are not followed; other files are not read
        std::error_code lec;
        const fs::path target = fs::canonical(p, lec);
        if (lec) {
          diags.error({rel(p), 0, 0}, "cannot read file: a link to nothing (" + lec.message() + ")", "remove the link");
          continue;
        }
        if (!lexically_inside(real_root, target)) {
          diags.error({rel(p), 0, 0}, "links outside the sources folder (to " + target.string() + ")",
                      "kbc reads only files inside the sources; copy the file in instead");
          continue;
        }
        if (!fs::is_regular_file(target, lec)) {
          diags.error({rel(p), 0, 0}, "is not a regular file", "a source is a regular file");
          continue;
        }
        add(p);
      } else if (fs::is_directory(st)) {
        if (fs::weakly_canonical(p, ec) == real_data) continue;
        const std::string saved = prefix;
        prefix += p.filename().string() + "/";
        folder(p, depth + 1);
        prefix = saved;
      } else if (source_name(p)) {
        if (!fs::is_regular_file(st)) {
          diags.error({rel(p), 0, 0}, "is " + std::string(fs::is_fifo(st) ? "a FIFO" : "not a regular file"), "a source is a regular file");
          continue;
        }
        add(p);
      }
    }
  }

  void add(const fs::path& p) {
    if (files.size() >= static_cast<std::size_t>(limits::kMaxSourceFiles)) {
      if (!too_many)
        diags.error({root.generic_string(), 0, 0}, "more than " + std::to_string(limits::kMaxSourceFiles) + " source files",
                    "docs/security.md says how to change the limit");
      too_many = true;
      return;
    }
    files.emplace_back(p, rel(p));
  }
  bool too_many = false;
};

}  // namespace

std::unique_ptr<Compilation> compile(const CompileOptions& opts, Diagnostics& diags) {
  auto c = std::make_unique<Compilation>();
  const fs::path root(opts.sources);
  const std::string data_dir = opts.data.empty() ? (root / "data").string() : opts.data;
  std::error_code ec;
  if (!fs::is_directory(root, ec)) {
    diags.error({opts.sources, 0, 0}, "sources folder not found", "pass --sources DIR (default: kb-sources)");
    return nullptr;
  }
  const fs::path real_root = fs::canonical(root, ec);
  if (!check_data_folder(real_root, data_dir, !opts.data.empty(), diags)) return nullptr;
  if (!load_vocab(data_dir, c->vocab, diags)) return nullptr;
  if (!check_vocab_values(c->vocab, diags)) return nullptr;
  if (!load_perf_data(data_dir, c->perf_data, diags)) return nullptr;
  for (const auto& entry : fs::directory_iterator(data_dir, ec)) {
    if (!entry.is_regular_file()) continue;
    auto bytes = read_file(entry.path().string(), limits::kMaxDataFileBytes);
    c->data_files.emplace_back(fs::relative(entry.path(), root, ec).generic_string(), sha256_hex(bytes ? *bytes : ""));
  }
  std::sort(c->data_files.begin(), c->data_files.end());

  // Documents: *.md (markdown editions) and *.txt (text exports), outside
  // the data folder; README.md files document a folder and are skipped.
  SourceWalk walk{root, real_root, fs::weakly_canonical(data_dir, ec), diags, {}, {}, false};
  const int walk_errors = diags.error_count();
  walk.folder(root, 0);
  if (diags.error_count() > walk_errors) return nullptr;  // a folder not read is an error, never a silent cut
  auto& files = walk.files;
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    diags.error({opts.sources, 0, 0}, "no sources found (no .md or .txt files)",
                "put the editions under skill/ and references/, or pass --sources DIR");
    return nullptr;
  }

  const TextExportHints hints = c->vocab.text_export_hints();
  std::vector<Document> docs;
  std::uint64_t total_bytes = 0;
  for (const auto& [f, rel] : files) {
    FileRead read = read_regular_file(f.string(), limits::kMaxSourceFileBytes);
    if (!read.bytes) {
      diags.error({rel, 0, 0}, "cannot read file: " + read.error, "check permissions; a source is a regular file");
      continue;
    }
    const std::string& bytes = *read.bytes;
    total_bytes += bytes.size();
    if (total_bytes > limits::kMaxSourcesBytes) {
      diags.error({opts.sources, 0, 0}, "the sources pass the limit of " + std::to_string(limits::kMaxSourcesBytes) + " bytes",
                  "docs/security.md says how to change the limit");
      return nullptr;
    }
    SourceFile sf{rel, bytes};
    const int before = diags.error_count();
    if (const PerfSource* perf = c->perf_data.source(rel)) {  // a performance page, not an edition (compiler/perf)
      if (auto page = ingest_markdown_page(sf, diags); page && diags.error_count() == before) {
        const auto edition = static_cast<int>(perf - c->perf_data.files.data());
        extract_perf(*page, *perf, edition, c->perf_data, c->perf, diags);
      }
      continue;
    }
    const EditionRow* edition = c->vocab.markdown_edition(rel);
    if (!edition && opts.fallback_edition && !states_edition(bytes)) edition = &*opts.fallback_edition;
    std::optional<Document> doc = f.extension() == ".md" ? ingest_markdown(sf, diags, edition) : ingest_text_export(sf, hints, diags);
    if (!doc) continue;
    if (!c->vocab.languages.count(doc->meta.lang)) {
      diags.error({rel, key_line(bytes, "lang"), 7}, "unknown lang '" + doc->meta.lang + "'",
                  "known languages: " + join(std::vector<std::string>(c->vocab.languages.begin(), c->vocab.languages.end()), ", ") +
                      " (add a language to data/sections.tsv and data/lexicon.tsv)");
      continue;
    }
    if (diags.error_count() > before) continue;  // a document with errors contributes no facts
    // A control or invisible character (base/escape.hpp: Unicode's Cc, Cf,
    // Zl, Zp) would reach terminals (kbq) and pages (generate) through every
    // fact of the document.
    if (auto at = find_control(bytes)) {
      diags.error(span_of_byte(rel, bytes, *at), "control character " + describe_code_point(bytes, *at) + " in a source",
                  "remove it: source text reaches terminals and generated pages");
      continue;
    }
    docs.push_back(std::move(*doc));
  }
  check_restorations(docs, diags);

  std::map<std::tuple<std::string, std::string, int>, std::string> seen;
  for (auto& doc : docs) {
    const auto key = std::make_tuple(document_name(doc), doc.meta.lang, doc.meta.revision);
    if (auto it = seen.find(key); it != seen.end()) {
      const auto bytes = read_file((root / doc.path).string());
      diags.error({doc.path, bytes ? key_line(*bytes, "revision") : 1, 1},
                  "two sources of the same language and revision: " + doc.meta.lang + " revision " + std::to_string(doc.meta.revision) +
                      " is also " + it->second,
                  "give the newer edition a higher revision, or remove one");
      continue;
    }
    seen[key] = doc.path;
    c->documents.push_back(std::move(doc));
  }
  check_revision_dates(c->documents, opts.sources, diags);
  for (const auto& d : c->documents) extract(d, c->vocab, c->extracted, diags);
  c->resolved = resolve(c->extracted, c->vocab, diags);
  c->code = load_code_facts(opts.sources, opts.code, diags);
  c->drift = find_drift(c->extracted, c->resolved, c->code, c->vocab);
  resolve_perf(c->perf, c->code);
  return c;
}

void write_kb(const Compilation& c, const std::string& path, const KbDerive& store_derived, KbContents contents) {
  const EmitInput in{&c.documents, &c.vocab, &c.resolved, &c.extracted.sections, &c.extracted.entities,
                     c.data_files, &c.code,  &c.drift,    c.perf.files};
  write_kb_file(
      path,
      [&](Db& db) {
        emit_tables(db, in);
        emit_perf(db, c.perf, c.perf_data);
        derive(db);
      },
      contents, store_derived);
}

namespace {

// Where data/planner.tsv (as load_vocab read it) sets `key`: its value's
// cell, or nullopt when it has no such row.
std::optional<Span> planner_cell(const Vocab& v, const std::string& key) {
  for (const auto& row : v.planner.rows)
    if (v.planner.get(row, "key") == key) return v.planner.span(row, "value");
  return std::nullopt;
}

}  // namespace

bool build_kb(const CompileOptions& opts, const std::string& out, Diagnostics& diags, const KbDerive& store_derived, KbContents contents) {
  auto c = compile(opts, diags);
  if (!c || diags.has_errors()) return false;
  try {
    write_kb(*c, out, store_derived, contents);
  } catch (const KbValueError& e) {
    // A value of data/planner.tsv the readers refuse (a setting that is not
    // a number, a script the parser does not tell apart): its line there.
    if (const auto at = planner_cell(c->vocab, e.row()); e.table() == "planner" && at) {
      diags.error(*at, e.what(), "fix the value (its source column says what it means); " + out + " is unchanged");
      return false;
    }
    diags.error({out, 0, 0}, std::string("cannot write the knowledge base: ") + e.what(),
                "fix the row it names in the sources; the previous KB is unchanged");
    return false;
  } catch (const std::exception& e) {
    diags.error({out, 0, 0}, std::string("cannot write the knowledge base: ") + e.what(),
                "check that the output folder is writable; the previous KB is unchanged");
    return false;
  }
  return true;
}

std::vector<std::string> lint_lines(const Compilation& c) {
  std::vector<std::string> out;
  auto loc = [](const Provenance& p) { return p.file + ":" + std::to_string(p.line); };
  auto rev = [](const Provenance& p) { return "rev " + std::to_string(p.revision) + " " + p.lang; };
  for (const auto& k : c.resolved.conflicts) {
    const auto& w = k.values.front();
    for (size_t i = 1; i < k.values.size(); ++i) {
      const auto& v = k.values[i];
      out.push_back(loc(v.prov) + ": " + (v.prov.revision < w.prov.revision ? "conflict" : "translation-mismatch") + ": " + k.entity_kind +
                    " " + k.entity_key + " " + k.field + ": '" + v.value + "' (" + rev(v.prov) + ") -> '" + w.value + "' (" + rev(w.prov) +
                    ", " + loc(w.prov) + ", wins)");
    }
  }
  for (const auto& r : c.resolved.renames)
    out.push_back(loc(r.old_prov) + ": rename: dataset preset '" + r.from + "' (" + rev(r.old_prov) + ") -> '" + r.to + "' (" +
                  rev(r.new_prov) + ", " + loc(r.new_prov) + ")");
  for (const auto& e : c.resolved.entities)
    for (const auto& lang : e.missing)
      out.push_back(loc(e.winner().prov) + ": missing: " + e.kind + " " + e.key + " has no " + lang + " text");
  for (const auto& f : c.resolved.findings) out.push_back(loc(f.prov) + ": " + f.kind + ": " + f.message);
  // The documents against the code (the code decides what runs).
  for (const auto& d : c.drift)
    out.push_back(loc(d.doc) + ": drift: " + std::string(to_string(d.kind)) + " " + d.subject + (d.field.empty() ? "" : " " + d.field) +
                  ": document '" + d.doc_value + "' (" + rev(d.doc) + ") -> code " +
                  (d.code_value.empty() ? std::string("(none)") : "'" + d.code_value + "'") +
                  (d.code_at.empty() ? "" : " (" + d.code_at + ")") + (d.note.empty() ? "" : "; " + d.note));
  // What changed in the code between snapshots.
  for (const auto& ch : c.code.changes)
    for (const auto& r : ch.rows)
      out.push_back(ch.file + ":" + std::to_string(r.line) + ": code-change: " + r.change + " " + r.name + " (" + r.kind + ")" +
                    (r.field.empty() ? "" : " " + r.field) +
                    (r.old_value.empty() && r.new_value.empty() ? "" : ": '" + r.old_value + "' -> '" + r.new_value + "'") + " (" +
                    ch.old_commit + " -> " + ch.new_commit + ")");
  for (auto& line : perf_lint_lines(c.perf)) out.push_back(std::move(line));  // measured rows (compiler/perf)
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace kb
