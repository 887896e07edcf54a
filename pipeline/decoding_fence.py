"""Where a ```vox block ends: one rule for the decoder, the eval's extractor and ``vox chat``.

The constrained decoder ends a block at the first fence close that is not inside a ``//``
comment or a string literal on its line (:func:`pipeline.decoding_layout.fence_close`: the
grammar lexes those as text, and Vox has no other use for backticks). The eval's extractor
(:func:`vox_blocks`, used by :mod:`pipeline.eval_scoring`), its stopping criterion
(:func:`first_block_closed`, used by :mod:`pipeline.decoding_criteria`) and ``vox chat``'s
extractor (:mod:`serving.extract`) apply the same rule to finished text through
:func:`closing_fence`, so a block whose comment or string holds ```` ``` ```` is read whole
everywhere, and a fence right after the code on its line (``}`` then the fence) ends it everywhere.
"""

from __future__ import annotations

import re
from typing import Final

from pipeline.decoding_layout import fence_close

#: the fence the decoder writes (and the only one :func:`pipeline.decoding_layout.fence_close` knows)
BACKTICKS: Final = "```"
#: a block's opening fence line (``\Z``: an opening cut before its newline), as the grammar writes it
OPEN: Final = re.compile(r"```vox[ \t]*(?:\n|\Z)")
_RUN: Final = re.compile(r"`+|~+")


def closing_fence(body: str, fence: str = BACKTICKS) -> int:
    """Offset in ``body`` (the text after an opening fence's line) of the fence that closes the
    block: the first run of at least ``len(fence)`` ``fence[0]`` characters (backticks or tildes)
    not inside a ``//`` comment or a string literal on its line; ``-1`` when the block is open.

    Runs that cannot close this fence (shorter ones, the other character) are blanked out, keeping
    every offset, before :func:`pipeline.decoding_layout.fence_close` applies the rule.

    Raises:
        ValueError: ``fence`` is not three or more backticks or tildes.
    """
    if len(fence) < 3 or fence.strip(fence[0]) or fence[0] not in "`~":
        raise ValueError(f"not a code fence: {fence!r}")
    if fence == BACKTICKS:  # every run of 3+ backticks closes it: the decoder's rule as is
        return fence_close(body)

    def blank(run: re.Match[str]) -> str:
        text = run.group(0)
        return BACKTICKS[0] * len(text) if text[0] == fence[0] and len(text) >= len(fence) else "\x00" * len(text)

    return fence_close(_RUN.sub(blank, body))


def vox_blocks(text: str) -> tuple[list[str], bool]:
    """The code of every ```vox block of ``text`` in order, and whether the last one is open.

    A block opens with a ```vox line and ends at the decoder's fence close (:func:`closing_fence`:
    the first ```` ``` ```` not inside a ``//`` comment or a string literal on its line, mid-line
    too); an unterminated block (generation cut
    off) runs to the end of the text. An opening fence cut before its newline is no block, but
    leaves the text open.
    """
    blocks: list[str] = []
    pos = 0
    while (m := OPEN.search(text, pos)) is not None:
        if not m.group(0).endswith("\n"):  # "```vox" at the very end: cut inside the opening line
            return blocks, True
        body = text[m.end():]
        end = closing_fence(body)
        if end < 0:
            blocks.append(body)
            return blocks, True
        blocks.append(body[:end])
        pos = m.end() + end + len(BACKTICKS)
    return blocks, False


def open_block(text: str) -> str | None:
    """The code of the ```vox block open at the end of ``text`` (everything after its opening
    ```vox, the rest of the fence line included), or ``None`` when no block is open. Blocks
    are followed from the start: a ```vox inside a block's string or comment is text, not a new
    block, and backticks there do not close it (:func:`pipeline.decoding_layout.fence_close`).
    The decoder's view while a block grows (the name mask); :func:`vox_blocks` reads finished text.
    """
    fence = BACKTICKS + "vox"
    at = text.find(fence)
    while at >= 0:
        body = text[at + len(fence):]
        close = fence_close(body)
        if close < 0:
            return body
        at = text.find(fence, at + len(fence) + close + len(BACKTICKS))
    return None


def first_block_closed(text: str) -> bool:
    """True when ``text`` holds a ```vox block whose fence has closed (:func:`closing_fence`)."""
    m = OPEN.search(text)
    return m is not None and m.group(0).endswith("\n") and closing_fence(text[m.end():]) >= 0


def after_first_block(text: str) -> str | None:
    """What ``text`` holds after its first ```vox block's closing fence (``""`` right after it),
    or ``None`` while no block has closed (:func:`first_block_closed`)."""
    m = OPEN.search(text)
    if m is None or not m.group(0).endswith("\n"):
        return None
    close = closing_fence(text[m.end():])
    return None if close < 0 else text[m.end() + close + len(BACKTICKS):]
