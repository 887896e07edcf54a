"""Automatic fixes: compat spellings (W0001–W0009, spec §6 and §10) and the retired forms
whose 2026 spelling is mechanical (``#`` ``isnt`` ``Err(`` ``->`` return arrows, ``to`` in
arms, ``&&`` ``||`` ``!`` ``null`` ``;``).

Driven by the diagnostics, not by patterns over the text: every diagnostic the whole front end
reports with a ``fix`` (lexer, parser, and name resolution: W0005 inserts ``import std``)
replaces its span with that text. Fixing can let an item parse that did not before, and a fix
that rewrites a whole declaration (W0009) copies the compat forms inside it verbatim, so the
pass repeats until nothing is left to fix; the result is a fixed point (fixing it again
changes nothing). Forms without a mechanical fix keep their diagnostics.
"""

from __future__ import annotations

from typing import Final

from vox_lang.api import check
from vox_lang.diagnostics import Diagnostic
from vox_lang.source import BOM

#: a fixed text reveals at most a few more layers of fixable forms (each nesting of one
#: fix's span inside another's costs a round)
MAX_ROUNDS: Final = 8


def fixable(source: str) -> list[Diagnostic]:
    """The diagnostics of ``source`` (every pass that ran) that carry a ``fix``, in order; their
    spans count from after a leading byte-order mark, as :func:`~vox_lang.api.check` reads it."""
    return [d for d in check(source).diagnostics if d.fix is not None]


def apply_fixes(source: str, diagnostics: list[Diagnostic]) -> str:
    """Replace each diagnostic's span with its ``fix``; of two overlapping fixes the earlier
    one wins (the other is found again on the next round if it still applies)."""
    pieces: list[str] = []
    pos = 0
    for d in sorted(diagnostics, key=lambda d: (d.span.start, d.span.end)):
        if d.fix is None or d.span.start < pos:
            continue
        pieces.append(source[pos : d.span.start])
        pieces.append(d.fix)
        pos = d.span.end
    pieces.append(source[pos:])
    return "".join(pieces)


def fix(source: str) -> str:
    """Return ``source`` with every compat spelling and mechanical retired form rewritten.

    Never raises; text without fixable forms comes back unchanged, and a leading byte-order mark
    is kept.
    """
    text = source
    for _ in range(MAX_ROUNDS):
        diagnostics = fixable(text)
        if not diagnostics:
            break
        bom = BOM if text.startswith(BOM) else ""  # check() skipped it: the spans start after it
        fixed = bom + apply_fixes(text.removeprefix(bom), diagnostics)
        if fixed == text:
            break
        text = fixed
    return text
