"""Large invalid files are checked in linear time (see ``bench/check_large.py`` for the figures):
the bracket passes (layout, retired lines, decorator arguments) and the lexer's ``;`` and
``Err`` look-ups no longer rescan the stack or the rest of the file per error. These tests
check correctness only: a large file repeats the small file's diagnostics, shifted by line."""

from __future__ import annotations

import random
from typing import Any

import pytest

from vox_lang.api import check
from vox_lang.contextual import balanced_ends
from vox_lang.diagnostics import DiagnosticSink
from vox_lang.lexer import CLOSERS, OPENERS, Token, TokenKind, scan
from vox_lang.source import SourceFile

#: one line each; a file of N copies must give N times the one line's diagnostics
LINES = [
    "x = f(]\n",
    "@route(\n",
    "f(\n",
    ")\n",
    "fn f( {\n",
    "x = = 1\n",
    'let s = "abc\n',
    "component A(\n",
]


def _shape(text: str) -> list[tuple[str, int, str]]:
    return [(d.code, d.col, d.message) for d in check(text).diagnostics]


@pytest.mark.parametrize("line", LINES)
def test_a_large_file_repeats_the_small_files_diagnostics(line: str) -> None:
    small = _shape(line * 3)
    big = check(line * 3000)
    assert len(big.diagnostics) >= 3000
    assert [(d.code, d.col, d.message) for d in big.diagnostics[: len(small)]] == small


def test_many_semicolons_on_one_line_each_get_their_fix() -> None:
    res = check("  a; " * 2000 + "a;\n")
    e0309 = [d for d in res.diagnostics if d.code == "E0309"]
    assert len(e0309) == 2001
    assert all(d.fix == "\n  " for d in e0309[:-1])
    assert e0309[-1].fix == ""


def test_colon_blocks_under_a_deep_bracket_stack() -> None:
    # each `}` would close the `{` (and every `(` above it), so each line is a colon block
    # header, reported, and the stack restored for the next line
    text = "{" + "(" * 5000 + "\n" + "if }:\n" * 200
    assert check(text).codes.count("E0301") == 200
    assert check("(\nif x:\n").codes.count("E0301") == 0  # a `(` stays open: not a colon block


def _balanced_end_reference(tokens: list[Token], start: int) -> int | None:
    """The per-opener scan :func:`balanced_ends` replaces (quadratic over many openers)."""
    stack: list[str] = []
    for j in range(start, len(tokens)):
        tok = tokens[j]
        if tok.kind is not TokenKind.PUNCT:
            continue
        if tok.text in OPENERS:
            stack.append(tok.text)
        elif tok.text in CLOSERS:
            if not stack or stack[-1] != CLOSERS[tok.text]:
                return None
            stack.pop()
            if not stack:
                return j
    return None


@pytest.mark.parametrize("seed", range(20))
def test_balanced_ends_matches_a_scan_from_each_opener(seed: int) -> None:
    rng = random.Random(seed)
    text = " ".join(rng.choice("()[]{}x") for _ in range(rng.randint(1, 60)))
    tokens = scan(text, DiagnosticSink(SourceFile(text))).tokens
    ends = balanced_ends(tokens)
    for i, tok in enumerate(tokens):
        if tok.kind is TokenKind.PUNCT and tok.text in OPENERS:
            assert ends.get(i) == _balanced_end_reference(tokens, i), text


#: 300 items on one line (spec §10: `;` reads as a line end, E0309 each), most of one shape
ONE_LINE = ("; ".join(f"let a{i} = {i}" for i in range(300)) + '; let s = "é"; let t = a1 + a2'
            + "; fn f(n: int) to int { ret n }\nprint(a299 + f(a0))\n")


@pytest.mark.parametrize("source", [ONE_LINE, ONE_LINE.replace("; let s", "; x = = 1; let s")],
                         ids=["clean", "syntax-error"])
def test_items_of_one_shape_are_matched_once_and_give_what_matching_each_gives(
        source: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # A 1.2 MB one-line script of `let aN = N` took 13.5 s, half of it matching the same
    # `let NAME = INT` shape again for every item
    from vox_lang import parser

    matched: list[str] = []
    put = parser.TreeMemo.put

    def counting_put(self: parser.TreeMemo, text: str, node: Any, tokens: int) -> None:
        matched.append(text)
        put(self, text, node, tokens)

    monkeypatch.setattr(parser.TreeMemo, "put", counting_put)
    remembered = check(source)
    assert matched.count("let NAME = INT EOI ") == 1
    monkeypatch.setattr(parser.TreeMemo, "get", lambda self, text: None)  # every item matched afresh
    fresh = check(source)
    assert matched.count("let NAME = INT EOI ") == 1 + 300
    assert remembered.codes.count("E0309") >= 302 and remembered.diagnostics == fresh.diagnostics
    assert repr(remembered.module) == repr(fresh.module) and repr(remembered.hir) == repr(fresh.hir)
    assert (remembered.hir is None) == ("E0201" in remembered.codes)


def test_the_tree_memo_keeps_the_most_recent_small_shapes() -> None:
    from vox_lang.parser import MEMO_MAX_TOKENS, MEMO_SIZE, TreeMemo

    memo = TreeMemo()
    node = ("x", 0, 2, None)
    for i in range(MEMO_SIZE):
        memo.put(f"shape{i}", node, 3)
    assert memo.get("shape0") is node  # used again: now the most recent
    memo.put("one more", node, 3)
    assert memo.get("shape1") is None and memo.get("shape0") is node and memo.get("one more") is node
    memo.put("large", node, MEMO_MAX_TOKENS + 1)
    assert memo.get("large") is None


@pytest.mark.parametrize("line", ["x = = 1", "fn f( {", "let = 2", "f(a, b c)", "if x {", "x = [1, 2"])
def test_a_repeated_bad_item_is_reported_as_each_one_alone(line: str) -> None:
    # what a failed match expected is kept per shape (TreeMemo.failure): every repeat, the one
    # at the end of the file too (no newline after it), must be reported as if checked alone
    alone = [(d.code, d.col, d.end_col, d.message, d.hint) for d in check(line).diagnostics]
    alone_nl = [(d.code, d.col, d.end_col, d.message, d.hint) for d in check(line + "\n").diagnostics]
    big = check((line + "\n") * 50 + line)
    got = [(d.line, d.code, d.col, d.end_col, d.message, d.hint) for d in big.diagnostics]
    want = [(n + 1, *d) for n in range(50) for d in alone_nl] + [(51, *d) for d in alone]
    assert sorted(got) == sorted(want)
