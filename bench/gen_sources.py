#!/usr/bin/env python3
"""Synthetic kb-sources for the scale benchmark (bench/run.sh).

Writes a sources tree with SCALE times the recipes and documents of the
real kb-sources/: the real editions and data tables unchanged (so the
benchmark queries keep their answers), plus SCALE - 1 synthetic "units".
A unit is one document (front matter `name: synth-index-<k>`) in five
editions, like the real skill: fr rev 1, zh rev 2, en rev 2 (translated
from zh), ja rev 3, en rev 3 (translated from ja). Each edition holds the
unit's recipe tables under the library-index heading of its language, one
table per family (families aligned by position across languages), as many
recipes as the real KB has (145 by default). Older revisions state other
values for every 7th recipe (TP) and every 11th (GPUs), so the compiler
resolves and reports real conflicts.

Every word comes from kb-sources/data: headings (sections.tsv), table
headers (columns.tsv), cell words (cells.tsv). Recipe names use synthetic
model prefixes (`synm<k>f<family>_...`) that no lexicon word names, so a
query about a real model touches the same candidates at every scale; a few
families per unit borrow a real model key (models.tsv) so that name
lookups and model facts are exercised too.

--code-scale M multiplies the recipes kbq answers from: those the newest
Megatron Bridge snapshot exports (kb-sources/code/<commit>/). Each of the
M - 1 copies holds every exported name of that snapshot (recipes.tsv) and
every function's facts (recipe-facts.tsv), renamed `syn<c>_<name>`
(module `...syn<c>_<function>`), with their model and family columns and
their Hugging Face id marked as the copy's own, so they load no real
model: a question naming a real model has the same candidates at every
code scale, one naming none has M times as many. snapshot.tsv's counts
follow. (The documents' recipes above are not the ones kbq plans.)

Usage: gen_sources.py --scale N --out DIR [--code-scale M] [--sources kb-sources] [--recipes 145]
Python 3 standard library only; deterministic (same arguments, same bytes).
"""

import argparse
import os
import shutil
import sys

LANGS_BY_EDITION = [  # (lang, revision, translated-from)
    ("fr", 1, None),
    ("zh", 2, None),
    ("en", 2, "zh"),
    ("ja", 3, None),
    ("en", 3, "ja"),
]
MODES = ["pretrain", "sft", "peft"]
FAMILY_SIZE = 12  # recipes per family table


def read_tsv(path):
    """Rows of a kb-sources data table as dicts (comments skipped)."""
    header, rows = None, []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n").rstrip("\r")
            if not line or line.startswith("#"):
                continue
            cells = line.split("\t")
            if header is None:
                header = cells
                continue
            rows.append(dict(zip(header, cells)))
    return rows


class Vocabulary:
    """The words a synthetic edition is written with, per language."""

    def __init__(self, data_dir):
        sections = read_tsv(os.path.join(data_dir, "sections.tsv"))
        columns = read_tsv(os.path.join(data_dir, "columns.tsv"))
        cells = read_tsv(os.path.join(data_dir, "cells.tsv"))
        models = read_tsv(os.path.join(data_dir, "models.tsv"))
        self.index_heading = {}
        for r in sections:
            if r["kind"] == "library_index":
                self.index_heading.setdefault(r["lang"], r["heading"])
        self.header = {}  # (lang, field) -> header text
        for r in columns:
            self.header.setdefault((r["lang"], r["field"]), r["header"])
        self.mode_word = {}  # (lang, mode) -> cell word
        self.none_word = "—"
        self.sp_word = "✓"
        for r in cells:
            if r["field"] == "mode" and r.get("value") in MODES:
                self.mode_word.setdefault((r["lang"], r["value"]), r["word"])
            if r["field"] == "*" and r.get("value") == "none" and r["lang"] == "*":
                self.none_word = r["word"]
            if r["field"] == "sp" and r["lang"] == "*":
                self.sp_word = r["word"]
        self.model_keys = sorted({r["model_key"] for r in models if r.get("model_key")})

    def heading(self, lang):
        return self.index_heading.get(lang, self.index_heading["en"])

    def col(self, lang, field, default):
        for l in (lang, "en", "*"):
            if (l, field) in self.header:
                return self.header[(l, field)]
        return default

    def mode(self, lang, mode):
        for l in (lang, "*", "en"):
            if (l, mode) in self.mode_word:
                return self.mode_word[(l, mode)]
        return {"pretrain": "Pretrain", "sft": "SFT", "peft": "PEFT"}[mode]


