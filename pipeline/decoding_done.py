"""Ending a ```vox block once it holds what the request asked for ("stop when done", issue 9).

Under the request-aware mask (:mod:`pipeline.decoding_names`) a block cannot close before every
requested item is declared. The converse matters as much for a small model: once everything is
declared it rarely closes the fence on its own and writes on — copies of the item, script lines
from other training programs — until the token limit cuts the block (the default run's eval:
more than half the constrained samples were cut, most failing E0203). So:

- **When:** the request names items (:func:`vox_lang.requests.extract_request`), none is missing
  (:func:`vox_lang.requests.missing_items`, exact signatures), and the block stands at a top-level
  item boundary (:func:`boundary`: a fresh line at bracket depth 0 after a complete item or
  statement; not right after a decorator line).
- **What is left:** closing the fence (tokens starting with a backtick, after optional
  whitespace) and whitespace — plus whatever the request *also* asks for, read from its text by
  :func:`request_extras`: ``@test`` functions when it mentions a test, a ``routes`` block when it
  mentions a route, and anything at all (the rule is off) when it asks to print or spawn
  something (top-level statements). These cover the phrasings of ``pipeline/data/eval_tasks*.yaml``.

**Budget:** the same close-only rule applies to any block (named items or not, print requests
too) once fewer than :func:`close_margin` of the generation's ``max_new_tokens`` are left: an
item started then would most likely be cut (E0203), while closing at an item boundary leaves a
complete program.

Only the first token of the next item is constrained; the grammar and the other masks still
apply, and a row where nothing would be left keeps the other masks only (never a dead end).

**Closing when short.** With the budget nearly spent and no top-level boundary here, the block
winds down instead of being cut. Where the grammar allows one, a token that closes a bracket
(``)``, ``]``, ``}``) or the fence; else the shortest finisher the grammar wants (``{`` after a
header, ``_ -> 0`` for a match arm, ``0`` for an operand: :func:`finisher_mask`); else a newline
(:func:`closing_mask`). Inside a string, a token that ends it; inside a ``//`` comment, one that
ends the line (:func:`comment_end_mask`). Where the grammar allows none of these (e.g. after
``.``, a member name) the step is left to the other masks. A block that has derailed
(:mod:`pipeline.decoding_derail`) winds down the same way from its derailed line on, whatever the
budget. A cut block does not parse at all, so the item it holds counts as not declared (E0203);
a closed one usually parses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final

_TESTS: Final = re.compile(r"@test\b|\btests?\b", re.IGNORECASE)
_ROUTES: Final = re.compile(r"\brout(?:e|es|ed|ing)\b", re.IGNORECASE)
_STATEMENTS: Final = re.compile(r"\b(?:print|prints|printing|spawn|spawns|spawning)\b", re.IGNORECASE)
_TOOL: Final = re.compile(r"\bmcp\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Extras:
    """What a request asks for besides its named items (see the module docstring).

    Attributes:
        tests: ``@test`` functions may follow.
        routes: a ``routes { ... }`` block may follow.
        statements: top-level statements may follow (the stop rule is off).
        tool: an MCP tool is asked for: an ``@mcp.tool`` decorator line may precede a forced
            function header (:mod:`pipeline.decoding_declare`).
        paths: the route paths the request gives (:func:`pipeline.decoding_routes.requested_paths`),
            forced at the route starts of a ``routes`` block (:mod:`pipeline.decoding_hold`).
        script: a script is asked (:func:`vox_lang.script_requests.asks_for_script`): a call of
            the requested function is forced at top level before the block may close
            (:mod:`pipeline.decoding_script`).
    """

    tests: bool = False
    routes: bool = False
    statements: bool = False
    tool: bool = False
    paths: tuple[str, ...] = ()
    script: bool = False

    @property
    def prefixes(self) -> tuple[str, ...]:
        """Texts a further item may start with (besides closing the fence)."""
        return (("@test",) if self.tests else ()) + (("routes",) if self.routes else ())


#: the budget rule's margin: this many tokens, or a quarter of a smaller budget
CLOSE_MARGIN: Final = 48


def close_margin(budget: int) -> int:
    """Tokens left at which a block closes at its next item start (see the module docstring)."""
    return min(CLOSE_MARGIN, budget // 4)


def request_extras(text: str) -> Extras:
    """Read from a request's text what it asks for besides named items (never raises)."""
    from pipeline.decoding_routes import requested_paths
    from vox_lang.script_requests import asks_for_script

    return Extras(tests=bool(_TESTS.search(text)), routes=bool(_ROUTES.search(text)),
                  statements=bool(_STATEMENTS.search(text)), tool=bool(_TOOL.search(text)),
                  paths=requested_paths(text), script=asks_for_script(text))


