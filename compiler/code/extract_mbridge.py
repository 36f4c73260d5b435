#!/usr/bin/env python3
"""extract_mbridge.py -- the code front end of kbc: static recipe facts of a Megatron Bridge checkout.

Reads a Megatron Bridge checkout with `ast` only (it never imports or runs Bridge code) and writes what
its recipes, launchers and config dataclasses say as reviewable TSV files.  A small abstract interpreter
evaluates every exported recipe function: assignments, helper and recipe-to-recipe calls with their
arguments bound, dataclass constructors with their defaults, attribute assignments, f-strings and
arithmetic on constants, and `if` statements whose condition it can decide.  A condition it cannot decide
keeps every branch (the value becomes a set of alternatives); a value it cannot compute is `unknown` with
a reason.  It never guesses.

Nothing about Megatron Bridge is written here beyond Python and the layout of a Python package.  Which
packages export recipes, which launcher files and tables to read, which classes not to interpret, and which
config attribute paths are facts all come from two data files:
  --fields  kb-sources/data/code-fields.tsv  fact field -> config attribute path (+ cited external defaults)
  --layout  kb-sources/data/code-layout.tsv  where things are in a checkout (default: beside --fields)

Usage (the script reads nothing relative to its own path, so `python3 - ARGS < extract_mbridge.py` works):
  extract_mbridge.py --mbridge CHECKOUT --fields FIELDS --commit SHA --date YYYY-MM-DD --out DIR
  extract_mbridge.py --mbridge CHECKOUT --fields FIELDS --commit SHA --date YYYY-MM-DD --check DIR
  extract_mbridge.py --compare OLD_DIR NEW_DIR --out FILE      (or --check FILE)

Output files (tab-separated, UTF-8, LF, sorted rows, a `#` comment header then a header row):
  snapshot.tsv recipes.tsv recipe-facts.tsv launcher.tsv config-keys.tsv providers.tsv datasets.tsv
Files are written to temporary names and renamed at the end: a failed run writes nothing.

Exit codes:
  0  files written, or --check found them identical
  1  --check: the files differ (a unified diff summary is printed on stdout)
  2  error: bad usage, unreadable data file, or bad input in the checkout (a syntax error, a missing
     __init__.py or a circular import on the export chain), printed as `path:line: error: what` + `hint:`
"""

import argparse
import ast
import difflib
import os
import re
import sys
import tempfile
import time

EXTRACTOR_VERSION = "1"

# ----------------------------------------------------------------------------------------------------
# Errors
# ----------------------------------------------------------------------------------------------------


class InputError(Exception):
    """Bad input: reported as `path:line: error: msg` plus a hint, exit code 2."""

    def __init__(self, path, line, msg, hint):
        super().__init__(msg)
        self.path, self.line, self.msg, self.hint = path, line, msg, hint

    def render(self):
        return "%s:%s: error: %s\nhint: %s\n" % (self.path, self.line, self.msg, self.hint)


class CycleError(Exception):
    """A name or module that depends on itself (a circular import)."""

    def __init__(self, path, line, what):
        super().__init__(what)
        self.path, self.line, self.what = path, line, what


class Budget(Exception):
    """The evaluation of one recipe took too many steps."""


class Raised(Exception):
    pass


# ----------------------------------------------------------------------------------------------------
# Data files (TSV with `#` comments and a header row)
# ----------------------------------------------------------------------------------------------------


def read_tsv(path):
    """Rows of a TSV data file as dicts, each with its 1-based line number under '_line'.

    The one rule of every data file, which base/tsv.cpp follows too (docs/sources.md, "The data files"):
    UTF-8, a leading byte-order mark ignored, a '\\r' before a line end dropped; empty lines and lines
    starting with '#' skipped; the first other line names the columns; each cell trimmed of the white
    space around it; a row with more or fewer cells than the header is an error, never padded.
    """
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise InputError(path, 1, "cannot read data file: %s" % e.strerror, "check the path given on the command line")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(path, data.count(b"\n", 0, e.start) + 1, "invalid UTF-8 byte sequence", "save the file as UTF-8")
    if text.startswith("\ufeff"):
        text = text[1:]
    header = None
    rows = []
    for n, raw in enumerate(text.split("\n"), 1):
        if raw.endswith("\r"):
            raw = raw[:-1]
        if not raw or raw.startswith("#"):
            continue
        cells = [c.strip(" \t\n\r\f\v") for c in raw.split("\t")]
        if header is None:
            header = cells
            continue
        if len(cells) != len(header):
            raise InputError(path, n, "row has %d cells, the header has %d" % (len(cells), len(header)),
                             "separate cells with exactly one tab; leave a cell empty rather than dropping it")
        row = dict(zip(header, cells))
        row["_line"] = n
        rows.append(row)
    if header is None:
        raise InputError(path, 1, "no header line", "the first non-comment line names the columns")
    return rows


# ----------------------------------------------------------------------------------------------------
# Abstract values
# ----------------------------------------------------------------------------------------------------


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
PURE_STR_METHODS = {
    "lower", "upper", "strip", "lstrip", "rstrip", "startswith", "endswith", "replace", "split", "rsplit",
    "join", "format", "title", "capitalize", "casefold", "find", "rfind", "count", "isdigit", "isalpha",
    "isalnum", "removeprefix", "removesuffix", "partition", "rpartition", "zfill", "center", "ljust", "rjust",
    "splitlines", "isupper", "islower", "index",
}


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


# ----------------------------------------------------------------------------------------------------
# Modules of the checkout
# ----------------------------------------------------------------------------------------------------


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


# ----------------------------------------------------------------------------------------------------
# The interpreter
# ----------------------------------------------------------------------------------------------------

NORMAL, RETURN, RAISE, BREAK, CONTINUE = range(5)
NOPATH = object()  # fr.retval when no path reaches the current point


class Frame:
    __slots__ = ("mod", "locals", "closure", "func", "cls", "selfobj", "retval", "pending", "raises", "forks")

    def __init__(self, mod, func=None, closure=None, cls=None, selfobj=None):
        self.mod, self.func, self.closure, self.cls, self.selfobj = mod, func, closure, cls, selfobj
        self.locals = {}
        self.retval = None
        self.pending = []  # [(value, heap state)] of returns on forked paths
        self.raises = []
        self.forks = []  # reasons of the undecided conditions met


class ClassInfo:
    """What the interpreter knows of a snapshot class: its MRO (ClassV / ExtV), dataclass fields."""

    def __init__(self):
        self.mro = []
        self.open = False  # some base is outside the snapshot
        self.dataclass = False
        self.fields = []  # [(name, class ClassV, AnnAssign node)] in dataclass order


