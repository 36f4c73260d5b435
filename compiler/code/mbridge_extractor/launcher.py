"""What the launchers say: argparse flags, the override table, the mode rule and mode map, the runner's
steps, the benchmark launch script, name pattern and family rule."""

import ast
import os

from .errors import Budget, InputError, Raised
from .exports import trace_binding
from .datafiles import FieldSpec
from .facts import make_fact, navigate, signature_text, view_values
from .interp.state import _ModuleLocals, Frame
from .render import render, render_values
from .values import BuiltinV, Const, dict_items, ExtV, FuncV, Obj, PatternV, seq_items, Unknown


def func_node(m, name):
    for s in m.tree.body:
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == name:
            return s
    return None


def passed_names(call):
    """The plain variables a call passes, by position or by keyword."""
    return [a for a in list(call.args) + [k.value for k in call.keywords] if isinstance(a, ast.Name)]


def launcher_rows(interp, layout):
    """Rows (section, item, attribute, value, at) of the launcher files."""
    rows = []
    snap = interp.snap

    def lmod(key):
        r = layout.one(key)
        m = snap.module(r["value"])
        if m is None:
            raise InputError(layout.path, r["_line"], "launcher module %s not found in the checkout" % r["value"],
                             "check the layout row and the checkout's scripts/ folder")
        return m, r

    # argparse flags of the parser builder functions
    for r in layout.all("parser"):
        m = snap.module(r["value"])
        if m is None:
            raise InputError(layout.path, r["_line"], "launcher module %s not found" % r["value"],
                             "check the layout row")
        fn = func_node(m, r["extra"])
        if fn is None:
            raise InputError(m.rel, 1, "function %s not found" % r["extra"], "check the layout row %d" % r["_line"])
        rows.extend(argparse_rows(interp, m, fn, r["name"]))
    # the table mapping convenience flags to config keys
    for r in layout.all("override-table"):
        m = snap.module(r["value"])
        v = interp.global_lookup(m, r["extra"], None) if m else None
        b = interp.binding_for(m, r["extra"], None) if m else None
        if v is None or b is None:
            raise InputError(layout.path, r["_line"], "table %s not found in %s" % (r["extra"], r["value"]),
                             "check the layout row")
        node = b[2]
        elts = node.value.elts if isinstance(node.value, (ast.Tuple, ast.List)) else []
        for i, item in enumerate(seq_items(v) or []):
            pair = seq_items(item)
            if pair and len(pair) == 2 and all(isinstance(p, Const) for p in pair):
                at = m.loc(elts[i]) if i < len(elts) else m.loc(node)
                rows.append(("flag", r["name"] + ":" + pair[0].v, "config_key", pair[1].v, at))
    # mode inference rule: the tokens tested in order and the mode each returns
    for r in layout.all("mode-rule"):
        m = snap.module(r["value"])
        fn = func_node(m, r["extra"]) if m else None
        if fn is None:
            raise InputError(layout.path, r["_line"], "function %s not found" % r["extra"], "check the layout row")
        n = 0
        for s in ast.walk(fn):
            if isinstance(s, ast.If):
                toks = [c.value for c in ast.walk(s.test) if isinstance(c, ast.Constant) and isinstance(c.value, str)]
                ret = [x for x in s.body if isinstance(x, ast.Return)]
                if toks and ret and isinstance(ret[0].value, ast.Constant):
                    n += 1
                    rows.append(("mode-rule", "%02d" % n, "tokens", " ".join(toks), m.loc(s)))
                    rows.append(("mode-rule", "%02d" % n, "mode", str(ret[0].value.value), m.loc(ret[0])))
        rows.append(("mode-rule", "function", "name", fn.name, m.loc(fn)))
    # public modes and their task / training loop
    for r in layout.all("mode-map"):
        m = snap.module(r["value"])
        fn_name = r["extra"]
        modes_row = layout.one("modes")
        mm = snap.module(modes_row["value"])
        modes = interp.global_lookup(mm, modes_row["extra"], None)
        for mode in sorted(c.v for c in (seq_items(modes) or []) if isinstance(c, Const)):
            fn = interp.global_lookup(m, fn_name, None)
            interp.heap, interp.steps, interp.stack = [], 0, []
            try:
                v = interp.call(fn, [Const(mode)], {}, Frame(m), None)
            except Raised:
                v = Unknown("raises")
            rows.append(("mode", mode, r["name"], render(v), m.loc(fn.node) if isinstance(fn, FuncV) else ""))
    # runner steps after the overrides: the calls in the entry function, in order; the step that
    # applies the command line's KEY=VALUE overrides is marked, so what later steps assign is known to
    # undo or rewrite an override (layout row runner-overrides)
    override_fns = {r["extra"] for r in layout.all("runner-overrides")}
    for r in layout.all("runner"):
        m = snap.module(r["value"])
        fn = func_node(m, r["extra"]) if m else None
        if fn is None:
            raise InputError(layout.path, r["_line"], "runner function %s not found" % r["extra"], "check the layout")
        calls = []  # (the call, the names its statement assigns)
        for s in fn.body:
            if isinstance(s, ast.Assign) and isinstance(s.value, ast.Call):
                calls.append((s.value, s.targets))
            elif isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
                calls.append((s.value, []))
            elif isinstance(s, ast.If):
                for x in s.body:
                    if isinstance(x, ast.Assign) and isinstance(x.value, ast.Call):
                        calls.append((x.value, x.targets))
        # The variables that hold the overrides: what the call that applies
        # them is passed, besides the config it assigns back.
        override_vars = set()
        for c, targets in calls:
            if isinstance(c.func, ast.Name) and c.func.id in override_fns:
                assigned = {t.id for t in targets if isinstance(t, ast.Name)}
                override_vars |= {a.id for a in passed_names(c)} - assigned
        n = 0
        for c, _ in calls:
            if not isinstance(c.func, ast.Name):
                continue
            n += 1
            item = "%02d" % n
            rows.append(("runner-step", item, "call", c.func.id, m.loc(c)))
            if c.func.id in override_fns:
                rows.append(("runner-step", item, "applies-overrides", "true", m.loc(c)))
            else:
                seen = sorted({a.id for a in passed_names(c)} & override_vars)
                if seen:
                    rows.append(("runner-step", item, "reads-overrides", " ".join(seen), m.loc(c)))
            target = interp.global_lookup(m, c.func.id, None)
            chain = []
            tfn = trace_binding(interp, m, c.func.id, chain) if target is not None else None
            if isinstance(tfn, FuncV):
                doc = ast.get_docstring(tfn.node) or ""
                rows.append(("runner-step", item, "doc", doc.split("\n")[0], tfn.mod.loc(tfn.node)))
                for x in ast.walk(tfn.node):
                    if isinstance(x, ast.Assign):
                        for tg in x.targets:
                            if isinstance(tg, ast.Attribute):
                                rows.append(("runner-step", item, "assigns",
                                             "%s = %s" % (ast.unparse(tg), ast.unparse(x.value)), tfn.mod.loc(x)))
    # dataset presets: the --dataset choices
    # benchmark launch script
    for r in layout.all("launch-script"):
        path = os.path.join(snap.root, r["value"])
        try:
            with open(path, encoding="utf-8") as fh:
                lines = fh.read().split("\n")
        except OSError:
            raise InputError(layout.path, r["_line"], "launch script %s not found" % r["value"], "check the layout")
        for i, line in enumerate(lines, 1):
            if line.strip().startswith("exec "):
                rows.append(("launch", r["name"], "exec", line.strip(), "%s:%d" % (r["value"], i)))
    # the benchmark name pattern and family prefixes
    for r in layout.all("name-pattern"):
        m = snap.module(r["value"])
        v = interp.global_lookup(m, r["extra"], None) if m else None
        b = interp.binding_for(m, r["extra"], None) if m else None
        if not isinstance(v, PatternV):
            raise InputError(layout.path, r["_line"], "%s is not a re.compile() of a constant" % r["extra"],
                             "check the layout row")
        rows.append(("name-pattern", r["extra"], "regex", v.pattern, m.loc(b[2])))
    for r in layout.all("family-rule"):
        m = snap.module(r["value"])
        fn = func_node(m, r["extra"]) if m else None
        if fn is not None:
            rows.append(("family-rule", "function", "name", fn.name, m.loc(fn)))
    # functions whose rules the answers rely on, as written: signature, docstring, raises, attribute assignments
    for r in layout.all("launcher-function"):
        m = snap.module(r["value"])
        fn = qualified_node(m, r["extra"]) if m else None
        if fn is None:  # an older checkout may not have it yet: said, not an error
            rows.append(("function", r["name"], "absent", "%s.%s" % (r["value"], r["extra"]), ""))
            continue
        rows.extend(function_rows(m, fn, r["name"], r["extra"]))
    # module-level dict literals (e.g. GPUs per node of each GPU type)
    for r in layout.all("dict-table"):
        m = snap.module(r["value"])
        b = interp.binding_for(m, r["extra"], None) if m else None
        node = b[2].value if b is not None and b[1] == "assign" else None
        if b is None:
            rows.append(("table", r["name"], "absent", "%s.%s" % (r["value"], r["extra"]), ""))
            continue
        if not isinstance(node, ast.Dict):
            raise InputError(layout.path, r["_line"], "%s is not a dict literal in %s" % (r["extra"], r["value"]),
                             "check the layout row")
        for k, v in zip(node.keys, node.values):
            if isinstance(k, ast.Constant):
                rows.append(("table", r["name"], str(k.value), ast.unparse(v), m.loc(k)))
    return rows


