"""The type checker (spec §4, §9): :func:`check_module` reports every E05xx, W0101 and W0102.

Order: declarations are indexed, decorators and routes checked, then the script body (so
top-level ``let``s have types), then every function, workflow, activity and handler body.
Inference unifies within one module-wide substitution; generic signatures are instantiated
afresh per use. The checker never raises for any HIR: too-deep trees are left unchecked.
"""

from __future__ import annotations

from vox_lang import codes, hir
from vox_lang.checker_calls import CallChecker
from vox_lang.checker_env import CheckerEnv, FnCtx
from vox_lang.checker_expr import ExprChecker
from vox_lang.checker_patterns import PatternChecker
from vox_lang.checker_stmt import StmtChecker
from vox_lang.decorators import KNOWN_DECORATORS, RETIRED_DECORATORS
from vox_lang.diagnostics import DiagnosticSink
from vox_lang.source import Span
from vox_lang.syntax import Decorator, StrLit
from vox_lang.types import ELEMENT, STR, UNIT, Type


def check_module(module: hir.Module | None, sink: DiagnosticSink) -> None:
    """Type-check a lowered module, reporting to ``sink`` (nothing to do for ``None``)."""
    if module is None:
        return
    Checker(module, sink).run()


class Checker:
    """One module's checker: owns the shared :class:`CheckerEnv` and one of each part
    (expressions, calls, patterns, statements), composed through the :class:`Walk` entry
    points below; declarations, decorators and routes are checked here."""

    def __init__(self, module: hir.Module, sink: DiagnosticSink) -> None:
        self.env = CheckerEnv(module, sink)
        self.exprs = ExprChecker(self.env, self)
        self.calls = CallChecker(self.env, self)
        self.patterns = PatternChecker(self.env, self)
        self.stmts = StmtChecker(self.env, self)

    # ------------------------------------------------------------------ Walk

    def expr(self, e: hir.Expr, expected: Type | None = None, used: bool = True) -> Type:
        return self.exprs.expr(e, expected, used)

    def join(self, branches: list[tuple[Type, hir.Expr]], used: bool) -> Type:
        return self.exprs.join(branches, used)

    def children(self, e: hir.Children) -> Type:
        return self.exprs.children(e)

    def call(self, e: hir.Call, expected: Type | None) -> Type:
        return self.calls.call(e, expected)

    def member(self, m: hir.Member) -> Type:
        return self.calls.member(m)

    def check_mutable_root(self, target: hir.Expr) -> None:
        self.calls.check_mutable_root(target)

    def match(self, e: hir.Match, expected: Type | None, used: bool) -> Type:
        return self.patterns.match(e, expected, used)

    def block(self, b: hir.Block, expected: Type | None = None, used: bool = False) -> Type:
        return self.stmts.block(b, expected, used)

    def stmt(self, s: hir.Stmt) -> None:
        self.stmts.stmt(s)

    def condition(self, cond: hir.Expr) -> None:
        self.stmts.condition(cond)

    def body(
        self, ctx: FnCtx, params: tuple[hir.Param, ...], param_types: tuple[Type, ...], body: hir.Block,
        name_span: Span,
    ) -> None:
        self.stmts.body(ctx, params, param_types, body, name_span)

    # ------------------------------------------------------------------ module

    def run(self) -> None:
        """Check the whole module (see the module docstring for the order)."""
        for decl in self.env.module.decls:
            self.decorators(decl)
            if isinstance(decl, hir.RoutesDecl):
                self.routes(decl)
        for deco in self.env.module.script_decorators:
            self.misplaced_decorator(deco)
        for stmt in self.env.module.script:
            self.stmt(stmt)
        for decl in self.env.module.decls:
            if isinstance(decl, hir.FnDecl) and decl.extern is None:  # extern: no body (U13)
                params = tuple(self.env.resolve_type(p.type) for p in decl.params)
                ctx = FnCtx(decl.name, self.env.resolve_type(decl.ret), decl.kind, decl.kind == "workflow")
                self.body(ctx, decl.params, params, decl.body, decl.name_span)
            elif isinstance(decl, hir.ActorDecl):
                for h in decl.handlers:
                    params = tuple(self.env.resolve_type(p.type) for p in h.params)
                    ctx = FnCtx(h.name, self.env.resolve_type(h.ret), "handler", False)
                    self.body(ctx, h.params, params, h.body, h.name_span)

    # ------------------------------------------------------------------ decorators

    def decorators(self, decl: hir.Decl) -> None:
        """Per declaration kind (spec §4, §9, §10 U12): functions see :meth:`fn_decorator`;
        on a type, unknown decorators are W0102 and ``@test``/``@mcp.*`` E0523; on an actor,
        ``routes`` or ``import`` every decorator is E0523. Retired ones were E0303 already."""
        for deco in decl.decorators:
            if isinstance(decl, hir.FnDecl):
                self.fn_decorator(deco, decl)
            elif isinstance(decl, hir.TypeDecl) and deco.name not in KNOWN_DECORATORS:
                if deco.name not in RETIRED_DECORATORS:
                    self.env.sink.report(codes.W0102, deco.span, d=deco.name)
            else:
                self.misplaced_decorator(deco)

    def misplaced_decorator(self, deco: Decorator) -> None:
        if deco.name not in RETIRED_DECORATORS:
            self.env.sink.report(codes.E0523, deco.span, d=deco.name, reason="decorators apply only to functions")

    def fn_decorator(self, deco: Decorator, fn: hir.FnDecl) -> None:
        """``@test``, ``@mcp.tool`` and ``@mcp.resource`` rules (E0523); others W0102."""
        name = deco.name
        if name in RETIRED_DECORATORS:
            return
        if name not in KNOWN_DECORATORS:
            self.env.sink.report(codes.W0102, deco.span, d=name)
            return
        strings = decorator_strings(deco)
        reason = None
        if name == "test":
            if deco.args or deco.string is not None or deco.kind is not None or deco.opaque is not None:
                reason = "`@test` takes no arguments"
            elif fn.params:
                reason = "a test takes no parameters"
            elif self.env.resolve_type(fn.ret) != UNIT:
                reason = "a test returns Unit"
        elif name == "mcp.tool":
            if strings is None or len(strings) != 1:
                reason = 'needs its description: `@mcp.tool "what it does"`'
        elif strings is None or len(strings) != 2:
            reason = 'needs two strings: `@mcp.resource("uri", "description")`'
        elif fn.params:
            reason = "a resource takes no parameters"
        if reason is not None:
            self.env.sink.report(codes.E0523, deco.span, d=name, reason=reason)

    # ------------------------------------------------------------------ routes

    def routes(self, decl: hir.RoutesDecl) -> None:
        """Each target returns Element and takes exactly the path's ``:name`` segments as str."""
        for r in decl.routes:
            if r.target_id is None:
                continue
            names = [seg[1:] for seg in r.path.split("/") if seg.startswith(":")]
            want = ", ".join(f"{n}: str" for n in names)
            params_text = f"`{want}`" if names else "no parameters"
            fn = self.env.fns.get(r.target_id)
            if fn is None or fn.kind != "fn" or fn.generics or not self.view_target(fn, names):
                self.env.sink.report(codes.E0521, r.target_span, f=r.target, params=params_text)

    def view_target(self, fn: hir.FnDecl, names: list[str]) -> bool:
        """True if ``fn`` returns Element and takes exactly ``names`` as ``str`` parameters."""
        if not self.env.u.unify(self.env.resolve_type(fn.ret), ELEMENT):
            return False
        if sorted(p.name for p in fn.params) != sorted(names):
            return False
        return all(self.env.u.unify(self.env.resolve_type(p.type), STR) for p in fn.params)


def decorator_strings(deco: Decorator) -> list[str] | None:
    """The string arguments of ``@d "s"`` / ``@d("a", "b")``; ``None`` if any is not a string."""
    if deco.string is not None:
        return [deco.string.value]
    if deco.args is None:
        return []
    out = []
    for a in deco.args:
        if not isinstance(a.value, StrLit):
            return None
        out.append(a.value.value)
    return out

