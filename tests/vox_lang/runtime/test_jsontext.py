"""Values as JSON (:mod:`vox_lang.runtime.jsontext`): ``json.dump`` text and the data
``yaml.render``/``toml.render`` write. User trial: ``json.dump`` of a 300-node linked list exited
0 with output ending ``{"Cons": [100, {"Cons": [null, null]}]}`` (values past 200 levels written
as ``null``). The JSON of a value is now whole at any depth, or R0006 past the size cap."""

from __future__ import annotations

import json
from typing import Any

import pytest

from vox_lang.runtime import RunConfig, run_source
from vox_lang.runtime.jsontext import expanded_size, json_text, to_json
from vox_lang.runtime.text import TextTooLong
from vox_lang.runtime.values import NONE, Err, FnVal, KeyList, Ok, Record, Some, Variant, VSet

LIST_TYPE = "type L = | Nil | Cons(v: int, next: L)\n"


def _pairs(n: int) -> Any:
    """``Pair(t, t)`` ``n`` times over: ``n + 1`` objects, ``2**n`` leaves."""
    v: Any = Variant(0, "Leaf", ())
    for _ in range(n):
        v = Variant(1, "Pair", (v, v))
    return v


@pytest.mark.parametrize(("value", "data"), [
    ([1, 2.5, "é", True, None], [1, 2.5, "é", True, None]), (Some(Ok(3)), 3), (NONE, None),
    (Err("no"), {"error": "no"}), (Variant(1, "Circle", (2.0,)), {"Circle": [2.0]}), (Variant(2, "Empty", ()), "Empty"),
    (Record({"a": [1], "b": VSet({"x": None})}), {"a": [1], "b": ["x"]}), (float("nan"), "nan"),
    ({1: "a", KeyList(["é"]): "b", 2.5: "c"}, {"1": "a", '["\\u00e9"]': "b", "2.5": "c"}),
    (FnVal("f", lambda a: None), "<fn f>"),
])
def test_json_text_is_what_json_dumps_writes(value: Any, data: Any) -> None:
    assert to_json(value) == data
    assert json_text(value) == json.dumps(data, ensure_ascii=False)


def test_deep_values_get_their_whole_json() -> None:
    v: Any = Variant(0, "Nil", ())
    for i in range(100_000):
        v = Variant(1, "Cons", (i, v))
    text = json_text(v)
    assert text.endswith('{"Cons": [0, "Nil"]}' + "]}" * 99_999)
    data = to_json(v)
    for _ in range(100_000):
        data = data["Cons"][1]
    assert data == "Nil"


def test_shared_parts_are_counted_where_they_appear() -> None:
    assert expanded_size(_pairs(10), 10**9) == 2**11 - 1
    assert expanded_size(_pairs(60), 1000) == 1001  # stops past the cap: costs what is in memory
    with pytest.raises(TextTooLong):
        json_text(_pairs(60), limit=10_000)
    p = Variant(1, "Pt", (1, 2))
    data = to_json([p, p])
    assert data == [{"Pt": [1, 2]}, {"Pt": [1, 2]}] and data[0] is data[1]  # shared, not rebuilt


def test_json_dump_of_a_long_chain_in_a_program() -> None:
    text = (LIST_TYPE + "import std.json\nlet mut l = Nil\nfor i in range(0, 300) { l = Cons(i, l) }\n"
            "print(json.dump(l))\n")
    result = run_source(text)
    assert result.status == "ok", result.fault
    expected = "".join(f'{{"Cons": [{i}, ' for i in reversed(range(300))) + '"Nil"' + "]}" * 300 + "\n"
    assert result.output == expected


def test_json_dump_of_a_shared_value_is_r0006() -> None:
    text = ("import std.json\ntype T = | Leaf | Pair(l: T, r: T)\nlet mut t = Leaf\n"
            "for i in range(0, 60) { t = Pair(t, t) }\nprint(len(json.dump(t)))\n")
    result = run_source(text, config=RunConfig(timeout_s=30))
    assert result.fault is not None and result.fault.code == "R0006"
    assert (result.fault.diagnostic.line, result.fault.diagnostic.col) == (5, 11)
