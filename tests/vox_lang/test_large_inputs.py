"""Large invalid files are checked in linear time (see ``bench/check_large.py`` for the figures):
the bracket passes (layout, retired lines, decorator arguments) and the lexer's ``;`` and
``Err`` look-ups no longer rescan the stack or the rest of the file per error. These tests
check correctness only: a large file repeats the small file's diagnostics, shifted by line."""

from __future__ import annotations

import random

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
