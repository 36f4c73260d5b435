// Calibration of the per-GPU memory model on what NVIDIA ships: every
// Megatron Bridge benchmark recipe, and every library recipe whose name
// carries a GPU count and hardware, is sized at its own layout on its own
// GPU through the product path (query/memory/from_facts.hpp) from the
// checked-in facts: kb-sources/code/067f987df/{recipes,recipe-facts}.tsv and
// kb-sources/data/{models,models-extra,model-arch,gpus,gpu-memory,memory}.tsv.
//
// It asserts that the fit rate of each kind (over the recipes the model can
// size) reaches its floor in kb-sources/data/memory-calibration.tsv, and that every recipe judged otherwise (does not fit,
// not sized, layout larger than the name's GPU count) is listed with its
// reason in kb-sources/data/memory-exceptions.tsv — so a change of the model
// that moves a recipe fails here until that list (and docs/memory.md) says
// why. Set KB_MEMORY_REPORT=<file> to write one TSV row per recipe (the
// figures docs/memory.md shows).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "base/limits.hpp"
#include "base/tsv.hpp"
#include "query/memory/from_facts.hpp"
#include "query/memory/memory.hpp"

namespace mem = kbq::memory;

namespace {

#ifndef KB_SOURCE_DIR
#define KB_SOURCE_DIR "."
#endif

const std::string kRoot = KB_SOURCE_DIR;
const std::string kCode = kRoot + "/kb-sources/code/067f987df";
const std::string kData = kRoot + "/kb-sources/data";

// A TSV file: the header and the rows' cells (escapes kept as written).
struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  int col(const std::string& name) const {
    for (std::size_t i = 0; i < header.size(); ++i)
      if (header[i] == name) return static_cast<int>(i);
    FAIL("no column " << name);
    return -1;
  }
};

