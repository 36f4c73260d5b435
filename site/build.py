#!/usr/bin/python3
"""Builds the documentation site (docs/site.md): one Sphinx + MyST build
per language from generated/ with -W, then the recipe finder's answers,
computed by kbq itself (`kbq --batch --lang L`), one file per model.

usage: site/build.py --kbq build/kbq --src generated --out build/site [--jobs 2]
"""
import argparse
import concurrent.futures
import hashlib
import html
import json
import os
import pathlib
import shutil
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent


# The parts of a kbq --batch record the finder reads (trim below), as
# kbq --select's JSON Pointers: kbq writes only these, a tenth of a record.
TOP = "/answer/results/0/"
SELECT = ["/question", "/exit", "/text", "/answer/error", "/answer/verdict", "/answer/no_match", "/answer/min_gpus",
          "/answer/warnings", "/answer/alternatives"] + [TOP + k for k in (
              "recipe", "model", "mode", "layout", "memory/per_gpu_gib", "command", "caveats", "throughput")]


def trim(rec, pages=None, lang="en"):
    """What the finder shows of one kbq --batch record: kbq's own fields, and
    the link to the recipe's page (relative to the finder's page) when the
    site has one."""
    a = rec["answer"]
    out = {"question": rec["question"], "exit": rec["exit"], "text": rec.get("text", "")}
    if rec["exit"] == 2:
        out["error"] = a.get("error", "")
        return out
    out["verdict"] = a["verdict"]
    out["no_match"] = a.get("no_match")
    out["min_gpus"] = a.get("min_gpus")
    out["warnings"] = a.get("warnings", [])
    if a.get("results"):
        top = a["results"][0]
        lay = top["layout"]
        out["recipe"] = top["recipe"]
        out["model"] = top.get("model", "")
        out["mode"] = top.get("mode", "")
        if pages is not None and top["recipe"] in pages:
            out["page"] = "recipes/" + top["recipe"] + ("" if lang == "en" else "." + lang) + ".html"
        out["layout"] = {k: lay[k] for k in ("gpus", "nodes", "hardware", "tp", "pp", "cp", "ep", "dp")}
        out["memory_gib"] = top.get("memory", {}).get("per_gpu_gib")
        out["command"] = top["command"]
        out["caveats"] = top.get("caveats", [])
        # The throughput of the layout (docs/throughput.md), as kbq answers it.
        t = top.get("throughput") or {}
        out["throughput"] = {k: t.get(k) for k in ("basis", "tokens_per_s_per_gpu", "tokens_per_s", "step_time_s", "error_band_pct", "how", "source")}
    out["alternatives"] = [{k: alt.get(k) for k in ("kind", "recipe", "gpus", "hardware", "why")} for alt in a.get("alternatives") or []]
    return out


def alternative_question(alt):
    """The question whose answer is an alternative kbq proposes, in full:
    its recipe by name, on its GPUs."""
    return f"{alt['recipe']} gpus:{alt['gpus']} hardware:{alt['hardware']}"


def attach_works(kbq, lang, trimmed, pages):
    """For every answer that is not possible, the first alternative kbq
    proposes that runs, answered in full by kbq (recipe, layout, memory,
    command), so that the finder leads with what works."""
    need = {}
    for rec in trimmed:
        for alt in rec.get("alternatives", []):
            if alt.get("recipe") and alt.get("gpus"):
                need.setdefault(alternative_question(alt), None)
    qs = list(need)
    for q, r in zip(qs, batch(kbq, lang, qs) if qs else []):
        t = trim(r, pages, lang)
        if t.get("verdict") == "ok" and t.get("recipe"):
            need[q] = t
    for rec in trimmed:
        for alt in rec.get("alternatives", []):
            t = need.get(alternative_question(alt)) if alt.get("recipe") and alt.get("gpus") else None
            if t:
                rec["works"] = {k: v for k, v in t.items() if k not in ("alternatives", "text")}
                rec["works"]["why"] = alt.get("why", "")
                break


def questions(index):
    for m in index["models"]:
        for mode in m["modes"]:
            for n in index["gpu_counts"]:
                for hw in index["hardware"]:
                    q = index["question"].format(mode=mode, model=m["question"], gpus=n, hardware=hw["key"])
                    yield m["key"], q


def batch(kbq, lang, qs):
    p = subprocess.run([kbq, "--batch", "--lang", lang, "--select", ",".join(SELECT)], input="".join(q + "\n" for q in qs),
                       capture_output=True, text=True, check=True)
    return [json.loads(line) for line in p.stdout.splitlines()]


SPHINX_LOCALE = {"zh": "zh_CN"}  # as site/conf.py's language


