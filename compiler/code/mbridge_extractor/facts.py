"""Facts of one recipe function: evaluate it with its default arguments and read each field's config
path, with its state (value, default, alternatives, unknown) and where it was set."""

import ast
import re

from .errors import Budget, Raised
from .interp.state import _RaiseResult, Frame
from .render import class_name, render, render_short, type_name
from .snapshot import Module
from .values import Alt, ClassV, Const, FuncV, Obj, Opt, options, PartialV, Unknown, Unset


def parse_default(text):
    if text == "":
        return None
    try:
        return Const(ast.literal_eval(text))
    except (ValueError, SyntaxError):
        return Const(text)


class Fact:
    __slots__ = ("state", "values", "at", "note")

    def __init__(self, state, values, at, note):
        self.state, self.values, self.at, self.note = state, values, at, note


def evaluate_recipe(interp, f, kwargs=None):
    """Call a recipe function with its default arguments (and `kwargs`, {name: V}): (result value, reason when
    it raises)."""
    interp.heap = []
    interp.steps = 0
    interp.stack = []
    try:
        res = interp.call_function(f, [], {k: (v, None) for k, v in (kwargs or {}).items()}, None, None)
    except Budget:
        return Unknown("evaluation budget exceeded in %s" % f.qualname), None
    finally:
        interp.stack = []
    if isinstance(res, _RaiseResult):
        return Unknown("the recipe raises: %s" % res.reason), res.reason
    return res, None


def navigate(interp, root, spec):
    """Opts of the value at spec.path under root (an Opt list; Unset where the code never set it)."""
    segs = [s for s in spec.path.split(".") if s] if spec.path not in ("", "-") else []
    vias = {}
    if spec.via:
        for part in spec.via.split(","):
            p, _, fn = part.partition("=")
            vias[p.strip()] = fn.strip()
    cur = [Opt(root, None, "set")]
    walked = []
    for seg in segs:
        prefix = ".".join(walked)
        nxt = []
        for o in cur:
            v = o.value
            if prefix in vias and isinstance(v, Const) and isinstance(v.v, str):
                v = via_call(interp, vias[prefix], v)
            for p in options(v):
                pv = p.value
                ploc = p.loc or o.loc
                if prefix in vias and isinstance(pv, Const) and isinstance(pv.v, str):
                    pv = via_call(interp, vias[prefix], pv)
                if isinstance(pv, Obj) and pv.kind == "obj":
                    s = pv.attrs.get(seg)
                    if s is None:
                        if isinstance(pv.cls, ClassV):
                            ca = interp.class_attr(pv.cls, seg)
                            if ca is not None and not isinstance(ca[1], ast.FunctionDef):
                                try:
                                    val = interp.class_member(pv.cls, ca, pv, Frame(ca[0].mod), ca[1])
                                except (Raised, Budget):
                                    val = Unknown("class attribute")
                                nxt.append(Opt(val, ca[0].mod.loc(ca[1]), "default"))
                                continue
                        nxt.append(Opt(Unset(pv, seg), pv.loc, "unset"))
                    else:
                        for q in options(s.value):
                            nxt.append(Opt(q.value, q.loc or s.loc, q.how if isinstance(s.value, Alt) else s.how))
                elif isinstance(pv, Const) and pv.v is None:
                    nxt.append(Opt(Unknown("%s is None" % (prefix or "the config")), ploc, "set"))
                elif isinstance(pv, Unknown):
                    nxt.append(Opt(pv, ploc, "set"))
                elif isinstance(pv, Unset):
                    nxt.append(Opt(Unset(pv.owner, seg), ploc, "unset"))
                else:
                    nxt.append(Opt(Unknown("%s is %s, not an object" % (prefix or "the config", render_short(pv))),
                                   ploc, "set"))
        cur = nxt
        walked.append(seg)
    # a `via` on the full path (rare) is applied too
    full = ".".join(walked)
    if full in vias:
        cur = [Opt(via_call(interp, vias[full], o.value), o.loc, o.how) if isinstance(o.value, Const) and isinstance(
            o.value.v, str) else o for o in cur]
    return cur


def via_call(interp, qualname, value):
    mod, _, name = qualname.rpartition(".")
    try:
        fn = interp.module_value(mod, name)
        return interp.call(fn, [value], {}, Frame(interp.snap.module(mod) or Module.__new__(Module)), None)
    except (Raised, Budget) as e:
        return Unknown("%s(%s) raises" % (qualname, render_short(value)))