// Read by the one rule of every data file (base/tsv.hpp), as kbc reads them
// (a code snapshot's files under their own size limit).
Table read_table(const std::string& path) {
  kb::Diagnostics diags;
  const auto t = kb::load_tsv(path, diags, {}, kb::limits::kMaxCodeSnapshotFileBytes);
  if (!t || diags.has_errors()) FAIL(diags.render_all());
  Table out;
  out.header = t->header;
  for (const auto& r : t->rows) out.rows.push_back(r.cells);
  return out;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// What the calibration concluded for one recipe.
enum class Verdict { kFits, kDoesNotFit, kNotSized, kLayoutExceedsGpus };

std::string verdict_name(Verdict v) {
  switch (v) {
    case Verdict::kFits:
      return "fits";
    case Verdict::kDoesNotFit:
      return "does-not-fit";
    case Verdict::kNotSized:
      return "not-sized";
    case Verdict::kLayoutExceedsGpus:
      return "layout-exceeds-gpus";
  }
  return "?";
}

struct Outcome {
  std::string name;
  std::string kind;  // benchmark | library
  Verdict verdict = Verdict::kNotSized;
  std::string why;  // error message, or the breakdown
  double capacity_gib = 0;
  mem::Estimate estimate;
  std::string layout;        // e.g. "TP2 PP1 VP1 CP1 EP1 ETP2 SP"
  std::int64_t dp = 0;       // data-parallel size of the layout
  std::int64_t edp = 0;      // expert data-parallel size
  std::int64_t seq = 0;      // tokens per sample the recipe trains with
  std::int64_t mbs = 0;      // micro batch size
  std::int64_t max_seq = 0;  // report only: longest sample (multiple of 128) that fits, 0 when none does
  std::string task;          // pretrain | sft | peft (the recipe's builder)
  std::string mode;          // full | lora | dora | frozen (full mode with the language model frozen)
  bool packed = false;       // samples packed to the sequence length (pretraining data or offline packing)
};

struct Calibration {
  std::vector<Outcome> outcomes;
};

const Calibration& calibration() {
  static const Calibration cal = [] {
    Calibration c;
    const Table recipes = read_table(kCode + "/recipes.tsv");
    const Table facts_t = read_table(kCode + "/recipe-facts.tsv");
    std::map<std::string, mem::RecipeFacts> facts;
    {
      const int tc = facts_t.col("target"), fc = facts_t.col("field"), sc = facts_t.col("state"), vc = facts_t.col("value");
      for (const auto& r : facts_t.rows) {
        auto st = kb::parse_kind<kb::FactState>(r[static_cast<std::size_t>(sc)]);
        if (!st) FAIL("recipe-facts.tsv: state " << r[static_cast<std::size_t>(sc)]);
        facts[r[static_cast<std::size_t>(tc)]][r[static_cast<std::size_t>(fc)]] = {*st, r[static_cast<std::size_t>(vc)]};
      }
    }
    // Models by hf_id and by key, from models.tsv and models-extra.tsv.
    std::map<std::string, mem::ModelRow> by_key;
    std::map<std::string, std::string> key_by_hf;
    for (const char* file : {"/models.tsv", "/models-extra.tsv"}) {
      const Table m = read_table(kData + file);
      for (const auto& r : m.rows) {
        mem::ModelRow row;
        for (std::size_t i = 0; i < m.header.size(); ++i)
          if (!r[i].empty()) row[m.header[i]] = r[i];
        const std::string key = row["model_key"];
        if (row.count("hf_id")) key_by_hf[row["hf_id"]] = key;
        by_key[key] = row;
      }
    }
    std::map<std::string, mem::ArchFacts> arch;
    {
      const Table a = read_table(kData + "/model-arch.tsv");
      for (const auto& r : a.rows) {
        if (r[3].empty()) FAIL("model-arch.tsv: " << r[0] << " " << r[1] << " has no source");
        arch[r[0]][r[1]] = r[2];
      }
    }
    std::map<std::string, double> gpu_gib;
    std::map<std::string, bool> any_layout;
    {
      const Table g = read_table(kData + "/gpus.tsv");
      for (const auto& r : g.rows)
        if (!r[static_cast<std::size_t>(g.col("memory_gb"))].empty())
          gpu_gib[r[0]] = std::stod(r[static_cast<std::size_t>(g.col("memory_gb"))]);
      const Table f = read_table(kData + "/gpu-memory.tsv");
      for (const auto& r : f.rows) any_layout[r[0]] = r[1] == "yes";
    }
    auto pr = mem::params_from_tsv(read_text(kData + "/memory.tsv"));
    if (auto* e = std::get_if<mem::InputError>(&pr)) FAIL("memory.tsv: " << e->message);
    const mem::Params params = std::get<mem::Params>(pr);

    const int name_c = recipes.col("name"), kind_c = recipes.col("kind"), target_c = recipes.col("target"), model_c = recipes.col("model"),
              gpus_c = recipes.col("gpus"), hw_c = recipes.col("hardware");
    for (const auto& r : recipes.rows) {
      auto cell = [&](int i) -> const std::string& { return r[static_cast<std::size_t>(i)]; };
      if (cell(gpus_c).empty() || cell(hw_c).empty()) continue;
      Outcome o;
      o.name = cell(name_c);
      o.kind = cell(kind_c);
      const mem::RecipeFacts& f = facts[cell(target_c)];
      auto not_sized = [&](std::string why) {
        o.verdict = Verdict::kNotSized;
        o.why = std::move(why);
        c.outcomes.push_back(o);
      };
      // The model: by hf_id, else by the recipe name's model (inline providers).
      const mem::ModelRow* row = nullptr;
      std::string key = cell(model_c);
      auto hf = f.find("hf_id");
      if (hf != f.end() && hf->second.state == kb::FactState::Value) {
        auto k = key_by_hf.find(hf->second.value);
        if (k == key_by_hf.end()) {
          not_sized("no models.tsv / models-extra.tsv row for " + hf->second.value);
          continue;
        }
        key = k->second;
      }
      if (auto it = by_key.find(key); it != by_key.end()) row = &it->second;
      const auto gpu = gpu_gib.find(cell(hw_c));
      if (gpu == gpu_gib.end()) {
        not_sized("no memory figure for " + cell(hw_c) + " in gpus.tsv");
        continue;
      }
      o.capacity_gib = gpu->second;
      const mem::ArchFacts none;
      const auto ar = arch.find(key);
      auto a = mem::architecture_from_facts(row, ar == arch.end() ? none : ar->second, f);
      if (auto* e = std::get_if<mem::InputError>(&a)) {
        not_sized(e->message);
        continue;
      }
      auto t = mem::training_from_facts(f);
      if (auto* e = std::get_if<mem::InputError>(&t)) {
        not_sized(e->message);
        continue;
      }
      auto l = mem::layout_from_facts(f, std::stoll(cell(gpus_c)), any_layout[cell(hw_c)]);
      if (auto* e = std::get_if<mem::InputError>(&l)) {
        not_sized(e->message);
        continue;
      }
      const auto& layout = std::get<mem::Mapped<mem::Layout>>(l).value;
      o.layout = "TP" + std::to_string(layout.tp) + " PP" + std::to_string(layout.pp) + " VP" + std::to_string(layout.vp) + " CP" +
                 std::to_string(layout.cp) + " EP" + std::to_string(layout.ep) + " ETP" + std::to_string(layout.etp) +
                 (layout.sp ? " SP" : "");
      const auto& arch_v = std::get<mem::Mapped<mem::Architecture>>(a).value;
      if (auto e = mem::validate(layout, arch_v)) {
        o.verdict = Verdict::kLayoutExceedsGpus;
        o.why = e->message;
        c.outcomes.push_back(o);
        continue;
      }
      auto est = mem::estimate(arch_v, layout, std::get<mem::Mapped<mem::Training>>(t).value, params);
      if (auto* e = std::get_if<mem::InputError>(&est)) {
        not_sized(e->message);
        continue;
      }
      o.estimate = std::get<mem::Estimate>(est);
      const double cap = o.capacity_gib * mem::kBytesPerGiB;
      o.verdict = o.estimate.fits(cap) ? Verdict::kFits : Verdict::kDoesNotFit;
      o.why = o.estimate.breakdown();
      const auto& tr = std::get<mem::Mapped<mem::Training>>(t).value;
      o.dp = layout.dp();
      o.edp = layout.expert_dp();
      o.seq = tr.seq_length;
      o.mbs = tr.micro_batch;
      o.mode = tr.freeze_decoder ? "frozen" : std::string(mem::mode_name(tr.mode));
      auto task = f.find("builder_task");
      o.task = task == f.end() ? "" : task->second.value;
      auto packed = f.find("packed_sequence_size");
      o.packed = o.task == "pretrain" || (packed != f.end() && packed->second.state == kb::FactState::Value);
      if (o.verdict == Verdict::kDoesNotFit && std::getenv("KB_MEMORY_REPORT")) {
        std::int64_t lo = 0, hi = tr.seq_length / 128;  // in units of 128 tokens
        while (lo < hi) {
          const std::int64_t mid = (lo + hi + 1) / 2;
          mem::Training shorter = tr;
          shorter.seq_length = mid * 128;
          auto e2 = mem::estimate(arch_v, layout, shorter, params);
          if (std::holds_alternative<mem::Estimate>(e2) && std::get<mem::Estimate>(e2).fits(cap))
            lo = mid;
          else
            hi = mid - 1;
        }
        o.max_seq = lo * 128;
      }
      c.outcomes.push_back(o);
    }
    if (const char* path = std::getenv("KB_MEMORY_REPORT")) {
      std::ofstream out(path);
      out << "recipe\tkind\tverdict\tgpu_gib\ttotal_gib\tstatic_gib\tactivations_gib\tlayout\tdp\texpert_dp\tseq\tmbs\tmax_"
             "seq\ttask\tmode\tpacked\twhy\n";
      for (const auto& x : c.outcomes) {
        const auto& e = x.estimate;
        out << x.name << '\t' << x.kind << '\t' << verdict_name(x.verdict) << '\t' << x.capacity_gib << '\t' << e.total / mem::kBytesPerGiB
            << '\t' << (e.weights + e.grads + e.optimizer) / mem::kBytesPerGiB << '\t' << e.activations / mem::kBytesPerGiB << '\t'
            << x.layout << '\t' << x.dp << '\t' << x.edp << '\t' << x.seq << '\t' << x.mbs << '\t' << x.max_seq << '\t' << x.task << '\t'
            << x.mode << '\t' << (x.packed ? "packed" : "unpacked") << '\t' << x.why << '\n';
      }
    }
    return c;
  }();
  return cal;
}

// The floor each kind's fit rate must reach (kb-sources/data/memory-calibration.tsv).
double min_fit_rate(const std::string& kind) {
  const Table t = read_table(kData + "/memory-calibration.tsv");
  for (const auto& r : t.rows)
    if (r[0] == kind) {
      if (r[2].empty()) FAIL("memory-calibration.tsv: " << kind << " has no source");
      return std::stod(r[1]);
    }
  FAIL("memory-calibration.tsv has no row for " << kind);
  return 1.0;
}

void check_rate(const std::string& kind) {
  std::size_t fit = 0, sized = 0;
  for (const auto& o : calibration().outcomes) {
    if (o.kind != kind || (o.verdict != Verdict::kFits && o.verdict != Verdict::kDoesNotFit)) continue;
    ++sized;
    if (o.verdict == Verdict::kFits) ++fit;
  }
  const double rate = sized ? static_cast<double>(fit) / static_cast<double>(sized) : 0.0;
  INFO(kind << " recipes: " << fit << " of " << sized << " sized fit (" << rate * 100 << " %)");
  std::cout << "memory calibration: " << kind << " " << fit << "/" << sized << " = " << rate * 100 << " %\n";
  CHECK(sized > 0);
  CHECK(rate >= min_fit_rate(kind));
}

}  // namespace

