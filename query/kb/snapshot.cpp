// The knowledge base as values (see snapshot.hpp): the planner settings'
// parsing and checks, and the lookups the stages use.
#include "query/kb/snapshot.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "base/checked.hpp"
#include "base/choose.hpp"
#include "base/limits.hpp"
#include "base/text.hpp"

namespace kbq {

std::optional<EntityRef> parse_entity_ref(std::string_view text) {
  const auto slash = text.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  return EntityRef{std::string(text.substr(0, slash)), std::string(text.substr(slash + 1))};
}

// --- the planner settings ---------------------------------------------------------------

namespace {

class SettingsReader {
 public:
  explicit SettingsReader(const std::map<std::string, std::string>& rows) : rows_(rows) {}

  [[noreturn]] void bad(const std::string& key, const std::string& problem) const {
    throw kb::KbValueError("planner", "value", key, problem);
  }
  const std::string& text(const std::string& key) const {
    auto it = rows_.find(key);
    if (it == rows_.end()) bad(key, "missing (data/planner.tsv has no such row)");
    return it->second;
  }
  // A text the planner splices into a command or compares: never empty.
  const std::string& word(const std::string& key) const {
    const std::string& v = text(key);
    if (kb::trim(v).empty()) bad(key, "empty");
    return v;
  }
  long long whole(const std::string& key, long long lo, long long hi) const { return whole_in(key, text(key), lo, hi); }
  long long whole_in(const std::string& key, const std::string& v, long long lo, long long hi) const {
    char* end = nullptr;
    errno = 0;
    const long long n = v.empty() ? 0 : std::strtoll(v.c_str(), &end, 10);
    if (v.empty() || errno != 0 || *end != '\0' || !std::isdigit(static_cast<unsigned char>(v[0])))
      bad(key, "'" + v + "' is not a whole number");
    if (n < lo || n > hi) bad(key, std::to_string(n) + " is not in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return n;
  }
  // A share in [0, 1].
  double share(const std::string& key) const {
    const std::string& v = text(key);
    char* end = nullptr;
    const double d = v.empty() ? 0 : std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0' || !std::isfinite(d)) bad(key, "'" + v + "' is not a number");
    if (d < 0 || d > 1) bad(key, v + " is not between 0 and 1");
    return d;
  }
  EntityRef entity(const std::string& key) const {
    auto e = parse_entity_ref(word(key));
    if (!e || e->kind.empty() || e->key.empty()) bad(key, "'" + text(key) + "' is not an entity kind/key");
    return *e;
  }
  // "a:b,c:d": each pair with its colon.
  std::vector<std::pair<std::string, std::string>> pairs(const std::string& key) const {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& pair : kb::split(text(key), ',')) {
      const auto colon = pair.find(':');
      if (colon == std::string::npos) bad(key, "'" + pair + "' is not name:value");
      out.emplace_back(kb::trim(pair.substr(0, colon)), kb::trim(pair.substr(colon + 1)));
    }
    return out;
  }
  // tp, pp, cp and ep, each once, in the order to change them.
  std::vector<Dim> change_order(const std::string& key) const {
    std::vector<Dim> out;
    for (const auto& id : kb::split(text(key), ',')) {
      auto d = parse_dim(kb::trim(id));
      if (!d || *d == Dim::ETP || *d == Dim::VP) bad(key, "'" + kb::trim(id) + "' is not tp, pp, cp or ep");
      if (std::find(out.begin(), out.end(), *d) != out.end()) bad(key, "'" + kb::trim(id) + "' is named twice");
      out.push_back(*d);
    }
    if (out.size() != 4) bad(key, "names " + std::to_string(out.size()) + " of the sizes tp, pp, cp, ep; the planner changes all four");
    return out;
  }

 private:
  const std::map<std::string, std::string>& rows_;
};

// A TSV cell's text with "\n" (backslash, n) as line breaks, line by line.
std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines{{}};
  for (size_t i = 0; i < text.size(); ++i)
    if (text.compare(i, 2, "\\n") == 0) {
      lines.emplace_back();
      ++i;
    } else {
      lines.back() += text[i];
    }
  return lines;
}

}  // namespace

