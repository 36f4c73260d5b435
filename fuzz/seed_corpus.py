#!/usr/bin/env python3
"""Seed corpora and dictionaries of the libFuzzer targets (fuzz/*.cpp).

Writes, under OUT:
  dsl/            queries: the golden queries (tests/golden), the malformed
                  queries (tests/bad-queries, capped at 64 KiB), the DSL test
                  table (tests/test_dsl.cpp), lexicon phrases
  markdown/       every *.md of kb-sources/ and tests/fixtures/ (bad and good);
                  the editions kept as published (kb-sources/upstream, revision 4)
                  and the issue-11 fixtures also with lang and revision written
                  into their front matter, as data/editions.tsv gives them
  text_export/    the seed text exports (../shared/seeds/*.txt, when present)
                  and the text-export fixtures, each prefixed with the byte
                  that picks its edition (fuzz_text_export.cpp)
  kb/             mutation lists of fuzz_kb.cpp: no mutation (small and full
                  KB), one value or page mutation of each kind, a few mixes
  dsl.dict        lexicon words and DSL punctuation (libFuzzer -dict)
  markdown.dict   front-matter keys, headings, table headers, cell words
  text_export.dict  the same with tabs, bullets and tree lines
  kb.dict         page-type bytes, varints, extreme integers, SQLite's header
Plus fuzz/regressions/<target>/, inputs that once crashed or broke an
invariant (fixed since), copied in; fuzz/open-bugs/ (findings not fixed
yet, when there are any) is left out.

Usage: seed_corpus.py OUT   (from the repository root; stdlib only)
"""

import hashlib
import os
import re
import shutil
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "kb-sources", "data")
SEEDS = os.path.join(os.path.dirname(ROOT), "shared", "seeds")


def read_tsv(name):
    header, rows = None, []
    with open(os.path.join(DATA, name), encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            cells = line.split("\t")
            if header is None:
                header = cells
            else:
                rows.append(dict(zip(header, cells)))
    return rows


def put(folder, data):
    if isinstance(data, str):
        data = data.encode("utf-8")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, hashlib.sha1(data).hexdigest()), "wb") as f:
        f.write(data)


def dict_entry(word):
    """A libFuzzer dictionary line: "..." with \\xNN for anything unusual."""
    out = []
    for b in word.encode("utf-8"):
        out.append(chr(b) if 0x20 <= b < 0x7F and chr(b) not in '"\\' else "\\x%02X" % b)
    return '"' + "".join(out) + '"'


def decode_arg_bytes(spec):
    """The arg-bytes syntax of tests/bad-queries (tests/test_faults.cpp)."""
    out = bytearray()
    for m in re.finditer(r'"((?:[^"\\]|\\.)*)"(?:\*(\d+))?', spec):
        piece = re.sub(rb"\\x([0-9a-fA-F]{2})", lambda h: bytes([int(h.group(1), 16)]), m.group(1).encode("utf-8"))
        piece = piece.replace(b"\\n", b"\n").replace(b"\\t", b"\t").replace(b"\\r", b"\r").replace(b"\\0", b"\0")
        piece = piece.replace(b'\\"', b'"').replace(b"\\\\", b"\\")
        out += piece * int(m.group(2) or 1)
    return bytes(out)


