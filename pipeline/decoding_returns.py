"""Whether the ``}`` that would close the function body being written must wait, for the name
mask (:mod:`pipeline.decoding_names`).

Spec §4 (E0508): a function, handler, workflow, activity or lambda with a return type other
than ``Unit`` must return on every path. The checker (``vox_lang.checker_stmt``) counts a body
as returning when one of its own statements does: a ``ret``, an ``if`` whose branches all
return up to a final ``else``, an exhaustive ``match`` whose arms all return, a ``while true``
without ``break``, or a call of a prelude function typed *never* (``process.exit``).

:func:`must_return` reads the body open at the end of the text and says ``True`` when none of
its statements so far can be such a statement: no ``ret`` (or ``return``) at the body's own
level, no ``if`` with an ``else``, no ``match``, no ``while true``, no ``exit``. The mask then
refuses the tokens that would close that body (:attr:`pipeline.decoding_tokens.TokenTable.body_close`).
It over-approximates (an ``if``/``else`` whose branches do not all return, a non-exhaustive
``match``, a ``while true`` with a ``break`` still let the body close; the compiler gates), so
it never refuses a body the checker accepts.

In one constrained eval run of the default export (408 answers), 81 failing answers held E0508:
the tiny model closes a body right after an ``if`` without ``else`` or a loop, or after a
statement that computes the value but does not return it.
"""

from __future__ import annotations

from typing import Final

from pipeline.decoding_scan import scan, top_level_tokens
from pipeline.decoding_types import header_return

#: words at a body's own level after which the body may return on every path (see the module
#: docstring; ``else`` stands for an ``if``/``else`` chain)
_RETURNING: Final = frozenset({"ret", "return", "else", "match", "exit"})


def must_return(code: str) -> bool:
    """Whether the innermost bracket open at the end of ``code`` (an open ```vox block, outside
    strings and comments) is the body of a function-like item with a return type other than
    ``Unit`` that no statement of it written so far may return from (see the module docstring).
    ``False`` whenever that cannot be read (no header found, a brace not yet decided)."""
    state = scan(code)
    if not state.stack:
        return False
    frame = state.stack[-1]
    if frame.kind not in ("block", "record", "brace"):
        return False
    ret = header_return(code, frame.arm - 1)
    if ret is None or ret.strip() in ("", "Unit"):
        return False
    previous = ""
    for tok in top_level_tokens(code, frame.arm):
        if tok in _RETURNING or previous == "while" and tok == "true":
            return False
        if tok != "\n" and not tok.startswith("//"):
            previous = tok
    return True
