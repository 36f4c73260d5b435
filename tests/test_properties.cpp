// Properties over the whole KB, through the query engine (issues 10 and 13):
// - every recipe Megatron Bridge exports (library and benchmark) gets an
//   answer from `kbq show`, which states the code's own TP, PP, CP and EP
//   for every one the code sizes statically, and prints the code's own
//   layout or says why not (a departure note; a caveat when it does not
//   run); the figures are printed;
// - every layout the planner prints as runnable, for every model of the
//   recipe finder × its modes × GPU counts 1…1024 × three GPU types,
//   passes every rule, fits its own memory estimate, multiplies out to the
//   GPU count, and its command launches exactly that.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "base/sqlite.hpp"
#include "base/text.hpp"
#include "process.hpp"
#include "query/kbq.hpp"

namespace {

const std::string kKb = std::string(KB_BINARY_DIR) + "/kb.sqlite";

// Runnable answers that `kbq check`, given the same recipe, GPUs, hardware
// and the changes the answer makes, judges otherwise (question | recipe |
// what check says). check judges the code's own layout with the memory
// model's tolerance as the answer does (issue 24: the six such rows are
// gone); the last two were commands that kept the recipe's VP 5 on PP 1,
// which Megatron Core refuses at start-up (the plan now sets the virtual
// pipeline to null, and check fails rule vp_needs_pp). None is left: a new
// one fails here.
const std::set<std::string> kKnownCheckDisagreements = {};

// Sanitizer builds run 10-20 times slower: the planner grid is thinned there
// (GPU counts 1, 8, 64, 512 on H100), whole in every other build.
using kbtest::kSanitized;

// The code's value of a field of a recipe ("" when the code leaves it open).
std::map<std::string, std::string> code_values(kb::Db& db, const std::string& name, const std::string& kind) {
  std::map<std::string, std::string> out;
  kb::Stmt st(db,
              "SELECT f.field, f.state, f.value FROM code_facts f JOIN code_recipes c ON c.target = f.target "
              "WHERE c.name = ? AND c.kind = ? AND f.field IN ('tp', 'pp', 'cp', 'ep', 'seq_length')");
  st.bind(1, name).bind(2, kind);
  while (st.step())
    if (st.text(1) == "value" || st.text(1) == "default") out[st.text(0)] = st.text(2) == "none" ? "1" : st.text(2);
  return out;
}

// A question's answer (an error fails the test), its results cut to `limit`.
kbq::Answer ask_answer(kbq::Engine& engine, const std::string& q, int limit) {
  kbq::AskOptions opts;
  opts.limit = limit;
  auto res = engine.ask(q, opts);
  const auto* a = std::get_if<kbq::Answer>(&res);
  REQUIRE(a);
  return *a;
}

// kbq check of a planned result, given the recipe, its GPUs and hardware
// and the changes the answer makes (the values the command only restates
// are left out: kbq check takes an override as the user's choice, and the
// recipe's own layout, unchanged, keeps the memory model's tolerance).
kbq::Answer recheck(kbq::Engine& engine, const kbq::Result& r) {
  std::vector<std::pair<std::string, std::string>> kv;
  for (const auto& o : r.overrides)
    if (o.value != o.recipe_value) kv.emplace_back(o.key, o.value);
  auto checked = engine.check(r.recipe.name, r.layout.gpus, kv, r.layout.hardware, "en");
  const auto* ca = std::get_if<kbq::Answer>(&checked);
  REQUIRE(ca);
  REQUIRE(ca->results.size() == 1);
  return *ca;
}

}  // namespace

