"""Recipe names parsed with the launcher's own benchmark pattern, mode rule, family rule and
step rule."""

import re

from .errors import Budget, InputError, Raised
from .interp.state import Frame
from .render import render
from .values import Const, FuncV, PatternV


def name_parser(interp, layout):
    r = layout.one("name-pattern")
    m = interp.snap.module(r["value"])
    v = interp.global_lookup(m, r["extra"], None) if m else None
    if not isinstance(v, PatternV):
        raise InputError(layout.path, r["_line"], "%s is not a re.compile() of a constant" % r["extra"],
                         "check the layout row")
    try:
        rx = re.compile(v.pattern)
    except re.error as e:
        raise InputError(m.rel, 1, "name pattern does not compile: %s" % e, "the launcher's regex is broken")
    suffix = layout.one("recipe-suffix")["value"]
    fam = layout.one("family-rule")
    fm = interp.snap.module(fam["value"])
    fam_fn = interp.global_lookup(fm, fam["extra"], None) if fm else None
    mode_r = layout.one("mode-rule")
    mm = interp.snap.module(mode_r["value"])
    mode_fn = interp.global_lookup(mm, mode_r["extra"], None) if mm else None
    step_rows = layout.all("step-rule")
    sm = interp.snap.module(step_rows[0]["value"]) if step_rows else None
    step_fn = interp.global_lookup(sm, step_rows[0]["extra"], None) if sm else None

    def run(fn, name, mod):
        if not isinstance(fn, FuncV):
            return ""
        interp.heap, interp.steps, interp.stack = [], 0, []
        try:
            v2 = interp.call(fn, [Const(name)], {}, Frame(mod), None)
        except (Raised, Budget):
            return ""
        return render(v2) if isinstance(v2, Const) and v2.v is not None else ""

    def parse(name):
        out = {"mode": run(mode_fn, name, mm), "family": run(fam_fn, name, fm), "step": run(step_fn, name, sm)}
        mt = rx.search(name)
        if mt is None:
            return out
        gd = mt.groupdict()
        last_end = max(mt.end(g) for g in gd if mt.end(g) >= 0) if gd else mt.start()
        tail = name[last_end:mt.end()]
        if tail.endswith(suffix):
            tail = tail[: len(tail) - len(suffix)]
        out.update({"model": name[:mt.start()], "task": gd.get("task", ""), "gpus": gd.get("num_gpus", ""),
                    "hardware": gd.get("hardware", ""), "precision": gd.get("precision", ""),
                    "variant": tail.lstrip("_")})
        return out

    return parse
