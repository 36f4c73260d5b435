"""One extraction: exports, facts, providers, launcher, config keys and datasets of a checkout, as the
text of each output file."""

import os
import sys
import time

from .benchmark_names import name_parser
from .config_keys import config_key_rows
from .datafiles import FieldSpec, Layout, read_tsv
from .datasets import dataset_rows
from .errors import Budget, InputError, Raised
from .exports import collect_exports
from .facts import Fact, make_fact, navigate, parameter_names, recipe_facts, view_values
from .interp.core import Interp
from .interp.state import Frame
from .launcher import launcher_rows, registry_rows
from .output import tsv_text
from .render import cell, render, render_types, render_values
from .snapshot import Snapshot
from .values import ClassV, Const


EXTRACTOR_VERSION = "2"


def extract(args):
    t0 = time.time()
    fields_rows = read_tsv(args.fields)
    layout_path = args.layout or os.path.join(os.path.dirname(os.path.abspath(args.fields)), "code-layout.tsv")
    layout = Layout(read_tsv(layout_path), layout_path)
    specs = [FieldSpec(r) for r in fields_rows if r.get("field")]
    if not os.path.isdir(args.mbridge):
        raise InputError(args.mbridge, 0, "checkout folder not found", "give --mbridge the checkout root")
    search = [r["value"] for r in layout.all("search-dir")]
    snap = Snapshot(args.mbridge, search)
    opaque = {r["value"]: r["extra"] for r in layout.all("opaque")}
    interp = Interp(snap, opaque)

    # 1. exports (strict: bad input on the export chain is an error)
    interp.strict = True
    exports = collect_exports(interp, layout)
    interp.strict = False

    parse_name = name_parser(interp, layout)
    builder_task = {r["value"]: r["extra"] for r in layout.all("builder-task")}

    recipes_rows = []
    targets = {}
    for ex in exports:
        f = ex.func
        targets[f.qualname] = f
        info = parse_name(ex.name)
        alias = f.node.name if f.node.name != ex.name else ""
        recipes_rows.append(tuple(cell(x) for x in (
            ex.name, ex.kind, f.qualname, f.mod.loc(f.node), ex.exported_at, alias, info.get("mode", ""),
            info.get("family", ""), info.get("model", ""), info.get("task", ""), info.get("gpus", ""),
            info.get("hardware", ""), info.get("precision", ""), info.get("variant", ""), info.get("step", ""),
            " > ".join(ex.chain))))

    # 2. facts of each defining function
    facts_rows = []
    prov_use = {}
    arch_fields = [s for s in specs if s.field.startswith("arch.")]
    recipe_specs = [s for s in specs if not s.field.startswith("arch.")]
    n_eval = 0
    variants = [(r["name"], [p.strip() for p in r["value"].split("|")], r["extra"],
                 {v["value"] for v in layout.all("variant-field") if v["name"] == r["name"]})
                for r in layout.all("variant-eval")]
    for qn in sorted(targets):
        f = targets[qn]
        facts = recipe_facts(interp, f, recipe_specs + arch_fields)
        n_eval += 1
        # mode from the builder helper, when the layout maps it
        b = facts.get("builder")
        if b is not None and b.state in ("value", "default") and b.values:
            chain = render(b.values[0]).split(" > ")
            task = ""
            for q in reversed(chain):
                if q in builder_task:
                    task = builder_task[q]
                    break
            facts["builder_task"] = Fact("value" if task else "unknown", [Const(task)] if task else [], b.at,
                                         "" if task else "no builder-task row in the layout for this builder")
        for field in sorted(facts):
            fa = facts[field]
            facts_rows.append(tuple(cell(x) if i != 3 else x for i, x in enumerate(
                (qn, field, fa.state, render_values(fa.values), render_types(fa.values), fa.at, fa.note))))
        # the same function called as the launcher calls it for another mode (layout variant-eval rows)
        for name, params, value, fields in variants:
            names, var_kw = parameter_names(f.node)
            param = next((p for p in params if p in names), params[-1] if var_kw else None)
            if param is None:
                continue
            vfacts = recipe_facts(interp, f, [s for s in specs if s.field in fields], {param: Const(value)})
            for field in sorted(vfacts):
                fa = vfacts[field]
                facts_rows.append(tuple(cell(x) if i != 3 else x for i, x in enumerate(
                    (qn, field + "@" + name, fa.state, render_values(fa.values), render_types(fa.values), fa.at,
                     (fa.note + "; " if fa.note else "") + "called with %s=%r" % (param, value)))))
        pv = facts.get("provider")
        hf = facts.get("hf_id")
        key = None
        if hf is not None and hf.state == "value" and hf.values:
            key = "hf:" + render(hf.values[0])
        elif pv is not None and pv.state in ("value", "default") and pv.values:
            key = render(pv.values[0])
        if key is not None:
            prov_use.setdefault(key, []).append(qn)

    # 3. providers: snapshot provider classes with their defaults; hf ids
    prov_rows = []
    for key in sorted(prov_use):
        n = str(len(prov_use[key]))
        if key.startswith("hf:"):
            prov_rows.append((cell(key), "hf_id", "value", cell(key[3:]), "str", "", "", n))
            continue
        mod, _, cname = key.rpartition(".")
        m = snap.module(mod) if mod else None
        c = interp.global_lookup(m, cname, None) if m else None
        if not isinstance(c, ClassV):
            prov_rows.append((cell(key), "class", "unknown", "", "", "", "not a snapshot class", n))
            continue
        interp.heap, interp.steps, interp.stack = [], 0, []
        try:
            obj = interp.instantiate(c, [], {}, Frame(c.mod), c.node)
        except (Raised, Budget) as e:
            prov_rows.append((cell(key), "class", "unknown", "", "", c.mod.loc(c.node), "constructing it raises", n))
            continue
        for s in arch_fields:
            spec = FieldSpec({"field": s.field, "path": s.path.partition(".")[2], "view": s.view, "via": "",
                              "default": s.default, "default_source": s.default_source, "_line": s.line})
            fa = make_fact(spec, view_values(interp, spec, navigate(interp, obj, spec)))
            prov_rows.append((cell(key), s.field, fa.state, render_values(fa.values), render_types(fa.values),
                              cell(fa.at), cell(fa.note), n))

    # 4. launcher, config keys, datasets
    launch = [tuple(cell(str(x)) for x in r) for r in launcher_rows(interp, layout) + registry_rows(interp, layout, specs)]
    keys = [tuple(cell(str(x)) for x in r) for r in config_key_rows(interp, layout, specs)]
    dsets = [tuple(cell(str(x)) for x in r) for r in dataset_rows(interp, layout)]

    n_lib = sum(1 for e in exports if e.kind == "library")
    n_bench = sum(1 for e in exports if e.kind == "benchmark")
    snap_rows = [
        ("repo", layout.one("repo")["value"]), ("commit", args.commit), ("date", args.date),
        ("extractor", "extract_mbridge.py " + EXTRACTOR_VERSION),
        ("names.library", str(n_lib)), ("names.benchmark", str(n_bench)), ("names.total", str(len(exports))),
        ("targets", str(len(targets))), ("fields", str(len(specs))),
        ("modules.parsed", str(len(snap.modules))),
    ]
    for name, count in sorted(interp.external_mutations.items()):
        snap_rows.append(("external-call-with-config." + name, str(count)))
    files = {
        "snapshot.tsv": tsv_text("snapshot.tsv", [tuple(cell(x) for x in r) for r in snap_rows]),
        "recipes.tsv": tsv_text("recipes.tsv", recipes_rows),
        "recipe-facts.tsv": tsv_text("recipe-facts.tsv", facts_rows),
        "launcher.tsv": tsv_text("launcher.tsv", launch),
        "config-keys.tsv": tsv_text("config-keys.tsv", keys),
        "providers.tsv": tsv_text("providers.tsv", prov_rows),
        "datasets.tsv": tsv_text("datasets.tsv", dsets),
    }
    if args.verbose:
        sys.stderr.write("extract_mbridge: %d names, %d targets, %.1fs\n" % (len(exports), len(targets),
                                                                             time.time() - t0))
    return files