def qualified_node(m, qualname):
    """The def of `name` or `Class.name` at the top level of module m."""
    cls, _, name = qualname.rpartition(".")
    body = m.tree.body
    if cls:
        c = next((s for s in body if isinstance(s, ast.ClassDef) and s.name == cls), None)
        if c is None:
            return None
        body = c.body
    return next((s for s in body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == name), None)


def function_rows(m, fn, item, qualname):
    """Rows of one function: `def` (its signature), `doc` (first docstring line), each `raises` (the exception
    as written, at its line) and each `assigns` (attribute assignments), in source order."""
    rows = [("function", item, "def", "%s.%s(%s)" % (m.name, qualname, signature_text(fn)), m.loc(fn))]
    doc = ast.get_docstring(fn) or ""
    rows.append(("function", item, "doc", doc.strip().split("\n")[0], m.loc(fn)))
    for x in ast.walk(fn):
        if isinstance(x, ast.Raise) and x.exc is not None:
            rows.append(("function", item, "raises", ast.unparse(x.exc), m.loc(x)))
        elif isinstance(x, ast.Assign):
            for tg in x.targets:
                if isinstance(tg, ast.Attribute):
                    rows.append(("function", item, "assigns", "%s = %s" % (ast.unparse(tg), ast.unparse(x.value)),
                                 m.loc(x)))
    return rows


