"""Arguments of a prelude builtin's call (pipeline.decoding_calls)."""

from __future__ import annotations

import pytest

from pipeline.decoding_calls import ARITY, CallRule, arguments_written, call_rule


def test_arity_comes_from_the_prelude() -> None:
    assert ARITY["range"] == 2 and ARITY["len"] == 1 and ARITY["print"] == 1 and ARITY["assert"] == 1


@pytest.mark.parametrize(("code", "rule"), [
    ("fn f() {\n  print(", CallRule(no_close=True)),             # no argument yet
    ("fn f() {\n  range(1", CallRule(no_close=True)),            # one of two
    ("fn f() {\n  range(1, ", CallRule(no_close=True)),         # `range(1,)` has one argument
    ("fn f() {\n  print(1,", CallRule(only_close=True)),          # a trailing comma: only `)` after it
    ("fn f() {\n  range(1, 2,\n", CallRule(only_close=True)),
    ("fn f() {\n  print(1", None),
    ("fn f() {\n  len(g(1, 2)", None),                             # nested commas do not count
    ('fn f() {\n  len("a,b"', None),                               # nor commas in strings
    ("fn f() {\n  x.len(", None),                                  # a method, not the builtin
    ("fn f() {\n  g(", None),
    ("fn f() {\n  assert", CallRule(no_empty=True)),              # no `()` after a builtin's name
    ("fn f() {\n  x.assert", None),
])
def test_call_rule(code: str, rule: CallRule | None) -> None:
    assert call_rule(code, frozenset()) == rule


def test_a_shadowed_builtin_has_no_rule() -> None:
    assert call_rule("fn f(len: int) {\n  len(", frozenset({"len"})) is None
    assert call_rule("fn f(len: int) {\n  len", frozenset({"len"})) is None


def test_arguments_written() -> None:
    code = 'f(a, [1, 2], "x,y", g(3, 4) // c, d\n, '
    assert arguments_written(code, 2) == (4, False)
    assert arguments_written("f(a, b", 2) == (1, True)
