"""The one Diagnostic type, the sink passes append to, and the three renderings (spec §6).

Passes never raise diagnostics: they call :meth:`DiagnosticSink.report` and carry on.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from enum import Enum
from typing import Any, Final

from vox_lang.codes import REGISTRY, ErrorCode
from vox_lang.messages import RETIRED_PREFIX, TEMPLATES
from vox_lang.source import SourceFile, Span


class Severity(str, Enum):
    """Diagnostic severity; strict mode turns every ``WARNING`` into ``ERROR`` (same code)."""

    ERROR = "error"
    WARNING = "warning"
    RUNTIME = "runtime"  # a fault while running a checked program (R codes, spec §11)


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One finding, with exactly the fields of spec §6 plus the code-point span.

    Attributes:
        code: registry code, e.g. ``"E0401"``.
        severity: error or warning.
        message: text before `` — `` in the spec's table, formatted.
        line, col, end_line, end_col: 1-based code-point positions, end exclusive.
        hint: text after `` — `` (``None`` when the template has none or no suggestion exists).
        fix: replacement text for the span (compat warnings, mechanical migrations), else ``None``.
        span: the code-point offsets the positions were computed from.
    """

    code: str
    severity: Severity
    message: str
    line: int
    col: int
    end_line: int
    end_col: int
    hint: str | None = None
    fix: str | None = None
    span: Span = Span(0, 0)

    @property
    def is_error(self) -> bool:
        """True when ``severity`` is error."""
        return self.severity is Severity.ERROR

    def sort_key(self) -> tuple[int, int, str]:
        """Order of spec §6: by position, then code."""
        return (self.line, self.col, self.code)

    def to_json(self) -> dict[str, Any]:
        """The spec's JSON object (key order as in §6)."""
        return {
            "code": self.code,
            "severity": self.severity.value,
            "message": self.message,
            "line": self.line,
            "col": self.col,
            "end_line": self.end_line,
            "end_col": self.end_col,
            "hint": self.hint,
            "fix": self.fix,
        }


#: most code points of a template field shown in a message (a 10,000-character name or
#: number is cut, with ``…``; issue 14 item 17)
FIELD_WIDTH: Final = 120
#: most code points of a source line echoed under a diagnostic; a longer line is cut to a
#: window around the caret, each cut marked with ``…``
EXCERPT_WIDTH: Final = 120


def clip(text: str, width: int = FIELD_WIDTH) -> str:
    """``text``, or its first ``width - 1`` code points and ``…`` when it is longer."""
    return text if len(text) <= width else text[: width - 1] + "…"


def excerpt(text: str, col: int, width: int, limit: int = EXCERPT_WIDTH) -> tuple[str, int, int]:
    """Cut a long source line to a window around a caret span.

    Args:
        text: the source line (code points, no terminator).
        col: 1-based column where the carets start (may be one past the line's end).
        width: number of carets (at least 1).
        limit: most code points of ``text`` to keep.

    Returns:
        ``(shown, col, width)``: the line as shown (``…`` marks each cut end), the carets'
        1-based start column in it and their number, clipped to the window (at least 1).
    """
    return _window(text, 0, len(text), col, width, limit)


def source_excerpt(
    source: SourceFile, line: int, col: int, end_line: int, end_col: int, limit: int = EXCERPT_WIDTH
) -> tuple[str, int, int]:
    """:func:`excerpt` of ``source``'s 1-based ``line`` for the span ``line:col``–``end_line:end_col``.

    The carets cover the span, at least one, to the line's end when the span goes on past it.
    Only the window is copied out of the source: a long line is never sliced whole, so echoing
    each of many diagnostics on one huge line costs the window, not the line.

    Returns:
        ``(shown, col, width)`` as :func:`excerpt` gives them.
    """
    start, end = source.line_bounds(line)
    width = max(1, end_col - col) if end_line == line else max(1, end - start - col + 1)
    return _window(source.text, start, end, col, width, limit)