def view_values(interp, spec, opts):
    """Apply the field's view to each alternative: [(V, loc, how)]."""
    out = []
    for o in opts:
        v = o.value
        if spec.view == "value":
            out.append((v, o.loc, o.how))
        elif spec.view == "class":
            if isinstance(v, (Unknown, Unset)) or (isinstance(v, Const) and v.v is None):
                out.append((v, o.loc, o.how))
            else:
                out.append((Const(class_name(v)), o.loc, o.how))
        elif spec.view == "made-by":
            if isinstance(v, Obj):
                chain = [q for q in v.made_by[1:]]
                out.append((Const(" > ".join(chain) if chain else v.made_by[0] if v.made_by else ""), v.loc, "set"))
            else:
                out.append((v if isinstance(v, Unknown) else Unknown("not an object"), o.loc, o.how))
        elif spec.view == "layout-pairs":
            out.append((layout_pairs(interp, v) if isinstance(v, (FuncV, PartialV)) else v, o.loc, o.how))
        elif spec.view.startswith("arg:"):
            _, callee, param = spec.view.split(":", 2)
            found = None
            if isinstance(v, Obj):
                for q, bound in v.calls:
                    if q == callee or q.endswith("." + callee):
                        found = bound.get(param)
            if found is None:
                if isinstance(v, (Unknown,)):
                    out.append((v, o.loc, o.how))
                else:
                    out.append((Unknown("not made by %s" % callee.rpartition(".")[2]), o.loc, "na"))
            else:
                out.append((found, o.loc, o.how))
        else:
            out.append((Unknown("unknown view %s" % spec.view), o.loc, o.how))
    return out


# The (PP, VP) pairs a pipeline layout builder is asked for: PP 1-64, VP None (1) and 2-8.
LAYOUT_PP = range(1, 65)
LAYOUT_VP = (None, 2, 3, 4, 5, 6, 7, 8)


def layout_pairs(interp, f):
    """The (PP, VP) pairs a layout builder (a function, or a partial of one, called as builder(pp, vp))
    returns a layout for without raising, as "PPxVP" words; Unknown when a call cannot be decided. The
    interpreter's heap, stack and step count are kept as they were (the recipe's result is read after)."""
    func, pre_args, pre_kwargs = (f.func, list(f.args), dict(f.kwargs)) if isinstance(f, PartialV) else (f, [], {})
    if not isinstance(func, FuncV):
        return Unknown("layout builder is not a snapshot function")
    key = (func.qualname, tuple(sorted((k, render(v[0])) for k, v in pre_kwargs.items())),
           tuple(render(a[0]) for a in pre_args))
    cache = interp.__dict__.setdefault("_layout_pairs", {})
    if key in cache:
        return cache[key]
    heap, steps, stack = list(interp.heap), interp.steps, interp.stack
    state = interp.capture()
    ok = []
    result = None
    try:
        for pp in LAYOUT_PP:
            for vp in LAYOUT_VP:
                interp.steps = 0
                interp.stack = []
                try:
                    r = interp.call_function(func, pre_args + [(Const(pp), None), (Const(vp), None)], pre_kwargs,
                                             None, None)
                except Budget:
                    result = Unknown("evaluation budget exceeded in %s" % func.qualname)
                    break
                if isinstance(r, _RaiseResult):
                    continue
                if isinstance(r, (Unknown, Alt)):
                    result = Unknown("%s(%d, %s) cannot be decided" % (func.qualname, pp, vp))
                    break
                ok.append("%dx%d" % (pp, vp or 1))
            if result is not None:
                break
    finally:
        interp.heap, interp.steps, interp.stack = heap, steps, stack
        interp.restore(state)
    if result is None:
        result = Const(" ".join(ok))
    cache[key] = result
    return result


