"""Calls and members (spec §4): argument binding (by position, then by name, each parameter
once unless defaulted), view elements, methods, actor handlers, record fields, activities."""

from __future__ import annotations

import re
from collections.abc import Iterable

from vox_lang import codes, hir
from vox_lang.checker_env import VAR_KINDS, CheckerPart
from vox_lang.prelude import METHOD_REQUIRES, METHODS, MUTATING_METHODS, RECEIVER_KEYS, ParamSig, Sig
from vox_lang.types import ELEMENT, UNKNOWN, TActor, TCon, TFn, TNever, TUnknown, TVar, Type

#: the longest source text a message quotes for a callee that is no name (longer is cut with "…")
_CALLEE_QUOTE = 40
#: a space the one-line quote would leave inside brackets (``len(\n)`` reads ``len()``)
_TIGHT = re.compile(r"([(\[{]) | ([)\]}])")


def _balanced(text: str) -> bool:
    """Whether every bracket of ``text`` closes in order (a span may start inside a ``(``)."""
    stack: list[str] = []
    for ch in text:
        if ch in "([{":
            stack.append(")]}"["([{".index(ch)])
        elif ch in ")]}" and (not stack or stack.pop() != ch):
            return False
    return not stack


def callee_text(e: hir.Expr, source: str = "") -> str:
    """A short source-like name for a callee (``fs.read``, ``xs.push``, ``make(…)``); any other
    expression is quoted from ``source`` (the file's text) by its span, on one line and cut at
    :data:`_CALLEE_QUOTE` characters (``[1, 2] |> len() == 3`` calls ``len() == 3``), or reads
    ``expression`` without it."""
    if isinstance(e, hir.Ref):
        return e.name
    if isinstance(e, hir.Member):
        return f"{callee_text(e.obj, source)}.{e.name}"
    if isinstance(e, hir.Call):
        return f"{callee_text(e.callee, source)}(…)"
    text = _TIGHT.sub(r"\1\2", " ".join(source[e.span.start:e.span.end].split()))
    if not text or '"' in text or "//" in text or "`" in text or not _balanced(text):
        return "expression"  # a quote that would alter a string, swallow a comment or cut a bracket
    return text if len(text) <= _CALLEE_QUOTE else text[:_CALLEE_QUOTE - 1] + "…"


