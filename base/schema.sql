-- The normalized knowledge base written by `kbc build` and read by kbq.
-- Schema version 3 (PRAGMA user_version and meta.schema_version); readers
-- refuse any other version. Documented table by table in docs/schema.md.
-- Every fact row carries its provenance: source_id (→ sources) and line.

PRAGMA user_version = 3;

-- Key/value facts about the KB itself (no timestamps: builds are reproducible).
CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);

-- One row per compiled file: editions (markdown or text export) and data files.
CREATE TABLE sources (
  id              INTEGER PRIMARY KEY,
  path            TEXT NOT NULL UNIQUE,  -- relative to the sources root
  format          TEXT NOT NULL,         -- markdown | text-export | data
  lang            TEXT,                  -- en | fr | ja | zh; NULL for data files
  revision        INTEGER,               -- 1 = oldest; NULL for data files
  date            TEXT,                  -- date the edition states, or NULL
  origin          TEXT,                  -- seed file the edition was restored from
  translated_from TEXT,                  -- language it was translated from, or NULL
  name            TEXT,                  -- skill name from front matter
  sha256          TEXT NOT NULL
);

-- Every heading of every edition, classified.
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
  text       TEXT NOT NULL,
  parts      TEXT NOT NULL,   -- JSON object of named parts (symptom, fix, want, title, command, ...)
  facts      TEXT NOT NULL,   -- JSON object: field → sorted array of language-independent values
  PRIMARY KEY (entity_id, source_id, line)
);
CREATE INDEX entity_texts_lang ON entity_texts(entity_id, lang);

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

-- Recipes: library rows (exact names, brace expansions, `*` patterns, and
-- names known by mention) and benchmark rows. Parallelism is a range:
-- *_min/*_max, with *_state value | none (not used, i.e. 1) | varies | unknown.
CREATE TABLE recipes (
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
  -- Derived by kbc for kbq's ranking (query/rank/shapes.cpp):
  family_intents TEXT NOT NULL DEFAULT '',  -- comma-separated intents of its family's headings, any edition
  model_moe      INTEGER NOT NULL DEFAULT 0, -- 1: the model facts list experts
  shape          INTEGER NOT NULL DEFAULT 0, -- → shapes.id
  UNIQUE (name, mode, kind)
);
-- kbq's candidate reads (query/plan/kb.cpp) are covered by these indexes:
-- by name prefix; by model-key prefix, for the rows whose name does not
-- start with their model key (benchmark rows name the model as written),
-- since the name index finds the others; a shape's members by name.
CREATE INDEX recipes_name ON recipes(name, kind, mode, shape, model_key);
CREATE INDEX recipes_model ON recipes(model_key, kind, name, mode, shape)
  WHERE substr(name, 1, length(model_key)) <> model_key;
CREATE INDEX recipes_mode ON recipes(mode, kind);
CREATE INDEX recipes_shape ON recipes(shape, name, mode, model_key, kind);

-- Recipes that every query term not naming a recipe scores alike: same kind,
-- mode, pattern flag, parallelism, GPUs, SP, sequence length, sizes, GPU
-- types, family intents and MoE flag. kbq scores one row per shape and reads
-- the members of the best shapes by name, instead of every recipe.
CREATE TABLE shapes (
  id        INTEGER PRIMARY KEY,
  kind      TEXT NOT NULL,
  recipe_id INTEGER NOT NULL REFERENCES recipes(id),  -- the first member
  members   INTEGER NOT NULL
);
CREATE INDEX shapes_kind ON shapes(kind);

-- The quick-reference rows as the ranker reads them (query/rank/shapes.cpp):
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
CREATE TABLE datasets (
  preset   TEXT PRIMARY KEY,
  modes    TEXT NOT NULL,   -- comma-separated
  evidence TEXT NOT NULL,
  source   TEXT NOT NULL
);
-- Presets renamed between revisions (from aligned commands).
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
CREATE TABLE gpus (
  gpu_key            TEXT PRIMARY KEY,
  display_name       TEXT NOT NULL,
  memory_gb          REAL,
  bf16_dense_tflops  REAL,
  nvlink_domain_size INTEGER NOT NULL,
  gpus_per_node      INTEGER NOT NULL,
  source             TEXT NOT NULL
);

-- The query vocabulary and table-header words of every language.
CREATE TABLE lexicon (
  lang   TEXT NOT NULL,
  kind   TEXT NOT NULL,
  word   TEXT NOT NULL,
  value  TEXT NOT NULL,
  source TEXT NOT NULL,
  PRIMARY KEY (lang, kind, word)
);
CREATE TABLE columns (
  lang   TEXT NOT NULL,
  header TEXT NOT NULL,
  field  TEXT NOT NULL,
  source TEXT NOT NULL,
  PRIMARY KEY (lang, header)
);

-- Planner parameters (data/planner.tsv): thresholds and launch templates.
CREATE TABLE planner (
  key    TEXT PRIMARY KEY,
  value  TEXT NOT NULL,
  source TEXT NOT NULL
);

-- The checks kbq evaluates and the rule or pitfall entity each enforces.
CREATE TABLE checks (
  "check" TEXT PRIMARY KEY,
  kind    TEXT NOT NULL,   -- rule | pitfall
  entity  TEXT NOT NULL,   -- entity kind/key, e.g. rule/1
  source  TEXT NOT NULL
);

-- Answer labels of kbq in every language (data/answer-labels.tsv).
CREATE TABLE labels (
  lang   TEXT NOT NULL,
  key    TEXT NOT NULL,
  text   TEXT NOT NULL,
  source TEXT NOT NULL,
  PRIMARY KEY (lang, key)
);

-- Facts the newest revision does not state, taken from another edition
-- that does: a recipe the newest revision's index does not list (field ''),
-- a field its row leaves unknown (no column, an empty or unreadable cell), a
-- quick-reference GPU cell it cannot read. Each is also a `fallback` finding.
CREATE TABLE fallbacks (
  ref_kind        TEXT NOT NULL,     -- 'recipe', or the entity kind (quick_ref, ...)
  ref_id          INTEGER NOT NULL,  -- recipes.id or entities.id
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
CREATE TABLE findings (
  kind      TEXT NOT NULL,
  message   TEXT NOT NULL,
  source_id INTEGER REFERENCES sources(id),
  line      INTEGER
);

-- Full-text index over every text: trigram tokens find CJK words too.
-- Terms shorter than three characters fall back to LIKE over search.text.
CREATE VIRTUAL TABLE search USING fts5(
  text,
  lang UNINDEXED,
  ref_kind UNINDEXED,   -- entity | recipe | section
  ref_id UNINDEXED,
  tokenize = 'trigram'
);
