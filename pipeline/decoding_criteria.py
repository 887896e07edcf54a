"""Stopping criteria and logits processors that plug into ``model.generate``.

:class:`EventStop` ends generation when a :class:`threading.Event` is set (client disconnect,
a stop string found by the consumer, a closed iterator); :class:`RowsStop` ends single rows of a
batch (one of ``n`` choices done). :class:`FirstBlockClosed` ends a sequence once its first
```vox block has closed (evaluation scores code, so prose after it is not generated; where a
block closes is :func:`pipeline.decoding_fence.first_block_closed`, the decoder's and the
extractor's rule). :class:`RecordLogits` hands each step's raw logits to a callback (cache
parity tests). All are ``transformers`` classes, so they compose with the library's own criteria.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from transformers import LogitsProcessor, StoppingCriteria

from pipeline.decoding_fence import first_block_closed


class EventStop(StoppingCriteria):
    """Stop every sequence once ``event`` is set (checked after each generated token)."""

    def __init__(self, event: threading.Event) -> None:
        self.event = event

    def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
        import torch

        return torch.full((input_ids.shape[0],), self.event.is_set(), dtype=torch.bool, device=input_ids.device)


class RowsStop(StoppingCriteria):
    """Stop the rows whose index the caller has put in ``rows`` (e.g. one of ``n`` choices that
    met a stop string); the library pads a stopped row from then on, the others go on."""

    def __init__(self, rows: set[int]) -> None:
        self.rows = rows

    def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
        import torch

        done = [row in self.rows for row in range(input_ids.shape[0])]
        return torch.tensor(done, dtype=torch.bool, device=input_ids.device)


class FirstBlockClosed(StoppingCriteria):
    """Stop a sequence once its first ```vox block has closed.

    Reads only the text generated after ``prompt_len`` (the padded prompt length of the batch),
    kept per row and grown by the text of each new token (each id decoded once, then looked up);
    a sequence found done stays done, so each step reads only the rows still running. The fence
    is ASCII, so reading a multi-byte character token by token never moves where a block closes.
    """

    def __init__(self, tokenizer: Any, prompt_len: int) -> None:
        self.tokenizer, self.prompt_len = tokenizer, prompt_len
        self._done: set[int] = set()
        self._texts: dict[int, str] = {}
        self._count = 0  # generated tokens already read (every row of the batch has as many)
        self._pieces: dict[int, str] = {}

    def _piece(self, token: int) -> str:
        piece = self._pieces.get(token)
        if piece is None:
            piece = self._pieces[token] = self.tokenizer.decode([token], skip_special_tokens=True)
        return piece

    def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
        import torch

        count = int(input_ids.shape[1]) - self.prompt_len
        new = input_ids[:, self.prompt_len + self._count:].tolist() if count > self._count else None
        self._count = max(self._count, count)
        done = []
        for row in range(input_ids.shape[0]):
            if row not in self._done and new is not None:
                text = self._texts.get(row, "") + "".join(self._piece(t) for t in new[row])
                self._texts[row] = text
                if first_block_closed(text):
                    self._done.add(row)
            done.append(row in self._done)
        return torch.tensor(done, dtype=torch.bool, device=input_ids.device)


class RecordLogits(LogitsProcessor):
    """Pass each step's logits (row 0, float32 ``[vocab]``) to ``callback``; scores unchanged.

    Put it first in the processor list to see the model's raw logits.
    """

    def __init__(self, callback: Callable[[Any], None]) -> None:
        self.callback = callback

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        self.callback(scores[0].detach().clone())
        return scores
