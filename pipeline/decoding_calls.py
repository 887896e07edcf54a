"""How many arguments a prelude builtin's call takes, for the name mask
(:mod:`pipeline.decoding_names`).

Every prelude builtin takes a fixed number of arguments, none defaulted (spec §5: ``print``,
``assert``, ``len``, ``str``, ``int``, ``float``, ``set`` one, ``range`` two), and a call with
another number is E0503. In an open call of one (not shadowed by a declaration), counting the
arguments written so far decides two things (:func:`call_rule`): while fewer than it takes are
written, the call cannot close (``str()``, ``range(n)``); once as many are written, a ``,`` may
only be the trailing comma (``args = arg ("," arg)* ","?``, spec §2), so only ``)`` may come
after it (``len(xs, 2)``); and ``()`` does not follow a builtin's name (``assert()``, a token of
its own in byte-level BPE vocabularies). In the completed blocks of one constrained eval run (408 answers), 58
held such a call (``assert(a, b)``, ``len(3, 2)``, ``range(s)``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from pipeline.decoding_scan import IDENT_CHARS, TOKENS, scan
from vox_lang.prelude import BUILTINS

#: arguments each prelude builtin takes (all required)
ARITY: Final[dict[str, int]] = {name: len(sig.params) for name, sig in BUILTINS.items()}
_OPEN: Final = frozenset({"(", "[", "{"})
_CLOSE: Final = frozenset({")", "]", "}"})


@dataclass(frozen=True)
class CallRule:
    """In an open call of a prelude builtin: ``no_close``: ``)`` may not come next (too few
    arguments); ``only_close``: nothing but ``)`` (or whitespace) may come next (a trailing comma
    after the last argument)."""

    no_close: bool = False
    only_close: bool = False
    no_empty: bool = False  # right after the builtin's name: no ``()``


def arguments_written(code: str, start: int) -> tuple[int, bool]:
    """``(commas, pending)`` of the argument list that opens at ``start`` (right after its
    ``(``) and runs to the end of ``code``: top-level commas, and whether anything follows the
    last one (strings and comments skipped; nested brackets skipped)."""
    depth, commas, pending = 0, 0, False
    for tok in TOKENS.findall(code, start):
        if tok == "\n" or tok.startswith("//"):
            continue
        if depth == 0 and tok == ",":
            commas, pending = commas + 1, False
            continue
        pending = True
        if tok in _OPEN:
            depth += 1
        elif tok in _CLOSE:
            depth -= 1
    return commas, pending


def call_rule(code: str, declared: frozenset[str]) -> CallRule | None:
    """The :class:`CallRule` at the end of ``code`` (an open ```vox block), or ``None`` outside
    an open call of a prelude builtin or right after one's name (``declared``: names in scope
    that may shadow one)."""
    word = code[len(code.rstrip(IDENT_CHARS)):]
    if word in ARITY and word not in declared and not code[: len(code) - len(word)].rstrip().endswith("."):
        return CallRule(no_empty=True)
    stack = scan(code).stack
    frame = stack[-1] if stack else None
    if frame is None or frame.kind != "call" or frame.callee not in ARITY or frame.callee in declared:
        return None
    commas, pending = arguments_written(code, frame.arm)
    written = commas + pending
    arity = ARITY[frame.callee]
    if commas >= arity and not pending:
        return CallRule(only_close=True)
    if written < arity:
        return CallRule(no_close=True)
    return None
