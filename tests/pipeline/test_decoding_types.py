"""Declared types at an expression's head (pipeline.decoding_types): return types read from
headers, and the starts refused where they can never give the declared type."""

from __future__ import annotations

import pytest

from pipeline import decoding_types
from pipeline.decoding_types import NUMBER, argument_want, expected_base, head_rule, return_type, type_base
from vox_lang.prelude import VIEW_ELEMENTS


@pytest.mark.parametrize(("code", "expected"), [
    ("fn f(a: int) to int {\n  ret ", "int"),
    ("fn f(a: int) {\n  ret ", ""),                                           # no return type: Unit
    ("pub async fn f() to Result[int] {\n  ret ", "Result[int]"),
    ("fn f<T>(a: T) to T {\n  ret ", "T"),
    ("fn f(g: fn(int) to int, b: int) to str {\n  ret ", "str"),            # a function-typed parameter
    ("fn f(a: int) to fn(int, int) to List[int] {\n  ret ", "fn(int, int) to List[int]"),
    ("fn f(\n  a: int,\n  b: int\n) to List[int] {\n  ret ", "List[int]"),  # parameters over lines
    ("fn f(a: int) to int {\n  if a > 1 {\n    while true {\n      ret ", "int"),
    ("fn f(a: int) to int {\n  match a {\n    1 -> {\n      ret ", "int"),
    ("fn f(a: int) to int {\n  let g = fn(x: int) to str {\n    ret ", "str"),  # a lambda returns from itself
    ("fn f(a: int) to int {\n  let g = fn(x: int) to str {\n    ret x\n  }\n  ret ", "int"),
    ("actor A {\n  on h(x: int) to bool {\n    ret ", "bool"),
    ("activity fetch(u: str) to Result[str] {\n  ret ", "Result[str]"),
    ("let x = 1\n", None),                                                   # not in a function
    ("fn f(a: int) to int {\n  print(", None),                               # in a call's parentheses
])
def test_return_type(code: str, expected: str | None) -> None:
    assert return_type(code) == expected


@pytest.mark.parametrize(("text", "base"), [
    ("int", "int"), ("", "Unit"), ("List[int]", "List"), ("Result[int, str]", "Result"), ("Element", "Element"),
    ("fn(int) to int", "fn"), ("Money", None), ("T", None), (None, None), ("Map[str, int]", "Map"),
])
def test_type_base(text: str | None, base: str | None) -> None:
    assert type_base(text) == base


def test_expected_base_reads_ret_and_annotated_lets_only() -> None:
    assert expected_base("fn f() to str {\n  ret ") == "str"
    assert expected_base("fn f() to str {\n  let n: int = ") == "int"
    assert expected_base("fn f() to str {\n  let n = ") is None
    assert expected_base("fn f() to str {\n  x = ") is None
    assert expected_base("fn f() to str {\n  print(ret ") is None  # not a statement's `ret`