def argparse_rows(interp, m, fn, prefix):
    """Each add_argument call of a parser builder: option strings, dest, type, choices, help, group."""
    rows = []
    groups = {}
    subcommands = {}  # parser variable -> subcommand name
    fr = Frame(m)
    fr.locals = _ModuleLocals(interp, m, None)
    for s in ast.walk(fn):
        if isinstance(s, ast.Assign) and isinstance(s.value, ast.Call) and isinstance(s.value.func, ast.Attribute):
            attr = s.value.func.attr
            if attr in ("add_argument_group", "add_mutually_exclusive_group") and isinstance(s.targets[0], ast.Name):
                title = ""
                if s.value.args and isinstance(s.value.args[0], ast.Constant):
                    title = s.value.args[0].value
                parent = s.value.func.value.id if isinstance(s.value.func.value, ast.Name) else ""
                if attr == "add_mutually_exclusive_group":
                    title = (groups.get(parent, ("", False))[0] + " (one of)").strip()
                req = any(k.arg == "required" and isinstance(k.value, ast.Constant) and k.value.value
                          for k in s.value.keywords)
                groups[s.targets[0].id] = (title, req)
            if attr == "add_parser" and isinstance(s.targets[0], ast.Name) and s.value.args and isinstance(
                    s.value.args[0], ast.Constant):
                # a subcommand (`parser.add_subparsers().add_parser("import", help=...)`)
                name = s.value.args[0].value
                subcommands[s.targets[0].id] = name
                helps = [k.value.value for k in s.value.keywords
                         if k.arg == "help" and isinstance(k.value, ast.Constant)]
                rows.append(("subcommand", prefix + ":" + name, "help", helps[0] if helps else "", m.loc(s)))
    for s in ast.walk(fn):
        if not (isinstance(s, ast.Call) and isinstance(s.func, ast.Attribute) and s.func.attr == "add_argument"):
            continue
        opts = [a.value for a in s.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        if not opts:
            continue
        kw = {k.arg: k.value for k in s.keywords if k.arg}
        longs = [o for o in opts if o.startswith("--")]
        dest = None
        if "dest" in kw and isinstance(kw["dest"], ast.Constant):
            dest = kw["dest"].value
        elif longs:
            dest = longs[0][2:].replace("-", "_")
        else:
            dest = opts[0].lstrip("-").replace("-", "_")
        item = prefix + ":" + dest
        at = m.loc(s)
        rows.append(("flag", item, "options", " ".join(opts), at))
        shorts = [o for o in opts if o.startswith("-") and not o.startswith("--")]
        if shorts:
            rows.append(("flag", item, "short", " ".join(shorts), at))
        if longs:
            rows.append(("flag", item, "long", " ".join(longs), at))
        grp = s.func.value.id if isinstance(s.func.value, ast.Name) else ""
        if grp in subcommands:
            rows.append(("flag", item, "subcommand", subcommands[grp], at))
        if grp in groups:
            rows.append(("flag", item, "group", groups[grp][0], at))
            if groups[grp][1]:
                rows.append(("flag", item, "required", "one of the group", at))
        for k in ("type", "action", "metavar", "help", "default", "required", "nargs"):
            if k in kw:
                node = kw[k]
                if isinstance(node, ast.Constant):
                    val = render(Const(node.value))
                else:
                    try:
                        interp.heap, interp.steps, interp.stack = [], 0, []
                        v = interp.eval(node, fr)
                        val = ast.unparse(node) if isinstance(v, (Unknown, BuiltinV, ExtV)) else render(v)
                    except (Raised, Budget):
                        val = ast.unparse(node)
                rows.append(("flag", item, k, val, m.loc(node)))
        if "choices" in kw:
            interp.heap, interp.steps, interp.stack = [], 0, []
            try:
                v = interp.eval(kw["choices"], fr)
            except (Raised, Budget):
                v = Unknown("choices")
            items = seq_items(v)
            val = " ".join(render(i) for i in items) if items is not None else "unknown: " + ast.unparse(kw["choices"])
            rows.append(("flag", item, "choices", val, m.loc(kw["choices"])))
    return rows


def registry_rows(interp, layout, specs):
    """Rows of each name registry the layout lists (`registry` rows: a module-level dict that decorators fill at
    import, and that a str value of a config key is looked up in at run time, e.g. MIXED_PRECISION_RECIPES for
    `mixed_precision`): per name `<key>:<name>`, its `factory` (at its def) and, for each `registry-field` row,
    the field of the object the factory builds (state:value, as recipe-facts.tsv renders it)."""
    rows = []
    by_field = {s.field: s for s in specs}
    for r in layout.all("registry"):
        key = r["name"]
        m = interp.snap.module(r["value"])
        reg = interp.global_lookup(m, r["extra"], None) if m else None
        items = dict_items(reg) if reg is not None else None
        if items is None:  # an older checkout may not have it: said, not an error
            rows.append(("registry", key, "absent", "%s.%s" % (r["value"], r["extra"]), ""))
            continue
        fields = []
        for fr in layout.all("registry-field"):
            if fr["name"] != key:
                continue
            s = by_field.get(fr["value"])
            if s is None:
                raise InputError(layout.path, fr["_line"], "registry field %s is not in code-fields.tsv" % fr["value"],
                                 "name a field of code-fields.tsv")
            fields.append(s)
        for k, fn in items:
            if not isinstance(k, Const) or not isinstance(fn, FuncV):
                continue
            item = "%s:%s" % (key, k.v)
            at = fn.mod.loc(fn.node)
            rows.append(("registry", item, "factory", fn.qualname, at))
            interp.heap, interp.steps, interp.stack = [], 0, []
            try:
                obj = interp.call(fn, [], {}, Frame(fn.mod), None)
            except (Raised, Budget):
                obj = None
            for s in fields:
                if not isinstance(obj, Obj):
                    rows.append(("registry", item, s.field, "unknown:", at))
                    continue
                spec = FieldSpec({"field": s.field, "path": s.path.partition(".")[2], "view": s.view, "via": "",
                                  "default": s.default, "default_source": s.default_source, "_line": s.line})
                fa = make_fact(spec, view_values(interp, spec, navigate(interp, obj, spec)))
                rows.append(("registry", item, s.field, "%s:%s" % (fa.state, render_values(fa.values)), at))
    return rows