Settings read_settings(const std::map<std::string, std::string>& rows) {
  const SettingsReader r(rows);
  Settings s;
  s.long_context_threshold = r.whole("long_context_threshold", 1, kb::limits::kMaxSeqLen);
  s.default_gpu = r.word("default_gpu");
  s.multi_node_flags = r.text("multi_node_flags");
  s.recipe_flag = r.word("recipe_flag");
  s.dataset_flag = r.word("dataset_flag");
  s.nproc_flag = r.word("nproc_flag");
  s.bench_nodes_flag = r.word("bench_nodes_flag");
  s.bench_gpus_per_node_flag = r.word("bench_gpus_per_node_flag");
  s.bench_mode_flag = r.word("bench_mode_flag");
  s.library_command = r.entity("library_command");
  s.benchmark_command = r.entity("benchmark_command");
  s.moe_overlap_hardware = r.word("moe_overlap_hardware");
  s.benchmark_intent = r.word("benchmark_intent");
  s.largest_intent = r.word("largest_intent");
  s.precision_gpus = kb::split(r.word("precision_gpus"), ' ');
  s.cuda_graph_dimension = r.word("cuda_graph_dimension");
  s.vlm_sft_images_modality = r.word("vlm_sft_images_modality");
  s.unasked_dataset_modalities = kb::split(r.word("unasked_dataset_modalities"), ' ');
  s.vlm_sft_images_mode = r.word("vlm_sft_images_mode");
  s.launcher_parser = r.word("launcher_parser");
  s.change_order = r.change_order("change_order");
  s.max_world = r.whole("max_world", 1, kb::limits::kMaxGpus);
  s.pretrained_checkpoint_path = r.word("pretrained_checkpoint_path");
  s.none_literal = r.word("none_literal");
  s.borderline_memory = r.share("borderline_memory");
  s.intent_modality = r.pairs("intent_modality");
  s.default_precision = r.word("default_precision");
  s.launch_mode_flag = r.word("launch_mode_flag");
  for (const auto& [intent, n] : r.pairs("intent_gpus"))
    s.intent_gpus.emplace_back(intent, r.whole_in("intent_gpus", n, 1, kb::limits::kMaxGpus));
  for (auto [key, into] : {std::pair{"memory_lever", &s.memory_lever}, std::pair{"optimizer_lever", &s.optimizer_lever}})
    for (const auto& kv : kb::split(r.word(key), ' ')) {
      const auto eq = kv.find('=');
      if (kv.empty()) continue;
      if (eq == std::string::npos || eq == 0 || eq + 1 == kv.size()) r.bad(key, "'" + kv + "' is not key=value");
      into->emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
    }
  s.base_language = r.word("base_language");
  s.own_layout_tolerance = r.share("own_layout_tolerance");
  s.memory_headroom = r.share("memory_headroom");
  s.multi_node_env = r.pairs("multi_node_env");
  for (const auto& [name, role] : s.multi_node_env)
    if (role != "node_rank" && role != "first_node") r.bad("multi_node_env", "'" + role + "' is not node_rank or first_node");
  for (const auto& line : split_lines(r.word("slurm_script"))) s.slurm_script += line + "\n";
  s.checkpoint_import = r.word("checkpoint_import");
  s.checkpoint_import_at = r.word("checkpoint_import_at");
  s.hf_model_placeholder = r.word("hf_model_placeholder");
  s.dry_run_dest = r.word("dry_run_dest");
  return s;
}

// --- lookups -------------------------------------------------------------------------------

const Gpu* Snapshot::gpu(std::string_view key) const {
  for (const auto& g : gpus)
    if (g.key == key) return &g;
  return nullptr;
}

std::string Snapshot::gpu_name(std::string_view key) const {
  const Gpu* g = gpu(key);
  return g && !g->short_name.empty() ? g->short_name : kb::upper_ascii(std::string(key));
}

const PrecisionInfo* Snapshot::precision(std::string_view key) const {
  for (const auto& p : precisions)
    if (p.key == key) return &p;
  return nullptr;
}

std::optional<bool> Snapshot::runs(std::string_view key, const Gpu& g) const {
  const PrecisionInfo* p = precision(key);
  if (!p || g.arch.empty()) return std::nullopt;
  return p->archs.count(g.arch) > 0;
}

namespace {

char lower_ascii(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// SQL's LIKE: '%' any run, '_' any one character, ASCII letters without case.
bool like(std::string_view text, std::string_view pattern) {
  size_t t = 0, p = 0, star_p = std::string_view::npos, star_t = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '%') {
      star_p = p++;
      star_t = t;
    } else if (p < pattern.size() && (pattern[p] == '_' || lower_ascii(pattern[p]) == lower_ascii(text[t]))) {
      ++p;
      ++t;
    } else if (star_p != std::string_view::npos) {
      p = star_p + 1;
      t = ++star_t;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '%') ++p;
  return p == pattern.size();
}

}  // namespace

const ConfigKey* Snapshot::config_key(std::string_view key) const {
  for (const auto& k : config_keys)
    if (k.key == key) return &k;
  const std::string pattern = "%," + std::string(key) + ",%";
  for (const auto& k : config_keys)
    if (like("," + k.aliases + ",", pattern)) return &k;
  return nullptr;
}

std::string Snapshot::key_for(std::string_view dimension) const {
  const ConfigKey* best = nullptr;
  for (const auto& k : config_keys)
    if (k.dimension == dimension && (!best || k.key < best->key)) best = &k;
  return best ? best->key : std::string();
}

const Flag* Snapshot::flag_for(std::string_view config_key) const {
  for (const auto& f : flags)  // by item: the first that sets the key
    if (!f.config_key.empty() && f.config_key == config_key) return &f;
  return nullptr;
}

