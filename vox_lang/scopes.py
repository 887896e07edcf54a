"""Lexical scopes for name resolution (spec §3) and "did you mean" suggestions.

Values and types are separate namespaces. Scopes nest prelude → module → function → block →
arm/loop; lookups walk outwards. A suggestion is the in-scope name of the same namespace at the
least Levenshtein distance, if that is ≤ 2 and below the name's length; ties go alphabetically
(:mod:`vox_lang.suggest`; :meth:`Scope.suggest` looks it up through one index per scope).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from itertools import islice

from vox_lang.suggest import SuggestIndex, levenshtein, limit, suggest, suggest_staged

__all__ = ["Scope", "levenshtein", "suggest"]


class Scope:
    """One scope: ``values`` and ``types`` map names to definition ids.

    Attributes:
        kind: ``prelude``, ``module``, ``function``, ``block``, ``arm`` or ``loop``.
        parent: the enclosing scope (``None`` for the prelude).
    """

    __slots__ = ("values", "types", "parent", "kind", "_indexes")

    def __init__(self, kind: str, parent: Scope | None = None) -> None:
        self.kind = kind
        self.parent = parent
        self.values: dict[str, int] = {}
        self.types: dict[str, int] = {}
        self._indexes: dict[bool, tuple[SuggestIndex, int]] = {}  # types? -> (index, names indexed)

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

    def suggest(self, name: str, types: bool = False, visible: Callable[[int], bool] | None = None) -> str | None:
        """``suggest(name, self.names(types, visible))``, without a distance per visible name.

        Each scope of the chain keeps a :class:`~vox_lang.suggest.SuggestIndex` of its table,
        built on the first lookup and extended with the names bound since (tables only grow:
        names are added, never removed), so a lookup costs about O(len(name) ** 2) probes per
        scope plus one distance per close name. ``visible`` is applied to the close names only.
        """
        if limit(name) < 1:
            return None
        indexed: list[tuple[dict[str, int], SuggestIndex]] = []
        for scope in self.chain():
            names = scope.types if types else scope.values
            if names:
                indexed.append((names, scope._index(types, names)))

        def close(k: int) -> set[str]:
            out: set[str] = set()
            for table, index in indexed:
                for cand in index.candidates(name, k):
                    if visible is None or visible(table[cand]):
                        out.add(cand)
            return out

        return suggest_staged(name, close)

    def _index(self, types: bool, table: dict[str, int]) -> SuggestIndex:
        index, done = self._indexes.get(types) or (SuggestIndex(), 0)
        if len(table) < done:  # not expected (tables only grow): start again
            index, done = SuggestIndex(), 0
        if len(table) > done:
            # dicts keep insertion order: the names bound since are the last ones
            for name in islice(reversed(table), len(table) - done):
                index.add(name)
            self._indexes[types] = (index, len(table))
        return index
