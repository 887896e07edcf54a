"""Lexer and layout: tokens, substitutions, L1–L4, brackets, items, nesting."""

from __future__ import annotations

import pytest

import vox_lang
from vox_lang.diagnostics import DiagnosticSink
from vox_lang.layout import MAX_DEPTH, nesting, tokenize
from vox_lang.lexer import KEYWORDS, PUNCTUATION, TokenKind, scan
from vox_lang.source import SourceFile


def lex(text: str) -> tuple[list[str], list[tuple[str, int, int]]]:
    """Layout-applied token codes (NL as `;;`) and the diagnostics."""
    src = SourceFile(text)
    sink = DiagnosticSink(src)
    layout = tokenize(src, sink)
    codes = [";;" if t.kind is TokenKind.NL else t.code for t in layout.tokens]
    return codes, [(d.code, d.line, d.col) for d in sink.sorted()]


def test_vocabulary() -> None:
    assert "to" in KEYWORDS and "return" in KEYWORDS and "state" not in KEYWORDS
    assert PUNCTUATION.index("->") < PUNCTUATION.index("-")  # longest match first


def test_token_classes_and_spans() -> None:
    text = 'let x_1 = 12 + 3.5 @mcp.tool "s\\"q" _ x.to'
    src = SourceFile(text)
    toks = scan(text, DiagnosticSink(src)).tokens
    assert [(t.kind.value, t.text) for t in toks] == [
        ("KEYWORD", "let"), ("NAME", "x_1"), ("PUNCT", "="), ("INT", "12"), ("PUNCT", "+"),
        ("FLOAT", "3.5"), ("DECO", "@mcp.tool"), ("STRING", '"s\\"q"'), ("NAME", "_"),
        ("NAME", "x"), ("PUNCT", "."), ("KEYWORD", "to"),
    ]
    assert all(text[t.span.start : t.span.end] == t.text for t in toks)
    assert [t.code for t in toks][-4:] == ["_", "NAME", ".", "to"]


def test_longest_match_punctuation() -> None:
    codes, diags = lex("a |> b -> c => d == e != f <= g >= h += 1 -= 2 *= 3 /= 4 | 5 // c\n")
    assert diags == []
    assert [c for c in codes if c not in ("NAME", "INT", ";;")] == [
        "|>", "->", "=>", "==", "!=", "<=", ">=", "+=", "-=", "*=", "/=", "|",
    ]


@pytest.mark.parametrize(
    ("text", "code", "token"),
    [
        ("a # c\n", "E0304", None),
        ("a isnt b\n", "E0306", "!="),
        ("a; b\n", "E0309", None),
        ('Err("x")\n', "E0310", "Error"),
        ("!a\n", "E0311", "not"),
        ("a && b\n", "E0312", "and"),
        ("a || b\n", "E0313", "or"),
        ("null\n", "E0314", "None"),
    ],
)
def test_retired_tokens_are_reported_and_replaced(text: str, code: str, token: str | None) -> None:
    src = SourceFile(text)
    sink = DiagnosticSink(src)
    toks = tokenize(src, sink).tokens
    assert [d.code for d in sink.sorted()] == [code]
    if token is not None:
        assert token in [t.text for t in toks]


def test_retired_spellings_after_a_dot_are_field_names() -> None:
    _, diags = lex("x.null + x.isnt + x.Err(1)\n")
    assert diags == []


def test_semicolon_reads_as_a_newline() -> None:
    codes, _ = lex("a; b\n")
    assert codes == ["NAME", ";;", "NAME", ";;"]


def test_l1_no_newline_inside_parentheses_or_brackets() -> None:
    codes, _ = lex("f(a,\n  b)\nx = [1,\n 2]\n")
    assert codes.count(";;") == 2


def test_l2_l3_continuations() -> None:
    codes, _ = lex("a = 1 +\n  2\nb = c\n  .d\n  |> e\nif x {\n} \n\n else {\n}\n")
    assert codes.count(";;") == 3


def test_l2_does_not_apply_to_a_reserved_word_used_as_a_field() -> None:
    codes, _ = lex("x = msg.to\ny = 1\n")
    assert codes.count(";;") == 2


