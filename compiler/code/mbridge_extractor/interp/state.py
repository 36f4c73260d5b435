"""The interpreter's frames and control-flow states: Frame, ClassInfo, the status codes of a
statement, the module-level namespace (_ModuleLocals), a raise result and the one-pass loop body."""

import ast

from ..errors import CycleError
from ..values import Unknown


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