def make_fact(spec, vals):
    """Turn the viewed alternatives into a Fact with a state."""
    rendered = []
    for v, loc, how in vals:
        if isinstance(v, Unset):
            if spec.default != "":
                owner = v.owner
                note = "not set in code; default %s from %s" % (spec.default, spec.default_source)
                rendered.append(("default", parse_default(spec.default), owner.loc if isinstance(owner, Obj) else loc,
                                 note))
            else:
                rendered.append(("unknown", None, loc,
                                 "not set in code on %s" % render_short(v.owner) if isinstance(v.owner, Obj)
                                 else "not set in code"))
        elif isinstance(v, Unknown):
            rendered.append(("unknown", None, loc, v.reason))
        elif how == "na":
            rendered.append(("unknown", None, loc, "not applicable"))
        else:
            rendered.append(("default" if how == "default" else "value", v, loc,
                             "dataclass default" if how == "default" else ""))
    # dedupe identical alternatives
    uniq = []
    seen = set()
    for r in rendered:
        k = (r[0] if r[0] != "unknown" else "u", render(r[1]) if r[1] is not None else r[3], type_name(r[1]) if r[1]
             is not None else "")
        if k in seen:
            continue
        seen.add(k)
        uniq.append(r)
    if len(uniq) == 1:
        st, v, loc, note = uniq[0]
        return Fact(st, [v] if v is not None else [], loc or "", note)
    uniq.sort(key=lambda r: (render(r[1]) if r[1] is not None else "\uffff" + r[3], r[2] or ""))
    return Fact("alternatives", [r[1] if r[1] is not None else Unknown(r[3]) for r in uniq],
                "|".join(r[2] or "" for r in uniq), "")


def recipe_facts(interp, f, specs, kwargs=None):
    """Each spec's Fact of recipe function f called with its defaults (and `kwargs`); with no kwargs also the
    facts of the function itself: `params` (its signature) and `raises` (false, or why every path raises)."""
    res, raised = evaluate_recipe(interp, f, kwargs)
    facts = {}
    for spec in specs:
        opts = navigate(interp, res, spec)
        fact = make_fact(spec, view_values(interp, spec, opts))
        if fact.state == "alternatives":
            fact.note = alternatives_reason(res, spec, opts) or "alternatives"
        facts[spec.field] = fact
    if kwargs is None:
        facts["params"] = Fact("value", [Const(signature_text(f.node))], f.mod.loc(f.node), "")
        if raised is None:
            facts["raises"] = Fact("value", [Const(False)], f.mod.loc(f.node), "")
        else:
            one = ONE_RAISE.fullmatch(raised)
            where = RAISE_AT.findall(raised)
            facts["raises"] = Fact("value", [Const(one.group(1) if one else raised)],
                                   where[0] if where else f.mod.loc(f.node), "")
    return facts


RAISE_AT = re.compile(r" at (\S+:\d+)")
ONE_RAISE = re.compile(r"raises (.+) at \S+:\d+")  # the reason when a single raise statement ends every path


def signature_text(fnode):
    """A function's parameters as written: `a, b=1, *args, c=2, **kwargs` (annotations left out)."""
    a = fnode.args
    out = []
    positional = a.posonlyargs + a.args
    first_default = len(positional) - len(a.defaults)
    for i, p in enumerate(positional):
        out.append(p.arg + ("=" + ast.unparse(a.defaults[i - first_default]) if i >= first_default else ""))
    if a.vararg is not None:
        out.append("*" + a.vararg.arg)
    elif a.kwonlyargs:
        out.append("*")
    for p, d in zip(a.kwonlyargs, a.kw_defaults):
        out.append(p.arg + ("=" + ast.unparse(d) if d is not None else ""))
    if a.kwarg is not None:
        out.append("**" + a.kwarg.arg)
    return ", ".join(out)


def parameter_names(fnode):
    """The names a call can pass by keyword, and whether it takes **kwargs."""
    a = fnode.args
    return {p.arg for p in a.args + a.kwonlyargs}, a.kwarg is not None


def alternatives_reason(root, spec, opts):
    """Why a field has alternatives: the reasons recorded on the Alt values along its path."""
    reasons = []
    segs = [s for s in spec.path.split(".") if s]
    cur = [root]
    for seg in [None] + segs:
        nxt = []
        for v in cur:
            if isinstance(v, Alt):
                if v.reason and v.reason not in reasons:
                    reasons.append(v.reason)
            for o in options(v):
                if seg is None:
                    nxt.append(o.value)
                    continue
                if isinstance(o.value, Obj) and seg in o.value.attrs:
                    nxt.append(o.value.attrs[seg].value)
        cur = nxt if seg is not None else [o.value for v in cur for o in options(v)]
    for v in cur:
        if isinstance(v, Alt) and v.reason and v.reason not in reasons:
            reasons.append(v.reason)
    return "; ".join(reasons)