TEST_CASE("memory calibration: benchmark recipes fit their own GPUs", "[memory]") { check_rate("benchmark"); }

TEST_CASE("memory calibration: library recipes fit their own GPUs", "[memory]") { check_rate("library"); }

TEST_CASE("memory calibration: every other verdict is a documented exception", "[memory]") {
  const Table ex = read_table(kData + "/memory-exceptions.tsv");
  std::map<std::string, std::string> listed;  // "recipe kind" -> verdict
  for (const auto& r : ex.rows) {
    INFO("memory-exceptions.tsv: " << r[0]);
    CHECK(!r[3].empty());  // every exception has its reason
    listed[r[0] + " " + r[1]] = r[2];
  }
  std::map<std::string, std::string> found;
  for (const auto& o : calibration().outcomes)
    if (o.verdict != Verdict::kFits) found[o.name + " " + o.kind] = verdict_name(o.verdict);
  for (const auto& [k, v] : found) {
    INFO(k << " is " << v << " but memory-exceptions.tsv " << (listed.count(k) ? "says " + listed[k] : "does not list it"));
    CHECK((listed.count(k) && listed[k] == v));
  }
  for (const auto& [k, v] : listed) {
    INFO(k << " is listed as " << v << " but now fits");
    CHECK(found.count(k));
  }
  // docs/memory.md shows the list: every exception is named there.
  const std::string doc = read_text(kRoot + "/docs/memory.md");
  for (const auto& r : ex.rows) {
    INFO("docs/memory.md does not name " << r[0]);
    CHECK(doc.find("`" + r[0] + "`") != std::string::npos);
  }
}