#: tokens after which layout rule L2 drops the newline: a line ending in one goes on
_CONTINUES: Final = ("{", ",", ".", "=", "->", "=>", "|>", "|", "+", "-", "*", "/", "%", "<", ">", "(", "[", ":")
_CONTINUES_WORDS: Final = frozenset({"or", "and", "not", "to", "in"})


def boundary(code: str) -> bool:
    """Whether the end of ``code`` (an open block's text) is a top-level item boundary: a fresh
    line, every bracket closed, no string open, and the last non-blank line does not go on
    (layout rule L2) and is not a decorator line."""
    from pipeline.decoding_declare import item_start, open_brackets

    if not code.endswith("\n") or not code.strip() or decorator_line(code):
        return False
    if item_start(code):
        return True
    stack = open_brackets(code)
    if stack is None or stack:
        return False
    last = code.rstrip().rsplit("\n", 1)[-1].strip()
    if "//" in last:
        last = last[: last.find("//")].rstrip() or "x"  # a comment ends the line (approximation)
    words = last.split()
    return not last.endswith(_CONTINUES) and not (words and words[-1] in _CONTINUES_WORDS)


def decorator_line(code: str) -> bool:
    """Whether the last non-blank line of ``code`` is a decorator line (an item follows it)."""
    lines = code.rstrip().rsplit("\n", 1)
    return lines[-1].strip().startswith("@")


def allowed_after_done(texts: list[str], extras: Extras, width: int) -> Any:
    """Bool numpy array ``[width]``: tokens that may start what follows a finished block — whitespace,
    a backtick (the closing fence), or a prefix/extension of one of ``extras.prefixes``."""
    import numpy as np

    prefixes = extras.prefixes
    out = np.zeros(width, dtype=np.bool_)
    for i, text in enumerate(texts[:width]):
        body = text.lstrip(" \t\r\n")
        if not body or body.startswith("`") or any(p.startswith(body) or body.startswith(p) for p in prefixes):
            out[i] = bool(text)
    return out


_CLOSERS: Final = frozenset(")]}`\n\r \t")
_BRACKETS: Final = frozenset(")]}`")  # closers that make progress (a bracket, the fence)


def closing_mask(texts: list[str], width: int, in_string: bool, newlines: bool = True,
                 line_start: bool = False) -> Any:
    """Bool numpy mask ``[width]`` of the tokens that wind a block down (see the module docstring):
    ``in_string``: tokens starting with ``"`` followed only by closers; otherwise tokens made only
    of closers and whitespace that hold at least one closer or newline (pure spaces would let the
    block idle to its end). ``newlines=False``: only those that hold a bracket or a backtick (a
    newline alone is no progress: a derailed block writes blank lines, :mod:`pipeline.decoding_derail`).
    Unless ``line_start`` (the block's text ends at a fresh line), a backtick must follow a newline
    in the token: the fence closes on its own line, as Markdown renderers require (``}````` is
    a closed block to the decoder, an open one to a chat UI)."""
    import numpy as np

    out = np.zeros(width, dtype=np.bool_)
    for i, text in enumerate(texts[:width]):
        body = text[1:] if in_string and text.startswith('"') else None if in_string else text
        if body is None or not text or not set(body) <= _CLOSERS:
            continue
        if not line_start and "`" in body and not 0 <= body.find("\n") < body.find("`"):
            continue
        marks = set(body) - {" ", "\t"}
        out[i] = in_string or bool(marks if newlines else marks & _BRACKETS)
    return out


#: the shortest texts that finish what the grammar still wants where no closer is allowed: a body
#: for a header (``if c`` wants ``{``), a match arm (``_ -> 0``), an operand (``a +`` wants ``0``)
FINISHERS: Final = frozenset({"{", "->", "_", "0"})


def finisher_mask(texts: list[str], width: int, apart: bool = False) -> Any:
    """Bool numpy mask ``[width]`` of the tokens that are one of :data:`FINISHERS`, optionally after
    spaces: where a winding-down block allows no closer, the grammar picks which one fits.
    ``apart``: right after a word or number, only those that cannot extend it (``{``, ``->``, or
    led by a space: ``00`` and ``x_`` are not finishers)."""
    import numpy as np

    out = np.zeros(width, dtype=np.bool_)
    for i, text in enumerate(texts[:width]):
        body = text.lstrip(" ")
        out[i] = body in FINISHERS and not (apart and body in ("0", "_") and body == text)
    return out


def comment_end_mask(texts: list[str], width: int) -> Any:
    """Bool numpy mask ``[width]`` of the tokens that end a ``//`` comment while winding down: closers
    and whitespace holding a newline (inside a comment a bracket is text, so allowing one alone
    would let the block idle in its comment to the token limit)."""
    import numpy as np

    out = np.zeros(width, dtype=np.bool_)
    for i, text in enumerate(texts[:width]):
        out[i] = bool(text) and "\n" in text and set(text) <= _CLOSERS
    return out
