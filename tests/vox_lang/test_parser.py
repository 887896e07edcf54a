"""Parser: AST shapes and spans, the grammar/visitor contract, the round-trip fixture."""

from __future__ import annotations

from pathlib import Path

import pytest
from parsimonious.expressions import Literal

from vox_lang import syntax as s
from vox_lang.diagnostics import DiagnosticSink
from vox_lang.lexer import CONTEXTUAL, KEYWORDS, PUNCTUATION
from vox_lang.parser import CLASS_CODES, load_grammar, parse_module
from vox_lang.parser_visitor import PASS_THROUGH, AstBuilder
from vox_lang.printer import unparse
from vox_lang.source import SourceFile

FIXTURE = Path(__file__).parent / "fixtures" / "roundtrip.vox"


def parse(text: str) -> tuple[s.Module, list[tuple[str, int, int]]]:
    src = SourceFile(text)
    sink = DiagnosticSink(src)
    module = parse_module(src, sink)
    return module, [(d.code, d.line, d.col) for d in sink.sorted()]


def only_stmt(text: str) -> s.Stmt:
    module, diags = parse(text)
    assert diags == []
    (item,) = module.items
    assert isinstance(item, s.StmtItem)
    return item.stmt


def test_every_rule_has_a_visitor_or_is_a_pass_through() -> None:
    grammar, _ = load_grammar()
    missing = [name for name in grammar if not hasattr(AstBuilder, "visit_" + name)]
    assert missing == []
    assert PASS_THROUGH <= set(grammar)


def test_grammar_literals_are_lexer_tokens() -> None:
    grammar, _ = load_grammar()
    seen: set[str] = set()
    stack = list(grammar.values())
    visited: set[int] = set()
    while stack:
        e = stack.pop()
        if id(e) in visited:
            continue
        visited.add(id(e))
        if isinstance(e, Literal):
            seen.add(e.literal.strip())
        stack.extend(getattr(e, "members", ()))
    assert seen <= KEYWORDS | CONTEXTUAL | set(PUNCTUATION) | CLASS_CODES
    # every reserved word is used by the grammar (`and`/`or` inside the binop regex; `is`
    # only as the lexer's compat spelling of `==`, spec §10 U4)
    assert KEYWORDS - seen == {"and", "or", "is"}
    assert CONTEXTUAL <= seen


@pytest.mark.parametrize("line", FIXTURE.read_text(encoding="utf-8").splitlines())
def test_roundtrip(line: str) -> None:
    module, diags = parse(line + "\n")
    assert diags == []
    assert unparse(module) == line


def test_precedence_and_associativity() -> None:
    stmt = only_stmt("let v = 1 - 2 - 3 * 4 |> f or a and not b == c\n")
    assert isinstance(stmt, s.Let)
    assert unparse(stmt.value) == "1 - 2 - 3 * 4 |> f or a and not b == c"
    pipe = stmt.value  # `|>` binds loosest, then or, and, ==, +/-, *
    assert isinstance(pipe, s.Binary) and pipe.op == "|>"
    minus = pipe.left
    assert isinstance(minus, s.Binary) and minus.op == "-" and isinstance(minus.left, s.Binary)
    assert isinstance(minus.right, s.Binary) and minus.right.op == "*"
    or_ = pipe.right
    assert isinstance(or_, s.Binary) and or_.op == "or"
    and_ = or_.right
    assert isinstance(and_, s.Binary) and and_.op == "and"
    eq = and_.right
    assert isinstance(eq, s.Binary) and eq.op == "==" and isinstance(eq.left, s.Unary)


def test_spans_point_at_source() -> None:
    text = "fn area(s: Shape) to float {\n  ret s.r\n}\n"
    module, _ = parse(text)
    (fn,) = module.items
    assert isinstance(fn, s.FnDecl)
    assert text[fn.name_span.start : fn.name_span.end] == "area"
    assert (fn.span.start, fn.span.end) == (0, len(text) - 1)
    ret = fn.body.stmts[0]
    assert isinstance(ret, s.Ret) and isinstance(ret.value, s.Member)
    assert text[ret.value.name_span.start : ret.value.name_span.end] == "r"
    assert text[ret.kw_span.start : ret.kw_span.end] == "ret"


