"""The system prompt's bound on prose after the program, as a ``transformers`` LogitsProcessor.

The system prompt (``pipeline/prompts/system_prompt.txt``) asks: "After the block, add at most two
short sentences. Do not repeat the code." A model that keeps talking past that writes nothing the
user asked for, and on a local model every such token is paid for: in a new-user trial the tiny
default answered ``vox chat``'s best-of-8 with 8 x ~900 tokens, mostly prose after the block,
70 s for one request, and the long answers left no room in its context for the repair turn.

:class:`ProseCap` ends a sequence (forces an EOS id) once the text after its first ```vox block's
closing fence holds :data:`SENTENCES` sentence ends or a blank line after some prose, or
:data:`MAX_TOKENS` tokens. Before the block closes it does nothing (prose before a block, in
``response`` mode, stays free), and a sequence without a block is never touched. ``vox serve``
applies it with the Vox constraint of ``first`` and ``response`` answers
(``"vox_constrained": false`` turns both off); in ``code`` mode the closed block ends the answer
anyway.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Final

from transformers import LogitsProcessor

from pipeline.decoding_fence import after_first_block

#: sentences allowed after the block (the system prompt: "at most two short sentences")
SENTENCES: Final = 2
#: tokens allowed after the block whatever the text (two short sentences are ~40 tokens)
MAX_TOKENS: Final = 96
_SENTENCE_END: Final = re.compile(r"[.!?](?=\s)")
_BLANK_AFTER_PROSE: Final = re.compile(r"\S[^\n]*\n[ \t]*\n")


def prose_done(after: str, tokens: int) -> bool:
    """Whether the prose ``after`` a block (``tokens`` tokens of it) has reached the bound: two
    sentence ends (a ``.``, ``!`` or ``?`` before whitespace), a blank line after some prose, or
    :data:`MAX_TOKENS` tokens."""
    return (tokens >= MAX_TOKENS or len(_SENTENCE_END.findall(after)) >= SENTENCES
            or _BLANK_AFTER_PROSE.search(after) is not None)


class ProseCap(LogitsProcessor):
    """Force an EOS id once a sequence's prose after its first block reaches the bound (module docstring).

    Args:
        pieces: each token id's text (special tokens ``""``):
            :attr:`pipeline.decoding_tokens.TokenTable.pieces`.
        rows: sequences in the batch.
        prompt_len: padded prompt length of the batch.
        eos_ids: the ids that end a sequence (the first one is forced).

    Attributes:
        capped: rows that were ended here.
    """

    def __init__(self, pieces: Sequence[str], rows: int, prompt_len: int, eos_ids: Sequence[int]) -> None:
        if not eos_ids:
            raise ValueError("ProseCap needs an EOS id to force")
        self.pieces, self.prompt_len, self.eos = pieces, prompt_len, int(sorted(eos_ids)[0])
        self._texts = [""] * rows
        self._seen = 0
        self._tail: list[tuple[int, int] | None] = [None] * rows  # (text offset, generated count) at the fence's end
        self.capped: set[int] = set()

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        count = int(input_ids.shape[1]) - self.prompt_len
        rows = min(len(self._texts), int(scores.shape[0]))
        if count > self._seen:
            new = input_ids[:rows, self.prompt_len + self._seen:].tolist()
            for row in range(rows):
                self._texts[row] += "".join(self.pieces[t] if 0 <= t < len(self.pieces) else "" for t in new[row])
            self._seen = count
        for row in range(rows):
            if row in self.capped:
                continue
            text, tail = self._texts[row], self._tail[row]
            if tail is None:
                after = after_first_block(text)
                if after is None:
                    continue
                tail = self._tail[row] = (len(text) - len(after), count)
            if prose_done(text[tail[0]:], count - tail[1]):
                self.capped.add(row)
                scores[row] = float("-inf")
                scores[row, self.eos] = 0.0
        return scores
