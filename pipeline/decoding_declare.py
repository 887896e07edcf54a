"""Steering a ```vox block to declare what the request names (issue 9 item 3b).

Holding the fence open until a requested item exists (:mod:`pipeline.decoding_names`) is not
enough for a tiny model: it rarely writes the requested name on its own and runs into the token
limit. So the request-aware mask also *forces* the requested item's header:

- **Where:** inside an open ```vox block, at an item start — the start of the block or a fresh
  line after a completed top-level item (brackets balanced, not in a string or comment, the
  previous non-blank line ends an item: ``}``, or a one-line ``type``/``import``).
- **What:** the first requested item (request order) that is still missing and not yet forced:
  ``fn NAME(PARAMS) to T {`` exactly as the canonical signature (:mod:`vox_lang.requests`, printed
  by :mod:`vox_lang.printer`) when the request gives one with a return type; ``fn NAME(PARAMS)``
  when it gives only the parameters (the model writes the rest); ``fn NAME(`` for a bare name;
  ``workflow``/``activity`` the same way; ``actor NAME {``; for a type, the whole declaration when
  the request gives it, with its newline (``type Money = { cents: int, currency: str }``; a
  declaration ending in a name, ``| Yes | No``, ran on into ``| Nocove(...)``), else ``type NAME = {`` or
  ``type NAME = |`` when the request says a record or a sum type (``RequestedItem.form``), else
  ``type NAME =``. A forced text never ends in a space: a header ``type NAME = `` let only a lone
  space token follow the ``=`` (the BPE writes ``= {`` as ``=`` + `` {``), and after that token the
  tiny model wrote ``bool`` in every one of 25 answers of one constrained eval run that missed a
  requested type (``type Coord = bool//...``). Handlers are not
  forced at item starts; inside an actor's body, at a handler start (the line after ``actor NAME {``
  or after a handler's closing ``}``), the first missing requested handler is forced the same
  way (``  on NAME(PARAMS) to T {``).
- **Decorators:** at a forced function start an ``@mcp.tool(...)`` decorator line may be written
  instead (MCP requests); the header is then forced on the line after it.
- **How:** only tokens whose text is a prefix of the rest of the header, or which start with the
  whole rest, stay allowed — intersected with what the grammar and the name mask allow. Each item
  is forced at most once; if no token fits (the grammar disagrees, or the tokenizer cannot spell
  the header), forcing stops for that row and an event is recorded: never a dead end.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from typing import Final

from vox_lang.requests import RequestedItem

_FN_KEYWORD: Final = {"function": "fn", "workflow": "workflow", "activity": "activity"}
_LEX: Final = re.compile(r'"(?:[^"\\\n]|\\.)*"?|//[^\n]*|[(){}\[\]]')
_OPEN: Final = "({["
#: the decorator that may precede a forced function header (MCP tool requests)
TOOL_DECORATOR: Final = "@mcp.tool"


def header(item: RequestedItem) -> str | None:
    """The text forced for ``item`` (see the module docstring); ``None`` when it is not forced."""
    keyword = _FN_KEYWORD.get(item.kind)
    if keyword is not None:
        if item.signature is None:
            return f"{keyword} {item.name}("
        if " to " in item.signature.rsplit(")", 1)[-1]:
            return f"{keyword} {item.name}{item.signature} {{"
        return f"{keyword} {item.name}{item.signature}"
    if item.kind == "type":
        if item.signature is not None:  # with its newline: `| No` must not run on into `| Nocove(...)`
            return f"type {item.name} {item.signature}\n"
        return f"type {item.name} =" + {"record": " {", "sum": " |"}.get(item.form or "", "")
    if item.kind == "actor":
        return f"actor {item.name} {{"
    return None


def handler_header(item: RequestedItem) -> str | None:
    """The text forced for a requested handler at a handler start (``None`` for other kinds)."""
    if item.kind != "handler":
        return None
    if item.signature is None:
        return f"  on {item.name}("
    if " to " in item.signature.rsplit(")", 1)[-1]:
        return f"  on {item.name}{item.signature} {{"
    return f"  on {item.name}{item.signature}"


def fresh_line(code: str) -> bool:
    """Whether ``code`` ends on a line holding nothing yet but spaces or tabs (after a line break)."""
    cut = code.rfind("\n")
    return cut >= 0 and not code[cut + 1:].strip(" \t")


def open_brackets(code: str) -> list[int] | None:
    """Offsets of the brackets still open at the end of ``code`` (``None``: inside a string)."""
    stack: list[int] = []
    for m in _LEX.finditer(code):
        tok = m.group(0)
        if tok[0] in '"/':
            if tok[0] == '"' and (len(tok) == 1 or not tok.endswith('"')):
                return None
            continue
        if tok in _OPEN:
            stack.append(m.start())
        elif stack:
            stack.pop()
    return stack


def item_start(code: str) -> bool:
    """Whether the end of ``code`` (an open block's text) is where a new top-level item may begin."""
    if code.strip() == "":
        return True
    if not code.endswith("\n"):
        return False
    depth = 0
    for tok in _LEX.findall(code):
        if tok[0] in '"/':
            if tok[0] == '"' and (len(tok) == 1 or not tok.endswith('"')):
                return False  # an unterminated string
            continue
        depth += 1 if tok in _OPEN else -1
    if depth != 0:
        return False
    last = code.rstrip().rsplit("\n", 1)[-1].strip()
    if last.endswith("}") or (last.startswith(TOOL_DECORATOR) and not last.endswith(("(", ","))):
        return True
    return last.startswith(("import ", "type ")) and not last.endswith(("=", "|", ","))


def handler_start(code: str) -> bool:
    """Whether the end of ``code`` is where a handler may begin inside an ``actor NAME {`` body
    (depth 1, a fresh line after the actor's ``{`` or after a handler's closing ``}``; the line
    may hold its indentation already: a byte-level BPE token such as ``"\\n "`` brings both)."""
    if not fresh_line(code):
        return False
    stack = open_brackets(code)
    if stack is None or len(stack) != 1 or code[stack[0]] != "{":
        return False
    opener_line = code[: stack[0]].rsplit("\n", 1)[-1].strip()
    if not opener_line.startswith("actor "):
        return False
    last = code.rstrip().rsplit("\n", 1)[-1].strip()
    return last.endswith(("{", "}"))


class TokenIndex:
    """Token texts sorted for prefix queries (built once per tokenizer).

    Args:
        texts: the decoded text of every token id (index = id); empty texts are never forced.
    """

    def __init__(self, texts: Sequence[str]) -> None:
        pairs = sorted((t, i) for i, t in enumerate(texts) if t)
        self._texts = [t for t, _ in pairs]
        self._ids = [i for _, i in pairs]
        self._by_text: dict[str, list[int]] = {}
        for t, i in pairs:
            self._by_text.setdefault(t, []).append(i)

    def continuing(self, rest: str) -> list[int]:
        """Ids whose text is a non-empty prefix of ``rest``, or all of ``rest`` followed by
        whitespace only (a forced header may end with its newline, never run into the body)."""
        out: list[int] = []
        for k in range(1, len(rest)):
            out += self._by_text.get(rest[:k], ())
        lo = bisect.bisect_left(self._texts, rest)
        hi = lo
        while hi < len(self._texts) and self._texts[hi].startswith(rest):
            hi += 1
        out += [i for t, i in zip(self._texts[lo:hi], self._ids[lo:hi]) if not t[len(rest):].strip()]
        return out