TEST_CASE("properties: kbq show states every exported recipe's code facts, and prints the code's own layout or says why not",
          "[properties]") {
  kb::Db db(kKb, kb::Db::Mode::ReadOnly);
  kbq::Engine engine = kbq::Engine::open(kKb);
  std::vector<std::pair<std::string, std::string>> names;
  {
    kb::Stmt st(db, "SELECT name, kind FROM code_recipes ORDER BY kind, name");
    while (st.step()) names.emplace_back(st.text(0), st.text(1));
  }
  REQUIRE(names.size() > 1000);
  size_t answered = 0, compared = 0, facts_agree = 0, layout_agree = 0, departs = 0, not_evaluable = 0, twins = 0;
  for (const auto& [name, kind] : names) {
    INFO(name);
    auto res = engine.show(name, "en");
    const auto* a = std::get_if<kbq::Answer>(&res);
    CHECK(a);
    if (!a || a->results.empty()) continue;
    ++answered;
    const auto code = code_values(db, name, kind);
    if (code.size() < 5) {
      ++not_evaluable;  // a size the code computes at run time (unknown, with its reason in code_facts.note)
      continue;
    }
    const kbq::Result& r = a->results.front();
    const kbq::Recipe& rc = r.recipe;
    if (kind == "library" && rc.kind == kbq::RecipeKind::Benchmark) {
      // A name both packages export: run_recipe.py --recipe loads the
      // benchmark function (scripts/training/recipe_runner.py load_recipe),
      // which show states (compared as the benchmark row), and says so.
      ++twins;
      bool said = false;
      for (const auto& d : r.departures) said = said || d.find("run_recipe.py --recipe " + name) != std::string::npos;
      CHECK(said);
      continue;
    }
    CHECK(rc.kind == (kind == "library" ? kbq::RecipeKind::Library : kbq::RecipeKind::Benchmark));
    ++compared;
    // The facts kbq states are the code's (the sequence is the dataset's:
    // the runner copies dataset.seq_length into the model, so the model's
    // own seq_length is compared only when the dataset sets none).
    const auto own = [](const std::optional<long long>& v) { return std::to_string(v.value_or(1)); };
    CHECK(code.at("tp") == own(rc.tp));
    CHECK(code.at("pp") == own(rc.pp));
    CHECK(code.at("cp") == own(rc.cp));
    CHECK(code.at("ep") == own(rc.ep));
    if (code.at("tp") == own(rc.tp) && code.at("pp") == own(rc.pp) && code.at("cp") == own(rc.cp) && code.at("ep") == own(rc.ep))
      ++facts_agree;
    const kbq::Layout& L = r.layout;
    const bool same = std::to_string(L.tp) == own(rc.tp) && std::to_string(L.pp) == own(rc.pp) && std::to_string(L.cp) == own(rc.cp) &&
                      std::to_string(L.ep) == own(rc.ep) && L.seq == rc.seq_len.value_or(L.seq);
    if (same) {
      ++layout_agree;
    } else {
      // A layout other than the code's is a plan to make it fit, and the
      // answer says so: a departure note when it runs, a caveat (why not)
      // when it does not.
      ++departs;
      if (r.runnable)
        CHECK_FALSE(r.departures.empty());
      else
        CHECK_FALSE(r.caveats.empty());
    }
  }
  CHECK(answered == names.size());
  const double facts = 100.0 * static_cast<double>(facts_agree) / static_cast<double>(compared);
  const double layouts = 100.0 * static_cast<double>(layout_agree) / static_cast<double>(compared);
  WARN("kbq show: " << answered << " of " << names.size() << " exported names answered; facts as in the code for " << facts_agree << " of "
                    << compared << " (" << facts << " %); layout printed as the code's for " << layout_agree << " (" << layouts << " %), "
                    << departs << " planned to fit with the change said; " << not_evaluable << " with a size the code leaves to run time; "
                    << twins << " library names the benchmark package exports too (shown as the runner loads them)");
  CHECK(facts_agree == compared);
  CHECK(compared > 900U);
  CHECK(twins >= 9);  // recipe_metadata.py lists 9 collisions
}

