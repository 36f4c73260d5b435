#!/usr/bin/python3
"""Builds the documentation site (docs/site.md): one Sphinx + MyST build
per language from generated/ with -W, then the recipe finder's answers,
computed by kbq itself (`kbq --batch --lang L`), one file per model.

usage: site/build.py --kbq build/kbq --src generated --out build/site [--jobs 2]
"""
import argparse
import concurrent.futures
import json
import os
import pathlib
import shutil
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent


def trim(rec):
    """What the finder shows of one kbq --batch record: kbq's own fields."""
    a = rec["answer"]
    out = {"question": rec["question"], "exit": rec["exit"], "text": rec.get("text", "")}
    if rec["exit"] == 2:
        out["error"] = a.get("error", "")
        return out
    out["verdict"] = a["verdict"]
    out["no_match"] = a.get("no_match")
    out["min_gpus"] = a.get("min_gpus")
    out["warnings"] = a.get("warnings", [])
    if a["results"]:
        top = a["results"][0]
        lay = top["layout"]
        out["recipe"] = top["recipe"]
        out["layout"] = {k: lay[k] for k in ("gpus", "nodes", "hardware", "tp", "pp", "cp", "ep", "dp")}
        out["memory_gib"] = top["memory"].get("per_gpu_gib")
        out["command"] = top["command"]
        out["caveats"] = top.get("caveats", [])
    return out


def questions(index):
    for m in index["models"]:
        for mode in m["modes"]:
            for n in index["gpu_counts"]:
                for hw in index["hardware"]:
                    q = index["question"].format(mode=mode, model=m["question"], gpus=n, hardware=hw["key"])
                    yield m["key"], q


def batch(kbq, lang, qs):
    p = subprocess.run([kbq, "--batch", "--lang", lang], input="".join(q + "\n" for q in qs),
                       capture_output=True, text=True, check=True)
    return [json.loads(line) for line in p.stdout.splitlines()]


def build_lang(args, lang, index, examples):
    t0 = time.monotonic()
    out = pathlib.Path(args.out) / lang
    if out.exists():
        shutil.rmtree(out)
    env = dict(os.environ, KBQ_SITE_LANG=lang, KBQ_SITE_SRC=str(pathlib.Path(args.src).resolve()),
               KBQ_SITE_LANGS=" ".join(sorted(index["mode_words"])))
    cmd = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", "-c", str(HERE),
           "-d", str(pathlib.Path(args.out) / ".doctrees" / lang), args.src, str(out)]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        return lang, f"sphinx-build ({lang}) failed:\n{p.stderr}{p.stdout}", 0
    t_sphinx = time.monotonic() - t0
    # The finder's answers: kbq's, per model.
    fdir = out / "_static" / "finder"
    fdir.mkdir(parents=True, exist_ok=True)
    pairs = list(questions(index))
    recs = batch(args.kbq, lang, [q for _, q in pairs])
    per_model = {}
    for (key, q), rec in zip(pairs, recs):
        assert rec["question"] == q, (rec["question"], q)
        per_model.setdefault(key, {})[q] = trim(rec)
    for key, answers in per_model.items():
        (fdir / (key + ".json")).write_text(json.dumps(answers, ensure_ascii=False, sort_keys=True), encoding="utf-8")
    (fdir / "index.json").write_text(json.dumps(index, ensure_ascii=False), encoding="utf-8")
    ex = [e["question"] for e in examples if e["lang"] == lang and "error" not in e]
    ex_recs = batch(args.kbq, lang, ex) if ex else []
    (fdir / "examples.json").write_text(json.dumps([trim(r) for r in ex_recs], ensure_ascii=False), encoding="utf-8")
    return lang, None, (t_sphinx, time.monotonic() - t0, len(pairs))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kbq", required=True)
    ap.add_argument("--src", default="generated")
    ap.add_argument("--out", default="build/site")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--langs", nargs="*")
    args = ap.parse_args()
    index = json.loads((pathlib.Path(args.src) / "site" / "finder.json").read_text(encoding="utf-8"))
    examples = json.loads((pathlib.Path(args.src) / "site" / "answers" / "index.json").read_text(encoding="utf-8"))
    if not args.langs:
        args.langs = sorted(index["mode_words"].keys())
    t0 = time.monotonic()
    failed = False
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for lang, err, figures in pool.map(lambda l: build_lang(args, l, index, examples), args.langs):
            if err:
                print(err, file=sys.stderr)
                failed = True
            else:
                print(f"site: {lang}: sphinx {figures[0]:.1f} s, with the finder's {figures[2]} answers {figures[1]:.1f} s")
    if failed:
        return 1
    size = sum(f.stat().st_size for l in args.langs for f in (pathlib.Path(args.out) / l).rglob("*") if f.is_file())
    pages = sum(1 for l in args.langs for _ in (pathlib.Path(args.out) / l).rglob("*.html"))
    print(f"site: {len(args.langs)} languages, {pages} HTML pages, {size / 1e6:.1f} MB, {time.monotonic() - t0:.1f} s -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
