"""Recipe names: every name each export package binds, traced through imports and aliases to the
function that defines it."""

import ast
import os

from .errors import CycleError, InputError
from .values import ExtV, FuncV, ModV


class Export:
    __slots__ = ("name", "kind", "func", "exported_at", "chain")

    def __init__(self, name, kind, func, exported_at, chain):
        self.name, self.kind, self.func, self.exported_at, self.chain = name, kind, func, exported_at, chain


def module_exports(interp, m):
    """Names bound in the namespace of package module m (what `getattr(package, name)` finds)."""
    names = set(m.bindings)
    for _, node, base in m.stars:
        sm = interp.snap.module(base, strict_from=(m, node))
        if sm is None:
            continue
        names |= interp.star_names(sm)
    return names


def trace_binding(interp, m, name, chain, depth=0):
    """Follow `name` in module m through imports and aliases to its value; chain gets each hop's path:line."""
    b = interp.binding_for(m, name, None)
    if b is None:
        return None
    idx, kind, node, extra = b
    hop = "%s:%d" % (m.rel, node.lineno)
    if hop in chain:
        names = " -> ".join(chain[chain.index(hop):] + [hop])
        raise InputError(m.rel, node.lineno, "circular import of %s (%s)" % (name, names),
                         "a module on the export chain imports this name back from a module that imports it")
    chain.append(hop)
    if kind == "from":
        base, attr = extra
        sm = interp.snap.module(base, strict_from=(m, node))
        if sm is None:
            if interp.snap.find(base) is None:
                return ExtV(base + "." + attr)
            return None
        if interp.binding_for(sm, attr, None) is None and interp.snap.is_internal(base + "." + attr):
            return ModV(base + "." + attr)
        return trace_binding(interp, sm, attr, chain, depth + 1)
    if kind == "star":
        sm = interp.snap.module(extra, strict_from=(m, node))
        return trace_binding(interp, sm, name, chain, depth + 1)
    if kind == "assign" and isinstance(node.value, ast.Name) and isinstance(extra, ast.Name):
        # alias assignment `x = y`: follow y in the same module, before this binding
        target = node.value.id
        if interp.binding_for(m, target, idx) is not None:
            return trace_before(interp, m, target, idx, chain, depth + 1)
    return interp.global_lookup(m, name, None)


def trace_before(interp, m, name, before, chain, depth):
    b = interp.binding_for(m, name, before)
    if b is None:
        return None
    idx, kind, node, extra = b
    if kind in ("from", "star"):
        chain.append("%s:%d" % (m.rel, node.lineno))
        if kind == "from":
            base, attr = extra
            sm = interp.snap.module(base, strict_from=(m, node))
            if sm is None:
                return ExtV(base + "." + attr)
            return trace_binding(interp, sm, attr, chain, depth + 1)
        sm = interp.snap.module(extra, strict_from=(m, node))
        return trace_binding(interp, sm, name, chain, depth + 1)
    if kind == "assign" and isinstance(node.value, ast.Name):
        chain.append("%s:%d" % (m.rel, node.lineno))
        return trace_before(interp, m, node.value.id, idx, chain, depth + 1)
    chain.append("%s:%d" % (m.rel, node.lineno))
    return interp.global_lookup(m, name, before)


def is_recipe_function(f):
    """A function the launcher can call with no arguments (every parameter has a default)."""
    if not isinstance(f, FuncV) or f.bound is not None:
        return False
    a = f.node.args
    n_pos = len(a.posonlyargs) + len(a.args)
    if n_pos > len(a.defaults):
        return False
    if any(d is None for d in a.kw_defaults):
        return False
    return True


def collect_exports(interp, layout):
    """Every recipe name of each export root: [Export]."""
    out = []
    for row in layout.all("export"):
        kind, pkg, scope = row["name"], row["value"], row["extra"]
        m = interp.snap.module(pkg)
        if m is None:
            raise InputError(layout.path, row["_line"], "export root %s is not a package of the checkout" % pkg,
                             "check --mbridge (it must hold src/megatron/bridge/...) and the layout row")
        packages = [m]
        if scope == "package+subpackages":
            pdir = os.path.dirname(m.path)
            for entry in sorted(os.listdir(pdir)):
                full = os.path.join(pdir, entry)
                if os.path.isdir(full) and not entry.startswith(("_", ".")) and entry.isidentifier():
                    if not os.path.isfile(os.path.join(full, "__init__.py")):
                        if any(f.endswith(".py") for f in os.listdir(full)):
                            rel = os.path.relpath(full, interp.snap.root)
                            raise InputError(rel, 1, "package %s.%s has no __init__.py" % (pkg, entry),
                                             "add %s/__init__.py so the family package can export its recipes" % rel)
                        continue
                    sm = interp.snap.module(pkg + "." + entry)
                    if sm is not None:
                        packages.append(sm)
        seen = {}
        for pm in packages:
            for name in sorted(module_exports(interp, pm)):
                if name.startswith("_") or name in seen:
                    continue
                chain = []
                try:
                    v = trace_binding(interp, pm, name, chain)
                except CycleError as ce:
                    raise InputError(ce.path, ce.line, ce.what,
                                     "break the cycle: a module on the export chain imports itself back")
                if not is_recipe_function(v):
                    continue
                seen[name] = True
                out.append(Export(name, kind, v, chain[0] if chain else "", chain))
    return out
