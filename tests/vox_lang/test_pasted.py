"""Items of code pasted into a fix request (vox_lang/pasted.py)."""

from __future__ import annotations

import pytest

from vox_lang.pasted import asked_items, pasted_items
from vox_lang.requests import RequestedItem, RequestSpec, extract_request, missing_items


def test_a_fix_request_asks_for_the_items_its_pasted_code_declares() -> None:
    text = "Fix this Vox code: fn double(x: int) -> int { return x * 2 }"
    assert pasted_items(text) == (RequestedItem("function", "double", "(x: int) to int", renamable=True),)
    spec = asked_items(text)
    assert missing_items(spec, 'fn pigu_tag(n: int) to str {\n  ret "[" + str(n)\n}') == ["double"]
    assert missing_items(spec, "fn double(x: int) to int {\n  ret x * 2\n}") == []


def test_a_fix_keeps_the_pasted_signature() -> None:
    """A new-user trial got ``fn total(name: str, value: str) to Element`` as the fix of
    ``fn total(xs: List[int]) -> int`` and PASS: the name alone was required."""
    spec = asked_items("Fix this Vox code, it does not compile:\n```vox\nfn total(xs: List[int]) -> int {\n"
                       "  let sum = 0\n  for x in xs { sum += x }\n  return sum\n}\n```")
    assert missing_items(spec, 'fn total(name: str, value: str) to str {\n  ret name\n}') == ["total"]
    assert missing_items(spec, "fn total(xs: List[int]) to str {\n  ret str(xs)\n}") == ["total"]
    fixed = "fn total(xs: List[int]) to int {\n  let mut sum = 0\n  for x in xs { sum += x }\n  ret sum\n}"
    assert missing_items(spec, fixed) == []
    assert missing_items(spec, fixed.replace("xs", "values")) == []  # a parameter may be renamed


@pytest.mark.parametrize(("code", "signature"), [
    ("fn f(a: int, b: str) -> bool {", "(a: int, b: str) to bool"),  # the retired arrow reads as `to`
    ("fn f(a: int) to List[Map[str, int]] { }", "(a: int) to List[Map[str, int]]"),
    ("fn f(g: fn(int) to int, n: int) to int {", "(g: fn(int) to int, n: int) to int"),
    ("fn f(name: str) {", "(name: str)"),  # no return type: the fix may add one
    ("fn f(a: int) -> Int {", "(a: int)"),  # an unknown return type: the fix may change it
    ("fn f(a: Int) -> int {", None),  # an unknown parameter type: by name
    ("fn f(a: list[int]) to int {", None),
    ("fn first<T>(xs: List[T]) to T {", None),  # generic: by name
    ("fn f(a: int to int {", None),  # unclosed parameters
    ("type P = { x: int }\nfn area(p: P) to float {", "(p: P) to float"),  # a type the paste declares
    ("workflow w(n: int) to Result[int, str] {", "(n: int) to Result[int, str]"),
])
def test_pasted_signatures_are_kept_where_they_are_plain_vox(code: str, signature: str | None) -> None:
    items = pasted_items("Fix this Vox code: " + code)
    assert items[-1].signature == signature, items


def test_every_kind_of_item_is_read_from_fenced_or_inline_code() -> None:
    text = ("This doesn't compile, why?\n```vox\ntype Shape = | Dot | Disc(r: float)\ntype Box<T> = { v: T }\n"
            "actor Clerk {\n  on ask(n: int) to int { ret n }\n}\npub async workflow ship(id: str) to str {\n"
            "  ret id\n}\nactivity pack(id: str) to str { ret id }\nfn double<T>(x: T) to T { ret x }\n```")
    assert [(i.kind, i.name) for i in pasted_items(text)] == [
        ("type", "Shape"), ("type", "Box"), ("actor", "Clerk"), ("workflow", "ship"), ("activity", "pack"),
        ("function", "double")]


def test_only_fix_requests_count_and_backticks_come_first() -> None:
    assert pasted_items("Rename fn double(x: int) to twice") == ()  # not a fix: left to its backticks
    assert pasted_items("Write a function that doubles a number") == ()
    assert pasted_items("fix it: x.fn(1) and my_fn(2) call nothing") == ()  # members and calls declare nothing
    spec = asked_items("Fix `double(x: int) to int`: fn double(x: int) -> int { return x * 2 }")
    assert [(i.kind, i.name, i.signature) for i in spec.items] == [("function", "double", "(x: int) to int")]
    assert asked_items("Write a function `greet`").items == (RequestedItem("function", "greet"),)


