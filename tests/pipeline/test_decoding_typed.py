"""Types of names and flat expressions read from an open block (pipeline.decoding_typed)."""

from __future__ import annotations

import pytest

from pipeline.decoding_scan import TOKENS
from pipeline.decoding_typed import expr_type, name_types, typed_names


def _toks(text: str) -> list[str]:
    return [t for t in TOKENS.findall(text) if t != "\n"]


def test_parameters_lets_loops_and_functions_are_typed() -> None:
    code = ('fn word_count(text: str, n: int) to int {\n  let total = 0\n  let ratio = n * 1.5\n'
            '  let parts = text.split(" ")\n  let first: Option[str] = parts.get(0)\n'
            '  for p in parts {\n    for i in range(0, n) {\n      ret ')
    types, returns = name_types(code)
    assert types == {"word_count": "fn", "text": "str", "n": "int", "total": "int", "ratio": "float",
                     "parts": "List[str]", "first": "Option[str]", "p": "str", "i": "int"}
    assert returns == {"word_count": "int"}


@pytest.mark.parametrize(("code", "name"), [
    ("fn f(a: int) to int {\n  ret a\n}\nfn g(a: str) to str {\n  ret ", "a"),      # two bindings disagree
    ("fn f(a: int) to int {\n  let b = g(a)\n  ret ", "b"),                         # a value not read
    ("fn f(xs: List[int]) to int {\n  let total = xs\n    |> len\n  ret ", "total"),  # L3 goes on
    ("fn f(m: Map[str, int]) to int {\n  for k, v in m {\n    ret ", "k"),          # two loop variables
    ('fn f() to int {\n  // a: int\n  let s = "b: int"\n  ret ', "a"),            # comments bind nothing
    ("type Shape = | Circle(r: float)\nfn f(Circle: int) to int {\n  ret ", "Circle"),  # a variant too
    ("fn f(a: int) to int {\n  let a: str = \"x\"\n  ret ", "a"),
])
def test_a_name_without_one_agreed_type_has_none(code: str, name: str) -> None:
    assert name not in name_types(code)[0]


def test_a_match_arm_binding_hides_the_name_s_type() -> None:
    code = "fn f(n: int, o: Option[str]) to str {\n  ret match o {\n    Some(n) -> "
    assert "n" not in typed_names(code)[0]
    assert typed_names("fn f(n: int) to str {\n  ret ")[0]["n"] == "int"


def test_a_multi_line_header_binds_once_complete() -> None:
    assert name_types("fn f(a: int,\n  b: str")[0].get("b") is None
    assert name_types("fn f(a: int,\n  b: str) to int {\n  ret ")[0]["b"] == "str"


@pytest.mark.parametrize(("text", "expected"), [
    ("1", "int"), ("2.5", "float"), ('"a"', "str"), ("true", "bool"), ("None", "Option"),
    ("n + 1", "int"), ("n * 1.5", "float"), ('s + "!"', "str"), ("n > 3", "bool"), ("a and n < 2", "bool"),
    ("len(s)", "int"), ("str(n) + s", "str"), ("s.split(\",\")", "List[str]"), ("xs[0]", "int"),
    ("xs.get(0).unwrap_or(1)", "int"), ("s[0]", "str"), ("m[s]", "int"), ("not a", "bool"), ("-n", "int"),
    ("Ok(n)", "Result"), ("helper(n) * 2", "int"), ("(n + 1) * 2", "int"), ("[1, 2]", "List"),
    # not read
    ("n + s", None), ("x.y", None), ("n |> str", None), ("if a { 1 } else { 2 }", None), ("n +", None),
    ("len(s", None), ("s.unknown()", None), ("g(n)", None), ("not n", None), ("-s", None), ("o?", None),
])
def test_expr_type(text: str, expected: str | None) -> None:
    types = {"n": "int", "s": "str", "a": "bool", "xs": "List[int]", "m": "Map[str, int]", "o": "Option[int]",
             "helper": "fn"}
    assert expr_type(_toks(text), types, {"helper": "int"}) == expected


def test_a_builtin_rebound_by_the_program_is_its_function() -> None:
    assert expr_type(_toks("len(1, 2)"), {"len": "fn"}, {"len": "str"}) == "str"
    assert expr_type(_toks("len(s)"), {"len": "?", "s": "str"}) is None


def test_a_return_type_over_lines_is_read_whole() -> None:
    # L1 drops the line break inside `[`: the header returns Result[str], not Unit
    types, returns = name_types('fn f(a: int) to Result[\n  str] {\n  ret Ok("x")\n}\nfn g() {\n  let x = f(1)\n')
    assert returns["f"] == "Result[str]" and types["x"] == "Result[str]"
