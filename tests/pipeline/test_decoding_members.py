"""Member names after ``.`` (pipeline.decoding_members) and type-argument counts in types
(pipeline.decoding_arity), as rules and through the name mask token by token."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import vox_lang
from pipeline.decoding_arity import GENERIC, ArityRule, arity_mask, arity_rule
from pipeline.decoding_members import MemberRule, member_mask, member_rule
from pipeline.decoding_position import position
from pipeline.decoding_scan import visible_names
from pipeline.decoding_tokens import TokenTable
from tests.pipeline.test_decoding_names import _first_blocked, token_table, tokenizer

STR_METHODS = frozenset({"split", "contains", "trim", "to_upper", "to_lower", "replace", "starts_with", "ends_with",
                         "slice", "char_at", "index_of"})
PROCESS = frozenset({"exit", "stdout", "stderr"})


def _member(code: str) -> MemberRule | None:
    return member_rule(code, position(code).partial, visible_names(code))


def _at(code: str) -> MemberRule:
    rule = _member(code)
    assert rule is not None, code
    return rule


def _table() -> TokenTable:
    return token_table(tokenizer())


def _id(table: TokenTable, text: str) -> int:
    return table.texts.index(text)


@pytest.mark.parametrize(("code", "members"), [
    ("fn f(s: str) to int {\n  ret s.", STR_METHODS),                       # no `len`: a builtin, no method
    ("fn f(s: str) to int {\n  ret s.spl", STR_METHODS),
    ("fn f(s: str) to int {\n  ret s. ", STR_METHODS),                      # after whitespace
    ("fn f(s: str) to int {\n  ret s.\n    ", STR_METHODS),                 # on the line after the `.` (L2)
    ("fn perimeter(s: ProcessOutput) to bool { ret len(s.", PROCESS),       # the eval's `s.s`
    ("fn f(s: ProcessOutput) to bool { ret len(s.stdout.", STR_METHODS),    # a chain through a field
    ("fn f(r: Result[ProcessOutput]) to Result[int] {\n  ret Ok(r?.", PROCESS),
    ("fn f(m: Map[str, int]) to int {\n  let x = m\n  // note\n  .", {"get"}),  # L3 after comment lines
    ("fn f(m: Map[str, str]) to int {\n  ret m.", {"get", "get_str", "get_int", "get_float", "get_bool",
                                                   "get_object"}),
    ("fn f(m: Map[str, int]) to int {\n  ret m.", {"get"}),                # JSON readers: Map[str, str] only
    ("fn f(m: Map[str, int]) to int {\n  ret m.get(\"a\").", {"unwrap_or"}),
    ("fn f(xs: List[int]) to int {\n  ret xs.", {"push", "map", "get"}),    # no `join` on List[int]
    ("fn f(xs: List[str]) to str {\n  ret xs.", {"push", "map", "get", "join"}),
    ("fn f(xs: List[str]) to int {\n  ret xs[0].", STR_METHODS),
    ('fn f() {\n  print("a,b".split(",").', {"push", "map", "get", "join"}),
    ("fn f(o: Option[str]) to str {\n  ret o.", {"unwrap_or"}),
    ("fn f(n: int) {\n  print(n\n  .", set()),                               # an int has no members
    ("type User = { name: str, age: int }\nfn f(u: User) to int {\n  ret u.", {"name", "age"}),
    ("type User = {\n  name: str\n  tags: List[str]\n}\nfn f(us: List[User]) to str {\n  ret us[0].tags.",
     {"push", "map", "get", "join"}),
])
def test_members_of_a_known_receiver(code: str, members: set[str]) -> None:
    assert _at(code).members == frozenset(members)


@pytest.mark.parametrize("code", [
    "import std.fs\nfn f() {\n  fs.",                                        # an import: opaque
    "fn f() {\n  std.fs.",
    "type Stock = Map[str, int]\nfn f(s: Stock) {\n  s.",                  # an alias: left free
    "type Shape = | Circle(r: float)\nfn f(s: Shape) {\n  s.",              # a sum type
    "fn f(a: int) {\n  let a = g()\n  a.",                                  # bindings disagree
    "fn f(xs: List[User]) {\n  for u in xs {\n    u.",                      # no such record: not read
    "fn f() {\n  undefined_name.",
    "fn f() {\n  g()(1).",
])
def test_an_unknown_receiver_refuses_only_a_lone_underscore(code: str) -> None:
    rule = _member(code)
    assert rule is not None and rule.members is None
    table = _table()
    assert member_mask(table, rule, len(table.texts)) is not None  # `_` + anything that ends it
    lone = member_mask(table, _at(code + "_"), len(table.texts))
    assert lone is not None and not lone[_id(table, ")")] and not lone[_id(table, " ")] and lone[_id(table, "x")]
    assert member_mask(table, _at(code + "x"), len(table.texts)) is None  # any other word is free


@pytest.mark.parametrize("code", [
    "fn f(s: str) to int {\n  ret s +",    # no `.`, no operand
    "fn f() {\n  let x = 1.",              # a float being written
    "fn f() {\n  let x = 1.5",
    "@mcp.",                               # a decorator
])
def test_no_member_position(code: str) -> None:
    assert _member(code) is None


def test_member_mask_keeps_the_word_a_prefix_of_a_member() -> None:
    table = _table()
    width = len(table.texts)
    code = "fn f(s: ProcessOutput) to bool {\n  ret len(s."
    mask = member_mask(table, _at(code), width)
    assert mask is not None
    for text, allowed in (("s", True), ("std", True), ("e", True), ("_", False), ("x", False), ("n", False)):
        if text in table.texts:
            assert bool(mask[_id(table, text)]) is allowed, text
    stuck = member_mask(table, _at(code + "s"), width)  # `s` is no member yet: it may not end
    assert stuck is not None and not stuck[_id(table, ")")] and stuck[_id(table, "t")] and not stuck[_id(table, "x")]
    done = member_mask(table, _at(code + "stdout"), width)  # a member: it may end
    assert done is not None and done[_id(table, ")")]
    lone = member_mask(table, MemberRule("_"), width)
    assert lone is not None and not lone[_id(table, ")")] and lone[_id(table, "x")]


class _Vocab:
    """A tokenizer stand-in over the given token texts (what :func:`token_table` reads)."""

    all_special_ids: list[int] = []

    def __init__(self, texts: list[str]) -> None:
        self.texts = texts

    def __len__(self) -> int:
        return len(self.texts)

    def decode(self, ids: list[int], **_: Any) -> str:
        return "".join(self.texts[i] for i in ids)


def test_tokens_that_glue_a_dot_and_a_member_on_an_operand() -> None:
    """BPE vocabularies hold ``.len(``-like tokens: after an operand whose type is read, one that
    writes a word that is no member (or starts none) is refused too."""
    texts = [".", ".len(", ".split(", ".sp", ".spx", "._(", "._", ". trim", " .get", ".0", "x", ")", " "]
    table = token_table(_Vocab(texts))
    code = "fn f(s: str) to int {\n  ret s"
    rule = _at(code)
    assert not rule.word and rule.then == STR_METHODS
    mask = member_mask(table, rule, len(texts))
    assert mask is not None
    assert [t for t, ok in zip(texts, mask) if not ok] == [".len(", ".spx", "._(", "._", " .get", ".0"]
    assert _at(code + " ").then == STR_METHODS  # spaces before the `.`
    chained = _at("fn f(p: ProcessOutput) to int {\n  ret p.stdout")  # a field, then its own members
    assert chained.word and chained.members == PROCESS and chained.then == STR_METHODS
    for free in ("fn f(s: str) to int {\n  ret t", "fn f(s: str) to int {\n  ret 12", "fn f() {\n  print(x)"):
        assert _member(free) is None, free


def _members_used(src: str) -> list[tuple[str, str]]:
    """``(text before the member's ".", member)`` for each member written in ``src``."""
    return [(src[:m.start()], m.group(1)) for m in re.finditer(r"(?<=[\w)\]?\"])\.([A-Za-z_]\w*)", src)
            if not re.search(r"(//|@|import )[^\n]*\Z", src[:m.start()]) and src[:m.start()].count('"') % 2 == 0]


@pytest.mark.parametrize("extra", [False, True])
def test_every_member_of_a_valid_program_is_allowed(extra: bool) -> None:
    """At each ``.`` of every example, pool program and valid form here: the rule after the
    operand (tokens gluing ``.`` and a member) and the rule after the ``.`` both hold the member
    the program writes (the tiny test tokenizer has no ``.len``-like tokens to try this)."""
    from tests.pipeline.test_decoding_names import _helpers

    programs = [src for _, src in _helpers.valid_programs()] if not extra else VALID
    seen = 0
    for src in programs:
        for before, member in _members_used(src):
            then, after = _member(before), _member(before + ".")
            for members in (then.then if then is not None else None, after.members if after is not None else None):
                if members is not None:
                    seen += 1
                    assert member in members, (before[-60:], member, then, after)
    assert seen > (20 if extra else 100)


@pytest.mark.parametrize(("src", "refused_after"), [
    ("fn perimeter(s: ProcessOutput) to bool {\n  ret len(s.s) > 0\n}", "len(s.s"),
    ("fn f(s: str) to int {\n  ret s.len()\n}", "ret s."),
    ("fn f(xs: List[int]) to int {\n  ret xs.size\n}", "ret xs."),
    ("type User = { name: str }\nfn f(u: User) to str {\n  ret u.nam\n}", "ret u.nam"),
    ("fn f(m: Map[str, int]) to int {\n  let x = m\n  // c\n  ._\n}", "// c\n  ."),
])
def test_the_name_mask_refuses_an_unknown_member(src: str, refused_after: str) -> None:
    blocked = _first_blocked(src)
    assert blocked is not None and blocked.split("' + '")[0].endswith(repr(refused_after)[1:-1]), blocked


# ---------------------------------------------------------------------------- type arguments


def _arity(code: str) -> ArityRule | None:
    return arity_rule(code, position(code).partial)


@pytest.mark.parametrize(("code", "rule"), [
    ("fn f(x: Map", ArityRule("word", "Map", True)),
    ("fn f(x: Ma", ArityRule("word", "Ma", True)),
    ("fn f(x: Map ", ArityRule("after", "G", True)),
    ("let x: ProcessOutput", ArityRule("word", "*", False)),
    ("fn f() to int ", ArityRule("after", "*", False)),
    ("type T = Li", ArityRule("word", "Li", False)),
    ("fn f(x: Map[", ArityRule("arg", "", True, close=True, close_empty=True)),
    ("fn f(x: Map[str", ArityRule("word", "*", True, close=True, close_empty=True)),
    ("fn f(x: Map[str, ", ArityRule("arg", "", True, close_empty=True, comma=True)),
    ("fn f(x: Map[str,\n", ArityRule("arg", "", True, close_empty=True, comma=True)),
    ("fn f(x: List[int", ArityRule("word", "*", True, close_empty=True, comma=True)),
    ("fn f(x: Result[int", ArityRule("word", "*", True, close_empty=True)),
    ("fn f(x: Result[int, str", ArityRule("word", "*", True, comma=True)),
    ("type P = { a: Map[str, List[in", ArityRule("word", "*", True, close_empty=True, comma=True, outer_comma=True)),
    ("fn f(x: List[Set[str", ArityRule("word", "*", True, close_empty=True, comma=True, outer_comma=True)),
    ("fn f(x: Map[List[str", ArityRule("word", "*", True, close_empty=True, comma=True, outer_close=True)),
    ("fn f(x: Result[Set[str", ArityRule("word", "*", True, close_empty=True, comma=True)),
    ("fn f(x: int) {\n  let y = xs[", None),              # an index, no type
    ("fn f(x: int) {\n  let y = x", None),
    ("fn f(x", None),                                      # a parameter's name
    ("fn f(x: int) to str {\n  // x: Map", None),          # a comment
    ("type Map = { a: int }\nfn f(x: Map", None),          # a redeclared built-in type name
])
def test_arity_rule(code: str, rule: ArityRule | None) -> None:
    assert _arity(code) == rule


def _allows(code: str, text: str) -> bool:
    table = _table()
    rule = _arity(code)
    assert rule is not None, code
    return bool(arity_mask(table, rule, len(table.texts))[_id(table, text)])


@pytest.mark.parametrize(("code", "text", "allowed"), [
    ("fn f(x: Map", "[", True),
    ("fn f(x: Map", "]", False),
    ("fn f(x: Map", ")", False),
    ("fn f(x: Map", ",", False),
    ("fn f(x: Map", "\n", True),          # L1: `Map` + newline + `[...]` is valid inside `(`
    ("let m: Map", "\n", False),          # ... not outside
    ("let m: Map", " ", True),
    ("let m: Map ", "=", False),
    ("fn f() to List ", "{", False),
    ("fn f() to Li", "st", True),         # the word goes on
    ("fn f() to Ma", "p", True),
    ("fn f(x: int", "[", False),          # E0409: `int` takes none
    ("let x: ProcessOutput", "[", False),
    ("let x: User", "[", False),
    ("fn f(x: int", ")", True),
    ("fn f(x: Map[str", "]", False),      # `Map[str]`
    ("fn f(x: Map[str", ",", True),
    ("fn f(x: Map[str, int", ",", False),
    ("fn f(x: Map[str, int", "]", True),
    ("fn f(x: List[int", ",", False),
    ("fn f(x: List[int", "]", True),
    ("fn f(x: List[", "]", False),        # `List[]`
    ("fn f(x: Result[int", ",", True),
    ("fn f(x: Result[int", "]", True),
    ("fn f(x: Result[int, str", ",", False),
    ("fn f(x: List[", "M", True),
    # one token closes the innermost `[` and goes on in the one around it (E0409 in default runs)
    ("fn f(x: List[Set[Ticket", "],", False),
    ("fn f(x: List[Set[Ticket", "]", True),
    ("fn f(x: Map[Set[Ticket", "],", True),
])
def test_arity_mask(code: str, text: str, allowed: bool) -> None:
    assert _allows(code, text) is allowed


def _reference(table: TokenTable, rule: ArityRule) -> Any:
    """The arity mask read token by token (what the vectorized one must equal)."""

    def ok(generic: bool, after: str) -> bool:
        rest = after.lstrip(" \t\r\n" if rule.l1 else " \t")
        if generic:
            return rest == "" or rest.startswith("[")
        then = rest[1:].lstrip(" \t\r\n") if rest.startswith("]") else ""
        return not (rest.startswith("[") or rule.close and rest.startswith("]") or rule.comma and rest.startswith(",")
                    or rule.outer_close and then.startswith("]") or rule.outer_comma and then.startswith(","))

    out = []
    for text in table.texts:
        m = re.match(r"([ \t\r\n]*)([A-Za-z0-9_]*)(.*)\Z", text, re.S)
        assert m is not None
        blank, ident, rest = m.groups()
        if rule.mode == "word":
            glued = not blank and ident
            out.append(ok(rule.word + ident in GENERIC, rest) if glued else ok(rule.word in GENERIC, text))
        elif rule.mode == "after":
            out.append(ok(rule.word == "G", text))
        elif ident and not ident[0].isdigit():
            out.append(ok(ident in GENERIC, rest))
        else:
            out.append(bool(ident) or not (rule.close_empty and text.lstrip(" \t\r\n").startswith("]")))
    return np.asarray(out)


@pytest.mark.parametrize("mode", ["word", "after", "arg"])
def test_the_arity_mask_equals_a_token_by_token_reading(mode: str) -> None:
    table = _table()
    words = {"word": ["*", "L", "Lis", "List", "M", "Map", "Re"], "after": ["*", "G"], "arg": [""]}[mode]
    for word in words:
        for flags in range(64):
            rule = ArityRule(mode, word, *(bool(flags >> k & 1) for k in range(6)))
            assert (arity_mask(table, rule, len(table.texts)) == _reference(table, rule)).all(), rule


@pytest.mark.parametrize(("src", "refused_after"), [
    ("fn f(m: Map[str]) {\n}", "fn f(m: Map[str"),
    ("fn f(o: ProcessOutput[int]) {\n}", "fn f(o: ProcessOutput"),
    ("fn f(xs: List[int, str]) {\n}", "fn f(xs: List[int"),
    ("fn f(xs: List[Set[int], str]) {\n}", "fn f(xs: List[Set[int"),
    ("fn f(m: Map) {\n}", "fn f(m: Map"),
    ("type Names = List\n", "type Names = List"),
    ("fn f() to Result[int, str, bool] {\n}", "fn f() to Result[int, str"),
])
def test_the_name_mask_refuses_a_wrong_type_argument_count(src: str, refused_after: str) -> None:
    blocked = _first_blocked(src)
    assert blocked is not None and blocked.split("' + '")[0].endswith(repr(refused_after)[1:-1]), blocked


VALID = [
    # members of every kind of receiver, glued, spaced, across lines (L2 after `.`, L3 before it)
    'fn f(s: str, xs: List[str], m: Map[str, str]) to int {\n  let parts = s.split(",")\n'
    '  let n = m.get_int("a").unwrap_or(0)\n  let t = xs.join(" ").trim()\n  let u = s\n    .to_upper()\n'
    '  let v = s.\n    to_lower()\n  print(xs[0].contains("a"))\n  ret len(parts) + n + len(t + u + v)\n}',
    "fn ok(p: ProcessOutput) to bool {\n  ret p.exit == 0 and len(p.stdout) > 0 and p.stderr == \"\"\n}",
    "fn size(r: FileRecord) to int {\n  if r.is_dir { ret 0 }\n  ret r.size\n}",
    "type Item = { sku: str, qty: int }\ntype Order = { id: str, items: List[Item] }\n"
    "fn first_sku(o: Order) to str {\n  ret o.items.get(0).unwrap_or({ sku: \"\", qty: 0 }).sku\n}\n"
    "fn total(o: Order) to int {\n  let mut n = 0\n  for it in o.items {\n    n += it.qty\n  }\n"
    "  ret n + o.items[0].qty + len(o.id.split(\"-\"))\n}",
    "fn f(o: Option[str], r: Result[int, str]) to str {\n  ret o.unwrap_or(\"\") + str(r.unwrap_or(0))\n}",
    "fn g(r: Result[ProcessOutput]) to Result[int] {\n  ret Ok(r?.exit)\n}",
    # type arguments of every built-in, nested, over lines inside brackets
    "type Table = Map[str, List[Option[int]]]\ntype R = Result[Set[str]]\n"
    "fn f(a: List[Map[str, int]], b: Result[int, str], c: Option[\n  List[str]\n]) to Map[\n  str,\n  int\n] {\n"
    "  let m: Map[str, int] = {}\n  ret m\n}",
    "fn h(f: fn(List[int]) to Option[str], x: Map\n  [str, int]) to Set[int] {\n  ret set([1])\n}",
]


@pytest.mark.parametrize("src", VALID)
def test_valid_forms_pass(src: str) -> None:
    assert vox_lang.check(src, strict=True).ok, vox_lang.check(src, strict=True)
    assert _first_blocked(src) is None
