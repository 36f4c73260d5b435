-- The normalized knowledge base written by `kbc build` and read by kbq.
-- Schema version 16 (PRAGMA user_version and meta.schema_version); readers
-- refuse any other version. Documented table by table in docs/schema.md.
-- Every fact row carries its provenance: source_id (→ sources) and line.
--
-- `-- runtime: left out`, the line right before a CREATE TABLE, marks a
-- table kbq reads no row of: kbc's own records, code facts kbq reads as
-- recipe_facts, and the tables whose rows kbc compiles into a value kbq
-- reads instead (rows_compiled, recipes_compiled, lexicon_compiled). A
-- runtime KB (kbc build --runtime, the one kbq embeds) holds none of them,
-- nor their indexes: an answer then parses a schema of half the size.
-- `-- runtime: left out, kbc only` marks one of them that only kbc reads
-- (lint, generate, dump): a runtime KB empties it before kbc's derive step,
-- so nothing derived for kbq comes from its rows.

PRAGMA user_version = 16;

-- Key/value facts about the KB itself (no timestamps: builds are reproducible).
CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);

-- One row per compiled file: editions (markdown or text export) and data files.
CREATE TABLE sources (
  id              INTEGER PRIMARY KEY,
  path            TEXT NOT NULL UNIQUE,  -- relative to the sources root
  format          TEXT NOT NULL,         -- markdown | text-export | data | perf-table
  lang            TEXT,                  -- en | fr | ja | zh; NULL for data files
  revision        INTEGER,               -- 1 = oldest; NULL for data files
  date            TEXT,                  -- date the edition states, or NULL
  origin          TEXT,                  -- seed file the edition was restored from
  translated_from TEXT,                  -- language it was translated from, or NULL
  name            TEXT,                  -- skill name from front matter
  sha256          TEXT NOT NULL
);

-- Every heading of every edition, classified.
-- runtime: left out, kbc only
CREATE TABLE sections (
  id           INTEGER PRIMARY KEY,
  source_id    INTEGER NOT NULL REFERENCES sources(id),
  line         INTEGER NOT NULL,
  level        INTEGER NOT NULL,
  kind         TEXT,     -- section kind (data/section-kinds.tsv), 'family', or NULL
  heading      TEXT NOT NULL,
  heading_path TEXT NOT NULL,  -- ancestors joined with ' > '
  ordinal      INTEGER,        -- family: position within its index
  index_kind   TEXT            -- family: library_index | benchmark_index
);
CREATE INDEX sections_source ON sections(source_id, line);

-- Aligned entities: one rule, pitfall, checklist item, quick-reference row,
-- command, code anchor, ... across all languages and revisions.
CREATE TABLE entities (
  id         INTEGER PRIMARY KEY,
  kind       TEXT NOT NULL,
  key        TEXT NOT NULL,     -- alignment key within the kind
  section    TEXT NOT NULL,     -- section kind of the winning edition
  superseded INTEGER NOT NULL,  -- 1: its section was replaced in a newer revision
  UNIQUE (kind, key)
);

-- Each edition's text of an entity. is_winner marks the newest revision's.
CREATE TABLE entity_texts (
  entity_id  INTEGER NOT NULL REFERENCES entities(id),
  lang       TEXT NOT NULL,
  source_id  INTEGER NOT NULL REFERENCES sources(id),
  line       INTEGER NOT NULL,
  revision   INTEGER NOT NULL,
  is_winner  INTEGER NOT NULL,
  usable     INTEGER NOT NULL,  -- 1: may be shown (the winner, or an edition no newer revision overrules; base/choose.hpp)
  text       TEXT NOT NULL,
  parts      TEXT NOT NULL,   -- JSON object of named parts (symptom, fix, want, title, command, ...)
  facts      TEXT NOT NULL,   -- JSON object: field → sorted array of language-independent values
  PRIMARY KEY (entity_id, source_id, line)  -- an entity's texts by entity_id (its first column)
);

-- Languages an entity has no text in.
CREATE TABLE missing_translations (
  entity_id INTEGER NOT NULL REFERENCES entities(id),
  lang      TEXT NOT NULL,
  PRIMARY KEY (entity_id, lang)
);

-- Disagreements between editions; the first value (wins = 1) is the newest revision's.
CREATE TABLE conflicts (
  id          INTEGER PRIMARY KEY,
  type        TEXT NOT NULL,   -- revision | translation
  entity_kind TEXT NOT NULL,   -- entity kind, or 'recipe'
  entity_key  TEXT NOT NULL,
  field       TEXT NOT NULL
);
-- kbq looks up the older values of one recipe or entity per answer.
CREATE INDEX conflicts_entity ON conflicts(entity_kind, entity_key);
CREATE TABLE conflict_values (
  conflict_id INTEGER NOT NULL REFERENCES conflicts(id),
  position    INTEGER NOT NULL,
  value       TEXT NOT NULL,
  source_id   INTEGER NOT NULL REFERENCES sources(id),
  line        INTEGER NOT NULL,
  revision    INTEGER NOT NULL,
  lang        TEXT NOT NULL,
  wins        INTEGER NOT NULL,
  PRIMARY KEY (conflict_id, position)
);