def unit_recipes(k, count, vocab):
    """The recipes of unit k: (family title, [(name, mode, tp, pp, cp, sp, gpus, seq_k)])."""
    families = []
    n_fam = max(1, (count + FAMILY_SIZE - 1) // FAMILY_SIZE)
    made = 0
    for f in range(n_fam):
        title = f"SynFamily {k}-{f + 1}"
        # Every fourth family borrows a real model key, so names resolve to models.tsv.
        if f % 4 == 3 and vocab.model_keys:
            prefix = f"{vocab.model_keys[(k * 7 + f) % len(vocab.model_keys)]}_syn{k}f{f + 1}"
        else:
            prefix = f"synm{k}f{f + 1}"
        rows = []
        for j in range(min(FAMILY_SIZE, count - made)):
            mode = MODES[j % 3]
            size = [1, 2, 4, 8][(j // 3) % 4]
            name = f"{prefix}_{size}b_v{j // 12}_{mode}_config" if j >= 12 else f"{prefix}_{size}b_{mode}_config"
            tp = [1, 2, 4, 8][(j + f) % 4]
            pp = [1, 1, 2, 4][(j + k) % 4]
            cp = [None, None, 2, 4][(j * 3 + f) % 4]
            gpus = tp * pp * (cp or 1)
            rows.append((name, mode, tp, pp, cp, (tp > 1), gpus, [4, 8, 16, 32][(j + f + k) % 4]))
        made += len(rows)
        families.append((title, rows))
    return families


def edition_text(k, lang, rev, tfrom, families, vocab):
    out = ["---", f"name: synth-index-{k}", f"lang: {lang}", f"revision: {rev}"]
    if tfrom:
        out.append(f"translated-from: {tfrom}")
    out += ["---", "", f"# Synthetic recipe index {k}", "", f"## {vocab.heading(lang)}", ""]
    out.append(f"Synthetic unit {k}, revision {rev}: generated by bench/gen_sources.py for the scale benchmark.")
    out.append("")
    cols = [
        vocab.col(lang, "recipe", "Recipe"),
        vocab.col(lang, "mode", "Mode"),
        "TP", "PP", "CP", "SP",
        vocab.col(lang, "min_gpus", "GPUs (min)"),
        vocab.col(lang, "seq_len", "Seq Len"),
    ]
    for title, rows in families:
        out += [f"### {title}", "", "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        for i, (name, mode, tp, pp, cp, sp, gpus, seq_k) in enumerate(rows):
            # Older revisions disagree on some values; the newest revision wins.
            if rev < 3 and i % 7 == 3:
                tp = max(1, tp // 2) if tp > 1 else 2
            if rev < 3 and i % 11 == 5:
                gpus = gpus * 2
            cells = [name, vocab.mode(lang, mode), str(tp), str(pp), str(cp) if cp else vocab.none_word,
                     vocab.sp_word if sp else vocab.none_word, str(gpus), f"{seq_k}K"]
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out) + "\n"


def tsv_parts(path):
    """A kb-sources/code table: its comment lines, its header row and its rows (lists of cells)."""
    comments, header, rows = [], None, []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("#"):
                comments.append(line)
            elif header is None:
                header = line.split("\t")
            elif line:
                rows.append(line.split("\t"))
    return comments, header, rows


def write_tsv(path, comments, header, rows):
    with open(path, "w", encoding="utf-8") as f:
        f.write("".join(c + "\n" for c in comments))
        f.write("\t".join(header) + "\n")
        f.write("".join("\t".join(r) + "\n" for r in sorted(rows)))


def newest_snapshot(code_dir):
    """The snapshot folder with the latest date (snapshot.tsv), the one kbq answers from."""
    best = None
    for d in sorted(os.listdir(code_dir)):
        path = os.path.join(code_dir, d, "snapshot.tsv")
        if os.path.isfile(path):
            _, _, rows = tsv_parts(path)
            date = dict((r[0], r[1]) for r in rows if len(r) > 1).get("date", "")
            if best is None or date > best[0]:
                best = (date, os.path.join(code_dir, d))
    return best[1] if best else None


def multiply_code(folder, scale):
    """SCALE - 1 renamed copies of the snapshot's exported recipes and their facts."""
    syn = lambda k, v: f"syn{k}_{v}" if v else v
    fn = lambda k, t: t[: t.rfind(".") + 1] + syn(k, t[t.rfind(".") + 1:])
    rc, rh, rrows = tsv_parts(os.path.join(folder, "recipes.tsv"))
    fc, fh, frows = tsv_parts(os.path.join(folder, "recipe-facts.tsv"))
    col = {n: i for i, n in enumerate(rh)}
    fcol = {n: i for i, n in enumerate(fh)}
    out_r, out_f = list(rrows), list(frows)
    for k in range(1, scale):
        for r in rrows:
            c = list(r) + [""] * (len(rh) - len(r))
            for name in ("name", "alias_of", "model", "family"):
                c[col[name]] = syn(k, c[col[name]])
            c[col["target"]] = fn(k, c[col["target"]])
            out_r.append(c)
        for r in frows:
            c = list(r) + [""] * (len(fh) - len(r))
            c[fcol["target"]] = fn(k, c[fcol["target"]])
            if c[fcol["field"]] == "hf_id" and c[fcol["value"]]:
                c[fcol["value"]] = f"synthetic-{k}/" + c[fcol["value"]].replace("/", "-")
            out_f.append(c)
    write_tsv(os.path.join(folder, "recipes.tsv"), rc, rh, out_r)
    write_tsv(os.path.join(folder, "recipe-facts.tsv"), fc, fh, out_f)
    sc, sh, srows = tsv_parts(os.path.join(folder, "snapshot.tsv"))
    for r in srows:
        if r[0] in ("names.benchmark", "names.library", "names.total", "targets"):
            r[1] = str(int(r[1]) * scale)
    write_tsv(os.path.join(folder, "snapshot.tsv"), sc, sh, srows)
    return len(out_r) - len(rrows)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", type=int, required=True, help="1 = the real sources only")
    ap.add_argument("--out", required=True, help="folder to write (replaced)")
    ap.add_argument("--sources", default="kb-sources", help="the real sources (default kb-sources)")
    ap.add_argument("--code-scale", type=int, default=1, help="copies of the code's exported recipes (default 1: as they are)")
    ap.add_argument("--recipes", type=int, default=145, help="recipes per synthetic unit (default: the real KB's 145)")
    a = ap.parse_args()
    if a.scale < 1 or a.code_scale < 1:
        sys.exit("gen_sources.py: --scale and --code-scale must be at least 1")
    if os.path.exists(a.out):
        shutil.rmtree(a.out)
    shutil.copytree(a.sources, a.out)
    vocab = Vocabulary(os.path.join(a.sources, "data"))
    docs = 0
    for k in range(1, a.scale):
        families = unit_recipes(k, a.recipes, vocab)
        folder = os.path.join(a.out, "references", "synth", f"u{k:05d}")
        os.makedirs(folder, exist_ok=True)
        for lang, rev, tfrom in LANGS_BY_EDITION:
            path = os.path.join(folder, f"index.r{rev}.{lang}.md")
            with open(path, "w", encoding="utf-8") as f:
                f.write(edition_text(k, lang, rev, tfrom, families, vocab))
            docs += 1
    code = newest_snapshot(os.path.join(a.out, "code")) if os.path.isdir(os.path.join(a.out, "code")) else None
    names = multiply_code(code, a.code_scale) if code and a.code_scale > 1 else 0
    print(f"gen_sources.py: scale {a.scale}: {a.out}: {docs} synthetic editions, "
          f"{(a.scale - 1) * a.recipes} synthetic document recipes, {names} synthetic exported recipe names", file=sys.stderr)


if __name__ == "__main__":
    main()