def dsl(out):
    folder = os.path.join(out, "dsl")
    golden = os.path.join(ROOT, "tests", "golden")
    for dirpath, _, files in os.walk(golden):
        for name in files:
            if not name.endswith(".test"):
                continue
            args = [l[5:].rstrip("\n") for l in open(os.path.join(dirpath, name), encoding="utf-8") if l.startswith("arg: ")]
            for a in args:
                if a and not a.startswith("--") and a not in ("check", "show", "rules", "pitfalls", "sources", "json", "text", "markdown"):
                    put(folder, a)
    bad = os.path.join(ROOT, "tests", "bad-queries")
    if os.path.isdir(bad):
        for name in sorted(os.listdir(bad)):
            for line in open(os.path.join(bad, name), encoding="utf-8", errors="replace"):
                if line.startswith("arg: "):
                    put(folder, line[5:].rstrip("\n"))
                elif line.startswith("arg-bytes: "):
                    data = decode_arg_bytes(line[11:].rstrip("\n"))
                    put(folder, data[:65536])
    test_dsl = os.path.join(ROOT, "tests", "test_dsl.cpp")
    if os.path.exists(test_dsl):
        for m in re.finditer(r'^\s*\{u8?"((?:[^"\\]|\\.)*)",', open(test_dsl, encoding="utf-8").read(), re.M):
            put(folder, m.group(1).encode("utf-8").decode("unicode_escape").encode("latin-1", "ignore") or b" ")
    lexicon = read_tsv("lexicon.tsv")
    words = sorted({r["word"] for r in lexicon if r.get("word")})
    # A few phrases from lexicon words, per language.
    by_lang = {}
    for r in lexicon:
        by_lang.setdefault(r["lang"], []).append(r["word"])
    for lang, ws in sorted(by_lang.items()):
        ws = sorted(set(ws))
        for i in range(0, len(ws), 7):
            put(folder, " ".join(ws[i:i + 4]) + " 8 gpus")
    # The length dimension of fuzz_dsl (0xFF, k, unit: the unit repeated up
    # to 2^(10 + k % 7) bytes): runs without separators, hyphenated runs,
    # unknown CJK, numbers, words and quotes, at 1 KiB to 64 KiB.
    for k, unit in enumerate(["x", "x-", "1-", "漢", "qwen3 ", "8×", "\"a", "tp:", "llama3-8b-", "sft lora ", "é", "zz9"]):
        put(folder, bytes([0xFF, k % 7]) + unit.encode("utf-8"))
    with open(os.path.join(out, "dsl.dict"), "w", encoding="utf-8") as f:
        for w in words + [":", "\"", "×", "x", "*", "-a", "k", "b", "+", "~", "–", "gpus:", "tp:", "mode:", "1", "8", "128k", "1000001"]:
            f.write(dict_entry(w) + "\n")


def with_edition_facts(data, lang, revision):
    """The file with lang and revision in its front matter: the fuzz target
    reads one file with no data/editions.tsv row, so an edition kept as
    published (upstream's own front matter, or none) gets them written in."""
    text = data.decode("utf-8", errors="replace")
    facts = "lang: %s\nrevision: %s\n" % (lang, revision)
    if text.startswith("---\n"):
        return ("---\n" + facts + text[4:]).encode("utf-8")
    return ("---\n" + facts + "---\n\n" + text).encode("utf-8")


def markdown(out):
    folder = os.path.join(out, "markdown")
    rows = {r["path"]: r for r in read_tsv("editions.tsv") if r.get("path")}
    for base in (os.path.join(ROOT, "kb-sources"), os.path.join(ROOT, "tests", "fixtures")):
        for dirpath, _, files in os.walk(base):
            for name in files:
                if not name.endswith(".md"):
                    continue
                path = os.path.join(dirpath, name)
                data = open(path, "rb").read()
                put(folder, data)
                # Editions kept as published (kb-sources/upstream, the
                # reworded fixture of issue 11): also seeded with the facts
                # their data/editions.tsv row gives them.
                rel = os.path.relpath(path, os.path.join(ROOT, "kb-sources")).replace(os.sep, "/")
                row = rows.get(rel)
                if row:
                    put(folder, with_edition_facts(data, row["lang"], row["revision"]))
                elif b"\nlang:" not in data.split(b"\n---", 1)[0]:
                    put(folder, with_edition_facts(data, "en", 4))
    words = {"---", "lang: ", "revision: ", "name: ", "origin: ", "translated-from: ", "date: ", "|", "|---|", "```", "```bash",
             "# ", "## ", "### ", "1. ", "- ", "> ", "`", "—", "✓", "–", "+", "{", "}", ",", "*", "_config", "K"}
    for r in read_tsv("sections.tsv"):
        words.add(r["heading"])
    for r in read_tsv("columns.tsv"):
        words.add(r["header"])
    for r in read_tsv("cells.tsv"):
        words.add(r["word"])
    for r in read_tsv("heading-words.tsv"):
        words.add(r["word"])
        words.add(r["value"])
    with open(os.path.join(out, "markdown.dict"), "w", encoding="utf-8") as f:
        for w in sorted(words):
            if w:
                f.write(dict_entry(w) + "\n")
    # The text-export front end reads the same words, with tabs, bullets and
    # box-drawing lines instead of markdown syntax.
    with open(os.path.join(out, "text_export.dict"), "w", encoding="utf-8") as f:
        for w in sorted(words | {"\t", "• ", "├── ", "└── ", "│   ", "# ", "\\"}):
            if w:
                f.write(dict_entry(w) + "\n")


