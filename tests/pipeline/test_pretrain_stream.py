"""The pretraining stream: fresh names per program, every program passes the gate, no repeats."""

from __future__ import annotations

import random

import pytest

import vox_lang
from pipeline.base_model import stream_blocks, train_tokenizer
from pipeline.generators.themes import THEMES, theme_words
from pipeline.pretrain_stream import fresh_theme, stream_document
from pipeline.prompt import vox_blocks


def test_fresh_themes_never_reuse_corpus_theme_words_or_reserved_names() -> None:
    corpus_words = set().union(*(theme_words(t) for t in THEMES))
    seen = set()
    for i in range(200):
        t = fresh_theme(random.Random(i))
        names = {t.e, t.es, t.label, t.count, t.amount, t.actor.lower(), *(v.name.lower() for v in t.variants)}
        assert len(names) == 9 and not names & corpus_words and not names & set(vox_lang.lexer.KEYWORDS)
        seen.add(t.E)
    assert len(seen) >= 195  # drawn anew for (almost) every program


@pytest.mark.parametrize("start", [0, 1000])
def test_stream_programs_pass_the_strict_gate(start: int) -> None:
    for i in range(start, start + 40):
        doc = stream_document(3, i)
        prompt, answer = doc.split("\n\n", 1)
        [code] = vox_blocks(answer)
        result = vox_lang.check(code, strict=True)
        assert result.ok, (doc, [d.code for d in result.errors])


def test_stream_blocks_read_the_train_split_once_then_fresh_documents() -> None:
    train = [f"Write a function number {i}.\n\nfn f{i}() to int {{ ret {i} }}" for i in range(30)]
    tok = train_tokenizer(train + [stream_document(0, i) for i in range(50)], 400)
    data = stream_blocks(tok, train, n_blocks=40, block=64, seed=0, train_share=0.25)
    assert tuple(data.shape) == (40, 64)
    text = tok.decode(data.flatten().tolist())
    assert sum(f"fn f{i}()" in text for i in range(30)) <= 30 and "```vox" in text  # stream documents fill the rest
    assert len({tuple(row.tolist()) for row in data}) == 40  # no block repeats
