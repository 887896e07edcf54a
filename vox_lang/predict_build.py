"""Copy a loaded grammar into the predictive classes of :mod:`vox_lang.predict`: FIRST sets,
whether each expression can match nothing, the dispatch table of each ordered choice, and the
checks that the grammar has a shape the copy matches faithfully."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

from parsimonious.expressions import Expression, Literal, Lookahead, OneOf, Quantifier, Regex, Sequence

from vox_lang.predict import (
    UNKNOWN,
    Fast,
    FastLiteral,
    FastLookahead,
    FastOneOf,
    FastQuantifier,
    FastRegex,
    FastSequence,
    FastTerminal,
)


class GrammarShapeError(Exception):
    """The grammar has a form predictive matching cannot copy faithfully (a bug in this package)."""


def _members(expr: Expression) -> tuple[Expression, ...]:
    return tuple(getattr(expr, "members", ()))


def _copy(expr: Expression) -> Fast:
    """An empty copy of ``expr`` (members and sets are filled by :func:`build`)."""
    name = expr.name
    if isinstance(expr, Literal):
        return FastLiteral(name, expr.literal)
    if isinstance(expr, Regex):
        return FastRegex(name, expr)
    if type(expr) is Sequence:
        return FastSequence(name)
    if type(expr) is OneOf:
        return FastOneOf(name)
    if type(expr) is Quantifier:
        return FastQuantifier(name, expr)
    if type(expr) is Lookahead:
        return FastLookahead(name, expr)
    raise GrammarShapeError(f"no predictive copy of {type(expr).__name__} {expr.name or expr}")


def _regex_first(expr: FastRegex, vocabulary: Iterable[str]) -> frozenset[str]:
    """The codes a match of ``expr`` can start with, and :data:`UNKNOWN` (it may match codes
    outside the vocabulary).

    A code is in when some text starting with it and its space can be matched: the ``regex``
    package's partial matching tells (it is what parsimonious compiles with; with the standard
    library's ``re`` every code is in). Each match must also end after a space, as literals do.

    Raises:
        GrammarShapeError: a match of nothing, or one that stops inside a token.
    """
    first = {UNKNOWN}
    pattern = cast(Any, expr.re)
    for code in vocabulary:
        try:
            prefix = pattern.match(code + " ", partial=True)
        except TypeError:  # the standard library's re: no partial matching
            return frozenset(vocabulary) | first
        if prefix is None:
            continue
        first.add(code)
        probe = code + " EOI "
        whole = pattern.match(probe)
        if whole is not None and (whole.end() == 0 or probe[whole.end() - 1] != " "):
            raise GrammarShapeError(f"regex {expr.re.pattern!r} matches nothing or part of a token in {probe!r}")
    return frozenset(first)


def _analyse(fast: list[Fast], vocabulary: frozenset[str]) -> None:
    """Fill ``first``, ``nullable`` and ``guard`` of every expression (a fixpoint)."""
    for f in fast:
        if isinstance(f, FastLiteral):
            f.first = frozenset({f.literal[:-1]})
        elif isinstance(f, FastRegex):
            f.first = _regex_first(f, vocabulary)
    changed = True
    while changed:
        changed = False
        for f in fast:
            if isinstance(f, FastTerminal):
                continue
            first, nullable = set(f.first), f.nullable
            if isinstance(f, FastSequence):
                nullable = True
                for m in f.members:
                    first |= m.first
                    if not m.nullable:
                        nullable = False
                        break
            elif isinstance(f, FastOneOf):
                for m in f.members:
                    first |= m.first
                    nullable = nullable or m.nullable
            elif isinstance(f, FastQuantifier):
                first |= f.member.first
                nullable = f.min == 0 or f.member.nullable
            else:  # a lookahead consumes nothing: it may succeed at any code
                nullable = True
            if frozenset(first) != f.first or nullable != f.nullable:
                f.first, f.nullable, changed = frozenset(first), nullable, True
    for f in fast:
        f.guard = None if f.nullable else f.first


def _check_no_left_recursion(fast: list[Fast]) -> None:
    """parsimonious raises on a rule that calls itself at the same position; this copy keeps no
    such guard, so the grammar must have no such rule."""
    def same_position(f: Fast) -> tuple[Fast, ...]:
        if isinstance(f, FastSequence):
            out = []
            for m in f.members:
                out.append(m)
                if not m.nullable:
                    break
            return tuple(out)
        if isinstance(f, FastOneOf):
            return f.members
        if isinstance(f, (FastQuantifier, FastLookahead)):
            return (f.member,)
        return ()

    state: dict[int, int] = {}  # 1: on the current path, 2: done
    for root in fast:
        if id(root) in state:
            continue
        stack = [(root, iter(same_position(root)))]
        state[id(root)] = 1
        while stack:
            f, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[id(f)] = 2
                stack.pop()
            elif state.get(id(nxt)) == 1:
                raise GrammarShapeError(f"left recursion through {nxt.name or type(nxt).__name__}")
            elif id(nxt) not in state:
                state[id(nxt)] = 1
                stack.append((nxt, iter(same_position(nxt))))


def build(root: Expression, vocabulary: frozenset[str]) -> Fast:
    """The predictive copy of ``root`` and every expression it reaches.

    Args:
        root: a rule of a loaded grammar (literals already carrying their space).
        vocabulary: every token code the joined text can hold (``EOI`` included).

    Raises:
        GrammarShapeError: an expression kind with no copy, a regex that can match part of a
            token or several, or left recursion.
    """
    copies: dict[int, Fast] = {}
    order: list[Expression] = []
    stack = [root]
    while stack:
        e = stack.pop()
        if id(e) in copies:
            continue
        copies[id(e)] = _copy(e)
        order.append(e)
        stack.extend(reversed(_members(e)))
    fast = [copies[id(e)] for e in order]
    for e, f in zip(order, fast):
        members = tuple(copies[id(m)] for m in _members(e))
        if isinstance(f, (FastSequence, FastOneOf)):
            f.members = members
        if isinstance(f, (FastQuantifier, FastLookahead)):
            (f.member,) = members
    _analyse(fast, vocabulary)
    _check_no_left_recursion(fast)
    codes: list[str | None] = [*vocabulary, UNKNOWN, None]
    for slot, f in enumerate(fast):
        f.slot, f.width = slot, len(fast)
        if isinstance(f, FastSequence):
            f.steps = tuple((m, *_inline(m)) for m in f.members)
        if isinstance(f, FastOneOf):
            f.dispatch = {
                c: tuple(m for m in f.members if m.nullable or (c is not None and c in m.first)) for c in codes
            }
    return copies[id(root)]


def _inline(m: Fast) -> tuple[str | None, frozenset[str] | None]:
    """How a sequence matches its member ``m`` without a call: a literal's text, and for a
    repetition that may be empty (``x*``, ``x?``), the codes its item can start with (at any
    other code it matches nothing)."""
    if isinstance(m, FastLiteral):
        return m.literal, None
    if isinstance(m, FastQuantifier) and m.min == 0:
        return None, m.member.guard
    return None, None
