"""The system prompt's bounds on prose around the program, as a ``transformers`` LogitsProcessor.

The system prompt (``pipeline/prompts/system_prompt.txt``) asks: "After the block, add at most two
short sentences. Do not repeat the code." A model that keeps talking past that writes nothing the
user asked for, and on a local model every such token is paid for: in a new-user trial the tiny
default answered ``vox chat``'s best-of-8 with 8 x ~900 tokens, mostly prose after the block,
70 s for one request, and the long answers left no room in its context for the repair turn.

:class:`ProseCap` ends a sequence (forces an EOS id) once the text after its first ```vox block's
closing fence holds :data:`SENTENCES` sentence ends or a blank line after some prose, or
:data:`MAX_TOKENS` tokens. Before the block closes it does nothing (prose before a block, in
``response`` mode, stays free), and a sequence without a block is never touched. After the block
it also refuses the tokens that would write a line of only closing brackets (:func:`closers`):
leftover code, not prose; EOS takes their weight, so the answer ends where that code would start
(a new-user trial's constrained answer ended ``"```\n  }\n}"``, streamed or whole alike).
``vox serve`` applies it with the Vox constraint of ``first`` and ``response`` answers
(``"vox_constrained": false`` turns both off); in ``code`` mode the closed block ends the answer
anyway.

**Before the block.** Where the last user message itself asks for a ```vox block
(:func:`asks_for_block`: ``vox chat``'s repair, missing-item and failed-test turns end "reply with the
complete corrected program in one ```vox block"), the system prompt wants one sentence naming the
fault, then the program. There, once the prose before the first block has a whole line, or
:data:`SENTENCES` sentence ends, or :data:`MAX_BEFORE` tokens (:func:`before_done`), the opening
fence is forced (its tokens only, as far as the grammar allows them). In new-user trials repair
answers opened with 7 to 17 lines of loose code (no sentence end in them) before their block. A conversation that asks
no block (a question about Vox) keeps free prose: it may need no program at all.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any, Final

from transformers import LogitsProcessor

from pipeline.decoding_declare import TokenIndex
from pipeline.decoding_fence import OPEN, after_first_block
from pipeline.decoding_request import user_texts

#: sentences allowed after the block (the system prompt: "at most two short sentences")
SENTENCES: Final = 2
#: tokens allowed after the block whatever the text (two short sentences are ~40 tokens)
MAX_TOKENS: Final = 96
#: tokens of prose allowed before the block of an answer that must hold one (one sentence naming
#: the fault is ~10-30 tokens)
MAX_BEFORE: Final = 64
#: the opening fence forced when the prose before a block is done (the grammar's FENCE)
FENCE: Final = "```vox\n"
#: what a user message that asks for a block says: "(reply with ...) in one ```vox block", as every
#: repair turn of vox chat does (serving.chat_repair). A message that only quotes a fenced program
#: ("I found this: ```vox ... ``` Explain it, no code") asks for none.
_ASKS_BLOCK: Final = re.compile(r"\bin (?:one|a|a single) ```vox (?:fenced )?block\b", re.IGNORECASE)
#: a sentence end: ``.``, ``!`` or ``?`` before whitespace, or run into the next sentence with no
#: space (``"the sum.It also"``, ``"done!Then"``: a new-user trial's prose went on past two of
#: them); ``3.5``, ``e.g.`` mid-sentence and ``list.len`` are no sentence end
_SENTENCE_END: Final = re.compile(r"[.!?](?=\s|[A-Z][a-z])")
_BLANK_AFTER_PROSE: Final = re.compile(r"\S[^\n]*\n[ \t]*\n")
_LINE: Final = re.compile(r"\S[^\n]*\n")
#: the characters of a line that is leftover code after the block (``  }``, ``})``, ``]]``)
_CLOSING: Final = frozenset(")]}")


def prose_done(after: str, tokens: int) -> bool:
    """Whether the prose ``after`` a block (``tokens`` tokens of it) has reached the bound: two
    sentence ends (a ``.``, ``!`` or ``?`` before whitespace or a capitalized word), a blank line after some prose, or
    :data:`MAX_TOKENS` tokens."""
    return (tokens >= MAX_TOKENS or len(_SENTENCE_END.findall(after)) >= SENTENCES
            or _BLANK_AFTER_PROSE.search(after) is not None)


def before_done(before: str, tokens: int) -> bool:
    """Whether the prose ``before`` a block that must come (``tokens`` tokens of it) is done: it
    holds a whole line (some text, then a line break), :data:`SENTENCES` sentence ends, or
    :data:`MAX_BEFORE` tokens."""
    return tokens >= MAX_BEFORE or _LINE.search(before) is not None or len(_SENTENCE_END.findall(before)) >= SENTENCES


def bracket_line(segment: str) -> bool:
    """Whether ``segment`` (a line or a start of one) holds closing brackets and nothing else but
    spaces and tabs: leftover code after the block (``"  }"``), never prose."""
    stripped = segment.strip(" \t")
    return bool(stripped) and set(stripped) <= _CLOSING


def closers(pieces: Sequence[str]) -> tuple[list[int], list[int]]:
    """The token ids that write a line of only closing brackets after the block: ``(at_start,
    anywhere)``. ``at_start`` ids do so where the line so far is blank (their text up to its first
    line break is brackets: ``"}"``, ``" })"``); ``anywhere`` ids wherever they come (a line of
    their text after one of its line breaks is brackets: ``"\n}"``)."""
    at_start: list[int] = []
    anywhere: list[int] = []
    for i, piece in enumerate(pieces):
        first, *lines = piece.split("\n")
        if any(bracket_line(line) for line in lines):
            anywhere.append(i)
        elif bracket_line(first):
            at_start.append(i)
    return at_start, anywhere


def asks_for_block(messages: Iterable[Any]) -> bool:
    """Whether the last user message of ``messages`` asks for its answer in a ```vox block
    ("... in one ```vox block"), as every repair turn of ``vox chat`` does; quoting a fenced
    program is no such request."""
    users = user_texts(messages)
    return bool(users) and _ASKS_BLOCK.search(users[-1]) is not None


def fence_rest(text: str) -> str:
    """What is still to be written of the opening fence when it is forced after ``text``: the
    rest of :data:`FENCE` when ``text`` ends in a start of it at a line start, the whole fence at
    a line start, else a newline and the fence."""
    line = text[text.rfind("\n") + 1:]
    if FENCE.startswith(line) and line:
        return FENCE[len(line):]
    return FENCE if not text or text.endswith("\n") else "\n" + FENCE


class ProseCap(LogitsProcessor):
    """Force an EOS id once a sequence's prose after its first block reaches the bound (module docstring).

    Args:
        pieces: each token id's text (special tokens ``""``):
            :attr:`pipeline.decoding_tokens.TokenTable.pieces`.
        rows: sequences in the batch.
        prompt_len: padded prompt length of the batch.
        eos_ids: the ids that end a sequence (the first one is forced).
        index: the tokenizer's :class:`~pipeline.decoding_declare.TokenIndex`
            (:attr:`pipeline.decoding_tokens.TokenTable.index`), needed to force a fence.
        before: rows whose answer must hold a block (:func:`asks_for_block`): prose before it is
            bounded too (the module docstring). Empty: none.
        closing: :func:`closers` of ``pieces`` (pass it when built once per tokenizer, as
            ``vox serve`` does); default: built here.

    Attributes:
        before_rows: the rows whose prose before the block is bounded (``before``, when an
            ``index`` is given).
        capped: rows that were ended here.
        fenced: rows whose opening fence was forced.
    """

    def __init__(self, pieces: Sequence[str], rows: int, prompt_len: int, eos_ids: Sequence[int],
                 index: TokenIndex | None = None, before: Iterable[int] = (),
                 closing: tuple[Sequence[int], Sequence[int]] | None = None) -> None:
        if not eos_ids:
            raise ValueError("ProseCap needs an EOS id to force")
        self.pieces, self.prompt_len, self.eos = pieces, prompt_len, int(sorted(eos_ids)[0])
        self.index = index
        self.before_rows = frozenset(before) if index is not None else frozenset()
        self._before = set(self.before_rows)  # rows whose fence may still be forced
        self._forcing: dict[int, tuple[str, int]] = {}  # row -> (fence text to write, offset where forcing began)
        self._texts = [""] * rows
        self._seen = 0
        self._tail: list[tuple[int, int] | None] = [None] * rows  # (text offset, generated count) at the fence's end
        self.capped: set[int] = set()
        self.fenced: set[int] = set()
        self._closing = closing if closing is not None else closers(pieces)
        self._closing_ids: tuple[Any, Any] | None = None  # the two id lists as tensors on the logits' device

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
            if row in self._before and tail is None:
                self._fence(row, text, count, scores)
            if tail is None:
                after = after_first_block(text)
                if after is None:
                    continue
                tail = self._tail[row] = (len(text) - len(after), count)
            after = text[tail[0]:]
            if prose_done(after, count - tail[1]):
                self.capped.add(row)
                scores[row] = float("-inf")
                scores[row, self.eos] = 0.0
            else:
                self._refuse_brackets(row, after, scores)
        return scores

    def _refuse_brackets(self, row: int, after: str, scores: Any) -> None:
        """Refuse the tokens that would make a line of only closing brackets after the block (the
        module docstring): EOS takes their weight."""
        import torch

        if self._closing_ids is None:
            first, inner = ([i for i in ids if i < scores.shape[1]] for ids in self._closing)
            self._closing_ids = (torch.tensor(first, dtype=torch.long, device=scores.device),
                                 torch.tensor(inner, dtype=torch.long, device=scores.device))
        at_start, anywhere = self._closing_ids
        line_blank = not after[after.rfind("\n") + 1:].strip(" \t")
        refused = torch.cat([at_start, anywhere]) if line_blank else anywhere
        if not len(refused):
            return
        # Their weight goes to EOS: where the model would write leftover code, the answer ends
        # (masking them alone let it write other leftover code, to the token limit).
        ends = torch.cat([refused, refused.new_tensor([self.eos])])
        scores[row, self.eos] = torch.logsumexp(scores[row, ends], dim=0)
        scores[row, refused] = float("-inf")

    def _fence(self, row: int, text: str, count: int, scores: Any) -> None:
        """Force ``row``'s opening fence once its prose before the block is done (module docstring)."""
        import torch

        forcing = self._forcing.get(row)
        if forcing is None:
            if OPEN.search(text) is not None or not before_done(text, count):
                return
            forcing = self._forcing[row] = (fence_rest(text), len(text))
        target, start = forcing
        written = text[start:]
        if OPEN.search(text) is not None or len(written) >= len(target) or not target.startswith(written):
            self._before.discard(row)  # the fence is open (or the text left it): done
            return
        assert self.index is not None  # rows are only kept in _before with an index
        ids = [i for i in self.index.continuing(target[len(written):]) if i < scores.shape[1]]
        keep = torch.zeros(scores.shape[1], dtype=torch.bool, device=scores.device)
        keep[ids] = True
        keep &= torch.isfinite(scores[row])
        if not bool(keep.any()):
            self._before.discard(row)  # the grammar allows no fence token here: leave the row be
            return
        scores[row] = scores[row].masked_fill(~keep, float("-inf"))
        self.fenced.add(row)
