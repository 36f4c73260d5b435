"""Abstract values of the interpreter (constants, tuples, heap objects, functions, classes, modules,
external names, unknowns, alternatives) and the pure functions over them (identity, truth, items)."""


class V:
    """Base of every abstract value."""

    __slots__ = ()


class Const(V):
    """A Python constant: int, float, str, bool, None, bytes."""

    __slots__ = ("v",)

    def __init__(self, v):
        self.v = v


class Tup(V):
    """An immutable sequence (tuple, or a set/frozenset with kind 'set') of abstract values."""

    __slots__ = ("items", "kind")

    def __init__(self, items, kind="tuple"):
        self.items = tuple(items)
        self.kind = kind


class Unknown(V):
    """A value the interpreter cannot compute, with the reason why."""

    __slots__ = ("reason",)

    def __init__(self, reason):
        self.reason = reason


class Unset(V):
    """An attribute the code never set on an object whose class is (partly) outside the snapshot."""

    __slots__ = ("owner", "name")

    def __init__(self, owner, name):
        self.owner, self.name = owner, name


class Opt:
    """One alternative of an Alt: a value, where it was set, and whether it is a dataclass default."""

    __slots__ = ("value", "loc", "how")

    def __init__(self, value, loc, how):
        self.value, self.loc, self.how = value, loc, how


class Alt(V):
    """A value that depends on a condition the interpreter cannot decide: every alternative, and why."""

    __slots__ = ("opts", "reason")

    def __init__(self, opts, reason):
        self.opts, self.reason = tuple(opts), reason


class Slot:
    """An attribute of an object: its value, the `path:line` that set it, how (set|default)."""

    __slots__ = ("value", "loc", "how")

    def __init__(self, value, loc, how="set"):
        self.value, self.loc, self.how = value, loc, how


class Obj(V):
    """A heap object: an instance (snapshot class, external class or opaque call result), a list or a dict.

    kind: 'obj' | 'list' | 'dict'.  cls: ClassV, ExtV or None (opaque).  origin: text of the call that made
    an opaque object; calls: the (callee qualname, bound arguments) chain of that call; made_by: the
    functions on the call stack (outermost first) when it was constructed; loc: where it was created."""

    __slots__ = ("kind", "cls", "attrs", "origin", "calls", "made_by", "loc", "__weakref__")

    def __init__(self, kind, cls, loc, made_by=(), origin=None, calls=()):
        self.kind, self.cls, self.loc, self.made_by = kind, cls, loc, tuple(made_by)
        self.origin, self.calls = origin, tuple(calls)
        self.attrs = {}


class FuncV(V):
    """A function defined in the snapshot (possibly a bound method or a closure)."""

    __slots__ = ("mod", "node", "owner", "bound", "closure", "qualname")

    def __init__(self, mod, node, qualname, owner=None, bound=None, closure=None):
        self.mod, self.node, self.qualname = mod, node, qualname
        self.owner, self.bound, self.closure = owner, bound, closure


class ClassV(V):
    """A class defined in the snapshot."""

    __slots__ = ("mod", "node", "qualname", "info")

    def __init__(self, mod, node, qualname):
        self.mod, self.node, self.qualname, self.info = mod, node, qualname, None


class ModV(V):
    """A module (of the snapshot or not)."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name


class ExtV(V):
    """A name from outside the snapshot (torch, megatron.core, os ...), by its dotted path."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name


class BuiltinV(V):
    """A Python builtin (len, isinstance, str ...)."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name


class PartialV(V):
    """functools.partial(func, *args, **kwargs)."""

    __slots__ = ("func", "args", "kwargs")

    def __init__(self, func, args, kwargs):
        self.func, self.args, self.kwargs = func, args, kwargs


class SuperV(V):
    """super() inside a method: lookups start after `cls` in the MRO of `obj`'s class."""

    __slots__ = ("cls", "obj")

    def __init__(self, cls, obj):
        self.cls, self.obj = cls, obj


class MethodV(V):
    """A method of a constant, list, dict or external object, bound to its receiver."""

    __slots__ = ("recv", "name")

    def __init__(self, recv, name):
        self.recv, self.name = recv, name


class PatternV(V):
    """re.compile(pattern): keeps the pattern text."""

    __slots__ = ("pattern",)

    def __init__(self, pattern):
        self.pattern = pattern


