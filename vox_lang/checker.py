"""The type checker (spec §4, §9): :func:`check_module` reports every E05xx, W0101 and W0102.

Order: declarations are indexed, decorators and routes checked, then the script body (so
top-level ``let``s have types), then every function, workflow, activity and handler body.
Inference unifies within one module-wide substitution; generic signatures are instantiated
afresh per use. The checker never raises for any HIR: too-deep trees are left unchecked.
"""

from __future__ import annotations

from vox_lang import codes, hir
from vox_lang.checker_calls import CallChecker
from vox_lang.checker_env import FnCtx
from vox_lang.checker_expr import ExprChecker
from vox_lang.checker_patterns import PatternChecker
from vox_lang.checker_stmt import StmtChecker
from vox_lang.decorators import KNOWN_DECORATORS, RETIRED_DECORATORS
from vox_lang.depth import pass_guard
from vox_lang.diagnostics import DiagnosticSink
from vox_lang.syntax import Decorator, StrLit
from vox_lang.types import ELEMENT, STR, UNIT


def check_module(module: hir.Module | None, sink: DiagnosticSink) -> None:
    """Type-check a lowered module, reporting to ``sink`` (nothing to do for ``None``)."""
    if module is None:
        return
    with pass_guard():
        Checker(module, sink).run()


class Checker(ExprChecker, CallChecker, PatternChecker, StmtChecker):
    """One module's checker; see the mixins for the rules."""

    def run(self) -> None:
        for decl in self.module.decls:
            self.decorators(decl)
            if isinstance(decl, hir.RoutesDecl):
                self.routes(decl)
        for deco in self.module.script_decorators:
            self.misplaced_decorator(deco)
        for stmt in self.module.script:
            self.stmt(stmt)
        for decl in self.module.decls:
            if isinstance(decl, hir.FnDecl) and decl.extern is None:  # extern: no body (U13)
                params = tuple(self.resolve_type(p.type) for p in decl.params)
                ctx = FnCtx(decl.name, self.resolve_type(decl.ret), decl.kind, decl.kind == "workflow")
                self.body(ctx, decl.params, params, decl.body, decl.name_span)
            elif isinstance(decl, hir.ActorDecl):
                for h in decl.handlers:
                    params = tuple(self.resolve_type(p.type) for p in h.params)
                    ctx = FnCtx(h.name, self.resolve_type(h.ret), "handler", False)
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
                    self.sink.report(codes.W0102, deco.span, d=deco.name)
            else:
                self.misplaced_decorator(deco)

    def misplaced_decorator(self, deco: Decorator) -> None:
        if deco.name not in RETIRED_DECORATORS:
            self.sink.report(codes.E0523, deco.span, d=deco.name, reason="decorators apply only to functions")

    def fn_decorator(self, deco: Decorator, fn: hir.FnDecl) -> None:
        """``@test``, ``@mcp.tool`` and ``@mcp.resource`` rules (E0523); others W0102."""
        name = deco.name
        if name in RETIRED_DECORATORS:
            return
        if name not in KNOWN_DECORATORS:
            self.sink.report(codes.W0102, deco.span, d=name)
            return
        strings = decorator_strings(deco)
        reason = None
        if name == "test":
            if deco.args or deco.string is not None or deco.kind is not None or deco.opaque is not None:
                reason = "`@test` takes no arguments"
            elif fn.params:
                reason = "a test takes no parameters"
            elif self.resolve_type(fn.ret) != UNIT:
                reason = "a test returns Unit"
        elif name == "mcp.tool":
            if strings is None or len(strings) != 1:
                reason = 'needs its description: `@mcp.tool "what it does"`'
        elif strings is None or len(strings) != 2:
            reason = 'needs two strings: `@mcp.resource("uri", "description")`'
        elif fn.params:
            reason = "a resource takes no parameters"
        if reason is not None:
            self.sink.report(codes.E0523, deco.span, d=name, reason=reason)

    # ------------------------------------------------------------------ routes

    def routes(self, decl: hir.RoutesDecl) -> None:
        """Each target returns Element and takes exactly the path's ``:name`` segments as str."""
        for r in decl.routes:
            if r.target_id is None:
                continue
            names = [seg[1:] for seg in r.path.split("/") if seg.startswith(":")]
            want = ", ".join(f"{n}: str" for n in names)
            params_text = f"`{want}`" if names else "no parameters"
            fn = self.fns.get(r.target_id)
            if fn is None or fn.kind != "fn" or fn.generics or not self.view_target(fn, names):
                self.sink.report(codes.E0521, r.target_span, f=r.target, params=params_text)

    def view_target(self, fn: hir.FnDecl, names: list[str]) -> bool:
        """True if ``fn`` returns Element and takes exactly ``names`` as ``str`` parameters."""
        if not self.u.unify(self.resolve_type(fn.ret), ELEMENT):
            return False
        if sorted(p.name for p in fn.params) != sorted(names):
            return False
        return all(self.u.unify(self.resolve_type(p.type), STR) for p in fn.params)


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

