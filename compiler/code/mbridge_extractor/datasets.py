"""The launcher's --dataset presets: builder, what it returns, the train mode and accepted modes."""

import ast

from .errors import Budget, InputError, Raised
from .interp.state import _ModuleLocals, Frame
from .render import class_name, render
from .values import Alt, ClassV, Const, dict_items, FuncV, Obj, PartialV, seq_items, Unknown


def dataset_rows(interp, layout):
    r = layout.one("dataset-presets")
    m = interp.snap.module(r["value"])
    v = interp.global_lookup(m, r["extra"], None) if m else None
    if v is None:
        raise InputError(layout.path, r["_line"], "dataset presets %s not found" % r["extra"], "check the layout row")
    mode_fn_row = layout.one("dataset-train-mode")
    mm = interp.snap.module(mode_fn_row["value"])
    mode_fn = interp.global_lookup(mm, mode_fn_row["extra"], None)
    modes_row = layout.one("modes")
    modes = sorted(c.v for c in (seq_items(interp.global_lookup(interp.snap.module(modes_row["value"]),
                                                                modes_row["extra"], None)) or []) if isinstance(c, Const))
    train_row = layout.one("mode-train")
    tm = interp.snap.module(train_row["value"])
    train_fn = interp.global_lookup(tm, train_row["extra"], None)
    b = interp.binding_for(m, r["extra"], None)
    node = b[2]
    dict_node = node.value
    key_lines = {}
    if isinstance(dict_node, ast.Dict):
        for k in dict_node.keys:
            if isinstance(k, ast.Constant):
                key_lines[k.value] = m.loc(k)
    rows = []
    for k, builder in dict_items(v) or []:
        if not isinstance(k, Const):
            continue
        name = k.v
        at = key_lines.get(name, m.loc(node))
        func = builder.func if isinstance(builder, PartialV) else builder
        bname = func.qualname if isinstance(func, FuncV) else render(func)
        rows.append((name, "builder", bname, at, ""))
        if isinstance(builder, PartialV):
            for kk, vv in sorted(builder.kwargs.items()):
                rows.append((name, "arg:" + kk, render(vv[0]), at, ""))
        # what the builder returns, for a recipe config not known here
        interp.heap, interp.steps, interp.stack = [], 0, []
        cfg = interp.new_obj("obj", None, at, origin="<recipe config>")
        try:
            res = interp.call(builder, [cfg], {}, Frame(m), None)
        except (Raised, Budget):
            res = Unknown("raises")
        how = "evaluated"
        if isinstance(res, (Unknown, Alt)) and isinstance(func, FuncV) and func.node.returns is not None:
            fr = Frame(func.mod)
            fr.locals = _ModuleLocals(interp, func.mod, None)
            try:
                rcls = interp.eval(func.node.returns, fr)
            except (Raised, Budget):
                rcls = None
            if isinstance(rcls, ClassV):
                res = interp.new_obj("obj", rcls, func.mod.loc(func.node))
                how = "return annotation"
        rows.append((name, "returns", class_name(res) if isinstance(res, Obj) else render(res), at, how))
        try:
            tmode = interp.call(mode_fn, [res], {}, Frame(mm), None)
        except (Raised, Budget):
            tmode = Unknown("raises")
        rows.append((name, "train_mode", render(tmode) if not isinstance(tmode, Unknown) else "unknown", at,
                     tmode.reason if isinstance(tmode, Unknown) else how))
        allowed = []
        for mode in modes:
            try:
                t = interp.call(train_fn, [Const(mode)], {}, Frame(tm), None)
            except (Raised, Budget):
                t = Unknown("raises")
            if isinstance(tmode, Const) and tmode.v is None:
                allowed.append(mode)
            elif isinstance(tmode, Const) and isinstance(t, Const) and t.v == tmode.v:
                allowed.append(mode)
            elif not isinstance(tmode, Const):
                allowed = None
                break
        rows.append((name, "modes", " ".join(allowed) if allowed is not None else "unknown", at,
                     "launcher rejects other modes (%s)" % mode_fn_row["extra"]))
    return rows
