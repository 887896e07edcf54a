"""The "did you mean" index (:mod:`vox_lang.suggest`) picks exactly what the brute-force rule
picks: same name, same tie-breaking, same distance limits, through scopes, field tuples and
member tables, and in the hints of :func:`vox_lang.api.check`."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from vox_lang.api import check
from vox_lang.prelude import BUILTIN_TYPES
from vox_lang.scopes import Scope
from vox_lang.suggest import SHORT, IndexCache, SuggestIndex, deletions, levenshtein, pieces, suggest

FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# a small alphabet makes close names (and ties) common; "_" is never suggested
_CHARS = "ab_1é"
short_names = st.text(_CHARS, min_size=0, max_size=7)
any_names = st.one_of(short_names, st.text(_CHARS, min_size=SHORT - 3, max_size=SHORT + 9))


def distance(a: str, b: str) -> int:
    """Plain Levenshtein distance (full table, no cap): the reference."""
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def reference(name: str, names: list[str]) -> str | None:
    """The spec's rule by brute force: least distance ≤ min(2, len(name) - 1), then least name."""
    lim = min(2, len(name) - 1)
    close = [(distance(name, n), n) for n in set(names) if n not in (name, "_")]
    close = [c for c in close if c[0] <= lim]
    return min(close)[1] if close else None


@FAST
@given(any_names, any_names, st.integers(1, 12))
def test_levenshtein_is_the_capped_distance(a: str, b: str, cap: int) -> None:
    assert levenshtein(a, b, cap) == min(distance(a, b), cap)


@FAST
@given(any_names, st.lists(any_names, max_size=40))
def test_index_picks_what_the_rule_picks(name: str, names: list[str]) -> None:
    want = reference(name, names)
    assert suggest(name, names) == want
    assert SuggestIndex(names).suggest(name) == want


@FAST
@given(any_names, st.lists(any_names, max_size=40), st.integers(0, 2))
def test_candidates_hold_every_name_within_k(name: str, names: list[str], k: int) -> None:
    found = SuggestIndex(names).candidates(name, k)
    assert {n for n in names if distance(name, n) <= k} <= found


def test_candidates_hold_edits_far_apart_in_long_names() -> None:
    rng = random.Random(7)
    for _ in range(400):
        base = "".join(rng.choice(_CHARS) for _ in range(rng.randint(SHORT - 2, SHORT + 30)))
        word = list(base)
        for _ in range(rng.randint(1, 2)):
            op, at = rng.choice("sid"), rng.randrange(len(word))
            if op == "s":
                word[at] = rng.choice(_CHARS)
            elif op == "i":
                word.insert(at, rng.choice(_CHARS))
            else:
                del word[at]
        other = "".join(word)
        k = distance(base, other)
        assert k > 2 or base in SuggestIndex([base]).candidates(other, k)


def test_deletions_and_pieces() -> None:
    assert deletions("abc", 1) == {"abc", "bc", "ac", "ab"}
    assert deletions("ab", 2) == {"ab", "a", "b", ""}
    assert pieces(17) == [(0, 5), (5, 6), (11, 6)]
    assert pieces(18) == [(0, 6), (6, 6), (12, 6)]
    with pytest.raises(ValueError):
        SuggestIndex(["x"]).candidates("x", 3)


@FAST
@given(
    st.lists(st.tuples(st.integers(0, 3), any_names, st.booleans()), max_size=60),
    st.lists(any_names, min_size=1, max_size=6),
    st.booleans(),
)
def test_scope_suggest_equals_the_rule_over_visible_names(
    binds: list[tuple[int, str, bool]], queries: list[str], types: bool,
) -> None:
    # a chain of 4 scopes; names bound between lookups (the indexes must keep up), and a
    # visibility predicate (odd ids hidden) that hides some names in one scope only
    chain = [Scope("prelude")]
    for kind in ("module", "function", "block"):
        chain.append(Scope(kind, chain[-1]))
    hidden: set[int] = set()
    for i, (depth, name, hide) in enumerate(binds):
        table = chain[depth].types if types else chain[depth].values
        table.setdefault(name, i)
        if hide:
            hidden.add(i)
        q = queries[i % len(queries)]
        for scope in (chain[-1], chain[depth]):
            visible = lambda d: d not in hidden  # noqa: E731
            assert scope.suggest(q, types=types, visible=visible) == suggest(q, scope.names(types, visible))
            assert scope.suggest(q, types=types) == suggest(q, scope.names(types))
    assert chain[-1].suggest(queries[0], types=not types) is None


def test_index_cache_unites_owners_and_keeps_one_index_each() -> None:
    cache = IndexCache()
    fields = (("total", 1), ("tally", 2))
    methods = {"tot": 0, "len": 0}
    assert cache.suggest("totl", (fields, (n for n, _ in fields)), (methods, methods)) == "tot"
    assert cache.index(fields, ()) is cache.index(fields, ())
    assert len(cache.index(fields, ())) == 2  # built once, from the first names given
    assert cache.suggest("x", (methods, methods)) is None


# ---------------------------------------------------------------------------- through check


def hints(src: str) -> list[tuple[str, str | None]]:
    return [(d.code, d.hint) for d in check(src, strict=True).diagnostics]


def test_crowded_scope_hints_match_the_rule() -> None:
    names = [f"a{i}" for i in range(1, 301)]
    src = "".join(f"let a{i} = b{i}\n" for i in range(1, 301))
    got = hints(src)
    # each `bN` sees the `aM` declared before its line only (top-level lets)
    want = [("E0401", f"did you mean `{s}`?" if (s := reference(f"b{i}", names[: i - 1])) else None)
            for i in range(1, 301)]
    assert got == want
    assert got[0] == ("E0401", None) and got[11] == ("E0401", "did you mean `a1`?")  # b12: a1 < a11


def test_crowded_types_fields_and_ctors_hints_match_the_rule() -> None:
    rng = random.Random(3)
    stems = ["count", "counter_total_value", "x1"]
    names = sorted({rng.choice(stems) + "".join(rng.choice("ab1") for _ in range(rng.randint(0, 3)))
                    for _ in range(120)})
    fields = ", ".join(f"{n}: int" for n in names)
    types = "".join(f"type T{n} = {{ v: int }}\n" for n in names)
    queries = [n[:-1] + "z" if len(n) > 2 else n + "z" for n in names[::7]]
    body = "".join(f"  print(r.{q})\n  let t{i}: T{q} = 1\n" for i, q in enumerate(queries))
    src = f"type R = {{ {fields} }}\n{types}fn f(r: R) {{\n{body}}}\n"
    got = [(c, h) for c, h in hints(src) if c in ("E0512", "E0403")]
    want: list[tuple[str, str | None]] = []
    for q in queries:
        s = reference(q, names)  # a declared record: its fields only, no methods
        want.append(("E0512", f"did you mean `{s}`?" if s else None))
        t = reference(f"T{q}", [f"T{n}" for n in names] + list(BUILTIN_TYPES))  # + the prelude's
        want.append(("E0403", f"did you mean `{t}`?" if t else None))
    assert got == want

