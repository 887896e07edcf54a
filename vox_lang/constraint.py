"""The constraint grammar for decoding Vox: ``constraint.lark`` plus a start rule per use.

``constraint.lark`` (next to this module) is an over-approximation of strict-mode Vox in the
Lark dialect of llguidance (its header lists the widenings). :func:`constraint_grammar` adds the
start rule: a bare ``program``; ``code`` (one ```vox block and nothing else); ``first`` (the
answer opens with a ```vox block, then free prose: the system prompt's "put the whole program in
one fenced block ... after the block, at most two short sentences"); or ``response`` (free prose
with any number of ```vox blocks, each of which must hold a complete program before its closing
fence). This module only builds text: it imports nothing outside ``vox_lang``, and
the decoder (``pipeline.decoding_constraint``) compiles it.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Final

GRAMMAR_PATH: Final = Path(__file__).with_name("constraint.lark")
MODES: Final = ("program", "code", "first", "response")

# Prose is lexed one character at a time (a backtick only when a non-backtick follows), so three
# backticks can only ever be a fence: a ```vox block cannot be smuggled through as prose, and
# other fences (```python) are not allowed. One or two backticks may end the answer. The opening
# fence ends its line (```vox then a newline), as the eval's block extractor and Markdown expect.
_STARTS: Final[dict[str, str]] = {
    # llguidance applies %ignore only between lexemes: leading blank/comment lines are explicit.
    "program": "start: LEAD? program\nLEAD: /([ \\t]|\\r?\\n|\\/\\/[^\\n\\r]*)+/\n",
    "code": 'start: FENCE program FENCE_END\nFENCE: /```vox[ \\t]*\\r?\\n/\nFENCE_END: "```"\n',
    "first": (
        "start: FENCE program FENCE_END prose TICKS?\n"
        'FENCE: /```vox[ \\t]*\\r?\\n/\nFENCE_END: "```"\n'
        "prose: PROSE_CHAR*\n"
        "PROSE_CHAR: /[^`]|`[^`]|``[^`]/\n"
        "TICKS: /`{1,2}/\n"
    ),
    "response": (
        "start: prose (FENCE program FENCE_END prose)* TICKS?\n"
        'FENCE: /```vox[ \\t]*\\r?\\n/\nFENCE_END: "```"\n'
        "prose: PROSE_CHAR*\n"
        "PROSE_CHAR: /[^`]|`[^`]|``[^`]/\n"
        "TICKS: /`{1,2}/\n"
    ),
}


#: literals around which layout drops newlines (L1 inside brackets, L2 after, L3 before): in the
#: constraint any newlines may stand on both sides of them; closers only before them. (Done in the
#: grammar with ``NL*``, not in the lexemes: llguidance's lexer is greedy and does not backtrack.)
_ABSORB_BOTH: Final = ("{", "(", "[", ",", ".", "=", "+=", "-=", "*=", "/=", "->", "|>", "|", "or", "and", "not",
                       "+", "-", "*", "/", "%", "==", "!=", "<", ">", "<=", ">=", "to", "in", "else", ":", "?")
_ABSORB_BEFORE: Final = (")", "]", "}")


@cache
def _body() -> str:
    """``constraint.lark`` with optional newlines around the layout literals of its rules."""
    lines = GRAMMAR_PATH.read_text(encoding="utf-8").splitlines()
    out = []
    for line in lines:
        if line and not line[0].isupper() and not line.startswith(("//", "%", "word:", "  | \"")):
            for literal in _ABSORB_BOTH + _ABSORB_BEFORE:
                after = " NL*" if literal in _ABSORB_BOTH else ""
                line = line.replace(f'"{literal}"', f'(NL* "\x00{literal}"{after})')
            line = line.replace("\x00", "")
        out.append(line)
    return "\n".join(out) + "\n"


def constraint_grammar(mode: str = "response") -> str:
    """The Lark text of the constraint for ``mode`` (``program``, ``code`` or ``response``).

    Raises:
        ValueError: unknown ``mode``.
        OSError: ``constraint.lark`` cannot be read.
    """
    if mode not in _STARTS:
        raise ValueError(f"unknown constraint mode {mode!r}: use {', '.join(MODES)}")
    return _STARTS[mode] + _body()
