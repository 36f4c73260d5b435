"""Text of abstract values for the TSV files: cells, types, short forms, class names."""

from .values import (
    Alt, BuiltinV, ClassV, Const, dict_items, ExtV, FuncV, ModV, Obj, PatternV, seq_items, Tup, Unknown, Unset,
)


def esc(s):
    """A TSV cell: backslash, tab, newline, carriage return and '|' escaped."""
    return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r").replace("|", "\\|")


def cell(s):
    """A TSV cell that is not a list of alternatives (no '|' escaping)."""
    return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def type_name(v):
    if isinstance(v, Const):
        return {bool: "bool", int: "int", float: "float", str: "str", type(None): "none"}.get(type(v.v), "const")
    if isinstance(v, Obj):
        return {"list": "list", "dict": "dict"}.get(v.kind, "object")
    if isinstance(v, Tup):
        return "tuple" if v.kind == "tuple" else "set"
    if isinstance(v, ExtV):
        return "ref"
    if isinstance(v, FuncV):
        return "function"
    if isinstance(v, ClassV):
        return "class"
    if isinstance(v, (Unknown, Unset)):
        return "unknown"
    return "other"


def render(v, depth=0):
    """Text of a value (not escaped)."""
    if depth > 3:
        return "..."
    if isinstance(v, Const):
        x = v.v
        if x is None:
            return "none"
        if x is True:
            return "true"
        if x is False:
            return "false"
        if isinstance(x, float):
            return repr(x)
        return str(x)
    if isinstance(v, Tup):
        return "(" + ", ".join(render_item(i, depth) for i in v.items) + ")"
    if isinstance(v, Obj):
        if v.kind == "list":
            items = seq_items(v)
            return "[" + ", ".join(render_item(i, depth) for i in items) + "]" if items is not None else "[?]"
        if v.kind == "dict":
            items = dict_items(v)
            if items is None:
                return "{?}"
            return "{" + ", ".join("%s: %s" % (render_item(k, depth), render_item(x, depth)) for k, x in items) + "}"
        if v.origin is not None:
            return v.origin
        if isinstance(v.cls, ClassV):
            return v.cls.node.name
        if isinstance(v.cls, ExtV):
            return v.cls.name.rpartition(".")[2]
        if isinstance(v.cls, BuiltinV):
            return v.cls.name
        return "object"
    if isinstance(v, ExtV):
        return v.name
    if isinstance(v, FuncV):
        return v.qualname
    if isinstance(v, ClassV):
        return v.qualname
    if isinstance(v, ModV):
        return v.name
    if isinstance(v, BuiltinV):
        return v.name
    if isinstance(v, Unknown):
        return "unknown"
    if isinstance(v, Unset):
        return "unset"
    if isinstance(v, PatternV):
        return v.pattern
    if isinstance(v, Alt):
        return "|".join(render(o.value, depth + 1) for o in v.opts)
    return "?"


def render_item(v, depth):
    if isinstance(v, Const) and isinstance(v.v, str):
        return '"%s"' % v.v
    return render(v, depth + 1)


def render_short(v):
    t = render(v)
    if isinstance(v, Const) and isinstance(v.v, str):
        t = '"%s"' % t
    return t if len(t) <= 100 else t[:97] + "..."


def class_name(v):
    """The class of an object value: qualified name, external dotted name, or the text of an opaque call."""
    if isinstance(v, Obj):
        if v.kind in ("list", "dict"):
            return v.kind
        if v.origin is not None:
            return v.origin
        if isinstance(v.cls, ClassV):
            return v.cls.qualname
        if isinstance(v.cls, ExtV):
            return v.cls.name
        return "object"
    if isinstance(v, Const):
        return "none" if v.v is None else type(v.v).__name__
    return render(v)

def render_values(values):
    return "|".join(esc(render(v)) if not isinstance(v, Unknown) else "unknown" for v in values)


def render_types(values):
    return "|".join(type_name(v) for v in values)