def text_export(out):
    folder = os.path.join(out, "text_export")
    origins = [r["origin"] for r in read_tsv("editions.tsv")]
    sources = []
    if os.path.isdir(SEEDS):
        sources += [os.path.join(SEEDS, n) for n in sorted(os.listdir(SEEDS)) if n.endswith(".txt")]
    for dirpath, _, files in os.walk(os.path.join(ROOT, "tests", "fixtures")):
        sources += [os.path.join(dirpath, n) for n in sorted(files) if n.endswith(".txt") and n != "expected.txt"]
    for path in sources:
        name = os.path.basename(path)
        pick = origins.index(name) if name in origins else len(origins)
        data = open(path, "rb").read()
        put(folder, bytes([pick]) + data)
        # Also the first 100 lines: small seeds mutate faster.
        put(folder, bytes([pick]) + b"\n".join(data.split(b"\n")[:100]))


def kb(out):
    """Seeds of fuzz_kb: a flags byte (bit 0: the runtime KB of kb-sources instead of
    the small one; bits 1-6: the questions; bit 7: check, rules, sources),
    then mutations (op % 4: 0 page bytes, 1 a value, 2 a byte flip, 3 a cut)."""
    folder = os.path.join(out, "kb")
    for flags in (0x00, 0x01, 0x80, 0x81, 0x2A, 0x55):
        put(folder, bytes([flags]))
    # One value mutation per table index, column index and value kind.
    n = 0
    for table in range(0, 32, 3):
        for column in range(0, 12, 5):
            for kind in range(10):
                payload = bytes([(table * 7 + column * 3 + kind) & 0xFF] * 8)
                put(folder, bytes([n & 0x81, 1, table, column, 0, n % 7, kind]) + payload)
                n += 1
    # Page writes over the header, the first pages and later ones; flips; cuts.
    for page in (0, 1, 2, 5, 20, 100):
        for off in (0, 8, 100, 4000):
            put(folder, bytes([page & 1, 0, 0, page, off >> 8, off & 0xFF, 4, 0xFF, 0x00, 0x7F, 0x80]))
    for at in (16, 18, 28, 56, 100, 4096, 8192 + 3):
        put(folder, bytes([1, 2]) + at.to_bytes(4, "big") + b"\x80")
    put(folder, bytes([0, 3, 0]) + (5000).to_bytes(4, "big"))
    put(folder, bytes([0x81, 1, 20, 11, 0, 1, 2, 1, 9, 0, 3, 1, 0, 0, 0, 9]))
    with open(os.path.join(out, "kb.dict"), "w", encoding="ascii") as f:
        for word in (b"\x00\x00\x00\x00", b"\xff\xff\xff\xff", b"\x7f\xff\xff\xff\xff\xff\xff\xff", b"\x80\x00\x00\x00\x00\x00\x00\x00",
                     b"\x0d", b"\x05", b"\x0a", b"\x02", b"\x81\x80\x80\x00", b"\xff\xff\xff\xff\xff\xff\xff\xff\xff",
                     b"SQLite format 3\x00", b"\x10\x00", b"\x01\x01\x00\x40\x20\x20"):
            f.write('"' + "".join("\\x%02X" % b for b in word) + '"\n')


def regressions(out):
    base = os.path.join(ROOT, "fuzz", "regressions")
    if not os.path.isdir(base):
        return
    for target in os.listdir(base):
        src = os.path.join(base, target)
        for name in os.listdir(src):
            os.makedirs(os.path.join(out, target), exist_ok=True)
            shutil.copy(os.path.join(src, name), os.path.join(out, target, name))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    for sub in ("dsl", "markdown", "text_export", "kb"):
        shutil.rmtree(os.path.join(out, sub), ignore_errors=True)
    dsl(out)
    markdown(out)
    text_export(out)
    kb(out)
    regressions(out)
    for sub in ("dsl", "markdown", "text_export", "kb"):
        n = len(os.listdir(os.path.join(out, sub))) if os.path.isdir(os.path.join(out, sub)) else 0
        print(f"seed_corpus.py: {sub}: {n} seeds", file=sys.stderr)


if __name__ == "__main__":
    main()
