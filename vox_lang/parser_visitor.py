"""The one visitor that turns a parse tree of ``grammar.peg`` (a :data:`~vox_lang.predict.Tree`)
into :mod:`vox_lang.syntax` nodes, one ``visit_<rule>`` per rule (pass-throughs share ``lift_child``).

The parse tree is never changed. Terminals visit to their :class:`~vox_lang.lexer.Token`;
spans come from the tokens. Parser-level diagnostics (E0201 for a required parameter after a
defaulted one, E0205, E0207–E0212, E0307, E0308, W0001–W0003) are reported here.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Final

from vox_lang import codes, syntax as s
from vox_lang.decorators import ENDPOINT, ENDPOINT_KINDS, ENDPOINT_REASON
from vox_lang.lexer import Token, TokenKind, decode_string
from vox_lang.parser_exprs import ExprBuilder, kids, list_of, opt
from vox_lang.predict import Tree
from vox_lang.source import Span

#: rules whose value is their only child's value
PASS_THROUGH: Final = frozenset({
    "item", "decl", "stray_mod", "deco_arg", "fn_kw", "ret_arrow", "actor_member",
    "route_member", "type", "ret_kw", "assign_op", "unary", "unary_nb", "prefix_op",
    "arm_arrow", "arm_body", "num", "sep", "asep", "stray_member", "rkey",
})

_STMTS: Final = (s.Let, s.Ret, s.While, s.For, s.Assign)


class AstBuilder(ExprBuilder):
    """Visits one item's parse tree into :mod:`vox_lang.syntax` nodes (declarations and
    statements here, expressions and patterns in :class:`ExprBuilder`)."""

    # ------------------------------------------------------------ module and items
    def visit_module(self, node: Tree, children: list[Any]) -> s.Module:
        _, items, _ = children
        return s.Module(tuple(i for i in opt(items, []) if i is not None), self.span(node))

    def visit_items(self, node: Tree, children: list[Any]) -> list[Any]:
        first, rest = children
        return list_of(first, rest)

    def visit_decorated_decl(self, node: Tree, children: list[Any]) -> Any:
        decos, decl = children
        if not decos:
            return decl
        kept = []
        deco_nodes, decl_node = kids(node)
        for deco, deco_node in zip(decos, kids(deco_nodes)):
            if deco.name != ENDPOINT:
                kept.append(deco)
            elif self.endpoint(deco, decl, deco_node, decl_node):
                decl = replace(decl, is_pub=True)
        return replace(decl, decorators=tuple(kept), span=self.span(node))

    def endpoint(self, deco: s.Decorator, decl: Any, deco_node: Tree, decl_node: Tree) -> bool:
        """``@endpoint(kind: K)`` before a ``fn`` is W0008 (spec §10 U3), fixed to ``pub fn``:
        the span runs from ``@`` to the next token (or, past other decorators, to the
        declaration, keeping them); anything else is E0523. True when it makes ``decl`` pub."""
        well_formed = deco.kind in ENDPOINT_KINDS and deco.args is None and deco.opaque is None
        if not (well_formed and isinstance(decl, s.FnDecl) and decl.kind == "fn" and decl.extern is None):
            self.sink.report(codes.E0523, deco.span, d=ENDPOINT, reason=ENDPOINT_REASON)
            return False
        nxt = self.tokens[self.index[deco_node[2]]]
        head = self.tokens[self.index[decl_node[1]]]
        between = self.source_text[nxt.span.start : head.span.start]
        gap = self.source_text[deco.span.end : nxt.span.start]
        kept = gap.lstrip(" \t") if "//" in gap else ""  # a comment after the decorator stays
        fix = kept + between + ("" if head.text == "pub" and head.kind is TokenKind.KEYWORD else "pub ")
        self.sink.report(codes.W0008, Span(deco.span.start, head.span.start), k=deco.kind, fix=fix)
        return True

    def visit_loose_stmt(self, node: Tree, children: list[Any]) -> s.StmtItem:
        decos, mods, stmt = children
        for d in decos:
            self.sink.report(codes.E0205, d.span, what="@" + d.name)
        for m in mods:
            self.sink.report(codes.E0205, m.span, what=m.text)
        return s.StmtItem(stmt, tuple(decos), self.span(node))

    def visit_dangling_decos(self, node: Tree, children: list[Any]) -> None:
        for d in children:
            self.sink.report(codes.E0205, d.span, what="@" + d.name)
        return None

    def visit_deco(self, node: Tree, children: list[Any]) -> s.Decorator:
        tok, arg = children
        arg = opt(arg)
        string = opaque = kind = None
        if isinstance(arg, Token) and arg.kind is TokenKind.DECO_ARGS:
            opaque = arg.text
        elif isinstance(arg, Token):
            string = s.StrLit(decode_string(self.src(arg)), arg.span)
        elif isinstance(arg, str):  # unparsed `( … )` of an argument-taking decorator
            opaque = arg
        elif isinstance(arg, list):  # `(WORD: NAME)`
            word, name, text = arg
            if word == "kind":
                kind = name
            else:
                opaque = text
        args = arg if isinstance(arg, tuple) and not isinstance(arg, Token) else None
        return s.Decorator(tok.text[1:], args, string, self.span(node), kind, opaque)

    def visit_deco_args(self, node: Tree, children: list[Any]) -> tuple[s.Arg, ...]:
        _, args, _ = children
        return tuple(opt(args, ()))

    def visit_deco_raw(self, node: Tree, children: list[Any]) -> str:
        """Arguments of ``@test``/``@mcp.*``/``@endpoint`` that are not ``args``: their source
        text (the checker reports E0523; spec §10 U9)."""
        span = self.span(node)
        return self.source_text[span.start : span.end]

    visit_raw_tok = visit_raw_group = visit_raw_atom = ExprBuilder.generic_visit

    def visit_deco_kind(self, node: Tree, children: list[Any]) -> list[str]:
        """``(WORD: NAME)`` → ``[word, name, source text]``."""
        _, word, _, name, _ = children
        span = self.span(node)
        return [word.text, name.text, self.source_text[span.start : span.end]]

    # ------------------------------------------------------------ declarations
    def visit_fn(self, node: Tree, children: list[Any]) -> s.FnDecl:
        pub, is_async, kind, name, generics, _, params, _, ret, body = children
        ret_ty = opt(ret)
        return s.FnDecl(
            kind=kind.text, name=name.text, generics=tuple(opt(generics, ())),
            params=tuple(opt(params, ())), ret=ret_ty[1] if ret_ty else None, body=body,
            is_pub=bool(pub), is_async=bool(is_async), decorators=(), span=self.span(node),
            name_span=name.span, arrow=ret_ty[0].text if ret_ty else None,
        )

    def visit_generics(self, node: Tree, children: list[Any]) -> tuple[str, ...]:
        _, first, rest, _ = children
        return tuple(t.text for t in list_of(first, rest))

    def visit_params(self, node: Tree, children: list[Any]) -> tuple[s.Param, ...]:
        first, rest, _ = children
        params = list_of(first, rest)
        seen_default = False
        for p in params:
            if p.default is not None:
                seen_default = True
            elif seen_default:  # spec §9: defaulted parameters come last
                self.sink.report(codes.E0201, p.name_span, tok=p.name, list="`)`")
                break
        return tuple(params)

    def visit_param(self, node: Tree, children: list[Any]) -> s.Param:
        name, _, ty, default = children
        return s.Param(name.text, ty, opt(default), self.span(node), name.span)

    def visit_default(self, node: Tree, children: list[Any]) -> s.Expr:
        return children[1]

    def visit_ret_ty(self, node: Tree, children: list[Any]) -> tuple[Token, s.TypeExpr]:
        arrow, ty = children
        if arrow.text == "->":
            self.sink.report(codes.E0308, arrow.span, fix="to")
        return arrow, ty

    def visit_typedecl(self, node: Tree, children: list[Any]) -> s.TypeDecl:
        _, name, (has_eq, body) = children
        return s.TypeDecl(name.text, body, has_eq, (), self.span(node), name.span)

    def visit_type_body(self, node: Tree, children: list[Any]) -> tuple[bool, Any]:
        (body,) = children
        if isinstance(body, tuple) and len(body) == 2 and body[0] == "=":
            return True, body[1]
        self.sink.report(codes.W0003, Span(body.span.start, body.span.start + 1), fix="= {")
        return False, body

    def visit_eq_body(self, node: Tree, children: list[Any]) -> tuple[str, Any]:
        _, (body,) = children
        return "=", body

    def visit_variants(self, node: Tree, children: list[Any]) -> tuple[s.Variant, ...]:
        return tuple(children)

    def visit_variant(self, node: Tree, children: list[Any]) -> s.Variant:
        _, name, fields = children
        return s.Variant(name.text, tuple(opt(fields, ())), self.span(node), name.span)

    def visit_variant_fields(self, node: Tree, children: list[Any]) -> list[s.FieldDecl]:
        _, first, rest, _, _ = children
        return list_of(first, rest)

    def visit_rec_ty(self, node: Tree, children: list[Any]) -> s.RecordType:
        _, _, fields, _, _ = children
        return s.RecordType(tuple(opt(fields, ())), self.span(node))

    def visit_fields(self, node: Tree, children: list[Any]) -> list[s.FieldDecl]:
        first, rest, _ = children
        return list_of(first, rest)

    def visit_field(self, node: Tree, children: list[Any]) -> s.FieldDecl:
        name, _, ty = children
        return s.FieldDecl(name.text, ty, self.span(node), name.span)

    def visit_actor(self, node: Tree, children: list[Any]) -> s.ActorDecl:
        _, name, _, members, _ = children
        handlers = []
        for m in members:
            if isinstance(m, s.Handler):
                handlers.append(m)
            elif not isinstance(m, Token):
                self.sink.report(codes.E0210, m.span)
        return s.ActorDecl(name.text, tuple(handlers), (), self.span(node), name.span)

    def visit_handler(self, node: Tree, children: list[Any]) -> s.Handler:
        _, name, _, params, _, ret, body = children
        ret_ty = opt(ret)
        return s.Handler(
            name.text, tuple(opt(params, ())), ret_ty[1] if ret_ty else None, body,
            self.span(node), name.span,
        )

    def visit_routes(self, node: Tree, children: list[Any]) -> s.RoutesDecl:
        _, _, members, _ = children
        routes = tuple(m for m in members if isinstance(m, s.Route))
        return s.RoutesDecl(routes, (), self.span(node))

    def visit_route(self, node: Tree, children: list[Any]) -> s.Route:
        path, _, target = children
        return s.Route(decode_string(self.src(path)), target.text, self.span(node), path.span, target.span)

    def visit_import(self, node: Tree, children: list[Any]) -> s.ImportDecl:
        _, first, tail, alias = children
        segs = [first] + tail
        alias_tok = opt(alias)
        return s.ImportDecl(
            tuple(t.text for t in segs), alias_tok.text if alias_tok else None, (),
            self.span(node), tuple(t.span for t in segs), alias_tok.span if alias_tok else None,
        )

    def visit_extern_fn(self, node: Tree, children: list[Any]) -> s.FnDecl:
        """``extern fn name(params) to T = "module"`` (spec §10 U13): a function with no body."""
        _, _, name, _, params, _, ret, _, module = children
        ret_ty = opt(ret)
        span = self.span(node)
        return s.FnDecl(
            kind="fn", name=name.text, generics=(), params=tuple(opt(params, ())),
            ret=ret_ty[1] if ret_ty else None, body=s.Block((), Span(span.end, span.end)),
            is_pub=False, is_async=False, decorators=(), span=span, name_span=name.span,
            arrow=ret_ty[0].text if ret_ty else None, extern=decode_string(self.src(module)),
        )

    def visit_component(self, node: Tree, children: list[Any]) -> s.ComponentDecl:
        """``component Name(params) { stmts view: expr }`` (spec §10 U6): W0009, whose fix is
        ``fn Name(params) to Element { stmts ret expr }`` with the text copied verbatim."""
        kw, name, _, params, rparen, _, _, stmts, view, _, _, expr, _, _ = children
        span = self.span(node)
        text = self.source_text
        fix = (
            "fn" + text[kw.span.end : rparen.span.end] + " to Element"
            + text[rparen.span.end : view.span.start] + "ret " + text[expr.span.start : span.end]
        )
        self.sink.report(codes.W0009, span, n=name.text, fix=fix)
        return s.ComponentDecl(name.text, tuple(opt(params, ())), tuple(stmts), expr, (), span, name.span)

    def visit_comp_stmt(self, node: Tree, children: list[Any]) -> s.Stmt:
        return children[0]

    def visit_import_tail(self, node: Tree, children: list[Any]) -> Token:
        return children[1]

    visit_import_alias = visit_import_tail

    def visit_fn_type(self, node: Tree, children: list[Any]) -> s.FnType:
        _, _, types, _, ret = children
        ret_ty = opt(ret)
        return s.FnType(tuple(opt(types, ())), ret_ty[1] if ret_ty else None, self.span(node))

    def visit_type_list(self, node: Tree, children: list[Any]) -> list[s.TypeExpr]:
        first, rest = children
        return list_of(first, rest)

    def visit_named_type(self, node: Tree, children: list[Any]) -> s.NamedType:
        name, args = children
        type_name = name.text
        if type_name == "list" and args:  # spec §10 U7
            self.sink.report(codes.W0006, name.span, fix="List")
            type_name = "List"
        return s.NamedType(type_name, tuple(opt(args, ())), self.span(node), name.span)

    def visit_type_args(self, node: Tree, children: list[Any]) -> list[s.TypeExpr]:
        return children[1]

    # ------------------------------------------------------------ statements
    def visit_block(self, node: Tree, children: list[Any]) -> s.Block:
        _, _, stmts, _, _ = children
        return s.Block(tuple(opt(stmts, ())), self.span(node))

    def visit_stmts(self, node: Tree, children: list[Any]) -> list[s.Stmt]:
        first, rest = children
        return list_of(first, rest)

    def visit_stmt(self, node: Tree, children: list[Any]) -> s.Stmt:
        (x,) = children
        if isinstance(x, Token):
            return s.Break(x.span) if x.text == "break" else s.Continue(x.span)
        if isinstance(x, _STMTS):
            return x
        return s.ExprStmt(x, x.span)

    def visit_let(self, node: Tree, children: list[Any]) -> s.Let:
        _, mut, name, ty, _, value = children
        return s.Let(name.text, bool(mut), opt(ty), value, self.span(node), name.span)

    def visit_let_type(self, node: Tree, children: list[Any]) -> s.TypeExpr:
        return children[1]

    def visit_ret(self, node: Tree, children: list[Any]) -> s.Ret:
        kw, value = children
        if kw.text == "return":
            self.sink.report(codes.W0001, kw.span, fix="ret")
        return s.Ret(opt(value), kw.text, self.span(node), kw.span)

    def visit_while(self, node: Tree, children: list[Any]) -> s.While:
        _, cond, body = children
        return s.While(cond, body, self.span(node))

    def visit_for(self, node: Tree, children: list[Any]) -> s.For:
        _, var, index, _, iterable, body = children
        idx = opt(index)
        return s.For(
            var.text, idx.text if idx else None, iterable, body, self.span(node), var.span,
            idx.span if idx else None,
        )

    def visit_for_index(self, node: Tree, children: list[Any]) -> Token:
        return children[1]

    def visit_assign(self, node: Tree, children: list[Any]) -> s.Assign:
        target, op, value = children
        if not _is_place(target):
            self.sink.report(codes.E0207, target.span)
        return s.Assign(target, op.text, value, self.span(node), op.span)


def _is_place(e: s.Expr) -> bool:
    """``NAME ("." WORD / "[" expr "]")*`` (spec §2 ``place``)."""
    while isinstance(e, (s.Member, s.Index)):
        e = e.obj
    return isinstance(e, s.Name)


for _rule in PASS_THROUGH:
    setattr(AstBuilder, "visit_" + _rule, ExprBuilder.lift_child)
AstBuilder.finish_dispatch()
