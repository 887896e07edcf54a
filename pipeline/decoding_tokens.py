"""Per-token identifier shapes for the name mask (:mod:`pipeline.decoding_names`), built once
per tokenizer: which ids continue an identifier, which start a fresh one after whitespace, which
end one, and by which identifier characters they lead (so a mask for "a prefix of one of these
names" is a few dictionary lookups per name).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np

from pipeline.decoding_declare import TOOL_DECORATOR, TokenIndex

_IDENT: Final = re.compile(r"[A-Za-z0-9_]*")
#: a token that starts a binary operator (after spaces or tabs): arithmetic, comparison,
#: ``and``/``or``; not ``->`` (an arm), ``|>`` (a pipe), ``=`` (a named argument) or ``!`` alone
#: a token that starts a number or a unary minus (after spaces or tabs)
_NUMBER_LED: Final = re.compile(r"[ \t]*(?:\d|-(?!>))")
_OPERATOR_LED: Final = re.compile(r"[ \t]*(?:[+*/%<>]|-(?!>)|==|!=|(?:and|or)(?![A-Za-z0-9_]))")
#: token classes by what leads them, for :mod:`pipeline.decoding_operators` and the start rules of
#: :mod:`pipeline.decoding_names` (``+=`` and the like count with their operator)
_LED_CLASSES: Final = {
    "plus_led": re.compile(r"[ \t]*\+"),
    "arith_led": re.compile(r"[ \t]*(?:[*%]|/(?!/)|-(?!>))"),
    "compare_led": re.compile(r"[ \t]*(?:[<>]|==|!=)"),
    "logic_led": re.compile(r"[ \t]*(?:and|or)(?![A-Za-z0-9_])"),
    #: what ends a statement's expression: a line break, ``}``, ``;`` or a comment
    "end_led": re.compile(r"[ \t]*(?:[\n\r};]|//)"),
    "brace_led": re.compile(r"[ \t]*\{"),
    "comma_led": re.compile(r"[ \t]*,"),
    "quote_led": re.compile(r'[ \t]*"'),
    "assign_led": re.compile(r"[ \t]*=(?![=>])"),
}


@dataclass
class TokenTable:
    """Per-token identifier shape, precomputed once per tokenizer (see :func:`token_table`)."""

    lead_ends: dict[str, list[int]]  # no leading space: identifier chars, then something else
    lead_only: dict[str, list[int]]  # no leading space: identifier chars only
    ws_lead_ends: dict[str, list[int]]  # whitespace, identifier chars, then something else
    ws_lead_only: dict[str, list[int]]  # whitespace then identifier chars only
    glued: list[int]  # every id continuing an identifier (no leading space, identifier char first)
    digit_led: list[int]  # glued ids starting with a digit (a number when no identifier is open)
    terminators: list[int]  # ids that end an open identifier (non-identifier char first)
    ws_ident: list[int]  # ids starting a new identifier after whitespace
    backtick: list[int]  # ids holding a backtick (could close the fence)
    index: TokenIndex | None = None  # every token's text, for forcing requested headers
    texts: list[str] = field(default_factory=list)  # every token's text (index = id)
    tool_ids: list[int] = field(default_factory=list)  # ids spelling a start of "@mcp.tool"
    cache: dict[tuple[str, str], Any] = field(default_factory=dict)  # prelude ids per (kind, partial); closing masks
    member_led: list[int] = field(default_factory=list)  # ids whose text is spaces/tabs, then "."
    call_led: list[int] = field(default_factory=list)  # ids whose text is spaces/tabs, then "("
    operator_led: list[int] = field(default_factory=list)  # spaces/tabs, then a binary operator (not `->`, `|>`)
    blank: list[int] = field(default_factory=list)  # whitespace only, with a newline (L1 may drop it)
    number_led: list[int] = field(default_factory=list)  # a digit or a minus (not `->`) first
    ws_number_led: list[int] = field(default_factory=list)  # spaces/tabs, then a digit or a minus
    close_led: list[int] = field(default_factory=list)  # spaces/tabs, then ")"
    empty_call_led: list[int] = field(default_factory=list)  # spaces/tabs, then "()"
    space_only: list[int] = field(default_factory=list)  # whitespace only (newlines included)
    bracket_led: list[int] = field(default_factory=list)  # spaces/tabs, then "["
    plus_led: list[int] = field(default_factory=list)  # spaces/tabs, then "+"
    arith_led: list[int] = field(default_factory=list)  # spaces/tabs, then "-" (not "->"), "*", "/" or "%"
    compare_led: list[int] = field(default_factory=list)  # spaces/tabs, then "<", ">", "==" or "!="
    logic_led: list[int] = field(default_factory=list)  # spaces/tabs, then the word "and" or "or"
    end_led: list[int] = field(default_factory=list)  # spaces/tabs, then a line break, "}", ";" or "//"
    brace_led: list[int] = field(default_factory=list)  # spaces/tabs, then "{"
    comma_led: list[int] = field(default_factory=list)  # spaces/tabs, then ","
    quote_led: list[int] = field(default_factory=list)  # spaces/tabs, then a double quote
    assign_led: list[int] = field(default_factory=list)  # spaces/tabs, then "=" (not "==", "=>")
    body_close: list[int] = field(default_factory=list)  # closes the innermost open brace (:func:`closes_brace`)
    #: every token's text as ``decode(skip_special_tokens=True)`` reads it (special tokens ``""``):
    #: what incremental decoders append per sampled id
    pieces: list[str] = field(default_factory=list)

    def cached(self, key: tuple[str, str], build: Callable[[], Any]) -> Any:
        """``cache[key]``, built by ``build()`` on first use: kept in the table, so built once
        per tokenizer and not once per request (a mask of every token takes milliseconds)."""
        found = self.cache.get(key)
        if found is None:
            found = self.cache[key] = build()
        return found

    def name_prefix_ids(self, names: Iterable[str], partial: str = "", glued: bool = True) -> list[int]:
        """Ids of the tokens that keep an identifier a prefix of one of ``names``: glued on
        ``partial`` (``glued``), else starting a fresh word after whitespace; a token may cover
        part of the rest of a name or all of it, with or without what ends it."""
        starts, ends = (self.lead_only, self.lead_ends) if glued else (self.ws_lead_only, self.ws_lead_ends)
        out: list[int] = []
        for name in names:
            if name.startswith(partial):
                rest = name[len(partial):]
                for k in range(1, len(rest) + 1):
                    out += starts.get(rest[:k], ())
                out += ends.get(rest, ())
        return out

    def ids(self, name: str) -> Any:
        """The id list attribute ``name`` (``"glued"``, ``"call_led"``, ...) as an int64 numpy array."""
        return self.cached(("ids", name), lambda: np.asarray(getattr(self, name), dtype=np.int64))

    def class_mask(self, width: int, on: tuple[str, ...] = (), off: tuple[str, ...] = ()) -> Any:
        """Bool numpy ``[width]`` over token classes (id list attributes): with ``on``, only
        those classes' tokens; else every token but the ``off`` classes'. Ids past the
        tokenizer's vocabulary (padding of the logits) follow the default: off with ``on``."""

        def build() -> Any:
            size = max(width, len(self.texts))
            mask = np.zeros(size, dtype=np.bool_) if on else np.ones(size, dtype=np.bool_)
            for name in on or off:
                mask[self.ids(name)] = bool(on)
            return mask[:width]

        return self.cached(("class", f"{width}:{','.join(on)}:{','.join(off)}"), build)

