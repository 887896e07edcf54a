"""The scan's scopes (spec §3): which names a use at the end of an open block may resolve to."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings, strategies as st

from pipeline.decoding_scan import Scan, _scan, scan, visible_names

PROGRAM = (
    "import std.fs as files\n"
    "type Shape = | Circle(radius: float) | Square(side: float)\n"
    "type Row = { price: float, qty: int }\n"
    "let limit = 3\n"
    "fn area<T>(s: Shape, k: T) to float {\n"
    "  let mut total = 0.0\n"
    "  for x, i in [1] { let inner = x }\n"
    "  total = match s {\n"
    "    Circle(r) -> r * float(len(files.read(\"a\").unwrap_or(\"\")))\n"
    "    other -> 0.0\n"
    "  }\n"
    "  ret total\n"
    "}\n"
    "fn next(n: int) to int {\n"
    "  "
)


def test_a_new_function_sees_module_names_and_its_own_parameters_only() -> None:
    names = visible_names(PROGRAM)
    assert {"files", "Shape", "Circle", "Square", "Row", "limit", "area", "next", "n"} <= names
    # a finished function's generics, parameters, lets, loop and arm variables; record fields
    assert not names & {"T", "s", "k", "total", "x", "i", "inner", "r", "other", "price", "qty", "radius", "side"}


@pytest.mark.parametrize(("cut", "inside", "outside"), [
    ("  let mut total = 0.0\n", {"T", "s", "k", "total"}, {"x", "inner"}),
    ("  for x, i in [1] { let inner = x", {"x", "i", "total"}, {"inner"}),  # a let binds at its line's end
    ("    Circle(r) -> ", {"r", "total"}, {"other"}),
])
def test_names_inside_the_first_function(cut: str, inside: set[str], outside: set[str]) -> None:
    code = PROGRAM[: PROGRAM.index(cut) + len(cut)]
    names = visible_names(code)
    assert inside <= names and not names & outside, sorted(names)


def test_a_let_does_not_see_itself_and_binds_after_its_statement() -> None:
    assert "total" not in visible_names("fn f(a: int) to int {\n  let total = ")
    assert "total" not in visible_names("fn f(a: int) to int {\n  let total = g(\n    a,\n    ")  # L1: same statement
    assert "total" in visible_names("fn f(a: int) to int {\n  let total = a\n  ")


def test_parameters_are_named_arguments_in_a_call() -> None:
    code = "fn g(width: int) to int {\n  ret width\n}\nfn f() to int {\n  ret g("
    assert "width" in visible_names(code) and "width" not in visible_names(code[: -len("g(")])


def test_a_loop_variable_is_not_in_its_own_iterable() -> None:
    assert "item" not in visible_names("fn f(xs: List[int]) {\n  for item in ")
    assert "item" in visible_names("fn f(xs: List[int]) {\n  for item in xs {\n    ")


def test_children_braces_and_blocks() -> None:
    assert scan("fn f() to Element {\n  ret card(padding=1) {\n    ").stack[-1].kind == "children"
    assert scan("fn f(x: int) {\n  if ok(x) {\n    ").stack[-1].kind == "block"
    assert scan("fn f(x: int) {\n  while ok(x) {\n    ").stack[-1].kind == "block"


_TRICKY = (
    'fn f(x: float) to str {\n  let s = "a\\nb \\"q\\" // not a comment"\n  let y = 1.5 + x // note: 2.\n'
    '  ret g(x) {\n    text(value=s)\n  }\n}\nlet r = { a: 1, b: [2, 3] } |> h\n'
)


def _fresh(code: str) -> Scan:
    return _scan(code, 0, Scan())


@pytest.mark.parametrize("name", ["examples", "tricky"])
def test_incremental_scan_equals_a_fresh_scan_at_every_prefix(name: str) -> None:
    """:func:`scan` goes on from the scan of a shorter text (the previous decoding step's); at
    every prefix, grown one character or several at a time as a decoder grows it, it equals a
    scan from the start (tokens a longer text may change, `1.` + `5` or a string's `\\` + `n`,
    are re-read)."""
    from pathlib import Path

    import pipeline.decoding_scan as ds

    texts = [_TRICKY] if name == "tricky" else [p.read_text() for p in sorted(Path("examples").glob("*.vox"))[:6]]
    for text in texts:
        for stride in (1, 3, 7):
            ds._SCANS.clear()
            for end in range(0, len(text) + 1, stride):
                assert ds.scan(text[:end]) == _fresh(text[:end]), (stride, text[:end][-40:])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.text(alphabet='ab1.5 "\\\n/{}()[]=-<>:|,_@', min_size=1, max_size=4), max_size=40))
@example(pieces=["_", "(", "}", "\n)"])  # a closer with nothing open: no call's callee is carried over
def test_incremental_scan_on_random_text(pieces: list[str]) -> None:
    """Any text, grown by random pieces: the incremental scan equals a scan from the start."""
    import pipeline.decoding_scan as ds

    ds._SCANS.clear()
    text = ""
    for piece in pieces:
        text += piece
        assert ds.scan(text) == _fresh(text), repr(text)


@pytest.mark.parametrize(("code", "kind"), [
    ('fn f() to Element {\n  ret column(gap=1) {', "children"),        # a view call's children
    ('fn f() to Element {\n  ret g(column(gap=1)\n  {', "children"),   # L1: the newline is dropped
    ('fn f() to Element {\n  text(value="a")\n  {', "block"),          # a new statement
    ('fn f() to Element {\n  ret column(gap=1)\n  {', "block"),
])
def test_a_brace_after_a_call_and_a_line_break(code: str, kind: str) -> None:
    """A ``{`` right after ``NAME(...)`` opens the call's children; after a line break that
    layout keeps (spec §1: none of L1-L3 drops it) it starts a statement, read whole or line by
    line alike."""
    assert scan(code).stack[-1].kind == kind == _fresh(code).stack[-1].kind


@pytest.mark.parametrize(("code", "word", "only"), [
    # a finished function's parameter passed at top level (E0401 in the default model's answers)
    ("fn backup_name(path: str) to str {\n  ret path\n}\nprint(backup_name(path", "path", True),
    ("fn f(a: int, total: int) to int {\n  ret a\n}\nlet x = f(1, total", "total", True),
    # a value here: the function's own body, a top-level let of the same name
    ("fn backup_name(path: str) to str {\n  ret backup_name(path", "path", False),
    ("fn f(path: str) to str {\n  ret path\n}\nlet path = \"a\"\nprint(f(path", "path", False),
    # not an argument's start, or a pattern that binds the name
    ("fn f(path: str) to str {\n  ret path\n}\nlet y = [path", "path", False),
    ("type S = | Circle(r: float)\nfn area(s: S) to float {\n  ret match s {\n    Circle(r", "r", False),
])
def test_a_parameter_that_is_no_value_is_only_a_named_argument(code: str, word: str, only: bool) -> None:
    from pipeline.decoding_position import Suffix, no_suffix
    from pipeline.decoding_scan import named_only, visible_names

    assert named_only(code, word) is only
    if only:
        assert no_suffix(code, visible_names(code)) == Suffix(must_assign=True)  # `=` next: `f(path="a")`
