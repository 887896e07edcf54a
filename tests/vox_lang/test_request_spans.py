"""Every item-declaring form of the spec, written in a request's backticks, asks for its item
(vox_lang.request_spans, through vox_lang.requests.extract_request)."""

from __future__ import annotations

import pytest

from vox_lang.requests import extract_request, missing_items
from vox_lang.signatures import parse_item

#: (backticked declaration, (kind, name, canonical signature)), one row per form of spec §2 and §10
FORMS = [
    # types: record, sum, alias (§2), without `=` (W0003), by name alone
    ("type Money = { cents: int }", ("type", "Money", "= { cents: int }")),
    ("type Shape = | Dot | Disc(r: float)", ("type", "Shape", "= | Dot | Disc(r: float)")),
    ("type Id = str", ("type", "Id", "= str")),
    ("type Point { x: int, y: int }", ("type", "Point", "= { x: int, y: int }")),
    ("type Shape", ("type", "Shape", None)),
    # functions, workflows, activities: modifiers, generics (§2's `<T>` and the `[T]` slip)
    ("fn add(a: int, b: int) to int", ("function", "add", "(a: int, b: int) to int")),
    ("pub async fn load(id: str) to str", ("function", "load", "(id: str) to str")),
    ("first<T>(xs: List[T]) to T", ("function", "first", "<T>(xs: List[T]) to T")),
    ("fn first<T>(xs: List[T]) to T", ("function", "first", "<T>(xs: List[T]) to T")),
    ("fn first[T](xs: List[T]) to T", ("function", "first", "<T>(xs: List[T]) to T")),
    ("fn pair<A, B>(a: A, b: B)", ("function", "pair", "<A, B>(a: A, b: B)")),
    ("extern fn now_ms() to int", ("function", "now_ms", "() to int")),
    ('extern fn now_ms() to int = "clock"', ("function", "now_ms", "() to int")),
    ("fn greet", ("function", "greet", None)),
    ("pub async workflow ship(id: str) to str", ("workflow", "ship", "(id: str) to str")),
    ("activity pack(id: str) to str", ("activity", "pack", "(id: str) to str")),
    ("workflow ship", ("workflow", "ship", None)),
    # components (§10 U6: a function returning Element), handlers, actors
    ("component Card(title: str)", ("function", "Card", "(title: str)")),
    ("on bump(n: int) to int", ("handler", "bump", "(n: int) to int")),
    ("actor Clerk", ("actor", "Clerk", None)),
    ("actor Clerk { }", ("actor", "Clerk", None)),
]


@pytest.mark.parametrize(("code", "expected"), FORMS)
def test_each_declaration_form_in_backticks_is_an_item(code: str, expected: tuple[str, str, str | None]) -> None:
    spec = extract_request(f"Write this in Vox: `{code}`.")
    assert [(i.kind, i.name, i.signature) for i in spec.items] == [expected]


@pytest.mark.parametrize(("code", "expected"), [row for row in FORMS if row[1][0] == "function" and row[1][2]])
def test_a_function_s_canonical_signature_is_a_vox_header(code: str, expected: tuple[str, str, str]) -> None:
    """What a decoder forces (``fn NAME SIGNATURE {``) is Vox: generics stay, written ``<T>``."""
    _, name, signature = expected
    assert parse_item(f"fn {name}{signature} {{ }}") is not None


@pytest.mark.parametrize("code", ["actor", "fn", "type", "fn print", "actor List", "type int", "fn xs[0](1)",
                                  "first<T U>(x: T)", "component"])
def test_reserved_words_prelude_names_and_broken_forms_ask_for_nothing(code: str) -> None:
    assert extract_request(f"Write this in Vox: `{code}`.").items == ()


def test_a_generic_function_is_declared_whatever_the_request_leaves_open() -> None:
    spec = extract_request("Write `first[T](xs: List[T]) to T` and `count(xs: List[int]) to int` in Vox")
    assert missing_items(spec, "fn first<T>(xs: List[T]) to T { ret xs[0] }\n"
                               "fn count<T>(xs: List[int]) to int { ret len(xs) }") == []
    assert missing_items(spec, "fn first(xs: List[int]) to int { ret xs[0] }") == ["first", "count"]
    assert missing_items(extract_request("Write `type Point { x: int }` in Vox"), "type Point = { x: int }") == []
