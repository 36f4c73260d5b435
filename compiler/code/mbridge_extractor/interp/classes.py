"""Classes: MRO (C3 over snapshot classes), dataclass fields and defaults, instantiation."""

import ast

from ..errors import Budget, Raised
from ..values import cand_key, ClassV, ExtV, FuncV, Slot, Unknown
from .state import _ModuleLocals, _RaiseResult, ClassInfo, Frame
from .syntax import field_call, is_dataclass_node


class ClassesMixin:
    """Snapshot classes and their instances."""

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
