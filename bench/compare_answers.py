#!/usr/bin/env python3
"""Compares every answer of two kbq builds, byte for byte.

Usage: bench/compare_answers.py OLD_KBQ NEW_KBQ [--generated N] [--jobs J]
                                [--cache DIR] [--only CLASS ...]
                                [--old-kbc OLD_KBC --new-kbc NEW_KBC]

The oracle for a change that must not change an answer (a refactor, a speed
change, a smaller knowledge base; docs/performance.md). Both binaries answer
with their own embedded KB (a new KB schema is compared through what kbq
prints, never through the file). What is compared, per class:

  questions  every question of tests/questions.tsv, one process each, as text,
             Markdown, JSON, text with --explain, and JSON with --limit 1 and
             --limit 10, in its own language and with --lang of every other
  argv       every argument list of tests/golden/answers/*.test and
             tests/bad-queries/*.test (their `arg:` lines)
  lists      rules, pitfalls and sources in every language and format; `kbq
             perf` of every model NVIDIA measured (and of a name it did not),
             with and without --history, in every language and format
  show       `kbq show` of every recipe name the KB exports, as text, Markdown
             and JSON (the language turns with the name)
  check      `kbq check` of every name: on its own GPU count, on 8 GPUs with
             TP 2, on 16 A100s with PP 2 and a 16K sequence, and with an
             override of the wrong type; text and JSON
  finder     the documentation site's recipe finder: every question of its
             grid (generated/site/finder.json: models x modes x GPU counts x
             GPU types) through --batch in each of its languages, as whole
             records and with the site's --select (site/build.py SELECT: a
             record built from the parts its pointers read), and the site's
             example questions (generated/site/answers/index.json)
  generated  N questions drawn with a fixed seed from the KB's own lexicon
             (modes, models, sizes, GPU counts and units, hardware, intents,
             sequences, precisions, filters, stopwords and stray words in
             four languages), through --batch with --limit 1, 3 and 10 and
             with --explain; the first 300 also one process each as Markdown
  generate   `kbc generate` of kb-sources with each kbc (--old-kbc/--new-kbc):
             the generated documents, which call the engine for every recipe

Each case compares stdout, stderr and the exit code. For a change that adds
to the JSON answer on purpose, --drop-json-key KEY (repeatable) removes that
key wherever it occurs in either side's JSON (a whole JSON output or JSON
Lines) and --any-schema-version ignores the schema_version values, so the
rest of every answer must still be byte for byte the same. Prints, per class, the
count of cases and of answers compared and the differences (the first few
in full); exits 1 if any differ. --cache DIR keeps the old binary's outputs
(keyed by the binary's SHA-256 and the case), so a second comparison runs
only the new one. Python 3 standard library only.
"""

import argparse
import concurrent.futures
import difflib
import hashlib
import json
import os
import pathlib
import random
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
FORMATS = ["text", "markdown", "json"]
LANGS = ["en", "fr", "ja", "zh"]


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def run(binary, args, stdin=b""):
    env = dict(os.environ, NO_COLOR="1", LC_ALL="C.UTF-8")
    p = subprocess.run([binary] + args, input=stdin, capture_output=True, env=env, timeout=600)
    return {"rc": p.returncode, "out": p.stdout.decode("utf-8", "replace"), "err": p.stderr.decode("utf-8", "replace")}


# --- the cases ---------------------------------------------------------------------------
# A case is (class, name, args, stdin, answers): `answers` counts the answers it holds
# (a --batch case holds one per line).

def questions_tsv():
    out = []
    for line in (ROOT / "tests" / "questions.tsv").read_text(encoding="utf-8").splitlines():
        if not line or line.startswith("#") or line.startswith("question\t"):
            continue
        out.append(line.split("\t")[0])
    return out


def case_questions():
    cases = []
    for q in questions_tsv():
        variants = [["--format", f] for f in FORMATS] + [["--explain"], ["--format", "json", "--limit", "1"],
                                                          ["--format", "json", "--limit", "10"]]
        variants += [["--lang", l] for l in LANGS]
        for v in variants:
            cases.append(("questions", f"{q!r} {' '.join(v)}", v + [q], b"", 1))
    return cases