TEST_CASE("properties: every runnable layout the planner prints passes its rules, fits, and launches as printed", "[properties]") {
  std::ifstream in(std::string(KB_SOURCE_DIR) + "/generated/site/finder.json");
  REQUIRE(in);
  const auto index = nlohmann::json::parse(in);
  kbq::Engine engine = kbq::Engine::open(kKb);
  const std::vector<long long> counts =
      kSanitized ? std::vector<long long>{1, 8, 64, 512} : std::vector<long long>{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};
  const std::vector<std::string> hardware =
      kSanitized ? std::vector<std::string>{"h100"} : std::vector<std::string>{"h100", "a100", "gb200"};
  size_t asked = 0, runnable = 0, impossible = 0, unsized = 0, rechecked = 0;
  std::set<std::string> disagreements;  // question | recipe | what kbq check says otherwise
  for (const auto& m : index["models"])
    for (const auto& mode : m["modes"])
      for (long long n : counts)
        for (const auto& hw : hardware) {
          const std::string q =
              "mode:" + mode.get<std::string>() + " " + m["question"].get<std::string>() + " gpus:" + std::to_string(n) + " hardware:" + hw;
          INFO(q);
          const kbq::Answer answer = ask_answer(engine, q, 3);
          const kbq::Answer* a = &answer;
          ++asked;
          if (a->verdict == kbq::Outcome::NotPossible) ++impossible;
          for (const auto& r : a->results) {
            if (!r.runnable) continue;
            ++runnable;
            INFO(r.recipe.name << ": " << r.command);
            const kbq::Layout& L = r.layout;
            // `runnable` already means "no failed rule and fits", so its own
            // verdicts prove nothing: the layout is judged again from the
            // changes the answer makes alone, through kbq check, which sizes
            // and checks a user's override set from the keys. (The values
            // the command only restates are left out: kbq check takes an
            // override as the user's choice, and the recipe's own layout,
            // unchanged, keeps the memory model's tolerance.)
            if (r.recipe.kind == kbq::RecipeKind::Library) {
              const kbq::Answer checked = recheck(engine, r);
              const kbq::Answer* ca = &checked;
              const kbq::Result& cr = ca->results.front();
              std::vector<std::string> why;
              for (const auto& v : cr.rules)
                if (v.status == kb::Status::Fail) why.push_back("rule " + v.id + " fails");
              if (cr.memory.known != r.memory.known) why.push_back(cr.memory.known ? "memory sized" : "memory not sized");
              const auto grid = [](const kbq::Layout& x) { return std::vector<long long>{x.tp, x.pp, x.cp, x.ep, x.dp, x.seq}; };
              if (grid(cr.layout) != grid(L)) why.push_back("another layout");
              if (ca->verdict != kbq::Outcome::Ok) why.push_back("not ok");
              if (!why.empty()) disagreements.insert(q + " | " + r.recipe.name + " | " + kb::join(why, ", "));
              ++rechecked;
            }
            if (r.memory.known) {
              CHECK(r.memory.per_gpu_gib <= r.memory.capacity_gib * 1.05 + 1e-9);
            } else {
              CHECK_FALSE(r.memory.unknown_reason.empty());  // a model the memory model cannot size says why
              ++unsized;
            }
            CHECK(L.gpus == n);
            CHECK(L.tp * L.pp * L.cp * L.dp == L.gpus);
            if (r.recipe.kind == kbq::RecipeKind::Library) {
              CHECK(L.nodes * L.nproc == L.gpus);
              CHECK(r.command.find("--nproc_per_node=" + std::to_string(L.nproc)) != std::string::npos);
              CHECK(r.command.find("-tp " + std::to_string(L.tp) + " -pp " + std::to_string(L.pp) + " -cp " + std::to_string(L.cp)) !=
                    std::string::npos);
            }
          }
        }
  WARN("planner properties: " << asked << " questions, " << runnable << " runnable layouts checked (" << rechecked
                              << " again through kbq check), " << impossible << " answered not possible, " << unsized
                              << " layouts of models the memory model cannot size");
  CHECK(runnable > (kSanitized ? 300U : 1000U));
  CHECK(rechecked > (kSanitized ? 200U : 800U));
  // Every disagreement is a defect of one of the two paths. The known ones
  // are listed with their cause; a new one fails here, and so does a listed
  // one that is fixed (remove it from the list).
  for (const auto& d : disagreements) CHECK(kKnownCheckDisagreements.count(d) == 1);
  if (!kSanitized) CHECK(disagreements == kKnownCheckDisagreements);  // the thinned grid meets only some
}

