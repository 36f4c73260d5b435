// Plan stage: one recipe on the user's GPUs (see plan.hpp). The recipe's
// own sizes, then the user's; the sequence's CP; the world (the user's
// GPUs, else the recipe's own count or the fewest above it that fit; a
// benchmark runs on its own); the layout search (layout.hpp); then the
// layout, memory, batch, dataset, changes, command and citations of the
// result.
#include <algorithm>
#include <optional>

#include "query/plan/command.hpp"
#include "query/plan/plan_int.hpp"

namespace kbq {

using plan_int::next_pow2;
using plan_int::Plan;
using plan_int::to_ll;

// A deferred search of a result's fewest GPUs: the plan it searches with
// (its search input points into it) and the world it did not fit.
struct FewestSearch {
  std::shared_ptr<const Plan> plan;
  long long world = 0;
};

namespace {

double gib(double bytes) { return bytes / memory::kBytesPerGiB; }

// The recipe's own sizes (no virtual pipeline without a pipeline).
Shape own_shape(const Recipe& r) {
  Shape own{r.tp.value_or(1), r.pp.value_or(1), r.vp.value_or(0), r.cp.value_or(1), r.ep.value_or(1), r.etp.value_or(1), r.mbs.value_or(1)};
  if (own.pp <= 1) own.vp = 0;
  return own;
}

// The recipe's own sizes, then the user's fixed ones (and their sequence,
// batch and sequence-parallel settings, and the overrides with no size).
Shape start_shape(const Context& c, const Recipe& r, const Ask& ask, Plan& p) {
  Shape start = own_shape(r);
  for (const auto& [key, value] : ask.fixed) {
    const ConfigKey* ck = c.kb.config_key(key);
    const std::string dim = ck ? ck->dimension : std::string();
    const long long v = to_ll(value, 0);
    if (auto d = parse_dim(dim)) {
      start.at(*d) = v;
      p.in.fixed.insert(*d);
    } else if (dim == "seq") {
      p.seq = v;
    } else if (dim == "gbs") {
      p.fixed_gbs = v;
    } else if (dim == "mbs") {
      start.mbs = v;
      p.in.mbs_fixed = true;
    } else if (dim == "sp") {
      p.fixed_sp = kb::fold(value) == "true";
    } else {
      p.other.emplace_back(key, value);
    }
  }
  return start;
}

// The search input: a longer sequence than the recipe's needs more CP, so
// each rank keeps at most the tokens the recipe was written for or the
// long-context threshold, whichever is more (the memory model then decides
// whether that many tokens per rank fit; when no layout with that CP fits
// on the world, the search trades CP for TP, which splits them too).
void search_input(const Context& c, const Recipe& r, const Ask& ask, Shape start, Plan& p) {
  const long long threshold = c.settings().long_context_threshold;
  const long long seq = p.seq > 0 ? p.seq : ask.seq > 0 ? ask.seq : r.seq_len.value_or(0);
  long long cp_min = 1;
  if (r.seq_len && seq > *r.seq_len) {
    const long long per_rank = std::max({1LL, *r.seq_len / std::max(1LL, r.cp.value_or(1)), threshold});
    cp_min = std::max(r.cp.value_or(1), next_pow2((seq + per_rank - 1) / per_rank));
  } else if (!r.seq_len && seq > threshold && threshold > 0) {
    cp_min = next_pow2((seq + threshold - 1) / threshold);
  }
  SearchInput& in = p.in;
  if (!in.fixed.count(Dim::CP)) start.cp = std::max(start.cp, cp_min);
  p.seq = seq;
  in.sizing = &p.sizing;
  in.start = start;
  in.gpu = &p.gpu;
  in.seq = seq;
  in.gbs = p.fixed_gbs > 0 ? p.fixed_gbs : r.gbs.value_or(0);
  in.threshold = threshold;
  in.cp_min = in.fixed.count(Dim::CP) ? 1 : cp_min;
  in.moe = r.moe;
  in.change_order = c.settings().change_order;
  in.params = &c.kb.memory;
  in.headroom = c.settings().memory_headroom;
  // The code's own layout: no size fixed, or each fixed to the recipe's own
  // value (kbq check pins every size the user leaves): the same tolerance,
  // hence the same verdict, in an answer, `show` and `check`.
  const Shape own = own_shape(r);
  const bool own_sizes = std::all_of(in.fixed.begin(), in.fixed.end(), [&](Dim d) { return start.at(d) == own.at(d); });
  if (r.native_gpus && (r.native_hardware.empty() || r.native_hardware == p.gpu.key) && own_sizes && seq == r.seq_len.value_or(0)) {
    in.own_world = *r.native_gpus;
    in.own_tolerance = c.settings().own_layout_tolerance;
  }
}

// The world and the placement on it, and the layout shown: the placement,
// or for a job that does not fit the layout it would run with on these GPUs
// (the rules alone), to say how much memory it needs. A benchmark recipe
// runs as its code sets it (the launcher takes no sizes): shown as is,
// never as a layout it cannot be launched with.
struct Shown {
  Placement placement;
  bool placed = false;  // it is the placement found (its memory fits, within the own-layout tolerance)
};

Shown place_on_world(const Context& c, const Recipe& r, const Ask& ask, const std::shared_ptr<const Plan>& plan, Fewest fewest,
                     Planned& out) {
  const Plan& p = *plan;
  Result& res = out.result;
  const SearchInput& in = p.in;
  const long long max_world = c.settings().max_world;
  long long world = ask.gpus;
  std::optional<Placement> placed;
  if (r.kind == RecipeKind::Benchmark) {
    // Its own count, or the count asked when the launcher weak-scales it there.
    if (world <= 0 || plan_int::weak_scaled_gbs(r, world) == 0) world = r.native_gpus.value_or(r.min_gpus.value_or(1));
    if (r.native_gpus && world != *r.native_gpus)
      res.departures.push_back(c.label("note.weak_scaled", {{"own", std::to_string(*r.native_gpus)},
                                                            {"gpus", std::to_string(world)},
                                                            {"own_gbs", std::to_string(r.gbs.value_or(0))},
                                                            {"gbs", std::to_string(plan_int::weak_scaled_gbs(r, world))}}));
    Placement pl = evaluate(in, in.start, world);
    if (pl.fits) placed = pl;
  } else {
    // A count torchrun cannot start evenly on these nodes: the largest below
    // it that it can, said.
    const long long per_node = p.gpu.per_node;
    if (const long long w = launched_world(world, per_node); w != world) {
      const LaunchShape shape = launch_shape(w, per_node).value_or(LaunchShape{1, w});
      res.departures.push_back(c.label("note.world_launchable", {{"asked", std::to_string(world)},
                                                                 {"per_node", std::to_string(per_node)},
                                                                 {"gpus", std::to_string(w)},
                                                                 {"nodes", std::to_string(shape.nodes)},
                                                                 {"nproc", std::to_string(shape.nproc)}}));
      world = w;
    }
    if (world <= 0) {
      const long long own = ask.fewest ? 1 : std::max(r.native_gpus.value_or(0), r.min_gpus.value_or(1));
      world = min_world(in, own, max_world);
      if (world == 0) world = own;
      if (world != own && !ask.fewest)
        res.departures.push_back(c.label("note.own_count", {{"own", std::to_string(own)}, {"gpus", std::to_string(world)}}));
    }
    placed = place(in, world);
  }
  Placement shown = placed ? *placed : [&] {
    if (r.kind == RecipeKind::Benchmark) return evaluate(in, in.start, world);
    if (auto rules_only = place(in, world, false)) return *rules_only;
    Shape ones = in.start;
    ones.tp = ones.cp = ones.ep = ones.etp = 1;
    if (!in.sizing->keeps_pipeline()) {
      ones.pp = 1;
      ones.vp = 0;
    }
    return evaluate(in, in.fixed.empty() ? ones : in.start, world);
  }();
  res.runnable = placed.has_value();
  if (!res.runnable && r.kind != RecipeKind::Benchmark) {
    if (fewest == Fewest::Now)
      res.min_gpus = min_world(in, world + 1, max_world);
    else
      out.fewest = std::make_shared<const FewestSearch>(FewestSearch{plan, world});
  }
  res.layout.gpus = world;
  return {shown, placed && placed->sized && placed->shape == shown.shape};
}

void fill_layout(const Context& c, const Recipe& r, const Ask& ask, const Plan& p, const Shape& s, Result& res) {
  Layout& L = res.layout;
  const long long world = L.gpus;
  L.hardware = p.gpu.key;
  L.hardware_name = c.kb.gpu_name(p.gpu.key);
  L.hardware_assumed = ask.hardware_assumed && !(r.kind == RecipeKind::Benchmark && !r.native_hardware.empty());
  L.per_node = p.gpu.per_node;
  // torchrun starts nnodes × nproc_per_node ranks: exactly the world.
  if (const auto shape = launch_shape(world, L.per_node)) {
    L.nodes = shape->nodes;
    L.nproc = shape->nproc;
  } else {  // a benchmark's own count (its code sets the launch): whole nodes
    L.nodes = (world + L.per_node - 1) / L.per_node;
    L.nproc = L.per_node;
  }
  L.tp = s.tp;
  L.pp = s.pp;
  L.vp = s.vp;  // the VP that runs: kbq check's PP 1 under a recipe's VP fails rule vp_needs_pp
  L.cp = s.cp;
  L.ep = r.moe ? s.ep : 1;
  L.etp = r.moe ? s.etp : 1;
  // Sequence parallelism needs TP > 1 (the model config turns it off at TP 1).
  L.sp = s.tp > 1 && p.fixed_sp.value_or(true);
  L.seq = p.seq;
  // On the recipe's own GPUs (its name's count, else the smallest world its
  // layout runs on), a layout other than the code's is kbq's plan to make
  // it fit: said, with the code's own sizes, never silent.
  const std::optional<long long> own_world = r.native_gpus ? r.native_gpus : r.min_gpus;
  if (res.departures.empty() && own_world && world == *own_world && ask.fixed.empty()) {
    std::vector<std::string> own;
    const auto differs = [&](const char* dim, const std::optional<long long>& code, long long shown_v) {
      if (code && *code != shown_v) own.push_back(std::string(dim) + " " + std::to_string(*code) + " → " + std::to_string(shown_v));
    };
    differs("TP", r.tp, L.tp);
    differs("PP", r.pp, L.pp);
    differs("CP", r.cp, L.cp);
    if (r.moe) differs("EP", r.ep, L.ep);
    if (!own.empty())
      res.departures.push_back(c.label("note.own_layout", {{"gpus", std::to_string(world)}, {"changes", kb::join(own, ", ")}}));
  }
  if (L.nodes > 1 && L.nproc != L.per_node && !(ask.gpus > 0 && world != ask.gpus))  // else said with the count planned
    res.departures.push_back(c.label("note.node_split", {{"gpus", std::to_string(world)},
                                                         {"per_node", std::to_string(L.per_node)},
                                                         {"nproc", std::to_string(L.nproc)},
                                                         {"nodes", std::to_string(L.nodes)}}));
  if (s.tp * s.pp * s.cp > 0 && world % (s.tp * s.pp * s.cp) == 0) L.dp = world / (s.tp * s.pp * s.cp);
  if (r.moe && s.pp * s.ep * s.etp > 0 && world % (s.pp * s.ep * s.etp) == 0) L.edp = world / (s.pp * s.ep * s.etp);
}

void fill_memory(const Context& c, const Plan& p, const Shown& placed, Result& res) {
  const Placement& shown = placed.placement;
  Memory& M = res.memory;
  M.capacity_gib = p.gpu.memory_gib;
  M.assumptions = p.sizing.assumptions;
  if (shown.sized) {
    const auto& e = shown.estimate;
    M.known = true;
    M.per_gpu_gib = gib(e.total);
    M.weights = gib(e.weights);
    M.grads = gib(e.grads);
    M.optimizer = gib(e.optimizer);
    M.activations = gib(e.activations);
    M.overhead = gib(e.overhead);
    M.fits = p.gpu.memory_gib > 0 && (M.per_gpu_gib <= p.gpu.memory_gib || placed.placed);
  } else {
    M.unknown_reason = !p.sizing.sized         ? p.sizing.why_not
                       : p.gpu.memory_gib <= 0 ? c.label("memory.no_capacity", {{"hardware", p.gpu.display}})
                                               : c.label("memory.no_layout");
  }
}

// The batch: GBS = MBS × DP × accumulation; the recipe's GBS when it
// divides, else the nearest that does (a convergence change).
void fill_batch(const Recipe& r, const Plan& p, const Shape& s, Result& res) {
  Batch& B = res.batch;
  B.recipe_gbs = r.gbs.value_or(0);
  B.recipe_mbs = r.mbs.value_or(1);
  B.mbs = s.mbs;
  B.dp = std::max(1LL, res.layout.dp);
  B.gbs = p.fixed_gbs > 0 ? p.fixed_gbs : B.recipe_gbs;
  // A benchmark weak-scaled to another world: the launcher scales its batch
  // with the data-parallel size (samples per DP rank kept).
  if (r.kind == RecipeKind::Benchmark && p.fixed_gbs == 0 && r.native_gpus && res.layout.gpus != *r.native_gpus)
    if (const long long scaled = plan_int::weak_scaled_gbs(r, res.layout.gpus); scaled > 0) B.gbs = scaled;
  if (B.gbs > 0) {
    // A benchmark runs as its code sets it: its GBS is never moved.
    const long long unit = B.mbs * B.dp;
    if (B.gbs % unit != 0 && p.fixed_gbs == 0 && r.kind != RecipeKind::Benchmark) {
      const long long lo = std::max(unit, B.gbs / unit * unit), hi = lo + unit;
      B.gbs = (B.gbs - lo < hi - B.gbs) ? lo : hi;
    }
    B.grad_accum = B.gbs % unit == 0 ? B.gbs / unit : 0;
  }
}

// The data: the recipe's own unless the question asks for other data or
// the recipe needs the user's files (--dataset replaces the recipe's whole
// dataset config: scripts/training/run_recipe.py _apply_dataset). A
// benchmark takes no --dataset.
void fill_data(const Context& c, const Recipe& r, const Ask& ask, const std::string& launch_mode, Result& res) {
  if (r.kind == RecipeKind::Benchmark) return;
  const bool own_data = !r.data.empty() && !r.user_data;
  // Its own: the dataset it names, or, for a recipe without a named dataset
  // (synthetic data), a preset whose config class trains on the same kind
  // of data (data/dataset-kinds.tsv).
  const auto preset_data = c.kb.preset_data.find(ask.dataset);
  const bool asks_own = ask.dataset.empty() || (!r.data_name.empty() && ask.dataset == r.data_name) ||
                        (r.data_name.empty() && preset_data != c.kb.preset_data.end() && preset_data->second == r.data);
  // A preset nobody asked for replaces data that needs the user's files
  // only for the modalities the presets' data serves (data/planner.tsv
  // unasked_dataset_modalities): a diffusion or vision step reads fields a
  // text preset has not (wan_step.py:44 batch["video_latents"]).
  const auto& modalities = c.settings().unasked_dataset_modalities;
  const bool keep_unasked = !own_data && ask.dataset.empty() && !r.data.empty() &&
                            std::find(modalities.begin(), modalities.end(), r.modality) == modalities.end();
  if ((!asks_own || !own_data) && !keep_unasked) {
    // A preset the launcher refuses for this mode is said (a departure);
    // the recipe's own data then stays, rather than another preset nobody
    // asked for.
    const size_t said = res.departures.size();
    res.dataset = plan_int::pick_dataset(c, r, launch_mode, ask.dataset, res.departures);
    if (own_data && res.departures.size() > said) res.dataset.clear();
  }
  if (!own_data && !keep_unasked) return;
  const std::vector<std::pair<std::string, std::string>> vars{{"data", c.label("data." + r.data)},
                                                              {"name", r.data_name.empty() ? r.data : r.data_name},
                                                              {"at", r.data_at},
                                                              {"preset", res.dataset}};
  if (res.dataset.empty())
    res.notes.push_back(c.label("note.own_data", vars));
  else
    res.departures.push_back(c.label("note.dataset_replaces", vars));
}

}  // namespace

// What a result's launch command is built from, taken when it is planned.
struct CommandJob {
  LaunchSpec spec;
  std::string hardware_name;  // the layout's GPU type (the sbatch script's)
  std::string checkpoint;     // the starting checkpoint the overrides pass ("" none)
  std::string hf_id;          // the Hugging Face id: the code's, else the model row's
  std::string hf_cite;        // where the code sets it ("" the model row's, or none)
};

namespace {

// Builds the command, what each node runs, the sbatch script and the
// steps before the run (command.hpp).
void build_command(const Context& c, const CommandJob& job, Result& res) {
  res.command = launch_command(job.spec, c.kb);
  res.launch = node_launch(job.spec, res.command, c.kb, c.labels);
  res.slurm_script = slurm_script(job.spec, res.command, job.hardware_name, c.kb);
  if (res.slurm_script.empty()) res.slurm_none = c.label("slurm.benchmark", {{"recipe", job.spec.recipe}});
  res.before_run = before_run(job.spec, job.checkpoint, job.hf_id, c.kb, c.labels);
  if (!res.before_run.empty() && res.before_run.front().what == "import_checkpoint" && !job.hf_cite.empty())
    res.before_run.front().source += "; --hf-model: " + job.hf_cite;
}

// The launch command, from the newest revision's entry-point command of the
// recipe's kind (command.hpp): built now, or kept to build (Command::Later).
void fill_command(const Context& c, const RecipeData& d, const std::string& launch_mode, Command when, Result& res) {
  const Recipe& r = res.recipe;
  const bool bench = r.kind == RecipeKind::Benchmark;
  const auto& texts = c.texts.of(bench ? c.settings().benchmark_command : c.settings().library_command);
  if (texts.empty()) return;
  const EntityText& t = texts.front();
  const auto command = t.part("command");
  res.sources.push_back({t.file, t.line, t.revision, "entry-point command"});
  auto job = std::make_shared<CommandJob>();
  LaunchSpec& spec = job->spec;
  spec.entry = command ? *command : t.text;
  const EntityRef& ref = bench ? c.settings().benchmark_command : c.settings().library_command;
  spec.entry_ref = ref.kind + "/" + ref.key;
  spec.kind = r.kind;
  spec.recipe = r.name;
  spec.recipe_mode = r.launch_mode;
  spec.launch_mode = launch_mode;
  spec.dataset = res.dataset;
  spec.nodes = res.layout.nodes;
  spec.nproc = res.layout.nproc;
  for (const auto& o : res.overrides)
    if (o.key != plan_int::kLaunchModeKey) spec.changes.emplace_back(o.key, o.value);  // the launcher mode: passed by its own flag
  job->hardware_name = res.layout.hardware_name;
  const std::string pretrained_key = c.kb.key_for("pretrained");
  for (const auto& o : res.overrides)
    if (!pretrained_key.empty() && o.key == pretrained_key) job->checkpoint = o.value;
  const auto hf = d.facts.find("hf_id");
  const bool from_code = hf != d.facts.end() && hf->second.state == kb::FactState::Value;
  job->hf_id = from_code ? hf->second.value : d.model ? d.model->hf_id : std::string();
  if (from_code) job->hf_cite = d.cite("hf_id");
  if (when == Command::Now)
    build_command(c, *job, res);
  else
    res.command_job = std::move(job);
}

}  // namespace

namespace {

// The GPU planned_gpu plans on: its key, its row of the KB (nullptr when it
// has none), and whether it is a benchmark's own, as its code sets it (the
// user's memory and GPUs per node then do not apply).
struct GpuPick {
  const std::string& key;
  const Gpu* row;
  bool own;
  double memory_gib(const Ask& ask) const { return !own && ask.memory_gib > 0 ? ask.memory_gib : row ? row->memory_gib : 0; }
  long long per_node(const Ask& ask) const { return !own && ask.per_node > 0 ? ask.per_node : row ? row->per_node : 0; }
};
GpuPick pick_gpu(const Context& c, const Recipe& r, const Ask& ask) {
  const bool own = ask.hardware_assumed && !r.native_hardware.empty() && r.kind == RecipeKind::Benchmark;
  const std::string& hw = own ? r.native_hardware : !ask.hardware.empty() ? ask.hardware : c.settings().default_gpu;
  return {hw, c.kb.gpu(hw), own};
}

}  // namespace

Gpu planned_gpu(const Context& c, const Recipe& r, const Ask& ask) {
  const GpuPick pick = pick_gpu(c, r, ask);
  Gpu g;
  if (pick.row) {
    g = *pick.row;
  } else {
    g.key = pick.key;
    g.display = pick.key;
  }
  g.memory_gib = pick.memory_gib(ask);
  g.per_node = pick.per_node(ask);
  return g;
}

Foreseen foresee(const Context& c, const Recipe& r, const Ask& ask) {
  Foreseen f;
  if (r.kind != RecipeKind::Library || ask.gpus <= 0) return f;
  const GpuPick gpu = pick_gpu(c, r, ask);                // planned_gpu's, not copied
  f.world = launched_world(ask.gpus, gpu.per_node(ask));  // as place_on_world
  // evaluate() accepts the recipe's own shape on its own count within a
  // tolerance, or unsized: never when that count is above the one asked.
  const double memory_gib = gpu.memory_gib(ask);
  if (ask.fixed.empty() && r.state_floor > 0 && !(r.native_gpus && *r.native_gpus <= ask.gpus) && memory_gib > 0)
    f.never_fits = memory::total_floor(r.state_floor, ask.gpus, c.kb.memory) >
                   memory_gib * memory::kBytesPerGiB * (1.0 + c.settings().own_layout_tolerance);
  // overrides_of: a size unlike the recipe's own is a change, when the KB
  // names its config key.
  if (r.tp && r.pp && r.cp && *r.tp > 0 && *r.pp > 0 && *r.cp > 0 && f.world % (*r.tp * *r.pp * *r.cp) != 0)
    f.changes_layout = !c.kb.key_for("tp").empty() && !c.kb.key_for("pp").empty() && !c.kb.key_for("cp").empty();
  return f;
}

namespace {

// The code fact a dotted config key sets: the recipe function's fact named
// by the key's last part (model.recompute_granularity → recompute_granularity),
// or none (no dot: not a config key, e.g. the launcher's --mode).
const std::pair<const std::string, CodeFact>* fact_of_key(const RecipeData& d, const std::string& key) {
  const auto dot = key.rfind('.');
  if (dot == std::string::npos) return nullptr;
  const auto it = d.facts.find(key.substr(dot + 1));
  return it == d.facts.end() ? nullptr : &*it;
}

// What the recipe's function sets for each of the user's own overrides
// (kbq check's KEY=VALUE with no layout size): the fact its key names (a
// top-level key, mixed_precision, by its own name), so the answer says what
// the override replaces, and one that restates the recipe changes nothing.
void recipe_values(const RecipeData& d, const Plan& p, Result& res) {
  for (auto& o : res.overrides) {
    const bool user = std::any_of(p.other.begin(), p.other.end(), [&](const auto& kv) { return kv.first == o.key; });
    if (!user || !o.recipe_value.empty()) continue;
    const std::pair<const std::string, CodeFact>* f = fact_of_key(d, o.key);
    if (o.key.find('.') == std::string::npos)
      if (const auto it = d.facts.find(o.key); it != d.facts.end()) f = &*it;
    if (!f || (f->second.state != kb::FactState::Value && f->second.state != kb::FactState::Default)) continue;
    o.recipe_value = f->second.value;
    o.pinned_only = o.value == o.recipe_value;
  }
}

}  // namespace

// Sized as the run will be: an override of a key that sets a fact of the
// recipe's function (model.recompute_granularity=full, the offloading keys)
// replaces that fact; layout sizes are the search's, not facts. The
// override's None (planner.tsv none_literal) is the extractor's none.
// Without such an override it is the recipe's own sizing. Either is taken
// from `own` when the caller keeps them, with its placements searched so
// far.
Sizing size_as_run(const Context& c, const RecipeData& d, const Ask& ask, Sizings* own, KeptPlacements*& placed) {
  std::optional<CodeFacts> facts;
  std::vector<std::pair<std::string, std::string>> replaced;  // field, value: in the order applied
  const std::string& none = c.settings().none_literal;
  for (const auto& [key, value] : ask.fixed) {
    if (const ConfigKey* ck = c.kb.config_key(key); ck && !ck->dimension.empty()) continue;
    const auto* fact = fact_of_key(d, key);
    if (!fact) continue;
    if (!facts) facts = d.facts;
    std::string v = !none.empty() && kb::fold(value) == kb::fold(none) ? std::string("none") : value;
    (*facts)[fact->first] = CodeFact{kb::FactState::Value, v, fact->second.type, fact->second.at};
    replaced.emplace_back(fact->first, std::move(v));
  }
  const RecipeData as_run = facts ? RecipeData{d.recipe, *facts, d.model, d.commit} : d;
  Sizings::Entry* e = !own ? nullptr : facts ? own->of(as_run, replaced) : &own->of(d);
  if (!e) return size_recipe(as_run);
  placed = &e->placed;
  return e->sizing;
}

// Whether the job already runs with every setting of the memory lever: the
// question fixes it, or the recipe's function sets it (fact_of_key).
bool lever_set(const Context& c, const RecipeData& d, const Ask& ask) {
  const auto& lever = c.settings().memory_lever;
  return !lever.empty() && std::all_of(lever.begin(), lever.end(), [&](const std::pair<std::string, std::string>& kv) {
    for (const auto& [key, value] : ask.fixed)
      if (key == kv.first) return kb::fold(value) == kb::fold(kv.second);
    const auto* fact = fact_of_key(d, kv.first);
    return fact && fact->second.state == kb::FactState::Value && kb::fold(fact->second.value) == kb::fold(kv.second);
  });
}

Planned plan_recipe(const Context& c, const RecipeData& d, const Ask& ask, bool substitute, Fewest fewest, Sizings* sizings,
                    Command command) {
  const Recipe& r = d.recipe;
  Planned out;
  Result& res = out.result;
  res.recipe = r;
  res.substitute = substitute;
  // On the heap: its search input points into it, and a deferred fewest-GPU
  // search keeps it.
  const auto plan = std::make_shared<Plan>();
  Plan& p = *plan;
  p.gpu = planned_gpu(c, r, ask);
  KeptPlacements* placed = nullptr;
  p.sizing = size_as_run(c, d, ask, sizings, placed);
  out.model = p.sizing.rules;
  if (p.sizing.sized) out.arch = p.sizing.arch;
  search_input(c, r, ask, start_shape(c, r, ask, p), p);
  p.in.placed = placed;
  const Shown shown = place_on_world(c, r, ask, plan, fewest, out);
  if (!c.kb.runs(r.runs_in, p.gpu).value_or(true)) res.runnable = false;  // the check stage says why (precision_runs)
  fill_layout(c, r, ask, p, shown.placement.shape, res);
  fill_memory(c, p, shown, res);
  res.memory.lever_set = lever_set(c, d, ask);
  fill_batch(r, p, shown.placement.shape, res);
  if (command == Command::None) return out;
  // Dataset, overrides, command.
  const std::string launch_mode = !ask.launch_mode.empty() && c.kb.task_of(ask.launch_mode) == r.mode ? ask.launch_mode : r.launch_mode;
  fill_data(c, r, ask, launch_mode, res);
  plan_int::overrides_of(c, res, r, p, launch_mode);
  recipe_values(d, p, res);
  fill_command(c, d, launch_mode, command, res);
  // Where the numbers come from: the code lines.
  for (const char* f : {"tp", "pp", "cp", "ep", "sp", "seq_length", "global_batch_size", "micro_batch_size"})
    if (auto at = d.cite(f); !at.empty()) res.sources.push_back({at, 0, 0, std::string("code: ") + f});
  if (d.model)
    res.sources.push_back(
        {"data/models.tsv", 0, 0, "model " + d.model->key + " (" + d.model->source.substr(0, d.model->source.find(';')) + ")"});
  if (!p.gpu.source.empty()) res.sources.push_back({"data/gpus.tsv", 0, 0, "GPU " + p.gpu.key});
  return out;
}

void finish_command(const Context& c, Result& res) {
  if (!res.command_job) return;
  const std::shared_ptr<const CommandJob> job = std::move(res.command_job);  // leaves it null
  build_command(c, *job, res);
}

std::string command_of(const Context& c, const Result& res) {
  return res.command_job ? launch_command(res.command_job->spec, c.kb) : res.command;
}

long long fewest_gpus(const Context& c, const FewestSearch& f) { return min_world(f.plan->in, f.world + 1, c.settings().max_world); }

}  // namespace kbq
