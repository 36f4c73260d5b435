"""Operators: arithmetic, boolean, comparison, identity and membership on abstract values."""

import ast

from ..errors import Raised
from ..render import render_short
from ..values import (
    Alt, alt_value, ClassV, Const, const_key, dict_items, is_none, Obj, Opt, options, seq_items, tri, truth, Tup,
    Unknown, Unset, vkey,
)
from .tables import BINOPS, CMPOPS


class OperatorsMixin:
    """Operators."""

    # ---- operators --------------------------------------------------------------------------------------

    def binop(self, op, a, b):
        if isinstance(a, Alt) or isinstance(b, Alt):
            oa, ob = options(a), options(b)
            if len(oa) * len(ob) > self.MAX_ALTS:
                return Unknown("too many alternatives")
            reason = "; ".join(x.reason for x in (a, b) if isinstance(x, Alt) and x.reason)
            return alt_value([Opt(self.binop(op, x.value, y.value), None, "set") for x in oa for y in ob], reason)
        if isinstance(a, Const) and isinstance(b, Const):
            try:
                return Const(BINOPS[type(op)](a.v, b.v))
            except Exception as ex:  # noqa: BLE001 -- e.g. ZeroDivisionError: the real code raises too
                raise Raised("%s raises %s" % (type(op).__name__, type(ex).__name__))
        if isinstance(a, Unknown):
            return a
        if isinstance(b, Unknown):
            return b
        if isinstance(op, ast.Add):
            la, lb = seq_items(a), seq_items(b)
            if la is not None and lb is not None:
                if isinstance(a, Tup):
                    return Tup(list(la) + list(lb))
                return self.make_list(list(la) + list(lb), a.loc if isinstance(a, Obj) else None)
        if isinstance(op, ast.BitOr):
            da, db = dict_items(a), dict_items(b)
            if da is not None and db is not None:
                pairs = list(da)
                for k, v in db:
                    pairs = [(pk, pv) for pk, pv in pairs if vkey(pk) != vkey(k)] + [(k, v)]
                return self.make_dict(pairs, None)
        if isinstance(op, ast.Mult):
            for s, n in ((a, b), (b, a)):
                items = seq_items(s)
                if items is not None and isinstance(n, Const) and isinstance(n.v, int):
                    return self.make_list(list(items) * n.v, None) if isinstance(s, Obj) else Tup(list(items) * n.v)
        if isinstance(a, Unset) or isinstance(b, Unset):
            u = a if isinstance(a, Unset) else b
            return Unknown("attribute %s not set in code on %s" % (u.name, render_short(u.owner)))
        return Unknown("%s of %s and %s" % (type(op).__name__, render_short(a), render_short(b)))

    def unop(self, op, a):
        if isinstance(a, Alt):
            return alt_value([Opt(self.unop(op, o.value), o.loc, o.how) for o in a.opts], a.reason)
        if isinstance(op, ast.Not):
            return tri(None if truth(a) is None else not truth(a))
        if isinstance(a, Const):
            try:
                return Const({ast.USub: lambda x: -x, ast.UAdd: lambda x: +x, ast.Invert: lambda x: ~x}[type(op)](a.v))
            except Exception:  # noqa: BLE001
                raise Raised("unary operator raises")
        if isinstance(a, Unknown):
            return a
        return Unknown("operator on %s" % render_short(a))

    def boolop(self, e, fr):
        is_and = isinstance(e.op, ast.And)
        last = None
        pending_unknown = []
        for x in e.values:
            v = self.eval(x, fr)
            t = truth(v)
            last = v
            if t is None:
                pending_unknown.append(v)
                continue
            if is_and and t is False:
                if pending_unknown:
                    return alt_value([Opt(v, None, "set")] + [Opt(p, None, "set") for p in pending_unknown],
                                     "condition `%s` at %s" % (ast.unparse(e)[:80], self.loc(fr, e)))
                return v
            if not is_and and t is True:
                if pending_unknown:
                    return Unknown("condition `%s` at %s" % (ast.unparse(e)[:80], self.loc(fr, e)))
                return v
        if pending_unknown:
            return Unknown("condition `%s` at %s" % (ast.unparse(e)[:80], self.loc(fr, e)))
        return last

    def compare(self, e, fr):
        left = self.eval(e.left, fr)
        result = Const(True)
        for op, rexpr in zip(e.ops, e.comparators):
            right = self.eval(rexpr, fr)
            r = self.cmp(op, left, right)
            if isinstance(r, Const) and r.v is False:
                return r
            if not (isinstance(r, Const) and r.v is True):
                result = r if isinstance(result, Const) else result
            left = right
        if not isinstance(result, Const):
            return Unknown("comparison `%s` at %s" % (ast.unparse(e)[:80], self.loc(fr, e)))
        return result

    def cmp(self, op, a, b):
        if isinstance(a, Alt) or isinstance(b, Alt):
            rs = {vkey(self.cmp(op, x.value, y.value)) for x in options(a) for y in options(b)}
            if len(rs) == 1:
                k = rs.pop()
                if k[0] == "c":
                    return Const(k[2])
            return Unknown("comparison")
        t = type(op)
        if t in (ast.Is, ast.IsNot):
            same = None
            if isinstance(a, Const) and isinstance(b, Const):
                same = a.v is b.v or (a.v is None and b.v is None) or (type(a.v) is type(b.v) and a.v == b.v and
                                                                       isinstance(a.v, (bool, type(None))))
            elif isinstance(b, Const) and b.v is None:
                same = is_none(a)
            elif isinstance(a, Const) and a.v is None:
                same = is_none(b)
            elif isinstance(a, Obj) and isinstance(b, Obj):
                same = a is b
            if same is None:
                return Unknown("identity")
            return Const(same if t is ast.Is else not same)
        if t in (ast.In, ast.NotIn):
            r = self.contains(b, a)
            if r is None:
                return Unknown("membership")
            return Const(r if t is ast.In else not r)
        if isinstance(a, Const) and isinstance(b, Const):
            try:
                return Const(CMPOPS[t](a.v, b.v))
            except Exception:  # noqa: BLE001
                raise Raised("comparison raises")
        if t in (ast.Eq, ast.NotEq):
            eq = None
            if isinstance(a, Tup) and isinstance(b, Tup):
                eq = vkey(a) == vkey(b) if all(isinstance(i, Const) for i in a.items + b.items) else None
            elif (isinstance(a, Obj) and isinstance(b, Const)) or (isinstance(b, Obj) and isinstance(a, Const)):
                o = a if isinstance(a, Obj) else b
                if o.kind == "obj" and isinstance(o.cls, ClassV) and not self.class_info(o.cls).open:
                    eq = False
                if o.kind in ("list", "dict"):
                    eq = False
            elif isinstance(a, Obj) and isinstance(b, Obj) and a is b:
                eq = True
            if eq is None:
                return Unknown("equality")
            return Const(eq if t is ast.Eq else not eq)
        return Unknown("comparison")

    def contains(self, container, item):
        if isinstance(container, Const) and isinstance(container.v, str):
            if isinstance(item, Const) and isinstance(item.v, str):
                return item.v in container.v
            return None
        if isinstance(container, Obj) and container.kind == "dict":
            items = dict_items(container)
            keys = [k for k, _ in items] if items is not None else None
        else:
            keys = seq_items(container)
        if keys is None:
            return None
        ck = const_key(item)
        if ck is None:
            return None
        unknown = False
        for k in keys:
            kk = const_key(k)
            if kk is None:
                unknown = True
            elif kk == ck or (kk[0] == ck[0] == "c" and kk[1] == ck[1]):
                return True
        return None if unknown else False
