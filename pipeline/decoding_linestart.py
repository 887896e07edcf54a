"""The line-start rule of constrained decoding: no line may begin with a continuation where layout
makes the newline before it a separator.

The constraint grammar (:mod:`vox_lang.constraint`) does not model L1 (no ``NL`` inside ``(``/``[``):
it lets newlines stand before and after every layout literal anywhere. So a block may go on with a
line that only continues an expression (``> 10.0``, ``== 0.0``, ``, breakiist()``, ``->(numb(3))``)
where the front end reads the newline before it as a separator (spec §1: the innermost open
bracket is ``{`` or none, the previous line does not end in an L2 literal, and the line does not
start with an L3 literal) and rejects the line. The tiny model writes such lines: in a stored
eval run (816 constrained completions, before this rule) 59 held one (89 lines: ``-> == : > ? *``
first), and none of the 59 compiled; :func:`refused_lines` finds no such line in ``examples/``,
480 generated programs or the 4,000 responses of that run's corpus.

At such a line start (:func:`LineContext.restricted`) the next token may begin only with what can
begin a line there (:func:`start_ok`): a word, a number, a string, ``( [ { }``, ``-`` (unary minus,
not ``->``/``-=``), ``.``/``|`` (L3), ``@`` (a decorator), ``//`` (a comment), a backtick (the fence)
or more whitespace. Words stay allowed even where they cannot stand (``and``...): a word token
may be the prefix of a longer name. ``routes { ... }`` bodies are free (a route line may start with
``,``); L4 needs no case (after a decorator line only ``@`` or a word is valid, both allowed).

:class:`LineContext` holds what the rule needs (the open brackets and the last significant token),
updated once per completed line by a tiny lexer (strings with escapes and ``//`` comments
skipped); the current line is lexed incrementally, for tokens that hold a newline. Only decoded
text is read, so the rule never raises. :func:`start_state` reduces the position to one small
int, part of the cached mask's key (:class:`pipeline.decoding_layout.LayoutTable`);
:class:`StartTable` classifies every token once (a few µs per step and row: 7-10 µs against 4-5
for the layout state without the rule, measured on the test tokenizer).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

#: L2 (spec §1): a NL right after one of these is dropped (so the next line is free)
L2_AFTER: Final = frozenset(
    "{ , . = += -= *= /= -> => |> | or and not + - * / % == != < > <= >= to in".split()
)

#: start states (:func:`start_state`), the layout mask's key for this rule
FREE: Final = 0  # nothing restricted
AFTER_NL: Final = 1  # the current line has content; a token's text after a newline is restricted
HERE: Final = 2  # at a restricted line start (tokens restricted from their first character)
MINUS: Final = 3  # a restricted line so far is only "-": no ">" or "=" may follow (-> -=)
SLASH: Final = 4  # a restricted line so far is only "/": only "//" (a comment) may follow

_LEX: Final = re.compile(
    r'(?P<str>"(?:[^"\\\n]|\\.)*\\?"?)|(?P<com>//[^\n]*)|(?P<ws>[ \t\r\n]+)'
    r"|(?P<word>[A-Za-z_][A-Za-z0-9_]*)|(?P<deco>@[A-Za-z_][A-Za-z0-9_.]*)|(?P<num>[0-9]+(?:\.[0-9]+)?)"
    r"|(?P<punct>==|!=|<=|>=|\+=|-=|\*=|/=|->|=>|\|>|[(){}\[\],.:?=<>+\-*/%|])|(?P<other>.)",
    re.DOTALL,
)
_OPENERS: Final = {"(": "(", "[": "[", "{": "{"}
_MATCH: Final = {")": "(", "]": "[", "}": "{"}
_LEAD_WS: Final = " \t\r\n"


def _step(stack: list[str], last: str | None, m: re.Match[str]) -> str | None:
    """Account for one lexeme ``m`` on the bracket ``stack`` (in place); the new last token.

    A ``{`` right after ``routes`` is pushed as ``R`` (a routes body, free). A closer pops to its
    opener (a stray one is ignored: the grammar and the front end deal with it)."""
    kind = m.lastgroup
    if kind in ("ws", "com"):
        return last
    tok = m.group()
    if kind == "punct" and tok in _OPENERS:
        stack.append("R" if tok == "{" and last == "routes" else tok)
    elif kind == "punct" and tok in _MATCH:
        opens = ("{", "R") if tok == "}" else (_MATCH[tok],)
        if any(s in opens for s in stack):
            while stack.pop() not in opens:
                pass
    return tok if kind in ("punct", "word") else kind


class LineContext:
    """The open brackets and the last significant token of a block's completed lines."""

    __slots__ = ("_memo", "last", "stack")

    def __init__(self, stack: tuple[str, ...] = (), last: str | None = None) -> None:
        self.stack: list[str] = list(stack)  # "(", "[", "{" or "R" (a routes body)
        self.last = last  # a punctuation/word text, or "str"/"num"/"deco"/"other"; None: no token yet
        # (prefix of the current line whose lexemes are final, stack and last after it)
        self._memo: tuple[str, list[str], str | None] = ("", list(stack), last)

    def feed(self, line: str) -> None:
        """Account for one completed line (its text, without the newline)."""
        for m in _LEX.finditer(line):
            self.last = _step(self.stack, self.last, m)
        self._memo = ("", list(self.stack), self.last)

    def restricted(self) -> bool:
        """Whether a newline here is a separator for the front end (innermost bracket ``{`` or
        none, last significant token not an L2 literal): the next line may not continue."""
        return restricted(self.stack[-1] if self.stack else None, self.last)

    def after(self, line: str) -> bool:
        """Whether a newline ending the partial ``line`` (the current line so far) now would be
        a separator. Incremental: a line only grows between calls, and only its last lexeme can
        still change, so each call lexes from the start of the previous call's last lexeme."""
        done, stack, last = self._memo
        if not line.startswith(done):
            done, stack, last = "", self.stack, self.last
        stack = list(stack)
        lexemes = list(_LEX.finditer(line, len(done)))
        for m in lexemes[:-1]:
            last = _step(stack, last, m)
        if lexemes:
            self._memo = (line[: lexemes[-1].start()], list(stack), last)
            last = _step(stack, last, lexemes[-1])
        return restricted(stack[-1] if stack else None, last)


def restricted(top: str | None, last: str | None) -> bool:
    """The rule's condition for innermost open bracket ``top`` and last significant token ``last``."""
    return top in (None, "{") and last not in L2_AFTER


def start_state(ctx: LineContext, line: str) -> int:
    """The start state (:data:`FREE` ... :data:`SLASH`) for the next token after the partial
    ``line`` (the current line so far) under ``ctx`` (the lines before it)."""
    body = line.lstrip(" \t\r")
    if not body:
        return HERE if ctx.restricted() else FREE
    if body in ("-", "/") and ctx.restricted():
        return MINUS if body == "-" else SLASH
    return AFTER_NL if ctx.after(line) else FREE


def start_ok(text: str) -> bool:
    """Whether ``text`` (leading whitespace already stripped) may begin a restricted line.

    ``""`` (only whitespace) is allowed; a lone ``/`` or ``-`` too (the next token decides:
    :data:`SLASH`, :data:`MINUS`)."""
    if not text:
        return True
    c = text[0]
    if c.isascii() and (c.isalnum() or c in '_"([{}.|@`'):
        return True
    if c == "-":
        return text[1:2] not in (">", "=")
    if c == "/":
        return text == "/" or text.startswith("//")
    return False


@dataclass(frozen=True)
class StartTable:
    """Per-token classification for the rule, built once per tokenizer (index = token id).

    Attributes:
        here: the token may stand at a restricted line start (:data:`HERE`).
        after_nl: the token's text after its first newline may stand at a restricted line start
            (``True`` for tokens without a newline, or with content before it: their effect on the
            context is not modelled, which only ever allows more).
        slash: the token, leading whitespace stripped, starts with ``/`` (a comment when allowed).
        minus_ok: the token may follow a line ``-`` (no ``->``, ``-=``).
        slash_ok: the token may follow a line ``/`` (it starts with ``/``: a comment).
    """

    here: list[bool]
    after_nl: list[bool]
    slash: list[bool]
    minus_ok: list[bool]
    slash_ok: list[bool]

    @classmethod
    def build(cls, texts: list[str]) -> StartTable:
        """The table for tokens whose decoded texts are ``texts``."""
        here, after, slash, minus, sl = [], [], [], [], []
        for text in texts:
            body = text.lstrip(_LEAD_WS)
            here.append(start_ok(body))
            first, nl, rest = text.partition("\n")
            after.append(not nl or bool(first.strip(" \t\r")) or start_ok(rest.lstrip(_LEAD_WS)))
            slash.append(body.startswith("/"))
            minus.append(not text.startswith((">", "=")))
            sl.append(text.startswith("/"))
        return cls(here, after, slash, minus, sl)

    def allowed(self, state: int, comments: bool) -> list[bool] | None:
        """The tokens allowed in ``state`` (``None``: all); ``comments``: a comment may start."""
        if state == FREE:
            return None
        if state == AFTER_NL:
            return self.after_nl
        if state == MINUS:
            return self.minus_ok
        if state == SLASH:
            return self.slash_ok
        if comments:
            return self.here
        return [h and not s for h, s in zip(self.here, self.slash)]


def refused_lines(code: str) -> list[int]:
    """1-based numbers of the lines of ``code`` (a block's body) that the rule refuses: lines
    starting, at a restricted line start, with what :func:`start_ok` does not allow. A static
    check for measuring the rule on stored completions and for tests (``[]`` for valid programs)."""
    ctx = LineContext()
    out = []
    for number, line in enumerate(code.split("\n"), 1):
        body = line.lstrip(" \t\r")
        if body and ctx.restricted() and not start_ok(body):
            out.append(number)
        ctx.feed(line)
    return out
