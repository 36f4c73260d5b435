"""Calls: argument binding, snapshot functions, external and opaque callees, return paths."""

import ast

from ..errors import Raised
from ..render import render_short
from ..values import (
    Alt, alt_value, BuiltinV, ClassV, Const, ExtV, FuncV, MethodV, NONE, Obj, Opt, PartialV, PatternV, Slot, Tup,
    Unknown, Unset,
)
from .state import _ModuleLocals, _RaiseResult, BREAK, CONTINUE, Frame, NOPATH, NORMAL, RETURN
from .syntax import _decorator_name
from .tables import PURE_EXTERNAL


class CallsMixin:
    """Calling abstract callables."""

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
