"""Predictive matching: a copy of the loaded grammar that tries only what can match the next token.

parsimonious tries the alternatives of an ordered choice one by one and records each attempt
in its packrat cache; most attempts fail on their first token (an expression statement is
first tried as ``let``, ``ret``, ``return``, ``while``, ``for``, ``break``, ``continue``; a
string operand as ``NAME``, ``INT``, ``FLOAT``; every operand is followed by a try of each
binary operator and suffix). :func:`build` copies the grammar's expressions into the classes
below, which know each expression's FIRST set (the token codes a match can start with) and
whether it can match nothing, and so skip, without a call, every alternative and repetition
that would fail at the next token. What they do try, they match as parsimonious does (same
order, same packrat memo), and a successful match gives the same tree: the same rule names,
positions and shape as parsimonious's :class:`~parsimonious.nodes.Node` tree, written as a
:data:`Tree` of plain tuples.

Plain tuples because of the garbage collector: a tree of Node objects (about nine tracked
objects per token: a Node and a children list per node) is walked by every collection while
an item is matched and visited, and, promoted, is what set off most full collections (a third
of the checking time of long items). A tuple holding only strings, ints, ``None`` and such
tuples is untracked by the first collection that sees it.

Only the tree is the same: a failed match records less than parsimonious's packrat cache, which
:mod:`vox_lang.parser_errors` reads for E0201/E0202, so the parser matches a failed item again
with the grammar itself (:func:`vox_lang.parser.parse_item`).

Relies on the form of the joined text (:func:`vox_lang.parser.joined_text`): token codes each
followed by one space; every literal is one code and its space (checked on load), and every
regex match ends after a space (checked here on each code).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final, cast

from parsimonious.expressions import Expression, Literal, Lookahead, OneOf, Quantifier, Regex, Sequence

#: the code standing for any token code outside the vocabulary :func:`build` was given (none
#: is expected: the lexer writes only keywords, punctuation and class names); only regexes may
#: match it
UNKNOWN: Final = "\x00unknown"

#: one node of a match: rule name (``""`` for an anonymous expression), start, end (in the
#: joined text) and children, ``None`` for a terminal (a token)
Tree = tuple[str, int, int, "tuple[Tree, ...] | None"]
#: the packrat memo of one match: ``pos * width + slot`` → tree or ``None``
Memo = dict[int, "Tree | None"]
#: position of each token code in the joined text → the code (:data:`UNKNOWN` if unknown)
Codes = dict[int, str]

class GrammarShapeError(Exception):
    """The grammar has a form predictive matching cannot copy faithfully (a bug in this package)."""


class Fast:
    """One copied expression: ``name`` as in the grammar, ``first`` (codes a match that
    consumes something can start with), ``nullable`` (it can match nothing), and ``guard``:
    the codes it can succeed at, or ``None`` when it can succeed anywhere (nullable)."""

    __slots__ = ("name", "first", "nullable", "guard", "slot", "width")

    def __init__(self, name: str) -> None:
        self.name = name
        self.first: frozenset[str] = frozenset()
        self.nullable = False
        self.guard: frozenset[str] | None = None
        self.slot = 0
        self.width = 1

    def match_at(self, text: str, pos: int, memo: Memo, codes: Codes) -> Tree | None:
        """The tree this expression matches at ``pos``, or ``None``.

        Args:
            text: the joined text.
            pos: where the match starts (the start of a code).
            memo: the packrat memo of this match (start with ``{}``).
            codes: :func:`token_codes` of ``text``.
        """
        raise NotImplementedError


class FastTerminal(Fast):
    """Base of the copied terminals (the visitor turns them into tokens)."""

    __slots__ = ()


class FastLiteral(FastTerminal):
    """A literal: one token code and its space."""

    __slots__ = ("literal", "length")

    def __init__(self, name: str, literal: str) -> None:
        super().__init__(name)
        self.literal, self.length = literal, len(literal)

    def match_at(self, text: str, pos: int, memo: Memo, codes: Codes) -> Tree | None:
        if text.startswith(self.literal, pos):
            return (self.name, pos, pos + self.length, None)
        return None


class FastRegex(FastTerminal):
    """A regex matching one whole token code and its space."""

    __slots__ = ("re",)

    def __init__(self, name: str, expr: Regex) -> None:
        super().__init__(name)
        self.re = expr.re

    def match_at(self, text: str, pos: int, memo: Memo, codes: Codes) -> Tree | None:
        m = self.re.match(text, pos)
        if m is not None:
            return (self.name, pos, m.end(), None)
        return None


class FastSequence(Fast):
    """``a b c`` (a literal member is matched in place, without a call)."""

    __slots__ = ("members", "steps")

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.members: tuple[Fast, ...] = ()
        #: each member with its literal text when it is a literal
        self.steps: tuple[tuple[Fast, str | None], ...] = ()

    def match_at(self, text: str, pos: int, memo: Memo, codes: Codes) -> Tree | None:
        guard = self.guard
        if guard is not None and codes.get(pos) not in guard:
            return None
        key = pos * self.width + self.slot
        if key in memo:
            return memo[key]
        children: list[Tree] = []
        new_pos = pos
        node: Tree | None
        for m, literal in self.steps:
            if literal is not None:
                if not text.startswith(literal, new_pos):
                    memo[key] = None
                    return None
                node = (m.name, new_pos, new_pos + len(literal), None)
            else:
                node = m.match_at(text, new_pos, memo, codes)
                if node is None:
                    memo[key] = None
                    return None
            children.append(node)
            new_pos = node[2]
        node = memo[key] = (self.name, pos, new_pos, tuple(children))
        return node


class FastOneOf(Fast):
    """``a / b / c``: only the alternatives that can succeed at the next code are tried."""

    __slots__ = ("members", "dispatch")

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.members: tuple[Fast, ...] = ()
        self.dispatch: dict[str | None, tuple[Fast, ...]] = {}

    def match_at(self, text: str, pos: int, memo: Memo, codes: Codes) -> Tree | None:
        key = pos * self.width + self.slot
        if key in memo:
            return memo[key]
        for m in self.dispatch.get(codes.get(pos), self.members):
            node = m.match_at(text, pos, memo, codes)
            if node is not None:
                node = memo[key] = (self.name, pos, node[2], (node,))
                return node
        memo[key] = None
        return None


class FastQuantifier(Fast):
    """``a?``, ``a*``, ``a+`` (parsimonious's ``Quantifier``): stops at a code ``a`` cannot take."""

    __slots__ = ("member", "min", "max")

    def __init__(self, name: str, expr: Quantifier) -> None:
        super().__init__(name)
        self.member: Fast = self
        self.min, self.max = expr.min, expr.max

    def match_at(self, text: str, pos: int, memo: Memo, codes: Codes) -> Tree | None:
        key = pos * self.width + self.slot
        if key in memo:
            return memo[key]
        member, guard = self.member, self.member.guard
        children: list[Tree] = []
        new_pos = pos
        size = len(text)
        while new_pos < size and len(children) < self.max:
            if guard is not None and codes.get(new_pos) not in guard:
                break
            node = member.match_at(text, new_pos, memo, codes)
            if node is None:
                break
            children.append(node)
            length = node[2] - node[1]
            if len(children) >= self.min and length == 0:  # don't loop forever
                break
            new_pos += length
        result = (self.name, pos, new_pos, tuple(children)) if len(children) >= self.min else None
        memo[key] = result
        return result


class FastLookahead(Fast):
    """``&a`` / ``!a``: consumes nothing."""

    __slots__ = ("member", "negative")

    def __init__(self, name: str, expr: Lookahead) -> None:
        super().__init__(name)
        self.member: Fast = self
        self.negative = bool(expr.negativity)

    def match_at(self, text: str, pos: int, memo: Memo, codes: Codes) -> Tree | None:
        node = self.member.match_at(text, pos, memo, codes)
        if (node is None) == self.negative:
            return (self.name, pos, pos, ())
        return None


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
        if isinstance(f, FastSequence):
            f.steps = tuple((m, m.literal if isinstance(m, FastLiteral) else None) for m in members)
        elif isinstance(f, (FastQuantifier, FastLookahead)):
            (f.member,) = members
    _analyse(fast, vocabulary)
    _check_no_left_recursion(fast)
    codes: list[str | None] = [*vocabulary, UNKNOWN, None]
    for slot, f in enumerate(fast):
        f.slot, f.width = slot, len(fast)
        if isinstance(f, FastOneOf):
            f.dispatch = {
                c: tuple(m for m in f.members if m.nullable or (c is not None and c in m.first)) for c in codes
            }
    return copies[id(root)]


def token_codes(text: str, vocabulary: frozenset[str]) -> Codes:
    """Position → code of every code in the joined ``text`` (:data:`UNKNOWN` for a code outside
    ``vocabulary``)."""
    codes: Codes = {}
    pos = 0
    for code in text.split(" ")[:-1]:
        codes[pos] = code if code in vocabulary else UNKNOWN
        pos += len(code) + 1
    return codes
