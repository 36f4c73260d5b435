#!/usr/bin/env python3
"""extract_mbridge.py -- the code front end of kbc: static recipe facts of a Megatron Bridge checkout.

Reads a Megatron Bridge checkout with `ast` only (it never imports or runs Bridge code) and writes what
its recipes, launchers and config dataclasses say as reviewable TSV files.  A small abstract interpreter
evaluates every exported recipe function: assignments, helper and recipe-to-recipe calls with their
arguments bound, dataclass constructors with their defaults, attribute assignments, f-strings and
arithmetic on constants, and `if` statements whose condition it can decide.  A condition it cannot decide
keeps every branch (the value becomes a set of alternatives); a value it cannot compute is `unknown` with
a reason.  It never guesses.

Nothing about Megatron Bridge is written here beyond Python and the layout of a Python package.  Which
packages export recipes, which launcher files and tables to read, which classes not to interpret, and which
config attribute paths are facts all come from two data files:
  --fields  kb-sources/data/code-fields.tsv  fact field -> config attribute path (+ cited external defaults)
  --layout  kb-sources/data/code-layout.tsv  where things are in a checkout (default: beside --fields)

The code is the package mbridge_extractor beside this file (its __init__.py maps the modules); run this file
by its path, so that Python finds the package and a traceback names real files.  kbc runs it as
`python3 -B -E -s PATH/extract_mbridge.py ARGS`.

Usage:
  extract_mbridge.py --mbridge CHECKOUT --fields FIELDS --commit SHA --date YYYY-MM-DD --out DIR
  extract_mbridge.py --mbridge CHECKOUT --fields FIELDS --commit SHA --date YYYY-MM-DD --check DIR
  extract_mbridge.py --compare OLD_DIR NEW_DIR --out FILE      (or --check FILE)

Output files (tab-separated, UTF-8, LF, sorted rows, a `#` comment header then a header row):
  snapshot.tsv recipes.tsv recipe-facts.tsv launcher.tsv config-keys.tsv providers.tsv datasets.tsv
Files are written to temporary names and renamed at the end: a failed run writes nothing.

Exit codes:
  0  files written, or --check found them identical
  1  --check: the files differ (a unified diff summary is printed on stdout)
  2  error: bad usage, unreadable data file, or bad input in the checkout (a syntax error, a missing
     __init__.py or a circular import on the export chain), printed as `path:line: error: what` + `hint:`
"""

import sys

from mbridge_extractor.cli import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