def case_argv():
    cases = []
    for folder in ("tests/golden/answers", "tests/bad-queries"):
        for f in sorted((ROOT / folder).glob("*.test")):
            args, ok = [], True
            for line in f.read_text(encoding="utf-8").splitlines():
                if line.startswith("--- "):
                    break
                if line.startswith("arg: "):
                    args.append(line[5:])
                elif line.startswith(("arg-bytes:", "batch:", "via:", "kbq:")):
                    ok = False  # run by the test itself (bytes argv cannot carry, stdin, another program)
            if ok and args:
                cases.append(("argv", f"{folder}/{f.name}", args, b"", 1))
    return cases


def case_lists(kb_path):
    cases = []
    for sub in ("rules", "pitfalls", "sources"):
        for lang in LANGS:
            for f in FORMATS:
                cases.append(("lists", f"{sub} {lang} {f}", [sub, "--format", f, "--lang", lang], b"", 1))
    p = subprocess.run(["sqlite3", "-readonly", kb_path, "SELECT DISTINCT model_key FROM perf_rows ORDER BY model_key"],
                       capture_output=True, text=True, check=True)
    for model in [m for m in p.stdout.splitlines() if m] + ["no_such_model"]:
        for history in ([], ["--history"]):
            for lang in LANGS:
                for f in FORMATS:
                    args = ["perf", model, *history, "--format", f, "--lang", lang]
                    cases.append(("lists", " ".join(args), args, b"", 1))
    return cases


def recipe_names(kb_path):
    """Every recipe name the old KB exports (read with the sqlite3 shell)."""
    names = set()
    p = subprocess.run(["sqlite3", "-readonly", kb_path, "SELECT DISTINCT name FROM recipes ORDER BY name"],
                       capture_output=True, text=True, check=True)
    names.update(x for x in p.stdout.splitlines() if x)
    return sorted(names)


def case_show(names):
    cases = []
    for i, name in enumerate(names):
        lang = LANGS[i % len(LANGS)]
        for f in FORMATS:
            cases.append(("show", f"show {name} {f} {lang}", ["show", name, "--format", f, "--lang", lang], b"", 1))
    cases.append(("show", "show unknown", ["show", "llama3_8b_pretrain_confg"], b"", 1))
    return cases


def case_check(names, kb_path):
    own = {}
    p = subprocess.run(["sqlite3", "-readonly", "-separator", "\t", kb_path,
                        "SELECT name, coalesce(native_gpus, min_gpus, 1) FROM recipes ORDER BY name"],
                       capture_output=True, text=True, check=True)
    for line in p.stdout.splitlines():
        n, g = line.split("\t")
        own.setdefault(n, g)
    cases = []
    for i, name in enumerate(names):
        lang = LANGS[i % len(LANGS)]
        settings = [
            ["--gpus", own.get(name, "8")],
            ["--gpus", "8", "model.tensor_model_parallel_size=2"],
            ["--gpus", "16", "--hardware", "a100", "model.pipeline_model_parallel_size=2", "dataset.seq_length=16384"],
            ["--gpus", "8", "train.micro_batch_size=two"],
        ]
        for j, s in enumerate(settings):
            for f in ("text", "json"):
                cases.append(("check", f"check {name} #{j} {f}", ["check", name] + s + ["--format", f, "--lang", lang], b"", 1))
    return cases


def grid_questions():
    index = json.loads((ROOT / "generated" / "site" / "finder.json").read_text(encoding="utf-8"))
    qs = []
    for m in index["models"]:
        for mode in m["modes"]:
            for n in index["gpu_counts"]:
                for hw in index["hardware"]:
                    qs.append(index["question"].format(mode=mode, model=m["question"], gpus=n, hardware=hw["key"]))
    return qs, sorted(index["mode_words"])


