"""A function body that returns on no path may not close (pipeline.decoding_returns, E0508), and
which tokens close a brace (pipeline.decoding_tokens.closes_brace)."""

from __future__ import annotations

import pytest

from pipeline.decoding_returns import must_return
from pipeline.decoding_tokens import closes_brace
from tests.pipeline.test_decoding_names import _first_blocked
from vox_lang.api import check


@pytest.mark.parametrize(("code", "held"), [
    ("fn f(n: int) to int {\n  if n > 0 { ret 1 }\n", True),            # an `if` without `else`
    ("fn f(n: int) to int {\n  let m = n * 2\n  m\n", True),            # the value, not returned
    ("fn f(xs: List[int]) to int {\n  for x in xs { ret x }\n", True),  # a loop may not run
    ("actor A {\n  on h(n: int) to bool {\n    print(n)\n", True),
    ("fn f() {\n  let g = fn(x: int) to int {\n    x\n", True),         # a lambda too (E0508 `lambda`)
    ("fn f(n: int) to int {\n  ret n", False),
    ("fn f(n: int) to int {\n  print(n)\n  ret n\n  print(n)\n", False),  # a `ret` anywhere at its level
    ("fn f(n: int) to int {\n  if n > 0 { ret 1 } else { ret 2 }\n", False),
    ("fn f(n: int) to int {\n  match n {\n    _ -> ret 1\n  }\n", False),
    ("fn f(n: int) to int {\n  while true {\n    ret 1\n  }\n", False),
    ("fn f(n: int) to int {\n  process.exit(1)\n", False),
    ("fn f(n: int) {\n  print(n)\n", False),                             # Unit: nothing to return
    ("fn f(n: int) to Unit {\n  print(n)\n", False),
    ("fn f(n: int) to int {\n  if n > 0 {\n    print(n)\n", False),      # an inner block may close
    ("fn f(n: int) to int {\n  let r = { a: 1 ", False),                  # a record literal
    ("let x = 1\n", False),
])
def test_must_return(code: str, held: bool) -> None:
    assert must_return(code) is held


@pytest.mark.parametrize(("text", "closes"), [
    ("}", True), ("\n}", True), (" })", True), ("}}", True), (" }\n", True), ("x }", True),
    (")}", False), ("{}", False), ('"}', False), ("//}", False), ("]", False), ("(}", False),
])
def test_closes_brace(text: str, closes: bool) -> None:
    assert closes_brace(text) is closes


def test_the_mask_holds_a_body_open_until_it_returns() -> None:
    src = "fn f(n: int) to int {\n  if n > 0 { ret 1 }\n}"
    assert check(src, strict=True).errors[0].code == "E0508"
    blocked = _first_blocked(src)
    assert blocked is not None and blocked.endswith("{ ret 1 }\\n' + '}'")
    for valid in ("fn f(n: int) to int {\n  if n > 0 { ret 1 }\n  ret 0\n}",
                  "fn f(n: int) to int { ret n }",
                  "fn f(n: int) to int {\n  if n > 0 {\n    ret 1\n  } else {\n    ret 0\n  }\n}"):
        assert not check(valid, strict=True).errors
        assert _first_blocked(valid) is None