// ---------------------------------------------------------------------------
// The fewest GPUs the model accepts for a few jobs the planner answers, with
// the architectures read through the product path (models.tsv +
// model-arch.tsv -> architecture_from_facts). The search tries world sizes
// 1, 2, 4, 8 and then multiples of 8, TP in {1, 2, 4, 8} (one node), every PP
// that fits the layers, EP dividing the experts, SP with TP > 1, distributed
// optimizer, FP32 grads, Adam, BF16, sequence 4096 x micro batch 1.
// ---------------------------------------------------------------------------

namespace {

struct Smallest {
  std::int64_t world = 0;  // 0: nothing up to the search limit fits
  mem::Layout layout;
  mem::Estimate estimate;
};

mem::Architecture arch_of(const std::string& model_key) {
  mem::ModelRow row;
  for (const char* file : {"/models.tsv", "/models-extra.tsv"}) {
    const Table m = read_table(kData + file);
    for (const auto& r : m.rows)
      if (r[0] == model_key)
        for (std::size_t i = 0; i < m.header.size(); ++i)
          if (!r[i].empty()) row[m.header[i]] = r[i];
  }
  if (row.empty()) FAIL("no models.tsv row " << model_key);
  mem::ArchFacts extra;
  for (const auto& r : read_table(kData + "/model-arch.tsv").rows)
    if (r[0] == model_key) extra[r[1]] = r[2];
  auto a = mem::architecture_from_facts(&row, extra, {});
  if (auto* e = std::get_if<mem::InputError>(&a)) FAIL(model_key << ": " << e->message);
  return std::get<mem::Mapped<mem::Architecture>>(a).value;
}

Smallest smallest(const mem::Architecture& a, const mem::Training& t, double capacity_gib, std::int64_t limit) {
  auto pr = mem::params_from_tsv(read_text(kData + "/memory.tsv"));
  const mem::Params params = std::get<mem::Params>(pr);
  std::vector<std::int64_t> worlds{1, 2, 4};
  for (std::int64_t w = 8; w <= limit; w += 8) worlds.push_back(w);
  for (std::int64_t world : worlds) {
    Smallest best;
    for (std::int64_t tp : {1, 2, 4, 8}) {
      if (tp > world || a.heads % tp != 0) continue;
      for (std::int64_t pp = 1; pp <= a.layers && tp * pp <= world; ++pp) {
        if (world % (tp * pp) != 0) continue;
        for (std::int64_t ep = 1; ep <= std::max<std::int64_t>(1, a.experts); ++ep) {
          if ((a.experts == 0 && ep > 1) || (a.experts > 0 && a.experts % ep != 0) || world % (pp * ep) != 0) continue;
          mem::Layout l;
          l.tp = tp;
          l.pp = pp;
          l.ep = ep;
          l.etp = ep > 1 ? 1 : tp;
          l.sp = tp > 1;
          l.world = world;
          auto e = mem::estimate(a, l, t, params);
          if (!std::holds_alternative<mem::Estimate>(e)) continue;
          const auto& est = std::get<mem::Estimate>(e);
          if (est.fits(capacity_gib * mem::kBytesPerGiB) && (best.world == 0 || est.total < best.estimate.total)) {
            best.world = world;
            best.layout = l;
            best.estimate = est;
          }
        }
      }
    }
    if (best.world) return best;
  }
  return {};
}

mem::Training job(mem::Mode mode, mem::Recompute recompute) {
  mem::Training t;
  t.mode = mode;
  t.seq_length = 4096;
  t.micro_batch = 1;
  t.global_batch = 128;
  t.recompute = recompute;
  t.te_cross_entropy = true;
  if (mode != mem::Mode::kFull) {
    t.lora_rank = 32;  // Bridge LoRA defaults (peft/lora.py)
    for (auto x : {mem::LoraTarget::kQkv, mem::LoraTarget::kProj, mem::LoraTarget::kFc1, mem::LoraTarget::kFc2}) t.lora_targets.add(x);
  }
  return t;
}

std::string describe(const Smallest& s) {
  const auto& l = s.layout;
  return std::to_string(s.world) + " GPUs (TP" + std::to_string(l.tp) + " PP" + std::to_string(l.pp) + " EP" + std::to_string(l.ep) +
         "): " + s.estimate.breakdown();
}

}  // namespace

