"""Shortcuts of the lexical phase must not change what it produces: the scanner matches the
blanks before a token with it, :func:`~vox_lang.layout.nesting` skips tokens that cannot nest,
and :func:`~vox_lang.retired.strip_retired_lines` skips its line-by-line pass when no line can
be a retired form. Each is checked here against the plain way, on random token soup."""

from __future__ import annotations

import random

import pytest

from vox_lang import retired
from vox_lang.diagnostics import DiagnosticSink
from vox_lang.layout import MAX_DEPTH, nesting
from vox_lang.lexer import CLOSERS, OPENERS, Token, TokenKind, scan
from vox_lang.source import SourceFile

_PIECES = ["fn", "f", "(", ")", "{", "}", "[", "]", " ", "\t", "\n", "\r\n", ";", "//c", ":", "if", "else",
           "state", "x", "not", "-", ".", "is", "1", '"s"', "@d", "@agent_def", "=", "true", "<p>", "a.not"]


def _soup(rng: random.Random) -> str:
    return "".join(rng.choice(_PIECES) + rng.choice(["", " ", "  "]) for _ in range(rng.randint(1, 80)))


def _nesting_reference(tokens: list[Token]) -> tuple[int, Token | None]:
    """:func:`nesting` as it was, every token through the same steps."""
    levels: list[int] = []
    run = deepest = 0
    offender: Token | None = None
    prev: Token | None = None
    for tok in tokens:
        cur = levels[-1] if levels else 0
        kind, text = tok.kind, tok.text
        after_dot = prev is not None and prev.text == "." and prev.kind is TokenKind.PUNCT
        if kind is TokenKind.PUNCT and text in OPENERS:
            level = cur + run + 1
            levels.append(level)
            run = 0
        elif kind is TokenKind.PUNCT and text in CLOSERS:
            if levels:
                levels.pop()
            run = level = 0
        elif (kind is TokenKind.KEYWORD and text == "not" and not after_dot) or (
            kind is TokenKind.PUNCT and text == "-" and not (prev and prev.ends_operand)
        ):
            run += 1
            level = cur + run
        else:
            run = level = 0
        if level > deepest:
            deepest = level
            if offender is None and level > MAX_DEPTH:
                offender = tok
        prev = tok
    return deepest, offender


@pytest.mark.parametrize("seed", range(20))
def test_nesting_gives_what_stepping_through_every_token_gives(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(50):
        text = _soup(rng)
        if rng.random() < 0.2:
            text = "not (-" * rng.randint(60, 120) + text
        tokens = scan(text, DiagnosticSink(SourceFile(text))).tokens
        assert nesting(tokens) == _nesting_reference(tokens)


@pytest.mark.parametrize("seed", range(20))
def test_skipping_the_retired_line_pass_keeps_every_token_and_diagnostic(
        seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    for _ in range(50):
        text = _soup(rng)
        source = SourceFile(text)
        tokens = scan(text, DiagnosticSink(source)).tokens
        results = []
        for shortcut in (True, False):
            if not shortcut:
                monkeypatch.setattr(retired, "_may_retire", lambda text, tokens: True)
            sink = DiagnosticSink(source)
            kept = retired.strip_retired_lines(text, tokens, sink)
            results.append((kept, [(d.code, d.span) for d in sink.sorted()]))
            monkeypatch.undo()
        assert results[0] == results[1]


def test_blanks_are_not_part_of_the_next_token() -> None:
    text = "  \tlet x = 1 \t\n\t// c\n  y  \t"
    tokens = scan(text, DiagnosticSink(SourceFile(text))).tokens
    assert [(t.text, text[t.span.start : t.span.end]) for t in tokens] == [
        ("let", "let"), ("x", "x"), ("=", "="), ("1", "1"), ("\n", "\n"), ("\n", "\n"), ("y", "y"),
    ]
