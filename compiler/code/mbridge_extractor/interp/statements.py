"""Statements: blocks, if/for/while with forks over undecided conditions, assignment."""

import ast

from ..errors import Raised
from ..render import render_short
from ..values import (
    Alt, alt_value, ClassV, Const, const_key, dict_items, ExtV, FuncV, ModV, NONE, Obj, Opt, seq_items, Slot, truth,
    Unknown, Unset, vkey,
)
from .state import _LoopOnce, _ModuleLocals, BREAK, CONTINUE, NOPATH, NORMAL, RAISE, RETURN
from .syntax import _load


class StatementsMixin:
    """Executing statements."""

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
                fr.raises.append("raises %s at %s" % (ast.unparse(s.exc)[:200] if s.exc else "", self.loc(fr, s)))
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
