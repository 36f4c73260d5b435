"""Module-level names: imports, star imports, bindings in order, import-time side effects."""

import ast

from ..errors import Budget, CycleError, Raised
from ..render import render_short
from ..snapshot import _target_names
from ..values import ClassV, Const, ExtV, FuncV, ModV, NONE, seq_items, Unknown
from .state import _ModuleLocals, Frame


class NamesMixin:
    """Module-level names of the snapshot."""

    # ---- module-level names -----------------------------------------------------------------------

    def module_value(self, modname, name, node_for_error=None, from_mod=None):
        """Value of a module attribute: a top-level binding, or a submodule."""
        m = self.snap.module(modname, strict_from=(from_mod, node_for_error) if self.strict and from_mod else None)
        if m is None:
            if self.snap.is_internal(modname):  # namespace package (no __init__.py)
                sub = modname + "." + name
                if self.snap.is_internal(sub):
                    return ModV(sub)
                return Unknown("%s has no attribute %s" % (modname, name))
            return ExtV(modname + "." + name)
        v = self.global_lookup(m, name, None)
        if v is not None:
            return v
        sub = modname + "." + name
        if self.snap.is_internal(sub):
            if self.strict and from_mod is not None:
                self.snap.module(sub, strict_from=(from_mod, node_for_error))
            return ModV(sub)
        return Unknown("module %s has no name %s" % (modname, name))

    def star_names(self, m):
        """Names a `from m import *` binds: __all__ when defined, else every public top-level name."""
        key = ("star", m.name)
        if key in self.global_cache:
            return self.global_cache[key]
        if key in self.resolving:
            raise CycleError(m.rel, 1, "module %s star-imports itself through a cycle" % m.name)
        self.resolving.add(key)
        try:
            if "__all__" in m.bindings:
                v = self.global_lookup(m, "__all__", None)
                names = []
                for it in (seq_items(v) or []):
                    if isinstance(it, Const) and isinstance(it.v, str):
                        names.append(it.v)
                result = set(names)
            else:
                result = {n for n in m.bindings if not n.startswith("_")}
                for _, node, base in m.stars:
                    sm = self.snap.module(base, strict_from=(m, node) if self.strict else None)
                    if sm is not None:
                        result |= {n for n in self.star_names(sm) if not n.startswith("_")}
        finally:
            self.resolving.discard(key)
        self.global_cache[key] = result
        return result

    def binding_for(self, m, name, before):
        """The last binding of `name` in module m before index `before`: (index, kind, node, extra)."""
        best = None
        for b in m.bindings.get(name, ()):
            if before is not None and b[0] >= before:
                continue
            if best is None or b[0] > best[0]:
                best = b
        for idx, node, base in m.stars:
            if before is not None and idx >= before:
                continue
            if best is not None and best[0] > idx:
                continue
            sm = self.snap.module(base, strict_from=(m, node) if self.strict else None)
            if sm is None:
                continue
            if name in self.star_names(sm):
                best = (idx, "star", node, base)
        return best

    def run_side_effects(self, m):
        """Import-time effects of module m that other code reads: decorators defined in the snapshot (e.g. a
        registry decorator filling a module-level dict), and item assignments / update() calls on module-level
        names.  The decorated names keep their undecorated value."""
        self.side_done.add(m.name)
        for s in m.tree.body:
            try:
                if isinstance(s, (ast.FunctionDef, ast.ClassDef)) and s.decorator_list:
                    fr = Frame(m)
                    fr.locals = _ModuleLocals(self, m, None)
                    target = self.global_lookup(m, s.name, None)
                    for d in reversed(s.decorator_list):
                        dv = self.eval(d, fr)
                        if isinstance(dv, FuncV):
                            self.call(dv, [target], {}, fr, s)
                elif (isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Subscript)) or (
                        isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) and isinstance(s.value.func, ast.Attribute)
                        and s.value.func.attr in ("update", "setdefault") and isinstance(s.value.func.value, ast.Name)):
                    fr = Frame(m)
                    fr.locals = _ModuleLocals(self, m, None)
                    self.exec_stmt(s, fr)
            except (Budget, Raised, CycleError):
                continue

    def global_lookup(self, m, name, before):
        """Value of a module-level name (None when the module does not bind it)."""
        if m.name not in self.side_done:
            saved = self.stack, self.steps, self.heap
            self.stack, self.heap = [], []
            try:
                self.run_side_effects(m)
            finally:
                self.stack, self.steps, self.heap = saved
        b = self.binding_for(m, name, before)
        if b is None:
            return None
        key = (m.name, name, b[0])
        if key in self.global_cache:
            return self.global_cache[key]
        if key in self.resolving:
            raise CycleError(m.rel, b[2].lineno, "circular import of %s in module %s" % (name, m.name))
        self.resolving.add(key)
        saved_stack, saved_steps = self.stack, self.steps
        self.stack = []
        try:
            v = self.eval_binding(m, name, b)
        finally:
            self.resolving.discard(key)
            self.stack, self.steps = saved_stack, saved_steps
        self.global_cache[key] = v
        return v

    def eval_binding(self, m, name, b):
        idx, kind, node, extra = b
        if kind == "def":
            return FuncV(m, node, m.name + "." + node.name)
        if kind == "class":
            return ClassV(m, node, m.name + "." + node.name)
        if kind == "import":
            if self.snap.is_internal(extra):
                if self.strict:
                    self.snap.module(extra, strict_from=(m, node))
                return ModV(extra)
            return ExtV(extra)
        if kind == "from":
            base, attr = extra
            return self.module_value(base, attr, node, m)
        if kind == "star":
            sm = self.snap.module(extra)
            return self.global_lookup(sm, name, None)
        fr = Frame(m)
        fr.locals = _ModuleLocals(self, m, idx)
        try:
            if kind == "assign":
                val = self.eval(node.value, fr)
                return self.destructure(extra, val, name, fr)
            if kind == "augassign":
                old = self.global_lookup(m, name, idx)
                if old is None:
                    return Unknown("%s used before assignment" % name)
                return self.binop(node.op, old, self.eval(node.value, fr))
            if kind == "mutate":
                old = self.global_lookup(m, name, idx)
                arg = self.eval(node.value.args[0], fr) if node.value.args else NONE
                items = seq_items(old)
                if items is None:
                    return Unknown("%s.%s on a value that is not a list" % (name, extra))
                add = [arg] if extra == "append" else (seq_items(arg) or [])
                return self.make_list(list(items) + list(add), m.loc(node))
        except Budget:
            return Unknown("evaluation budget exceeded")
        except Raised:
            return Unknown("module-level code of %s raises" % m.name)
        return Unknown("unsupported binding")

    def destructure(self, target, val, name, fr):
        if isinstance(target, ast.Name):
            return val
        items = seq_items(val)
        elts = target.elts
        if items is None or len(items) != len(elts):
            return Unknown("cannot unpack %s" % render_short(val))
        for e, it in zip(elts, items):
            if isinstance(e, ast.Name) and e.id == name:
                return it
            if isinstance(e, (ast.Tuple, ast.List)) and name in _target_names(e):
                return self.destructure(e, it, name, fr)
        return Unknown("cannot unpack")
