"""Statements, blocks and function bodies (spec §4): ``let``, assignment, loops, ``ret``, and
the every-path-returns rule (E0508)."""

from __future__ import annotations

from dataclasses import fields, is_dataclass

from vox_lang import codes, hir
from vox_lang.checker_env import CheckerPart, FnCtx
from vox_lang.source import Span
from vox_lang.types import BOOL, INT, NEVER, STR, UNIT, UNKNOWN, TCon, TNever, TUnknown, TVar, Type


class StmtChecker(CheckerPart):
    """Statement rules (mixed into :class:`vox_lang.checker.Checker`)."""



    def block(self, b: hir.Block, expected: Type | None = None, used: bool = False) -> Type:
        """Check a block; its value is its final expression (else Unit, or never after ``ret``)."""
        if not self.env.enter(b.span):
            return UNKNOWN
        try:
            last = len(b.stmts) - 1
            for i, s in enumerate(b.stmts):
                if i == last and isinstance(s, hir.ExprStmt):
                    return self.walk.expr(s.expr, expected, used)
                self.stmt(s)
                if i == last and isinstance(s, (hir.Ret, hir.Break, hir.Continue)):
                    return NEVER
            return UNIT
        finally:
            self.env.depth -= 1

    def stmt(self, s: hir.Stmt) -> None:
        if isinstance(s, hir.ExprStmt):
            self.walk.expr(s.expr, None, used=False)
        elif isinstance(s, hir.Let):
            self.let(s)
        elif isinstance(s, hir.Assign):
            self.walk.check_mutable_root(s.target)
            target_t = self.walk.expr(s.target)
            t = self.walk.expr(s.value, target_t)
            if not self.env.u.unify(target_t, t):
                self.env.sink.report(codes.E0501, s.value.span, t=self.env.show(target_t), u=self.env.show(t))
        elif isinstance(s, hir.Ret):
            self.ret(s)
        elif isinstance(s, hir.While):
            self.condition(s.cond)
            self.block(s.body)
        elif isinstance(s, hir.For):
            self.for_(s)

    def let(self, s: hir.Let) -> None:
        declared = self.env.resolve_type(s.type) if s.type is not None else None
        t = self.walk.expr(s.value, declared)
        if declared is not None:
            if not self.env.u.unify(declared, t):
                self.env.sink.report(codes.E0506, s.value.span, n=s.name, t=self.env.show(declared), u=self.env.show(t))
            t = declared
        if s.def_id is not None:
            self.env.var_types[s.def_id] = UNKNOWN if isinstance(self.env.u.resolve(t), TNever) else t

    def ret(self, s: hir.Ret) -> None:
        ctx = self.env.ctx
        if ctx.kind == "script":  # E0406 was reported by lowering
            if s.value is not None:
                self.walk.expr(s.value)
            return
        if s.value is None:
            if not self.env.u.unify(ctx.ret, UNIT):
                self.env.sink.report(codes.E0507, s.span, u="Unit", f=ctx.name, t=self.env.show(ctx.ret))
            return
        t = self.walk.expr(s.value, ctx.ret)
        if not self.env.u.unify(ctx.ret, t):
            self.env.sink.report(codes.E0507, s.value.span, u=self.env.show(t), f=ctx.name, t=self.env.show(ctx.ret))

    def condition(self, cond: hir.Expr) -> None:
        t = self.walk.expr(cond, BOOL)
        if not self.env.u.unify(BOOL, t):
            self.env.sink.report(codes.E0511, cond.span, t=self.env.show(t))

    def for_(self, s: hir.For) -> None:
        it = self.env.u.resolve(self.walk.expr(s.iterable))
        elem: Type = UNKNOWN
        if isinstance(it, TCon) and it.name in ("List", "Set", "Map") and it.args:
            elem = it.args[0]
        elif it == STR:
            elem = STR
        elif not isinstance(it, (TUnknown, TVar, TNever)):
            self.env.sink.report(codes.E0501, s.iterable.span, t="List[?]", u=self.env.show(it))
        if s.var_id is not None:
            self.env.var_types[s.var_id] = elem
        if s.index_id is not None:
            self.env.var_types[s.index_id] = INT
        self.block(s.body)

    # ------------------------------------------------------------------ bodies

    def body(
        self,
        ctx: FnCtx,
        params: tuple[hir.Param, ...],
        param_types: tuple[Type, ...],
        body: hir.Block,
        name_span: Span,
    ) -> None:
        """Check one function-like body under ``ctx``; E0508 at ``name_span`` if a path misses ``ret``."""
        saved = self.env.ctx
        self.env.ctx = ctx
        try:
            for p, t in zip(params, param_types):
                self.env.var_types[p.def_id] = t
                if p.default is not None:
                    dt = self.walk.expr(p.default, t)
                    if not self.env.u.unify(t, dt):
                        shown = self.env.show(t)
                        self.env.sink.report(codes.E0506, p.default.span, n=p.name, t=shown, u=self.env.show(dt))
            self.block(body)
            ret = self.env.u.resolve(ctx.ret)
            if ret != UNIT and not isinstance(ret, TUnknown) and not self.block_returns(body):
                self.env.sink.report(codes.E0508, name_span, f=ctx.name, t=self.env.show(ret))
        finally:
            self.env.ctx = saved

    def block_returns(self, b: hir.Block) -> bool:
        """True when every path through ``b`` ends in ``ret`` (spec §4)."""
        return any(self.stmt_returns(s) for s in b.stmts)

    def stmt_returns(self, s: hir.Stmt) -> bool:
        if isinstance(s, hir.Ret):
            return True
        if isinstance(s, hir.ExprStmt):
            return self.expr_returns(s.expr) or self.never_call(s.expr)
        if isinstance(s, hir.While):
            cond = s.cond
            return isinstance(cond, hir.Lit) and cond.value is True and not has_break(s.body)
        return False

    def never_call(self, e: hir.Expr) -> bool:
        """A call of a prelude function typed ``never`` (``process.exit``, spec §10 U2)."""
        if not (isinstance(e, hir.Call) and isinstance(e.callee, hir.Ref)):
            return False
        d = self.env.defs[e.callee.def_id]
        sig = self.env.sig_of(d.id) if d.kind == "std_fn" else None
        return sig is not None and isinstance(sig.ret, TNever)

    def expr_returns(self, e: hir.Expr) -> bool:
        if isinstance(e, hir.If):
            else_ok = self.expr_returns(e.else_) if isinstance(e.else_, hir.If) else self.block_returns(e.else_)
            return else_ok and self.block_returns(e.then)
        if isinstance(e, hir.Match):
            return id(e) in self.env.exhaustive and all(self.expr_returns(a.body) for a in e.arms)
        if isinstance(e, hir.Block):
            return self.block_returns(e)
        return False


def has_break(b: hir.Block) -> bool:
    """True if ``b`` holds a ``break`` for the loop it belongs to.

    Every statement and expression inside is searched except nested loops and lambdas (their
    ``break``s are not this loop's).
    """
    stack: list[object] = list(b.stmts)
    while stack:
        node = stack.pop()
        if isinstance(node, hir.Break):
            return True
        if isinstance(node, (hir.While, hir.For, hir.Lambda)):
            continue
        if not is_dataclass(node) or isinstance(node, type):
            continue
        for f in fields(node):
            value = getattr(node, f.name)
            if isinstance(value, tuple):
                stack.extend(v for v in value if is_dataclass(v))
            elif is_dataclass(value):
                stack.append(value)
    return False