// What the hardware has, as the answers must respect it, over every model of
// the recipe finder × its modes × GPU types of four architectures × a
// precision asked or not × GPU counts that are and are not whole nodes:
// - no result printed (runnable or not) trains in a precision, as its code
//   sets it, that its GPU's architecture lacks (data/precisions.tsv archs,
//   read here from the KB, not through the planner);
// - a precision asked that the GPU lacks is said in a warning;
// - every command launches exactly the planned ranks (nodes × processes per
//   node = GPUs), never more GPUs than asked, and a count that is not whole
//   nodes is said;
// - every result's and alternative's command is built and runs its recipe.
TEST_CASE("properties: answers never print a precision the GPU lacks, and every command launches the planned ranks", "[properties]") {
  std::ifstream in(std::string(KB_SOURCE_DIR) + "/generated/site/finder.json");
  REQUIRE(in);
  const auto index = nlohmann::json::parse(in);
  std::map<std::string, std::string> arch_of;
  std::map<std::string, std::set<std::string>> archs_of;
  {
    kb::Db db(kKb, kb::Db::Mode::ReadOnly);
    kb::Stmt g(db, "SELECT gpu_key, arch FROM gpus");
    while (g.step()) arch_of[g.text(0)] = g.text(1);
    kb::Stmt p(db, "SELECT precision, archs FROM precisions");
    while (p.step())
      for (const auto& a : kb::split(p.text(1), ',')) archs_of[p.text(0)].insert(a);
  }
  REQUIRE(arch_of.at("a100") == "ampere");
  REQUIRE(archs_of.at("fp8cs").count("hopper") == 1);
  kbq::Engine engine = kbq::Engine::open(kKb);
  const std::vector<std::string> hardware =
      kSanitized ? std::vector<std::string>{"a100"} : std::vector<std::string>{"a100", "h100", "gb200", "l40s"};
  const std::vector<std::string> precisions = kSanitized ? std::vector<std::string>{"fp8"} : std::vector<std::string>{"", "fp8", "nvfp4"};
  const std::vector<long long> counts = kSanitized ? std::vector<long long>{12} : std::vector<long long>{8, 12, 20};
  size_t asked = 0, printed = 0, refused = 0, split = 0;
  for (const auto& m : index["models"])
    for (const auto& mode : m["modes"])
      for (const auto& hw : hardware)
        for (const auto& prec : precisions)
          for (long long n : counts) {
            const std::string q = "mode:" + mode.get<std::string>() + " " + m["question"].get<std::string>() +
                                  " gpus:" + std::to_string(n) + " hardware:" + hw + (prec.empty() ? "" : " precision:" + prec);
            INFO(q);
            auto res = engine.ask(q, {});
            const auto* a = std::get_if<kbq::Answer>(&res);
            REQUIRE(a);
            ++asked;
            bool lacks = !prec.empty();
            for (const auto& [p, archs] : archs_of)
              if (kb::starts_with(p, prec) && archs.count(arch_of.at(hw))) lacks = false;
            if (lacks) {
              ++refused;
              bool said = false;
              for (const auto& w : a->warnings) said = said || w.find(kb::upper_ascii(prec)) != std::string::npos;
              CHECK(said);
            }
            // Every command is built by the time the answer is made (the plan
            // stage defers it until a result is shown or offered), and an
            // alternative's runs the recipe it names.
            for (const auto& alt : a->alternatives) {
              INFO(alt.kind << ": " << alt.recipe << ": " << alt.command);
              CHECK(alt.command.find(alt.recipe) != std::string::npos);
            }
            for (const auto& r : a->results) {
              ++printed;
              INFO(r.recipe.name << " (" << r.recipe.runs_in << ") on " << r.layout.hardware << ": " << r.command);
              CHECK(r.command_job == nullptr);
              CHECK(r.command.find(r.recipe.name) != std::string::npos);
              if (!r.recipe.runs_in.empty() && archs_of.count(r.recipe.runs_in))
                CHECK(archs_of.at(r.recipe.runs_in).count(arch_of.at(r.layout.hardware)) == 1);
              const kbq::Layout& L = r.layout;
              if (r.recipe.kind != kbq::RecipeKind::Library) continue;
              CHECK(L.nodes * L.nproc == L.gpus);
              CHECK(L.gpus <= n);
              CHECK(r.command.find("--nproc_per_node=" + std::to_string(L.nproc)) != std::string::npos);
              if (L.nodes > 1) CHECK(r.command.find("--nnodes=" + std::to_string(L.nodes)) != std::string::npos);
              if (L.gpus != n || (L.nodes > 1 && L.nproc != L.per_node)) {
                ++split;
                CHECK_FALSE(r.departures.empty());
              }
            }
          }
  WARN("hardware properties: " << asked << " questions, " << printed << " results, " << refused << " asked a precision the GPU lacks, "
                               << split << " launches not on whole nodes");
  CHECK(refused > 0);
  CHECK(split > 0);
}

