"""The abstract interpreter (see the package docstring): the Interp class, its heap states and
containers; the evaluation rules are its mixins, one module per concern."""

from ..errors import Budget
from ..values import make_alt, Obj, Opt, Slot, Unset, vkey
from .builtin_calls import BuiltinsMixin
from .calls import CallsMixin
from .classes import ClassesMixin
from .expressions import ExpressionsMixin
from .names import NamesMixin
from .operators import OperatorsMixin
from .statements import StatementsMixin


class Interp(NamesMixin, ClassesMixin, CallsMixin, StatementsMixin, ExpressionsMixin,
             BuiltinsMixin, OperatorsMixin):
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

    # ---- containers -------------------------------------------------------------------------------------

    def make_list(self, items, loc):
        o = self.new_obj("list", None, loc)
        o.attrs["__items__"] = Slot(tuple(items), loc)
        return o

    def make_dict(self, pairs, loc):
        o = self.new_obj("dict", None, loc)
        o.attrs["__items__"] = Slot(tuple(pairs), loc)
        return o
