""":func:`vox_lang.exhaustiveness.analyze` indexes the arms above each arm by head key instead of
scanning them all (a match of n arms was O(n^2)). It must give what the per-arm usefulness
check gives, with the same ``ctors_of`` calls in the same order (the checker's ``ctors_of``
resolves type aliases, which it remembers): checked here against that plain algorithm, kept
below as the reference, on random matches."""

from __future__ import annotations

import random
from collections.abc import Hashable, Sequence

import pytest

from vox_lang import exhaustiveness as ex
from vox_lang.api import check
from vox_lang.exhaustiveness import WILD, Ctor, Pat, Row

# ----------------------------------------------------------------------------- reference


def _spec(rows: list[Row], key: Hashable, arity: int) -> list[Row]:
    out = []
    for row in rows:
        head = row[0]
        if head.kind == "wild":
            out.append((WILD,) * arity + row[1:])
        elif head.key == key:
            out.append((head.args if len(head.args) == arity else (WILD,) * arity) + row[1:])
    return out


def _useful(rows: list[Row], q: Row, types: Sequence[object], ctors_of: ex.CtorsOf) -> bool:
    if not q:
        return not rows
    head, rest = q[0], q[1:]
    if head.kind == "ctor":
        ctors = ctors_of(types[0], [r[0] for r in rows] + [head]) or []
        arg_types = next((c.arg_types for c in ctors if c.key == head.key), (None,) * len(head.args))
        return _useful(_spec(rows, head.key, len(head.args)), head.args + rest, list(arg_types) + list(types[1:]),
                       ctors_of)
    if head.kind == "lit":
        return _useful(_spec(rows, head.key, 0), rest, types[1:], ctors_of)
    heads = [r[0] for r in rows]
    complete = ctors_of(types[0], heads)
    used = {h.key for h in heads if h.kind != "wild"}
    if complete and all(c.key in used for c in complete):
        return any(
            _useful(_spec(rows, c.key, len(c.arg_types)), (WILD,) * len(c.arg_types) + rest,
                    list(c.arg_types) + list(types[1:]), ctors_of)
            for c in complete
        )
    return _useful([r[1:] for r in rows if r[0].kind == "wild"], rest, types[1:], ctors_of)


def _missing(rows: list[Row], types: Sequence[object], ctors_of: ex.CtorsOf) -> list[Row]:
    if not types:
        return [] if rows else [()]
    heads = [r[0] for r in rows]
    ctors = ctors_of(types[0], heads)
    used = {h.key for h in heads if h.kind != "wild"}
    out: list[Row] = []
    if ctors is not None and ctors and all(c.key in used for c in ctors):
        for c in ctors:
            n = len(c.arg_types)
            for w in _missing(_spec(rows, c.key, n), list(c.arg_types) + list(types[1:]), ctors_of):
                out.append((Pat("ctor", c.key, c.name, w[:n]),) + w[n:])
                if len(out) >= ex.MAX_WITNESSES:
                    return out
        return out
    rest = _missing([r[1:] for r in rows if r[0].kind == "wild"], types[1:], ctors_of)
    if not rest:
        return []
    heads_out = [WILD] if ctors is None or not used else [
        Pat("ctor", c.key, c.name, (WILD,) * len(c.arg_types)) for c in ctors if c.key not in used]
    for h in heads_out:
        for w in rest:
            out.append((h,) + w)
            if len(out) >= ex.MAX_WITNESSES:
                return out
    return out


def _analyze(arms: Sequence[Pat], t: object, ctors_of: ex.CtorsOf) -> tuple[list[int], list[str]]:
    rows: list[Row] = []
    unreachable = []
    for i, pat in enumerate(arms):
        if not _useful(rows, (pat,), [t], ctors_of):
            unreachable.append(i)
        rows.append((pat,))
    return unreachable, [w[0].show() for w in _missing(rows, [t], ctors_of)]


# ----------------------------------------------------------------------------- random matches

#: types: "int" (infinite), "bool", "opt" (Some(int) | None), "shape" (Dot | Pair(bool, opt) | Box(shape))
_CTORS: dict[str, list[Ctor]] = {
    "bool": [Ctor(("bool", True), "true", ()), Ctor(("bool", False), "false", ())],
    "opt": [Ctor("Some", "Some", ("int",)), Ctor("None", "None", ())],
    "shape": [Ctor("Dot", "Dot", ()), Ctor("Pair", "Pair", ("bool", "opt")), Ctor("Box", "Box", ("shape",))],
}


def _pattern(rng: random.Random, t: str, depth: int) -> Pat:
    if rng.random() < 0.2 or depth > 2:
        return WILD
    if t == "int":
        return Pat("lit", ("num", rng.randint(0, 4)), str(rng.randint(0, 4)))
    c = rng.choice(_CTORS[t])
    return Pat("ctor", c.key, c.name, tuple(_pattern(rng, str(a), depth + 1) for a in c.arg_types))


def _recorder(calls: list[tuple[object, tuple[Pat, ...]]]) -> ex.CtorsOf:
    """A ``ctors_of`` over :data:`_CTORS` that logs its calls."""
    def ctors_of(ty: object, heads: Sequence[Pat]) -> list[Ctor] | None:
        calls.append((ty, tuple(heads)))
        return _CTORS.get(str(ty))
    return ctors_of


@pytest.mark.parametrize("seed", range(40))
def test_analyze_gives_what_checking_each_arm_against_all_earlier_arms_gives(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(25):
        t = rng.choice(["int", "bool", "opt", "shape"])
        arms = [_pattern(rng, t, 0) for _ in range(rng.randint(1, 30))]
        calls: tuple[list[tuple[object, tuple[Pat, ...]]], ...] = ([], [])
        assert ex.analyze(arms, t, _recorder(calls[0])) == _analyze(arms, t, _recorder(calls[1]))
        assert calls[0] == calls[1]


def test_matches_of_thousands_of_arms_report_their_unreachable_arms() -> None:
    arms = "\n".join(f"    {i} -> {i}" for i in range(3000))
    variants = " ".join(f"| V{i}(x: int)" for i in range(800))
    varms = "\n".join(f"    V{i}(x) -> x" for i in range(800))
    src = (f"type T = {variants}\nfn f(a: int, v: T) to int {{\n  let r = match a {{\n{arms}\n    7 -> 0\n"
           f"    _ -> 0\n  }}\n  ret r + match v {{\n{varms}\n    V3(y) -> y\n  }}\n}}\n")
    result = check(src)
    assert [(d.code, d.line) for d in result.diagnostics] == [("W0101", 3004), ("W0101", 3808)]
