"""Token retagging for the forms of spec §10 that the grammar cannot tell apart by token class.

Runs on the raw token stream after line-level retired forms are dropped and before layout:

* **U9 opaque decorator arguments.** The balanced ``( … )`` after a decorator whose arguments
  are not parsed (every decorator except :data:`~vox_lang.decorators.ARG_DECORATORS`) becomes
  one ``DECO_ARGS`` token, so nothing inside is parsed, resolved or reported.
* **U6 contextual words.** ``component`` as the first token of an item followed by
  ``NAME (`` gets the grammar code ``component``; inside that declaration's braces, ``view``
  at the start of a line (or right after ``{``) and followed by ``:`` gets the code ``view``.
  Anywhere else both stay plain names.

An unbalanced run is left alone, so layout still reports its brackets (E0203/E0204).
"""

from __future__ import annotations

from typing import Final

from vox_lang.decorators import ARG_DECORATORS
from vox_lang.lexer import CLOSERS, OPENERS, Token, TokenKind
from vox_lang.source import Span

_NL, _NAME, _PUNCT, _DECO, _STRING = TokenKind.NL, TokenKind.NAME, TokenKind.PUNCT, TokenKind.DECO, TokenKind.STRING
_DECO_ARGS: Final = TokenKind.DECO_ARGS


def _is(tok: Token | None, text: str) -> bool:
    return tok is not None and tok.kind is _PUNCT and tok.text == text


def balanced_ends(tokens: list[Token]) -> dict[int, int]:
    """Where each properly closed bracket run of ``tokens`` ends, in one pass.

    Returns:
        opener index → index of the closer that brings the depth back to zero, for each opener
        whose run has only matching closers up to that point; an opener whose run meets a
        mismatched closer, or the end of ``tokens``, has no entry. (A mismatched closer breaks
        every run open at it, so the scan forgets them all.)
    """
    ends: dict[int, int] = {}
    stack: list[int] = []
    for j, tok in enumerate(tokens):
        if tok.kind is not _PUNCT:
            continue
        if tok.text in OPENERS:
            stack.append(j)
        elif tok.text in CLOSERS:
            if stack and tokens[stack[-1]].text == CLOSERS[tok.text]:
                ends[stack.pop()] = j
            else:
                stack.clear()
    return ends


def _item_start(out: list[Token]) -> bool:
    """True when the next token would start an item (line start, or after decorators)."""
    if not out:
        return True
    prev = out[-1]
    if prev.kind is _NL or prev.kind is _DECO or prev.kind is _DECO_ARGS:
        return True
    return prev.kind is _STRING and len(out) > 1 and out[-2].kind is _DECO


def retag(text: str, tokens: list[Token]) -> list[Token]:
    """Collapse opaque decorator arguments and retag ``component``/``view`` (see module doc).

    Args:
        text: the module text (for the collapsed token's text).
        tokens: raw tokens (retired lines already dropped).

    Returns:
        A new list; ``tokens`` is not changed. Never raises.
    """
    if not any(t.kind is _DECO or (t.kind is _NAME and t.text == "component") for t in tokens):
        return tokens
    out: list[Token] = []
    n = len(tokens)
    ends = balanced_ends(tokens)  # once: a scan per unbalanced decorator would be quadratic
    i = 0
    while i < n:
        tok = tokens[i]
        if tok.kind is _DECO and tok.text[1:] not in ARG_DECORATORS and i + 1 < n and _is(tokens[i + 1], "("):
            end = ends.get(i + 1)
            if end is not None:
                out.append(tok)
                span = Span(tokens[i + 1].span.start, tokens[end].span.end)
                out.append(Token(_DECO_ARGS, text[span.start : span.end], span, _DECO_ARGS.value))
                i = end + 1
                continue
        if (
            tok.kind is _NAME
            and tok.text == "component"
            and _item_start(out)
            and i + 2 < n
            and tokens[i + 1].kind is _NAME
            and _is(tokens[i + 2], "(")
        ):
            i = _component(tokens, i, out, ends)
            continue
        out.append(tok)
        i += 1
    return out


def _component(tokens: list[Token], i: int, out: list[Token], ends: dict[int, int]) -> int:
    """Retag one ``component`` declaration starting at ``i``; return the index after it
    (``ends``: :func:`balanced_ends` of ``tokens``)."""
    out.append(tokens[i]._replace(code="component"))
    params_end = ends.get(i + 2)
    if params_end is None:
        return i + 1
    out.extend(tokens[i + 1 : params_end + 1])
    j = params_end + 1
    if j >= len(tokens) or not _is(tokens[j], "{"):
        return j
    body_end = ends.get(j)
    stop = body_end if body_end is not None else len(tokens) - 1
    depth = 0
    for k in range(j, stop + 1):
        tok = tokens[k]
        if tok.kind is _PUNCT and tok.text in OPENERS:
            depth += 1
        elif tok.kind is _PUNCT and tok.text in CLOSERS:
            depth -= 1
        elif (
            depth == 1
            and tok.kind is _NAME
            and tok.text == "view"
            and k + 1 < len(tokens)
            and _is(tokens[k + 1], ":")
            and (tokens[k - 1].kind is _NL or _is(tokens[k - 1], "{"))
        ):
            tok = tok._replace(code="view")
        out.append(tok)
    return stop + 1