class Interp:
    """Evaluates snapshot code abstractly (see the file header)."""

    MAX_STEPS = 400000
    MAX_DEPTH = 48
    MAX_ALTS = 24

    def __init__(self, snap, opaque):
        self.snap = snap
        self.opaque = opaque  # qualname -> reason
        self.heap = []
        self.steps = 0
        self.stack = []  # qualnames of the functions being evaluated
        self.global_cache = {}
        self.resolving = set()
        self.strict = False
        self.external_mutations = {}
        self.side_done = set()

    # ---- heap states ----------------------------------------------------------------------------

    def new_obj(self, kind, cls, loc, origin=None, calls=()):
        o = Obj(kind, cls, loc, made_by=self.stack, origin=origin, calls=calls)
        self.heap.append(o)
        return o

    def capture(self):
        return {id(o): (o, dict(o.attrs)) for o in self.heap}

    def restore(self, state):
        for o in self.heap:
            s = state.get(id(o))
            if s is not None:
                o.attrs = dict(s[1])

    def merge_states(self, states, reason):
        """Merge heap states of several paths: an attribute that differs becomes an Alt.  True if any differed."""
        differed = False
        ids = {}
        for st in states:
            for k, (o, _) in st.items():
                ids[k] = o
        for k, o in ids.items():
            per = [st[k][1] if k in st else None for st in states]
            per = [p for p in per if p is not None]
            names = []
            for p in per:
                for n in p:
                    if n not in names:
                        names.append(n)
            merged = {}
            for n in names:
                slots = [p.get(n) for p in per]
                first = slots[0]
                if all(s is not None for s in slots) and all(s is first or (vkey(s.value) == vkey(first.value) and
                                                                              s.loc == first.loc) for s in slots):
                    merged[n] = first
                    continue
                opts = []
                for s in slots:
                    if s is None:
                        opts.append(Opt(Unset(o, n), None, "set"))
                    else:
                        opts.append(Opt(s.value, s.loc, s.how))
                m = make_alt(opts, reason)
                merged[n] = Slot(m.value, m.loc, m.how)
                differed = True
            o.attrs = merged
        return differed

    # ---- helpers ----------------------------------------------------------------------------------

    def tick(self):
        self.steps += 1
        if self.steps > self.MAX_STEPS:
            raise Budget()

    def loc(self, fr, node):
        return fr.mod.loc(node)

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

    # ---- classes ------------------------------------------------------------------------------------

    def class_info(self, c):
        if c.info is not None:
            return c.info
        info = ClassInfo()
        c.info = info
        fr = Frame(c.mod)
        fr.locals = _ModuleLocals(self, c.mod, None)
        bases = []
        for b in c.node.bases:
            try:
                bv = self.eval(b, fr)
            except (Budget, Raised):
                bv = Unknown("base")
            bases.append(bv)
        # C3 linearization over snapshot classes; external bases are leaves.
        seqs = []
        for bv in bases:
            if isinstance(bv, ClassV):
                seqs.append(list(self.class_info(bv).mro))
            elif isinstance(bv, ExtV):
                seqs.append([bv])
                info.open = True
            else:
                info.open = True
        seqs.append([bv for bv in bases if isinstance(bv, (ClassV, ExtV))])
        mro = [c]
        seqs = [list(s) for s in seqs if s]
        while seqs:
            head = None
            for s in seqs:
                cand = s[0]
                if not any(cand_key(cand) in [cand_key(x) for x in t[1:]] for t in seqs):
                    head = cand
                    break
            if head is None:
                head = seqs[0][0]
            mro.append(head)
            seqs = [[x for x in s if cand_key(x) != cand_key(head)] for s in seqs]
            seqs = [s for s in seqs if s]
        info.mro = mro
        for k in mro[1:]:
            if isinstance(k, ClassV) and self.class_info(k).open:
                info.open = True
        info.dataclass = any(isinstance(k, ClassV) and is_dataclass_node(k.node) for k in mro)
        fields = {}
        order = []
        for k in reversed(mro):
            if not isinstance(k, ClassV) or not is_dataclass_node(k.node):
                continue
            for s in k.node.body:
                if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name):
                    ann = ast.unparse(s.annotation)
                    if ann.startswith("ClassVar") or ann.startswith("typing.ClassVar"):
                        continue
                    if s.target.id not in fields:
                        order.append(s.target.id)
                    fields[s.target.id] = (k, s)
        info.fields = [(n, fields[n][0], fields[n][1]) for n in order]
        return info

    def class_attr(self, c, name, start_after=None):
        """(owner ClassV, AST node) of a class-level name along the MRO, or None."""
        info = self.class_info(c)
        mro = info.mro
        if start_after is not None:
            keys = [cand_key(k) for k in mro]
            ck = cand_key(start_after)
            if ck in keys:
                mro = mro[keys.index(ck) + 1:]
        for k in mro:
            if not isinstance(k, ClassV):
                continue
            for s in k.node.body:
                if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == name:
                    return k, s
                if isinstance(s, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in s.targets):
                    return k, s
                if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name) and s.target.id == name:
                    return k, s
        return None

    def instantiate(self, c, args, kwargs, fr, node):
        """Construct an instance of a snapshot class (dataclass fields + __post_init__, or __init__)."""
        if c.qualname in self.opaque:
            return self.opaque_call(c.qualname, c.node.name, c, args, kwargs, fr, node, None)
        info = self.class_info(c)
        loc = self.loc(fr, node)
        obj = self.new_obj("obj", c, loc)
        # Which __init__ runs: the first class along the MRO that defines one or is a dataclass.
        for k in info.mro:
            if not isinstance(k, ClassV):
                break
            init = next((s for s in k.node.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None)
            if init is not None:
                fn = FuncV(k.mod, init, k.qualname + ".__init__", owner=k, bound=obj)
                res = self.call_function(fn, args, kwargs, node, fr)
                if isinstance(res, _RaiseResult):
                    raise Raised(res.reason)
                return obj
            if is_dataclass_node(k.node):
                self.init_dataclass(obj, c, info, args, kwargs, fr, node)
                post = self.class_attr(c, "__post_init__")
                if post is not None and isinstance(post[1], ast.FunctionDef):
                    owner, fnode = post
                    fn = FuncV(owner.mod, fnode, owner.qualname + ".__post_init__", owner=owner, bound=obj)
                    res = self.call_function(fn, [], {}, node, fr)
                    if isinstance(res, _RaiseResult):
                        raise Raised(res.reason)
                return obj
        # A class with external bases and no __init__ in the snapshot: the keyword arguments are its attributes.
        for k, v in kwargs.items():
            obj.attrs[k] = Slot(v[0], v[1] or loc)
        return obj

    def init_dataclass(self, obj, c, info, args, kwargs, fr, node):
        loc = self.loc(fr, node)
        init_fields = []
        for name, owner, ann in info.fields:
            fcall = field_call(ann.value)
            if fcall is not None and any(k.arg == "init" and isinstance(k.value, ast.Constant) and k.value.value is False
                                         for k in fcall.keywords):
                init_fields.append((name, owner, ann, False))
            else:
                init_fields.append((name, owner, ann, True))
        pos = [f for f in init_fields if f[3]]
        given = {}
        for (name, _, _, _), a in zip(pos, args):
            given[name] = (a[0], a[1] or loc)
        for k, v in kwargs.items():
            given[k] = (v[0], v[1] or loc)
        for name, owner, ann, init in init_fields:
            if init and name in given:
                obj.attrs[name] = Slot(given[name][0], given[name][1], "set")
                continue
            dv = self.field_default(owner, ann)
            if dv is not None:
                obj.attrs[name] = Slot(dv, owner.mod.loc(ann), "default")
        for k, v in given.items():  # fields of external bases
            if k not in obj.attrs:
                obj.attrs[k] = Slot(v[0], v[1], "set")

    def field_default(self, owner, ann):
        """Default of a dataclass field (None when it has none)."""
        if ann.value is None:
            return None
        fr = Frame(owner.mod)
        fr.locals = _ModuleLocals(self, owner.mod, None)
        fcall = field_call(ann.value)
        try:
            if fcall is not None:
                for k in fcall.keywords:
                    if k.arg == "default":
                        return self.eval(k.value, fr)
                    if k.arg == "default_factory":
                        f = self.eval(k.value, fr)
                        return self.call(f, [], {}, fr, k.value)
                return None
            return self.eval(ann.value, fr)
        except Budget:
            raise
        except Raised:
            return Unknown("default of %s raises" % ann.target.id)

    # ---- opaque calls -------------------------------------------------------------------------------

    def opaque_call(self, qualname, short, cls, args, kwargs, fr, node, parent):
        """A call the layout says not to interpret: an opaque object remembering the call and its arguments."""
        bound = {}
        fnode = None
        if isinstance(cls, FuncV):
            fnode = cls.node
        elif isinstance(cls, ClassV):
            init = self.class_attr(cls, "__init__")
            fnode = init[1] if init else None
        if fnode is not None and isinstance(fnode, ast.FunctionDef):
            params = [a.arg for a in fnode.args.posonlyargs + fnode.args.args]
            if params and params[0] in ("self", "cls"):
                params = params[1:]
            for p, a in zip(params, args):
                bound[p] = a[0]
        for i, a in enumerate(args):
            bound.setdefault("#%d" % i, a[0])
        for k, v in kwargs.items():
            bound[k] = v[0]
        argtext = ", ".join([render_short(a[0]) for a in args] + ["%s=%s" % (k, render_short(v[0])) for k, v in
                                                                   kwargs.items()])
        prefix = parent.origin if parent is not None and parent.origin else short
        text = "%s(%s)" % (prefix, argtext) if parent is None else "%s.%s(%s)" % (prefix, qualname.rpartition(".")[2],
                                                                                     argtext)
        calls = (parent.calls if parent is not None else ()) + ((qualname, bound),)
        return self.new_obj("obj", None, self.loc(fr, node), origin=text, calls=calls)

    # ---- calls ----------------------------------------------------------------------------------------

    def call(self, f, args, kwargs, fr, node):
        """Call an abstract callable.  args: [(V, loc)], kwargs: {name: (V, loc)} -- or plain V lists."""
        args = [a if isinstance(a, tuple) else (a, None) for a in args]
        kwargs = {k: (v if isinstance(v, tuple) else (v, None)) for k, v in kwargs.items()}
        self.tick()
        if isinstance(f, Alt):
            opts = []
            for o in f.opts:
                opts.append(Opt(self.call(o.value, args, kwargs, fr, node), o.loc, "set"))
            return alt_value(opts, f.reason)
        if isinstance(f, FuncV):
            if f.qualname in self.opaque or (f.owner is not None and f.owner.qualname in self.opaque):
                parent = f.bound if isinstance(f.bound, Obj) and f.bound.origin else None
                return self.opaque_call(f.qualname, f.qualname.split(".")[-2] + "." + f.node.name
                                        if f.owner is not None else f.node.name, f, args, kwargs, fr, node, parent)
            res = self.call_function(f, args, kwargs, node, fr)
            if isinstance(res, _RaiseResult):
                raise Raised(res.reason)
            return res
        if isinstance(f, ClassV):
            return self.instantiate(f, args, kwargs, fr, node)
        if isinstance(f, BuiltinV):
            return self.call_builtin(f.name, args, kwargs, fr, node)
        if isinstance(f, PartialV):
            return self.call(f.func, list(f.args) + args, dict(f.kwargs, **kwargs), fr, node)
        if isinstance(f, MethodV):
            return self.call_method(f.recv, f.name, args, kwargs, fr, node)
        if isinstance(f, ExtV):
            return self.call_external(f.name, args, kwargs, fr, node)
        if isinstance(f, Obj) and f.origin is not None:
            return Unknown("call of an opaque object %s" % f.origin)
        if isinstance(f, Unset) and isinstance(f.owner, Obj) and f.owner.origin is not None and f.owner.cls is None:
            # a method of an opaque object (e.g. AutoBridge.from_hf_pretrained(...).get_model_config())
            return self.opaque_call(f.owner.origin + "." + f.name, f.name, None, args, kwargs, fr, node, f.owner)
        if isinstance(f, Unknown):
            return Unknown(f.reason)
        return Unknown("call of %s" % render_short(f))

    def call_external(self, name, args, kwargs, fr, node):
        avals = [a[0] for a in args]
        pure = PURE_EXTERNAL.get(name)
        if pure is not None and all(isinstance(a, Const) for a in avals) and all(
                isinstance(v[0], Const) for v in kwargs.values()):
            try:
                return Const(pure(*[a.v for a in avals], **{k: v[0].v for k, v in kwargs.items()}))
            except Exception as e:  # noqa: BLE001 -- the real call would raise too
                raise Raised("%s raises %s" % (name, type(e).__name__))
        if name in ("re.compile",) and avals and isinstance(avals[0], Const):
            return PatternV(avals[0].v)
        if name in ("functools.partial",) and avals:
            return PartialV(avals[0], args[1:], kwargs)
        if name in ("dataclasses.replace",) and avals and isinstance(avals[0], Obj) and avals[0].kind == "obj":
            src = avals[0]
            o = self.new_obj("obj", src.cls, self.loc(fr, node), origin=src.origin, calls=src.calls)
            o.attrs = dict(src.attrs)
            for k, v in kwargs.items():
                o.attrs[k] = Slot(v[0], v[1] or self.loc(fr, node))
            return o
        if name in ("copy.deepcopy", "copy.copy") and avals and isinstance(avals[0], Obj):
            src = avals[0]
            o = self.new_obj(src.kind, src.cls, src.loc, origin=src.origin, calls=src.calls)
            o.attrs = dict(src.attrs)
            return o
        if name in ("dataclasses.field",):
            return Unknown("dataclasses.field outside a class body")
        if name.endswith(".__init__") and avals and isinstance(avals[0], Obj) and avals[0].kind == "obj":
            # ExternalBase.__init__(self, **kwargs): as for any external class, the keywords become attributes
            for k, v in kwargs.items():
                avals[0].attrs[k] = Slot(v[0], v[1] or self.loc(fr, node))
            return NONE
        # Mutation of snapshot objects by code outside the snapshot cannot be seen: count it.
        for a in avals + [v[0] for v in kwargs.values()]:
            if isinstance(a, Obj) and a.kind == "obj":
                self.external_mutations[name] = self.external_mutations.get(name, 0) + 1
        short = name.rpartition(".")[2]
        if short[:1].isupper():
            # An external class (by Python naming convention): an opaque object whose attributes are the keywords.
            o = self.new_obj("obj", ExtV(name), self.loc(fr, node))
            for k, v in kwargs.items():
                o.attrs[k] = Slot(v[0], v[1] or self.loc(fr, node))
            return o
        return Unknown("computed at run time by %s()" % name)

    def bind(self, f, args, kwargs, fr_caller, node):
        """Bind call arguments to the parameters of a snapshot function: a new Frame."""
        a = f.node.args
        callee = Frame(f.mod, func=f, closure=f.closure, cls=f.owner)
        positional = a.posonlyargs + a.args
        args = list(args)
        is_static = any(_decorator_name(d) == "staticmethod" for d in f.node.decorator_list)
        if f.bound is not None and not is_static:
            args = [(f.bound, None)] + args
            callee.selfobj = f.bound
        defaults = a.defaults
        first_default = len(positional) - len(defaults)
        loc = self.loc(fr_caller, node) if fr_caller is not None and node is not None else None
        for i, p in enumerate(positional):
            if i < len(args):
                callee.locals[p.arg] = args[i][0]
            elif p.arg in kwargs:
                callee.locals[p.arg] = kwargs.pop(p.arg)[0]
            elif i >= first_default:
                callee.locals[p.arg] = self.eval_default(f, defaults[i - first_default])
            else:
                callee.locals[p.arg] = Unknown("required parameter %s of %s is not given" % (p.arg, f.qualname))
        if a.vararg is not None:
            callee.locals[a.vararg.arg] = Tup([x[0] for x in args[len(positional):]])
        for p, d in zip(a.kwonlyargs, a.kw_defaults):
            if p.arg in kwargs:
                callee.locals[p.arg] = kwargs.pop(p.arg)[0]
            elif d is not None:
                callee.locals[p.arg] = self.eval_default(f, d)
            else:
                callee.locals[p.arg] = Unknown("required parameter %s of %s is not given" % (p.arg, f.qualname))
        if a.kwarg is not None:
            callee.locals[a.kwarg.arg] = self.make_dict([(Const(k), v[0]) for k, v in kwargs.items()], loc)
        return callee

    def eval_default(self, f, expr):
        fr = Frame(f.mod)
        fr.locals = _ModuleLocals(self, f.mod, None)
        return self.eval(expr, fr)

    def call_function(self, f, args, kwargs, node, fr_caller):
        if len(self.stack) >= self.MAX_DEPTH:
            return Unknown("call depth limit at %s" % f.qualname)
        if f.qualname in self.stack and self.stack.count(f.qualname) > 2:
            return Unknown("recursive call of %s" % f.qualname)
        if any(_decorator_name(d) == "property" for d in f.node.decorator_list) and f.bound is None:
            return Unknown("property called without an instance")
        callee = self.bind(f, args, dict(kwargs), fr_caller, node)
        self.stack = self.stack + [f.qualname] if isinstance(self.stack, list) else [f.qualname]
        try:
            st = self.exec_block(f.node.body, callee)
        finally:
            self.stack = self.stack[:-1]
        return self.finish_function(callee, st, f)

    def finish_function(self, fr, st, f):
        paths = list(fr.pending)
        if st == RETURN and fr.retval is not NOPATH:
            paths.append((fr.retval, self.capture()))
        elif st in (NORMAL, BREAK, CONTINUE):
            paths.append((NONE, self.capture()))
        if not paths:
            return _RaiseResult("; ".join(fr.raises) or "%s always raises" % f.qualname)
        if len(paths) == 1:
            self.restore(paths[0][1])
            return paths[0][0]
        reason = "; ".join(fr.forks) or "several return paths in %s" % f.qualname
        self.merge_states([p[1] for p in paths], reason)
        return alt_value([Opt(p[0], None, "set") for p in paths], reason)

    # ---- statements -------------------------------------------------------------------------------------

    def exec_block(self, stmts, fr):
        for s in stmts:
            st = self.exec_stmt(s, fr)
            if st != NORMAL:
                return st
        return NORMAL

    def exec_stmt(self, s, fr):
        self.tick()
        t = type(s)
        try:
            if t is ast.Expr:
                if isinstance(s.value, ast.Constant):
                    return NORMAL
                self.eval(s.value, fr)
                return NORMAL
            if t is ast.Assign:
                val = self.eval(s.value, fr)
                for tg in s.targets:
                    self.assign(tg, val, fr, s)
                return NORMAL
            if t is ast.AnnAssign:
                if s.value is not None:
                    self.assign(s.target, self.eval(s.value, fr), fr, s)
                return NORMAL
            if t is ast.AugAssign:
                cur = self.eval(_load(s.target), fr)
                self.assign(s.target, self.binop(s.op, cur, self.eval(s.value, fr)), fr, s)
                return NORMAL
            if t is ast.Return:
                fr.retval = self.eval(s.value, fr) if s.value is not None else NONE
                return RETURN
            if t is ast.If:
                return self.exec_if(s, fr)
            if t is ast.For:
                return self.exec_for(s, fr)
            if t is ast.While:
                return self.exec_while(s, fr)
            if t is ast.Raise:
                fr.raises.append("raises %s at %s" % (ast.unparse(s.exc)[:60] if s.exc else "", self.loc(fr, s)))
                return RAISE
            if t is ast.Assert:
                c = truth(self.eval(s.test, fr))
                if c is False:
                    fr.raises.append("assertion fails at %s" % self.loc(fr, s))
                    return RAISE
                return NORMAL
            if t is ast.Try:
                st = self.exec_block(s.body, fr)
                if st == RAISE and s.handlers:
                    st = self.exec_block(s.handlers[0].body, fr)
                elif st == NORMAL:
                    st = self.exec_block(s.orelse, fr)
                if s.finalbody:
                    st2 = self.exec_block(s.finalbody, fr)
                    if st2 != NORMAL:
                        return st2
                return st
            if t is ast.With:
                for item in s.items:
                    v = self.eval(item.context_expr, fr)
                    if item.optional_vars is not None:
                        self.assign(item.optional_vars, Unknown("value of a with statement"), fr, s)
                return self.exec_block(s.body, fr)
            if t in (ast.Import, ast.ImportFrom):
                self.exec_import(s, fr)
                return NORMAL
            if t in (ast.FunctionDef, ast.AsyncFunctionDef):
                fr.locals[s.name] = FuncV(fr.mod, s, (fr.func.qualname if fr.func else fr.mod.name) + "." + s.name,
                                          closure=fr)
                return NORMAL
            if t is ast.ClassDef:
                fr.locals[s.name] = ClassV(fr.mod, s, fr.mod.name + "." + s.name)
                return NORMAL
            if t is ast.Pass or t is ast.Global or t is ast.Nonlocal or t is ast.Delete:
                return NORMAL
            if t is ast.Break:
                return BREAK
            if t is ast.Continue:
                return CONTINUE
            return NORMAL
        except Raised as e:
            fr.raises.append(str(e.args[0]) if e.args else "raises at %s" % self.loc(fr, s))
            return RAISE

    def exec_import(self, s, fr):
        if isinstance(s, ast.Import):
            for a in s.names:
                full = a.name if a.asname else a.name.split(".")[0]
                fr.locals[a.asname or full] = ModV(full) if self.snap.is_internal(full) else ExtV(full)
            return
        base = fr.mod.resolve_relative(s)
        for a in s.names:
            if a.name == "*":
                continue
            fr.locals[a.asname or a.name] = self.module_value(base, a.name)

    def fork(self, fr, branches, reason):
        """Run each (stmts) branch from the same state; merge the paths that fall through."""
        cp = self.capture()
        env0 = dict(fr.locals) if isinstance(fr.locals, dict) else fr.locals
        results = []
        for stmts in branches:
            self.restore(cp)
            if isinstance(env0, dict):
                fr.locals = dict(env0)
            fr.retval = None
            st = self.exec_block(stmts, fr)
            results.append((st, self.capture(), fr.locals, fr.retval))
        through = []
        any_return = False
        if any(st != NORMAL for st, _, _, _ in results) and reason not in fr.forks:
            fr.forks.append(reason)
        for st, heap, env, rv in results:
            if st == RETURN:
                if rv is not NOPATH:
                    fr.pending.append((rv, heap))
                any_return = True
            elif st == RAISE:
                continue
            else:
                through.append((heap, env))
        if not through:
            fr.retval = NOPATH
            return RETURN if any_return else RAISE
        if len(through) == 1:
            self.restore(through[0][0])
            fr.locals = through[0][1]
            return NORMAL
        if self.merge_states([h for h, _ in through], reason) and reason not in fr.forks:
            fr.forks.append(reason)
        if isinstance(env0, dict):
            names = []
            for _, env in through:
                for n in env:
                    if n not in names:
                        names.append(n)
            merged = {}
            for n in names:
                vals = [env.get(n) for _, env in through]
                if all(v is not None for v in vals) and len({vkey(v) for v in vals}) == 1:
                    merged[n] = vals[0]
                else:
                    merged[n] = alt_value([Opt(v if v is not None else Unknown("%s unbound on a path" % n), None, "set")
                                           for v in vals], reason)
            fr.locals = merged
        return NORMAL

    def exec_if(self, s, fr):
        c = truth(self.eval(s.test, fr))
        if c is True:
            return self.exec_block(s.body, fr)
        if c is False:
            return self.exec_block(s.orelse, fr)
        reason = "condition `%s` at %s" % (ast.unparse(s.test)[:80], self.loc(fr, s))
        return self.fork(fr, [s.body, s.orelse], reason)

    def exec_for(self, s, fr):
        it = self.eval(s.iter, fr)
        items = seq_items(it, keys=True)
        if items is None or len(items) > 2000:
            reason = "loop over `%s` at %s" % (ast.unparse(s.iter)[:60], self.loc(fr, s))
            return self.fork(fr, [[], _LoopOnce(s, reason)], reason)
        for item in items:
            self.assign(s.target, item, fr, s)
            st = self.exec_block(s.body, fr)
            if st == BREAK:
                return NORMAL
            if st in (RETURN, RAISE):
                return st
        return self.exec_block(s.orelse, fr)

    def exec_while(self, s, fr):
        for _ in range(1000):
            c = truth(self.eval(s.test, fr))
            if c is False:
                return self.exec_block(s.orelse, fr)
            if c is None:
                reason = "loop `while %s` at %s" % (ast.unparse(s.test)[:60], self.loc(fr, s))
                return self.fork(fr, [[], s.body], reason)
            st = self.exec_block(s.body, fr)
            if st == BREAK:
                return NORMAL
            if st in (RETURN, RAISE):
                return st
        return NORMAL

    # ---- assignment -------------------------------------------------------------------------------------

    def assign(self, tg, val, fr, stmt):
        loc = self.loc(fr, stmt)
        if isinstance(tg, ast.Name):
            if isinstance(fr.locals, _ModuleLocals):
                fr.locals.local[tg.id] = val
            else:
                fr.locals[tg.id] = val
            return
        if isinstance(tg, (ast.Tuple, ast.List)):
            items = seq_items(val)
            star = [i for i, e in enumerate(tg.elts) if isinstance(e, ast.Starred)]
            if items is None or (not star and len(items) != len(tg.elts)):
                for e in tg.elts:
                    self.assign(e.value if isinstance(e, ast.Starred) else e,
                                Unknown("cannot unpack %s" % render_short(val)), fr, stmt)
                return
            if star:
                i = star[0]
                n_after = len(tg.elts) - i - 1
                head, mid, tail = items[:i], items[i:len(items) - n_after], items[len(items) - n_after:]
                for e, v in zip(tg.elts[:i], head):
                    self.assign(e, v, fr, stmt)
                self.assign(tg.elts[i].value, self.make_list(list(mid), loc), fr, stmt)
                for e, v in zip(tg.elts[i + 1:], tail):
                    self.assign(e, v, fr, stmt)
                return
            for e, v in zip(tg.elts, items):
                self.assign(e, v, fr, stmt)
            return
        if isinstance(tg, ast.Attribute):
            base = self.eval_base(tg.value, fr)
            self.set_attr(base, tg.attr, val, loc)
            return
        if isinstance(tg, ast.Subscript):
            base = self.eval_base(tg.value, fr)
            key = self.eval(tg.slice, fr)
            self.set_item(base, key, val, loc)
            return
        if isinstance(tg, ast.Starred):
            self.assign(tg.value, val, fr, stmt)

    def eval_base(self, expr, fr):
        """Evaluate the object an attribute/item assignment writes into; an unknown or unset object there
        becomes an opaque object so the assignment is still recorded."""
        v = self.eval(expr, fr)
        if isinstance(v, (Unknown, Unset)):
            why = v.reason if isinstance(v, Unknown) else "attribute %s not set in code" % v.name
            o = self.new_obj("obj", None, self.loc(fr, expr), origin="<%s>" % why)
            if isinstance(expr, (ast.Name, ast.Attribute, ast.Subscript)):
                self.assign(expr, o, fr, expr)
            return o
        return v

    def set_attr(self, base, name, val, loc):
        if isinstance(base, Alt):
            for o in base.opts:
                self.set_attr(o.value, name, val, loc)
            return
        if isinstance(base, Obj):
            base.attrs[name] = Slot(val, loc, "set")
            return
        if isinstance(base, Const) and base.v is None:
            raise Raised("attribute %s set on None at %s" % (name, loc))
        # Attributes of modules, external refs, functions: ignored.

    def set_item(self, base, key, val, loc):
        if isinstance(base, Obj) and base.kind == "dict":
            ck = const_key(key)
            if ck is None:
                base.attrs["__items__"] = Slot(Unknown("dict item with a computed key"), loc)
                return
            items = dict_items(base)
            if items is None:
                return
            items = [(k, v) for k, v in items if const_key(k) != ck] + [(key, val)]
            base.attrs["__items__"] = Slot(tuple(items), loc)
            return
        if isinstance(base, Obj) and base.kind == "list" and isinstance(key, Const) and isinstance(key.v, int):
            items = list(base.attrs["__items__"].value) if isinstance(base.attrs["__items__"].value, tuple) else None
            if items is not None and -len(items) <= key.v < len(items):
                items[key.v] = val
                base.attrs["__items__"] = Slot(tuple(items), loc)

    # ---- containers -------------------------------------------------------------------------------------

    def make_list(self, items, loc):
        o = self.new_obj("list", None, loc)
        o.attrs["__items__"] = Slot(tuple(items), loc)
        return o

    def make_dict(self, pairs, loc):
        o = self.new_obj("dict", None, loc)
        o.attrs["__items__"] = Slot(tuple(pairs), loc)
        return o

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
                    return Const(getattr(__builtins__, name)(*vals) if not isinstance(__builtins__, dict)
                                 else __builtins__[name](*vals))
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


class _RaiseResult:
    def __init__(self, reason):
        self.reason = reason


class _LoopOnce(list):
    """The body of a loop over values not known, run once with its target unknown (a fork branch)."""

    def __init__(self, s, reason):
        super().__init__([ast.Assign(targets=[s.target], value=ast.Name(id="__unknown_loop_item__", ctx=ast.Load()),
                                     lineno=s.lineno)] + list(s.body))


class _ModuleLocals:
    """The namespace seen by module-level code: earlier bindings of the module (lazily), plus locals."""

    def __init__(self, interp, mod, before):
        self.interp, self.mod, self.before = interp, mod, before
        self.local = {}

    def get(self, name):
        if name in self.local:
            return self.local[name]
        if name == "__unknown_loop_item__":
            return Unknown("loop item not known")
        try:
            return self.interp.global_lookup(self.mod, name, self.before)
        except CycleError as ce:
            if self.interp.strict:
                raise
            return Unknown("circular import: %s" % ce.what)

    def __contains__(self, name):
        return self.get(name) is not None

    def __getitem__(self, name):
        return self.get(name)


def cand_key(c):
    if isinstance(c, ClassV):
        return ("k", c.qualname)
    if isinstance(c, ExtV):
        return ("e", c.name)
    return ("?", id(c))


def is_dataclass_node(node):
    for d in node.decorator_list:
        if _decorator_name(d) == "dataclass":
            return True
    return False


def _decorator_name(d):
    if isinstance(d, ast.Call):
        d = d.func
    if isinstance(d, ast.Name):
        return d.id
    if isinstance(d, ast.Attribute):
        return d.attr
    return ""


def field_call(expr):
    if isinstance(expr, ast.Call):
        f = expr.func
        name = f.id if isinstance(f, ast.Name) else (f.attr if isinstance(f, ast.Attribute) else "")
        if name == "field":
            return expr
    return None


def _load(t):
    if isinstance(t, ast.Name):
        return ast.Name(id=t.id, ctx=ast.Load(), lineno=t.lineno)
    if isinstance(t, ast.Attribute):
        return ast.Attribute(value=t.value, attr=t.attr, ctx=ast.Load(), lineno=t.lineno)
    if isinstance(t, ast.Subscript):
        return ast.Subscript(value=t.value, slice=t.slice, ctx=ast.Load(), lineno=t.lineno)
    return t


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


BINOPS = {
    ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b, ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b,
    ast.Pow: lambda a, b: a ** b, ast.BitOr: lambda a, b: a | b, ast.BitAnd: lambda a, b: a & b,
    ast.BitXor: lambda a, b: a ^ b, ast.LShift: lambda a, b: a << b, ast.RShift: lambda a, b: a >> b,
}
CMPOPS = {
    ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b, ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b,
}
EXCEPTIONS = {"ValueError", "TypeError", "KeyError", "RuntimeError", "AttributeError", "NotImplementedError",
              "AssertionError", "IndexError", "Exception", "ImportError", "ModuleNotFoundError", "OSError"}
BUILTIN_NAMES = {
    "len", "isinstance", "hasattr", "getattr", "setattr", "list", "tuple", "set", "frozenset", "dict", "sorted",
    "reversed", "any", "all", "min", "max", "sum", "abs", "round", "int", "float", "str", "bool", "repr", "range",
    "enumerate", "zip", "type", "print", "id", "callable", "iter", "next", "vars", "globals", "locals", "open",
    "input", "divmod", "pow", "ord", "chr", "hex", "bin", "hash", "object", "super",
} | EXCEPTIONS
import math as _math  # noqa: E402  (only for the pure-function table below)

PURE_EXTERNAL = {
    "math.lcm": _math.lcm, "math.gcd": _math.gcd, "math.ceil": _math.ceil, "math.floor": _math.floor,
    "math.sqrt": _math.sqrt, "math.log2": _math.log2, "math.prod": None,
    "os.path.basename": os.path.basename, "os.path.splitext": None,
}
PURE_EXTERNAL = {k: v for k, v in PURE_EXTERNAL.items() if v is not None}


# ----------------------------------------------------------------------------------------------------
# Rendering values for the TSV files
# ----------------------------------------------------------------------------------------------------


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


# ----------------------------------------------------------------------------------------------------
# Recipes: exports and facts
# ----------------------------------------------------------------------------------------------------


class Layout:
    """Where things are in a checkout (kb-sources/data/code-layout.tsv)."""

    def __init__(self, rows, path):
        self.path = path
        self.rows = rows
        self.by_kind = {}
        for r in rows:
            self.by_kind.setdefault(r["kind"], []).append(r)

    def one(self, kind):
        rows = self.by_kind.get(kind, [])
        if len(rows) != 1:
            raise InputError(self.path, rows[1]["_line"] if len(rows) > 1 else 1,
                             "layout needs exactly one `%s` row, found %d" % (kind, len(rows)),
                             "see the comment header of the layout file")
        return rows[0]

    def all(self, kind):
        return self.by_kind.get(kind, [])


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


# ----------------------------------------------------------------------------------------------------
# Facts of one recipe function
# ----------------------------------------------------------------------------------------------------


class FieldSpec:
    def __init__(self, row):
        self.field = row["field"]
        self.path = row["path"]
        self.view = row["view"] or "value"
        self.via = row["via"]
        self.default = row["default"]
        self.default_source = row["default_source"]
        self.line = row["_line"]


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


def evaluate_recipe(interp, f):
    """Call a recipe function with its default arguments: (result value, reason when it raises)."""
    interp.heap = []
    interp.steps = 0
    interp.stack = []
    try:
        res = interp.call_function(f, [], {}, None, None)
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


def recipe_facts(interp, f, specs):
    res, raised = evaluate_recipe(interp, f)
    facts = {}
    for spec in specs:
        opts = navigate(interp, res, spec)
        fact = make_fact(spec, view_values(interp, spec, opts))
        if fact.state == "alternatives":
            fact.note = alternatives_reason(res, spec, opts) or "alternatives"
        facts[spec.field] = fact
    return facts


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


def render_values(values):
    return "|".join(esc(render(v)) if not isinstance(v, Unknown) else "unknown" for v in values)


def render_types(values):
    return "|".join(type_name(v) for v in values)


# ----------------------------------------------------------------------------------------------------
# Launcher facts
# ----------------------------------------------------------------------------------------------------


def func_node(m, name):
    for s in m.tree.body:
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == name:
            return s
    return None


def launcher_rows(interp, layout):
    """Rows (section, item, attribute, value, at) of the launcher files."""
    rows = []
    snap = interp.snap

    def lmod(key):
        r = layout.one(key)
        m = snap.module(r["value"])
        if m is None:
            raise InputError(layout.path, r["_line"], "launcher module %s not found in the checkout" % r["value"],
                             "check the layout row and the checkout's scripts/ folder")
        return m, r

    # argparse flags of the parser builder functions
    for r in layout.all("parser"):
        m = snap.module(r["value"])
        if m is None:
            raise InputError(layout.path, r["_line"], "launcher module %s not found" % r["value"],
                             "check the layout row")
        fn = func_node(m, r["extra"])
        if fn is None:
            raise InputError(m.rel, 1, "function %s not found" % r["extra"], "check the layout row %d" % r["_line"])
        rows.extend(argparse_rows(interp, m, fn, r["name"]))
    # the table mapping convenience flags to config keys
    for r in layout.all("override-table"):
        m = snap.module(r["value"])
        v = interp.global_lookup(m, r["extra"], None) if m else None
        b = interp.binding_for(m, r["extra"], None) if m else None
        if v is None or b is None:
            raise InputError(layout.path, r["_line"], "table %s not found in %s" % (r["extra"], r["value"]),
                             "check the layout row")
        node = b[2]
        elts = node.value.elts if isinstance(node.value, (ast.Tuple, ast.List)) else []
        for i, item in enumerate(seq_items(v) or []):
            pair = seq_items(item)
            if pair and len(pair) == 2 and all(isinstance(p, Const) for p in pair):
                at = m.loc(elts[i]) if i < len(elts) else m.loc(node)
                rows.append(("flag", r["name"] + ":" + pair[0].v, "config_key", pair[1].v, at))
    # mode inference rule: the tokens tested in order and the mode each returns
    for r in layout.all("mode-rule"):
        m = snap.module(r["value"])
        fn = func_node(m, r["extra"]) if m else None
        if fn is None:
            raise InputError(layout.path, r["_line"], "function %s not found" % r["extra"], "check the layout row")
        n = 0
        for s in ast.walk(fn):
            if isinstance(s, ast.If):
                toks = [c.value for c in ast.walk(s.test) if isinstance(c, ast.Constant) and isinstance(c.value, str)]
                ret = [x for x in s.body if isinstance(x, ast.Return)]
                if toks and ret and isinstance(ret[0].value, ast.Constant):
                    n += 1
                    rows.append(("mode-rule", "%02d" % n, "tokens", " ".join(toks), m.loc(s)))
                    rows.append(("mode-rule", "%02d" % n, "mode", str(ret[0].value.value), m.loc(ret[0])))
        rows.append(("mode-rule", "function", "name", fn.name, m.loc(fn)))
    # public modes and their task / training loop
    for r in layout.all("mode-map"):
        m = snap.module(r["value"])
        fn_name = r["extra"]
        modes_row = layout.one("modes")
        mm = snap.module(modes_row["value"])
        modes = interp.global_lookup(mm, modes_row["extra"], None)
        for mode in sorted(c.v for c in (seq_items(modes) or []) if isinstance(c, Const)):
            fn = interp.global_lookup(m, fn_name, None)
            interp.heap, interp.steps, interp.stack = [], 0, []
            try:
                v = interp.call(fn, [Const(mode)], {}, Frame(m), None)
            except Raised:
                v = Unknown("raises")
            rows.append(("mode", mode, r["name"], render(v), m.loc(fn.node) if isinstance(fn, FuncV) else ""))
    # runner steps after the overrides: the calls in the entry function, in order; the step that
    # applies the command line's KEY=VALUE overrides is marked, so what later steps assign is known to
    # undo or rewrite an override (layout row runner-overrides)
    override_fns = {r["extra"] for r in layout.all("runner-overrides")}
    for r in layout.all("runner"):
        m = snap.module(r["value"])
        fn = func_node(m, r["extra"]) if m else None
        if fn is None:
            raise InputError(layout.path, r["_line"], "runner function %s not found" % r["extra"], "check the layout")
        n = 0
        for s in fn.body:
            calls = []
            if isinstance(s, ast.Assign) and isinstance(s.value, ast.Call):
                calls = [s.value]
            elif isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
                calls = [s.value]
            elif isinstance(s, ast.If):
                for x in s.body:
                    if isinstance(x, ast.Assign) and isinstance(x.value, ast.Call):
                        calls.append(x.value)
            for c in calls:
                if not isinstance(c.func, ast.Name):
                    continue
                n += 1
                item = "%02d" % n
                rows.append(("runner-step", item, "call", c.func.id, m.loc(c)))
                if c.func.id in override_fns:
                    rows.append(("runner-step", item, "applies-overrides", "true", m.loc(c)))
                target = interp.global_lookup(m, c.func.id, None)
                chain = []
                tfn = trace_binding(interp, m, c.func.id, chain) if target is not None else None
                if isinstance(tfn, FuncV):
                    doc = ast.get_docstring(tfn.node) or ""
                    rows.append(("runner-step", item, "doc", doc.split("\n")[0], tfn.mod.loc(tfn.node)))
                    for x in ast.walk(tfn.node):
                        if isinstance(x, ast.Assign):
                            for tg in x.targets:
                                if isinstance(tg, ast.Attribute):
                                    rows.append(("runner-step", item, "assigns",
                                                 "%s = %s" % (ast.unparse(tg), ast.unparse(x.value)), tfn.mod.loc(x)))
    # dataset presets: the --dataset choices
    # benchmark launch script
    for r in layout.all("launch-script"):
        path = os.path.join(snap.root, r["value"])
        try:
            with open(path, encoding="utf-8") as fh:
                lines = fh.read().split("\n")
        except OSError:
            raise InputError(layout.path, r["_line"], "launch script %s not found" % r["value"], "check the layout")
        for i, line in enumerate(lines, 1):
            if line.strip().startswith("exec "):
                rows.append(("launch", r["name"], "exec", line.strip(), "%s:%d" % (r["value"], i)))
    # the benchmark name pattern and family prefixes
    for r in layout.all("name-pattern"):
        m = snap.module(r["value"])
        v = interp.global_lookup(m, r["extra"], None) if m else None
        b = interp.binding_for(m, r["extra"], None) if m else None
        if not isinstance(v, PatternV):
            raise InputError(layout.path, r["_line"], "%s is not a re.compile() of a constant" % r["extra"],
                             "check the layout row")
        rows.append(("name-pattern", r["extra"], "regex", v.pattern, m.loc(b[2])))
    for r in layout.all("family-rule"):
        m = snap.module(r["value"])
        fn = func_node(m, r["extra"]) if m else None
        if fn is not None:
            rows.append(("family-rule", "function", "name", fn.name, m.loc(fn)))
    return rows


def argparse_rows(interp, m, fn, prefix):
    """Each add_argument call of a parser builder: option strings, dest, type, choices, help, group."""
    rows = []
    groups = {}
    fr = Frame(m)
    fr.locals = _ModuleLocals(interp, m, None)
    for s in ast.walk(fn):
        if isinstance(s, ast.Assign) and isinstance(s.value, ast.Call) and isinstance(s.value.func, ast.Attribute):
            attr = s.value.func.attr
            if attr in ("add_argument_group", "add_mutually_exclusive_group") and isinstance(s.targets[0], ast.Name):
                title = ""
                if s.value.args and isinstance(s.value.args[0], ast.Constant):
                    title = s.value.args[0].value
                parent = s.value.func.value.id if isinstance(s.value.func.value, ast.Name) else ""
                if attr == "add_mutually_exclusive_group":
                    title = (groups.get(parent, ("", False))[0] + " (one of)").strip()
                req = any(k.arg == "required" and isinstance(k.value, ast.Constant) and k.value.value
                          for k in s.value.keywords)
                groups[s.targets[0].id] = (title, req)
    for s in ast.walk(fn):
        if not (isinstance(s, ast.Call) and isinstance(s.func, ast.Attribute) and s.func.attr == "add_argument"):
            continue
        opts = [a.value for a in s.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        if not opts:
            continue
        kw = {k.arg: k.value for k in s.keywords if k.arg}
        longs = [o for o in opts if o.startswith("--")]
        dest = None
        if "dest" in kw and isinstance(kw["dest"], ast.Constant):
            dest = kw["dest"].value
        elif longs:
            dest = longs[0][2:].replace("-", "_")
        else:
            dest = opts[0].lstrip("-").replace("-", "_")
        item = prefix + ":" + dest
        at = m.loc(s)
        rows.append(("flag", item, "options", " ".join(opts), at))
        shorts = [o for o in opts if o.startswith("-") and not o.startswith("--")]
        if shorts:
            rows.append(("flag", item, "short", " ".join(shorts), at))
        if longs:
            rows.append(("flag", item, "long", " ".join(longs), at))
        grp = s.func.value.id if isinstance(s.func.value, ast.Name) else ""
        if grp in groups:
            rows.append(("flag", item, "group", groups[grp][0], at))
            if groups[grp][1]:
                rows.append(("flag", item, "required", "one of the group", at))
        for k in ("type", "action", "metavar", "help", "default", "required", "nargs"):
            if k in kw:
                node = kw[k]
                if isinstance(node, ast.Constant):
                    val = render(Const(node.value))
                else:
                    try:
                        interp.heap, interp.steps, interp.stack = [], 0, []
                        v = interp.eval(node, fr)
                        val = ast.unparse(node) if isinstance(v, (Unknown, BuiltinV, ExtV)) else render(v)
                    except (Raised, Budget):
                        val = ast.unparse(node)
                rows.append(("flag", item, k, val, m.loc(node)))
        if "choices" in kw:
            interp.heap, interp.steps, interp.stack = [], 0, []
            try:
                v = interp.eval(kw["choices"], fr)
            except (Raised, Budget):
                v = Unknown("choices")
            items = seq_items(v)
            val = " ".join(render(i) for i in items) if items is not None else "unknown: " + ast.unparse(kw["choices"])
            rows.append(("flag", item, "choices", val, m.loc(kw["choices"])))
    return rows


# ----------------------------------------------------------------------------------------------------
# Config keys (ConfigContainer and nested dataclasses)
# ----------------------------------------------------------------------------------------------------


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
    out = []
    for n in ast.walk(ann):
        if isinstance(n, (ast.Name, ast.Attribute)) and not isinstance(getattr(n, "ctx", None), ast.Store):
            if isinstance(n, ast.Name) and n.id in ("Optional", "Union", "list", "dict", "Literal", "None"):
                continue
            out.append(n)
        if isinstance(n, ast.Constant) and isinstance(n.value, str):
            try:
                out.extend(annotation_names(ast.parse(n.value, mode="eval").body))
            except SyntaxError:
                pass
    return out


# ----------------------------------------------------------------------------------------------------
# Dataset presets
# ----------------------------------------------------------------------------------------------------


def dataset_rows(interp, layout):
    r = layout.one("dataset-presets")
    m = interp.snap.module(r["value"])
    v = interp.global_lookup(m, r["extra"], None) if m else None
    if v is None:
        raise InputError(layout.path, r["_line"], "dataset presets %s not found" % r["extra"], "check the layout row")
    mode_fn_row = layout.one("dataset-train-mode")
    mm = interp.snap.module(mode_fn_row["value"])
    mode_fn = interp.global_lookup(mm, mode_fn_row["extra"], None)
    modes_row = layout.one("modes")
    modes = sorted(c.v for c in (seq_items(interp.global_lookup(interp.snap.module(modes_row["value"]),
                                                                modes_row["extra"], None)) or []) if isinstance(c, Const))
    train_row = layout.one("mode-train")
    tm = interp.snap.module(train_row["value"])
    train_fn = interp.global_lookup(tm, train_row["extra"], None)
    b = interp.binding_for(m, r["extra"], None)
    node = b[2]
    dict_node = node.value
    key_lines = {}
    if isinstance(dict_node, ast.Dict):
        for k in dict_node.keys:
            if isinstance(k, ast.Constant):
                key_lines[k.value] = m.loc(k)
    rows = []
    for k, builder in dict_items(v) or []:
        if not isinstance(k, Const):
            continue
        name = k.v
        at = key_lines.get(name, m.loc(node))
        func = builder.func if isinstance(builder, PartialV) else builder
        bname = func.qualname if isinstance(func, FuncV) else render(func)
        rows.append((name, "builder", bname, at, ""))
        if isinstance(builder, PartialV):
            for kk, vv in sorted(builder.kwargs.items()):
                rows.append((name, "arg:" + kk, render(vv[0]), at, ""))
        # what the builder returns, for a recipe config not known here
        interp.heap, interp.steps, interp.stack = [], 0, []
        cfg = interp.new_obj("obj", None, at, origin="<recipe config>")
        try:
            res = interp.call(builder, [cfg], {}, Frame(m), None)
        except (Raised, Budget):
            res = Unknown("raises")
        how = "evaluated"
        if isinstance(res, (Unknown, Alt)) and isinstance(func, FuncV) and func.node.returns is not None:
            fr = Frame(func.mod)
            fr.locals = _ModuleLocals(interp, func.mod, None)
            try:
                rcls = interp.eval(func.node.returns, fr)
            except (Raised, Budget):
                rcls = None
            if isinstance(rcls, ClassV):
                res = interp.new_obj("obj", rcls, func.mod.loc(func.node))
                how = "return annotation"
        rows.append((name, "returns", class_name(res) if isinstance(res, Obj) else render(res), at, how))
        try:
            tmode = interp.call(mode_fn, [res], {}, Frame(mm), None)
        except (Raised, Budget):
            tmode = Unknown("raises")
        rows.append((name, "train_mode", render(tmode) if not isinstance(tmode, Unknown) else "unknown", at,
                     tmode.reason if isinstance(tmode, Unknown) else how))
        allowed = []
        for mode in modes:
            try:
                t = interp.call(train_fn, [Const(mode)], {}, Frame(tm), None)
            except (Raised, Budget):
                t = Unknown("raises")
            if isinstance(tmode, Const) and tmode.v is None:
                allowed.append(mode)
            elif isinstance(tmode, Const) and isinstance(t, Const) and t.v == tmode.v:
                allowed.append(mode)
            elif not isinstance(tmode, Const):
                allowed = None
                break
        rows.append((name, "modes", " ".join(allowed) if allowed is not None else "unknown", at,
                     "launcher rejects other modes (%s)" % mode_fn_row["extra"]))
    return rows


# ----------------------------------------------------------------------------------------------------
# Benchmark-name parsing with the launcher's own pattern
# ----------------------------------------------------------------------------------------------------


def name_parser(interp, layout):
    r = layout.one("name-pattern")
    m = interp.snap.module(r["value"])
    v = interp.global_lookup(m, r["extra"], None) if m else None
    if not isinstance(v, PatternV):
        raise InputError(layout.path, r["_line"], "%s is not a re.compile() of a constant" % r["extra"],
                         "check the layout row")
    try:
        rx = re.compile(v.pattern)
    except re.error as e:
        raise InputError(m.rel, 1, "name pattern does not compile: %s" % e, "the launcher's regex is broken")
    suffix = layout.one("recipe-suffix")["value"]
    fam = layout.one("family-rule")
    fm = interp.snap.module(fam["value"])
    fam_fn = interp.global_lookup(fm, fam["extra"], None) if fm else None
    mode_r = layout.one("mode-rule")
    mm = interp.snap.module(mode_r["value"])
    mode_fn = interp.global_lookup(mm, mode_r["extra"], None) if mm else None
    step_rows = layout.all("step-rule")
    sm = interp.snap.module(step_rows[0]["value"]) if step_rows else None
    step_fn = interp.global_lookup(sm, step_rows[0]["extra"], None) if sm else None

    def run(fn, name, mod):
        if not isinstance(fn, FuncV):
            return ""
        interp.heap, interp.steps, interp.stack = [], 0, []
        try:
            v2 = interp.call(fn, [Const(name)], {}, Frame(mod), None)
        except (Raised, Budget):
            return ""
        return render(v2) if isinstance(v2, Const) and v2.v is not None else ""

    def parse(name):
        out = {"mode": run(mode_fn, name, mm), "family": run(fam_fn, name, fm), "step": run(step_fn, name, sm)}
        mt = rx.search(name)
        if mt is None:
            return out
        gd = mt.groupdict()
        last_end = max(mt.end(g) for g in gd if mt.end(g) >= 0) if gd else mt.start()
        tail = name[last_end:mt.end()]
        if tail.endswith(suffix):
            tail = tail[: len(tail) - len(suffix)]
        out.update({"model": name[:mt.start()], "task": gd.get("task", ""), "gpus": gd.get("num_gpus", ""),
                    "hardware": gd.get("hardware", ""), "precision": gd.get("precision", ""),
                    "variant": tail.lstrip("_")})
        return out

    return parse


# ----------------------------------------------------------------------------------------------------
# Putting it together
# ----------------------------------------------------------------------------------------------------

FILES = ("snapshot.tsv", "recipes.tsv", "recipe-facts.tsv", "launcher.tsv", "config-keys.tsv", "providers.tsv",
         "datasets.tsv")

HEADERS = {
    "snapshot.tsv": (
        "# One Megatron Bridge snapshot read by compiler/code/extract_mbridge.py: key/value rows.\n"
        "# repo, commit, date: the checkout; extractor: the extractor version; counts: what was found.\n",
        ("key", "value")),
    "recipes.tsv": (
        "# Every recipe name exported by the library and benchmark packages (kind), one row per (name, kind).\n"
        "# target: module.function that defines it; defined_at: its `def` line; exported_at: the binding in the\n"
        "# exporting package (star import, import or alias); chain: every hop from there to the def, ' > '-joined;\n"
        "# alias_of: the defining function's name when the exported name differs from it.\n"
        "# mode: the launcher's own inference from the name (see launcher.tsv mode-rule); family: the launcher's\n"
        "# benchmark family rule; model/task/gpus/hardware/precision/variant: the name parsed with the launcher's\n"
        "# benchmark pattern (launcher.tsv name-pattern), empty when the name does not match it.\n"
        "# step: the forward step the launcher runs the name with (its own rule, code-layout.tsv step-rule;\n"
        "# text models run llm_step, vision-language, audio and diffusion models their own), empty when unknown.\n"
        "# Paths are relative to the checkout root.\n",
        ("name", "kind", "target", "defined_at", "exported_at", "alias_of", "mode", "family", "model", "task",
         "gpus", "hardware", "precision", "variant", "step", "chain")),
    "recipe-facts.tsv": (
        "# Facts of each recipe function (target), evaluated statically with its default arguments.\n"
        "# field: a row of kb-sources/data/code-fields.tsv (which config path and view it reads).\n"
        "# state: value (set by the code) | default (a default: of a snapshot dataclass field, or -- when the code\n"
        "#   never sets it -- the external default cited in note) | alternatives (depends on a condition the\n"
        "#   extractor cannot decide; note says which) | unknown (not computable; note says why).\n"
        "# value: the value; alternatives joined by '|' (a '|' inside a value is written '\\|'; tab, newline and\n"
        "#   backslash are escaped as \\t \\n \\\\). true/false/none are Python's True/False/None; type says which.\n"
        "# type: the Python type of each alternative (int, float, bool, none, str, list, dict, tuple, object, ref,\n"
        "#   unknown), '|'-joined like value. at: the path:line that set it, one per alternative.\n",
        ("target", "field", "state", "value", "type", "at", "note")),
    "launcher.tsv": (
        "# What the launchers (scripts/training) say, as (section, item, attribute, value, at) rows.\n"
        "# flag: one argparse option per item `<parser>:<dest>`: options, short, long, group, type, action,\n"
        "#   metavar, help, default, choices (space-separated) and config_key (from the launcher's override table).\n"
        "# mode-rule: the tokens infer_recipe_mode tests, in order, and the mode each returns.\n"
        "# mode: each public mode with the task and training loop the launcher maps it to.\n"
        "# runner-step: the calls of the runner's entry function in order, each with its docstring and the\n"
        "#   attribute assignments it makes (e.g. config.model.seq_length = dataset_seq_length); applies-overrides\n"
        "#   marks the call that applies the command line's KEY=VALUE overrides.\n"
        "# launch: what the benchmark launch script executes; name-pattern, family-rule: the launcher's own rules.\n",
        ("section", "item", "attribute", "value", "at")),
    "config-keys.tsv": (
        "# Override keys of ConfigContainer: every dataclass field the snapshot defines, as dotted keys.\n"
        "# kind: section (a dataclass; class = its qualname; type = open when some base class is outside the\n"
        "#   snapshot, so keys not listed may still exist; default lists those external bases) | field (class:\n"
        "#   the dataclass that declares it; type: annotation text; default: default expression or `factory X`\n"
        "#   or (required)) | external-field (a key of an external base documented in code-fields.tsv, with the\n"
        "#   cited default in default and source).\n",
        ("key", "kind", "class", "type", "default", "source", "at")),
    "providers.tsv": (
        "# Model architecture per model provider the recipes use: a snapshot provider class (its dataclass\n"
        "# defaults) or a Hugging Face id (hf:<id>; the architecture comes from models.tsv by hf_id).\n"
        "# field: an architecture row of code-fields.tsv; state/value/type/at/note as in recipe-facts.tsv;\n"
        "# targets: how many recipe functions use this provider.\n",
        ("provider", "field", "state", "value", "type", "at", "note", "targets")),
    "datasets.tsv": (
        "# The launcher's --dataset presets: builder (the function the preset calls; arg:* its bound arguments),\n"
        "# returns (the config class it builds; note says whether evaluated or read from the return annotation),\n"
        "# train_mode (what dataset_train_mode says for it: pretrain, finetune or none = any) and modes (the\n"
        "# public modes the launcher accepts with it).\n",
        ("preset", "attribute", "value", "at", "note")),
}


def tsv_text(fname, rows):
    comment, header = HEADERS[fname]
    out = [comment.rstrip("\n"), "\t".join(header)]
    for r in sorted(set(rows)):
        out.append("\t".join(r))
    return "\n".join(out) + "\n"


def extract(args):
    t0 = time.time()
    fields_rows = read_tsv(args.fields)
    layout_path = args.layout or os.path.join(os.path.dirname(os.path.abspath(args.fields)), "code-layout.tsv")
    layout = Layout(read_tsv(layout_path), layout_path)
    specs = [FieldSpec(r) for r in fields_rows if r.get("field")]
    if not os.path.isdir(args.mbridge):
        raise InputError(args.mbridge, 0, "checkout folder not found", "give --mbridge the checkout root")
    search = [r["value"] for r in layout.all("search-dir")]
    snap = Snapshot(args.mbridge, search)
    opaque = {r["value"]: r["extra"] for r in layout.all("opaque")}
    interp = Interp(snap, opaque)

    # 1. exports (strict: bad input on the export chain is an error)
    interp.strict = True
    exports = collect_exports(interp, layout)
    interp.strict = False

    parse_name = name_parser(interp, layout)
    builder_task = {r["value"]: r["extra"] for r in layout.all("builder-task")}

    recipes_rows = []
    targets = {}
    for ex in exports:
        f = ex.func
        targets[f.qualname] = f
        info = parse_name(ex.name)
        alias = f.node.name if f.node.name != ex.name else ""
        recipes_rows.append(tuple(cell(x) for x in (
            ex.name, ex.kind, f.qualname, f.mod.loc(f.node), ex.exported_at, alias, info.get("mode", ""),
            info.get("family", ""), info.get("model", ""), info.get("task", ""), info.get("gpus", ""),
            info.get("hardware", ""), info.get("precision", ""), info.get("variant", ""), info.get("step", ""),
            " > ".join(ex.chain))))

    # 2. facts of each defining function
    facts_rows = []
    prov_use = {}
    arch_fields = [s for s in specs if s.field.startswith("arch.")]
    recipe_specs = [s for s in specs if not s.field.startswith("arch.")]
    n_eval = 0
    for qn in sorted(targets):
        f = targets[qn]
        facts = recipe_facts(interp, f, recipe_specs + arch_fields)
        n_eval += 1
        # mode from the builder helper, when the layout maps it
        b = facts.get("builder")
        if b is not None and b.state in ("value", "default") and b.values:
            chain = render(b.values[0]).split(" > ")
            task = ""
            for q in reversed(chain):
                if q in builder_task:
                    task = builder_task[q]
                    break
            facts["builder_task"] = Fact("value" if task else "unknown", [Const(task)] if task else [], b.at,
                                         "" if task else "no builder-task row in the layout for this builder")
        for field in sorted(facts):
            fa = facts[field]
            facts_rows.append(tuple(cell(x) if i != 3 else x for i, x in enumerate(
                (qn, field, fa.state, render_values(fa.values), render_types(fa.values), fa.at, fa.note))))
        pv = facts.get("provider")
        hf = facts.get("hf_id")
        key = None
        if hf is not None and hf.state == "value" and hf.values:
            key = "hf:" + render(hf.values[0])
        elif pv is not None and pv.state in ("value", "default") and pv.values:
            key = render(pv.values[0])
        if key is not None:
            prov_use.setdefault(key, []).append(qn)

    # 3. providers: snapshot provider classes with their defaults; hf ids
    prov_rows = []
    for key in sorted(prov_use):
        n = str(len(prov_use[key]))
        if key.startswith("hf:"):
            prov_rows.append((cell(key), "hf_id", "value", cell(key[3:]), "str", "", "", n))
            continue
        mod, _, cname = key.rpartition(".")
        m = snap.module(mod) if mod else None
        c = interp.global_lookup(m, cname, None) if m else None
        if not isinstance(c, ClassV):
            prov_rows.append((cell(key), "class", "unknown", "", "", "", "not a snapshot class", n))
            continue
        interp.heap, interp.steps, interp.stack = [], 0, []
        try:
            obj = interp.instantiate(c, [], {}, Frame(c.mod), c.node)
        except (Raised, Budget) as e:
            prov_rows.append((cell(key), "class", "unknown", "", "", c.mod.loc(c.node), "constructing it raises", n))
            continue
        for s in arch_fields:
            spec = FieldSpec({"field": s.field, "path": s.path.partition(".")[2], "view": s.view, "via": "",
                              "default": s.default, "default_source": s.default_source, "_line": s.line})
            fa = make_fact(spec, view_values(interp, spec, navigate(interp, obj, spec)))
            prov_rows.append((cell(key), s.field, fa.state, render_values(fa.values), render_types(fa.values),
                              cell(fa.at), cell(fa.note), n))

    # 4. launcher, config keys, datasets
    launch = [tuple(cell(str(x)) for x in r) for r in launcher_rows(interp, layout)]
    keys = [tuple(cell(str(x)) for x in r) for r in config_key_rows(interp, layout, specs)]
    dsets = [tuple(cell(str(x)) for x in r) for r in dataset_rows(interp, layout)]

    n_lib = sum(1 for e in exports if e.kind == "library")
    n_bench = sum(1 for e in exports if e.kind == "benchmark")
    snap_rows = [
        ("repo", layout.one("repo")["value"]), ("commit", args.commit), ("date", args.date),
        ("extractor", "extract_mbridge.py " + EXTRACTOR_VERSION),
        ("names.library", str(n_lib)), ("names.benchmark", str(n_bench)), ("names.total", str(len(exports))),
        ("targets", str(len(targets))), ("fields", str(len(specs))),
        ("modules.parsed", str(len(snap.modules))),
    ]
    for name, count in sorted(interp.external_mutations.items()):
        snap_rows.append(("external-call-with-config." + name, str(count)))
    files = {
        "snapshot.tsv": tsv_text("snapshot.tsv", [tuple(cell(x) for x in r) for r in snap_rows]),
        "recipes.tsv": tsv_text("recipes.tsv", recipes_rows),
        "recipe-facts.tsv": tsv_text("recipe-facts.tsv", facts_rows),
        "launcher.tsv": tsv_text("launcher.tsv", launch),
        "config-keys.tsv": tsv_text("config-keys.tsv", keys),
        "providers.tsv": tsv_text("providers.tsv", prov_rows),
        "datasets.tsv": tsv_text("datasets.tsv", dsets),
    }
    if args.verbose:
        sys.stderr.write("extract_mbridge: %d names, %d targets, %.1fs\n" % (len(exports), len(targets),
                                                                             time.time() - t0))
    return files


# ----------------------------------------------------------------------------------------------------
# Comparing two snapshots
# ----------------------------------------------------------------------------------------------------

COMPARE_HEADER = (
    "# What changed between two extracted snapshots (compiler/code/extract_mbridge.py --compare OLD NEW).\n"
    "# change: name-added | name-removed (recipes.tsv, key = name kind) | target-changed (the function a name\n"
    "# resolves to) | fact-changed | fact-added | fact-removed (recipe-facts.tsv, compared per exported name\n"
    "# through its target, key = name kind field). old/new: value and state as `state:value`.\n",
    ("change", "name", "kind", "field", "old", "new"))


def compare(old_dir, new_dir):
    def load(d):
        try:
            rec = read_tsv(os.path.join(d, "recipes.tsv"))
            facts = read_tsv(os.path.join(d, "recipe-facts.tsv"))
        except InputError as e:
            raise InputError(d, 0, "cannot read extracted files: %s" % e, "run the extractor into this folder first")
        names = {(r["name"], r["kind"]): r for r in rec}
        by_target = {}
        for f in facts:
            by_target.setdefault(f["target"], {})[f["field"]] = f
        return names, by_target

    on, of = load(old_dir)
    nn, nf = load(new_dir)
    rows = []
    for key in sorted(set(on) | set(nn)):
        name, kind = key
        if key not in on:
            rows.append(("name-added", name, kind, "", "", nn[key]["target"]))
            continue
        if key not in nn:
            rows.append(("name-removed", name, kind, "", on[key]["target"], ""))
            continue
        ot, nt = on[key]["target"], nn[key]["target"]
        if ot != nt:
            rows.append(("target-changed", name, kind, "", ot, nt))
        ofs, nfs = of.get(ot, {}), nf.get(nt, {})
        for field in sorted(set(ofs) | set(nfs)):
            a, b = ofs.get(field), nfs.get(field)
            fa = "%s:%s" % (a["state"], a["value"]) if a else ""
            fb = "%s:%s" % (b["state"], b["value"]) if b else ""
            if a is None:
                rows.append(("fact-added", name, kind, field, "", fb))
            elif b is None:
                rows.append(("fact-removed", name, kind, field, fa, ""))
            elif fa != fb:
                rows.append(("fact-changed", name, kind, field, fa, fb))
    out = [COMPARE_HEADER[0].rstrip("\n"), "\t".join(COMPARE_HEADER[1])]
    for r in sorted(set(rows)):
        out.append("\t".join(r))
    return "\n".join(out) + "\n"


# ----------------------------------------------------------------------------------------------------
# Writing and checking
# ----------------------------------------------------------------------------------------------------


def write_files(out_dir, files):
    """Write every file to a temporary name first, then rename them all: a failure leaves nothing new."""
    os.makedirs(out_dir, exist_ok=True)
    tmps = []
    try:
        for name in sorted(files):
            fd, tmp = tempfile.mkstemp(prefix="." + name + ".", dir=out_dir)
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
                f.write(files[name])
            tmps.append((tmp, os.path.join(out_dir, name)))
        for tmp, final in tmps:
            os.replace(tmp, final)
    finally:
        for tmp, _ in tmps:
            if os.path.exists(tmp):
                os.unlink(tmp)


def check_files(out_dir, files):
    """Compare with files on disk; print a unified diff summary; True when identical."""
    same = True
    for name in sorted(files):
        path = os.path.join(out_dir, name)
        try:
            with open(path, encoding="utf-8") as f:
                old = f.read()
        except OSError:
            old = None
        if old == files[name]:
            continue
        same = False
        if old is None:
            print("%s: missing" % path)
            continue
        diff = list(difflib.unified_diff(old.split("\n"), files[name].split("\n"), path, "(extracted)", lineterm="",
                                         n=0))
        adds = sum(1 for l in diff if l.startswith("+") and not l.startswith("+++"))
        dels = sum(1 for l in diff if l.startswith("-") and not l.startswith("---"))
        print("%s: differs (+%d -%d lines)" % (path, adds, dels))
        for l in diff[:40]:
            print(l)
        if len(diff) > 40:
            print("... %d more diff lines" % (len(diff) - 40))
    return same


def main(argv):
    ap = argparse.ArgumentParser(description="Static recipe facts of a Megatron Bridge checkout (see the header).")
    ap.add_argument("--mbridge", help="checkout root (holds src/megatron/bridge and scripts)")
    ap.add_argument("--fields", help="kb-sources/data/code-fields.tsv")
    ap.add_argument("--layout", help="kb-sources/data/code-layout.tsv (default: beside --fields)")
    ap.add_argument("--commit", help="the checkout's commit (recorded in snapshot.tsv)")
    ap.add_argument("--date", help="the commit date, YYYY-MM-DD")
    ap.add_argument("--out", help="output folder (or file with --compare)")
    ap.add_argument("--check", help="compare with this folder (or file with --compare) instead of writing")
    ap.add_argument("--compare", nargs=2, metavar=("OLD_DIR", "NEW_DIR"), help="compare two extracted folders")
    ap.add_argument("--verbose", action="store_true", help="print counts and time on stderr")
    args = ap.parse_args(argv)
    try:
        if args.compare:
            text = compare(*args.compare)
            if args.check:
                try:
                    with open(args.check, encoding="utf-8") as f:
                        old = f.read()
                except OSError:
                    old = None
                if old != text:
                    print("%s: differs" % args.check)
                    return 1
                return 0
            if not args.out:
                ap.error("--compare needs --out FILE or --check FILE")
            d = os.path.dirname(os.path.abspath(args.out))
            fd, tmp = tempfile.mkstemp(prefix=".compare.", dir=d)
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
            os.replace(tmp, args.out)
            return 0
        for need in ("mbridge", "fields", "commit", "date"):
            if not getattr(args, need):
                ap.error("--%s is required" % need)
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", args.date):
            ap.error("--date must be YYYY-MM-DD")
        if bool(args.out) == bool(args.check):
            ap.error("give exactly one of --out DIR and --check DIR")
        files = extract(args)
        if args.check:
            return 0 if check_files(args.check, files) else 1
        write_files(args.out, files)
        return 0
    except InputError as e:
        sys.stderr.write(e.render())
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
