"""Property tests: the front end never raises, whatever it is given.

Random text, random bytes, and random token-level mutations (delete, duplicate, swap) of valid
programs all come back as a :class:`~vox_lang.CheckResult`; pathological sizes and depths give
a diagnostic or a result. Example counts are kept small enough for the suite's time budget.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

import vox_lang
from vox_lang.diagnostics import DiagnosticSink
from vox_lang.lexer import scan
from vox_lang.source import SourceFile

CASES = Path(__file__).parent / "cases"
VALID = [
    (CASES / "syntax_constructs.vox").read_text(encoding="utf-8"),
    (CASES / "compat_fat_arrow.vox").read_text(encoding="utf-8"),
]
VOX_CHARS = list("abcxyzT_019 \t\n\r(){}[],.:?=<>+-*/%|!&#;@\"'\\`$") + [
    "fn ", "let ", "ret ", "match ", "if ", "else ", "->", "=>", " to ", "type ", "actor ",
    "on ", "spawn(", "@mcp.tool ", "isnt", "null", "Err(", "é", "\ufffd", "\x00",
]
FAST = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def assert_sane(result: vox_lang.CheckResult) -> None:
    text = result.source.text
    for d in result.diagnostics:
        assert d.code in vox_lang.REGISTRY
        assert 0 <= d.span.start <= d.span.end <= len(text) + 1
        assert d.line >= 1 and d.col >= 1


@FAST
@given(st.lists(st.sampled_from(VOX_CHARS), max_size=80).map("".join))
def test_random_vox_like_text_never_raises(text: str) -> None:
    assert_sane(vox_lang.check(text))


@FAST
@given(st.text(max_size=200))
def test_random_unicode_never_raises(text: str) -> None:
    assert_sane(vox_lang.check(text, strict=True))


@FAST
@given(st.binary(max_size=200))
def test_random_bytes_never_raise(data: bytes) -> None:
    assert_sane(vox_lang.check(data))


def _token_spans(text: str) -> list[tuple[int, int]]:
    src = SourceFile(text)
    return [(t.span.start, t.span.end) for t in scan(text, DiagnosticSink(src)).tokens]


SPANS = [_token_spans(t) for t in VALID]


@st.composite
def mutated(draw: st.DrawFn) -> str:
    which = draw(st.integers(0, len(VALID) - 1))
    text, spans = VALID[which], SPANS[which]
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(spans) - 1))
        j = draw(st.integers(0, len(spans) - 1))
        (a, b), (c, d) = spans[i], spans[j]
        op = draw(st.sampled_from(["delete", "duplicate", "swap"]))
        if op == "delete":
            text = text[:a] + text[b:]
        elif op == "duplicate":
            text = text[:b] + " " + text[a:b] + text[b:]
        elif b <= c:
            text = text[:a] + text[c:d] + text[b:c] + text[a:b] + text[d:]
        spans = _token_spans(text)
    return text


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_token_mutations_of_valid_programs_never_raise(text: str) -> None:
    result = vox_lang.check(text)
    assert_sane(result)
    vox_lang.fix(text)


def test_legal_nesting_to_depth_200_parses() -> None:
    parens = "let a = " + "(" * 200 + "1" + ")" * 200 + "\n"
    blocks = "fn f() {\n" + "if true {\n" * 199 + "}\n" * 199 + "}\n"
    nots = "let b = " + "not " * 200 + "true\n"
    lists = "let c = " + "[" * 200 + "]" * 200 + "\n"
    result = vox_lang.check(parens + blocks + nots + lists)
    assert not [d for d in result.diagnostics if d.code[:3] in ("E01", "E02")], result.render()
    assert len(result.module.items) == 4


def test_depth_10000_is_e0206_not_a_crash() -> None:
    for text in (
        "let a = " + "(" * 10_000 + "1" + ")" * 10_000,
        "let b = " + "not " * 10_000 + "true",
        "fn f() {\n" + "if true {\n" * 10_000 + "}\n" * 10_001,
        "let c = " + "[f(" * 5_000 + ")]" * 5_000,
        "let d = " + "(" * 10_000,
    ):
        result = vox_lang.check(text)
        assert "E0206" in result.codes or "E0203" in result.codes, result.codes


def test_one_megabyte_inputs_give_a_result() -> None:
    # the costlier 1 MB inputs (a million unclosed brackets or bad bytes, one diagnostic
    # each; a 37,000-line function) are timed in bench/frontend.py, not here
    meg = 1 << 20
    inputs: list[str | bytes] = [
        'let s = "' + "x" * meg + '"\nprint(s)\n',
        b"// " + b"\xff" * 16 + b"y" * meg + b"\nlet ok = 1\n",
        "fn f() {\n" + "  // filler line to make the file large\n" * (meg // 39) + "}\n",
    ]
    for data in inputs:
        result = vox_lang.check(data)
        assert_sane(result)
        assert len(result.source.text) >= meg


def test_long_operator_chain_parses() -> None:
    result = vox_lang.check("let n = " + " + ".join(["1"] * 5_000) + "\nprint(n)\n")
    assert "E0206" not in result.codes and not [c for c in result.codes if c.startswith("E02")]