std::optional<Flag> Snapshot::flag_named(std::string_view dest) const {
  const std::string item = settings.launcher_parser + ":" + std::string(dest);
  for (const auto& f : flags)
    if (f.item == item) {
      // "--dry-run --dry_run": the first spelling the parser accepts.
      Flag out = f;
      out.short_option = kb::split(f.short_option, ' ').front();
      out.long_option = kb::split(f.long_option, ' ').front();
      out.config_key.clear();
      return out;
    }
  return std::nullopt;
}

std::string Snapshot::task_of(std::string_view launch_mode) const {
  auto it = tasks.find(std::string(launch_mode));
  return it == tasks.end() ? std::string() : it->second;
}

const ModelBrief* Snapshot::model(std::string_view key) const {
  auto it = models.find(key);
  return it == models.end() ? nullptr : &it->second;
}

const EntityRef* Snapshot::check_entity(std::string_view check) const {
  for (const auto& [id, e] : checks)
    if (id == check) return &e;
  return nullptr;
}

std::vector<EntityRef> Snapshot::cited() const {
  std::vector<EntityRef> out{settings.library_command, settings.benchmark_command};
  for (const auto& [id, e] : checks) out.push_back(e);
  for (const auto& k : config_keys)
    if (auto e = parse_entity_ref(k.entity)) out.push_back(*e);
  return out;
}

const std::vector<EntityText>& CitedTexts::of(const EntityRef& e) const {
  static const std::vector<EntityText> kNone;
  auto it = texts.find(e);
  return it == texts.end() ? kNone : it->second;
}

// --- per recipe -----------------------------------------------------------------------------

std::string RecipeData::cite(const std::string& field) const {
  auto it = facts.find(field);
  return it == facts.end() || it->second.at.empty() ? std::string() : it->second.at + "@" + commit;
}

std::vector<std::string> CodeConfigKeys::field_keys() const {
  std::vector<std::string> out;
  for (const auto& r : rows)
    if (r.kind != "section") out.push_back(r.key);
  std::stable_sort(out.begin(), out.end());
  return out;
}

bool CodeConfigKeys::exists(const std::string& key) const {
  const std::string section = key.substr(0, key.find('.'));
  return std::any_of(rows.begin(), rows.end(),
                     [&](const Row& r) { return r.key == key || (r.kind == "section" && r.type == "open" && r.key == section); });
}

std::vector<std::string> CodeConfigKeys::section_fields(const std::string& key) const {
  const std::string prefix = key.substr(0, key.find('.') + 1);
  std::vector<std::string> out;
  for (auto& k : field_keys())
    if (k.size() > prefix.size() && k.compare(0, prefix.size(), prefix) == 0) out.push_back(std::move(k));
  return out;
}

const std::string* CodeConfigKeys::type_of(const std::string& key) const {
  for (const auto& r : rows)
    if (r.key == key && r.kind != "section") return &r.type;
  return nullptr;
}

// --- texts -----------------------------------------------------------------------------------

std::optional<std::string> EntityText::part(std::string_view name) const {
  if (!parsed_parts) {
    const auto j = nlohmann::json::parse(parts, nullptr, false);
    if (!j.is_object()) throw kb::KbValueError("entity_texts", "parts", row, "not a JSON object");
    std::map<std::string, std::string, std::less<>> all;
    for (const auto& [k, v] : j.items()) {
      if (!v.is_string()) throw kb::KbValueError("entity_texts", "parts", row, "part '" + k + "' is not a string");
      all.emplace(k, v.get<std::string>());
    }
    parsed_parts = std::move(all);
  }
  const auto it = parsed_parts->find(name);
  return it == parsed_parts->end() ? std::nullopt : std::optional<std::string>(it->second);
}

// --- prose -----------------------------------------------------------------------------------

Prose prose(const std::vector<EntityText>& texts, const EntityRef& e, const std::string& lang, const std::string& base_language,
            const std::string& part) {
  Prose p;
  if (texts.empty()) return p;
  // The same choice as kbc generate's pages (base/choose.hpp).
  const auto [i, shown] = kb::choose_edition(
      texts, lang, base_language, [](const EntityText& t) { return t.lang; }, [](const EntityText& t) { return t.usable; });
  const EntityText* pick = &texts.at(i);
  p.fallback = !shown.empty();
  p.lang = pick->lang;
  const auto named = part.empty() ? std::nullopt : pick->part(part);
  p.text = named ? *named : pick->text;
  p.source = {pick->file, pick->line, pick->revision, e.kind + " " + e.key};
  return p;
}

std::vector<std::string> superseded_notes(const std::vector<Superseded>& rows, const EntityRef& e, const std::string& label) {
  std::vector<std::string> out;
  for (const auto& s : rows) {
    const std::string what = e.kind + " " + e.key + " " + s.field + " " + s.value;
    const std::string text =
        fill(label, {{"rev", std::to_string(s.revision)}, {"where", s.file + ":" + std::to_string(s.line)}, {"value", what}});
    if (std::find(out.begin(), out.end(), text) == out.end()) out.push_back(text);
  }
  return out;
}

std::string fill(std::string text, const std::vector<std::pair<std::string, std::string>>& vars) {
  return kb::fill_placeholders(text, vars);  // one pass: no value expands into another
}

}  // namespace kbq
