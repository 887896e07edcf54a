"""Line-level retired forms (spec §2 "Retired forms"), applied to the raw token stream.

E0301 colon blocks (the header line and its more-indented lines are skipped), E0302 ``state``
fields (line skipped) and E0303 retired decorators (the decorator is ignored). Each is
reported at its first token; the tokens removed here are never parsed.
"""

from __future__ import annotations

from typing import Final

from vox_lang import codes
from vox_lang.decorators import RETIRED_DECORATORS
from vox_lang.diagnostics import DiagnosticSink
from vox_lang.lexer import CLOSERS, OPENERS, Token, TokenKind, line_indent

#: words that start an E0301 colon-block header
COLON_HEADS: Final = frozenset(
    "fn pub async actor workflow activity type on if else while for match".split()
)


def _physical_lines(tokens: list[Token]) -> list[list[Token]]:
    """Split raw tokens into physical lines; each line keeps its trailing ``\\n`` NL token."""
    lines: list[list[Token]] = [[]]
    for tok in tokens:
        lines[-1].append(tok)
        if tok.kind is TokenKind.NL and tok.text == "\n":
            lines.append([])
    return lines


class _Open:
    """One open bracket of a persistent bracket stack (mismatches are layout's business).

    A stack is its top :class:`_Open` (``None`` when empty); each one knows the nearest open
    bracket of each kind beneath it, so closing a bracket, asking whether a ``(`` is open, and
    saving or restoring the stack each take constant time however deep the stack is.
    """

    __slots__ = ("opener", "below", "under")

    def __init__(self, opener: str, below: _Open | None) -> None:
        self.opener = opener
        self.below = below
        #: opener text → the nearest open bracket of that kind under this one
        self.under: dict[str, _Open] = {}
        if below is not None:
            self.under = dict(below.under)
            self.under[below.opener] = below


def _nearest(top: _Open | None, opener: str) -> _Open | None:
    """The topmost open bracket ``opener`` of the stack ``top``, if any."""
    if top is None or top.opener == opener:
        return top
    return top.under.get(opener)


def _track(top: _Open | None, tok: Token) -> _Open | None:
    """The bracket stack after ``tok``: an opener is pushed; a closer pops down to and including
    the nearest opener of its kind (and is ignored when none is open)."""
    if tok.kind is not TokenKind.PUNCT:
        return top
    if tok.text in OPENERS:
        return _Open(tok.text, top)
    if tok.text in CLOSERS:
        match = _nearest(top, CLOSERS[tok.text])
        if match is not None:
            return match.below
    return top


def _is_state_line(body: list[Token]) -> bool:
    return (
        len(body) >= 3
        and body[0].kind is TokenKind.NAME
        and body[0].text == "state"
        and body[1].kind is TokenKind.NAME
        and body[2].text == ":"
    )


def strip_retired_lines(text: str, tokens: list[Token], sink: DiagnosticSink) -> list[Token]:
    """Report E0301/E0302/E0303 and return the tokens that remain to be parsed.

    Args:
        text: the module text (for indentation).
        tokens: raw tokens from :func:`vox_lang.lexer.scan`.
        sink: where diagnostics go.
    """
    if not _may_retire(text, tokens):
        return _drop_retired_decorators(tokens, sink)
    out: list[Token] = []
    stack: _Open | None = None
    skip_indent: int | None = None  # inside an E0301 block: lines indented more than this
    open_state = 0  # an E0302 line left brackets open: keep skipping until they close
    for line in _physical_lines(tokens):
        body = [t for t in line if t.kind is not TokenKind.NL or t.text != "\n"]
        nl = line[-1:] if line and line[-1].text == "\n" and line[-1].kind is TokenKind.NL else []
        if not body:
            out.extend(nl)
            continue
        line_start = text.rfind("\n", 0, body[0].span.start) + 1
        indent = line_indent(text, line_start)
        if skip_indent is not None:
            if indent > skip_indent:
                out.extend(nl)
                continue
            skip_indent = None
        if open_state:
            open_state = _depth_after(body, open_state)
            out.extend(nl)
            continue
        if _is_state_line(body):
            sink.report(codes.E0302, body[0].span)
            open_state = _depth_after(body, 0)
            out.extend(nl)
            continue
        saved = stack
        for tok in body[:-1]:
            stack = _track(stack, tok)
        last = body[-1]
        if (
            body[0].text in COLON_HEADS
            and body[0].kind is TokenKind.KEYWORD
            and last.kind is TokenKind.PUNCT
            and last.text == ":"
            and _nearest(stack, "(") is None
            and _nearest(stack, "[") is None
        ):
            sink.report(codes.E0301, last.span, kw=body[0].text)
            stack = saved
            skip_indent = indent
            out.extend(nl)
            continue
        stack = _track(stack, last)
        out.extend(line)
    return _drop_retired_decorators(out, sink)


def _may_retire(text: str, tokens: list[Token]) -> bool:
    """False when no line can be an E0301 header (one ends with ``:``) or an E0302 field (the
    text has no ``state``): then :func:`strip_retired_lines` keeps every token, and its
    line-by-line pass (a third of the lexical phase) is skipped."""
    if "state" in text:
        return True
    n = len(tokens)
    for i, tok in enumerate(tokens):
        if tok.code == ":" and tok.kind is TokenKind.PUNCT:
            nxt = tokens[i + 1] if i + 1 < n else None
            if nxt is None or (nxt.kind is TokenKind.NL and nxt.text == "\n"):
                return True
    return False


def _depth_after(body: list[Token], depth: int) -> int:
    for tok in body:
        if tok.kind is TokenKind.PUNCT:
            if tok.text in OPENERS:
                depth += 1
            elif tok.text in CLOSERS and depth > 0:
                depth -= 1
    return depth


def _drop_retired_decorators(tokens: list[Token], sink: DiagnosticSink) -> list[Token]:
    """E0303: report each retired decorator and drop it with its ``(…)`` or string argument."""
    if not any(t.kind is TokenKind.DECO for t in tokens):
        return tokens
    out: list[Token] = []
    i = 0
    n = len(tokens)
    while i < n:
        tok = tokens[i]
        name = tok.text[1:]
        if tok.kind is not TokenKind.DECO or name not in RETIRED_DECORATORS:
            out.append(tok)
            i += 1
            continue
        sink.report(codes.E0303, tok.span, name=name, hint=RETIRED_DECORATORS[name])
        i += 1
        if i < n and tokens[i].kind is TokenKind.STRING:
            i += 1
        elif i < n and tokens[i].text == "(" and tokens[i].kind is TokenKind.PUNCT:
            depth = 0
            while i < n:
                t = tokens[i]
                if t.kind is TokenKind.PUNCT and t.text in OPENERS:
                    depth += 1
                elif t.kind is TokenKind.PUNCT and t.text in CLOSERS:
                    depth -= 1
                i += 1
                if depth == 0:
                    break
    return out