def closes_brace(text: str) -> bool:
    """Whether a token's ``text``, written where the innermost open bracket is a ``{``, closes it:
    its first closing bracket outside any bracket the token itself opens is a ``}`` (``}``,
    ``\n}``, `` })``, ``)}`` is not: its ``)`` comes first). Text from a quote or ``//`` on
    would be in a string or comment, and is not read."""
    depth = 0
    for i, ch in enumerate(text):
        if ch in "\"'`" or text.startswith("//", i):
            return False
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                return ch == "}"
            depth -= 1
    return False


def token_table(tokenizer: Any) -> TokenTable:
    """Classify every token of ``tokenizer`` by the identifier characters it starts with."""
    maps: list[dict[str, list[int]]] = [defaultdict(list) for _ in range(4)]
    glued: list[int] = []
    digit_led: list[int] = []
    terminators: list[int] = []
    ws_ident: list[int] = []
    backtick: list[int] = []
    texts: list[str] = []
    for i in range(len(tokenizer)):
        text = tokenizer.decode([i])
        texts.append(text)
        if "`" in text:
            backtick.append(i)
        body = text.lstrip(" \t\n\r")
        spaced = len(body) < len(text)
        m = _IDENT.match(body)
        lead = m.group(0) if m else ""
        if not spaced and lead:
            glued.append(i)
            if lead[0].isdigit():
                digit_led.append(i)
            maps[1 if len(lead) == len(body) else 0][lead].append(i)
            continue
        terminators.append(i)
        if spaced and lead and not lead[0].isdigit():
            ws_ident.append(i)
            maps[3 if len(lead) == len(body) else 2][lead].append(i)
    lead_ends, lead_only, ws_lead_ends, ws_lead_only = (dict(m) for m in maps)
    tool = [i for i, t in enumerate(texts) if t and (TOOL_DECORATOR.startswith(t) or t.startswith(TOOL_DECORATOR))]
    member = [i for i, t in enumerate(texts) if t.lstrip(" \t").startswith(".")]
    call = [i for i, t in enumerate(texts) if t.lstrip(" \t").startswith("(")]
    operator = [i for i, t in enumerate(texts) if _OPERATOR_LED.match(t)]
    blank = [i for i, t in enumerate(texts) if t.isspace() and "\n" in t]
    number = [i for i, t in enumerate(texts) if _NUMBER_LED.match(t)]
    ws_number = [i for i, t in enumerate(texts) if t[:1] in (" ", "\t") and _NUMBER_LED.match(t)]
    close = [i for i, t in enumerate(texts) if t.lstrip(" \t").startswith(")")]
    empty_call = [i for i, t in enumerate(texts) if t.lstrip(" \t").startswith("()")]
    space = [i for i, t in enumerate(texts) if t and t.isspace()]
    bracket = [i for i, t in enumerate(texts) if t.lstrip(" \t").startswith("[")]
    special = set(getattr(tokenizer, "all_special_ids", ()) or ())
    pieces = ["" if i in special else t for i, t in enumerate(texts)]
    classes = {name: [i for i, t in enumerate(texts) if rx.match(t)] for name, rx in _LED_CLASSES.items()}
    return TokenTable(lead_ends, lead_only, ws_lead_ends, ws_lead_only, glued, digit_led, terminators, ws_ident,
                      backtick, TokenIndex(texts), texts, tool, member_led=member, call_led=call,
                      operator_led=operator, blank=blank, number_led=number,
                      ws_number_led=ws_number, close_led=close, empty_call_led=empty_call, space_only=space,
                      bracket_led=bracket, pieces=pieces, plus_led=classes["plus_led"],
                      arith_led=classes["arith_led"], compare_led=classes["compare_led"],
                      logic_led=classes["logic_led"], end_led=classes["end_led"], brace_led=classes["brace_led"],
                      comma_led=classes["comma_led"], quote_led=classes["quote_led"],
                      assign_led=classes["assign_led"],
                      body_close=[i for i, t in enumerate(texts) if "}" in t and closes_brace(t)])
