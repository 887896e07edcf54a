"""The "did you mean" rule (spec §3) and an index that makes each lookup cheap.

:func:`suggest` is the rule itself: among the candidates, the name at the least Levenshtein
distance, if that is ≤ 2 and below the looked-up name's length; ties go to the smaller name
(Python string order). Scanning every visible name per lookup made a file with one unknown name
per line quadratic, so callers with many names go through a :class:`SuggestIndex`: it returns,
for one looked-up name, a small superset of the names within the rule's distance, and
:func:`suggest` then picks among those exactly as it would among all of them (same name, same
tie-breaking; the index only leaves out names that could never be picked).

The index is a symmetric-delete index for names of up to :data:`SHORT` code points (every string
obtained by deleting at most :data:`MAX_DIST` code points, mapped to the names it came from: two
names within distance *k* share such a string with at most *k* deletions on each side), and a
partition index for longer names (each name cut into ``MAX_DIST + 1`` pieces, at least one of
which survives *k* ≤ ``MAX_DIST`` edits unchanged, within *k* positions of where it was), whose
size is linear in the name's length instead of quadratic.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

#: the largest distance :func:`suggest` ever accepts
MAX_DIST = 2
#: names up to this length go in the symmetric-delete part of :class:`SuggestIndex`
SHORT = 16


def limit(name: str) -> int:
    """The largest distance accepted for ``name``: ``min(2, len(name) - 1)`` (< 1: no hint)."""
    return min(MAX_DIST, len(name) - 1)


def levenshtein(a: str, b: str, cap: int = 3) -> int:
    """Edit distance between ``a`` and ``b`` (insertions, deletions, substitutions of code
    points, each 1), or ``cap`` when it is ≥ ``cap``: ``min(distance, cap)``.

    Bit-parallel (Myers/Hyyrö): O(len(b)) integer operations on ``len(a)``-bit numbers, so a
    hint's many candidate checks stay cheap.
    """
    if abs(len(a) - len(b)) >= cap:
        return cap
    if not a or not b:
        return min(len(a) + len(b), cap)
    peq: dict[str, int] = {}  # code point -> bit i set where a[i] is it
    for i, c in enumerate(a):
        peq[c] = peq.get(c, 0) | (1 << i)
    full = (1 << len(a)) - 1
    last = 1 << (len(a) - 1)
    pv, mv, score = full, 0, len(a)  # vertical +1 / -1 deltas of the current column, D[len(a)][j]
    for c in b:
        eq = peq.get(c, 0)
        xv = eq | mv
        xh = (((eq & pv) + pv) ^ pv) | eq
        ph = mv | ~(xh | pv)
        mh = pv & xh
        if ph & last:
            score += 1
        elif mh & last:
            score -= 1
        ph = (ph << 1) | 1
        mh <<= 1
        pv = (mh | ~(xv | ph)) & full
        mv = ph & xv & full
    return min(score, cap)


def suggest(name: str, candidates: Iterable[str]) -> str | None:
    """The spec's "did you mean" pick among ``candidates`` (``None`` when nothing is close).

    Distance must be ≤ 2 and below ``len(name)``; ties are broken alphabetically. ``name``
    itself and ``_`` are never picked; duplicates in ``candidates`` do not matter. Costs one
    bounded distance per distinct candidate: with many names, use :func:`suggest_staged` and a
    :class:`SuggestIndex` instead.
    """
    best: tuple[int, str] | None = None
    lim = limit(name)
    if lim < 1:
        return None
    for cand in set(candidates):
        if cand == name or cand == "_":
            continue
        dist = levenshtein(name, cand, lim + 1)
        if dist <= lim and (best is None or (dist, cand) < best):
            best = (dist, cand)
    return best[1] if best else None


def suggest_staged(name: str, candidates: Callable[[int], Iterable[str]]) -> str | None:
    """``suggest(name, every name)``, given ``candidates(k)``: a superset of the names within
    distance ``k`` of ``name`` (``k`` is 1, then 2), e.g. from :meth:`SuggestIndex.candidates`.

    The pick is the same as :func:`suggest`'s: if some name is at distance 1, the smallest such
    (all are in ``candidates(1)``, far fewer than ``candidates(2)`` in a crowded scope);
    otherwise, when the name is long enough for distance 2, the smallest name at distance ≤ 2
    (then exactly 2). Candidates are tried in name order, so each stage stops at its first
    match.
    """
    lim = limit(name)
    if lim < 1:
        return None
    for k in range(1, lim + 1):
        for cand in sorted(set(candidates(k))):
            if cand != name and cand != "_" and levenshtein(name, cand, k + 1) <= k:
                return cand
    return None


def deletions(word: str, k: int) -> set[str]:
    """Every string obtained from ``word`` by deleting at most ``k`` code points (``word`` too).

    There are O(len(word) ** k) of them; used for words of at most :data:`SHORT` + ``k``.
    """
    out = level = {word}
    for _ in range(k):
        level = {w[:i] + w[i + 1 :] for w in level for i in range(len(w))}
        out = out | level
    return out


def pieces(length: int) -> list[tuple[int, int]]:
    """``(start, size)`` of the ``MAX_DIST + 1`` consecutive pieces a name of ``length`` is
    cut into (the last ``length % 3`` pieces one longer)."""
    parts = MAX_DIST + 1
    base, rem = divmod(length, parts)
    out = []
    start = 0
    for i in range(parts):
        size = base + (1 if i >= parts - rem else 0)
        out.append((start, size))
        start += size
    return out


class SuggestIndex:
    """The names one lookup may have to compare, found in about O(len(name) ** 2) dictionary
    probes (short names) or O(len(name)) (long ones) instead of one distance per name.

    Names are only ever added. ``candidates(name, k)`` is a superset of the indexed names
    within distance ``k`` of ``name``, so ``suggest_staged(name, partial(index.candidates,
    name))`` equals ``suggest(name, all indexed names)``.
    """

    __slots__ = ("_names", "_del1", "_del2", "_pieces")

    def __init__(self, names: Iterable[str] = ()) -> None:
        self._names: set[str] = set()
        self._del1: dict[str, list[str]] = {}  # a short name, or it less one code point -> names
        self._del2: dict[str, list[str]] = {}  # a short name less two code points (not above)
        self._pieces: dict[tuple[int, int, str], list[str]] = {}  # (length, piece no, text) -> long names
        for name in names:
            self.add(name)

    def __len__(self) -> int:
        return len(self._names)

    def add(self, name: str) -> None:
        """Index ``name`` (again: no effect). Costs O(len(name) ** 2) keys up to :data:`SHORT`
        code points, 3 keys beyond."""
        if name in self._names:
            return
        self._names.add(name)
        if len(name) <= SHORT:
            one = deletions(name, 1)
            for key in one:
                self._del1.setdefault(key, []).append(name)
            for key in deletions(name, MAX_DIST) - one:
                self._del2.setdefault(key, []).append(name)
        else:
            for i, (start, size) in enumerate(pieces(len(name))):
                self._pieces.setdefault((len(name), i, name[start : start + size]), []).append(name)

    def candidates(self, name: str, k: int) -> set[str]:
        """Indexed names that may be within distance ``k`` (0 to :data:`MAX_DIST`) of ``name``:
        every one that is, and some that are not.

        Raises:
            ValueError: ``k`` is out of range.
        """
        if not 0 <= k <= MAX_DIST:
            raise ValueError(f"distance {k} is not within 0..{MAX_DIST}")
        out: set[str] = set()
        m = len(name)
        if m - k <= SHORT and (self._del1 or self._del2):
            tables = (self._del1,) if k <= 1 else (self._del1, self._del2)
            for key in deletions(name, k):
                for table in tables:
                    hit = table.get(key)
                    if hit:
                        out.update(hit)
        if self._pieces and m + k > SHORT:
            # k edits leave at least (pieces - k) pieces of a long name unchanged, each within k
            # positions of where it was
            need = MAX_DIST + 1 - k
            for length in range(max(SHORT + 1, m - k), m + k + 1):
                count: dict[str, int] = {}
                for i, (start, size) in enumerate(pieces(length)):
                    matched: set[str] = set()
                    for at in range(max(0, start - k), min(m - size, start + k) + 1):
                        hit = self._pieces.get((length, i, name[at : at + size]))
                        if hit:
                            matched.update(hit)
                    if need <= 1:
                        out.update(matched)
                    else:
                        for cand in matched:
                            count[cand] = count.get(cand, 0) + 1
                out.update(cand for cand, n in count.items() if n >= need)
        return out

    def suggest(self, name: str) -> str | None:
        """``suggest(name, every indexed name)``."""
        return suggest_staged(name, lambda k: self.candidates(name, k))


class IndexCache:
    """One :class:`SuggestIndex` per name collection that never changes (a record's field
    tuple, an actor's handler table, a built-in method table), keyed by the collection's
    identity; the cache holds the collection, so its identity is not reused meanwhile."""

    __slots__ = ("_by_id",)

    def __init__(self) -> None:
        self._by_id: dict[int, tuple[object, SuggestIndex]] = {}

    def index(self, owner: object, names: Iterable[str]) -> SuggestIndex:
        """The index of ``names``, built on the first call for ``owner`` (``names`` is read
        only then: it must be what ``owner`` holds, and ``owner`` must not change)."""
        hit = self._by_id.get(id(owner))
        if hit is None:
            hit = (owner, SuggestIndex(names))
            self._by_id[id(owner)] = hit
        return hit[1]

    def suggest(self, name: str, *owned: tuple[object, Iterable[str]]) -> str | None:
        """:func:`suggest` among the names of every ``(owner, names)`` pair, through their indexes."""
        if limit(name) < 1:
            return None
        indexes = [self.index(owner, names) for owner, names in owned]
        return suggest_staged(name, lambda k: (c for index in indexes for c in index.candidates(name, k)))
