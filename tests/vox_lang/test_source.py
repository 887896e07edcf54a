"""Positions: :class:`~vox_lang.source.SourceFile` maps offsets to 1-based line/column and lines
to offsets with its line-start index, agreeing with a plain split of the text at every offset,
line boundaries included."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from vox_lang.diagnostics import excerpt, source_excerpt
from vox_lang.source import SourceFile

#: line ends (``\n``, ``\r\n``, lone and repeated ``\r``), multi-byte and wide characters
TEXTS = st.lists(st.sampled_from(["a", "b", " ", "\t", "\n", "\r", "\r\n", "é", "漢", "😀"]), max_size=60).map("".join)
#: long lines too, so that the window (120 code points) is cut at both ends
LONG = st.lists(st.sampled_from(["a" * 50, "é" * 70, "\n", "\r\n", "\r", "x"]), max_size=12).map("".join)


def naive_line_col(text: str, offset: int) -> tuple[int, int]:
    offset = max(0, min(offset, len(text)))
    before = text[:offset]
    return before.count("\n") + 1, offset - (before.rfind("\n") + 1) + 1


@settings(max_examples=300, deadline=None)
@given(TEXTS)
def test_line_col_agrees_with_a_plain_count_at_every_offset(text: str) -> None:
    src = SourceFile(text)
    for offset in range(-1, len(text) + 2):
        assert src.line_col(offset) == naive_line_col(text, offset)


@settings(max_examples=300, deadline=None)
@given(TEXTS)
def test_line_bounds_and_text_agree_with_split(text: str) -> None:
    src = SourceFile(text)
    lines = text.split("\n")
    assert src.line_count == len(lines)
    for number, line in enumerate(lines, start=1):
        start, end = src.line_bounds(number)
        assert src.line_text(number) == text[start:end] == line.rstrip("\r")
        assert src.line_col(start) == (number, 1)  # a line's first offset is its column 1
        assert src.line_bounds(number) == (start, end)  # memoised, same answer
    for outside in (0, -1, len(lines) + 1):
        assert src.line_bounds(outside) == (0, 0) and src.line_text(outside) == ""


@settings(max_examples=300, deadline=None)
@given(LONG, st.data())
def test_source_excerpt_is_the_excerpt_of_the_whole_line(text: str, data: st.DataObject) -> None:
    src = SourceFile(text)
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    line, col = src.line_col(start)
    end_line, end_col = src.line_col(end)
    whole = src.line_text(line)
    width = max(1, end_col - col) if end_line == line else max(1, len(whole) - col + 1)
    assert source_excerpt(src, line, col, end_line, end_col) == excerpt(whole, col, width)