NONE = Const(None)

def vkey(v):
    """A hashable identity of a value, used to compare alternatives."""
    if isinstance(v, Const):
        return ("c", type(v.v).__name__, v.v)
    if isinstance(v, Tup):
        return ("t", v.kind, tuple(vkey(i) for i in v.items))
    if isinstance(v, Obj):
        return ("o", id(v))
    if isinstance(v, Unknown):
        return ("u", v.reason)
    if isinstance(v, Unset):
        return ("n",)
    if isinstance(v, Alt):
        return ("a", tuple(sorted((repr(vkey(o.value)) for o in v.opts))))
    if isinstance(v, FuncV):
        return ("f", id(v.node), id(v.bound) if v.bound is not None else 0)
    if isinstance(v, ClassV):
        return ("k", v.qualname)
    if isinstance(v, (ModV, ExtV, BuiltinV)):
        return (type(v).__name__, v.name)
    return ("x", id(v))


def make_alt(opts, reason):
    """Flatten and deduplicate alternatives; a single remaining alternative is returned as itself."""
    flat = []
    seen = {}
    reasons = [reason] if reason else []
    for o in opts:
        if isinstance(o.value, Alt):
            if o.value.reason and o.value.reason not in reasons:
                reasons.append(o.value.reason)
            for p in o.value.opts:
                flat.append(p)
        else:
            flat.append(o)
    out = []
    for o in flat:
        k = vkey(o.value)
        if k in seen:
            continue
        seen[k] = True
        out.append(o)
    if len(out) == 1:
        return out[0]
    return Opt(Alt(out, "; ".join(reasons)), None, "alt")


def alt_value(opts, reason):
    return make_alt(opts, reason).value


def options(v):
    """The alternatives of a value as (value, loc, how) Opts."""
    if isinstance(v, Alt):
        return list(v.opts)
    return [Opt(v, None, "set")]

def cand_key(c):
    if isinstance(c, ClassV):
        return ("k", c.qualname)
    if isinstance(c, ExtV):
        return ("e", c.name)
    return ("?", id(c))

def seq_items(v, keys=False):
    """Items of a tuple/list/set value (dict keys when keys=True), or None when not known."""
    if isinstance(v, Tup):
        return list(v.items)
    if isinstance(v, Obj) and v.kind == "list":
        cur = v.attrs.get("__items__")
        return list(cur.value) if cur is not None and isinstance(cur.value, tuple) else None
    if isinstance(v, Obj) and v.kind == "dict" and keys:
        items = dict_items(v)
        return [k for k, _ in items] if items is not None else None
    if isinstance(v, Const) and isinstance(v.v, str) and keys:
        return [Const(c) for c in v.v]
    return None


def const_key(v):
    """The Python value of a constant or a tuple of constants (usable as a dict key), else None."""
    if isinstance(v, Const):
        return ("c", v.v)
    if isinstance(v, Tup):
        ks = [const_key(i) for i in v.items]
        if any(k is None for k in ks):
            return None
        return ("t", v.kind, tuple(ks))
    return None


def dict_items(v):
    if isinstance(v, Obj) and v.kind == "dict":
        cur = v.attrs.get("__items__")
        return list(cur.value) if cur is not None and isinstance(cur.value, tuple) else None
    return None


def is_none(v):
    if isinstance(v, Const):
        return v.v is None
    if isinstance(v, (Obj, Tup, FuncV, ClassV, ModV, BuiltinV)):
        return False
    return None


def truth(v):
    """True / False, or None when it cannot be decided."""
    if isinstance(v, Const):
        try:
            return bool(v.v)
        except Exception:  # noqa: BLE001
            return None
    if isinstance(v, Tup):
        return bool(v.items)
    if isinstance(v, Obj):
        if v.kind in ("list", "dict"):
            cur = v.attrs.get("__items__")
            return bool(cur.value) if cur is not None and isinstance(cur.value, tuple) else None
        if v.kind == "obj" and isinstance(v.cls, ClassV):
            return True
        return None
    if isinstance(v, (FuncV, ClassV, ModV, BuiltinV, PartialV)):
        return True
    if isinstance(v, Alt):
        ts = {truth(o.value) for o in v.opts}
        return ts.pop() if len(ts) == 1 else None
    return None


def tri(b):
    if b is None:
        return Unknown("test not decidable")
    return Const(bool(b))