def batch_cases(klass, name, qs, args, chunk=2000):
    cases = []
    for i in range(0, len(qs), chunk):
        part = qs[i:i + chunk]
        stdin = "".join(q + "\n" for q in part).encode("utf-8")
        cases.append((klass, f"{name} [{i}:{i + len(part)}]", ["--batch"] + args, stdin, len(part)))
    return cases


def case_finder():
    qs, langs = grid_questions()
    cases = []
    sys.path.insert(0, str(ROOT / "site"))
    from build import SELECT  # the parts of a record the site reads
    for lang in langs:
        cases += batch_cases("finder", f"grid --lang {lang}", qs, ["--lang", lang])
        cases += batch_cases("finder", f"grid --lang {lang} --select", qs, ["--lang", lang, "--select", ",".join(SELECT)])
    ex = json.loads((ROOT / "generated" / "site" / "answers" / "index.json").read_text(encoding="utf-8"))
    for lang in langs:
        eq = [e["question"] for e in ex if e["lang"] == lang and "error" not in e]
        if eq:
            cases += batch_cases("finder", f"examples --lang {lang}", eq, ["--lang", lang])
    return cases


def lexicon_words(kb_path):
    p = subprocess.run(["sqlite3", "-readonly", "-separator", "\t", kb_path, "SELECT lang, kind, word, value FROM lexicon ORDER BY 1, 2, 3"],
                       capture_output=True, text=True, check=True)
    words = {}
    for line in p.stdout.splitlines():
        parts = line.split("\t")
        if len(parts) != 4:
            continue
        lang, kind, word, _ = parts
        words.setdefault(kind, {}).setdefault(lang, []).append(word)
    p = subprocess.run(["sqlite3", "-readonly", kb_path, "SELECT DISTINCT name FROM recipes"], capture_output=True, text=True, check=True)
    sizes = set()
    for name in p.stdout.split():
        for tok in name.split("_"):
            if tok[:1].isdigit() and tok[-1:] in "bm" and len(tok) <= 6:
                sizes.add(tok)
    return words, sorted(sizes)


def generated_questions(kb_path, n, seed=19):
    words, sizes = lexicon_words(kb_path)
    rnd = random.Random(seed)

    def pick(kind, lang):
        pool = words.get(kind, {}).get(lang, []) + words.get(kind, {}).get("*", [])
        return rnd.choice(pool) if pool else ""

    out = []
    for _ in range(n):
        lang = rnd.choice(LANGS)
        terms = []
        if rnd.random() < 0.75:
            terms.append(pick("mode", lang))
        if rnd.random() < 0.7:
            terms.append(pick("model", lang))
            if rnd.random() < 0.5:
                terms.append(rnd.choice(sizes))
        elif rnd.random() < 0.15:
            terms.append(rnd.choice(sizes))
        r = rnd.random()
        if r < 0.35:
            unit = pick("gpu_unit", lang) or "gpus"
            terms.append(f"{rnd.choice([1, 2, 4, 8, 16, 24, 32, 64, 128, 256, 512, 1024])} {unit}")
        elif r < 0.5:
            unit = pick("node_unit", lang) or "nodes"
            terms.append(f"{rnd.choice([1, 2, 4, 8, 16, 32])} {unit}")
        elif r < 0.6:
            terms.append(f"{rnd.choice([1, 2, 8, 16, 64])}×{pick('hardware', lang) or 'h100'}")
        if rnd.random() < 0.25:
            terms.append(pick("hardware", lang))
        if rnd.random() < 0.35:
            terms.append(pick("intent", lang))
        if rnd.random() < 0.2:
            unit = pick("seq_unit", lang) or "sequence"
            terms.append(f"{rnd.choice(['4k', '8K', '16k', '32K', '64k', '128k', '4096', '1m'])} {unit}")
        if rnd.random() < 0.1:
            terms.append(pick("precision", lang))
        if rnd.random() < 0.1:
            terms.append(pick("scale", lang))
        if rnd.random() < 0.1:
            terms.append(rnd.choice(["tp:2", "pp:4", "cp:2", "ep:8", "family:qwen", "family:llama3", "kind:benchmark",
                                     "hardware:a100", "dataset:squad", "gpus:16", "mode:sft", "tp:3"]))
        if rnd.random() < 0.15:
            terms.append(pick("stopword", lang))
        if rnd.random() < 0.07:
            terms.append(rnd.choice(["mistral", "falcon 40b", "vl", "thinking", "instruct", "foo", "llama 4", "8x7b"]))
        rnd.shuffle(terms)
        q = " ".join(t for t in terms if t)
        if q:
            out.append(q)
    return out