def po_quote(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def write_catalogs(ui, root):
    """The theme's strings that Sphinx's own catalogs lack, in each language
    (generated/site/ui.json, from data/ui.tsv), as a gettext catalog Sphinx
    compiles and loads before its own (locale_dirs in site/conf.py)."""
    for lang, words in ui.items():
        d = root / SPHINX_LOCALE.get(lang, lang) / "LC_MESSAGES"
        d.mkdir(parents=True, exist_ok=True)
        lines = ['msgid ""', 'msgstr ""', '"Content-Type: text/plain; charset=UTF-8\\n"', ""]
        for en, text in sorted(words["catalog"].items()):
            # The theme writes some strings with a trailing space ("Made with ").
            for a, b in ((en, text), (en + " ", text + " ")):
                lines += ["msgid " + po_quote(a), "msgstr " + po_quote(b), ""]
        (d / "sphinx.po").write_text("\n".join(lines), encoding="utf-8")


def write_landing(ui, langs, out):
    """The site's root page: what kbq is, the finder and the recipes, in
    every language (generated/site/ui.json), each linking into its build."""
    parts = []
    for lang in langs:
        w = ui[lang]
        sfx = "" if lang == "en" else "." + lang
        parts.append(
            f'<section lang="{html.escape(lang)}" class="kbq-landing-lang" id="lang-{html.escape(lang)}">\n'
            f'<h2>{html.escape(w["site.name"])} <small>({html.escape(w["name"])})</small></h2>\n<p>{html.escape(w["site.landing.what"])}</p>\n<ul>\n'
            f'<li><a class="kbq-landing-finder" href="{lang}/site/finder{sfx}.html">{html.escape(w["finder.title"])}</a>: '
            f'{html.escape(w["site.landing.finder"])}</li>\n'
            f'<li><a class="kbq-landing-recipes" href="{lang}/site/index{sfx}.html">{html.escape(w["site.landing.recipes"])}</a></li>\n'
            f"</ul>\n</section>")
    page = ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            "<title>kbq</title>\n<style>\n"
            "body { font-family: system-ui, sans-serif; max-width: 46rem; margin: 0 auto; padding: 1rem; line-height: 1.5; }\n"
            "nav { display: flex; flex-wrap: wrap; gap: 0.5rem 1rem; }\n"
            "section { border-top: 1px solid #ddd; padding-top: 0.5rem; }\n"
            "</style>\n</head>\n<body>\n<h1>kbq</h1>\n<nav class=\"kbq-langs\">"
            + "".join(f'<a hreflang="{l}" href="#lang-{l}">{html.escape(ui[l]["name"])}</a>' for l in langs)
            + "</nav>\n" + "\n".join(parts) + "\n</body>\n</html>\n")
    (out / "index.html").write_text(page, encoding="utf-8")


def build_lang(args, lang, index, examples, inputs_hash):
    t0 = time.monotonic()
    out = pathlib.Path(args.out) / lang
    if out.exists():
        shutil.rmtree(out)
    env = dict(os.environ, KBQ_SITE_LANG=lang, KBQ_SITE_SRC=str(pathlib.Path(args.src).resolve()),
               KBQ_SITE_LANGS=" ".join(sorted(index["mode_words"])), KBQ_SITE_LOCALE=str(work_dir(args) / "locale"))
    # The doctrees (Sphinx's cache, ~8 MB per language) stay outside the
    # published folder.
    cmd = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", "-c", str(HERE),
           "-d", str(work_dir(args) / "doctrees" / lang), args.src, str(out)]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        return lang, f"sphinx-build ({lang}) failed:\n{p.stderr}{p.stdout}", 0
    t_sphinx = time.monotonic() - t0
    # The search page's recipe index, this language's part.
    recipes = json.loads((pathlib.Path(args.src) / "site" / "recipe-search.json").read_text(encoding="utf-8"))
    (out / "_static" / "recipe-search.json").write_text(json.dumps(recipes[lang], ensure_ascii=False), encoding="utf-8")
    # The finder's answers: kbq's, per model, or the same files kept from
    # an earlier build with the same inputs (finder_key).
    fdir = out / "_static" / "finder"
    pages = {p.name[: -len(".md")] for p in (pathlib.Path(args.src) / "site" / "recipes").glob("*.md") if p.name.count(".") == 1}
    key = finder_key(inputs_hash, lang, pages)
    kept = work_dir(args) / "finder" / lang
    if not args.no_cache and (kept / key / "complete").exists():
        shutil.copytree(kept / key / "files", fdir, copy_function=link_or_copy)
        return lang, None, (t_sphinx, time.monotonic() - t0, -1)
    fdir.mkdir(parents=True, exist_ok=True)
    answers = write_finder(args, lang, index, examples, pages, fdir)
    if not args.no_cache:
        keep_finder(kept, key, fdir)
    return lang, None, (t_sphinx, time.monotonic() - t0, answers)


