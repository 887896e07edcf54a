"""A requested type's variants or fields listed in the request's words (vox_lang.request_shapes),
and names in backticks that are parts or fields, not items (vox_lang.requests)."""

from __future__ import annotations

import pytest

from vox_lang.request_shapes import listed_shape
from vox_lang.requests import extract_request, missing_items
from vox_lang.signatures import same_shape


@pytest.mark.parametrize(("after", "shape"), [
    (" with variants Red, Yellow and Green, and a function `next_light` using match.", "| Red | Yellow | Green"),
    (" with variants Green, Amber and Flashing(times: int), plus `describe(s: Signal) to str`.",
     "| Green | Amber | Flashing(times: int)"),
    (" with variants `Red`, `Amber`, `Green`, and a function `next(l: Light) to Light`.", "| Red | Amber | Green"),
    (" with variants: Card(number: str, cvv: int); then a function.", "| Card(number: str, cvv: int)"),
    (" with cases `on`, `off` or `unknown`.", "| on | off | unknown"),
    (" with fields name: str and age: int.", "{ name: str, age: int }"),
    (" with fields name: str, tags: List[str], scores: Map[str, int], and a function `f`.",
     "{ name: str, tags: List[str], scores: Map[str, int] }"),
    (" that has the fields `x: float`, `y: float`.", "{ x: float, y: float }"),
])
def test_a_listed_shape_is_read(after: str, shape: str) -> None:
    assert listed_shape(after) == shape


@pytest.mark.parametrize("after", [
    " with float fields x and y, and a function",  # no types: nothing to require
    " with variants Red, Amber and Green lights.",  # not a plain list
    " with variants Circle and Square, each with a size.",  # the list says more than its names
    " with variants for each state.",  # plain lower-case words are no variants
    " and a function `area` that matches on its cases.",  # the role word belongs to a later clause
    " with variants.",
    " with fields name: and age: int.",
    "",
])
def test_prose_that_lists_no_shape_requires_none(after: str) -> None:
    assert listed_shape(after) is None


def test_the_form_must_agree_with_the_role_word() -> None:
    assert listed_shape(" with fields a: int.", "sum") is None
    assert listed_shape(" with variants A and B.", "record") is None


@pytest.mark.parametrize("text", [
    "Define an enum `Light` with variants `Red`, `Amber`, `Green`, and a function `next(l: Light) to Light`.",
    "Define an enum `Light` with variants Red, Amber and Green, and a function `next(l: Light) to Light`.",
])
def test_variants_are_parts_of_the_type_not_items(text: str) -> None:
    spec = extract_request(text)
    assert [(i.kind, i.name, i.signature) for i in spec.items] == [
        ("type", "Light", "= | Red | Amber | Green"), ("function", "next", "(l: Light) to Light")]
    program = ("type Light = | Green | Red | Amber\nfn next(l: Light) to Light {\n  match l {\n"
               "    Red -> ret Green\n    Amber -> ret Red\n    Green -> ret Amber\n  }\n}\n")
    assert missing_items(spec, program) == []  # any order
    assert missing_items(spec, program.replace("| Amber", "| Amber | Blue")) == ["Light"]


def test_listed_fields_are_required_in_any_order() -> None:
    spec = extract_request("Write a record type `User` with fields name: str and age: int.")
    assert spec.items[0].signature == "= { name: str, age: int }"
    assert missing_items(spec, "type User = { age: int, name: str }\n") == []
    assert missing_items(spec, "type User = { name: str }\n") == ["User"]


@pytest.mark.parametrize("text", [
    "Can you write a Vox function `peak_interviews` that finds the largest `interviews` among candidates?",
    "Write a Vox function `vaccines_or_zero` that returns the `vaccines` of an `Option[Pet]`, or 0.",
    "Show me a Vox function `is_docked` that tells whether a `VesselStatus` is Docked.",
])
def test_a_field_or_type_used_later_in_the_sentence_is_not_a_requested_function(text: str) -> None:
    assert [i.name for i in extract_request(text).items] == [text.split("`")[1]]


@pytest.mark.parametrize(("want", "have", "same"), [
    ("= | A | B(x: int)", "= | B(x: int) | A", True),
    ("= | A | B(x: int)", "= | A | B(x: str)", False),
    ("= { a: int, b: Map[str, int] }", "= { b: Map[str, int], a: int }", True),
    ("= int", "= int", True),
    ("= | A", "= { A: int }", False),
])
def test_same_shape(want: str, have: str, same: bool) -> None:
    assert same_shape(want, have) is same