def case_generated(kb_path, n):
    qs = generated_questions(kb_path, n)
    cases = []
    for args, tag in ((["--limit", "3"], "limit 3"), (["--limit", "1"], "limit 1"), (["--limit", "10"], "limit 10"),
                      (["--explain"], "explain")):
        cases += batch_cases("generated", f"generated {tag}", qs, args)
    for q in qs[:300]:
        cases.append(("generated", f"{q!r} markdown", ["--format", "markdown", q], b"", 1))
    return cases


# --- running and comparing -------------------------------------------------------------

def case_key(c):
    return hashlib.sha256(json.dumps([c[0], c[1], c[2], c[3].decode("utf-8", "replace")]).encode()).hexdigest()


def run_all(binary, cases, jobs, cache=None):
    results = [None] * len(cases)
    todo = []
    for i, c in enumerate(cases):
        if cache is not None and case_key(c) in cache:
            results[i] = cache[case_key(c)]
        else:
            todo.append(i)
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        for i, r in zip(todo, pool.map(lambda i: run(binary, cases[i][2], cases[i][3]), todo)):
            results[i] = r
            if cache is not None:
                cache[case_key(cases[i])] = r
    return results


def normalise(result, drop, any_version):
    """The result with the given JSON keys removed (and schema_version blanked)."""
    if not drop and not any_version:
        return result

    def walk(x):
        if isinstance(x, dict):
            return {k: (0 if k == "schema_version" and any_version else walk(v)) for k, v in x.items() if k not in drop}
        if isinstance(x, list):
            return [walk(v) for v in x]
        return x

    def fix(text):
        try:
            return json.dumps(walk(json.loads(text)), ensure_ascii=False)
        except ValueError:
            pass
        lines = text.splitlines()
        try:
            return "\n".join(json.dumps(walk(json.loads(l)), ensure_ascii=False) for l in lines)
        except ValueError:
            return text

    return {"rc": result["rc"], "out": fix(result["out"]), "err": fix(result["err"])}


def show_diff(name, old, new):
    print(f"DIFF {name}")
    if old["rc"] != new["rc"]:
        print(f"  exit {old['rc']} -> {new['rc']}")
    for stream in ("out", "err"):
        if old[stream] != new[stream]:
            d = difflib.unified_diff(old[stream].splitlines(), new[stream].splitlines(), "old", "new", lineterm="", n=1)
            for k, line in enumerate(d):
                if k > 40:
                    print("  ...")
                    break
                print("  " + line[:300])


