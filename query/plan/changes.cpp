// Plan stage: what the command changes in the recipe (see plan_int.hpp):
// the dataset preset, every size it pins, the batch, the launcher mode, the
// starting checkpoint and the user's own overrides, each with the impact
// class of its config key and the documents' sentence that says so, in the
// answer's language.
#include <algorithm>
#include <string_view>

#include "query/plan/plan_int.hpp"

namespace kbq::plan_int {

namespace {

// The first sentence of a paragraph (the one that names its layer): up to
// the earliest ". " or ideographic full stop.
std::string first_sentence(const std::string& text) {
  constexpr std::string_view kIdeographicStop = "\xE3\x80\x82";
  const std::string_view t = text;
  size_t end = std::string_view::npos, stop = t.size();  // the sentence's end, and where its stop starts
  for (size_t at = t.find('.'); at != std::string_view::npos; at = t.find('.', at + 1))
    if (at + 1 < t.size() && t[at + 1] == ' ') {
      end = at + 2;
      stop = at;
      break;
    }
  // '.' is found with memchr (find); the ideographic stop is compared at
  // each byte: its lead byte starts every kana, so looking for that byte
  // alone would stop at each character of Japanese text.
  for (size_t at = 0; at < stop && t.size() - at >= kIdeographicStop.size(); ++at)
    if (t[at] == kIdeographicStop[0] && t[at + 1] == kIdeographicStop[1] && t[at + 2] == kIdeographicStop[2]) {
      end = at + kIdeographicStop.size();
      break;
    }
  return kb::trim(end == std::string_view::npos ? text : text.substr(0, end));
}

// The impact class of a config key, with the sentence that says so in the
// answer's language.
ConfigLayer layer_of(const Context& c, const ConfigKey& k) {
  ConfigLayer l{k.layer, k.sentence, {k.file, k.line, 0, "config layer of " + k.key}};
  if (auto e = parse_entity_ref(k.entity)) {
    const Prose p = c.prose(*e);
    if (!p.text.empty() && p.lang == c.lang) {
      l.sentence = first_sentence(p.text);
      l.source = p.source;
      l.source.what = "config layer of " + k.key;
    } else {
      l.source.revision = p.source.revision;
    }
  }
  return l;
}

// A key the KB has no config_keys row for keeps its unknown impact. The
// layers are kept (c.layers) by the KB's own key, the one an alias names
// too: never more of them than the KB has rows.
void classify(const Context& c, Override& o) {
  const ConfigKey* k = c.kb.config_key(o.key);
  if (!k) return;
  const ConfigLayer* l = nullptr;
  ConfigLayer fresh;
  if (c.layers) {
    auto it = c.layers->find(k->key);
    if (it == c.layers->end()) it = c.layers->emplace(k->key, layer_of(c, *k)).first;
    l = &it->second;
  } else {
    fresh = layer_of(c, *k);
    l = &fresh;
  }
  o.impact = l->impact;
  o.sentence = l->sentence;
  o.source = l->source;
}

Override make_override(const Context& c, const std::string& key, const std::string& value, const std::string& recipe_value) {
  Override o;
  o.key = key;
  o.value = value;
  o.recipe_value = recipe_value;
  o.pinned_only = value == recipe_value;
  classify(c, o);
  return o;
}

std::string opt(const std::optional<long long>& v) { return v ? std::to_string(*v) : std::string(); }

}  // namespace

std::string pick_dataset(const Context& c, const Recipe& r, const std::string& launch_mode, const std::string& wanted,
                         std::vector<std::string>& notes) {
  const auto& code = c.kb.presets;
  auto allowed = [&](const std::string& preset) {
    auto it = code.find(preset);
    return it != code.end() && std::find(it->second.begin(), it->second.end(), launch_mode) != it->second.end();
  };
  std::vector<std::string> fits;
  for (const auto& [preset, modes] : c.kb.datasets)
    if (std::find(modes.begin(), modes.end(), r.mode) != modes.end() && (code.empty() || allowed(preset))) fits.push_back(preset);
  if (!wanted.empty()) {
    std::string current = wanted;
    for (const auto& [from, to] : c.kb.renames)
      if (from == wanted) current = to;
    if (code.empty() || allowed(current)) return current;
    notes.push_back(c.label("note.dataset_mode", {{"preset", current}, {"mode", launch_mode}, {"alternatives", kb::join(fits, " / ")}}));
  }
  return fits.empty() ? std::string() : fits.front();
}

void overrides_of(const Context& c, Result& res, const Recipe& r, const Plan& p, const std::string& launch_mode) {
  const Layout& L = res.layout;
  auto add = [&](const std::string& dim, long long value, const std::string& recipe_value) {
    const std::string key = c.kb.key_for(dim);
    if (!key.empty()) res.overrides.push_back(make_override(c, key, std::to_string(value), recipe_value));
  };
  if (r.kind == RecipeKind::Benchmark) return;  // a benchmark runs as exported
  add("tp", L.tp, opt(r.tp));
  add("pp", L.pp, opt(r.pp));
  add("cp", L.cp, opt(r.cp));
  if (r.moe) {
    add("ep", L.ep, opt(r.ep));
    add("etp", L.etp, r.etp ? opt(r.etp) : std::string("1"));
  }
  if (L.pp > 1 && L.vp > 0) {
    add("vp", L.vp, opt(r.vp));
  } else if (r.vp && *r.vp > 0 && L.vp <= 0) {
    // The recipe's virtual pipeline on a layout without one: set to None,
    // or Megatron Core refuses an interleaved schedule on one stage
    // (initialize_model_parallel: "pipeline-model-parallel size should be
    // greater than 1 with interleaved schedule").
    const std::string key = c.kb.key_for("vp");
    if (!key.empty() && !c.settings().none_literal.empty())
      res.overrides.push_back(make_override(c, key, c.settings().none_literal, opt(r.vp)));
  }
  if (L.tp > 1 || (r.sp && *r.sp != L.sp)) {
    const std::string key = c.kb.key_for("sp");
    if (!key.empty())
      res.overrides.push_back(make_override(c, key, L.sp ? "true" : "false", r.sp ? (*r.sp ? "true" : "false") : std::string()));
  }
  if (r.seq_len && L.seq != *r.seq_len) add("seq", L.seq, opt(r.seq_len));
  if (res.batch.gbs != res.batch.recipe_gbs && res.batch.recipe_gbs > 0) add("gbs", res.batch.gbs, std::to_string(res.batch.recipe_gbs));
  if (res.batch.mbs != res.batch.recipe_mbs && res.batch.recipe_mbs > 0) add("mbs", res.batch.mbs, std::to_string(res.batch.recipe_mbs));
  if (launch_mode != r.launch_mode && !launch_mode.empty())
    res.overrides.push_back(make_override(c, std::string(plan_int::kLaunchModeKey), launch_mode, r.launch_mode));
  if (r.mode != kb::kPretrainMode && !r.mode.empty()) {
    const std::string key = c.kb.key_for("pretrained");
    if (!key.empty()) {
      Override o = make_override(c, key, c.settings().pretrained_checkpoint_path, "");
      o.pinned_only = false;
      res.overrides.push_back(o);
    }
  }
  for (const auto& [key, value] : p.other) res.overrides.push_back(make_override(c, key, value, ""));
}

}  // namespace kbq::plan_int