TEST_CASE("memory: the fewest GPUs for jobs the planner sizes", "[memory]") {
  struct Case {
    const char* what;
    const char* model;
    mem::Mode mode;
    mem::Recompute recompute;
    double gpu_gib;  // gpus.tsv memory_gb
    std::int64_t expected;
  };
  const Case cases[] = {
      {"full SFT Llama 3 8B on H100", "llama3_8b", mem::Mode::kFull, mem::Recompute::kNone, 80, 4},
      {"full SFT Llama 3 8B on H100, full recompute", "llama3_8b", mem::Mode::kFull, mem::Recompute::kFull, 80, 2},
      {"full SFT Llama 3 70B on H100", "llama3_70b", mem::Mode::kFull, mem::Recompute::kNone, 80, 24},
      {"full SFT Llama 3 70B on H100, full recompute", "llama3_70b", mem::Mode::kFull, mem::Recompute::kFull, 80, 24},
      {"LoRA Llama 3 70B on A100 80 GB", "llama3_70b", mem::Mode::kLora, mem::Recompute::kNone, 80, 4},
      {"LoRA Qwen3-235B-A22B on H100", "qwen3_235b_a22b", mem::Mode::kLora, mem::Recompute::kNone, 80, 8},
  };
  for (const auto& c : cases) {
    const Smallest s = smallest(arch_of(c.model), job(c.mode, c.recompute), c.gpu_gib, 512);
    std::cout << "memory: fewest GPUs, " << c.what << ": " << describe(s) << "\n";
    INFO(c.what << ": " << describe(s));
    CHECK(s.world == c.expected);
  }
}