def compare_generate(old_kbc, new_kbc):
    with tempfile.TemporaryDirectory() as tmp:
        outs = []
        for tag, kbc in (("old", old_kbc), ("new", new_kbc)):
            out = pathlib.Path(tmp) / tag
            p = subprocess.run([kbc, "generate", "--sources", str(ROOT / "kb-sources"), "-o", str(out)], capture_output=True, text=True)
            if p.returncode != 0:
                print(f"generate: {tag} kbc failed: {p.stderr[:500]}")
                return 0, 1
            outs.append(out)
        files = sorted({f.relative_to(o) for o in outs for f in o.rglob("*") if f.is_file()})
        differ = 0
        for f in files:
            a, b = outs[0] / f, outs[1] / f
            if not a.exists() or not b.exists() or a.read_bytes() != b.read_bytes():
                differ += 1
                if differ <= 5:
                    print(f"DIFF generate {f}")
                    if a.exists() and b.exists():
                        d = difflib.unified_diff(a.read_text(errors="replace").splitlines(), b.read_text(errors="replace").splitlines(),
                                                 "old", "new", lineterm="", n=1)
                        for k, line in enumerate(d):
                            if k > 30:
                                break
                            print("  " + line[:300])
        return len(files), differ


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old_kbq")
    ap.add_argument("new_kbq")
    ap.add_argument("--old-kb", help="the old build's KB file (for the recipe names and the lexicon); default build dir of OLD_KBQ")
    ap.add_argument("--generated", type=int, default=3000)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--cache", help="folder keeping the old binary's outputs between runs")
    ap.add_argument("--only", nargs="*", help="classes to compare (default: all)")
    ap.add_argument("--old-kbc")
    ap.add_argument("--new-kbc")
    ap.add_argument("--show", type=int, default=5, help="differences printed in full per class")
    ap.add_argument("--drop-json-key", action="append", default=[], help="a JSON key added on purpose: removed before comparing")
    ap.add_argument("--any-schema-version", action="store_true", help="ignore the JSON outputs' schema_version values")
    a = ap.parse_args()
    old_kb = a.old_kb or str(pathlib.Path(a.old_kbq).resolve().parent / "kb.sqlite")
    want = set(a.only or ["questions", "argv", "lists", "show", "check", "finder", "generated", "generate"])
    cases = []
    if "questions" in want:
        cases += case_questions()
    if "argv" in want:
        cases += case_argv()
    if "lists" in want:
        cases += case_lists(old_kb)
    if want & {"show", "check"}:
        names = recipe_names(old_kb)
        if "show" in want:
            cases += case_show(names)
        if "check" in want:
            cases += case_check(names, old_kb)
    if "finder" in want:
        cases += case_finder()
    if "generated" in want:
        cases += case_generated(old_kb, a.generated)

    cache, cache_file = None, None
    if a.cache:
        pathlib.Path(a.cache).mkdir(parents=True, exist_ok=True)
        cache_file = pathlib.Path(a.cache) / (sha256_file(a.old_kbq)[:16] + ".json")
        cache = json.loads(cache_file.read_text()) if cache_file.exists() else {}
    old = run_all(a.old_kbq, cases, a.jobs, cache)
    if cache_file:
        tmp = cache_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(cache))
        tmp.replace(cache_file)
    new = run_all(a.new_kbq, cases, a.jobs)

    per = {}
    shown = {}
    total_diff = 0
    drop = set(a.drop_json_key)
    for c, o, n in zip(cases, old, new):
        if o != n and (drop or a.any_schema_version):
            o, n = normalise(o, drop, a.any_schema_version), normalise(n, drop, a.any_schema_version)
        st = per.setdefault(c[0], [0, 0, 0])
        st[0] += 1
        st[1] += c[4]
        if o != n:
            st[2] += 1
            total_diff += 1
            shown[c[0]] = shown.get(c[0], 0) + 1
            if shown[c[0]] <= a.show:
                show_diff(f"{c[0]}: {c[1]}", o, n)
    print(f"{'class':10} {'cases':>7} {'answers':>8} {'differ':>7}")
    for k in ["questions", "argv", "lists", "show", "check", "finder", "generated"]:
        if k in per:
            print(f"{k:10} {per[k][0]:7d} {per[k][1]:8d} {per[k][2]:7d}")
    tc, ta = sum(v[0] for v in per.values()), sum(v[1] for v in per.values())
    print(f"{'all':10} {tc:7d} {ta:8d} {total_diff:7d}")
    if "generate" in want and a.old_kbc and a.new_kbc:
        files, differ = compare_generate(a.old_kbc, a.new_kbc)
        print(f"kbc generate: {files} files, {differ} differ")
        total_diff += differ
    return 1 if total_diff else 0


if __name__ == "__main__":
    sys.exit(main())