class CallChecker(CheckerPart):
    """Call and member rules (mixed into :class:`vox_lang.checker.Checker`)."""


    def call(self, e: hir.Call, expected: Type | None) -> Type:
        callee = e.callee
        if isinstance(callee, hir.Ref):
            d = self.env.defs[callee.def_id]
            if d.kind == "view":
                return self.view_call(e, d.name)
            if d.kind == "activity" and not self.env.ctx.in_workflow:
                self.env.sink.report(codes.E0522, callee.span, a=d.name)
            sig = self.env.sig_of(d.id) if d.kind not in VAR_KINDS else None
            if sig is not None and not (d.kind in ("ctor", "variant") and not sig.params):
                return self.apply(sig, e, callee.name, expected)
        if isinstance(callee, hir.Member):
            found = self.member_sig(callee)
            if isinstance(found, tuple):
                return self.apply(found[0], e, callee_text(callee), expected, found[1])
            if found is None:
                return self.skip_args(e)
            t = self.env.u.resolve(found)  # a field of function type (its object checked once)
        else:
            t = self.env.u.resolve(self.walk.expr(callee))
        if isinstance(t, TFn):
            sig = Sig(tuple(ParamSig(f"#{i + 1}", p) for i, p in enumerate(t.params)), t.ret)
            return self.apply(sig, e, callee_text(callee), expected, positional_only=True)
        if not isinstance(t, (TUnknown, TVar, TNever)):
            self.env.sink.report(codes.E0502, callee.span, n=callee_text(callee, self.env.sink.source.text),
                                 t=self.env.show(t))
        return self.skip_args(e)

    def skip_args(self, e: hir.Call) -> Type:
        for a in e.args:
            self.walk.expr(a.value)
        return UNKNOWN

    def apply(
        self,
        sig: Sig,
        e: hir.Call,
        fname: str,
        expected: Type | None,
        mapping: dict[int, Type] | None = None,
        positional_only: bool = False,
    ) -> Type:
        """Bind ``e``'s arguments to ``sig`` (E0503/E0505), check each (E0504), return the result."""
        params, ret = self.env.instantiate(sig, mapping)
        if expected is not None:
            self.env.u.unify(ret, expected)  # lets the context type literals in the arguments
        bound: list[hir.Arg | None] = [None] * len(params)
        extra = 0
        named_error = False
        pos = 0
        for a in e.args:
            if a.name is None:
                if pos < len(params):
                    bound[pos] = a
                else:
                    extra += 1
                    self.walk.expr(a.value)
                pos += 1
                continue
            idx = None if positional_only else next((i for i, p in enumerate(params) if p.name == a.name), None)
            if idx is None or bound[idx] is not None:
                self.env.sink.report(codes.E0505, a.name_span or a.span, f=fname, p=a.name)
                named_error = True
                self.walk.expr(a.value)
                continue
            bound[idx] = a
        required = sum(1 for p in params if not p.has_default)
        given = len(e.args)
        missing = any(b is None and not p.has_default for b, p in zip(bound, params))
        if extra or given < required or (missing and not named_error):
            n = str(required) if required == len(params) else f"{required} to {len(params)}"
            self.env.sink.report(codes.E0503, e.span, f=fname, n=n, m=given)
        for arg, p in zip(bound, params):
            if arg is not None:
                self.argument(arg, p, fname)
        return ret

    def argument(self, a: hir.Arg, p: ParamSig, fname: str) -> None:
        t = self.walk.expr(a.value, p.type)
        if not self.env.u.unify(p.type, t):
            self.env.sink.report(codes.E0504, a.span, p=p.name, f=fname, t=self.env.show(p.type), u=self.env.show(t))

    def view_call(self, e: hir.Call, name: str) -> Type:
        """A view element: named arguments of any type, optional children → ``Element``."""
        seen: set[str] = set()
        for i, a in enumerate(e.args):
            t = self.walk.expr(a.value)
            if a.name is None:
                self.env.sink.report(codes.E0504, a.span, p=f"#{i + 1}", f=name, t="name=value", u=self.env.show(t))
            elif a.name in seen:
                self.env.sink.report(codes.E0505, a.name_span or a.span, f=name, p=a.name)
            else:
                seen.add(a.name)
        return ELEMENT

    # ------------------------------------------------------------------ members

    def member_sig(self, m: hir.Member) -> tuple[Sig, dict[int, Type]] | Type | None:
        """What ``obj.name(...)`` calls, checking ``obj`` once.

        Returns:
            ``(sig, receiver bindings)`` for a method or actor handler; the field's type for a
            record field; ``None`` when nothing is known (``?`` object) or an error was reported.
        """
        obj_t = self.env.u.resolve(self.walk.expr(m.obj))
        if isinstance(obj_t, TActor):
            table = self.env.handler_sigs(obj_t.def_id)
            if m.name in table:
                return table[m.name], {}
            hint = {"g": g} if (g := self.env.hints.suggest(m.name, (table, table))) else {}
            self.env.sink.report(codes.E0518, m.name_span, A=obj_t.name, h=m.name, **hint)
            return None
        if isinstance(obj_t, (TUnknown, TVar, TNever)):
            return None
        fields = self.env.field_table(obj_t)
        if m.name in fields:
            return fields[m.name]
        method = self.method(obj_t, m.name)
        if method is not None:
            if m.name in MUTATING_METHODS:
                self.check_mutable_root(m.obj)
            return method
        self.no_member(obj_t, m, fields)
        return None

    def method(self, obj_t: Type, name: str) -> tuple[Sig, dict[int, Type]] | None:
        """A built-in method of ``obj_t`` with the receiver's type arguments bound."""
        if not isinstance(obj_t, TCon) or name not in METHODS.get(obj_t.name, {}):
            return None
        required = METHOD_REQUIRES.get((obj_t.name, name), ())
        if not all(self.env.u.unify(arg, want) for arg, want in zip(obj_t.args, required)):
            return None
        mapping = dict(zip(RECEIVER_KEYS.get(obj_t.name, ()), obj_t.args))
        return METHODS[obj_t.name][name], mapping

    def no_member(self, obj_t: Type, m: hir.Member, fields: dict[str, Type]) -> None:
        head = obj_t.name if isinstance(obj_t, TCon) else ""
        # through indexes of the field tuple and the method table, both unchanging
        owned: list[tuple[object, Iterable[str]]] = []
        raw = self.env.u.fields(obj_t) if fields else None  # the tuple ``fields`` was made from
        if raw:
            owned.append((raw, (name for name, _ in raw)))
        if head in METHODS:
            owned.append((METHODS[head], METHODS[head]))
        hint = {"g": g} if (g := self.env.hints.suggest(m.name, *owned)) else {}
        self.env.sink.report(codes.E0512, m.name_span, T=self.env.show(obj_t), f=m.name, **hint)

    def member(self, m: hir.Member) -> Type:
        """``obj.name`` as a value: a field, or a method/handler as a function."""
        obj_t = self.env.u.resolve(self.walk.expr(m.obj))
        if isinstance(obj_t, (TUnknown, TVar, TNever)):
            return UNKNOWN
        if isinstance(obj_t, TActor):
            table = self.env.handler_sigs(obj_t.def_id)
            if m.name in table:
                return table[m.name].fn_type
            hint = {"g": g} if (g := self.env.hints.suggest(m.name, (table, table))) else {}
            self.env.sink.report(codes.E0518, m.name_span, A=obj_t.name, h=m.name, **hint)
            return UNKNOWN
        fields = self.env.field_table(obj_t)
        if m.name in fields:
            return fields[m.name]
        method = self.method(obj_t, m.name)
        if method is not None:
            params, ret = self.env.instantiate(method[0], method[1])
            return TFn(tuple(p.type for p in params), ret)
        self.no_member(obj_t, m, fields)
        return UNKNOWN

    # ------------------------------------------------------------------ mutability

    def check_mutable_root(self, target: hir.Expr) -> None:
        """Assignment and ``push`` need a ``let mut`` root binding (E0509)."""
        root = target
        while isinstance(root, (hir.Member, hir.Index)):
            root = root.obj
        if not isinstance(root, hir.Ref):
            return
        d = self.env.defs[root.def_id]
        if d.kind == "let" and d.mutable:
            return
        if d.kind in ("param", "loopvar"):
            hint = f"copy it into a new binding: `let mut {d.name}2 = {d.name}`"
            self.env.sink.report(codes.E0509, root.span, n=d.name, hint=hint)
        else:
            self.env.sink.report(codes.E0509, root.span, n=d.name)