TEST_CASE("properties: a recipe whose function raises is never offered, and DoRA only where the function takes a PEFT scheme",
          "[properties]") {
  struct Launch {
    std::string name, mode, model_key, peft_modes, raises;
  };
  std::vector<Launch> rows;
  {
    kb::Db db(kKb, kb::Db::Mode::ReadOnly);
    kb::Stmt st(db,
                "SELECT r.name, r.mode, r.model_key, l.peft_modes, l.raises FROM recipes r JOIN recipe_launch l ON l.name = r.name AND "
                "l.kind = r.kind WHERE r.kind = 'library' AND r.model_key <> '' AND (l.raises <> '' OR r.mode = 'peft') ORDER BY r.name");
    while (st.step()) rows.push_back({st.text(0), st.text(1), st.text(2), st.text(3), st.text(4)});
  }
  kbq::Engine engine = kbq::Engine::open(kKb);
  size_t raising = 0, lora_only = 0, refused = 0;
  for (const auto& row : rows) {
    const bool raises = !row.raises.empty();
    const bool dora = row.peft_modes.find("dora") != std::string::npos;
    if (!raises && dora) continue;
    // Raising: the recipe's own mode and model. LoRA only: DoRA asked of it.
    // The family: the name's words before its mode ("qwen35_vl_9b" of qwen35_vl_9b_peft_config).
    const std::string family = row.name.substr(0, row.name.find("_" + row.mode + "_"));
    const std::string q = raises ? "mode:" + row.mode + " family:" + family : "dora family:" + family;
    INFO(row.name << ": " << q);
    auto res = engine.ask(q, {});
    const auto* a = std::get_if<kbq::Answer>(&res);
    REQUIRE(a);
    for (const auto& r : a->results) {
      CHECK(r.recipe.raises.empty());
      CHECK(r.recipe.name != row.name);
      if (!raises) CHECK(std::find(r.recipe.peft_modes.begin(), r.recipe.peft_modes.end(), "dora") != r.recipe.peft_modes.end());
    }
    if (raises) {
      ++raising;
      if (a->results.empty()) CHECK(a->no_match.find(row.raises) != std::string::npos);
    } else {
      ++lora_only;
      if (a->results.empty()) {
        ++refused;
        CHECK(a->no_match.find("--mode dora") != std::string::npos);
      }
    }
  }
  WARN("launch properties: " << raising << " raising recipes, " << lora_only << " LoRA-only PEFT recipes asked for DoRA, " << refused
                             << " refused");
  CHECK(raising > 0);
  CHECK(refused > 0);
}