def _window(text: str, lo: int, hi: int, col: int, width: int, limit: int) -> tuple[str, int, int]:
    """:func:`excerpt` of the line ``text[lo:hi]``, slicing only what is shown."""
    length = hi - lo
    if length <= limit:
        return text[lo:hi], col, width
    start = max(0, col - 1 - limit // 3)  # a third of the window is context before the caret
    end = min(length, start + limit)
    start = max(0, end - limit)
    head = "…" if start > 0 else ""
    tail = "…" if end < length else ""
    shown_col = col - start + len(head)
    shown_width = max(1, min(width, end - (col - 1)))
    return head + text[lo + start : lo + end] + tail, shown_col, shown_width


_OPTIONAL_GROUP = re.compile(r" \([^()]*\{\w+\}[^()]*\)")
_FIELD = re.compile(r"\{(\w+)\}")


def format_message(code: str, **fields: object) -> tuple[str, str | None]:
    """Format ``code``'s message and hint templates with ``fields``.

    A hint whose fields are missing from ``fields`` (e.g. no "did you mean" candidate) is
    dropped rather than printed with holes, and so is an optional `` (…)`` group of the
    message (E0510 for a unary operator has no ``u``). E03xx messages get the ``retired syntax: `` prefix.

    Raises:
        KeyError: ``code`` is not in the registry, or the *message* needs a missing field
            (a bug in the caller, not a user error).
    """
    msg_t, hint_t = TEMPLATES[code]
    fields = {k: clip(v) if isinstance(v, str) else v for k, v in fields.items()}
    try:
        message = msg_t.format(**fields)
    except KeyError:
        # An optional parenthesised group (E0510's " (and `{u}`)" for unary operators) is
        # dropped when its fields are missing; a missing field elsewhere still raises.
        message = _OPTIONAL_GROUP.sub(
            lambda m: m.group(0) if all(f in fields for f in _FIELD.findall(m.group(0))) else "",
            msg_t,
        ).format(**fields)
    if code.startswith("E03"):
        message = RETIRED_PREFIX + message
    hint: str | None = None
    if hint_t is not None:
        try:
            hint = hint_t.format(**fields)
        except KeyError:
            hint = None
    return message, hint


class DiagnosticSink:
    """Collects diagnostics for one :class:`SourceFile`; positions are resolved on report."""

    def __init__(self, source: SourceFile) -> None:
        self.source = source
        self._items: list[Diagnostic] = []
        #: a pass left part of the module unchecked for lack of stack (see :mod:`vox_lang.depth`)
        self.incomplete = False
        #: where a pass first stopped for lack of stack (see :func:`vox_lang.depth.out_of_budget`)
        self.incomplete_at: Span | None = None

    def report(
        self,
        code: ErrorCode,
        span: Span,
        *,
        hint: str | None = None,
        fix: str | None = None,
        **fields: object,
    ) -> Diagnostic:
        """Record one diagnostic for ``code`` at ``span``.

        Args:
            code: the registry constant (``codes.E0401``): report sites name their code, as
                mypy's message registry does, so a typo is an import error, not a runtime one.
            span: offsets into ``self.source``; an empty span is rendered one column wide.
            hint: overrides the template hint when given.
            fix: replacement text for the span.
            **fields: template fields (``n``, ``s``, ``t``...).

        Returns:
            The recorded diagnostic.
        """
        key = code.code
        entry = REGISTRY[key]
        message, tmpl_hint = format_message(key, **fields)
        line, col = self.source.line_col(span.start)
        end_line, end_col = self.source.line_col(max(span.end, span.start))
        diag = Diagnostic(
            code=key,
            severity=Severity.WARNING if entry.is_warning else Severity.ERROR,
            message=message,
            line=line,
            col=col,
            end_line=end_line,
            end_col=end_col,
            hint=hint if hint is not None else tmpl_hint,
            fix=fix,
            span=span,
        )
        self._items.append(diag)
        return diag

    def extend(self, diags: Iterable[Diagnostic]) -> None:
        """Append already-built diagnostics."""
        self._items.extend(diags)

    def has_code_prefix(self, *prefixes: str) -> bool:
        """True if any collected code starts with one of ``prefixes`` (e.g. ``"E01"``)."""
        return any(d.code.startswith(prefixes) for d in self._items)

    def sorted(self, strict: bool = False) -> tuple[Diagnostic, ...]:
        """All diagnostics by position then code; ``strict`` promotes warnings to errors."""
        items = sorted(set(self._items), key=Diagnostic.sort_key)
        if strict:
            items = [replace(d, severity=Severity.ERROR) for d in items]
        return tuple(items)

    def __len__(self) -> int:
        return len(self._items)


# C0 controls (tab kept), DEL and C1 controls -> one visible code point each, so that an echoed
# source line cannot drive the terminal (ANSI escapes) and carets stay aligned.
_CONTROL_PICTURES = {c: chr(0x2400 + c) for c in range(0x20) if c != 0x09}
_CONTROL_PICTURES[0x7F] = "\u2421"
_CONTROL_PICTURES.update({c: "\ufffd" for c in range(0x80, 0xA0)})


def _cells(ch: str) -> int:
    """Terminal columns ``ch`` takes: 2 for East Asian wide and fullwidth characters (``名``,
    ``Ｏ``; Unicode UAX #11), 0 for combining marks, else 1, so carets line up under them."""
    if unicodedata.combining(ch):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def caret_line(text: str, col: int, width: int) -> str:
    """The line under a shown source line ``text``: padding to column ``col`` (1-based, in code
    points; tabs kept as tabs so they line up alike) then carets over ``width`` code points, both
    in terminal cells (:func:`_cells`), at least one caret."""
    pad = "".join("\t" if ch == "\t" else " " * _cells(ch) for ch in text[: col - 1])
    return pad + "^" * max(1, sum(_cells(ch) for ch in text[col - 1: col - 1 + width]))


def render_human(diags: Sequence[Diagnostic], source: SourceFile) -> str:
    """Human rendering: ``path:line:col: severity[CODE]: message``, source line, carets, hint.

    Carets cover the span's terminal cells (at least one; to line end when the span is multi-line;
    a wide character such as ``名`` takes two, :func:`_cells`). A line
    longer than :data:`EXCERPT_WIDTH` is cut to a window around the carets (:func:`source_excerpt`). Control
    characters in the echoed source line are shown as Unicode control pictures (one code point
    each, so columns are unchanged) and never reach the terminal raw.
    """
    out: list[str] = []
    for d in diags:
        out.append(f"{source.path}:{d.line}:{d.col}: {d.severity.value}[{d.code}]: {d.message}")
        shown, col, width = source_excerpt(source, d.line, d.col, d.end_line, d.end_col)
        text = shown.translate(_CONTROL_PICTURES)
        gutter = str(d.line)
        out.append(f"{gutter} | {text}")
        out.append(f"{' ' * len(gutter)} | {caret_line(text, col, width)}")
        if d.hint:
            out.append(f"hint: {d.hint}")
    return "\n".join(out)


def render_repair(diags: Sequence[Diagnostic]) -> str:
    """Repair format, one line each: ``Line 12, Col 9: error[E0401] msg (hint: ...)``."""
    lines = []
    for d in diags:
        tail = f" (hint: {d.hint})" if d.hint else ""
        lines.append(f"Line {d.line}, Col {d.col}: {d.severity.value}[{d.code}] {d.message}{tail}")
    return "\n".join(lines)


def render_json(diags: Sequence[Diagnostic]) -> str:
    """The spec's JSON list, as text."""
    return json.dumps([d.to_json() for d in diags], ensure_ascii=False)