-- Recipe rows of the documents: library rows (exact names, brace
-- expansions, `*` patterns, and names known by mention) and benchmark rows,
-- as the winning revision states them. What runs is in `recipes` (from the
-- code); these rows are what the documents claim (compared in `drift`).
-- Parallelism is a range: *_min/*_max, with *_state value | none (not used,
-- i.e. 1) | varies | unknown.
CREATE TABLE doc_recipes (
  id             INTEGER PRIMARY KEY,
  name           TEXT NOT NULL,
  mode           TEXT,            -- pretrain | sft | peft; NULL when the row does not say
  kind           TEXT NOT NULL,   -- library | benchmark
  is_pattern     INTEGER NOT NULL,  -- 1: contains '*', never a verified function name
  expanded_from  TEXT,            -- brace/star pattern it came from
  mentioned_in   TEXT,            -- file:line of the mention, for names no table lists
  family         TEXT NOT NULL,   -- family heading as written in its edition
  family_ordinal INTEGER NOT NULL,
  model_key      TEXT,            -- models.model_key, when known
  model          TEXT,            -- benchmark rows: model as written
  tp_min INTEGER, tp_max INTEGER, tp_state TEXT NOT NULL,
  pp_min INTEGER, pp_max INTEGER, pp_state TEXT NOT NULL,
  cp_min INTEGER, cp_max INTEGER, cp_state TEXT NOT NULL,
  ep_min INTEGER, ep_max INTEGER, ep_state TEXT NOT NULL,
  vp_min INTEGER, vp_max INTEGER, vp_state TEXT NOT NULL,
  gpus_min INTEGER, gpus_max INTEGER, gpus_open INTEGER NOT NULL, gpus_state TEXT NOT NULL,
  sp             INTEGER,         -- 1 on, 0 off, NULL unknown
  seq_len        INTEGER,         -- tokens, NULL unknown
  sizes          TEXT,            -- pattern rows: sizes covered, as written
  gpu_types      TEXT,            -- comma-separated gpu keys (benchmark rows)
  notes          TEXT,
  extra          TEXT,            -- JSON object: cells of columns data/columns.tsv does not know, header as written → cell; NULL when none
  source_id      INTEGER NOT NULL REFERENCES sources(id),
  line           INTEGER NOT NULL,
  revision       INTEGER NOT NULL,
  UNIQUE (name, mode, kind)
);
CREATE INDEX doc_recipes_name ON doc_recipes(name);

-- The recipes that run: one row per name the newest code snapshot exports,
-- derived by kbc (compiler/derive) from code_recipes, code_facts, the model
-- rows and data/steps.tsv, so kbq reads a candidate's layout in one row.
-- Every value comes from code_facts of `target` (where each is cited); a
-- NULL is a fact the code leaves unknown or undecidable.
CREATE TABLE recipes (
  id               INTEGER PRIMARY KEY,
  name             TEXT NOT NULL,
  kind             TEXT NOT NULL,   -- library | benchmark
  target           TEXT NOT NULL,   -- the defining function (→ code_facts.target)
  mode             TEXT NOT NULL,   -- the task: pretrain | sft | peft ('' when the launcher infers none)
  launch_mode      TEXT NOT NULL,   -- the launcher's mode for the name: pretrain | sft | lora | dora
  model_key        TEXT NOT NULL,   -- models key of the model it trains ('' when unknown)
  modality         TEXT NOT NULL,   -- text | vision | audio | diffusion | omni (its forward step, data/steps.tsv)
  moe              INTEGER NOT NULL,  -- 1: the model has routed experts
  tp INTEGER, pp INTEGER, vp INTEGER, cp INTEGER, ep INTEGER, etp INTEGER,
  sp               INTEGER,         -- 1 on, 0 off
  seq_len          INTEGER,         -- dataset.seq_length (the runner copies it into the model)
  gbs              INTEGER,         -- train.global_batch_size
  mbs              INTEGER,         -- train.micro_batch_size
  dataset          TEXT NOT NULL,   -- the dataset it builds by default ('' when not one name)
  precision        TEXT NOT NULL,   -- the mixed-precision recipe (bf16_mixed, ...)
  low_precision    TEXT NOT NULL,   -- 'fp8 <fp8_recipe>' or 'fp4 <fp4>' when the recipe trains below BF16, '' otherwise
  native_gpus      INTEGER,         -- GPU count, hardware, precision and variant its function's name encodes
  native_hardware  TEXT NOT NULL,
  native_precision TEXT NOT NULL,
  variant          TEXT NOT NULL,
  min_gpus         INTEGER,         -- the smallest world its layout runs on: PP × max(TP × CP, EP × ETP)
  UNIQUE (name, kind)
);

-- What the launcher does with each recipe (one row per recipes row), derived
-- by kbc (compiler/derive) from its code facts, data/precisions.tsv,
-- data/dataset-kinds.tsv and the launcher's own rules (launcher rows of
-- section `function`). Every *_at cell is a launch_sites id (NULL: none).
-- runtime: left out
CREATE TABLE launch_sites (
  id INTEGER PRIMARY KEY,   -- in text order
  at TEXT NOT NULL          -- path:line@commit, each once (a thousand rows cite a few hundred lines)
);
-- runtime: left out
CREATE TABLE recipe_launch (
  name          TEXT NOT NULL,
  kind          TEXT NOT NULL,   -- library | benchmark
  precision     TEXT NOT NULL,   -- what its code sets (a precisions key), never read from the name; '' unknown
  precision_at  INTEGER REFERENCES launch_sites(id),
  peft_modes    TEXT NOT NULL,   -- PEFT recipes: the --mode values that run it ('lora,dora' or 'lora'); '' otherwise
  peft_at       INTEGER REFERENCES launch_sites(id),   -- where the code decides it
  raises        TEXT NOT NULL,   -- the exception every path of its function raises ('' when it returns)
  raises_at     INTEGER REFERENCES launch_sites(id),
  data          TEXT NOT NULL,   -- what it trains on with no --dataset (a dataset_kinds data value); '' unknown
  data_name     TEXT NOT NULL,   -- the dataset's own name when it has one (squad, cord_v2, ...)
  user_data     INTEGER NOT NULL,  -- 1: the user must point it at their own data first
  data_at       INTEGER REFERENCES launch_sites(id),
  dataset_flag  TEXT NOT NULL,   -- what --dataset does: replaces (the whole dataset config) | refused
  dataset_flag_at INTEGER REFERENCES launch_sites(id),
  shadowed      INTEGER NOT NULL,  -- 1: a library recipe `--recipe NAME` does not reach (the benchmark package exports NAME too and wins)
  shadowed_at   INTEGER REFERENCES launch_sites(id),
  PRIMARY KEY (name, kind)
) WITHOUT ROWID;

-- The quick-reference rows as the ranker reads them (compiler/derive):
-- what the row's "I want to" cell asks, read with the query lexicon in every
-- edition of the winning revision, and the recipes it recommends.
CREATE TABLE quick_ref_picks (
  ordinal          INTEGER PRIMARY KEY,  -- row order (entities of kind quick_ref by key)
  row              TEXT NOT NULL,        -- entities.key of the quick_ref row
  mode             TEXT NOT NULL,        -- a mode id, or '' when the cell names none
  intents          TEXT NOT NULL,        -- comma-separated intent ids
  scale            TEXT NOT NULL,        -- a scale id, or ''
  gpus             INTEGER NOT NULL,     -- the row's GPU count (lower bound of a range), 0 when none
  single_gpu_count INTEGER NOT NULL,     -- 1: the GPU cell is one number, not a range
  recipes          TEXT NOT NULL         -- comma-separated recipe names, in the order the row names them
);

-- Dataset presets of the newest revision and the modes they fit.
-- runtime: left out
CREATE TABLE datasets (
  preset   TEXT PRIMARY KEY,
  modes    TEXT NOT NULL,   -- comma-separated
  evidence TEXT NOT NULL,
  source   TEXT NOT NULL
);
-- Presets renamed between revisions (from aligned commands).
-- runtime: left out
CREATE TABLE dataset_renames (
  old_preset    TEXT NOT NULL,
  new_preset    TEXT NOT NULL,
  old_source_id INTEGER NOT NULL REFERENCES sources(id),
  old_line      INTEGER NOT NULL,
  new_source_id INTEGER NOT NULL REFERENCES sources(id),
  new_line      INTEGER NOT NULL,
  PRIMARY KEY (old_preset, new_preset, old_source_id, old_line)
);

-- Override keys and the layer they belong to, with the sentence that says so.
-- runtime: left out
CREATE TABLE config_keys (
  key            TEXT PRIMARY KEY,
  layer          TEXT NOT NULL,   -- convergence | execution | benchmark-only
  dimension      TEXT,            -- layout dimension it sets (tp, pp, cp, ep, seq, ...), or NULL
  aliases        TEXT NOT NULL,   -- comma-separated older or alternative spellings
  evidence       TEXT NOT NULL,   -- phrase of the source sentence
  sentence       TEXT,            -- the whole sentence (from the edition)
  evidence_source_id INTEGER REFERENCES sources(id),
  evidence_line  INTEGER,
  entity_key     TEXT,            -- config_layer entity holding the sentence (aligned across languages)
  source         TEXT NOT NULL
);

-- Model architecture and GPU facts (data/models.tsv, data/gpus.tsv).
CREATE TABLE models (
  model_key                TEXT PRIMARY KEY,
  display_name             TEXT NOT NULL,
  hf_id                    TEXT,      -- Hugging Face id the recipes load it by
  family                   TEXT,
  arch                     TEXT,
  num_layers               INTEGER,
  num_attention_heads      INTEGER,
  num_key_value_heads      INTEGER,   -- NULL when not a plain count (MLA)
  kv_heads_raw             TEXT,      -- as written (e.g. 'mla:128')
  num_experts              INTEGER,
  experts_per_token        INTEGER,
  max_position_embeddings  INTEGER,
  total_params_b           REAL,
  active_params_b          REAL,
  notes                    TEXT,
  source                   TEXT NOT NULL
);
-- runtime: left out
CREATE TABLE gpus (
  gpu_key             TEXT PRIMARY KEY,
  display_name        TEXT NOT NULL,
  short_name          TEXT NOT NULL,    -- the name answers print ("RTX 6000 Ada")
  memory_gb           REAL,             -- read as GiB by the memory model (docs/memory.md)
  bf16_dense_tflops   REAL,
  nvlink_domain_size  INTEGER NOT NULL,
  gpus_per_node       INTEGER NOT NULL,
  fp8_gemm_any_layout INTEGER NOT NULL, -- 1: one FP8 weight copy (Blackwell on), data/gpu-memory.tsv
  source              TEXT NOT NULL,
  arch                TEXT NOT NULL     -- ampere | ada | hopper | blackwell | blackwell_ws | rubin: the precisions it runs (precisions.archs)
) WITHOUT ROWID;
-- Systems and racks as people name them: GPUs of one type per system, and nodes (data/systems.tsv).
CREATE TABLE systems (
  system       TEXT PRIMARY KEY,  -- the value of a lexicon word of kind system
  display_name TEXT NOT NULL,
  gpu_key      TEXT NOT NULL,     -- → gpus.gpu_key
  gpus         INTEGER NOT NULL,  -- GPUs in one system
  nodes        INTEGER NOT NULL,  -- nodes (torchrun --nnodes) in one system
  source       TEXT NOT NULL
) WITHOUT ROWID;

-- Every column of every model row (data/models.tsv, data/models-extra.tsv),
-- and the extra architecture facts of data/model-arch.tsv: what the memory
-- model reads (query/memory/from_facts.hpp).
CREATE TABLE model_rows (
  model_key TEXT NOT NULL,
  col       TEXT NOT NULL,
  value     TEXT NOT NULL,
  PRIMARY KEY (model_key, col)
) WITHOUT ROWID;
CREATE TABLE model_arch (
  model_key TEXT NOT NULL,
  field     TEXT NOT NULL,
  value     TEXT NOT NULL,
  source    TEXT NOT NULL,
  PRIMARY KEY (model_key, field)
) WITHOUT ROWID;

-- The memory model's constants (data/memory.tsv) and the kind of model each
-- forward step trains (data/steps.tsv).
-- runtime: left out
CREATE TABLE memory_params (
  key    TEXT PRIMARY KEY,
  value  TEXT NOT NULL,
  unit   TEXT NOT NULL,
  source TEXT NOT NULL
) WITHOUT ROWID;
-- runtime: left out
CREATE TABLE steps (
  step     TEXT PRIMARY KEY,
  modality TEXT NOT NULL,   -- text | vision | audio | diffusion | omni
  source   TEXT NOT NULL
);

-- The numeric precisions a recipe's code can set, how its facts show each
-- (tried in ordinal order, the first match wins) and the GPU architectures
-- (gpus.arch) that run it (data/precisions.tsv).
-- runtime: left out
CREATE TABLE precisions (
  precision TEXT PRIMARY KEY,  -- the launcher's precision token (bf16, fp8cs, fp8ds, fp8mx, fp8sc, nvfp4) or fp16
  ordinal   INTEGER NOT NULL,  -- row order in the file
  match     TEXT NOT NULL,     -- fp4=set | fp8_recipe=<value> | fp16=true | *
  archs     TEXT NOT NULL,     -- comma-separated GPU architectures that run it
  display   TEXT NOT NULL,
  source    TEXT NOT NULL
);

-- The data a dataset config class trains on (data/dataset-kinds.tsv).
-- runtime: left out
CREATE TABLE dataset_kinds (
  ordinal   INTEGER PRIMARY KEY,  -- row order: the first row of a class whose `when_fact` holds wins
  class     TEXT NOT NULL,        -- qualified dataset config class (code fact `dataset`)
  when_fact TEXT NOT NULL,        -- field=value of another code fact, or '' (the class's default)
  data      TEXT NOT NULL,        -- mock | sft | packed_sft | image_mock | hf_multimodal | corpus | energon
  user_data INTEGER NOT NULL,     -- 1: the user must provide the data
  source    TEXT NOT NULL
);

-- The order in which kbq ranks results (data/ranking.tsv): constraints
-- first, then preferences, each a criterion the engine implements.
-- runtime: left out
CREATE TABLE ranking (
  position    INTEGER PRIMARY KEY,
  criterion   TEXT NOT NULL UNIQUE,
  description TEXT NOT NULL,
  source      TEXT NOT NULL
);

-- The query vocabulary and table-header words of every language.
-- runtime: left out, kbc only
CREATE TABLE lexicon (
  lang   TEXT NOT NULL,
  kind   TEXT NOT NULL,
  word   TEXT NOT NULL,
  value  TEXT NOT NULL,
  source TEXT NOT NULL,
  line   INTEGER NOT NULL,  -- the row's line in data/lexicon.tsv (the file's order)
  PRIMARY KEY (lang, kind, word)
) WITHOUT ROWID;
-- The query lexicon as kbq reads it: built by kbc from lexicon, gpus,
-- systems and code_datasets (base/dsl/kb_lexicon.cpp, store_compiled_lexicon)
-- and stored ready to use, its words, meanings, spelling trie, printed
-- spellings and systems in one value (layout: base/dsl/lexicon_store.cpp).
-- kbq checks every count, length, id and kind of it as it reads it.
CREATE TABLE lexicon_compiled (
  id     INTEGER PRIMARY KEY CHECK (id = 1),
  bytes  BLOB NOT NULL
);
-- runtime: left out
CREATE TABLE columns (
  lang   TEXT NOT NULL,
  header TEXT NOT NULL,
  field  TEXT NOT NULL,
  source TEXT NOT NULL,
  PRIMARY KEY (lang, header)
);

-- Planner parameters (data/planner.tsv): thresholds and launch templates.
-- runtime: left out
CREATE TABLE planner (
  key    TEXT PRIMARY KEY,
  value  TEXT NOT NULL,
  source TEXT NOT NULL
);

-- The checks kbq evaluates and the rule or pitfall entity each enforces.
-- runtime: left out
CREATE TABLE checks (
  "check" TEXT PRIMARY KEY,
  kind    TEXT NOT NULL,   -- rule | pitfall
  entity  TEXT NOT NULL,   -- entity kind/key, e.g. rule/1
  source  TEXT NOT NULL
);

-- Answer labels of kbq in every language (data/answer-labels.tsv).
-- runtime: left out
CREATE TABLE labels (
  lang   TEXT NOT NULL,
  key    TEXT NOT NULL,
  text   TEXT NOT NULL,
  source TEXT NOT NULL,
  PRIMARY KEY (lang, key)
) WITHOUT ROWID;

-- Facts the newest revision does not state, taken from another edition
-- that does: a recipe the newest revision's index does not list (field ''),
-- a field its row leaves unknown (no column, an empty or unreadable cell), a
-- quick-reference GPU cell it cannot read. Each is also a `fallback` finding.
-- runtime: left out, kbc only
CREATE TABLE fallbacks (
  ref_kind        TEXT NOT NULL,     -- 'doc_recipe', or the entity kind (quick_ref, ...)
  ref_id          INTEGER NOT NULL,  -- doc_recipes.id or entities.id
  field           TEXT NOT NULL,     -- tp, pp, cp, ep, vp, gpus, sp, seq_len, gpu_types; '' for a whole recipe row
  value           TEXT NOT NULL,     -- the value used, as lint compares it; '' for a whole row
  source_id       INTEGER NOT NULL REFERENCES sources(id),
  line            INTEGER NOT NULL,
  revision        INTEGER NOT NULL,  -- the edition it was read from
  lang            TEXT NOT NULL,
  newest_revision INTEGER NOT NULL,  -- the revision that does not state it
  PRIMARY KEY (ref_kind, ref_id, field)
);

-- Lint findings that are not conflicts (removed entities, fallbacks, unknown mentions).
-- runtime: left out, kbc only
CREATE TABLE findings (
  kind      TEXT NOT NULL,
  message   TEXT NOT NULL,
  source_id INTEGER REFERENCES sources(id),
  line      INTEGER
);

-- Full-text index over every text: trigram tokens find CJK words too.
-- Terms shorter than three characters fall back to LIKE over search.text.
-- runtime: left out, kbc only
CREATE VIRTUAL TABLE search USING fts5(
  text,
  lang UNINDEXED,
  ref_kind UNINDEXED,   -- entity | recipe | section
  ref_id UNINDEXED,
  tokenize = 'trigram'
);

-- The Megatron Bridge code (kb-sources/code/<commit>/, written by `kbc
-- extract-code`): what runs. Code facts cite `at` (path:line in the
-- checkout) with the commit of their snapshot: path:line@commit.

-- Every snapshot compiled; the newest (by date) is the one the tables below hold.
CREATE TABLE code_snapshots (
  id         INTEGER PRIMARY KEY,
  folder     TEXT NOT NULL,         -- relative to the sources root, e.g. code/067f987df
  commit_sha TEXT NOT NULL UNIQUE,  -- full sha
  date       TEXT NOT NULL,         -- ISO date of the commit
  repo       TEXT NOT NULL,
  extractor  TEXT NOT NULL,         -- extractor version that wrote the facts
  newest     INTEGER NOT NULL       -- 1: its facts fill code_recipes, code_facts, launcher, ...
);

-- Every recipe name the newest snapshot exports.
-- runtime: left out, kbc only
CREATE TABLE code_recipes (
  id          INTEGER PRIMARY KEY,
  name        TEXT NOT NULL,
  kind        TEXT NOT NULL,   -- library | benchmark
  target      TEXT NOT NULL,   -- module.function that defines it (→ code_facts.target)
  defined_at  TEXT NOT NULL,   -- path:line of its def
  exported_at TEXT NOT NULL,   -- path:line of the export (star import, import or alias)
  alias_of    TEXT NOT NULL,   -- the defining function's name when it differs, else ''
  mode        TEXT NOT NULL,   -- the launcher's mode inferred from the name (pretrain, sft, lora, dora), or ''
  family      TEXT NOT NULL,   -- benchmark family package (the launcher's rule), or ''
  model       TEXT NOT NULL,   -- benchmark names: model, task, GPU count, hardware, precision, variant
  task        TEXT NOT NULL,   --   parsed with the launcher's pattern ('' when the name does not match)
  gpus        INTEGER,
  hardware    TEXT NOT NULL,
  precision   TEXT NOT NULL,
  variant     TEXT NOT NULL,
  step        TEXT NOT NULL,   -- the forward step the launcher runs it with (what kind of model it trains)
  UNIQUE (name, kind)
);
CREATE INDEX code_recipes_target ON code_recipes(target);

-- Each recipe function's facts (data/code-fields.tsv says which config path each field reads).
-- runtime: left out, kbc only
CREATE TABLE code_facts (
  target TEXT NOT NULL,
  field  TEXT NOT NULL,
  state  TEXT NOT NULL,   -- value | default | alternatives | unknown
  value  TEXT NOT NULL,   -- alternatives '|'-joined; Python's true/false/none for those types
  type   TEXT NOT NULL,   -- Python type of the value (int, bool, none, str, ...)
  at     TEXT NOT NULL,   -- path:line that set it (or of the default)
  note   TEXT NOT NULL,   -- why unknown, which default, which condition
  PRIMARY KEY (target, field)
);

-- The code facts as kbq reads them at run time, derived from code_facts by
-- kbc (compiler/derive): each recipe function, field, file and value once,
-- integers stored as integers, each function's facts packed in one value.
-- A fact's site `at` is file:line, plus the rest (the other sites of a fact
-- under alternatives, '|path:line...'; or the whole text when it is not
-- path:line). kbq's embedded KB (kbc build
-- --runtime) holds these and not code_facts.
CREATE TABLE code_files (
  id   INTEGER PRIMARY KEY,      -- in path order
  path TEXT NOT NULL UNIQUE      -- relative to the checkout
);
-- fact_targets: each target stored once, as the key kbq looks it up by
-- (never by id). The key is the first column: with the NOT NULL id first,
-- SQLite 3.40's quick_check said "NULL value in fact_targets.id" of a table
-- that holds none; with the key first it says ok.
CREATE TABLE fact_targets (
  target TEXT PRIMARY KEY,       -- module.function (code_facts.target, recipes.target)
  id     INTEGER NOT NULL        -- 1, 2, ... in target order (kbc numbers them; recipe_facts.target_id)
) WITHOUT ROWID;
CREATE TABLE fact_fields (
  id    INTEGER PRIMARY KEY,     -- in field order
  field TEXT NOT NULL UNIQUE
);
CREATE TABLE fact_values (
  id    INTEGER PRIMARY KEY,     -- in (state, value, type) order
  state TEXT NOT NULL,           -- value | default | alternatives | unknown
  value NOT NULL,                -- an INTEGER when code_facts.value is one in canonical decimal, else that TEXT
  type  TEXT NOT NULL            -- Python type of the value
);
-- A function's facts in one value, in field id order: each its field
-- (fact_fields.id), its value (fact_values.id) and its first site, the
-- file (code_files.id), the line and the rest of `at` (layout:
-- base/packed_facts.hpp).
CREATE TABLE recipe_facts (
  target_id INTEGER PRIMARY KEY,  -- fact_targets.id
  facts     BLOB NOT NULL
);

-- What the launchers say (scripts/training): flags, mode rules, runner steps, the benchmark launch,
-- and the name registries a str config value is looked up in (section registry, item <key>:<name>;
-- kbc adds one `precision` row per entry: the data/precisions.tsv key its fields match).
CREATE TABLE launcher (
  section   TEXT NOT NULL,  -- flag | mode-rule | mode | runner-step | launch | name-pattern | family-rule | function | table | registry
  item      TEXT NOT NULL,
  attribute TEXT NOT NULL,
  value     TEXT NOT NULL,
  at        TEXT NOT NULL
);
CREATE INDEX launcher_item ON launcher(section, item);

-- The override keys the code's ConfigContainer has.
CREATE TABLE code_config_keys (
  key           TEXT NOT NULL,  -- dotted key (train.global_batch_size), or a section name
  kind          TEXT NOT NULL,  -- section | field | external-field
  class         TEXT NOT NULL,  -- the dataclass that declares it
  type          TEXT NOT NULL,  -- annotation text; `open` for a section whose class lies outside the snapshot
  default_value TEXT NOT NULL,
  source        TEXT NOT NULL,  -- where an external default is cited from
  at            TEXT NOT NULL
);
CREATE INDEX code_config_keys_key ON code_config_keys(key);

-- The launcher's --dataset presets and what each builds (attribute `modes`: the modes it allows).
-- runtime: left out
CREATE TABLE code_datasets (
  preset    TEXT NOT NULL,
  attribute TEXT NOT NULL,
  value     TEXT NOT NULL,
  at        TEXT NOT NULL,
  note      TEXT NOT NULL
);

-- Model providers the recipes instantiate: their own fields, or the hf id of a hub model.
-- runtime: left out, kbc only
CREATE TABLE code_providers (
  provider TEXT NOT NULL,
  field    TEXT NOT NULL,
  state    TEXT NOT NULL,
  value    TEXT NOT NULL,
  type     TEXT NOT NULL,
  at       TEXT NOT NULL,
  note     TEXT NOT NULL,
  targets  TEXT NOT NULL   -- how many recipe functions use it
);

-- What changed in the code between two compiled snapshots (code/changes-<old>-<new>.tsv).
-- runtime: left out, kbc only
CREATE TABLE code_changes (
  file       TEXT NOT NULL,
  line       INTEGER NOT NULL,
  change     TEXT NOT NULL,  -- name-added | name-removed | target-changed | fact-changed | fact-added | fact-removed
  name       TEXT NOT NULL,
  kind       TEXT NOT NULL,
  field      TEXT NOT NULL,
  old_value  TEXT NOT NULL,  -- state:value
  new_value  TEXT NOT NULL,
  old_commit TEXT NOT NULL,  -- short commits
  new_commit TEXT NOT NULL
);
CREATE INDEX code_changes_name ON code_changes(name);

-- Where a document disagrees with the newest snapshot (the code decides what runs).
CREATE TABLE drift (
  id         INTEGER PRIMARY KEY,
  kind       TEXT NOT NULL,   -- recipe-fact | missing-recipe | unknown-key | overwritten-key | dataset | benchmark-model
  subject    TEXT NOT NULL,   -- recipe, pattern, key or preset
  field      TEXT NOT NULL,   -- tp, pp, cp, ep, sp, seq_len, min_gpus, gpus, hardware, mode; '' for the whole subject
  doc_value  TEXT NOT NULL,
  source_id  INTEGER NOT NULL REFERENCES sources(id),
  line       INTEGER NOT NULL,
  revision   INTEGER NOT NULL,
  lang       TEXT NOT NULL,
  code_value TEXT NOT NULL,   -- '' when the code has nothing
  code_at    TEXT NOT NULL,   -- path:line@commit, or ''
  note       TEXT NOT NULL
);
CREATE INDEX drift_subject ON drift(subject, field);

-- ===========================================================================
-- Measured throughput (schema version 5): NVIDIA's performance tables
-- (docs/performance-summary*.md of the Megatron Bridge snapshots, compiled by
-- compiler/perf; sources.format = 'perf-table') and the data the throughput
-- estimator reads (query/perf). docs/throughput.md describes them.
-- ===========================================================================

-- One measured configuration as a table row states it (two rows for a row
-- whose cells hold a second measurement in parentheses). Ids in edition,
-- file and line order. A newer release's row of the same configuration is
-- current, older releases' rows are history (superseded), and an older
-- edition's copy of the same release is a copy; superseded_by names the
-- current row.
CREATE TABLE perf_rows (
  id                INTEGER PRIMARY KEY,
  source_id         INTEGER NOT NULL REFERENCES sources(id),
  line              INTEGER NOT NULL,
  col               INTEGER NOT NULL,
  edition           TEXT NOT NULL,     -- short commit of the snapshot whose docs the page was copied from
  release           TEXT NOT NULL,     -- NeMo container release as written, e.g. 26.06.01
  release_order     INTEGER NOT NULL,  -- 1 = oldest release among the rows
  task              TEXT NOT NULL,     -- pretrain | sft | peft
  model_written     TEXT NOT NULL,     -- the table's model, qualifier included ("DeepSeekV3 (w/o MTP)")
  model_key         TEXT NOT NULL,     -- the KB's model
  recipe_model      TEXT NOT NULL,     -- the model part of the benchmark recipe names
  variant           TEXT NOT NULL,     -- the qualifier's label ('' none)
  arch_override     TEXT NOT NULL,     -- field=value,... the qualifier changes in the FLOPs count ('' none)
  system            TEXT NOT NULL,     -- as written (DGX-GB300)
  gpu               TEXT NOT NULL,     -- GPU key
  gpus              INTEGER NOT NULL,
  precision         TEXT NOT NULL,     -- bf16 | fp8cs | fp8mx | fp8sc | nvfp4
  precision_written TEXT NOT NULL,     -- as written; '' when the table has no Precision column
  gbs               INTEGER NOT NULL,
  mbs               INTEGER NOT NULL,
  seq               INTEGER NOT NULL,
  fsdp              INTEGER,           -- NULL: n/a or no such column
  tp                INTEGER,
  pp                INTEGER,
  cp                INTEGER,
  vp                INTEGER,
  ep                INTEGER,
  ga                INTEGER,
  tokens_per_gpu    REAL NOT NULL,     -- tokens / s / GPU
  tflops_per_gpu    REAL NOT NULL,     -- model TFLOP / s / GPU, as published
  alternate         INTEGER NOT NULL,  -- 1: the values in parentheses
  note_kind         TEXT NOT NULL,     -- '' | caveat | regression (never used for estimates)
  notes             TEXT NOT NULL,     -- its footnotes and notes, one per line, each with file:line
  status            TEXT NOT NULL,     -- current | superseded | copy
  superseded_by     INTEGER,           -- the current row of its configuration (NULL when current)
  recipe            TEXT NOT NULL,     -- the benchmark recipe that runs this configuration ('' none)
  arch_recipe       TEXT NOT NULL,     -- a benchmark recipe of the same model and task (its facts give the architecture)
  -- Derived by kbc (compiler/generate/perf_fit.cpp) for every row but a copy:
  arch_class        TEXT NOT NULL DEFAULT '',  -- dense | moe | hybrid | hybrid-moe of arch_recipe's model; '' when not mapped
  flops             REAL,                      -- our FLOPs per token; NULL when they cannot be counted
  flops_error       TEXT NOT NULL DEFAULT ''   -- why they cannot be counted ('' when counted)
);
CREATE INDEX perf_rows_model ON perf_rows(model_key, status);

-- The throughput estimator's fit over perf_rows, derived by kbc
-- (compiler/generate/perf_fit.cpp): each platform's achieved-MFU factor and
-- the architecture classes a BF16/lower-precision pair bridges.
CREATE TABLE perf_fit (
  kind       TEXT NOT NULL,  -- platform | bf16_bridged
  key        TEXT NOT NULL,  -- gpu/precision, or an architecture class
  pairs      INTEGER,        -- platform: the measured pairs that informed it
  log_factor REAL,           -- platform: the log of its factor; NULL when no pair reaches the reference
  PRIMARY KEY (kind, key)
) WITHOUT ROWID;

-- The throughput estimator's inputs as an answer reads them, written by kbc
-- once perf_rows and perf_fit are derived (compiler/generate/perf_fit.cpp):
-- the rows' columns the estimator reads (no copies), perf_params,
-- flops_arch, gpu_peaks, the precision classes and perf_fit, in one value
-- (layout: query/perf/stored.cpp). Read whole at an answer's first
-- throughput; kbq checks every count, length and value as it reads it.
-- `kbq perf` and kbc read the tables themselves.
CREATE TABLE perf_compiled (
  id     INTEGER PRIMARY KEY CHECK (id = 1),
  bytes  BLOB NOT NULL
);

-- The recipes as an answer reads them, written by kbc once the recipes,
-- recipe_launch and launch_sites are derived (compiler/generate/perf_fit.cpp,
-- Engine::compile_recipes): every recipe of both kinds with its launch facts
-- and the texts of the sites they cite, at most 256 recipes a chunk, each
-- kind in name order (layout: query/kb/recipes_stored.cpp). Read whole at an
-- answer's first recipe and indexed by name, function, mode and model, so a
-- family's or a mode's recipes are found without a scan of the table and
-- only those kept are read in full; kbq checks every count, length, name and
-- size as it reads it. kbc reads the tables themselves.
CREATE TABLE recipes_compiled (
  chunk  INTEGER PRIMARY KEY,
  bytes  BLOB NOT NULL
);

-- Query results as an answer reads them, run by kbc once every table they
-- read is filled (compiler/generate/perf_fit.cpp, Engine::compile_stored_rows):
-- part 'snapshot', the rows of the small tables every answer reads (the
-- planner's settings, gpus, precisions, config_keys, launcher, the presets,
-- ranking, checks, memory_params, models and the revision conflicts), and
-- for each language 'labels/<lang>' and 'cited/<lang>' (its labels, the
-- texts of the entities the stages cite), each query's rows in order,
-- every value with its SQLite type (layout: base/stored_rows.hpp), in
-- chunks (a value is at most 1 MiB in a KB kbq reads). Read whole at an
-- answer's start: no SQL statement is compiled for these tables. kbq
-- checks every count and length as it reads it, and every value as it
-- checked the table's; a value compiled from other queries is refused. The
-- full KB keeps the tables (kbc reads them); the runtime KB leaves out the
-- rows of those kbq reads no other way.
CREATE TABLE rows_compiled (
  part   TEXT NOT NULL,
  chunk  INTEGER NOT NULL,  -- the value cut in chunks of at most 256 KiB, numbered from 0
  bytes  BLOB NOT NULL,
  PRIMARY KEY (part, chunk)
) WITHOUT ROWID;

-- Two editions' copies of one release disagree (the newer edition wins).
-- runtime: left out
CREATE TABLE perf_conflicts (
  row_id       INTEGER NOT NULL REFERENCES perf_rows(id),  -- the older copy
  newer_row_id INTEGER NOT NULL REFERENCES perf_rows(id),
  field        TEXT NOT NULL,
  value        TEXT NOT NULL,
  newer_value  TEXT NOT NULL
);

-- A current row whose layout differs from the recipe that runs its
-- configuration in the newest snapshot, or that no recipe runs (field '').
CREATE TABLE perf_drift (
  row_id      INTEGER NOT NULL REFERENCES perf_rows(id),
  field       TEXT NOT NULL,   -- tp | pp | cp | vp | ep | mbs | gbs | seq; '' when no recipe runs it
  table_value TEXT NOT NULL,
  code_value  TEXT NOT NULL,
  code_at     TEXT NOT NULL,   -- path:line@commit, or ''
  note        TEXT NOT NULL
);

-- Copies of the estimator's data (each row with its source).
CREATE TABLE gpu_peaks (           -- data/gpu-peaks.tsv: peak dense TFLOP/s per GPU and precision class
  gpu_key   TEXT NOT NULL,
  precision TEXT NOT NULL,         -- bf16 | fp8 | fp4
  tflops    REAL NOT NULL,
  source    TEXT NOT NULL,
  PRIMARY KEY (gpu_key, precision)
) WITHOUT ROWID;
CREATE TABLE perf_params (         -- data/perf-params.tsv: the estimator's constants
  key    TEXT PRIMARY KEY,
  value  TEXT NOT NULL,
  source TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE flops_arch (          -- data/flops-arch.tsv: architecture facts of the FLOPs count
  model_key TEXT NOT NULL,
  field     TEXT NOT NULL,
  value     TEXT NOT NULL,
  source    TEXT NOT NULL,
  PRIMARY KEY (model_key, field)
) WITHOUT ROWID;
CREATE TABLE perf_flops_exceptions (  -- data/perf-flops-exceptions.tsv: rows whose published TFLOP/s count differently
  model_key TEXT NOT NULL,
  release   TEXT NOT NULL,
  cause     TEXT NOT NULL,
  source    TEXT NOT NULL,
  PRIMARY KEY (model_key, release)
) WITHOUT ROWID;
CREATE TABLE perf_vocab (          -- data/perf-vocab.tsv: how the tables are read (precision classes, footnotes, ...)
  kind   TEXT NOT NULL,
  word   TEXT NOT NULL,
  value  TEXT NOT NULL,
  source TEXT NOT NULL,
  PRIMARY KEY (kind, word)
);
