"""``match``: pattern typing (E0514, E0524), arm types (E0501), exhaustiveness (E0515) and
unreachable arms (W0101), the latter two via :mod:`vox_lang.exhaustiveness`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from vox_lang import codes, hir
from vox_lang.checker_env import CheckerEnv, CheckerPart, Walk
from vox_lang.exhaustiveness import WILD, Ctor, Pat, analyze
from vox_lang.types import BOOL, FLOAT, INT, NEVER, STR, UNKNOWN, TCon, TNever, TSum, Type

_LIT_TYPES = {"int": INT, "float": FLOAT, "str": STR, "bool": BOOL}
_BOOL_CTORS = [Ctor(("bool", True), "true", ()), Ctor(("bool", False), "false", ())]
_FAMILY_CTORS = {"Option": ("Some", "None"), "Result": ("Ok", "Error")}


class PatternChecker(CheckerPart):
    """Match rules (mixed into :class:`vox_lang.checker.Checker`)."""

    def __init__(self, env: CheckerEnv, walk: Walk) -> None:
        super().__init__(env, walk)
        #: sum type id -> its constructors (:meth:`sum_ctors`: asked once per arm and per
        #: exhaustiveness step, it built a list of every variant each time)
        self._sum_ctors: dict[int, list[Ctor]] = {}

    def match(self, e: hir.Match, expected: Type | None, used: bool) -> Type:
        st = self.walk.expr(e.scrutinee)
        ok = True
        branches: list[tuple[Type, hir.Expr]] = []
        want = expected
        for arm in e.arms:
            ok = self.pattern(arm.pattern, st) and ok
            t = self.walk.expr(arm.body, want, used)
            if want is None and used and not isinstance(self.env.u.resolve(t), TNever):
                want = t
            branches.append((t, arm.body))
        result = self.walk.join(branches, used)
        if ok and e.arms:
            pats = [self.to_pat(a.pattern) for a in e.arms]
            unreachable, missing = analyze(pats, st, self.ctors_of)
            for i in unreachable:
                self.env.sink.report(codes.W0101, e.arms[i].pattern.span)
            if missing:
                cases = ", ".join(f"`{m}`" for m in missing)
                self.env.sink.report(codes.E0515, e.span, cases=cases)
            else:
                self.env.exhaustive.add(id(e))
        return result if e.arms else NEVER

    # ------------------------------------------------------------------ typing

    def pattern(self, p: hir.Pattern, t: Type) -> bool:
        """Check ``p`` against ``t`` and bind its names; False if an error was reported."""
        if isinstance(p, hir.WildcardPat):
            return True
        if isinstance(p, hir.BindPat):
            self.env.var_types[p.def_id] = UNKNOWN if isinstance(self.env.u.resolve(t), TNever) else t
            return True
        if isinstance(p, hir.LiteralPat):
            lit_t = _LIT_TYPES.get(p.kind, UNKNOWN)
            if self.env.u.unify(t, lit_t) or (p.kind == "int" and self.env.u.unify(t, FLOAT)):
                return True
            self.env.sink.report(codes.E0524, p.span, p=show_pattern(p), t=self.env.show(t))
            return False
        if p.def_id is None:  # unknown constructor: E0407 already reported
            self.bind_unknown(p.args)
            return False
        sig = self.env.sig_of(p.def_id)
        if sig is None:
            self.bind_unknown(p.args)
            return False
        params, ret = self.env.instantiate(sig)
        if not self.env.u.unify(ret, t):
            self.env.sink.report(codes.E0524, p.span, p=show_pattern(p), t=self.env.show(t))
            self.bind_unknown(p.args)
            return False
        if len(p.args) != len(params):
            self.env.sink.report(codes.E0514, p.name_span, C=p.name, n=len(params), m=len(p.args))
            self.bind_unknown(p.args)
            return False
        ok = True
        for sub, param in zip(p.args, params):
            ok = self.pattern(sub, param.type) and ok
        return ok

    def bind_unknown(self, pats: Sequence[hir.Pattern]) -> None:
        for sub in pats:
            if isinstance(sub, hir.BindPat):
                self.env.var_types[sub.def_id] = UNKNOWN
            elif isinstance(sub, hir.CtorPat):
                self.bind_unknown(sub.args)

    # ------------------------------------------------------------------ exhaustiveness

    def to_pat(self, p: hir.Pattern) -> Pat:
        if isinstance(p, hir.LiteralPat):
            if p.kind == "bool":
                return Pat("ctor", ("bool", bool(p.value)), "true" if p.value else "false")
            return Pat("lit", ("num" if p.kind in ("int", "float") else p.kind, p.value))  # 1 == 1.0
        if isinstance(p, hir.CtorPat) and p.def_id is not None:
            d = self.env.defs[p.def_id]
            key = d.key if d.kind == "ctor" else ("variant", d.id)
            return Pat("ctor", key, p.name, tuple(self.to_pat(a) for a in p.args))
        return WILD

    def ctors_of(self, t: object, heads: Sequence[Pat]) -> list[Ctor] | None:
        """The complete constructor list of a column type (``None``: infinite, needs ``_``)."""
        r = self.env.u.resolve(cast(Type, t))  # exhaustiveness passes our own types back, untyped
        if r == BOOL:
            return _BOOL_CTORS
        if isinstance(r, TCon) and r.name in _FAMILY_CTORS and r.args:
            some, none = _FAMILY_CTORS[r.name]
            if r.name == "Option":
                return [Ctor(some, some, (r.args[0],)), Ctor(none, none, ())]
            err = r.args[1] if len(r.args) > 1 else STR
            return [Ctor(some, some, (r.args[0],)), Ctor(none, none, (err,))]
        if isinstance(r, TSum):
            return self.sum_ctors(r.def_id)
        for h in heads:  # an opaque scrutinee: infer the family from the patterns used
            if h.kind != "ctor":
                continue
            if isinstance(h.key, tuple) and h.key[0] == "bool":
                return _BOOL_CTORS
            if isinstance(h.key, tuple) and h.key[1] in self.env.variants:
                return self.sum_ctors(self.env.variants[h.key[1]][1])
            for family, (a, b) in _FAMILY_CTORS.items():
                if h.key in (a, b):
                    arity_b = 0 if family == "Option" else 1
                    return [Ctor(a, a, (UNKNOWN,)), Ctor(b, b, (UNKNOWN,) * arity_b)]
        return None

    def sum_ctors(self, sum_id: int) -> list[Ctor]:
        """The constructors of sum type ``sum_id`` (made once: field types resolve the same
        every time, aliases being resolved once and kept; callers do not change the list)."""
        ctors = self._sum_ctors.get(sum_id)
        if ctors is None:
            decl = self.env.type_decls.get(sum_id)
            if decl is None:
                return []
            ctors = self._sum_ctors[sum_id] = [
                Ctor(("variant", v.def_id), v.name, tuple(self.env.resolve_type(f.type) for f in v.fields))
                for v in decl.variants
            ]
        return ctors


def show_pattern(p: hir.Pattern) -> str:
    """A pattern in source syntax (for E0524)."""
    if isinstance(p, hir.LiteralPat):
        if p.kind == "bool":
            return "true" if p.value else "false"
        if p.kind == "str":
            return '"' + str(p.value).replace("\\", "\\\\").replace('"', '\\"') + '"'
        return str(p.value)
    if isinstance(p, hir.BindPat):
        return p.name
    if isinstance(p, hir.CtorPat):
        return f"{p.name}({', '.join(show_pattern(a) for a in p.args)})" if p.args else p.name
    return "_"

