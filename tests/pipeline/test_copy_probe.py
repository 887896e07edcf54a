"""Name-copying probe (pipeline.copy_probe): which spans count, and the accounting on fake models."""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

import pytest
import torch

from pipeline.base_model import train_tokenizer
from pipeline.copy_probe import CopyProbe, common_words, copies_names, name_spans, probe_copying
from pipeline.pretrain_stream import stream_document


def test_common_words_are_the_ones_in_many_documents() -> None:
    docs = ["let tavori = 1", "let bamuts = 2", "let kelo = 3", "print(x)"]
    assert common_words(docs, share=0.5) == frozenset({"let"})


def test_name_spans_mark_repeats_and_skip_common_and_short_words() -> None:
    text = "Write `bamuts_total` over bamuts.\nfn bamuts_total(xs: int) { ret xs }"
    spans = [(text[a:b], rep) for a, b, rep in name_spans(text, frozenset({"Write", "over", "total"}))]
    assert spans == [("bamuts", False), ("bamuts", True), ("bamuts", True)]


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    return train_tokenizer([stream_document(0, i) for i in range(200)], 600)


class _Oracle(torch.nn.Module):
    """Logits that know the next token exactly when ``copy`` is on and it occurred earlier, else uniform."""

    def __init__(self, vocab: int, copy: bool) -> None:
        super().__init__()
        self.vocab, self.copy = vocab, copy
        self.anchor = torch.nn.Parameter(torch.zeros(1))  # the probe reads the device from a parameter
        self.ids: list[int] = []

    def forward(self, input_ids: torch.Tensor) -> Any:
        ids = input_ids[0].tolist()
        logits = torch.zeros(1, len(ids), self.vocab)
        for t in range(len(ids) - 1):
            if self.copy and ids[t + 1] in ids[: t + 1]:
                logits[0, t, ids[t + 1]] = 50.0
        return SimpleNamespace(logits=logits)


def test_a_copying_model_is_told_apart_from_one_that_does_not_copy(tokenizer: Any) -> None:
    vocab = len(tokenizer)
    uniform = probe_copying(_Oracle(vocab, copy=False), tokenizer, docs=6)
    copier = probe_copying(_Oracle(vocab, copy=True), tokenizer, docs=6)
    assert uniform.first_tokens > 0 and uniform.repeat_tokens > 0
    assert uniform.first_nll == pytest.approx(math.log(vocab)) == uniform.repeat_nll
    assert not uniform.copies and abs(uniform.gain) < 1e-6
    assert copier.repeat_nll < 0.2 and copier.copies and copier.gain > 1.0
    assert (copier.first_tokens, copier.repeat_tokens) == (uniform.first_tokens, uniform.repeat_tokens)


def test_figures_are_json_ready_and_bad_counts_are_refused(tokenizer: Any) -> None:
    empty = CopyProbe(float("nan"), float("nan"), 0, 0, 1)
    assert empty.figures() == {"first_nll": None, "repeat_nll": None, "first_tokens": 0, "repeat_tokens": 0}
    assert copies_names(2.2, 0.02) and not copies_names(4.1, 4.07)
    with pytest.raises(ValueError, match="docs >= 1"):
        probe_copying(_Oracle(len(tokenizer), copy=False), tokenizer, docs=0)