@pytest.mark.parametrize(("code", "refused", "allowed", "numbers"), [
    ("fn f(a: int) to int {\n  ret ", {"float", "not", "true", "print", "card", "text"}, {"len", "int", "str", "range"},
     False),
    ("fn f(a: int) to float {\n  ret ", {"not", "card", "print"}, {"len", "int", "float", "str"}, False),
    ("fn f(a: int) to str {\n  ret ", {"len", "int", "float", "not", "card", "set"}, {"str", "range"}, True),
    ("fn f(a: int) to Element {\n  ret ", {"len", "not", "print"}, {"card", "text", "str"}, True),
    ("fn f(a: int) {\n  ret ", {"len", "card", "not"}, {"print", "assert", "str"}, True),
    ("fn f(a: bool) to bool {\n  ret a and not ", {"len", "int", "float", "print", "card"}, {"true", "not", "str"},
     True),
    ("fn f(a: str) to int {\n  ret len(", {"len", "int", "not", "card"}, {"str", "range", "set"}, True),
    ("fn f(a: str) to int {\n  ret range(0, ", {"float", "not", "card"}, {"len", "int"}, False),
    ("fn f(a: str) to float {\n  ret float(", {"not", "true", "card", "print"}, {"len", "int", "str"}, False),
    ("fn f(a: int) to int {\n  let s: str = ", {"len", "int"}, {"str"}, True),
    # the right operand of an arithmetic operator whose left operand's type is known
    ('fn f(a: int) to str {\n  ret "n: " + ', {"len", "int", "float", "not", "card", "print"}, {"str", "range"}, True),
    ("fn f(a: int) to str {\n  ret str(a) + ", {"len", "grid"}, {"str"}, True),
    ('fn f(a: int) to int {\n  ret len("ab") * ', {"not", "true", "card", "print"}, {"len", "int", "float"}, False),
    ("fn f(a: int) to float {\n  ret 2.5 - ", {"not", "card"}, {"len", "float"}, False),
    # a comparison: an int name's right operand must stay an int (only an INT literal checks as a float)
    ("fn f(a: int) to bool {\n  ret a > ", {"float", "card", "not"}, {"len", "int", "a"}, False),
    ("fn f(a: int) to bool {\n  ret 2 > ", {"card", "not"}, {"float", "len"}, False),
    ("fn f(a: float) to bool {\n  ret a > ", {"card", "not"}, {"float", "len", "int"}, False),
    # `not`'s operand: no Option/Result constructor either (only `.unwrap_or` would make it a bool)
    ("fn f(a: str) to bool {\n  ret not ", {"None", "Some", "Ok", "Error", "len", "if", "match"}, {"a", "str"},
     True),
    # unary minus: a number (no string, list, record, bool, Option/Result constructor)
    ("fn f(a: bool) to int {\n  ret - ", {"a", "true", "print", "None", "card"}, {"len", "int", "float"}, False),
    ("fn f(a: bool) to int {\n  ret 2 * - ", {"a", "true"}, {"len"}, False),
    # an assignment's value: the type of the name assigned
    ("fn f(a: int) {\n  let mut n = 0\n  n += ", {"float", "card", "not"}, {"len", "a"}, False),
    ('fn f(a: int) {\n  let mut s = ""\n  s = ', {"len", "a", "card"}, {"str"}, True),
    ("fn f(xs: List[Element]) {\n  let mut n = 0\n  for a in xs { n += ", {"a", "card"}, {"len"}, False),
    # a `for`'s iterable: a List, Set, Map or str; a lambda or a spawned actor never is
    ("fn f(a: int) {\n  for v in ", {"fn", "spawn", "not", "len", "print", "card"}, {"range", "set", "str", "if",
                                                                                  "match"}, True),
    # the operand starts on a later line (L2 drops the break after an operator): right after the
    # break too (`-"` is one token), and past blank and comment-only lines (one NL, spec §10)
    ("fn f(a: str) to bool {\n  ret not\n", {"None", "len", "if"}, {"a", "str"}, True),
    ("fn f(a: str) to bool {\n  ret not\n\n  // why\n", {"None", "len"}, {"a"}, True),
    ("fn f(a: str) to bool {\n  ret not\n  //\" + x\n  ", {"None", "len"}, {"a"}, True),
    ('fn f(a: int) to str {\n  ret "n: " +\n  // the count\n  ', {"len", "int"}, {"str"}, True),
])
def test_head_rule_refuses_starts_that_cannot_give_the_type(code: str, refused: set[str], allowed: set[str],
                                                            numbers: bool) -> None:
    rule = head_rule(code, frozenset({"a"}))
    assert rule is not None
    assert refused <= rule.words and not allowed & rule.words and NUMBER not in rule.words
    assert rule.numbers == numbers


@pytest.mark.parametrize("code", [
    "fn f(a: int) to bool {\n  ret ",                      # everything compares to a bool
    "fn f(a: int) to Money {\n  ret ",                     # an alias or user type: not resolved here
    "fn f<T>(a: T) to T {\n  ret ",
    "fn f(a: int) to fn(int) to int {\n  ret ",            # a function: any prelude function may be it
    "fn f(a: int) to int {\n  let n = ",                   # no annotation
    "fn f(a: Money) to int {\n  ret a + ",                 # a name whose type is not built in
    "fn f(a: int) to int {\n  print(",                     # print takes anything
    "fn f(a: int) to int {\n  ret",                        # the word `ret` itself is being written
    "fn f(a: int) to str {\n  let a = g()\n  ret a + ",   # a name bound twice, with types that differ
    'fn f(a: str) to str {\n  ret "a" - ',                 # only `+` takes strings: an error either way
    'fn f(a: Map[str, str]) to str {\n  ret a."k" + ',
    "fn f(a: int) {\n  let mut n = g()\n  n = ",          # an assigned name whose type is not read
    "fn f(a: int) {\n  card(\n    a = ",                  # a named argument, not an assignment
    "fn f(a: int) to int {\n  let n = 1\n",             # a new statement after a line break
    "fn f(a: int) to int {\n  let n = 1\n  // and then\n  ",  # ... and after a comment line
])
def test_head_rule_is_silent_where_the_type_is_not_known(code: str) -> None:
    assert head_rule(code, frozenset({"a"})) is None


