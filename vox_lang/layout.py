"""Bracket matching, layout rules L1–L4 and item splitting (spec §1, §2, §9).

:func:`tokenize` is the whole lexical phase: scan (:mod:`vox_lang.lexer`), drop line-level
retired forms (:mod:`vox_lang.retired`), match brackets (E0203/E0204), apply L1–L4, and cut
the stream into items (token runs between ``NL`` at bracket depth 0), each marked with
whether it may be parsed and whether it nests too deeply (E0206).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Final

from vox_lang import codes
from vox_lang.contextual import retag
from vox_lang.diagnostics import DiagnosticSink
from vox_lang.lexer import CLOSERS, OPENERS, Token, TokenKind, scan
from vox_lang.retired import strip_retired_lines
from vox_lang.source import SourceFile

#: L2: a NL right after one of these is dropped
L2_AFTER: Final = frozenset(
    "{ , . = += -= *= /= -> => |> | or and not + - * / % == != < > <= >= to in".split()
)
#: L3: a NL right before one of these is dropped
L3_BEFORE: Final = frozenset(("else", "|", "|>", "."))
#: E0206: deepest legal nesting (brackets, blocks, prefix operators)
MAX_DEPTH: Final = 200
_DOT: Final = frozenset((".",))
_PUNCT, _KEYWORD = TokenKind.PUNCT, TokenKind.KEYWORD


@dataclass(frozen=True, slots=True)
class Item:
    """One item: ``tokens`` (no NL at either end) and the ``NL`` token after it (``None`` at
    end of input). ``parse`` is False when the item holds an E01xx/E0203/E0204/E0305 error
    or nests too deeply (already reported); ``depth`` is its deepest nesting level."""

    tokens: tuple[Token, ...]
    end: Token | None
    parse: bool
    depth: int = 0


@dataclass(frozen=True, slots=True)
class Layout:
    """Result of :func:`tokenize`: the layout-applied tokens and the items cut from them."""

    tokens: tuple[Token, ...]
    items: tuple[Item, ...]


def _is_punct(tok: Token, texts: frozenset[str] | dict[str, str]) -> bool:
    return tok.kind is TokenKind.PUNCT and tok.text in texts


class _DecoLine:
    """Tracks whether the current physical line is made only of decorators (L4)."""

    def __init__(self) -> None:
        self.all_deco = True
        self.has_tokens = False
        self.state = 0  # 0: expect DECO, 1: after DECO, 2: inside its parentheses
        self.depth = 0
        self.last_line_deco = False

    def feed(self, tok: Token) -> None:
        self.has_tokens = True
        if not self.all_deco:
            return
        if self.state == 2:
            if _is_punct(tok, OPENERS):
                self.depth += 1
            elif _is_punct(tok, CLOSERS):
                self.depth -= 1
                if self.depth == 0:
                    self.state = 0
        elif tok.kind is TokenKind.DECO:
            self.state = 1
        elif self.state == 1 and tok.kind in (TokenKind.STRING, TokenKind.DECO_ARGS):
            self.state = 0
        elif self.state == 1 and tok.kind is TokenKind.PUNCT and tok.text == "(":
            self.state, self.depth = 2, 1
        else:
            self.all_deco = False

    def newline(self) -> None:
        if self.state == 2:
            return
        if self.has_tokens:
            self.last_line_deco = self.all_deco
        self.all_deco, self.has_tokens, self.state = True, False, 0


def apply_layout(tokens: list[Token], sink: DiagnosticSink) -> tuple[list[Token], set[int], list[int]]:
    """Match brackets and apply L1–L4.

    Returns:
        ``(out, orphans, poison)``: the tokens with the NLs that survive, indices in ``out``
        of openers that were never closed (E0203 reported), and the offsets of E0203/E0204.
    """
    out: list[Token] = []
    stack: list[int] = []
    #: opener text → indices in ``out`` of the open ones of that kind (the stack, per kind), so a
    #: mismatched closer finds its opener without scanning the whole stack
    open_of: dict[str, list[int]] = {o: [] for o in OPENERS}
    orphans: set[int] = set()
    poison: list[int] = []
    pending: Token | None = None
    deco = _DecoLine()

    def keep_nl(nxt: Token | None) -> bool:
        if stack and out[stack[-1]].text != "{":
            return False  # L1
        if not out or out[-1].kind is TokenKind.NL:
            return False
        prev = out[-1]
        if prev.kind in (TokenKind.PUNCT, TokenKind.KEYWORD) and prev.text in L2_AFTER:
            after_dot = prev.kind is TokenKind.KEYWORD and len(out) > 1 and _is_punct(out[-2], _DOT)
            if not after_dot:
                return False  # L2
        if nxt is not None and nxt.kind in (TokenKind.PUNCT, TokenKind.KEYWORD) and nxt.text in L3_BEFORE:
            return False  # L3
        return not deco.last_line_deco  # L4

    for tok in tokens:
        kind = tok.kind
        if kind is TokenKind.NL:
            deco.newline()
            if pending is None:
                pending = tok
            continue
        if pending is not None:
            if keep_nl(tok):
                out.append(pending)
            pending = None
        if deco.all_deco or not deco.has_tokens:  # else feed() has nothing left to do on this line
            deco.feed(tok)
        if kind is not _PUNCT:
            out.append(tok)
            continue
        if tok.text in OPENERS:
            open_of[tok.text].append(len(out))
            stack.append(len(out))
        elif tok.text in CLOSERS:
            want = CLOSERS[tok.text]
            if not stack or out[stack[-1]].text != want:
                sink.report(codes.E0204, tok.span, close=tok.text)
                poison.append(tok.span.start)
                if not open_of[want]:
                    continue  # a stray closer is dropped
                target = open_of[want][-1]
                while stack[-1] != target:
                    _unclosed(out[stack[-1]], sink, poison)
                    open_of[out[stack[-1]].text].pop()
                    orphans.add(stack.pop())
            open_of[want].pop()
            stack.pop()
        out.append(tok)
    if pending is not None and keep_nl(None):
        out.append(pending)
    for i in stack:
        _unclosed(out[i], sink, poison)
        orphans.add(i)
    return out, orphans, poison


def _unclosed(tok: Token, sink: DiagnosticSink, poison: list[int]) -> None:
    sink.report(codes.E0203, tok.span, open=tok.text, close=OPENERS[tok.text])
    poison.append(tok.span.start)


def nesting(tokens: tuple[Token, ...] | list[Token]) -> tuple[int, Token | None]:
    """Deepest nesting level of ``tokens`` and the first opener beyond :data:`MAX_DEPTH`.

    Brackets, blocks and prefix operators count one level each; a run of prefix operators
    carries into a bracket that follows it, so ``not (not (x))`` is four levels deep.
    """
    levels: list[int] = []
    run = 0
    deepest = 0
    offender: Token | None = None
    prev: Token | None = None
    for tok in tokens:
        kind = tok.kind
        # only brackets and prefix operators nest; any other token ends a run of prefix
        # operators at level 0 (the shortcut skips most tokens: a fifth of lexing time)
        if kind is _PUNCT:
            text = tok.text
            if text in OPENERS:
                level = (levels[-1] if levels else 0) + run + 1
                levels.append(level)
                run = 0
            elif text in CLOSERS:
                if levels:
                    levels.pop()
                run = 0
                prev = tok
                continue
            elif text == "-" and not (prev and prev.ends_operand):
                run += 1
                level = (levels[-1] if levels else 0) + run
            else:
                run = 0
                prev = tok
                continue
        elif kind is _KEYWORD and tok.text == "not" and not (
            prev is not None and prev.text == "." and prev.kind is _PUNCT
        ):
            run += 1
            level = (levels[-1] if levels else 0) + run
        else:
            run = 0
            prev = tok
            continue
        if level > deepest:
            deepest = level
            if offender is None and level > MAX_DEPTH:
                offender = tok
        prev = tok
    return deepest, offender


def split_items(
    text: str, tokens: list[Token], orphans: set[int], poison: list[int], sink: DiagnosticSink
) -> list[Item]:
    """Cut ``tokens`` at NLs at bracket depth 0; mark poisoned and too-deep items (E0206)."""
    poison = sorted(poison)
    items: list[Item] = []
    depth = 0
    start = 0
    n = len(tokens)
    for i in range(n + 1):
        if i < n:
            tok = tokens[i]
            if tok.kind is TokenKind.PUNCT:
                if tok.text in OPENERS and i not in orphans:
                    depth += 1
                elif tok.text in CLOSERS:
                    depth -= 1
            if tok.kind is not TokenKind.NL or depth > 0:
                continue
        if i > start:
            body = tuple(tokens[start:i])
            end = tokens[i] if i < n else None
            region_end = end.span.start if end is not None else len(text)
            k = bisect.bisect_left(poison, body[0].span.start)
            ok = not (k < len(poison) and poison[k] <= region_end)
            level, deep = nesting(body)
            if ok and deep is not None:
                sink.report(codes.E0206, deep.span)
                ok = False
            items.append(Item(body, end, ok, level))
        start = i + 1
    return items


def tokenize(source: SourceFile, sink: DiagnosticSink) -> Layout:
    """Run the whole lexical phase over ``source``; never raises.

    E0106 diagnostics already in ``sink`` (from :func:`vox_lang.api.decode_source`) mark their
    U+FFFD characters as reported: they are not reported again but still poison their item.
    """
    reported = frozenset(d.span.start for d in sink.sorted() if d.code == codes.E0106.code)
    scanned = scan(source.text, sink, reported)
    kept = retag(source.text, strip_retired_lines(source.text, scanned.tokens, sink))
    out, orphans, poison = apply_layout(kept, sink)
    items = split_items(source.text, out, orphans, scanned.poison + poison, sink)
    return Layout(tuple(out), tuple(items))
