"""Builtins (len, isinstance, getattr, ...) and methods of constants, lists and dicts."""

import builtins

from ..errors import Raised
from ..render import render_short
from ..values import (
    Alt, alt_value, BuiltinV, cand_key, ClassV, Const, dict_items, ExtV, FuncV, NONE, Obj, Opt, PartialV, PatternV,
    seq_items, Slot, tri, truth, Tup, Unknown, Unset, vkey,
)
from .tables import EXCEPTIONS, PURE_STR_METHODS


class BuiltinsMixin:
    """Builtins and methods."""

    # ---- builtins and methods ---------------------------------------------------------------------------

    def call_builtin(self, name, args, kwargs, fr, node):
        av = [a[0] for a in args]
        loc = self.loc(fr, node)
        if name == "isinstance" and len(av) == 2:
            return tri(self.isinstance_of(av[0], av[1]))
        if name in ("hasattr", "getattr") and len(av) >= 2 and isinstance(av[1], Const):
            obj, attr = av[0], av[1].v
            res = self.has_attr(obj, attr)
            if name == "hasattr":
                return tri(res)
            if res is True:
                return self.get_attr(obj, attr, fr, node)
            if res is False:
                if len(av) > 2:
                    return av[2]
                raise Raised("AttributeError %s" % attr)
            if isinstance(obj, Alt):
                return alt_value([Opt(self.call_builtin(name, [(o.value, None)] + args[1:], kwargs, fr, node), o.loc,
                                      o.how) for o in obj.opts], obj.reason)
            return Unknown("attribute %s not set in code on %s" % (attr, render_short(obj)))
        if name == "__dataclass_init__" and len(av) >= 2 and isinstance(av[0], ClassV) and isinstance(av[1], Obj):
            # DataclassBase.__init__(self, ...) called explicitly
            self.init_dataclass(av[1], av[0], self.class_info(av[0]), args[2:], kwargs, fr, node)
            return NONE
        if name == "setattr" and len(av) == 3 and isinstance(av[1], Const):
            self.set_attr(av[0], av[1].v, av[2], loc)
            return NONE
        if name == "len" and av:
            items = seq_items(av[0])
            if items is not None:
                return Const(len(items))
            if isinstance(av[0], Const):
                try:
                    return Const(len(av[0].v))
                except TypeError:
                    raise Raised("len of a constant")
            return Unknown("len of %s" % render_short(av[0]))
        if name in ("list", "tuple", "set", "frozenset", "sorted", "reversed") :
            if not av:
                return self.make_list([], loc) if name == "list" else Tup([], "set" if "set" in name else "tuple")
            items = seq_items(av[0], keys=True)
            if items is None:
                return Unknown("%s of %s" % (name, render_short(av[0])))
            if name == "sorted":
                if not all(isinstance(i, Const) for i in items):
                    return Unknown("sorted of values not known")
                items = [Const(x) for x in sorted(i.v for i in items)]
            if name == "reversed":
                items = list(reversed(items))
            if name in ("list", "sorted"):
                return self.make_list(list(items), loc)
            return Tup(items, "set" if "set" in name else "tuple")
        if name == "dict":
            pairs = []
            if av:
                pairs = list(dict_items(av[0]) or [])
            pairs += [(Const(k), v[0]) for k, v in kwargs.items()]
            return self.make_dict(pairs, loc)
        if name in ("any", "all") and av:
            items = seq_items(av[0])
            if items is None:
                return Unknown("%s of values not known" % name)
            ts = [truth(i) for i in items]
            if name == "any":
                return Const(True) if True in ts else (Const(False) if all(t is False for t in ts) else Unknown("any"))
            return Const(False) if False in ts else (Const(True) if all(t is True for t in ts) else Unknown("all"))
        if name in ("min", "max", "sum", "abs", "round", "int", "float", "str", "bool", "repr", "divmod", "pow",
                    "ord", "chr", "hex", "bin", "hash") :
            if len(av) == 1 and name in ("min", "max", "sum"):
                items = seq_items(av[0])
                if items is None:
                    return Unknown("%s of values not known" % name)
                av = items
                if name == "sum":
                    av = [Tup(av)]
            if all(isinstance(a, Const) for a in av) or (name == "sum" and av and isinstance(av[0], Tup) and all(
                    isinstance(i, Const) for i in av[0].items)):
                vals = [a.v for a in av] if name != "sum" else [[i.v for i in av[0].items]]
                try:
                    return Const(getattr(builtins, name)(*vals))
                except Exception as ex:  # noqa: BLE001 -- the real call raises too
                    raise Raised("%s raises %s" % (name, type(ex).__name__))
            if name == "bool" and len(av) == 1:
                return tri(truth(av[0]))
            if name == "str" and len(av) == 1 and isinstance(av[0], (ExtV,)):
                return Unknown("str of %s" % av[0].name)
            return Unknown("%s of values not known" % name)
        if name == "range":
            if all(isinstance(a, Const) and isinstance(a.v, int) for a in av):
                r = range(*[a.v for a in av])
                if len(r) > 2000:
                    return Unknown("long range")
                return Tup([Const(i) for i in r])
            return Unknown("range of values not known")
        if name == "enumerate" and av:
            items = seq_items(av[0], keys=True)
            if items is None:
                return Unknown("enumerate of values not known")
            start = av[1].v if len(av) > 1 and isinstance(av[1], Const) else 0
            return Tup([Tup([Const(i + start), x]) for i, x in enumerate(items)])
        if name == "zip":
            seqs = [seq_items(a, keys=True) for a in av]
            if any(s is None for s in seqs):
                return Unknown("zip of values not known")
            return Tup([Tup(list(t)) for t in zip(*seqs)])
        if name == "type" and len(av) == 1:
            o = av[0]
            if isinstance(o, Obj) and o.kind == "obj" and o.cls is not None:
                return o.cls
            if isinstance(o, Const):
                return BuiltinV(type(o.v).__name__)
            return Unknown("type of %s" % render_short(o))
        if name in ("print", "id", "callable", "iter", "next", "vars", "globals", "locals", "open", "input"):
            if name == "print":
                return NONE
            if name == "callable" and av:
                return tri(isinstance(av[0], (FuncV, ClassV, BuiltinV, PartialV)) or None)
            return Unknown("%s() at run time" % name)
        if name in EXCEPTIONS:
            return self.new_obj("obj", BuiltinV(name), loc)
        if name in ("int", "float", "str", "bool", "object"):
            return Unknown("%s()" % name)
        return Unknown("builtin %s" % name)

    def has_attr(self, obj, attr):
        if isinstance(obj, Obj):
            if obj.kind != "obj":
                return None
            if attr in obj.attrs:
                s = obj.attrs[attr]
                if isinstance(s.value, Alt) and any(isinstance(o.value, Unset) for o in s.value.opts):
                    return None
                return True
            if isinstance(obj.cls, ClassV):
                if self.class_attr(obj.cls, attr) is not None:
                    return True
                if not self.class_info(obj.cls).open:
                    return False
            return None
        if isinstance(obj, Const):
            return hasattr(obj.v, attr)
        if isinstance(obj, Alt):
            rs = {self.has_attr(o.value, attr) for o in obj.opts}
            return rs.pop() if len(rs) == 1 else None
        return None

    def isinstance_of(self, obj, cls):
        if isinstance(cls, Tup):
            rs = [self.isinstance_of(obj, c) for c in cls.items]
            if True in rs:
                return True
            return False if all(r is False for r in rs) else None
        if isinstance(obj, Alt):
            rs = {self.isinstance_of(o.value, cls) for o in obj.opts}
            return rs.pop() if len(rs) == 1 else None
        if isinstance(cls, BuiltinV):
            py = {"str": str, "int": int, "float": float, "bool": bool, "dict": dict, "list": list,
                  "tuple": tuple, "bytes": bytes, "set": set, "type": type}.get(cls.name)
            if isinstance(obj, Const) and py is not None:
                return isinstance(obj.v, py)
            if isinstance(obj, Obj):
                if obj.kind == "list":
                    return cls.name == "list"
                if obj.kind == "dict":
                    return cls.name == "dict"
                if isinstance(obj.cls, ClassV) and not self.class_info(obj.cls).open:
                    return False
                return None
            if isinstance(obj, Tup):
                return cls.name == ("tuple" if obj.kind == "tuple" else "set")
            return None
        if isinstance(obj, Const):
            if isinstance(cls, ClassV):
                return False
            return None
        if isinstance(obj, Obj) and obj.kind == "obj":
            if isinstance(obj.cls, ClassV):
                info = self.class_info(obj.cls)
                keys = [cand_key(k) for k in info.mro]
                if isinstance(cls, (ClassV, ExtV)) and cand_key(cls) in keys:
                    return True
                if isinstance(cls, ClassV):
                    return False
                return None if info.open else False
            if isinstance(obj.cls, ExtV):
                if isinstance(cls, ExtV) and cls.name == obj.cls.name:
                    return True
                if isinstance(cls, ClassV):
                    return False
                return None
            if obj.cls is None:  # opaque call result: its class is not known
                return None
        if isinstance(obj, Obj):
            return isinstance(cls, BuiltinV) and cls.name == obj.kind or False
        return None

    def call_method(self, recv, name, args, kwargs, fr, node):
        av = [a[0] for a in args]
        loc = self.loc(fr, node)
        if isinstance(recv, Const) and isinstance(recv.v, str) and name in PURE_STR_METHODS:
            if all(isinstance(a, Const) for a in av) and all(isinstance(v[0], Const) for v in kwargs.values()):
                try:
                    r = getattr(recv.v, name)(*[a.v for a in av], **{k: v[0].v for k, v in kwargs.items()})
                except Exception as ex:  # noqa: BLE001
                    raise Raised("str.%s raises %s" % (name, type(ex).__name__))
                if isinstance(r, list):
                    return self.make_list([Const(x) for x in r], loc)
                if isinstance(r, tuple):
                    return Tup([Const(x) for x in r])
                return Const(r)
            if name == "join" and av:
                items = seq_items(av[0])
                if items is not None and all(isinstance(i, Const) for i in items):
                    return Const(recv.v.join(i.v for i in items))
            return Unknown("str.%s of values not known" % name)
        if isinstance(recv, Obj) and recv.kind == "dict":
            items = dict_items(recv)
            if name in ("get", "pop", "setdefault"):
                if items is None or not av or not isinstance(av[0], Const):
                    return Unknown("dict.%s not known" % name)
                for k, v in reversed(items):
                    if isinstance(k, Const) and k.v == av[0].v:
                        if name == "pop":
                            recv.attrs["__items__"] = Slot(tuple((kk, vv) for kk, vv in items if kk is not k), loc)
                        return v
                d = av[1] if len(av) > 1 else NONE
                if name == "setdefault":
                    self.set_item(recv, av[0], d, loc)
                return d
            if name in ("keys", "values", "items"):
                if items is None:
                    return Unknown("dict.%s not known" % name)
                if name == "keys":
                    return Tup([k for k, _ in items])
                if name == "values":
                    return Tup([v for _, v in items])
                return Tup([Tup([k, v]) for k, v in items])
            if name == "update":
                add = list(dict_items(av[0]) or []) if av else []
                add += [(Const(k), v[0]) for k, v in kwargs.items()]
                if items is None:
                    return NONE
                for k, v in add:
                    self.set_item(recv, k, v, loc)
                return NONE
            if name == "copy":
                return self.make_dict(list(items or []), loc)
            return Unknown("dict.%s" % name)
        if isinstance(recv, Obj) and recv.kind == "list":
            cur = recv.attrs["__items__"].value
            items = list(cur) if isinstance(cur, tuple) else None
            if name in ("append", "extend", "insert", "remove", "clear", "pop"):
                if items is None:
                    return NONE
                if name == "append" and av:
                    items.append(av[0])
                elif name == "extend" and av:
                    more = seq_items(av[0])
                    if more is None:
                        recv.attrs["__items__"] = Slot(Unknown("list extended by values not known"), loc)
                        return NONE
                    items.extend(more)
                elif name == "insert" and len(av) == 2 and isinstance(av[0], Const):
                    items.insert(av[0].v, av[1])
                elif name == "clear":
                    items = []
                elif name == "pop":
                    r = items.pop(av[0].v if av and isinstance(av[0], Const) else -1) if items else NONE
                    recv.attrs["__items__"] = Slot(tuple(items), loc)
                    return r
                elif name == "remove" and av:
                    items = [i for i in items if vkey(i) != vkey(av[0])]
                recv.attrs["__items__"] = Slot(tuple(items), loc)
                return NONE
            if name == "copy":
                return self.make_list(items or [], loc)
            if name in ("index", "count") and items is not None and av and isinstance(av[0], Const):
                consts = [i.v if isinstance(i, Const) else object() for i in items]
                try:
                    return Const(getattr(consts, name)(av[0].v))
                except ValueError:
                    raise Raised("list.index")
            return Unknown("list.%s" % name)
        if isinstance(recv, Tup) and name in ("index", "count"):
            consts = [i.v if isinstance(i, Const) else object() for i in recv.items]
            if av and isinstance(av[0], Const):
                try:
                    return Const(getattr(consts, name)(av[0].v))
                except ValueError:
                    raise Raised("tuple.index")
        if isinstance(recv, PatternV) and av and isinstance(av[0], Const):
            return Unknown("regular expression match at run time")
        if isinstance(recv, Obj) and recv.origin is not None:
            return self.opaque_call(recv.origin + "." + name, name, None, args, kwargs, fr, node, recv)
        return Unknown("method %s of %s" % (name, render_short(recv)))