def inputs_hash(args):
    """The files every language's finder files are computed from, hashed
    once: the kbq binary (its knowledge base is embedded), this script,
    the grid and the examples (generated/site/finder.json,
    answers/index.json)."""
    h = hashlib.sha256()
    for part in (pathlib.Path(args.kbq), pathlib.Path(__file__), pathlib.Path(args.src) / "site" / "finder.json",
                 pathlib.Path(args.src) / "site" / "answers" / "index.json"):
        data = part.read_bytes()
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


def finder_key(inputs, lang, pages):
    """The key of a language's finder files: the inputs' hash, the
    language and the recipe pages the answers link to."""
    h = hashlib.sha256(inputs.encode("ascii"))
    for part in [lang] + sorted(pages):
        h.update(part.encode("utf-8") + b"\0")
    return h.hexdigest()


def keep_finder(kept, key, fdir):
    """Keeps the finder's files of a language for the next build with the
    same inputs, in place of the ones kept before; `complete` is written
    last, so an interrupted copy is never used."""
    if kept.exists():
        shutil.rmtree(kept)
    shutil.copytree(fdir, kept / key / "files", copy_function=link_or_copy)
    (kept / key / "complete").write_text("", encoding="utf-8")


def link_or_copy(src, dst):
    """A hard link (the files are written once and never changed in place;
    the next build removes them), else a copy."""
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def write_finder(args, lang, index, examples, pages, fdir):
    """The finder's files of a language, from kbq's answers; returns how
    many questions of the grid it asked."""
    pairs = list(questions(index))
    recs = batch(args.kbq, lang, [q for _, q in pairs])
    trimmed = []
    for (key, q), rec in zip(pairs, recs):
        assert rec["question"] == q, (rec["question"], q)
        trimmed.append(trim(rec, pages, lang))
    attach_works(args.kbq, lang, trimmed, pages)
    per_model = {}
    for (key, q), t in zip(pairs, trimmed):
        per_model.setdefault(key, {})[q] = t
    for key, answers in per_model.items():
        (fdir / (key + ".json")).write_text(json.dumps(answers, ensure_ascii=False, sort_keys=True), encoding="utf-8")
    (fdir / "index.json").write_text(json.dumps(index, ensure_ascii=False), encoding="utf-8")
    ex = [e["question"] for e in examples if e["lang"] == lang and "error" not in e]
    ex_recs = [trim(r, pages, lang) for r in (batch(args.kbq, lang, ex) if ex else [])]
    attach_works(args.kbq, lang, ex_recs, pages)
    (fdir / "examples.json").write_text(json.dumps(ex_recs, ensure_ascii=False), encoding="utf-8")
    return len(pairs)


def work_dir(args):
    """Sphinx's working files, beside the published folder, not in it."""
    out = pathlib.Path(args.out).resolve()
    return out.with_name(out.name + ".work")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kbq", required=True)
    ap.add_argument("--src", default="generated")
    ap.add_argument("--out", default="build/site")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--langs", nargs="*")
    ap.add_argument("--no-cache", action="store_true", help="compute the finder's answers even when an earlier build kept them")
    args = ap.parse_args()
    index = json.loads((pathlib.Path(args.src) / "site" / "finder.json").read_text(encoding="utf-8"))
    examples = json.loads((pathlib.Path(args.src) / "site" / "answers" / "index.json").read_text(encoding="utf-8"))
    if not args.langs:
        args.langs = sorted(index["mode_words"].keys())
    ui = json.loads((pathlib.Path(args.src) / "site" / "ui.json").read_text(encoding="utf-8"))
    t0 = time.monotonic()
    old = pathlib.Path(args.out) / ".doctrees"
    if old.exists():
        shutil.rmtree(old)
    write_catalogs(ui, work_dir(args) / "locale")
    failed = False
    # Processes, not threads: each language's finder parses and writes its
    # answers in Python (json), which threads would take turns at.
    with concurrent.futures.ProcessPoolExecutor(max_workers=args.jobs) as pool:
        inputs = inputs_hash(args)
        n = len(args.langs)
        for lang, err, figures in pool.map(build_lang, [args] * n, args.langs, [index] * n, [examples] * n, [inputs] * n):
            if err:
                print(err, file=sys.stderr)
                failed = True
            else:
                how = f"the finder's {figures[2]} answers" if figures[2] >= 0 else "the finder's answers kept from an earlier build"
                print(f"site: {lang}: sphinx {figures[0]:.1f} s, with {how} {figures[1]:.1f} s")
    if failed:
        return 1
    write_landing(ui, args.langs, pathlib.Path(args.out))
    size = sum(f.stat().st_size for l in args.langs for f in (pathlib.Path(args.out) / l).rglob("*") if f.is_file())
    pages = sum(1 for l in args.langs for _ in (pathlib.Path(args.out) / l).rglob("*.html"))
    print(f"site: {len(args.langs)} languages, {pages} HTML pages, {size / 1e6:.1f} MB, {time.monotonic() - t0:.1f} s -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
