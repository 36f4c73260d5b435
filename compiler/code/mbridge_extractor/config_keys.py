"""Override keys: every dataclass field of the config root and the dataclasses it composes."""

import ast

from .errors import Budget, InputError, Raised
from .interp.state import _ModuleLocals, Frame
from .interp.syntax import field_call
from .values import ClassV, ExtV


def config_key_rows(interp, layout, specs):
    r = layout.one("config-root")
    mod, _, cname = r["value"].rpartition(".")
    m = interp.snap.module(mod)
    c = interp.global_lookup(m, cname, None) if m else None
    if not isinstance(c, ClassV):
        raise InputError(layout.path, r["_line"], "config root %s not found" % r["value"], "check the layout row")
    rows = []
    visited = set()

    def walk(cls, prefix, depth):
        info = interp.class_info(cls)
        key = (cls.qualname, prefix)
        if key in visited or depth > 4:
            return
        visited.add(key)
        ext = [k.name for k in info.mro if isinstance(k, ExtV)]
        rows.append((prefix or "(root)", "section", cls.qualname, "open" if info.open else "closed",
                     ", ".join(ext), "", cls.mod.loc(cls.node)))
        for name, owner, ann in info.fields:
            if name.startswith("_"):
                continue
            full = (prefix + "." if prefix else "") + name
            default = ""
            if ann.value is not None:
                fcall = field_call(ann.value)
                if fcall is not None:
                    default = "(required)"
                    for k in fcall.keywords:
                        if k.arg in ("default", "default_factory"):
                            default = ("factory " if k.arg == "default_factory" else "") + ast.unparse(k.value)
                else:
                    default = ast.unparse(ann.value)
            else:
                default = "(required)"
            rows.append((full, "field", owner.qualname, ast.unparse(ann.annotation), default, "",
                         owner.mod.loc(ann)))
            # nested snapshot dataclasses named in the annotation
            fr = Frame(owner.mod)
            fr.locals = _ModuleLocals(interp, owner.mod, None)
            for nm in annotation_names(ann.annotation):
                try:
                    v = interp.eval(nm, fr)
                except (Raised, Budget):
                    continue
                if isinstance(v, ClassV) and interp.class_info(v).dataclass:
                    walk(v, full, depth + 1)

    walk(c, "", 0)
    # keys the fields file documents from outside the snapshot (external base classes)
    known = {row[0] for row in rows}
    for s in specs:
        if s.default_source and s.path and s.path not in known and s.view == "value":
            rows.append((s.path, "external-field", "", "", s.default, s.default_source, "code-fields.tsv:%d" % s.line))
            known.add(s.path)
    return rows


def annotation_names(ann):
    """The types a field's value can be itself: X, Optional[X], Union[X, ...], X | Y, 'X'.

    A type only inside another (Callable[[X], Y], list[X], dict[K, X]) makes no dotted
    keys: a callable is no section, and list items are indexed, not named.
    """
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
        try:
            return annotation_names(ast.parse(ann.value, mode="eval").body)
        except SyntaxError:
            return []
    if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
        return annotation_names(ann.left) + annotation_names(ann.right)
    if isinstance(ann, ast.Subscript):
        base = ann.value.attr if isinstance(ann.value, ast.Attribute) else getattr(ann.value, "id", "")
        if base not in ("Optional", "Union"):
            return []
        members = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
        return [n for m in members for n in annotation_names(m)]
    if isinstance(ann, ast.Name) and ann.id in ("None", "Any"):
        return []
    if isinstance(ann, (ast.Name, ast.Attribute)):
        return [ann]
    return []
