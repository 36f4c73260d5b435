// Render stage: `kbq list` (query/kbq.hpp RecipeList) as text (one line per
// recipe: its name and its one-line facts), Markdown (a bullet per recipe)
// or JSON (docs/recipes.schema.json). The words come from the labels.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/text.hpp"
#include "query/kbq.hpp"

namespace kbq {
namespace {

using json = nlohmann::ordered_json;

std::string fill(std::string text, const std::vector<std::pair<std::string, std::string>>& vars) {
  for (const auto& [k, v] : vars) {
    const std::string token = "{" + k + "}";
    for (auto at = text.find(token); at != std::string::npos; at = text.find(token, at + v.size())) text.replace(at, token.size(), v);
  }
  return text;
}

json opt(const std::optional<long long>& v) { return v ? json(*v) : json(nullptr); }

json recipe_json(const Recipe& r) {
  return {{"name", r.name},
          {"kind", std::string(kb::to_string(r.kind))},
          {"mode", r.mode},
          {"launch_mode", r.launch_mode},
          {"model_key", r.model_key},
          {"model", r.model},
          {"modality", r.modality},
          {"moe", r.moe},
          {"target", r.target},
          {"tp", opt(r.tp)},
          {"pp", opt(r.pp)},
          {"vp", opt(r.vp)},
          {"cp", opt(r.cp)},
          {"ep", opt(r.ep)},
          {"etp", opt(r.etp)},
          {"sp", r.sp ? json(*r.sp) : json(nullptr)},
          {"seq_length", opt(r.seq_len)},
          {"global_batch_size", opt(r.gbs)},
          {"micro_batch_size", opt(r.mbs)},
          {"dataset", r.dataset},
          {"precision", r.precision},
          {"min_gpus", opt(r.min_gpus)},
          {"native_gpus", opt(r.native_gpus)},
          {"native_hardware", r.native_hardware},
          {"native_precision", r.native_precision}};
}

// "TP 2 · PP 1 · CP 1 · EP 8": the code's parallel sizes (unknown: "?").
std::string layout(const Recipe& r) {
  const auto n = [](const std::optional<long long>& v) { return v ? std::to_string(*v) : std::string("?"); };
  std::vector<std::string> s{"TP " + n(r.tp), "PP " + n(r.pp)};
  if (r.vp) s.push_back("VP " + n(r.vp));
  s.push_back("CP " + n(r.cp));
  if (r.moe) s.push_back("EP " + n(r.ep));
  return kb::join(s, " · ");
}

// The one-line facts of a recipe, in the labels' language.
std::string facts(const Recipe& r, const Labels& lb) {
  std::vector<std::string> parts;
  if (!r.mode.empty())
    parts.push_back(lb("mode." + r.mode) + (!r.launch_mode.empty() && r.launch_mode != r.mode ? " (" + r.launch_mode + ")" : ""));
  parts.push_back(!r.model.empty() ? r.model : !r.model_key.empty() ? r.model_key : "?");
  if (r.modality != "text" && !r.modality.empty()) parts.push_back(r.modality);
  parts.push_back(layout(r));
  const auto n = [](const std::optional<long long>& v) { return v ? std::to_string(*v) : std::string("?"); };
  parts.push_back(fill(lb("list.batch"), {{"seq", n(r.seq_len)}, {"gbs", n(r.gbs)}}));
  if (r.native_gpus && !r.native_hardware.empty())
    parts.push_back(std::to_string(*r.native_gpus) + " × " + kb::upper_ascii(r.native_hardware) +
                    (r.native_precision.empty() ? "" : " " + r.native_precision));
  else if (r.min_gpus)
    parts.push_back(fill(lb("list.min_gpus"), {{"gpus", std::to_string(*r.min_gpus)}}));
  return kb::join(parts, " · ");
}

}  // namespace

std::string render(const RecipeList& l, const Labels& labels, const RenderOptions& o) {
  if (o.format == Format::Json) {
    json j = json::object();
    j["schema_version"] = kAnswerSchemaVersion;
    j["query"] = l.query;
    j["filters"] = {{"mode", l.mode}, {"model", l.model}, {"hardware", l.hardware}, {"kind", l.kind}};
    j["lang"] = l.lang;
    j["count"] = l.recipes.size();
    json rs = json::array();
    for (const auto& r : l.recipes) rs.push_back(recipe_json(r));
    j["recipes"] = std::move(rs);
    return j.dump(2) + "\n";
  }
  if (l.recipes.empty()) return labels("list.none") + "\n";
  const bool md = o.format == Format::Markdown;
  size_t width = 0;
  for (const auto& r : l.recipes) width = std::max(width, r.name.size());
  std::string out;
  std::optional<RecipeKind> group;
  for (const auto& r : l.recipes) {
    if (!group || *group != r.kind) {
      group = r.kind;
      const auto count = std::count_if(l.recipes.begin(), l.recipes.end(), [&](const Recipe& x) { return x.kind == r.kind; });
      const std::string head = fill(labels("list.heading." + std::string(kb::to_string(r.kind))), {{"count", std::to_string(count)}});
      out += (out.empty() ? "" : "\n") + (md ? "## " + head + "\n\n" : head + "\n");
    }
    if (md)
      out += "- `" + r.name + "` — " + facts(r, labels) + "\n";
    else
      out += "  " + r.name + std::string(width - r.name.size() + 2, ' ') + facts(r, labels) + "\n";
  }
  return out;
}

}  // namespace kbq
