"""Lowering of expressions, patterns and type expressions (the part of :mod:`vox_lang.lower`
that resolves uses), plus the definition table and scope bookkeeping it shares."""

from __future__ import annotations

from vox_lang import codes, hir, syntax
from vox_lang.depth import PASS_FRAMES_PER_LEVEL, level_budget, out_of_budget
from vox_lang.diagnostics import DiagnosticSink
from vox_lang.prelude import STD, std_member
from vox_lang.scopes import Scope
from vox_lang.source import Span
from vox_lang.suggest import suggest
from vox_lang.types import BUILTIN_ARITY

_CTOR_KINDS = frozenset({"ctor", "variant"})


class ExprLowerer:
    """Definition table, scopes and expression-level lowering."""

    def __init__(self, sink: DiagnosticSink) -> None:
        self.sink = sink
        self.defs: list[hir.Def] = []
        self.prelude = Scope("prelude")
        self.module_scope = Scope("module", self.prelude)
        self.hoisted: dict[int, int] = {}  # id(AST node) -> def id given while hoisting
        self.let_order: dict[int, int] = {}  # top-level let def id -> item position
        self.script_pos: int | None = None  # item position while lowering the script body
        self.std_ids: dict[str, int] = {}
        self.fn_depth = 0
        self.loop_depth = 0
        self.depth = 0
        self.max_depth = level_budget(PASS_FRAMES_PER_LEVEL)  # see vox_lang.depth
        self.prelude_std = -1  # def id of the prelude's `std` (spec §10 U1)
        self.first_item_start = 0  # where W0005's fix inserts `import std`
        self.std_warned = False

    # ------------------------------------------------------------------ definitions

    def new_def(
        self, kind: str, name: str, span: Span | None, *, mutable: bool = False, key: str = "",
        top_level: bool = False,
    ) -> int:
        def_id = len(self.defs)
        self.defs.append(hir.Def(def_id, kind, name, span, mutable, key, top_level))
        return def_id

    def define(
        self, scope: Scope, name: str, kind: str, span: Span | None, types: bool = False, *,
        mutable: bool = False, key: str = "", top_level: bool = False,
    ) -> int:
        """Bind ``name`` in ``scope``; a second definition in one scope is E0402 (at it)."""
        def_id = self.new_def(kind, name, span, mutable=mutable, key=key, top_level=top_level)
        table = scope.types if types else scope.values
        first = table.get(name)
        if first is not None:
            self.report_dup(name, self.defs[first].span, span)
        else:
            table[name] = def_id
        return def_id

    def report_dup(self, name: str, first: Span | None, span: Span | None) -> None:
        if span is None:
            return
        line, col = self.sink.source.line_col(first.start) if first is not None else (0, 0)
        self.sink.report(codes.E0402, span, n=name, line=line, col=col)

    def check_dup(self, seen: dict[str, Span], name: str, span: Span) -> None:
        """E0402 for a repeated field, handler or route path; else remember it."""
        if name in seen:
            self.report_dup(name, seen[name], span)
        else:
            seen[name] = span

    def std_def(self, path: tuple[str, ...]) -> int:
        """The (lazily created) definition of ``std.<path>``: a module or a function."""
        key = ".".join(("std",) + path)
        if key not in self.std_ids:
            kind = "std_fn" if len(path) == 2 else "std_module"
            self.std_ids[key] = self.new_def(kind, path[-1] if path else "std", None, key=key)
        return self.std_ids[key]

    # ------------------------------------------------------------------ statement hooks
    # Expressions hold blocks and lambdas; their lowering lives with the statements in
    # :class:`vox_lang.lower.Lowerer`, the one subclass, which overrides these three.

    def block(self, block: syntax.Block, scope: Scope, own_scope: bool = True) -> hir.Block:
        """Lower a block (see :meth:`vox_lang.lower.Lowerer.block`)."""
        raise NotImplementedError

    def params(self, params: tuple[syntax.Param, ...], scope: Scope) -> tuple[hir.Param, ...]:
        """Lower parameters (see :meth:`vox_lang.lower.Lowerer.params`)."""
        raise NotImplementedError

    def function_body(self, body: syntax.Block, scope: Scope) -> hir.Block:
        """Lower a function-like body (see :meth:`vox_lang.lower.Lowerer.function_body`)."""
        raise NotImplementedError

    def visible(self, def_id: int) -> bool:
        """Top-level ``let``s are seen by later top-level statements only (and by all bodies)."""
        if self.script_pos is None:
            return True
        order = self.let_order.get(def_id)
        return order is None or order < self.script_pos

    def enter(self, span: Span) -> bool:
        """Count one level of nesting; False (nothing counted) past the stack budget, which
        :func:`vox_lang.depth.out_of_budget` records at ``span`` (never silently)."""
        if self.depth >= self.max_depth:
            out_of_budget(self.sink, span)
            return False
        self.depth += 1
        return True

    # ------------------------------------------------------------------ expressions

    def expr(self, e: syntax.Expr, scope: Scope) -> hir.Expr:
        if not self.enter(e.span):
            return hir.ErrorExpr(e.span)
        try:
            return self._expr(e, scope)
        finally:
            self.depth -= 1

    def _expr(self, e: syntax.Expr, scope: Scope) -> hir.Expr:  # noqa: C901 - one dispatch
        if isinstance(e, syntax.Name):
            return self.name(e, scope)
        if isinstance(e, syntax.IntLit):
            return hir.Lit(e.value, "int", e.span)
        if isinstance(e, syntax.FloatLit):
            return hir.Lit(e.value, "float", e.span)
        if isinstance(e, syntax.StrLit):
            return hir.Lit(e.value, "str", e.span)
        if isinstance(e, syntax.BoolLit):
            return hir.Lit(e.value, "bool", e.span)
        if isinstance(e, syntax.UnitLit):
            return hir.Lit(None, "unit", e.span)
        if isinstance(e, syntax.Call):
            return self.call(e, scope)
        if isinstance(e, syntax.Member):
            return self.member(e, scope)
        if isinstance(e, syntax.Binary):
            return self.binary_chain(e, scope)
        if isinstance(e, syntax.Unary):
            return hir.Unary(e.op, self.expr(e.operand, scope), e.span, e.op_span)
        if isinstance(e, syntax.ListLit):
            return hir.ListLit(tuple(self.expr(x, scope) for x in e.elems), e.span)
        if isinstance(e, syntax.RecordLit):
            seen: dict[str, Span] = {}
            fields = []
            for f in e.fields:
                self.check_dup(seen, f.name, f.name_span)
                fields.append(hir.RecordField(f.name, self.expr(f.value, scope), f.quoted, f.span, f.name_span))
            return hir.RecordLit(tuple(fields), e.span)
        if isinstance(e, syntax.Index):
            return hir.Index(self.expr(e.obj, scope), self.expr(e.index, scope), e.span)
        if isinstance(e, syntax.Try):
            return hir.Try(self.expr(e.operand, scope), e.span, e.q_span)
        if isinstance(e, syntax.If):
            return self.if_(e, scope)
        if isinstance(e, syntax.Match):
            return self.match(e, scope)
        if isinstance(e, syntax.Lambda):
            return self.lambda_(e, scope)
        if isinstance(e, syntax.Spawn):
            target = scope.lookup(e.actor, types=True)
            if target is None or self.defs[target].kind != "actor":
                self.sink.report(codes.E0408, e.name_span, n=e.actor)
                target = None
            return hir.Spawn(target, e.actor, e.span, e.name_span)
        if isinstance(e, syntax.Block):
            return self.block(e, scope)
        return hir.ErrorExpr(e.span)

    def name(self, e: syntax.Name, scope: Scope) -> hir.Expr:
        def_id = scope.lookup(e.name, visible=self.visible)
        if def_id is not None:
            if def_id == self.prelude_std and not self.std_warned:
                self.std_warned = True  # spec §10 U1: once per module, fixed by `import std`
                at = Span(self.first_item_start, self.first_item_start)
                self.sink.report(codes.W0005, at, fix="import std\n")
            return hir.Ref(def_id, e.name, e.span)
        if scope.lookup(e.name, types=True) is not None:
            hint = "the Unit value is `()`" if e.name == "Unit" else None
            self.sink.report(codes.E0410, e.span, n=e.name, hint=hint)
        elif e.name in STD:
            self.sink.report(codes.E0401, e.span, n=e.name, hint=f"add `import std.{e.name}`")
        else:
            fields = {"s": s} if (s := scope.suggest(e.name, visible=self.visible)) else {}
            self.sink.report(codes.E0401, e.span, n=e.name, **fields)
        return hir.ErrorExpr(e.span)

    def member(self, e: syntax.Member, scope: Scope) -> hir.Expr:
        obj = self.expr(e.obj, scope)
        if isinstance(obj, hir.Ref):
            d = self.defs[obj.def_id]
            if d.kind == "std_module":
                path = tuple(d.key.split(".")[1:])
                table = std_member(path)
                if isinstance(table, dict) and e.name in table:
                    return hir.Ref(self.std_def(path + (e.name,)), f"{obj.name}.{e.name}", e.span)
                members = list(table) if isinstance(table, dict) else []
                fields = {"s": s} if (s := suggest(e.name, members)) else {}
                self.sink.report(codes.E0404, e.name_span, m=d.key, n=e.name, **fields)
                return hir.ErrorExpr(e.span)
        return hir.Member(obj, e.name, e.span, e.name_span)

    def call(self, e: syntax.Call, scope: Scope) -> hir.Call:
        callee = self.expr(e.callee, scope)
        args = [hir.Arg(a.name, self.expr(a.value, scope), a.span, a.name_span) for a in e.args]
        if e.children is not None:
            items = tuple(self.expr(x, scope) for x in e.children.items)
            ch = e.children
            args.append(hir.Arg("children", hir.Children(items, ch.span), ch.span, ch.span))
        return hir.Call(callee, tuple(args), e.span)

    def binary_chain(self, e: syntax.Binary, scope: Scope) -> hir.Expr:
        """A binary operator and the left-nested operators under it (``a + b + … + z``,
        ``x |> f |> g``), lowered along the chain's left spine in a loop: a flat chain of any
        length is one nesting level, not one per operand (spec §2 counts brackets, blocks and
        prefix operators). Operands are lowered left to right, as written."""
        spine = [e]
        while isinstance(spine[-1].left, syntax.Binary):
            spine.append(spine[-1].left)
        acc = self.expr(spine[-1].left, scope)
        for node in reversed(spine):
            if node.op == "|>":
                acc = self.pipe(node, acc, scope)
            else:
                acc = hir.Binary(node.op, acc, self.expr(node.right, scope), node.span, node.op_span)
        return acc

    def pipe(self, e: syntax.Binary, left: hir.Expr, scope: Scope) -> hir.Expr:
        """``a |> f(b)`` → ``f(a, b)``; ``a |> g`` → ``g(a)`` (``left``: ``a`` lowered)."""
        first = hir.Arg(None, left, e.left.span)
        if isinstance(e.right, syntax.Call):
            inner = self.call(e.right, scope)
            return hir.Call(inner.callee, (first,) + inner.args, e.span)
        return hir.Call(self.expr(e.right, scope), (first,), e.span)

    def if_(self, e: syntax.If, scope: Scope) -> hir.If:
        cond = self.expr(e.cond, scope)
        then = self.block(e.then, scope)
        if e.else_ is None:
            else_: hir.Block | hir.If = hir.Block((), Span(e.then.span.end, e.then.span.end))
        elif isinstance(e.else_, syntax.If):
            else_ = self.if_(e.else_, scope)
        else:
            else_ = self.block(e.else_, scope)
        return hir.If(cond, then, else_, e.span)

    def match(self, e: syntax.Match, scope: Scope) -> hir.Match:
        scrutinee = self.expr(e.scrutinee, scope)
        arms = []
        for arm in e.arms:
            arm_scope = Scope("arm", scope)
            pat = self.pattern(arm.pattern, arm_scope)
            if isinstance(arm.body, syntax.Block):
                body: hir.Expr = self.block(arm.body, arm_scope)
            else:
                body = self.expr(arm.body, arm_scope)
            arms.append(hir.Arm(pat, body, arm.span))
        return hir.Match(scrutinee, tuple(arms), e.span)

    def lambda_(self, e: syntax.Lambda, scope: Scope) -> hir.Lambda:
        fn_scope = Scope("function", scope)
        params = self.params(e.params, fn_scope)
        ret = self.type_ref(e.ret, fn_scope) if e.ret is not None else None
        body = self.function_body(e.body, fn_scope)
        return hir.Lambda(params, ret, body, e.span)

    # ------------------------------------------------------------------ patterns

    def pattern(self, p: syntax.Pattern, scope: Scope) -> hir.Pattern:
        if not self.enter(p.span):
            return hir.WildcardPat(p.span)
        try:
            return self._pattern(p, scope)
        finally:
            self.depth -= 1

    def _pattern(self, p: syntax.Pattern, scope: Scope) -> hir.Pattern:
        if isinstance(p, syntax.BindPat):
            if p.name == "_":
                return hir.WildcardPat(p.span)
            return hir.BindPat(self.define(scope, p.name, "armvar", p.span), p.name, p.span)
        if isinstance(p, syntax.LiteralPat):
            return hir.LiteralPat(p.value, p.kind, p.span)
        if isinstance(p, syntax.CtorPat):
            def_id = scope.lookup(p.name)
            if def_id is None or self.defs[def_id].kind not in _CTOR_KINDS:
                ctor = scope.suggest(p.name, visible=lambda i: self.defs[i].kind in _CTOR_KINDS)
                fields = {"S": ctor} if ctor else {}
                self.sink.report(codes.E0407, p.name_span, C=p.name, **fields)
                def_id = None
            args = tuple(self.pattern(a, scope) for a in p.args)
            return hir.CtorPat(def_id, p.name, args, p.has_parens, p.span, p.name_span)
        return hir.WildcardPat(p.span)

    # ------------------------------------------------------------------ types

    def type_ref(self, t: syntax.TypeExpr, scope: Scope) -> hir.TypeRef:
        if not self.enter(t.span):
            return hir.ErrType(t.span)
        try:
            return self._type_ref(t, scope)
        finally:
            self.depth -= 1

    def _type_ref(self, t: syntax.TypeExpr, scope: Scope) -> hir.TypeRef:
        if isinstance(t, syntax.FnType):
            params = tuple(self.type_ref(x, scope) for x in t.params)
            ret = self.type_ref(t.ret, scope) if t.ret is not None else None
            return hir.FnType(params, ret, t.span)
        if isinstance(t, syntax.RecordType):
            seen: dict[str, Span] = {}
            for f in t.fields:
                self.check_dup(seen, f.name, f.name_span)
            return hir.RecordType(self.fields(t.fields, scope, check=False), t.span)
        if not isinstance(t, syntax.NamedType):
            return hir.ErrType(getattr(t, "span", Span(0, 0)))
        args = tuple(self.type_ref(a, scope) for a in t.args)
        def_id = scope.lookup(t.name, types=True)
        if def_id is None:
            fields = {"S": s} if (s := scope.suggest(t.name, types=True)) else {}
            self.sink.report(codes.E0403, t.name_span, T=t.name, **fields)
            return hir.ErrType(t.span)
        d = self.defs[def_id]
        lo, hi = BUILTIN_ARITY.get(d.key, (0, 0)) if d.kind == "prim" else (0, 0)
        if not lo <= len(args) <= hi:
            n = str(lo) if lo == hi else f"{lo} to {hi}"
            self.sink.report(codes.E0409, t.name_span, T=t.name, n=n, m=len(args))
            return hir.ErrType(t.span)
        return hir.NamedType(def_id, t.name, args, t.span)

    def fields(
        self, fields: tuple[syntax.FieldDecl, ...], scope: Scope, check: bool = True
    ) -> tuple[hir.FieldDecl, ...]:
        """Lower field declarations (E0402 for a repeated name when ``check``)."""
        seen: dict[str, Span] = {}
        out = []
        for f in fields:
            if check:
                self.check_dup(seen, f.name, f.name_span)
            out.append(hir.FieldDecl(f.name, self.type_ref(f.type, scope), f.span, f.name_span))
        return tuple(out)