def test_spellings_are_recorded() -> None:
    module, diags = parse("fn f() -> int {\n  return 1\n}\ntype P { a: int }\nlet k = match 1 { 1 => 2, _ to 3 }\n")
    fn, ty, let = module.items
    assert isinstance(fn, s.FnDecl) and fn.arrow == "->"
    assert isinstance(fn.body.stmts[0], s.Ret) and fn.body.stmts[0].spelling == "return"
    assert isinstance(ty, s.TypeDecl) and ty.has_eq is False
    assert isinstance(let, s.StmtItem) and isinstance(let.stmt, s.Let)
    match = let.stmt.value
    assert isinstance(match, s.Match) and [a.arrow for a in match.arms] == ["=>", "to"]
    assert [c for c, _, _ in diags] == ["E0308", "W0001", "W0003", "W0002", "E0307"]


def test_decorators_attach_to_their_declaration() -> None:
    module, diags = parse('@mcp.tool "Area"\n\n// comment\nfn area() { }\n@mcp.resource("u", "d")\nfn r() { }\n')
    assert diags == []
    first, second = module.items
    assert isinstance(first, s.FnDecl) and first.decorators[0].name == "mcp.tool"
    assert first.decorators[0].string is not None and first.decorators[0].string.value == "Area"
    assert isinstance(second, s.FnDecl) and second.decorators[0].args is not None
    args = second.decorators[0].args
    assert [a.value for a in args] == [s.StrLit("u", args[0].value.span), s.StrLit("d", args[1].value.span)]


def test_patterns() -> None:
    stmt = only_stmt(
        'let v = match x { _ -> 0, -2 -> 1, 1.5 -> 2, "s" -> 3, false -> 4, n -> 5, '
        "Some(Rect(_, h)) -> 6, None -> 7 }\n"
    )
    assert isinstance(stmt, s.Let) and isinstance(stmt.value, s.Match)
    pats = [a.pattern for a in stmt.value.arms]
    assert isinstance(pats[0], s.WildcardPat)
    assert [(p.value, p.kind) for p in pats[1:5] if isinstance(p, s.LiteralPat)] == [
        (-2, "int"), (1.5, "float"), ("s", "str"), (False, "bool")]
    assert isinstance(pats[5], s.BindPat) and pats[5].name == "n"
    some = pats[6]
    assert isinstance(some, s.CtorPat) and some.has_parens and isinstance(some.args[0], s.CtorPat)
    none = pats[7]
    assert isinstance(none, s.CtorPat) and not none.has_parens


def test_view_children_and_record_vs_block_arms() -> None:
    stmt = only_stmt('let v = match x { A -> { a: 1 }, B -> { } }\n')
    assert isinstance(stmt, s.Let) and isinstance(stmt.value, s.Match)
    first, second = stmt.value.arms
    assert isinstance(first.body, s.RecordLit) and isinstance(second.body, s.Block)
    call = only_stmt('column(gap=1) {\n  heading(text="x")\n  "in stock"\n}\n')
    assert isinstance(call, s.ExprStmt) and isinstance(call.expr, s.Call)
    assert call.expr.children is not None and len(call.expr.children.items) == 2


def test_heads_do_not_take_child_blocks() -> None:
    stmt = only_stmt("if ready() { go() }\n")
    assert isinstance(stmt, s.ExprStmt) and isinstance(stmt.expr, s.If)
    assert isinstance(stmt.expr.cond, s.Call) and stmt.expr.cond.children is None


def test_a_bad_item_does_not_stop_the_next() -> None:
    module, diags = parse("let a = 1\nlet b = 1 2\nlet c = (\n  2)\nfn f() { let }\nlet d = 4\n")
    names = [i.stmt.name for i in module.items if isinstance(i, s.StmtItem) and isinstance(i.stmt, s.Let)]
    assert names == ["a", "c", "d"]
    assert diags == [("E0201", 2, 11), ("E0201", 5, 14)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("let x 5\n", ("E0201", "unexpected `5`, expected `:` or `=`")),
        ("print(1 2)\n", ("E0201", "unexpected `2`, expected `)`, `,`, `(`, `.` or `[`")),
        ("let y\n", ("E0201", "unexpected `<newline>`, expected `:` or `=`")),
        ("let a = 1; let b\n", ("E0201", "unexpected `<newline>`, expected `:` or `=`")),
        ("let q = ", ("E0202", "unexpected end of input, expected <name>, <int>, <float>, <string> or `true`")),
        ("fn f", ("E0202", "unexpected end of input, expected `<` or `(`")),
        ("let z = 1 2", ("E0201", "unexpected `2`, expected <end of input>, `(`, `.`, `[` or `?`")),
    ],
)
def test_expected_token_lists(text: str, expected: tuple[str, str]) -> None:
    src = SourceFile(text)
    sink = DiagnosticSink(src)
    parse_module(src, sink)
    found = [(d.code, d.message) for d in sink.sorted() if d.code.startswith("E02")]
    assert found == [expected]
