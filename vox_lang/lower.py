"""Lowering: AST (:mod:`vox_lang.syntax`) → HIR (:mod:`vox_lang.hir`) with name resolution.

Module-level declarations (and top-level ``let``s) are hoisted first, then declarations are
lowered, then the script body in order. Reports E0401–E0410 (spec §3, §9); never raises for any
AST: recursion deeper than the stack budget (:mod:`vox_lang.depth`) lowers to
:class:`hir.ErrorExpr` and marks the sink incomplete.
"""

from __future__ import annotations

from vox_lang import codes, hir, syntax
from vox_lang.diagnostics import DiagnosticSink
from vox_lang.lower_expr import ExprLowerer
from vox_lang.prelude import BUILTIN_TYPES, BUILTINS, CONSTRUCTORS, VIEW_ELEMENTS, std_member
from vox_lang.scopes import Scope
from vox_lang.source import Span
from vox_lang.suggest import suggest


def lower_module(module: syntax.Module, sink: DiagnosticSink) -> hir.Module:
    """Lower and resolve ``module``, reporting name errors to ``sink``.

    Args:
        module: the parsed module (items with syntax errors already dropped).
        sink: receives E04xx diagnostics.

    Returns:
        The HIR module (unresolvable names become :class:`hir.ErrorExpr` / :class:`hir.ErrType`).
    """
    return Lowerer(sink).module(module)


