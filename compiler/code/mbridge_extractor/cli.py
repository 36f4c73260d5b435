"""The command line (see extract_mbridge.py): parse arguments, run, map errors to exit codes."""

import argparse
import os
import re
import sys
import tempfile

from .compare import compare
from .errors import InputError
from .extract import extract
from .output import check_files, write_files


def main(argv):
    ap = argparse.ArgumentParser(description="Static recipe facts of a Megatron Bridge checkout (see the header).")
    ap.add_argument("--mbridge", help="checkout root (holds src/megatron/bridge and scripts)")
    ap.add_argument("--fields", help="kb-sources/data/code-fields.tsv")
    ap.add_argument("--layout", help="kb-sources/data/code-layout.tsv (default: beside --fields)")
    ap.add_argument("--commit", help="the checkout's commit (recorded in snapshot.tsv)")
    ap.add_argument("--date", help="the commit date, YYYY-MM-DD")
    ap.add_argument("--out", help="output folder (or file with --compare)")
    ap.add_argument("--check", help="compare with this folder (or file with --compare) instead of writing")
    ap.add_argument("--compare", nargs=2, metavar=("OLD_DIR", "NEW_DIR"), help="compare two extracted folders")
    ap.add_argument("--verbose", action="store_true", help="print counts and time on stderr")
    args = ap.parse_args(argv)
    try:
        if args.compare:
            text = compare(*args.compare)
            if args.check:
                try:
                    with open(args.check, encoding="utf-8") as f:
                        old = f.read()
                except OSError:
                    old = None
                if old != text:
                    print("%s: differs" % args.check)
                    return 1
                return 0
            if not args.out:
                ap.error("--compare needs --out FILE or --check FILE")
            d = os.path.dirname(os.path.abspath(args.out))
            fd, tmp = tempfile.mkstemp(prefix=".compare.", dir=d)
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
            os.replace(tmp, args.out)
            return 0
        for need in ("mbridge", "fields", "commit", "date"):
            if not getattr(args, need):
                ap.error("--%s is required" % need)
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", args.date):
            ap.error("--date must be YYYY-MM-DD")
        if bool(args.out) == bool(args.check):
            ap.error("give exactly one of --out DIR and --check DIR")
        files = extract(args)
        if args.check:
            return 0 if check_files(args.check, files) else 1
        write_files(args.out, files)
        return 0
    except InputError as e:
        sys.stderr.write(e.render())
        return 2
