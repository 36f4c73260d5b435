"""The checkout as modules: finds, parses (with `ast`, never imports) and caches the Python files of
the search folders, and records each module's top-level bindings in order."""

import ast
import os

from .errors import InputError


class Module:
    """A parsed Python file of the checkout and its top-level bindings."""

    def __init__(self, name, path, rel, tree, is_pkg):
        self.name, self.path, self.rel, self.tree, self.is_pkg = name, path, rel, tree, is_pkg
        self.package = name if is_pkg else name.rpartition(".")[0]
        self.bindings = {}  # name -> [(index, kind, node, extra)]
        self.stars = []  # [(index, node, module name)]
        self.index = 0
        self._scan(tree.body)

    def _add(self, name, kind, node, extra=None):
        self.index += 1
        self.bindings.setdefault(name, []).append((self.index, kind, node, extra))

    def _scan(self, stmts):
        for s in stmts:
            if isinstance(s, ast.Import):
                for a in s.names:
                    if a.asname:
                        self._add(a.asname, "import", s, a.name)
                    else:
                        self._add(a.name.split(".")[0], "import", s, a.name.split(".")[0])
            elif isinstance(s, ast.ImportFrom):
                base = self.resolve_relative(s)
                for a in s.names:
                    if a.name == "*":
                        self.index += 1
                        self.stars.append((self.index, s, base))
                    else:
                        self._add(a.asname or a.name, "from", s, (base, a.name))
            elif isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self._add(s.name, "def", s)
            elif isinstance(s, ast.ClassDef):
                self._add(s.name, "class", s)
            elif isinstance(s, ast.Assign):
                for t in s.targets:
                    for n in _target_names(t):
                        self._add(n, "assign", s, t)
            elif isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name) and s.value is not None:
                self._add(s.target.id, "assign", s, s.target)
            elif isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name):
                self._add(s.target.id, "augassign", s, s.target)
            elif isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
                f = s.value.func
                if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.attr in ("append", "extend"):
                    self._add(f.value.id, "mutate", s, f.attr)
            elif isinstance(s, ast.If):
                t = s.test
                name = t.id if isinstance(t, ast.Name) else (t.attr if isinstance(t, ast.Attribute) else None)
                if name == "TYPE_CHECKING":  # typing.TYPE_CHECKING is False at run time
                    self._scan(s.orelse)
                else:
                    self._scan(s.body)
                    self._scan(s.orelse)
            elif isinstance(s, ast.Try):
                self._scan(s.body)
                bound = set(self.bindings)
                for h in s.handlers:
                    saved = dict(self.bindings)
                    self._scan(h.body)
                    for k in list(self.bindings):  # a handler only supplies names the body did not bind
                        if k in bound:
                            self.bindings[k] = saved[k]
                self._scan(s.orelse)
                self._scan(s.finalbody)
            elif isinstance(s, ast.With):
                self._scan(s.body)

    def resolve_relative(self, node):
        if not node.level:
            return node.module or ""
        parts = self.package.split(".")
        if node.level > 1:
            parts = parts[: len(parts) - (node.level - 1)]
        base = ".".join(parts)
        return base + ("." + node.module if node.module else "")

    def loc(self, node):
        return "%s:%d" % (self.rel, getattr(node, "lineno", 0))


def _target_names(t):
    if isinstance(t, ast.Name):
        return [t.id]
    if isinstance(t, (ast.Tuple, ast.List)):
        out = []
        for e in t.elts:
            out.extend(_target_names(e.value if isinstance(e, ast.Starred) else e))
        return out
    return []


class Snapshot:
    """Finds, parses and caches the modules of a checkout; resolves names across them."""

    def __init__(self, root, search_dirs):
        self.root = os.path.abspath(root)
        self.search_dirs = search_dirs  # relative to root, e.g. ["src", "scripts/training"]
        self.modules = {}
        self.missing = set()

    def find(self, name):
        """(path, is_pkg, pkg_dir_without_init) of a module name, or None when it is not in the checkout."""
        parts = name.split(".")
        for d in self.search_dirs:
            base = os.path.join(self.root, d, *parts)
            if os.path.isfile(base + ".py"):
                return base + ".py", False, None
            if os.path.isdir(base):
                init = os.path.join(base, "__init__.py")
                if os.path.isfile(init):
                    return init, True, None
                return None, True, base
        return None

    def is_internal(self, name):
        return self.find(name) is not None

    def module(self, name, strict_from=None):
        """The parsed Module, or None (external).  strict_from=(Module, node) turns a package folder without
        __init__.py into an InputError at that import."""
        if name in self.modules:
            return self.modules[name]
        found = self.find(name)
        if found is None:
            return None
        path, is_pkg, bare_dir = found
        if path is None:
            if strict_from is not None:
                m, node = strict_from
                rel_dir = os.path.relpath(bare_dir, self.root)
                raise InputError(m.rel, node.lineno, "package %s has no __init__.py (folder %s/)" % (name, rel_dir),
                                 "add %s/__init__.py, or import the module from a package that has one" % rel_dir)
            return None
        rel = os.path.relpath(path, self.root)
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except (OSError, UnicodeDecodeError) as e:
            raise InputError(rel, 1, "cannot read file: %s" % e, "the checkout must be readable UTF-8 Python")
        try:
            tree = ast.parse(text, filename=rel)
        except SyntaxError as e:
            raise InputError(rel, e.lineno or 1, "syntax error: %s" % e.msg,
                             "fix the Python syntax; the extractor reads every module on a recipe's import path")
        m = Module(name, path, rel, tree, is_pkg)
        self.modules[name] = m
        return m
