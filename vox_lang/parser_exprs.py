"""Expression and pattern half of the parse-tree visitor (see :mod:`vox_lang.parser_visitor`).

:class:`ExprBuilder` holds the helpers every ``visit_<rule>`` uses (token lookup, spans) and
the visitors of the expression and pattern rules; binary operators arrive as a flat list and
get the precedence of spec §2 here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from vox_lang import codes, syntax as s
from vox_lang.diagnostics import DiagnosticSink
from vox_lang.lexer import Token, TokenKind, decode_string
from vox_lang.predict import Tree
from vox_lang.source import Span

#: binary operator precedence (spec §2, loosest first); all associate left
PRECEDENCE: Final[dict[str, int]] = {
    "|>": 1, "or": 2, "and": 3, "==": 4, "!=": 4,
    "<": 5, ">": 5, "<=": 5, ">=": 5, "+": 6, "-": 6, "*": 7, "/": 7, "%": 7,
}


def kids(node: Tree) -> tuple[Tree, ...]:
    """The children of a rule's node (a terminal has none)."""
    return node[3] or ()


def list_of(first: Any, rest: list[list[Any]]) -> list[Any]:
    """``x ("," x)*`` → ``[x, ...]`` (each element of ``rest`` is ``[sep, x]``)."""
    return [first] + [pair[-1] for pair in rest]


def opt(children: list[Any], default: Any = None) -> Any:
    """Value of an optional (``x?``): its one child, or ``default``."""
    return children[0] if children else default


