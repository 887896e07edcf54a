"""What may follow an operand of known type (pipeline.decoding_operators), and the name mask
refusing it token by token."""

from __future__ import annotations

import pytest

from pipeline.decoding_operators import OperatorRule, operator_rule
from pipeline.decoding_scan import visible_names
from tests.pipeline.test_decoding_names import _first_blocked


def _rule(code: str) -> OperatorRule | None:
    return operator_rule(code, visible_names(code + " "))


@pytest.mark.parametrize(("code", "refused"), [
    # the eval's failing answers: a str where an int is returned, an int where a bool is
    ("fn word_count(text: str) to int {\n  ret text", {"plus", "arith", "compare", "logic", "end"}),
    ("fn f(s: str) to bool {\n  ret len(s)", {"member", "logic", "end"}),
    ('fn f(n: int) to int {\n  ret "#" + str(n)', {"plus", "arith", "compare", "logic", "end"}),
    ("fn f(amount: float) to Result[float] {\n  ret amount * 2.0", {"plus", "arith", "compare", "logic", "end"}),
    # whatever the context, an operator the operand's type does not take
    ("fn f(n: int) to int {\n  print(n", {"member", "logic"}),
    ('fn f(s: str) {\n  print(s', {"arith", "logic"}),
    ("fn f(ok: bool) {\n  print(ok", {"member", "plus", "arith"}),
    ("fn f(n: int) {\n  print(n) ", {"plus", "arith", "logic", "member"}),       # a Unit
    ("fn f(n: int) {\n  print(n.abs", None),                                   # (a name being written)
    ("fn f(n: int) {\n  print(-n", {"logic", "member"}),                       # E0512: an int has no members
    # conditions are bool, a builtin's argument its parameter's type
    ("fn f(n: int) to int {\n  if n", {"member", "logic", "brace"}),
    ("fn f(n: int) to int {\n  while n + 1", {"logic", "brace"}),
    ("fn f(n: int) {\n  assert(n", {"member", "logic", "close"}),
    ("fn f(n: int) to int {\n  ret len(n", {"member", "plus", "arith", "compare", "logic", "close"}),
    ("fn f(n: int) to float {\n  ret n * 2", {"compare", "logic", "end"}),     # an int stays an int (E0507)
    ("fn f(n: int) to float {\n  ret 2", {"compare", "logic"}),                # an INT literal counts as float
    ("fn f(n: int) to float {\n  ret n * 2.0", {"compare", "logic"}),
    # an int compared with a float only when the int is an INT literal (spec §4)
    ("fn f(n: int, x: float) to bool {\n  ret n > x", {"plus", "arith", "compare", "logic", "end", "brace",
                                                       "close"}),
    ("fn f(n: int, x: float) to bool {\n  ret 2 > x", {"member"}),
    ("fn f(n: int, x: float) to bool {\n  ret x < 3", None),
    # an assignment's value has the assigned name's type
    ("fn f(found: List[Element]) to int {\n  let mut n = 0\n  for v in found {\n    n += v",
     {"plus", "arith", "compare", "logic", "end", "member"}),
    ('fn f(n: int) {\n  let mut s = ""\n  s = n', {"member", "plus", "arith", "compare", "logic", "end"}),
    ("fn f(n: int, s: str) to bool {\n  ret n == s", {"plus", "arith", "compare", "logic", "end", "brace",
                                                     "close"}),                # only postfix may go on
    ("fn f(n: int) {\n  let s: str = n", {"member", "plus", "arith", "compare", "logic", "end"}),
    ("fn f(n: int) to int {\n  ret n > 3", {"end", "plus", "arith", "compare", "logic"}),
])
def test_refused_after_a_typed_operand(code: str, refused: set[str] | None) -> None:
    rule = _rule(code)
    if refused is None:
        assert rule is None
        return
    assert rule is not None
    assert {k for k, v in vars(rule).items() if v} == refused


@pytest.mark.parametrize("code", [
    "fn f(n: int) to bool {\n  ret n > 3",              # a bool, as wanted
    "fn f(a: Money) to int {\n  ret a",                 # a user type (an alias may be an int)
    "fn f(xs: List[Money]) to int {\n  ret xs[0]",
    "fn f(x: int) to int {\n  ret g(y",                 # an unknown name
    "fn f(n: int) to int {\n  ret n +",                 # not after an operand
    "fn f(n: int) to int {\n  let x = n + 1 > 2",       # an unannotated let wants nothing
    "fn f(n: int) to str {\n  ret match n {\n    1 -> ",
    'fn f(n: int) to str {\n  ret "a',                  # inside a string
])
def test_silent_where_nothing_is_known(code: str) -> None:
    assert _rule(code) is None


