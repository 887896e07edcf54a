"""Automatic fixes: compat spellings (W0001–W0003) and the retired forms whose 2026 spelling
is mechanical (``#`` ``isnt`` ``Err(`` ``->`` return arrows, ``to`` in arms, ``&&`` ``||``
``!`` ``null`` ``;``).

Driven by the diagnostics, not by patterns over the text: every diagnostic the lexer and
parser report with a ``fix`` replaces its span with that text. Fixing can let an item parse
that did not before (and so reveal more fixable forms), so the pass repeats until nothing
changes. Forms without a mechanical fix keep their diagnostics.
"""

from __future__ import annotations

from typing import Final

from vox_lang.diagnostics import Diagnostic, DiagnosticSink
from vox_lang.parser import parse_module
from vox_lang.source import SourceFile

#: a fixed text reveals at most a few more layers of fixable forms
MAX_ROUNDS: Final = 4


def fixable(source: str) -> list[Diagnostic]:
    """The diagnostics of ``source`` (lexer and parser) that carry a ``fix``, in order."""
    sink = DiagnosticSink(SourceFile(source))
    parse_module(sink.source, sink)
    return [d for d in sink.sorted() if d.fix is not None]


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

    Never raises; text without fixable forms comes back unchanged.
    """
    text = source
    for _ in range(MAX_ROUNDS):
        diagnostics = fixable(text)
        if not diagnostics:
            break
        fixed = apply_fixes(text, diagnostics)
        if fixed == text:
            break
        text = fixed
    return text
