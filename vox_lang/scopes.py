"""Lexical scopes for name resolution (spec §3) and "did you mean" suggestions.

Values and types are separate namespaces. Scopes nest prelude → module → function → block →
arm/loop; lookups walk outwards. A suggestion is the in-scope name of the same namespace at the
least Levenshtein distance, if that is ≤ 2 and below the name's length; ties go alphabetically.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator


class Scope:
    """One scope: ``values`` and ``types`` map names to definition ids.

    Attributes:
        kind: ``prelude``, ``module``, ``function``, ``block``, ``arm`` or ``loop``.
        parent: the enclosing scope (``None`` for the prelude).
    """

    __slots__ = ("values", "types", "parent", "kind")

    def __init__(self, kind: str, parent: Scope | None = None) -> None:
        self.kind = kind
        self.parent = parent
        self.values: dict[str, int] = {}
        self.types: dict[str, int] = {}

    def chain(self) -> Iterator[Scope]:
        """This scope and its ancestors, innermost first."""
        scope: Scope | None = self
        while scope is not None:
            yield scope
            scope = scope.parent

    def lookup(self, name: str, types: bool = False, visible: Callable[[int], bool] | None = None) -> int | None:
        """The id bound to ``name`` in the innermost scope that has it (and where ``visible``)."""
        for scope in self.chain():
            table = scope.types if types else scope.values
            found = table.get(name)
            if found is not None and (visible is None or visible(found)):
                return found
        return None

    def names(self, types: bool = False, visible: Callable[[int], bool] | None = None) -> Iterator[str]:
        """Every name visible from here in one namespace (duplicates possible)."""
        for scope in self.chain():
            table = scope.types if types else scope.values
            for name, def_id in table.items():
                if visible is None or visible(def_id):
                    yield name


def levenshtein(a: str, b: str, cap: int = 3) -> int:
    """Edit distance between ``a`` and ``b``, or ``cap`` once it is certainly ≥ ``cap``."""
    if abs(len(a) - len(b)) >= cap:
        return cap
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        best = i
        for j, cb in enumerate(b, 1):
            val = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb))
            cur.append(val)
            best = min(best, val)
        if best >= cap:
            return cap
        prev = cur
    return min(prev[-1], cap)


def suggest(name: str, candidates: Iterable[str]) -> str | None:
    """The spec's "did you mean" pick among ``candidates`` (``None`` when nothing is close).

    Distance must be ≤ 2 and below ``len(name)``; ties are broken alphabetically.
    """
    best: tuple[int, str] | None = None
    limit = min(2, len(name) - 1)
    if limit < 1:
        return None
    for cand in set(candidates):
        if cand == name or cand == "_":
            continue
        dist = levenshtein(name, cand, limit + 1)
        if dist <= limit and (best is None or (dist, cand) < best):
            best = (dist, cand)
    return best[1] if best else None
