"""Equality, hashing and copies of values nested deeper than Python recursion
(:mod:`vox_lang.runtime.values`). User trial: two 200,000-node lists built in loops, ``a == b``
ended with R0007 "call depth exceeded … look for endless recursion" in a program without
recursion; ``==`` now falls back to a walk with its own stack, and hashing and copying never
recurse."""

from __future__ import annotations

import math
from typing import Any

from vox_lang.runtime import RunConfig, run_source
from vox_lang.runtime.values import (
    NONE,
    Err,
    KeyList,
    Ok,
    Record,
    Some,
    Variant,
    VSet,
    as_key,
    deep_hash,
    equal,
    vcopy,
)

#: deeper than Python recursion goes in this thread (the program test below goes past the run thread's)
DEEP = 20_000
LIST_TYPE = "type L = | Nil | Cons(v: int, next: L)\n"


def _chain(n: int, last: int = 0) -> Any:
    """``Cons(n-1, … Cons(last, Nil))`` built in a loop (no recursion)."""
    v: Any = Variant(0, "Nil", ())
    for i in range(n):
        v = Variant(1, "Cons", (last if i == 0 else i, v))
    return v


def _nested_lists(n: int) -> Any:
    """``{ xs: [{ xs: [ … ] }] }``: records and lists nested ``n`` deep (mutable all the way)."""
    v: Any = Record({"xs": []})
    for _ in range(n):
        v = Record({"xs": [v]})
    return v


def test_equal_walks_any_depth() -> None:
    a, b = _chain(DEEP), _chain(DEEP)
    assert equal(a, b) and not equal(a, _chain(DEEP, last=7)) and not equal(a, _chain(DEEP - 1))
    assert a == b and a != _chain(DEEP, last=7)  # the __eq__ that meets the RecursionError walks the rest
    assert [a] == [b] and Some(a) == Some(b) and Ok(a) != Err(b)


def test_equal_gives_python_s_answers() -> None:
    nan = math.nan
    cases: list[tuple[Any, Any]] = [
        (1, 1.0), ([1, 2], KeyList([1, 2])), ({"a": 1, "b": 2}, {"b": 2, "a": 1}), (VSet({1: None}), VSet({1: None})),
        (Record({"x": 1, "y": [2]}), Record({"y": [2], "x": 1})), ([nan], [nan]), (Some(nan), Some(nan)),
        (Some(1), Ok(1)), (NONE, NONE), ([Some(1)], [Some(2)]), ({"a": 1}, {"a": 1, "b": 2}), (None, None),
    ]
    for x, y in cases:
        assert equal(x, y) is (x == y), (x, y)


def test_deep_values_hash_without_recursion() -> None:
    a, b = _chain(DEEP), _chain(DEEP)
    assert deep_hash(a) == deep_hash(b) == hash(a)
    assert len(VSet({a: None, b: None})) == 1
    assert {as_key([a]): 1}[as_key([b])] == 1
    assert deep_hash(Record({"x": 1, "y": 2})) == deep_hash(Record({"y": 2, "x": 1.0}))
    assert deep_hash(Record({"x": [1], "y": Some(2)})) == deep_hash(Record({"y": Some(2), "x": KeyList([1])}))


def test_vcopy_copies_any_depth() -> None:
    v = _nested_lists(DEEP)
    c = vcopy(v)
    assert c is not v and equal(c, v)
    inner, orig = c, v
    for _ in range(DEEP):
        inner, orig = inner.fields["xs"][0], orig.fields["xs"][0]
        assert inner is not orig
    assert type(vcopy(KeyList([[1]]))) is list


def test_deep_equality_in_a_program() -> None:
    text = (LIST_TYPE + "let mut a = Nil\nlet mut b = Nil\nfor i in range(0, 200000) {\n"
            "  a = Cons(i, a)\n  b = Cons(i, b)\n}\nprint(a == b)\nprint(a != b)\nprint(Cons(1, a) == b)\n"
            "let mut m: Map[L, int] = {}\nm[a] = 7\nprint(m[b])\nprint(len(set([a, b])))\n")
    result = run_source(text, config=RunConfig(timeout_s=60))
    assert result.status == "ok", result.fault.render_repair() if result.fault else result.message
    assert result.output == "true\nfalse\nfalse\n7\n1\n"