def test_a_shadowing_declaration_is_never_refused() -> None:
    rule = head_rule("fn f(len: Money, card: str) to str {\n  ret ", frozenset({"len", "card"}))
    assert rule is not None and not {"len", "card"} & rule.words and "int" in rule.words


def test_builtin_tables_derived_from_the_prelude_equal_the_hand_written_ones() -> None:
    # the tables as written by hand before they were read from vox_lang.prelude.BUILTINS
    numeric = frozenset({"int", "float", "bool"})
    assert decoding_types._REACH == {
        NUMBER: numeric, "not": frozenset({"bool"}), "true": frozenset({"bool"}), "false": frozenset({"bool"}),
        "len": numeric, "int": numeric, "float": frozenset({"float", "bool"}),
        "print": frozenset({"Unit", "bool"}), "assert": frozenset({"Unit", "bool"}), "set": frozenset({"Set", "bool"}),
        **{v: frozenset({"Element", "bool"}) for v in VIEW_ELEMENTS},
    }
    assert decoding_types._POSTFIX_REACH == {
        NUMBER: frozenset({"int", "float"}), "not": frozenset({"bool"}), "true": frozenset({"bool"}),
        "false": frozenset({"bool"}), "len": frozenset({"int"}), "int": frozenset({"int"}),
        "float": frozenset({"float"}), "print": frozenset({"Unit"}), "assert": frozenset({"Unit"}),
        "set": frozenset({"Set"}), **{v: frozenset({"Element"}) for v in VIEW_ELEMENTS},
    }
    assert decoding_types.ARGUMENTS == {
        "len": frozenset({"str", "List", "Map", "Set"}), "set": frozenset({"List"}), "range": frozenset({"int"}),
        "float": frozenset({"int", "float", "str"}), "int": frozenset({"int", "float", "str"}),
        "assert": frozenset({"bool"}),
    }
    assert decoding_types._OPERANDS == {"str": "str", "len": "int", "int": "int", "float": "float"}


def test_expected_base_agrees_with_head_rule_on_the_line_it_reads() -> None:
    # head_rule reads the line once and hands it on; expected_base reads it itself
    head = "fn f() to int {\n  // ret\n  ret "
    assert expected_base(head) == "int"
    rule = head_rule(head + "x", frozenset())
    assert rule is not None and "float" in rule.words and rule.numbers is False
    assert expected_base("fn f() to int {\n  ret 1 // ret ") is None  # a comment's words are no tokens


@pytest.mark.parametrize(("code", "want"), [
    ("fn ship(id: str, n: int) to str {\n  ret ship(", {"str"}),
    ("fn ship(id: str, n: int) to str {\n  ret ship(id, ", {"int"}),
    ("fn ship(id: str, n: int) to str {\n  ret ship(f(1, 2), ", {"int"}),     # commas inside count not
    ("fn f(a: str) to int {\n  ret len(", {"str", "List", "Map", "Set"}),     # a builtin (spec §5)
    ("fn ship(id: str, n: int) to str {\n  ret ship(id, 1, ", None),          # past the parameters
    ("fn ship(id: str, n: int) to str {\n  ret ship(n=1, ", None),            # named arguments
    ("fn ap(f: fn(int) to int) to int {\n  ret ap(", None),                   # a function-typed parameter
    ("fn ap<T>(x: T) to int {\n  ret ap(", None),                             # generic
    ("fn k(x: int) {}\nfn k(y: str) {}\nfn f() {\n  k(", None),               # declared twice, differently
    ("fn ship(id: Money) to str {\n  ret ship(", None),                       # a user type
    ("fn ship(id: str, n: int) to str {\n  ret id |> ship(", {"int"}),       # a pipe gives the first
])
def test_argument_want(code: str, want: set[str] | None) -> None:
    got = argument_want(code, frozenset({"id", "n", "a", "f", "x", "y"}))
    assert got == (frozenset(want) if want is not None else None)