// The launch as the code reads it, over every model of the recipe finder ×
// its modes × every GPU type in data/gpus.tsv (read from the KB) × GPU
// counts 1…1024 (issue 24's done-when):
// - the command launches exactly the planned ranks (torchrun: nnodes ×
//   nproc_per_node = the layout's GPUs, never more than asked);
// - no result trains in a precision, as its code sets it, that the GPU's
//   architecture lacks;
// - every KEY=VALUE the command prints names a field of the code's config
//   classes (code_config_keys, read here; OmegaConf struct mode refuses any
//   other at launch);
// - --dataset appears only where the recipe has no data of its own (the
//   question asks none: the runner would replace the recipe's whole dataset
//   config).
TEST_CASE(
    "properties: every GPU type in data launches the planned ranks with real config keys, no --dataset unasked and no "
    "precision the GPU lacks",
    "[properties]") {
  std::ifstream in(std::string(KB_SOURCE_DIR) + "/generated/site/finder.json");
  REQUIRE(in);
  const auto index = nlohmann::json::parse(in);
  std::vector<std::string> hardware;
  std::map<std::string, std::string> arch_of;
  std::map<std::string, std::set<std::string>> archs_of;
  std::set<std::string> fields, open_sections;
  std::map<std::string, bool> own_data;  // library recipe → it trains on data of its own without --dataset
  {
    kb::Db db(kKb, kb::Db::Mode::ReadOnly);
    kb::Stmt g(db, "SELECT gpu_key, arch FROM gpus ORDER BY gpu_key");
    while (g.step()) {
      hardware.push_back(g.text(0));
      arch_of[g.text(0)] = g.text(1);
    }
    kb::Stmt p(db, "SELECT precision, archs FROM precisions");
    while (p.step())
      for (const auto& a : kb::split(p.text(1), ',')) archs_of[p.text(0)].insert(a);
    kb::Stmt k(db, "SELECT key, kind, type FROM code_config_keys");
    while (k.step()) {
      if (k.text(1) != "section") fields.insert(k.text(0));
      if (k.text(1) == "section" && k.text(2) == "open") open_sections.insert(k.text(0));
    }
    kb::Stmt d(db, "SELECT name, data, user_data FROM recipe_launch WHERE kind = 'library'");
    while (d.step()) own_data[d.text(0)] = !d.text(1).empty() && d.integer(2) == 0;
  }
  REQUIRE(hardware.size() >= 10);
  REQUIRE(fields.count("model.tensor_model_parallel_size") == 1);
  // The whole grid is ~45 000 questions: sanitizer builds ask every model
  // and mode on a third of the GPU types at three counts.
  kbq::Engine engine = kbq::Engine::open(kKb);
  std::vector<long long> counts;
  for (long long n = 1; n <= 1024; n *= 2)
    if (!kSanitized || n == 1 || n == 8 || n == 128) counts.push_back(n);
  size_t asked = 0, printed = 0, keys = 0, own = 0, replaced = 0, kept = 0, types_asked = 0;
  std::map<std::string, size_t> per_type;  // GPU type → results printed
  for (size_t h = 0; h < hardware.size(); ++h) {
    if (kSanitized && h % 3 != 0) continue;
    const std::string& hw = hardware[h];
    // A GPU whose architecture runs no precision (the T4's Turing, the V100's Volta) gets refusals only.
    const bool runs_any = std::any_of(archs_of.begin(), archs_of.end(), [&](const auto& p) { return p.second.count(arch_of[hw]) > 0; });
    if (runs_any) ++types_asked;
    for (const auto& m : index["models"])
      for (const auto& mode : m["modes"])
        for (long long n : counts) {
          const std::string q =
              "mode:" + mode.get<std::string>() + " " + m["question"].get<std::string>() + " gpus:" + std::to_string(n) + " hardware:" + hw;
          INFO(q);
          auto res = engine.ask(q, {});
          const auto* a = std::get_if<kbq::Answer>(&res);
          REQUIRE(a);
          ++asked;
          for (const auto& r : a->results) {
            ++printed;
            ++per_type[hw];
            INFO(r.recipe.name << " (" << r.recipe.runs_in << ") on " << r.layout.hardware << ": " << r.command);
            if (!r.recipe.runs_in.empty() && archs_of.count(r.recipe.runs_in))
              CHECK(archs_of.at(r.recipe.runs_in).count(arch_of.at(r.layout.hardware)) == 1);
            if (r.recipe.kind != kbq::RecipeKind::Library) continue;
            const kbq::Layout& L = r.layout;
            CHECK(L.nodes * L.nproc == L.gpus);
            CHECK(L.gpus <= n);
            CHECK(r.command.find("--nproc_per_node=" + std::to_string(L.nproc)) != std::string::npos);
            CHECK((L.nodes == 1) == (r.command.find("--nnodes=") == std::string::npos));
            if (L.nodes > 1) CHECK(r.command.find("--nnodes=" + std::to_string(L.nodes)) != std::string::npos);
            // The KEY=VALUE words of the command (flags start with "-").
            std::istringstream words(r.command);
            for (std::string w; words >> w;) {
              if (w.size() > 1 && w.front() == '\'' && w.back() == '\'') w = w.substr(1, w.size() - 2);  // shell-quoted
              const auto eq = w.find('=');
              if (w.front() == '-' || eq == std::string::npos || w.find('.') > eq) continue;
              const std::string key = w.substr(0, eq);
              INFO(key);
              CHECK((fields.count(key) == 1 || open_sections.count(key.substr(0, key.find('.'))) == 1));
              ++keys;
            }
            const auto it = own_data.find(r.recipe.name);
            REQUIRE(it != own_data.end());
            const bool flag = r.command.find("--dataset") != std::string::npos;
            CHECK(flag == !r.dataset.empty());
            if (it->second) {
              ++own;
              CHECK_FALSE(flag);
            } else if (flag) {
              ++replaced;  // a text preset, only for text recipes (data/planner.tsv unasked_dataset_modalities)
              CHECK(r.recipe.modality == "text");
            } else {
              ++kept;  // a recipe whose data needs the user's files keeps its own config (a diffusion step reads video latents)
            }
          }
        }
  }
  WARN("launch properties: " << asked << " questions on " << per_type.size() << " GPU types, " << printed << " results, " << keys
                             << " config keys checked, " << own << " library results on their own data, " << replaced
                             << " given a --dataset preset (no data of their own), " << kept
                             << " keeping a data config that needs the user's files");
  CHECK(keys > 1000);
  CHECK(own > 100);
  CHECK(kept > 0);
  CHECK(per_type.size() == types_asked);  // every GPU type that runs a precision gets answers, not only refusals
}

