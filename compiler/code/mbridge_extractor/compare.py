"""What changed between two extracted snapshots (recipe names, targets, facts)."""

import os

from .datafiles import read_tsv
from .errors import InputError


COMPARE_HEADER = (
    "# What changed between two extracted snapshots (compiler/code/extract_mbridge.py --compare OLD NEW).\n"
    "# change: name-added | name-removed (recipes.tsv, key = name kind) | target-changed (the function a name\n"
    "# resolves to) | fact-changed | fact-added | fact-removed (recipe-facts.tsv, compared per exported name\n"
    "# through its target, key = name kind field). old/new: value and state as `state:value`.\n",
    ("change", "name", "kind", "field", "old", "new"))


def compare(old_dir, new_dir):
    def load(d):
        try:
            rec = read_tsv(os.path.join(d, "recipes.tsv"))
            facts = read_tsv(os.path.join(d, "recipe-facts.tsv"))
        except InputError as e:
            raise InputError(d, 0, "cannot read extracted files: %s" % e, "run the extractor into this folder first")
        names = {(r["name"], r["kind"]): r for r in rec}
        by_target = {}
        for f in facts:
            by_target.setdefault(f["target"], {})[f["field"]] = f
        return names, by_target

    on, of = load(old_dir)
    nn, nf = load(new_dir)
    rows = []
    for key in sorted(set(on) | set(nn)):
        name, kind = key
        if key not in on:
            rows.append(("name-added", name, kind, "", "", nn[key]["target"]))
            continue
        if key not in nn:
            rows.append(("name-removed", name, kind, "", on[key]["target"], ""))
            continue
        ot, nt = on[key]["target"], nn[key]["target"]
        if ot != nt:
            rows.append(("target-changed", name, kind, "", ot, nt))
        ofs, nfs = of.get(ot, {}), nf.get(nt, {})
        for field in sorted(set(ofs) | set(nfs)):
            a, b = ofs.get(field), nfs.get(field)
            fa = "%s:%s" % (a["state"], a["value"]) if a else ""
            fb = "%s:%s" % (b["state"], b["value"]) if b else ""
            if a is None:
                rows.append(("fact-added", name, kind, field, "", fb))
            elif b is None:
                rows.append(("fact-removed", name, kind, field, fa, ""))
            elif fa != fb:
                rows.append(("fact-changed", name, kind, field, fa, fb))
    out = [COMPARE_HEADER[0].rstrip("\n"), "\t".join(COMPARE_HEADER[1])]
    for r in sorted(set(rows)):
        out.append("\t".join(r))
    return "\n".join(out) + "\n"
