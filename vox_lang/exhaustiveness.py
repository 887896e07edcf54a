"""Match exhaustiveness and reachability by the usefulness algorithm (Maranget, "Warnings for
pattern matching", 2007), with witnesses printed as patterns (``Rect(_, _)``).

Pure: patterns are :class:`Pat` values and column types are opaque; the caller supplies
``ctors_of(type, heads)`` giving a column's complete constructor list, or ``None`` for an
infinite type (int, float, str, …) that only a catch-all covers.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

#: witnesses collected at most (the message lists a few missing cases, not all)
MAX_WITNESSES = 8


@dataclass(frozen=True, slots=True)
class Pat:
    """``kind``: ``"wild"``, ``"ctor"`` (``key``, ``name``, ``args``) or ``"lit"`` (``key`` = value)."""

    kind: str
    key: Hashable = None
    name: str = "_"
    args: tuple[Pat, ...] = ()

    def show(self) -> str:
        if self.kind == "ctor" and self.args:
            return f"{self.name}({', '.join(a.show() for a in self.args)})"
        return self.name


WILD = Pat("wild")


@dataclass(frozen=True, slots=True)
class Ctor:
    """One constructor of a column's type: ``key`` matches :attr:`Pat.key`; ``arg_types`` per field."""

    key: Hashable
    name: str
    arg_types: tuple[object, ...]


CtorsOf = Callable[[object, Sequence[Pat]], "list[Ctor] | None"]
Row = tuple[Pat, ...]


def _specialize(rows: list[Row], key: Hashable, arity: int) -> list[Row]:
    out = []
    for row in rows:
        head = row[0]
        if head.kind == "wild":
            out.append((WILD,) * arity + row[1:])
        elif head.key == key and head.kind != "wild":
            args = head.args if len(head.args) == arity else (WILD,) * arity
            out.append(args + row[1:])
    return out


def _specialize_all(rows: list[Row], ctors: Sequence[Ctor]) -> list[list[Row]]:
    """``[_specialize(rows, c.key, len(c.arg_types)) for c in ctors]`` in one pass over
    ``rows`` (a pass per constructor made a match over a sum of n variants O(n^2))."""
    out: list[list[Row]] = [[] for _ in ctors]
    slots: dict[Hashable, list[int]] = {}
    for k, c in enumerate(ctors):
        slots.setdefault(c.key, []).append(k)
    for row in rows:
        head = row[0]
        if head.kind == "wild":
            for k, c in enumerate(ctors):
                out[k].append((WILD,) * len(c.arg_types) + row[1:])
            continue
        for k in slots.get(head.key, ()):
            arity = len(ctors[k].arg_types)
            args = head.args if len(head.args) == arity else (WILD,) * arity
            out[k].append(args + row[1:])
    return out


def _default(rows: list[Row]) -> list[Row]:
    return [row[1:] for row in rows if row[0].kind == "wild"]


def is_useful(rows: list[Row], q: Row, types: Sequence[object], ctors_of: CtorsOf) -> bool:
    """True if some value matched by ``q`` is matched by no row of ``rows``."""
    if not q:
        return not rows
    head, rest = q[0], q[1:]
    if head.kind == "ctor":
        ctors = ctors_of(types[0], [r[0] for r in rows] + [head]) or []
        arg_types = next((c.arg_types for c in ctors if c.key == head.key), (None,) * len(head.args))
        return is_useful(
            _specialize(rows, head.key, len(head.args)), head.args + rest, list(arg_types) + list(types[1:]), ctors_of
        )
    if head.kind == "lit":
        return is_useful(_specialize(rows, head.key, 0), rest, types[1:], ctors_of)
    heads = [r[0] for r in rows]
    complete = ctors_of(types[0], heads)  # None: the type has no finite constructor set
    used = {h.key for h in heads if h.kind != "wild"}
    if complete and all(c.key in used for c in complete):
        return any(
            is_useful(sub, (WILD,) * len(c.arg_types) + rest, list(c.arg_types) + list(types[1:]), ctors_of)
            for c, sub in zip(complete, _specialize_all(rows, complete))
        )
    return is_useful(_default(rows), rest, types[1:], ctors_of)


def missing(rows: list[Row], types: Sequence[object], ctors_of: CtorsOf) -> list[Row]:
    """Pattern vectors (up to :data:`MAX_WITNESSES`) matched by no row; empty when exhaustive."""
    if not types:
        return [] if rows else [()]
    heads = [r[0] for r in rows]
    ctors = ctors_of(types[0], heads)
    used = {h.key for h in heads if h.kind != "wild"}
    out: list[Row] = []
    if ctors is not None and ctors and all(c.key in used for c in ctors):
        for c, spec in zip(ctors, _specialize_all(rows, ctors)):
            n = len(c.arg_types)
            sub = missing(spec, list(c.arg_types) + list(types[1:]), ctors_of)
            for w in sub:
                out.append((Pat("ctor", c.key, c.name, w[:n]),) + w[n:])
                if len(out) >= MAX_WITNESSES:
                    return out
        return out
    rest = missing(_default(rows), types[1:], ctors_of)
    if not rest:
        return []
    if ctors is None or not used:
        heads_out = [WILD]
    else:
        heads_out = [Pat("ctor", c.key, c.name, (WILD,) * len(c.arg_types)) for c in ctors if c.key not in used]
    for h in heads_out:
        for w in rest:
            out.append((h,) + w)
            if len(out) >= MAX_WITNESSES:
                return out
    return out


def analyze(arms: Sequence[Pat], scrutinee_type: object, ctors_of: CtorsOf) -> tuple[list[int], list[str]]:
    """Check one match.

    Returns:
        ``(unreachable, missing)``: indexes of arms no value reaches (W0101), and the missing
        cases printed as patterns (E0515; empty when exhaustive).
    """
    rows: list[Row] = []
    heads: list[Pat] = []  # rows' first patterns, as is_useful passes them to ctors_of
    unreachable = []
    # Each arm is checked against the arms above it. A full is_useful per arm scanned every
    # earlier row (a match of n literal arms was O(n^2)); instead the rows are indexed by head
    # key, and is_useful's first step is taken here, on the rows it would keep: a literal arm
    # is useful exactly when no earlier arm is a catch-all or has its key (is_useful keeps
    # those rows and stops); a constructor arm goes on with the rows of its key and the
    # catch-alls (those is_useful keeps), after the same ctors_of call. Catch-all arms take
    # the general path.
    by_key: dict[Hashable, list[int]] = {}
    wild: list[int] = []
    for i, pat in enumerate(arms):
        heads.append(pat)  # == [r[0] for r in rows] + [pat] while pat is checked
        if pat.kind == "lit":
            useful = not wild and pat.key not in by_key
        elif pat.kind == "ctor":
            ctors = ctors_of(scrutinee_type, heads) or []
            arg_types = next((c.arg_types for c in ctors if c.key == pat.key), (None,) * len(pat.args))
            kept = [rows[j] for j in sorted(by_key.get(pat.key, []) + wild)]
            useful = is_useful(_specialize(kept, pat.key, len(pat.args)), pat.args, list(arg_types), ctors_of)
        else:
            useful = is_useful(rows, (pat,), [scrutinee_type], ctors_of)
        if not useful:
            unreachable.append(i)
        rows.append((pat,))
        if pat.kind == "wild":
            wild.append(i)
        else:
            by_key.setdefault(pat.key, []).append(i)
    witnesses = missing(rows, [scrutinee_type], ctors_of)
    return unreachable, [w[0].show() for w in witnesses]
