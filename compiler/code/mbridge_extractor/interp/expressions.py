"""Expressions: names, attributes, subscripts, literals, comprehensions, f-strings, calls."""

import ast

from ..errors import CycleError, Raised
from ..render import render_short
from ..values import (
    Alt, alt_value, BuiltinV, ClassV, Const, const_key, dict_items, ExtV, FuncV, MethodV, ModV, NONE, Obj, Opt,
    PartialV, PatternV, seq_items, SuperV, truth, Tup, Unknown, Unset, vkey,
)
from .state import _ModuleLocals, _RaiseResult, Frame
from .syntax import _decorator_name
from .tables import BUILTIN_NAMES


class ExpressionsMixin:
    """Evaluating expressions."""

    # ---- expressions ------------------------------------------------------------------------------------

    def eval(self, e, fr):
        self.tick()
        t = type(e)
        if t is ast.Constant:
            return Const(e.value)
        if t is ast.Name:
            return self.lookup(e.id, fr, e)
        if t is ast.Attribute:
            return self.get_attr(self.eval(e.value, fr), e.attr, fr, e)
        if t is ast.Call:
            return self.eval_call(e, fr)
        if t is ast.BinOp:
            return self.binop(e.op, self.eval(e.left, fr), self.eval(e.right, fr))
        if t is ast.UnaryOp:
            return self.unop(e.op, self.eval(e.operand, fr))
        if t is ast.BoolOp:
            return self.boolop(e, fr)
        if t is ast.Compare:
            return self.compare(e, fr)
        if t is ast.IfExp:
            c = truth(self.eval(e.test, fr))
            if c is True:
                return self.eval(e.body, fr)
            if c is False:
                return self.eval(e.orelse, fr)
            reason = "condition `%s` at %s" % (ast.unparse(e.test)[:80], self.loc(fr, e))
            return alt_value([Opt(self.eval(e.body, fr), None, "set"), Opt(self.eval(e.orelse, fr), None, "set")], reason)
        if t is ast.JoinedStr:
            parts = []
            for p in e.values:
                if isinstance(p, ast.Constant):
                    parts.append(Const(p.value))
                else:
                    parts.append(self.format_value(p, fr))
            out = parts[0] if parts else Const("")
            for p in parts[1:]:
                out = self.binop(ast.Add(), out, p)
            return out if parts else Const("")
        if t is ast.FormattedValue:
            return self.format_value(e, fr)
        if t is ast.Tuple:
            return Tup(self.eval_elts(e.elts, fr))
        if t is ast.List:
            return self.make_list(self.eval_elts(e.elts, fr), self.loc(fr, e))
        if t is ast.Set:
            return Tup(self.eval_elts(e.elts, fr), "set")
        if t is ast.Dict:
            pairs = []
            for k, v in zip(e.keys, e.values):
                if k is None:
                    sub = dict_items(self.eval(v, fr))
                    if sub is None:
                        return Unknown("** of a value that is not a dict at %s" % self.loc(fr, e))
                    for sk, sv in sub:
                        pairs = [(pk, pv) for pk, pv in pairs if vkey(pk) != vkey(sk)] + [(sk, sv)]
                else:
                    kv = self.eval(k, fr)
                    pairs = [(pk, pv) for pk, pv in pairs if vkey(pk) != vkey(kv)] + [(kv, self.eval(v, fr))]
            return self.make_dict(pairs, self.loc(fr, e))
        if t is ast.Subscript:
            return self.subscript(self.eval(e.value, fr), e.slice, fr, e)
        if t is ast.Lambda:
            fn = ast.FunctionDef(name="<lambda>", args=e.args, body=[ast.Return(value=e.body, lineno=e.lineno)],
                                 decorator_list=[], lineno=e.lineno)
            return FuncV(fr.mod, fn, (fr.func.qualname if fr.func else fr.mod.name) + ".<lambda>", closure=fr)
        if t in (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp):
            return self.comprehension(e, fr)
        if t is ast.Starred:
            return self.eval(e.value, fr)
        if t is ast.NamedExpr:
            v = self.eval(e.value, fr)
            self.assign(e.target, v, fr, e)
            return v
        if t is ast.Slice:
            lo = self.eval(e.lower, fr) if e.lower else NONE
            hi = self.eval(e.upper, fr) if e.upper else NONE
            st = self.eval(e.step, fr) if e.step else NONE
            if all(isinstance(x, Const) for x in (lo, hi, st)):
                return Const(slice(lo.v, hi.v, st.v))
            return Unknown("computed slice")
        return Unknown("unsupported expression %s at %s" % (t.__name__, self.loc(fr, e)))

    def eval_elts(self, elts, fr):
        out = []
        for x in elts:
            if isinstance(x, ast.Starred):
                items = seq_items(self.eval(x.value, fr))
                if items is None:
                    out.append(Unknown("unpacked sequence at %s" % self.loc(fr, x)))
                else:
                    out.extend(items)
            else:
                out.append(self.eval(x, fr))
        return out

    def format_value(self, p, fr):
        v = self.eval(p.value, fr)
        spec = ""
        if p.format_spec is not None:
            sv = self.eval(p.format_spec, fr)
            if not isinstance(sv, Const):
                return Unknown("computed format spec")
            spec = sv.v
        if isinstance(v, Const):
            try:
                x = v.v
                if p.conversion == ord("r"):
                    x = repr(x)
                elif p.conversion == ord("s"):
                    x = str(x)
                return Const(format(x, spec))
            except (ValueError, TypeError):
                return Unknown("bad format")
        if isinstance(v, Alt):
            return alt_value([Opt(Const(format(o.value.v, spec)) if isinstance(o.value, Const) else
                                  Unknown("formatted value"), o.loc, o.how) for o in v.opts], v.reason)
        if isinstance(v, Unknown):
            return v
        return Unknown("text of %s" % render_short(v))

    def comprehension(self, e, fr):
        results = []
        inner = Frame(fr.mod, func=fr.func, closure=fr, cls=fr.cls, selfobj=fr.selfobj)
        inner.locals = {}

        def rec(gi):
            if gi == len(e.generators):
                if isinstance(e, ast.DictComp):
                    results.append((self.eval(e.key, inner), self.eval(e.value, inner)))
                else:
                    results.append(self.eval(e.elt, inner))
                return True
            g = e.generators[gi]
            items = seq_items(self.eval(g.iter, inner if gi else fr), keys=True)
            if items is None:
                return False
            for it in items:
                self.assign(g.target, it, inner, g.target)
                ok = True
                for cond in g.ifs:
                    c = truth(self.eval(cond, inner))
                    if c is None:
                        return False
                    if not c:
                        ok = False
                        break
                if ok and not rec(gi + 1):
                    return False
            return True

        if not rec(0):
            return Unknown("comprehension over a value not known at %s" % self.loc(fr, e))
        if isinstance(e, ast.DictComp):
            return self.make_dict(results, self.loc(fr, e))
        if isinstance(e, ast.SetComp):
            return Tup(results, "set")
        if isinstance(e, ast.GeneratorExp):
            return Tup(results)
        return self.make_list(results, self.loc(fr, e))

    def lookup(self, name, fr, node):
        f = fr
        while f is not None:
            loc = f.locals
            if isinstance(loc, _ModuleLocals):
                v = loc.get(name)
                if v is not None:
                    return v
            elif name in loc:
                return loc[name]
            f = f.closure
        try:
            v = self.global_lookup(fr.mod, name, None)
        except CycleError as ce:
            if self.strict:
                raise
            return Unknown("circular import: %s" % ce.what)
        if v is not None:
            return v
        if name in BUILTIN_NAMES:
            return BuiltinV(name)
        return Unknown("name %s is not defined (%s)" % (name, self.loc(fr, node)))

    def get_attr(self, v, name, fr, node):
        if isinstance(v, Alt):
            return alt_value([Opt(self.get_attr(o.value, name, fr, node), o.loc, o.how) for o in v.opts], v.reason)
        if isinstance(v, Obj):
            if v.kind == "obj":
                s = v.attrs.get(name)
                if s is not None:
                    return s.value
                if isinstance(v.cls, ClassV):
                    ca = self.class_attr(v.cls, name)
                    if ca is not None:
                        return self.class_member(v.cls, ca, v, fr, node)
                    if not self.class_info(v.cls).open:
                        raise Raised("%s has no attribute %s" % (v.cls.qualname, name))
                return Unset(v, name)
            return MethodV(v, name)
        if isinstance(v, ModV):
            try:
                return self.module_value(v.name, name)
            except CycleError as ce:
                return Unknown("circular import: %s" % ce.what)
        if isinstance(v, ExtV):
            return ExtV(v.name + "." + name)
        if isinstance(v, (FuncV, ClassV)) and name in ("__name__", "__qualname__"):
            return Const(v.node.name if name == "__name__" else v.qualname.rpartition(".")[2])
        if isinstance(v, ClassV):
            ca = self.class_attr(v, name)
            if ca is None and name == "__init__" and self.class_info(v).dataclass:
                return PartialV(BuiltinV("__dataclass_init__"), [(v, None)], {})
            if ca is None and name == "__dataclass_fields__" and self.class_info(v).dataclass:
                return self.make_dict([(Const(n), Unknown("dataclass Field")) for n, _, _ in self.class_info(v).fields],
                                      v.mod.loc(v.node))
            if ca is None:
                return Unknown("class %s has no attribute %s in the snapshot" % (v.qualname, name))
            owner, n = ca
            if isinstance(n, ast.FunctionDef):
                if any(_decorator_name(d) == "classmethod" for d in n.decorator_list):
                    return FuncV(owner.mod, n, owner.qualname + "." + n.name, owner=owner, bound=v)
                return FuncV(owner.mod, n, owner.qualname + "." + n.name, owner=owner)
            return self.class_member(v, ca, None, fr, node)
        if isinstance(v, SuperV):
            ca = self.class_attr(v.obj.cls if isinstance(v.obj, Obj) and isinstance(v.obj.cls, ClassV) else v.cls,
                                 name, start_after=v.cls)
            if ca is None:
                return ExtV("super." + name)
            return self.class_member(v.cls, ca, v.obj, fr, node)
        if isinstance(v, (Const, Tup)):
            return MethodV(v, name)
        if isinstance(v, Unknown):
            return v
        if isinstance(v, Unset):
            return Unknown("attribute %s not set in code on %s" % (v.name, render_short(v.owner)))
        if isinstance(v, PatternV):
            return MethodV(v, name)
        return Unknown("attribute %s of %s" % (name, render_short(v)))

    def class_member(self, cls, ca, obj, fr, node):
        owner, n = ca
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            decos = [_decorator_name(d) for d in n.decorator_list]
            if "property" in decos or "cached_property" in decos:
                if obj is None:
                    return Unknown("property of a class")
                fn = FuncV(owner.mod, n, owner.qualname + "." + n.name, owner=owner, bound=obj)
                res = self.call_function(fn, [], {}, node, fr)
                if isinstance(res, _RaiseResult):
                    raise Raised(res.reason)
                return res
            if "staticmethod" in decos:
                return FuncV(owner.mod, n, owner.qualname + "." + n.name, owner=owner)
            if "classmethod" in decos:
                return FuncV(owner.mod, n, owner.qualname + "." + n.name, owner=owner, bound=cls)
            return FuncV(owner.mod, n, owner.qualname + "." + n.name, owner=owner, bound=obj)
        cfr = Frame(owner.mod)
        cfr.locals = _ModuleLocals(self, owner.mod, None)
        if isinstance(n, ast.AnnAssign):
            if n.value is None:
                return Unset(obj, n.target.id) if obj is not None else Unknown("field without default")
            d = self.field_default(owner, n)
            return d if d is not None else Unknown("field default")
        return self.eval(n.value, cfr)

    def subscript(self, v, sl, fr, node):
        key = self.eval(sl, fr)
        if isinstance(v, Alt):
            return alt_value([Opt(self.subscript_v(o.value, key), o.loc, o.how) for o in v.opts], v.reason)
        return self.subscript_v(v, key)

    def subscript_v(self, v, key):
        if isinstance(v, Obj) and v.kind == "dict":
            items = dict_items(v)
            ck = const_key(key)
            if items is None or ck is None:
                return Unknown("item of a dict not known")
            unknown_key = False
            for k, val in reversed(items):
                kk = const_key(k)
                if kk is None:
                    unknown_key = True
                elif kk == ck:
                    return val
            if unknown_key:
                return Unknown("item of a dict with computed keys")
            raise Raised("KeyError %s" % render_short(key))
        items = seq_items(v)
        if items is not None and isinstance(key, Const):
            try:
                r = items[key.v]
            except (IndexError, TypeError):
                raise Raised("IndexError")
            if isinstance(key.v, slice):
                return Tup(r)
            return r
        if isinstance(v, Const) and isinstance(key, Const):
            try:
                return Const(v.v[key.v])
            except Exception:  # noqa: BLE001
                raise Raised("index error")
        if isinstance(v, (ExtV,)):
            return Unknown("subscript of %s" % v.name)
        if isinstance(v, Unknown):
            return v
        return Unknown("item of %s" % render_short(v))

    def eval_call(self, e, fr):
        fn_expr = e.func
        if isinstance(fn_expr, ast.Name) and fn_expr.id == "super" and not e.args:
            if fr.cls is not None:
                return SuperV(fr.cls, fr.selfobj)
            return Unknown("super() outside a method")
        f = self.eval(fn_expr, fr)
        args = []
        for a in e.args:
            if isinstance(a, ast.Starred):
                items = seq_items(self.eval(a.value, fr))
                if items is None:
                    return Unknown("call with *args not known at %s" % self.loc(fr, e))
                args.extend((x, self.loc(fr, a)) for x in items)
            else:
                args.append((self.eval(a, fr), self.loc(fr, a)))
        kwargs = {}
        for k in e.keywords:
            if k.arg is None:
                items = dict_items(self.eval(k.value, fr))
                if items is None:
                    return Unknown("call with **kwargs not known at %s" % self.loc(fr, e))
                for kk, vv in items:
                    if isinstance(kk, Const):
                        kwargs[kk.v] = (vv, self.loc(fr, k.value))
            else:
                kwargs[k.arg] = (self.eval(k.value, fr), self.loc(fr, k.value))
        try:
            return self.call(f, args, kwargs, fr, e)
        except CycleError as ce:
            if self.strict:
                raise
            return Unknown("circular import: %s" % ce.what)