class ExprBuilder:
    """Visits one item's parse tree. ``tokens`` are the item's tokens; ``index`` maps a
    position in the joined text to a token index."""

    def __init__(self, tokens: tuple[Token, ...], index: dict[int, int], sink: DiagnosticSink) -> None:
        self.tokens = tokens
        self.index = index
        self.sink = sink
        self.source_text = sink.source.text

    # ------------------------------------------------------------ helpers
    def span(self, node: Tree) -> Span:
        """Source span of the tokens ``node`` matched (empty at the next token if none)."""
        i = self.index[node[1]]
        j = self.index[node[2]]
        if j <= i:
            at = self.tokens[i].span.start if i < len(self.tokens) else self.tokens[-1].span.end
            return Span(at, at)
        return Span(self.tokens[i].span.start, self.tokens[j - 1].span.end)

    def src(self, tok: Token) -> str:
        """The source text of ``tok`` (differs from ``tok.text`` for substituted tokens)."""
        return self.source_text[tok.span.start : tok.span.end]

    def visit(self, node: Tree) -> Any:
        """Depth-first walk calling ``visit_<rule>(node, children's values)`` for named nodes
        (the contract of parsimonious's ``NodeVisitor.visit``, on a :data:`~vox_lang.predict.Tree`,
        without its per-node exception wrapping and method lookup by string; an exception here
        is a bug and propagates)."""
        name, start, _, children = node
        method = self._dispatch.get(name)
        if children:
            if method is _LIFT and len(children) == 1:  # a pass-through rule: its child's value
                return self.visit(children[0])
            visit = self.visit
            values = [visit(n) for n in children]
            if method is None:  # an anonymous group: its children's values
                return values
            return method(self, node, values)
        if method is None or method is _GENERIC:  # a leaf as generic_visit takes it, without the call
            return self.tokens[self.index[start]] if children is None else []
        return method(self, node, [])

    #: rule name -> visitor function, filled by :meth:`finish_dispatch`
    _dispatch: dict[str, Any] = {}

    @classmethod
    def finish_dispatch(cls) -> None:
        """Collect the ``visit_<rule>`` functions (call once the class is complete)."""
        cls._dispatch = {
            name[len("visit_") :]: getattr(cls, name) for name in dir(cls) if name.startswith("visit_")
        }

    def lift_child(self, node: Tree, children: Sequence[Any]) -> Any:
        """A pass-through rule's value: its one child's (as ``NodeVisitor.lift_child``)."""
        (first,) = children
        return first

    def generic_visit(self, node: Tree, children: Sequence[Any]) -> Any:
        """Terminals visit to their token; anonymous groups to their children's values."""
        if node[3] is None:
            return self.tokens[self.index[node[1]]]
        return children

    visit_NAME = visit_INT = visit_FLOAT = visit_STRING = visit_DECO = visit_DECO_ARGS = visit_NL = generic_visit
    visit_WORD = visit_binop = visit_break = visit_continue = visit_try = generic_visit
    visit_suffix_start = generic_visit

    def visit_binder(self, node: Tree, _: list[Any]) -> Token:
        """A name being defined; a reserved word there is E0209."""
        tok: Token = self.tokens[self.index[node[1]]]
        if tok.kind is TokenKind.KEYWORD:
            self.sink.report(codes.E0209, tok.span, kw=tok.text)
        return tok

    # ------------------------------------------------------------ operators
    def visit_expr(self, node: Tree, children: list[Any]) -> s.Expr:
        first, rest = children
        if not rest:
            return first
        operands = [first]
        ops: list[Token] = []

        def reduce() -> None:
            op = ops.pop()
            right = operands.pop()
            left = operands.pop()
            operands.append(s.Binary(op.text, left, right, left.span.cover(right.span), op.span))

        for op, operand in rest:
            prec = PRECEDENCE[op.text]
            while ops and PRECEDENCE[ops[-1].text] >= prec:
                reduce()
            ops.append(op)
            operands.append(operand)
        while ops:
            reduce()
        return operands[0]

    visit_expr_nb = visit_expr

    def visit_prefix(self, node: Tree, children: list[Any]) -> s.Unary:
        op, operand = children
        return s.Unary(op.text, operand, self.span(node), op.span)

    visit_prefix_nb = visit_prefix

    def visit_postfix(self, node: Tree, children: list[Any]) -> s.Expr:
        acc, suffixes = children
        start = acc.span.start
        for kind, a, b, end in suffixes:
            span = Span(start, end.end)
            if kind == "call":
                acc = s.Call(acc, a, b, span)
            elif kind == "member":
                acc = s.Member(acc, a.text, span, a.span)
            elif kind == "index":
                acc = s.Index(acc, a, span)
            else:
                acc = s.Try(acc, span, end)
        return acc

    visit_postfix_nb = visit_postfix

    def visit_call(self, node: Tree, children: list[Any]) -> tuple[str, Any, Any, Span]:
        _, args, _, kids = children
        arg_list = tuple(opt(args, ()))
        block = opt(kids)
        if block is not None and any(a.name is None for a in arg_list):
            self.sink.report(codes.E0212, Span(block.span.start, block.span.start + 1))
        return "call", arg_list, block, self.span(node)

    def visit_call_nb(self, node: Tree, children: list[Any]) -> tuple[str, Any, Any, Span]:
        _, args, _ = children
        return "call", tuple(opt(args, ())), None, self.span(node)

    def visit_member(self, node: Tree, children: list[Any]) -> tuple[str, Any, Any, Span]:
        return "member", children[1], None, self.span(node)

    def visit_index(self, node: Tree, children: list[Any]) -> tuple[str, Any, Any, Span]:
        return "index", children[1], None, self.span(node)

    def visit_suffix(self, node: Tree, children: list[Any]) -> tuple[str, Any, Any, Span]:
        _, (x,) = children
        if isinstance(x, Token):  # `?`
            return "try", None, None, x.span
        return x

    visit_suffix_nb = visit_suffix

    def visit_args(self, node: Tree, children: list[Any]) -> list[s.Arg]:
        first, rest, _ = children
        args = list_of(first, rest)
        named = False
        for a in args:
            if a.name is not None:
                named = True
            elif named:  # spec §2: named arguments follow positional ones
                self.sink.report(codes.E0208, a.span)
        return args

    def visit_arg(self, node: Tree, children: list[Any]) -> s.Arg:
        (x,) = children
        if isinstance(x, s.Arg):
            return x
        return s.Arg(None, x, x.span)

    def visit_named_arg(self, node: Tree, children: list[Any]) -> s.Arg:
        name, _, value = children
        return s.Arg(name.text, value, self.span(node), name.span)

    def visit_children(self, node: Tree, children: list[Any]) -> s.Children:
        _, _, items, _, _ = children
        return s.Children(tuple(opt(items, ())), self.span(node))

    def visit_child_list(self, node: Tree, children: list[Any]) -> list[s.Expr]:
        first, rest = children
        return list_of(first, rest)

    # ------------------------------------------------------------ primaries
    def visit_primary(self, node: Tree, children: list[Any]) -> s.Expr:
        (x,) = children
        if not isinstance(x, Token):
            return x
        kind = x.kind
        if kind is TokenKind.NAME:
            return s.Name(x.text, x.span)
        if kind is TokenKind.INT:
            return s.IntLit(int(x.text), x.span)
        if kind is TokenKind.FLOAT:
            return s.FloatLit(float(x.text), x.text, x.span)
        if kind is TokenKind.STRING:
            return s.StrLit(decode_string(self.src(x)), x.span)
        return s.BoolLit(x.text == "true", x.span)

    def visit_list(self, node: Tree, children: list[Any]) -> s.ListLit:
        return s.ListLit(tuple(opt(children[1], ())), self.span(node))

    def visit_list_items(self, node: Tree, children: list[Any]) -> list[s.Expr]:
        first, rest, _ = children
        return list_of(first, rest)

    def visit_record(self, node: Tree, children: list[Any]) -> s.RecordLit:
        _, _, _, first, rest, _, _, _ = children
        return s.RecordLit(tuple(list_of(first, rest)), self.span(node))

    def visit_rec_start(self, node: Tree, children: list[Any]) -> None:
        return None

    def visit_rfield(self, node: Tree, children: list[Any]) -> s.RecordField:
        key, _, value = children
        quoted = key.kind is TokenKind.STRING
        name = decode_string(self.src(key)) if quoted else key.text
        return s.RecordField(name, value, quoted, self.span(node), key.span)

    def visit_empty_map(self, node: Tree, children: list[Any]) -> s.RecordLit:
        return s.RecordLit((), self.span(node))

    def visit_paren(self, node: Tree, children: list[Any]) -> s.Expr:
        return children[1]

    def visit_unit(self, node: Tree, children: list[Any]) -> s.UnitLit:
        return s.UnitLit(self.span(node))

    def visit_if(self, node: Tree, children: list[Any]) -> s.If:
        _, cond, then, else_ = children
        return s.If(cond, then, opt(else_), self.span(node))

    def visit_else_clause(self, node: Tree, children: list[Any]) -> s.Block | s.If:
        return children[1][0]

    def visit_match(self, node: Tree, children: list[Any]) -> s.Match:
        kw, scrutinee, _, _, arms, _, _ = children
        arm_list = tuple(opt(arms, ()))
        if not arm_list:
            self.sink.report(codes.E0211, kw.span)
        return s.Match(scrutinee, arm_list, self.span(node))

    def visit_arms(self, node: Tree, children: list[Any]) -> list[s.Arm]:
        first, rest, _ = children
        return list_of(first, rest)

    def visit_arm(self, node: Tree, children: list[Any]) -> s.Arm:
        pattern, arrow, body = children
        if arrow.text == "to":
            self.sink.report(codes.E0307, arrow.span, fix="->")
        elif arrow.text == "=>":
            self.sink.report(codes.W0002, arrow.span, fix="->")
        return s.Arm(pattern, arrow.text, body, self.span(node), arrow.span)

    def visit_arm_stmt(self, node: Tree, children: list[Any]) -> s.Block:
        """``ret e`` / ``break`` / ``continue`` as an arm body (spec §10 U11): W0007, read as
        ``{ stmt }``."""
        (x,) = children
        if isinstance(x, Token):
            stmt: s.Stmt = s.Break(x.span) if x.text == "break" else s.Continue(x.span)
            kw = x.text
        else:
            stmt = x
            kw = self.source_text[x.kw_span.start : x.kw_span.end]
        span = stmt.span
        self.sink.report(codes.W0007, span, kw=kw, fix="{ " + self.source_text[span.start : span.end] + " }")
        return s.Block((stmt,), span)

    def visit_arm_block(self, node: Tree, children: list[Any]) -> s.Block:
        return children[1]

    def visit_lambda(self, node: Tree, children: list[Any]) -> s.Lambda:
        _, _, params, _, ret, body = children
        ret_ty = opt(ret)
        return s.Lambda(tuple(opt(params, ())), ret_ty[1] if ret_ty else None, body, self.span(node))

    def visit_spawn(self, node: Tree, children: list[Any]) -> s.Spawn:
        name = children[2]
        return s.Spawn(name.text, self.span(node), name.span)

    # ------------------------------------------------------------ patterns
    def visit_pattern(self, node: Tree, children: list[Any]) -> s.Pattern:
        (x,) = children
        if not isinstance(x, Token):
            return x
        if x.code == "_":
            return s.WildcardPat(x.span)
        if x.kind is TokenKind.STRING:
            return s.LiteralPat(decode_string(self.src(x)), "str", x.span)
        return s.LiteralPat(x.text == "true", "bool", x.span)

    def visit_num_pat(self, node: Tree, children: list[Any]) -> s.LiteralPat:
        minus, num = children
        sign = -1 if minus else 1
        if num.kind is TokenKind.INT:
            return s.LiteralPat(sign * int(num.text), "int", self.span(node))
        return s.LiteralPat(sign * float(num.text), "float", self.span(node))

    def visit_ctor_pat(self, node: Tree, children: list[Any]) -> s.Pattern:
        name, args = children
        if not args and not name.text[:1].isupper():
            return s.BindPat(name.text, name.span)
        return s.CtorPat(name.text, tuple(opt(args, ())), bool(args), self.span(node), name.span)

    def visit_ctor_args(self, node: Tree, children: list[Any]) -> list[s.Pattern]:
        _, first, rest, _ = children
        return list_of(first, rest)


#: leaves visited by this are answered by :meth:`ExprBuilder.visit` itself
_GENERIC: Final = ExprBuilder.generic_visit
#: nodes visited by this are replaced by their one child in :meth:`ExprBuilder.visit`
_LIFT: Final = ExprBuilder.lift_child