class Lowerer(ExprLowerer):
    """Holds the definition table and scope state while lowering one module."""

    def __init__(self, sink: DiagnosticSink) -> None:
        super().__init__(sink)
        for name in BUILTINS:
            self.define(self.prelude, name, "builtin", None, key=name)
        for name in CONSTRUCTORS:
            self.define(self.prelude, name, "ctor", None, key=name)
        for name in VIEW_ELEMENTS:
            self.define(self.prelude, name, "view", None, key=name)
        for name in BUILTIN_TYPES:
            self.define(self.prelude, name, "prim", None, types=True, key=name)
        # spec §10 U1: the prelude binds `std` exactly as `import std` would (W0005 on use)
        self.prelude_std = self.define(self.prelude, "std", "std_module", None, key="std")

    # ------------------------------------------------------------------ module

    def module(self, module: syntax.Module) -> hir.Module:
        mod = self.module_scope
        module = syntax.Module(tuple(desugar_item(i) for i in module.items), module.span)
        if module.items:
            self.first_item_start = module.items[0].span.start
        for pos, item in enumerate(module.items):
            self.hoist(item, mod, pos)
        decls: list[hir.Decl] = []
        script: list[hir.Stmt] = []
        script_decos: list[syntax.Decorator] = []
        route_paths: dict[str, Span] = {}
        for item in module.items:
            if isinstance(item, syntax.StmtItem):
                continue
            lowered = self.decl(item, route_paths)
            if lowered is not None:
                decls.append(lowered)
        for pos, item in enumerate(module.items):
            if not isinstance(item, syntax.StmtItem):
                continue
            script_decos.extend(item.decorators)
            self.script_pos = pos
            stmt = item.stmt
            if isinstance(stmt, syntax.Let) and id(stmt) in self.hoisted:
                script.append(self.let(stmt, mod, self.hoisted[id(stmt)]))
            else:
                script.append(self.stmt(stmt, mod))
        self.script_pos = None
        return hir.Module(tuple(decls), tuple(script), tuple(script_decos), tuple(self.defs), module.span)

    def hoist(self, item: syntax.Item, mod: Scope, pos: int) -> None:
        """Bind one item's names in the module scope (declarations are hoisted).

        The id given to each AST node is kept in :attr:`hoisted` (a duplicate, reported as
        E0402, still gets its own id so its body resolves).
        """
        h = self.hoisted
        if isinstance(item, syntax.FnDecl):
            kind = item.kind if item.kind in ("workflow", "activity") else "fn"
            h[id(item)] = self.define(mod, item.name, kind, item.name_span)
        elif isinstance(item, syntax.TypeDecl):
            if isinstance(item.body, tuple):
                h[id(item)] = self.define(mod, item.name, "sum", item.name_span, types=True)
                for var in item.body:
                    h[id(var)] = self.define(mod, var.name, "variant", var.name_span)
            else:
                kind = "record" if isinstance(item.body, syntax.RecordType) else "alias"
                h[id(item)] = self.define(mod, item.name, kind, item.name_span, types=True)
        elif isinstance(item, syntax.ActorDecl):
            h[id(item)] = self.define(mod, item.name, "actor", item.name_span, types=True)
        elif isinstance(item, syntax.ImportDecl):
            self.hoist_import(item, mod)
        elif isinstance(item, syntax.StmtItem) and isinstance(item.stmt, syntax.Let) and item.stmt.name != "_":
            let = item.stmt
            def_id = self.define(mod, let.name, "let", let.name_span, mutable=let.mutable, top_level=True)
            h[id(let)] = def_id
            self.let_order[def_id] = pos

    def hoist_import(self, imp: syntax.ImportDecl, mod: Scope) -> None:
        """Bind an import's last segment (or alias); ``std`` paths are checked (E0404)."""
        if not imp.path:
            return
        name = imp.alias or imp.path[-1]
        span = imp.alias_span or (imp.segment_spans[-1] if imp.segment_spans else imp.span)
        key = ".".join(imp.path)
        if imp.path[0] != "std":
            self.hoisted[id(imp)] = self.define(mod, name, "import", span, key=key)
            return
        for i in range(1, len(imp.path)):
            if std_member(imp.path[1 : i + 1]) is None:
                parent = std_member(imp.path[1:i])
                members = list(parent) if isinstance(parent, dict) else []
                seg_span = imp.segment_spans[i] if i < len(imp.segment_spans) else imp.span
                fields = {"s": s} if (s := suggest(imp.path[i], members)) else {}
                self.sink.report(codes.E0404, seg_span, m=".".join(imp.path[:i]), n=imp.path[i], **fields)
                self.hoisted[id(imp)] = self.define(mod, name, "import", span, key=key)
                return
        kind = "std_fn" if len(imp.path) == 3 else "std_module"
        self.hoisted[id(imp)] = self.define(mod, name, kind, span, key=key)

    # ------------------------------------------------------------------ declarations

    def decl(self, item: syntax.Item, route_paths: dict[str, Span]) -> hir.Decl | None:
        if isinstance(item, syntax.FnDecl):
            return self.fn_decl(item)
        if isinstance(item, syntax.TypeDecl):
            return self.type_decl(item)
        if isinstance(item, syntax.ActorDecl):
            return self.actor_decl(item)
        if isinstance(item, syntax.RoutesDecl):
            return self.routes_decl(item, route_paths)
        if isinstance(item, syntax.ImportDecl):
            return hir.ImportDecl(self.hoisted.get(id(item)), item.path, item.decorators, item.span)
        return None

    def fn_decl(self, fn: syntax.FnDecl) -> hir.FnDecl:
        def_id = self.hoisted[id(fn)]
        scope = Scope("function", self.module_scope)
        spans = fn.generic_spans if len(fn.generic_spans) == len(fn.generics) else (fn.name_span,) * len(fn.generics)
        generics = tuple(
            hir.Generic(self.define(scope, g, "generic", span, types=True), g) for g, span in zip(fn.generics, spans)
        )
        params = self.params(fn.params, scope)
        ret = self.type_ref(fn.ret, scope) if fn.ret is not None else None
        body = self.function_body(fn.body, scope)
        return hir.FnDecl(
            def_id, fn.kind, fn.name, generics, params, ret, body, fn.decorators, fn.span, fn.name_span,
            fn.extern,
        )

    def params(self, params: tuple[syntax.Param, ...], scope: Scope) -> tuple[hir.Param, ...]:
        """Lower parameters into ``scope`` (types and defaults see the earlier parameters)."""
        out = []
        for p in params:
            ty = self.type_ref(p.type, scope)
            default = self.expr(p.default, scope) if p.default is not None else None
            if p.name != "_":
                pid = self.define(scope, p.name, "param", p.name_span)
            else:
                pid = self.new_def("param", "_", p.name_span)
            out.append(hir.Param(pid, p.name, ty, default, p.span, p.name_span))
        return tuple(out)

    def function_body(self, body: syntax.Block, scope: Scope) -> hir.Block:
        """Lower a function/handler/lambda body; its top level shares ``scope`` with the params."""
        saved = (self.fn_depth, self.loop_depth)
        self.fn_depth, self.loop_depth = self.fn_depth + 1, 0
        try:
            return self.block(body, scope, own_scope=False)
        finally:
            self.fn_depth, self.loop_depth = saved

    def type_decl(self, td: syntax.TypeDecl) -> hir.TypeDecl:
        def_id = self.hoisted[id(td)]
        mod = self.module_scope
        if isinstance(td.body, tuple):
            variants = []
            for var in td.body:
                vid = self.hoisted[id(var)]
                variants.append(hir.Variant(vid, var.name, self.fields(var.fields, mod), var.span, var.name_span))
            return hir.TypeDecl(
                def_id, td.name, "sum", tuple(variants), None, None, td.decorators, td.span, td.name_span
            )
        if isinstance(td.body, syntax.RecordType):
            rec = hir.RecordType(self.fields(td.body.fields, mod), td.body.span)
            return hir.TypeDecl(def_id, td.name, "record", (), rec, None, td.decorators, td.span, td.name_span)
        alias = self.type_ref(td.body, mod)
        return hir.TypeDecl(def_id, td.name, "alias", (), None, alias, td.decorators, td.span, td.name_span)

    def actor_decl(self, actor: syntax.ActorDecl) -> hir.ActorDecl:
        def_id = self.hoisted[id(actor)]
        seen: dict[str, Span] = {}
        handlers = []
        for h in actor.handlers:
            self.check_dup(seen, h.name, h.name_span)
            scope = Scope("function", self.module_scope)
            params = self.params(h.params, scope)
            ret = self.type_ref(h.ret, scope) if h.ret is not None else None
            body = self.function_body(h.body, scope)
            handlers.append(hir.Handler(h.name, params, ret, body, h.span, h.name_span))
        return hir.ActorDecl(def_id, actor.name, tuple(handlers), actor.decorators, actor.span, actor.name_span)

    def routes_decl(self, rd: syntax.RoutesDecl, route_paths: dict[str, Span]) -> hir.RoutesDecl:
        routes = []
        for r in rd.routes:
            self.check_dup(route_paths, r.path, r.path_span)
            target = self.module_scope.lookup(r.target)
            if target is None:
                fields = {"s": s} if (s := self.module_scope.suggest(r.target)) else {}
                self.sink.report(codes.E0401, r.target_span, n=r.target, **fields)
            routes.append(hir.Route(r.path, target, r.target, r.span, r.target_span))
        return hir.RoutesDecl(tuple(routes), rd.decorators, rd.span)

    # ------------------------------------------------------------------ statements

    def block(self, block: syntax.Block, scope: Scope, own_scope: bool = True) -> hir.Block:
        """Lower a block; ``own_scope=False`` puts its ``let``s directly into ``scope``."""
        inner = Scope("block", scope) if own_scope else scope
        if not self.enter(block.span):
            return hir.Block((), block.span)
        try:
            return hir.Block(tuple(self.stmt(s, inner) for s in block.stmts), block.span)
        finally:
            self.depth -= 1

    def stmt(self, stmt: syntax.Stmt, scope: Scope) -> hir.Stmt:
        if not self.enter(stmt.span):
            return hir.ExprStmt(hir.ErrorExpr(stmt.span), stmt.span)
        try:
            return self._stmt(stmt, scope)
        finally:
            self.depth -= 1

    def _stmt(self, stmt: syntax.Stmt, scope: Scope) -> hir.Stmt:
        if isinstance(stmt, syntax.ExprStmt):
            return hir.ExprStmt(self.expr(stmt.expr, scope), stmt.span)
        if isinstance(stmt, syntax.Let):
            return self.let(stmt, scope, None)
        if isinstance(stmt, syntax.Ret):
            if self.fn_depth == 0:
                self.sink.report(codes.E0406, stmt.kw_span)
            value = self.expr(stmt.value, scope) if stmt.value is not None else None
            return hir.Ret(value, stmt.span)
        if isinstance(stmt, syntax.Assign):
            target = self.expr(stmt.target, scope)
            value = self.expr(stmt.value, scope)
            if stmt.op != "=":
                span = Span(stmt.target.span.start, stmt.value.span.end)
                value = hir.Binary(stmt.op[0], target, value, span, stmt.op_span)
            return hir.Assign(target, value, stmt.span)
        if isinstance(stmt, syntax.While):
            cond = self.expr(stmt.cond, scope)
            return hir.While(cond, self.loop_body(stmt.body, scope), stmt.span)
        if isinstance(stmt, syntax.For):
            iterable = self.expr(stmt.iterable, scope)
            loop = Scope("loop", scope)
            var_id = self.define(loop, stmt.var, "loopvar", stmt.var_span) if stmt.var != "_" else None
            index_id = None
            if stmt.index is not None and stmt.index != "_":
                index_id = self.define(loop, stmt.index, "loopvar", stmt.index_span or stmt.span)
            return hir.For(var_id, index_id, iterable, self.loop_body(stmt.body, loop), stmt.span, stmt.var_span)
        if isinstance(stmt, (syntax.Break, syntax.Continue)):
            kw = "break" if isinstance(stmt, syntax.Break) else "continue"
            if self.loop_depth == 0:
                self.sink.report(codes.E0405, stmt.span, kw=kw)
            return hir.Break(stmt.span) if kw == "break" else hir.Continue(stmt.span)
        return hir.ExprStmt(hir.ErrorExpr(stmt.span), stmt.span)  # pragma: no cover - unknown node

    def let(self, let: syntax.Let, scope: Scope, def_id: int | None) -> hir.Let:
        """Lower ``let``; the value is resolved before the name is bound (unless pre-hoisted)."""
        ty = self.type_ref(let.type, scope) if let.type is not None else None
        value = self.expr(let.value, scope)
        if def_id is None and let.name != "_":
            def_id = self.define(scope, let.name, "let", let.name_span, mutable=let.mutable)
        return hir.Let(def_id, let.name, let.mutable, ty, value, let.span, let.name_span)

    def loop_body(self, body: syntax.Block, scope: Scope) -> hir.Block:
        self.loop_depth += 1
        try:
            return self.block(body, scope)
        finally:
            self.loop_depth -= 1



def desugar_item(item: syntax.Item) -> syntax.Item:
    """Spec §10 U6: ``component Name(params) { stmts view: e }`` is
    ``fn Name(params) to Element { stmts ret e }`` (W0009 was reported by the parser)."""
    if not isinstance(item, syntax.ComponentDecl):
        return item
    at = Span(item.name_span.end, item.name_span.end)
    ret_ty = syntax.NamedType("Element", (), at, at)
    view = item.view
    body = syntax.Block(item.stmts + (syntax.Ret(view, "ret", view.span, view.span),), item.span)
    return syntax.FnDecl(
        kind="fn", name=item.name, generics=(), params=item.params, ret=ret_ty, body=body,
        is_pub=False, is_async=False, decorators=item.decorators, span=item.span,
        name_span=item.name_span,
    )