@pytest.mark.parametrize(("src", "refused_after"), [
    ('fn word_count(text: str) to int {\n  ret text + " ok"\n}', "ret text"),                    # E0507
    ("fn f(s: str) to bool {\n  ret len(s)\n}", "ret len(s)"),                                    # E0507
    ('fn f(n: int) to bool {\n  ret n > text\n}', "ret n >"),                                     # E0510
    ('fn f(cents: int) to str {\n  ret "no stock left for " + cents\n}', 'for " +'),            # E0510
    ("fn encode(n: int) to str {\n  ret n\n}", "{\n  ret"),                                      # E0507
    ("fn f(amount: float) to Result[float] {\n  ret amount * 2.0\n}", "{\n  ret"),               # E0507
    ("fn f(n: int) to int {\n  if n {\n    ret 1\n  }\n  ret 0\n}", "if n"),                    # E0511
    ("fn f(s: str) to int {\n  ret s - 2\n}", "ret s"),                                          # E0510
    ("fn f(n: int, s: str) to bool {\n  ret n == s\n}", "ret n == s"),                           # E0510
])
def test_wrong_types_are_refused_token_by_token(src: str, refused_after: str) -> None:
    blocked = _first_blocked(src)
    assert blocked is not None and refused_after in blocked.split(" + ")[0].replace("\\n", "\n"), blocked


@pytest.mark.parametrize("src", [
    'fn word_count(text: str) to int {\n  ret len(text.split(" "))\n}',
    "fn f(text: str) to int {\n  ret text |> len\n}",
    "fn f(s: str) to bool {\n  ret len(s) > 0 and s != \"x\"\n}",
    "fn f(n: int) to float {\n  ret float(n) * 1.5\n}",
    'fn f(n: int) to str {\n  ret "#" + str(n) + "!"\n}',
    "fn f(xs: List[int]) to int {\n  let total = xs\n    |> len\n  ret total\n}",
    "fn f(xs: List[int]) to int {\n  ret xs[0] + xs.get(1).unwrap_or(0)\n}",
    "fn f(n: int, o: Option[str]) to str {\n  ret match o {\n    Some(n) -> n\n    None -> str(n)\n  }\n}",
    "fn f(ok: bool, n: int) to int {\n  if ok and n > 1 {\n    ret n\n  }\n  ret 0\n}",
    "fn f(n: int) to bool {\n  ret n > 0 // positive\n}",
    "fn len(a: int, b: int) to int {\n  ret a + b\n}\nfn g() to int {\n  ret len(1, 2)\n}",
])
def test_valid_programs_pass(src: str) -> None:
    import vox_lang

    assert vox_lang.check(src, strict=True).ok, src
    assert _first_blocked(src) is None


@pytest.mark.parametrize(("src", "refused_after"), [
    ("fn f(n: int) to int {\n  ret n |> {}\n}", "ret n |>"),                        # E0502: a map is no function
    ("fn f(n: int) to int {\n  ret n |>(n)\n}", "ret n |>"),
    ("fn f(n: int) to int {\n  ret 3 |> n\n}", "ret 3 |>"),                         # an int is no function
    ('fn f(s: str) to bool {\n  ret not "abc"\n}', "ret not"),                      # E0510: not on a str literal
])
def test_a_pipe_stage_is_a_function_and_not_takes_no_string_literal(src: str, refused_after: str) -> None:
    blocked = _first_blocked(src)
    assert blocked is not None and refused_after in blocked.split("' + '")[0], blocked


@pytest.mark.parametrize("src", [
    "fn f(xs: List[int]) to int {\n  ret xs |> len\n}",
    "fn f(n: int) to str {\n  let s = n |> str\n  ret s\n}",  # (`ret n |> str` is the head rule's trade-off)
    "fn double(n: int) to int {\n  ret n * 2\n}\nfn f(n: int) to int {\n  ret n |> double |> double\n}",
    'fn f(s: str) to bool {\n  ret not s.contains("x")\n}',
])
def test_valid_pipes_and_nots_pass(src: str) -> None:
    import vox_lang

    assert vox_lang.check(src, strict=True).ok, src
    assert _first_blocked(src) is None


def test_a_pipe_refuses_a_glued_number_too() -> None:
    blocked = _first_blocked("fn f(n: int) to int {\n  ret n |>0\n}")
    assert blocked is not None and blocked.endswith("' + '0'"), blocked
