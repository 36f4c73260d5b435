#!/usr/bin/env python3
"""Validates JSON files against a JSON Schema (the draft its $schema names,
else draft 2020-12) with the jsonschema package (Debian: python3-jsonschema).

usage: validate_json.py SCHEMA FILE...
Prints one line per invalid file (file: path in the document: message) and
exits 1 if any is invalid, 0 if all are valid, 2 on a usage error or an
unreadable file. A missing jsonschema package is exit 3, so the caller can
report the test as skipped.
"""
import json
import sys

try:
    import jsonschema
except ImportError:
    print("python3-jsonschema is not installed", file=sys.stderr)
    sys.exit(3)


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        schema = json.load(f)
    # The schema's own $schema names its draft (SARIF 2.1.0's is draft-07);
    # ours state none and are draft 2020-12.
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    cls.check_schema(schema)
    validator = cls(schema)
    bad = 0
    for path in argv[2:]:
        try:
            with open(path, encoding="utf-8") as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            print(f"{path}: not JSON: {e}")
            return 2
        for err in sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path)):
            where = "/".join(str(p) for p in err.absolute_path) or "(root)"
            print(f"{path}: {where}: {err.message[:300]}")
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