def test_strings_comments_reserved_words_and_a_returned_error_require_nothing() -> None:
    """Found by a helper probing the first version: each of these required a name no correct answer declares."""
    assert [i.name for i in pasted_items('Fix this Vox code: fn show() {\n  print("call fn helper(x) first")\n'
                                         '  // fn old(x) is gone\n}')] == ["show"]
    assert pasted_items("Fix this Vox code: fn if(x: int) -> int { ret x }\nfn main() { }\nfn print(s: str) { }") == ()
    assert pasted_items("Write `safe_div(a: int, b: int) to Result[int]` that returns an error on zero, "
                        "replacing my old fn div(a: int, b: int) to int { ret a / b }") == ()
    for text in ("This won\u2019t compile: fn double(x: int) -> int { ret x }",
                 "It doesnt compile: fn double(x: int) {", "error[E0201] here: fn double(x: int) -> int {"):
        assert [i.name for i in pasted_items(text)] == ["double"], text


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        # types: record, sum, alias (spec §2), generics, without `=` (W0003), retired colon block (E0301)
        ("type Money = { cents: int }", [("type", "Money")]),
        ("type Shape = | Dot | Disc(r: float)", [("type", "Shape")]),
        ("type Id = str", [("type", "Id")]),
        ("type Box<T> = { v: T }", [("type", "Box")]),
        ("type Box[T] = { v: T }", [("type", "Box")]),
        ("type Point { x: int, y: int }", [("type", "Point")]),
        ("type Point {\n  x: int\n  y: int\n}", [("type", "Point")]),
        ("@table type Row { id: int }", [("type", "Row")]),
        ("type Point:\n    x: int", [("type", "Point")]),
        # functions, workflows, activities: modifiers, decorators, generics, retired forms
        ("fn pick[T](xs: List[T]) to T { ret xs[0] }", [("function", "pick")]),
        ("fn pick<T>(xs: List[T]) to T { ret xs[0] }", [("function", "pick")]),
        ("pub async fn load(id: str) to str { ret id }", [("function", "load")]),
        ('extern fn now_ms() to int = "clock"', [("function", "now_ms")]),
        ("@test\nfn adds() { assert(1 + 1 == 2) }", [("function", "adds")]),
        ('@mcp.tool "Area of a circle"\nfn area(r: float) to float { ret r * r }', [("function", "area")]),
        ("@endpoint(kind: query) fn stats() to int { ret 1 }", [("function", "stats")]),
        ("@component\nfn Nav() to Element { ret text(value=\"x\") }", [("function", "Nav")]),
        ("fn double(x: int):\n    return x * 2", [("function", "double")]),
        ("pub async workflow ship[T](id: str) { }", [("workflow", "ship")]),
        ("activity pack(id: str) to str { ret id }", [("activity", "pack")]),
        # components (spec §10 U6; an upstream one with state too), actors
        ('component Card(title: str) {\n  view: text(value=title)\n}', [("function", "Card")]),
        ("component Counter {\n  state count: int = 0\n}", [("function", "Counter")]),
        ("actor Clerk {\n  on ask(n: int) to int { ret n }\n}", [("actor", "Clerk")]),
        ("actor Clerk:\n  on ask(n: int) to int { ret n }", [("actor", "Clerk")]),
        # uses, not declarations
        ("let f: fn(int) to int = fn(x: int) to int { ret x }", []),
        ("let t = msg.type\nlet c = my_component(1)\nlet a = x.actor", []),
        ("fn show(p: Point) { }  // p has type Point: a record", [("function", "show")]),
        ("let n = 1  // returns a value of type Foo { x }", []),
    ],
)
def test_every_item_declaring_form_is_read(code: str, expected: list[tuple[str, str]]) -> None:
    assert [(i.kind, i.name) for i in pasted_items("Fix this Vox code:\n" + code)] == expected


def test_a_component_answers_for_the_function_it_lowers_to() -> None:
    spec = asked_items("This doesn't compile: component Card(title: str) {\n  view: text(value=title)\n}")
    assert missing_items(spec, 'fn Card(title: str) to Element {\n  ret text(value=title)\n}') == []
    assert missing_items(spec, 'component Card(title: str) {\n  view: text(value=title)\n}') == []
    assert missing_items(spec, "fn other() { }") == ["Card"]


def test_asked_items_is_computed_once_per_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """One request reads its text several times (pipeline.decoding_constraint, decoding_request):
    the items are computed once per text and shared (a RequestSpec is frozen)."""
    read: list[str] = []

    def counted(text: str) -> RequestSpec:
        read.append(text)
        return extract_request(text)

    monkeypatch.setattr("vox_lang.pasted.extract_request", counted)
    text = "Fix this Vox code (cache test): fn halve(x: int) -> int { return x / 2 }"
    first = asked_items(text)
    halve = RequestedItem("function", "halve", "(x: int) to int", renamable=True)
    assert asked_items(text) is first and first.items == (halve,)
    assert asked_items(text + " ") == first and read == [text, text + " "]