// Long sequences (issue 24 §4, one verdict everywhere): the planner keeps a
// CP floor for a sequence longer than the recipe's while a layout with it
// fits, and trades CP for TP (which splits a rank's tokens too, with SP)
// when none does. Over every model of the recipe finder × its modes × four
// sequences × five GPU counts on H100:
// - every runnable top answer is judged the same by kbq check, given the
//   recipe, the GPUs and the changes the answer makes (the same grid, fits,
//   no failing rule);
// - a "not possible, needs N" answer's N is more than asked, and the
//   question asked again on N GPUs is answered.
TEST_CASE("properties: long sequences get one verdict from a question and kbq check, and 'needs N' runs on N", "[properties]") {
  std::ifstream in(std::string(KB_SOURCE_DIR) + "/generated/site/finder.json");
  REQUIRE(in);
  const auto index = nlohmann::json::parse(in);
  kbq::Engine engine = kbq::Engine::open(kKb);
  const std::vector<long long> seqs = kSanitized ? std::vector<long long>{131072} : std::vector<long long>{16384, 32768, 65536, 131072};
  const std::vector<long long> counts = kSanitized ? std::vector<long long>{16} : std::vector<long long>{8, 16, 32, 64, 128};
  size_t asked = 0, runnable = 0, rechecked = 0, impossible = 0, traded = 0, grids = 0;
  for (const auto& m : index["models"])
    for (const auto& mode : m["modes"])
      for (long long seq : seqs)
        for (long long n : counts) {
          const std::string base = "mode:" + mode.get<std::string>() + " " + m["question"].get<std::string>() +
                                   " hardware:h100 seq:" + std::to_string(seq) + " gpus:";
          const std::string q = base + std::to_string(n);
          INFO(q);
          const kbq::Answer answer = ask_answer(engine, q, 1);
          const kbq::Answer* a = &answer;
          ++asked;
          if (a->results.empty()) continue;
          const kbq::Result& r = a->results.front();
          if (a->verdict == kbq::Outcome::NotPossible) {
            ++impossible;
            // No layout kbq check accepts on these GPUs: every TP × PP × CP
            // grid of powers of two (a dense library recipe's, with SP) is
            // judged, and none may fit and pass every rule.
            if (r.recipe.kind == kbq::RecipeKind::Library && !r.recipe.moe && r.memory.known) {
              for (long long tp = 1; tp <= 8; tp *= 2)
                for (long long pp = 1; pp <= 8; pp *= 2)
                  for (long long cp = 1; tp * pp * cp <= n; cp *= 2) {
                    if (n % (tp * pp * cp) != 0) continue;
                    const std::vector<std::pair<std::string, std::string>> kv{{"model.tensor_model_parallel_size", std::to_string(tp)},
                                                                              {"model.pipeline_model_parallel_size", std::to_string(pp)},
                                                                              {"model.context_parallel_size", std::to_string(cp)},
                                                                              {"model.sequence_parallel", tp > 1 ? "true" : "false"},
                                                                              {"model.seq_length", std::to_string(seq)}};
                    auto checked = engine.check(r.recipe.name, n, kv, "h100", "en");
                    const auto* ca = std::get_if<kbq::Answer>(&checked);
                    REQUIRE(ca);
                    INFO(r.recipe.name << " TP " << tp << " PP " << pp << " CP " << cp << " on " << n);
                    CHECK(ca->verdict != kbq::Outcome::Ok);
                    ++grids;
                  }
            }
            if (a->min_gpus == 0) continue;  // none up to the planner's limit: said so
            CHECK(a->min_gpus > n);
            INFO("asked again on " << a->min_gpus);
            CHECK(ask_answer(engine, base + std::to_string(a->min_gpus), 1).verdict == kbq::Outcome::Ok);
            continue;
          }
          if (!r.runnable) continue;
          ++runnable;
          const kbq::Layout& L = r.layout;
          if (L.seq == seq && L.cp > 1 && L.tp > 1 && seq / (L.cp * L.tp) > 8192) ++traded;
          if (r.recipe.kind != kbq::RecipeKind::Library) continue;
          INFO(r.recipe.name << ": " << r.command);
          const kbq::Answer checked = recheck(engine, r);
          const kbq::Answer* ca = &checked;
          const kbq::Result& cr = ca->results.front();
          CHECK(ca->verdict == kbq::Outcome::Ok);
          CHECK(cr.memory.known == r.memory.known);
          if (r.memory.known) CHECK(cr.memory.fits);  // a model the memory model cannot size is said so in both
          CHECK(std::vector<long long>{cr.layout.tp, cr.layout.pp, cr.layout.cp, cr.layout.seq} ==
                std::vector<long long>{L.tp, L.pp, L.cp, L.seq});
          for (const auto& v : cr.rules) CHECK(v.status != kb::Status::Fail);
          ++rechecked;
        }
  WARN("long sequences: " << asked << " questions, " << runnable << " runnable (" << rechecked << " again through kbq check, " << traded
                          << " with more than 8192 tokens per TP × CP rank), " << impossible << " not possible (" << grids
                          << " other layouts of theirs rejected by kbq check)");
  CHECK(runnable > (kSanitized ? 10U : 300U));
  CHECK(impossible > (kSanitized ? 1U : 50U));
}
