"""Source text and spans: offsets are stored, line/column computed only when rendering.

Positions are 1-based code-point line/column, end exclusive (spec §6).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Final

#: the byte-order mark: skipped at the start of a file (:func:`vox_lang.api.decode_source`),
#: reported anywhere else (E0101)
BOM: Final = "\ufeff"


@dataclass(frozen=True, slots=True, init=False)
class Span:
    """Half-open code-point offsets ``[start, end)`` into one :class:`SourceFile`."""

    start: int
    end: int

    def __init__(self, start: int, end: int) -> None:
        # The frozen dataclass's generated __init__ sets each field through object.__setattr__,
        # which made a Span (one per token and per tree node) cost twice a plain object; the
        # slots' own descriptors set them as well, at a third less.
        _set_start(self, start)
        _set_end(self, end)

    def cover(self, other: Span) -> Span:
        """Return the smallest span covering ``self`` and ``other``."""
        return Span(min(self.start, other.start), max(self.end, other.end))


_set_start: Final = Span.__dict__["start"].__set__
_set_end: Final = Span.__dict__["end"].__set__


@dataclass(frozen=True)
class SourceFile:
    """A decoded source text with a line-start index.

    Attributes:
        text: the whole file as ``str`` (code points).
        path: display name used in renderings (``<stdin>``, ``shop.vox``...).
    """

    text: str
    path: str = "<input>"
    _line_starts: tuple[int, ...] = field(init=False, repr=False, compare=False)
    #: line → end offset without terminator, memo of :meth:`line_bounds` (a line of a million
    #: ``\r`` would otherwise be rescanned for each of its million E0101s)
    _line_ends: dict[int, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        starts = [0]
        text = self.text
        i = text.find("\n")
        while i != -1:
            starts.append(i + 1)
            i = text.find("\n", i + 1)
        object.__setattr__(self, "_line_starts", tuple(starts))
        object.__setattr__(self, "_line_ends", {})

    def line_col(self, offset: int) -> tuple[int, int]:
        """Map a code-point offset to a 1-based ``(line, col)``; offsets past the end clamp."""
        offset = max(0, min(offset, len(self.text)))
        line = bisect.bisect_right(self._line_starts, offset) - 1
        return line + 1, offset - self._line_starts[line] + 1

    def line_text(self, line: int) -> str:
        """Return 1-based ``line`` without its line terminator (``""`` if out of range)."""
        start, end = self.line_bounds(line)
        return self.text[start:end]

    def line_bounds(self, line: int) -> tuple[int, int]:
        """Code-point offsets ``[start, end)`` of 1-based ``line`` without its terminator (the
        ``\n`` and every ``\r`` before it); ``(0, 0)`` if out of range.

        Renderers slice a window of a long line from these instead of copying the whole line
        for each diagnostic on it (which made echoing N diagnostics of one 1 MB line cost N MB).
        """
        if line < 1 or line > len(self._line_starts):
            return 0, 0
        start = self._line_starts[line - 1]
        end = self._line_ends.get(line)
        if end is None:
            text = self.text
            end = self._line_starts[line] - 1 if line < len(self._line_starts) else len(text)
            while end > start and text[end - 1] == "\r":
                end -= 1
            self._line_ends[line] = end
        return start, end

    @property
    def line_count(self) -> int:
        """Number of lines (a trailing newline opens one more, empty, line)."""
        return len(self._line_starts)
