// Plan stage: kbq check's KEY=VALUE overrides (see plan.hpp), checked
// against the documents' config keys and the code's ConfigContainer before
// anything is planned: an unknown key, a size that is not a positive whole
// number, a value the field's annotated type cannot hold is an error here,
// not a failure at start-up.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "base/dsl/parse.hpp"
#include "query/plan/plan_int.hpp"

namespace kbq {

using plan_int::to_ll;

namespace {

// The annotated type without its Optional[...] or " | None": the type
// itself when it is not Optional.
std::string base_type(const std::string& type) {
  std::string base = type;
  for (const char* wrap : {"Optional[", " | None"}) {
    if (auto at = base.find(wrap); at != std::string::npos)
      base = at == 0 ? base.substr(std::strlen(wrap), base.size() - std::strlen(wrap) - 1) : base.substr(0, at);
  }
  return base;
}

// An error when `v` is not a value of the annotated Python type (int, float
// and bool fields; None where the type is Optional).
std::optional<Error> wrong_type(const std::string& k, const std::string& key, const std::string& v, const std::string& type) {
  const std::string base = base_type(type);
  const bool none_ok = base != type && (v == "None" || v == "null");
  auto whole = [&v] {
    char* end = nullptr;
    errno = 0;
    (void)std::strtoll(v.c_str(), &end, 10);
    return !v.empty() && errno == 0 && *end == '\0';
  };
  auto real = [&v] {
    char* end = nullptr;
    const double d = std::strtod(v.c_str(), &end);
    return !v.empty() && *end == '\0' && std::isfinite(d);
  };
  const std::string lv = kb::fold(v);
  const bool ok = none_ok || (base == "int" ? whole() : base == "float" ? real() : base == "bool" ? (lv == "true" || lv == "false") : true);
  if (ok) return std::nullopt;
  return Error{"override '" + k + "=" + v + "': " + key + " has type " + type + " in the code", "e.g. " + key + "=" +
                                                                                                    (base == "bool"  ? "true"
                                                                                                     : base == "int" ? "2"
                                                                                                                     : "0.5")};
}

}  // namespace

std::variant<KeyValues, Error> resolve_overrides(const Context& c, const CodeConfigKeys& code, const KeyValues& overrides,
                                                 std::vector<std::string>& notes, std::vector<std::string>& warnings) {
  const Snapshot& kb = c.kb;
  KeyValues out;
  for (const auto& [k, v] : overrides) {
    std::string key = k;
    if (const ConfigKey* ck = kb.config_key(k); ck && ck->key != k) {
      notes.push_back(c.label("note.key_rewritten", {{"from", k}, {"to", ck->key}}));
      key = ck->key;
    }
    const ConfigKey* ck = kb.config_key(key);
    if (!ck && !code.exists(key)) {
      // The nearest real keys by edit distance (bounded: a long key costs
      // no more than a short one).
      const std::vector<std::string> top = kb::nearest(key, code.field_keys(), 3);
      return Error{"unknown override key '" + k + "': the code's ConfigContainer has no such field",
                   "did you mean " + kb::join(top, ", ") + "?"};
    }
    // A size whose field is Optional may be set to None (a virtual pipeline
    // off): the planner reads it as no such size.
    const std::string* type = code.type_of(key);
    // A key no field has, under a section whose class derives from one
    // outside the snapshot (Megatron Core's TransformerConfig, ...): it may
    // be a field there, or a typo that fails at launch. kbq cannot tell, and
    // says so with the section's nearest fields it knows.
    if (!ck && !type) {
      // A size's short name under a section ("model.tp") names that size's key first.
      std::vector<std::string> near;
      if (const std::string sized = kb.key_for(key.substr(key.find('.') + 1)); !sized.empty()) near.push_back(sized);
      for (auto& f : kb::nearest(key, code.section_fields(key), 3))
        if (near.size() < 3 && std::find(near.begin(), near.end(), f) == near.end()) near.push_back(std::move(f));
      warnings.push_back(c.label("warn.key_unverified", {{"key", key}, {"near", kb::join(near, ", ")}}));
    }
    const bool optional = type && base_type(*type) != *type;
    const bool none = optional && !c.settings().none_literal.empty() && v == c.settings().none_literal;
    if (ck && parse_dim(ck->dimension) && !none) {
      const long long n = to_ll(v, 0);
      if (n < 1 || n > kbq::dsl::kMaxCount)
        return Error{"override '" + k + "=" + v + "': " + ck->key + " must be a positive whole number", "e.g. " + ck->key + "=2"};
    }
    if (ck && ck->dimension == "sp" && kb::fold(v) != "true" && kb::fold(v) != "false")
      return Error{"override '" + k + "=" + v + "': " + ck->key + " is true or false", "e.g. " + ck->key + "=true"};
    if (ck && (ck->dimension == "seq" || ck->dimension == "gbs" || ck->dimension == "mbs")) {
      const long long n = to_ll(v, 0);
      if (n < 1 || n > kb::limits::kMaxSeqLen)
        return Error{"override '" + k + "=" + v + "': " + ck->key + " must be a positive whole number up to " +
                         std::to_string(kb::limits::kMaxSeqLen),
                     "e.g. " + ck->key + "=4096"};
    }
    // A value the field's annotated type cannot hold fails at start-up: caught here.
    if (type)
      if (auto err = wrong_type(k, key, v, *type)) return *err;
    out.emplace_back(key, v);
  }
  return out;
}

}  // namespace kbq
