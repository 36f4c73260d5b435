#!/usr/bin/env python3
"""Compares the rankings of two kbq builds over generated queries.

Usage: bench/compare_rankings.py OLD_KBQ OLD_KB NEW_KBQ NEW_KB [--queries N] [--limit N]

Each query is every combination of a mode, a model, a GPU count and one more
term (intent, sequence, hardware, filter, size), shuffled with a fixed seed;
the first N run on both builds with --format json. Prints the queries whose
recipes, modes, scores or score parts differ, then a count; exits 1 if any
differ. Used to check that a change to candidate selection keeps every
answer (docs/performance.md). Python 3 standard library only.
"""

import argparse
import itertools
import json
import random
import subprocess
import sys

MODES = ["", "pretrain", "sft", "peft", "lora"]
MODELS = ["", "qwen3", "llama3", "llama3 70b", "qwen3 30b", "deepseek", "synm5f2", "gemma3", "nemotron"]
GPUS = ["", "1 gpu", "8 gpus", "16 gpus", "64 gpus", "2 nodes"]
EXTRA = ["", "moe", "long context", "vlm", "16k sequence", "h100", "benchmark", "first time", "tp:2", "family:qwen",
         "cuda graphs", "smoke test", "diffusion", "large scale", "8b"]


def ranking(kbq, kb, query, limit):
    p = subprocess.run([kbq, "--kb", kb, "--format", "json", "--limit", str(limit), query], capture_output=True, text=True)
    if p.returncode == 2 or not p.stdout.strip():
        return ("error", p.returncode, p.stderr.strip()[:200])
    return [(r["recipe"], r["mode"], r["score"], json.dumps(r["score_parts"], sort_keys=True))
            for r in json.loads(p.stdout)["results"]]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old_kbq")
    ap.add_argument("old_kb")
    ap.add_argument("new_kbq")
    ap.add_argument("new_kb")
    ap.add_argument("--queries", type=int, default=400)
    ap.add_argument("--limit", type=int, default=5)
    a = ap.parse_args()
    queries = sorted({" ".join(t for t in combo if t) for combo in itertools.product(MODES, MODELS, GPUS, EXTRA)} - {""})
    random.Random(1).shuffle(queries)
    differ = 0
    for q in queries[: a.queries]:
        old, new = ranking(a.old_kbq, a.old_kb, q, a.limit), ranking(a.new_kbq, a.new_kb, q, a.limit)
        if old != new:
            differ += 1
            print(f"DIFF {q!r}\n  old {old}\n  new {new}")
    print(f"{min(a.queries, len(queries))} queries, {differ} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
