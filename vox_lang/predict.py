"""Predictive matching: a copy of the loaded grammar that tries only what can match the next token.

parsimonious tries the alternatives of an ordered choice one by one and records each attempt
in its packrat cache; most attempts fail on their first token (an expression statement is
first tried as ``let``, ``ret``, ``return``, ``while``, ``for``, ``break``, ``continue``; a
string operand as ``NAME``, ``INT``, ``FLOAT``; every operand is followed by a try of each
binary operator and suffix). :func:`vox_lang.predict_build.build` copies the grammar's
expressions into the classes below, which know each expression's FIRST set (the token codes
a match can start with) and whether it can match nothing, and so skip, without a call, every
alternative and repetition that would fail at the next token. What they do try, they match as
parsimonious does (same order, same packrat memo), and a successful match gives the same
tree: the rule names, positions and shape of parsimonious's :class:`~parsimonious.nodes.Node`
tree, written as a :data:`Tree` of plain tuples.

Plain tuples because of the garbage collector: a tree of Node objects (about nine tracked
objects per token: a Node and a children list per node) is walked by every collection while
an item is matched and visited and, promoted, set off most full collections (a third of the
checking time of long items). A tuple holding only strings, ints, ``None`` and untracked
tuples is untracked by a collection that sees it after its items. Every tuple a match makes
also goes into its ``made`` list (older than all of them), which keeps them in the
collector's list in the order they were made, children first, so one collection untracks a
whole tree (else a tuple held only by its parent is moved behind it, and a tree is untracked
one level per collection, most of it after being promoted).

Only the tree is the same: a failed match records less than parsimonious's packrat cache, which
:mod:`vox_lang.parser_errors` reads for E0201/E0202, so the parser matches a failed item again
with the grammar itself (:func:`vox_lang.parser.parse_item`).

Relies on the form of the joined text (:func:`vox_lang.parser.joined_text`): token codes each
followed by one space; every literal is one code and its space (checked on load), and every
regex match ends after a space (checked by :func:`~vox_lang.predict_build.build` on each code).
"""

from __future__ import annotations

from typing import Final

from parsimonious.expressions import Lookahead, Quantifier, Regex

#: the code standing for any token code outside the vocabulary the copy was built for (none
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
#: every tuple one match made, in order (see the module docstring)
Made = list[object]


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

    def match_at(self, text: str, pos: int, memo: Memo, codes: Codes, made: Made) -> Tree | None:
        """The tree this expression matches at ``pos``, or ``None``.

        Args:
            text: the joined text.
            pos: where the match starts (the start of a code).
            memo: the packrat memo of this match (start with ``{}``).
            codes: :func:`token_codes` of ``text``.
            made: the tuples this match made (start with ``[]``).
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

    def match_at(self, text: str, pos: int, memo: Memo, codes: Codes, made: Made) -> Tree | None:
        if text.startswith(self.literal, pos):
            node = (self.name, pos, pos + self.length, None)
            made.append(node)
            return node
        return None


class FastRegex(FastTerminal):
    """A regex matching one whole token code and its space."""

    __slots__ = ("re",)

    def __init__(self, name: str, expr: Regex) -> None:
        super().__init__(name)
        self.re = expr.re

    def match_at(self, text: str, pos: int, memo: Memo, codes: Codes, made: Made) -> Tree | None:
        m = self.re.match(text, pos)
        if m is not None:
            node = (self.name, pos, m.end(), None)
            made.append(node)
            return node
        return None


class FastSequence(Fast):
    """``a b c`` (a literal member, and a repetition whose item cannot start at the next code,
    are matched in place, without a call)."""

    __slots__ = ("members", "steps")

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.members: tuple[Fast, ...] = ()
        #: each member, its text when it is a literal, and when it is a repetition that may be
        #: empty, the codes its item can start with (see predict_build._inline)
        self.steps: tuple[tuple[Fast, str | None, frozenset[str] | None], ...] = ()

    def match_at(self, text: str, pos: int, memo: Memo, codes: Codes, made: Made) -> Tree | None:
        guard = self.guard
        if guard is not None and codes.get(pos) not in guard:
            return None
        key = pos * self.width + self.slot
        if key in memo:
            return memo[key]
        children: list[Tree] = []
        new_pos = pos
        node: Tree | None
        for m, literal, item_first in self.steps:
            if literal is not None:
                if not text.startswith(literal, new_pos):
                    memo[key] = None
                    return None
                node = (m.name, new_pos, new_pos + len(literal), None)
                made.append(node)
            elif item_first is not None and codes.get(new_pos) not in item_first:
                node = (m.name, new_pos, new_pos, ())  # what the repetition matches here
                made.append(node)
            else:
                node = m.match_at(text, new_pos, memo, codes, made)
                if node is None:
                    memo[key] = None
                    return None
            children.append(node)
            new_pos = node[2]
        kids = tuple(children)
        node = memo[key] = (self.name, pos, new_pos, kids)
        made.append(kids)
        made.append(node)
        return node


class FastOneOf(Fast):
    """``a / b / c``: only the alternatives that can succeed at the next code are tried."""

    __slots__ = ("members", "dispatch")

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.members: tuple[Fast, ...] = ()
        #: code -> the alternatives that can succeed there, in order
        self.dispatch: dict[str | None, tuple[Fast, ...]] = {}

    def match_at(self, text: str, pos: int, memo: Memo, codes: Codes, made: Made) -> Tree | None:
        key = pos * self.width + self.slot
        if key in memo:
            return memo[key]
        for m in self.dispatch.get(codes.get(pos), self.members):
            node = m.match_at(text, pos, memo, codes, made)
            if node is not None:
                kids = (node,)
                node = memo[key] = (self.name, pos, node[2], kids)
                made.append(kids)
                made.append(node)
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

    def match_at(self, text: str, pos: int, memo: Memo, codes: Codes, made: Made) -> Tree | None:
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
            node = member.match_at(text, new_pos, memo, codes, made)
            if node is None:
                break
            children.append(node)
            length = node[2] - node[1]
            if len(children) >= self.min and length == 0:  # don't loop forever
                break
            new_pos += length
        result = None
        if len(children) >= self.min:
            kids = tuple(children)
            result = (self.name, pos, new_pos, kids)
            made.append(kids)
            made.append(result)
        memo[key] = result
        return result


class FastLookahead(Fast):
    """``&a`` / ``!a``: consumes nothing."""

    __slots__ = ("member", "negative")

    def __init__(self, name: str, expr: Lookahead) -> None:
        super().__init__(name)
        self.member: Fast = self
        self.negative = bool(expr.negativity)

    def match_at(self, text: str, pos: int, memo: Memo, codes: Codes, made: Made) -> Tree | None:
        node = self.member.match_at(text, pos, memo, codes, made)
        if (node is None) == self.negative:
            found = (self.name, pos, pos, ())
            made.append(found)
            return found
        return None


def token_codes(text: str, vocabulary: frozenset[str]) -> Codes:
    """Position → code of every code in the joined ``text`` (:data:`UNKNOWN` for a code outside
    ``vocabulary``)."""
    codes: Codes = {}
    pos = 0
    for code in text.split(" ")[:-1]:
        codes[pos] = code if code in vocabulary else UNKNOWN
        pos += len(code) + 1
    return codes
