"""The text of values (spec §11 "Text of values", :mod:`vox_lang.runtime.text`). User trial:
``str`` of a 450-node linked list ended ``Cons(49, …`` (a depth cap) and exited 0. The text is
now written whole at any depth; a value whose shared parts stand for more text than the size cap
(``max_len``) is R0006, never a cut text."""

from __future__ import annotations

from typing import Any

import pytest

from vox_lang.runtime import RunConfig, run_source
from vox_lang.runtime.text import TextTooLong, show, show_cut
from vox_lang.runtime.values import (
    NONE,
    ActorVal,
    Element,
    Err,
    FnVal,
    KeyList,
    Ok,
    Record,
    Some,
    Variant,
    VSet,
    text_element,
)

LIST_TYPE = "type L = | Nil | Cons(v: int, next: L)\n"
#: ``Pair(t, t)`` 60 times over: a few objects in memory, 2**60 leaves as text
SHARED = "type T = | Leaf | Pair(l: T, r: T)\nlet mut t = Leaf\nfor i in range(0, 60) { t = Pair(t, t) }\n"


@pytest.mark.parametrize(("value", "text"), [
    ([1, 2], "[1, 2]"), ([], "[]"), ({"a": 1}, '{"a": 1}'), (VSet({1: None, 2: None}), "set([1, 2])"),
    (VSet(), "set([])"), (Some(3), "Some(3)"), (NONE, "None"), (Ok(1), "Ok(1)"), (Err("no"), 'Error("no")'),
    (Record({"name": "pen", "qty": 2}), '{ name: "pen", qty: 2 }'), (Record({}), "{}"),
    (Variant(1, "Circle", (2.0,)), "Circle(2.0)"), (Variant(2, "Empty", ()), "Empty"), (None, "()"),
    (ActorVal("Tally", {}), "<actor Tally>"), (FnVal("area", lambda a: None), "<fn area>"),
    (Element("column", (("gap", 2),), (Element("heading", (("text", "x"),), ()), text_element("in stock"))),
     'column(gap=2) { heading(text="x") "in stock" }'),
    (["a\"\\\n\t", 1.5, True, [KeyList([1])], {1: [Some(Record({"k": [2]}))]}],
     '["a\\"\\\\\\n\\t", 1.5, true, [[1]], {1: [Some({ k: [2] })]}]'),
    (float("inf"), "inf"), (1e20, "1e+20"), (2.5e-07, "2.5e-07"), ("top", "top"),
])
def test_text_of_values(value: Any, text: str) -> None:
    assert show(value) == text


def test_deep_values_get_their_whole_text() -> None:
    v: Any = Variant(0, "Nil", ())
    for i in range(100_000):
        v = Variant(1, "Cons", (i, Some([v])))
    text = show(v)
    assert text.startswith("Cons(99999, Some([Cons(99998, ") and text.endswith("Cons(0, Some([Nil]))" + "]))" * 99_999)


def test_a_text_past_its_limit_raises() -> None:
    v: Any = Variant(0, "Leaf", ())
    for _ in range(60):
        v = Variant(1, "Pair", (v, v))
    with pytest.raises(TextTooLong):
        show(v, limit=1000)
    with pytest.raises(TextTooLong):
        show(["x" * 100] * 1000, limit=10_000)  # one string many times: measured before it is joined
    assert show_cut(list(range(1000)), 10) == "[0, 1, 2, …"


def test_str_of_a_long_chain_in_a_program() -> None:
    text = LIST_TYPE + "let mut l = Nil\nfor i in range(0, 450) { l = Cons(i, l) }\nprint(str(l))\n"
    result = run_source(text)
    assert result.status == "ok", result.fault
    expected = "".join(f"Cons({i}, " for i in reversed(range(450))) + "Nil" + ")" * 450 + "\n"
    assert result.output == expected


@pytest.mark.parametrize(("statement", "message"), [
    ("print(len(str(t)))", "value too large: a str longer than 10,000,000"),
    ("print(t)", "output limit reached"),
])
def test_text_of_a_shared_value_is_capped(statement: str, message: str) -> None:
    result = run_source(SHARED + statement + "\n", config=RunConfig(timeout_s=30))
    assert result.fault is not None and result.fault.code == "R0006"
    assert result.fault.diagnostic.message.startswith(message)
    assert (result.fault.diagnostic.line, result.output) == (4, "")
