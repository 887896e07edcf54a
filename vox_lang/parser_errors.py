"""E0201/E0202 for an item that does not parse: the furthest token reached and up to five
tokens the grammar could have taken there.

The packrat cache of the failed match records every terminal tried at every position, so
the furthest failed terminal position is the furthest token reached and the terminals
failing there are what was expected. They are listed closers and separators first, then in
grammar order, with operators and other continuations of a complete operand last.
"""

from __future__ import annotations

from typing import Any, Final

from parsimonious.expressions import Compound, Expression, Literal, Regex, Sequence
from parsimonious.grammar import Grammar
from parsimonious.nodes import Node

from vox_lang import codes
from vox_lang.diagnostics import DiagnosticSink
from vox_lang.layout import Item
from vox_lang.lexer import TokenKind
from vox_lang.source import Span

MAX_EXPECTED: Final = 5
#: what a failed match says: the furthest position a terminal failed at, the (rank, text) of
#: the terminals failing there, and where the item's match stopped short (``None``: nowhere)
Outcome = tuple[int, tuple[tuple[int, str], ...], int | None]
NEWLINE: Final = "<newline>"
END: Final = "<end of input>"

_CLASS_DISPLAY: Final = {
    "NAME": "<name>", "INT": "<int>", "FLOAT": "<float>", "STRING": "<string>",
    "DECO": "<decorator>", "DECO_ARGS": "<decorator arguments>", "NL": NEWLINE,
}
_FIRST: Final = frozenset({"`)`", "`]`", "`}`", "`,`", NEWLINE, END})
#: rules whose first terminal continues an already complete operand
_CONTINUATIONS: Final = ("suffix_start", "call", "call_nb", "member", "index", "try", "binop", "children")
#: what the regex terminals stand for (other regexes are names)
_REGEX_DISPLAY: Final = {
    "binop": tuple(f"`{op}`" for op in "|> or and == != <= >= < > + - * / %".split()),
    "suffix_start": ("`(`", "`.`", "`[`", "`?`"),
    "raw_atom": ("<token>",),
}


def _display(expr: Expression) -> tuple[str, ...]:
    if isinstance(expr, Literal):
        code = expr.literal.strip()
        return (_CLASS_DISPLAY.get(code, f"`{code}`"),)
    return _REGEX_DISPLAY.get(expr.name, ("<name>",))  # WORD / binder


def format_list(items: list[str]) -> str:
    """``a``, ``a or b``, ``a, b or c``."""
    if len(items) == 1:
        return items[0]
    return ", ".join(items[:-1]) + " or " + items[-1]


class Expectations:
    """Terminal metadata of one loaded grammar, used to phrase E0201/E0202."""

    def __init__(self, grammar: Grammar) -> None:
        order: dict[int, int] = {}
        self.terminals: dict[int, Expression] = {}
        seen: set[int] = set()
        stack: list[Expression] = [grammar["module"]]
        while stack:  # depth-first, in grammar order
            e = stack.pop()
            if id(e) in seen:
                continue
            seen.add(id(e))
            if isinstance(e, (Literal, Regex)):
                order[id(e)] = len(order)
                self.terminals[id(e)] = e
            elif isinstance(e, Compound):
                stack.extend(reversed(e.members))
        #: grammar order of each terminal (ties in :meth:`report` keep this order)
        self.order = order
        self.rank: dict[int, int] = dict(order)
        for i, name in enumerate(_CONTINUATIONS):
            e = grammar[name]
            while isinstance(e, Sequence):
                e = e.members[0]
            self.rank[id(e)] = 100_000 + i

    def expected_at(self, cache: dict[int, dict[int, Any]]) -> tuple[int, list[tuple[int, str]]]:
        """Furthest position where a terminal failed, and the failing terminals' (rank, text)."""
        far = -1
        found: list[int] = []
        terminals = self.terminals
        # only the expressions the match tried (the cache's keys), not every terminal of the
        # grammar: a failed one-line item tries a few dozen of its hundreds of terminals
        for eid, tried in cache.items():
            if eid not in terminals:
                continue
            for pos, node in tried.items():
                if node is None:
                    if pos > far:
                        far, found = pos, [eid]
                    elif pos == far:
                        found.append(eid)
        found.sort(key=self.order.__getitem__)
        ranked = [
            (self.rank[eid] * 100 + i, text)
            for eid in found
            for i, text in enumerate(_display(self.terminals[eid]))
        ]
        return far, ranked

    def outcome(self, cache: dict[int, dict[int, Any]], node: Node | None) -> Outcome:
        """What a failed match of an item says (:data:`Outcome`), from its packrat ``cache``
        and the tree it stopped short with (``None``: no match at all). A function of the
        joined text only, so items of one shape can share it."""
        far, ranked = self.expected_at(cache)
        return far, tuple(ranked), None if node is None else node.end

    def report(self, item: Item, index: dict[int, int], outcome: Outcome, sink: DiagnosticSink) -> None:
        """Report the E0201/E0202 of an item whose match failed or stopped short (``outcome``)."""
        far, expected, node_end = outcome
        ranked = list(expected)
        at_end_text = NEWLINE if item.end is not None else END
        if node_end is not None and node_end >= far:
            if node_end > far:
                far, ranked = node_end, []
            ranked.append((-1, at_end_text))  # the item could have ended here
        best: dict[str, int] = {}
        for rank, shown in ranked:
            if shown == NEWLINE and index.get(far) == len(item.tokens) and item.end is None:
                shown = END
            r = -1 if shown in _FIRST else rank
            best[shown] = min(best.get(shown, r), r)
        names = sorted(best, key=best.__getitem__)[:MAX_EXPECTED]
        listed = format_list(names) if names else at_end_text
        k = index.get(far, len(item.tokens))
        if k < len(item.tokens):
            tok = item.tokens[k]
            shown_tok = sink.source.text[tok.span.start : tok.span.end]
            if tok.kind is TokenKind.NL:
                shown_tok = NEWLINE if tok.text == "\n" else tok.text
            sink.report(codes.E0201, tok.span, tok=_clip(shown_tok), list=listed)
        elif item.end is not None:
            end = item.end
            shown_end = NEWLINE if end.text == "\n" else end.text
            sink.report(codes.E0201, end.span, tok=shown_end, list=listed)
        else:
            n = len(sink.source.text)
            sink.report(codes.E0202, Span(n, n), list=listed)


def _clip(text: str, width: int = 24) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
