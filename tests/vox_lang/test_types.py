"""Types: printing in source syntax, unification (structural records, nominal sums, never,
opaque ``?``), rollback on failure, and prelude signature parsing."""

from __future__ import annotations

from vox_lang.prelude import BUILTINS, CONSTRUCTORS, METHODS, STD, parse_sig, std_member
from vox_lang.types import (
    ANY,
    BOOL,
    FLOAT,
    INT,
    NEVER,
    STR,
    UNIT,
    UNKNOWN,
    TActor,
    TCon,
    TFn,
    TNamedRec,
    TOneOf,
    TParam,
    TRecord,
    TSum,
    Unifier,
    list_of,
    option_of,
    result_of,
)

POINT = ((("x", INT), ("y", INT)))


def unifier() -> Unifier:
    table = {1: POINT, 2: (("x", INT), ("y", INT)), 3: (("next", option_of(TNamedRec("Node", 3))),)}
    return Unifier(lambda i: table.get(i, ()))


def test_show_source_syntax() -> None:
    u = unifier()
    assert u.show(TCon("Map", (STR, list_of(INT)))) == "Map[str, List[int]]"
    assert u.show(result_of(UNIT)) == "Result[Unit, str]"
    assert u.show(TFn((INT, STR), BOOL)) == "fn(int, str) to bool"
    assert u.show(TFn((), UNIT)) == "fn()"
    assert u.show(TRecord((("a", INT), ("b", STR)))) == "{ a: int, b: str }"
    assert u.show(TNamedRec("Item", 1)) == "Item"
    assert u.show(TSum("Shape", 4)) == "Shape"
    assert u.show(TActor("Tally", 5)) == "Tally"


def test_unknowns_print_as_question_mark() -> None:
    u = unifier()
    assert u.show(list_of(u.fresh())) == "List[?]"
    assert u.show(UNKNOWN) == "?"
    v = u.fresh()
    assert u.unify(v, INT)
    assert u.show(list_of(v)) == "List[int]"


def test_unify_binds_variables_inside_constructors() -> None:
    u = unifier()
    a, b = u.fresh(), u.fresh()
    assert u.unify(TCon("Map", (a, list_of(b))), TCon("Map", (STR, list_of(FLOAT))))
    assert u.resolve(a) == STR and u.resolve(b) == FLOAT


def test_failed_unify_leaves_nothing_bound() -> None:
    u = unifier()
    a = u.fresh()
    assert not u.unify(TCon("Map", (a, INT)), TCon("Map", (STR, STR)))
    assert u.resolve(a) == a


def test_occurs_check() -> None:
    u = unifier()
    a = u.fresh()
    assert not u.unify(a, list_of(a))


def test_no_implicit_numeric_conversion() -> None:
    u = unifier()
    assert not u.unify(INT, FLOAT)
    assert not u.unify(list_of(INT), list_of(FLOAT))


def test_records_are_structural_sums_nominal() -> None:
    u = unifier()
    assert u.unify(TNamedRec("Point", 1), TNamedRec("Coord", 2))
    assert u.unify(TNamedRec("Point", 1), TRecord((("y", INT), ("x", INT))))
    assert not u.unify(TNamedRec("Point", 1), TRecord((("x", INT),)))
    assert not u.unify(TNamedRec("Point", 1), TRecord((("x", INT), ("y", STR))))
    assert not u.unify(TSum("A", 7), TSum("B", 8))
    assert u.unify(TSum("A", 7), TSum("A", 7))


def test_recursive_records_compare_coinductively() -> None:
    u = unifier()
    assert u.unify(TNamedRec("Node", 3), TNamedRec("Node", 3))
    assert u.unify(TNamedRec("Node", 3), TRecord((("next", option_of(TNamedRec("Node", 3))),)))


def test_never_unknown_and_any_fit_everything() -> None:
    u = unifier()
    for t in (INT, list_of(STR), TFn((), UNIT), TSum("S", 1)):
        assert u.unify(t, NEVER) and u.unify(NEVER, t)
        assert u.unify(t, UNKNOWN) and u.unify(ANY, t)
    v = u.fresh()
    assert u.unify(v, NEVER) and u.resolve(v) == v  # never leaves a variable unbound


def test_one_of_accepts_listed_heads() -> None:
    u = unifier()
    sized = TOneOf(("str", "List", "Map", "Set"))
    assert u.unify(sized, list_of(INT)) and u.unify(sized, STR)
    assert not u.unify(sized, INT)


def test_generic_params_are_rigid_and_substitutable() -> None:
    u = unifier()
    t = TParam("T", 9)
    assert not u.unify(t, INT)
    assert u.substitute(TFn((t,), list_of(t)), {9: STR}) == TFn((STR,), list_of(STR))


def test_prelude_signatures() -> None:
    assert BUILTINS["range"].ret == list_of(INT)
    assert [p.name for p in BUILTINS["range"].params] == ["a", "b"]
    assert BUILTINS["set"].generics == (-1,)
    assert CONSTRUCTORS["None"][1].params == ()
    assert METHODS["List"]["map"].params[0].type == TFn((TParam("T", -1),), TParam("U", -2))
    assert STD["fs"]["read"].ret == result_of(STR, STR)
    assert parse_sig("fn(x: Result[int]) to Unit").params[0].type == result_of(INT, STR)
    assert std_member(("fs",)) is STD["fs"] and std_member(("fs", "nope")) is None
    assert set(STD) == {
        "fs", "process", "env", "json", "http", "time",  # spec §5
        "path", "crypto", "log", "regex", "csv", "toml", "yaml", "agentos",  # §10 U2
    }