def test_l4_decorator_lines_join_their_declaration() -> None:
    codes, _ = lex('@test\n\n// c\n@mcp.tool "d"\n@mcp.resource("u",\n  "d")\nfn f() { }\n')
    assert ";;" not in codes[:-1]


def test_newline_runs_collapse_and_leading_newlines_drop() -> None:
    codes, _ = lex("\n\n// only a comment\n\na\n\n\nb\n")
    assert codes == ["NAME", ";;", "NAME", ";;"]


def test_brackets() -> None:
    _, diags = lex("a = (1 + 2\n")
    assert diags == [("E0203", 1, 5)]
    _, diags = lex("a = 1)\n")
    assert diags == [("E0204", 1, 6)]
    _, diags = lex("f() {\n  g(1\n}\n")
    assert diags == [("E0203", 2, 4), ("E0204", 3, 1)]


def test_items_and_poison() -> None:
    src = SourceFile("let a = 1\nlet b = 2 $ 3\nfn f() {\n  g()\n}\n")
    sink = DiagnosticSink(src)
    items = tokenize(src, sink).items
    assert [i.parse for i in items] == [True, False, True]
    assert [len(i.tokens) for i in items] == [4, 5, 10]  # the NL before `}` stays


def test_every_bad_character_is_reported() -> None:
    _, diags = lex("a = 1 $$ ~\n")
    assert diags == [("E0101", 1, 7), ("E0101", 1, 8), ("E0101", 1, 10)]


def test_nesting_counts_brackets_and_prefix_operators() -> None:
    src = SourceFile("x = not (not (1 - -2))")
    toks = tokenize(src, DiagnosticSink(src)).tokens
    assert nesting(toks)[0] == 5
    deep = SourceFile("x = " + "(" * (MAX_DEPTH + 1) + ")" * (MAX_DEPTH + 1))
    level, offender = nesting(tokenize(deep, DiagnosticSink(deep)).tokens)
    assert level == MAX_DEPTH + 1 and offender is not None and offender.span.start == 4 + MAX_DEPTH


def test_crlf_line_ends() -> None:
    codes, diags = lex("let a = 1\r\nlet b = 2\r\n")
    assert diags == [] and codes.count(";;") == 2
    _, diags = lex("a = 1\rb\n")
    assert diags == [("E0101", 1, 6)]


@pytest.mark.parametrize("source", [b"\xef\xbb\xbflet x = 3 $ 4\n", "\ufefflet x = 3 $ 4\n"], ids=["bytes", "text"])
def test_a_leading_byte_order_mark_is_skipped(source: str | bytes) -> None:
    result = vox_lang.check(source)
    assert [(d.code, d.line, d.col) for d in result.diagnostics] == [("E0101", 1, 11)]  # columns as without it
    assert result.source.text == "let x = 3 $ 4\n"


def test_only_one_byte_order_mark_is_skipped_and_bad_bytes_stay_placed() -> None:
    result = vox_lang.check(b"\xef\xbb\xbf\xef\xbb\xbflet s = 1\xff\n")
    assert [(d.code, d.line, d.col) for d in result.diagnostics] == [("E0101", 1, 1), ("E0106", 1, 11)]


@pytest.mark.parametrize(("char", "hint"), [
    ("\ufeff", "delete it: U+FEFF is a byte-order mark, allowed only at the very start of a file"),
    ("\u200b", "delete it: U+200B ZERO WIDTH SPACE does not show in most editors"),
    ("\u00a0", "delete it: U+00A0 NO-BREAK SPACE does not show in most editors"),
    ("\x0b", "delete it: U+000B does not show in most editors"),  # a control character has no name
    ("$", "delete it"),
], ids=["bom", "zero-width-space", "no-break-space", "control", "visible"])
def test_an_unseen_character_is_named_in_the_hint(char: str, hint: str) -> None:
    (d,) = vox_lang.check(f"let x = 1{char}\n").diagnostics
    assert (d.code, d.line, d.col, d.hint) == ("E0101", 1, 10, hint)
