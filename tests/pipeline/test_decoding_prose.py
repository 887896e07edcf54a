"""The bound on prose after the block (pipeline.decoding_prose): the system prompt's "at most two
short sentences", enforced by forcing EOS; nothing before the block closes."""

from __future__ import annotations

import torch

from pipeline.decoding_prose import MAX_TOKENS, ProseCap, prose_done

EOS = 0
WORDS = ["<eos>", "```vox\n", "print(1)\n", "```", "\n", "Done", ". ", "It prints", " 1", "! ", "\n\n", "More", " x",
         "Say", " 3.5", " and go."]
ID = {w: i for i, w in enumerate(WORDS)}


def run(words: list[str], rows: int = 1) -> tuple[ProseCap, list[bool]]:
    """Feed ``words`` one token per step (every row alike); per step, whether EOS was forced."""
    pieces = [""] + WORDS[1:]
    cap = ProseCap(pieces, rows, prompt_len=1, eos_ids=[EOS])
    forced = []
    ids = [7]
    for word in [*words, None]:
        scores = torch.zeros(rows, len(WORDS))
        out = cap(torch.tensor([ids] * rows), scores)
        forced.append(bool(torch.isinf(out[0]).sum() == len(WORDS) - 1 and out[0, EOS] == 0))
        if word is not None:
            ids.append(ID[word])
    return cap, forced


def test_two_sentences_after_the_block_end_the_answer() -> None:
    cap, forced = run(["```vox\n", "print(1)\n", "```", "\n", "Done", ". ", "It prints", " 1", "! "])
    assert forced == [False] * 9 + [True] and cap.capped == {0}
    _, one = run(["```vox\n", "print(1)\n", "```", "\n", "Done", ". ", "It prints"])
    assert not any(one)  # one sentence and a half: goes on


def test_nothing_before_the_block_closes_and_no_block_never() -> None:
    _, before = run(["Done", ". ", "It prints", " 1", "! ", "```vox\n", "print(1)\n"])
    assert not any(before)  # prose before the block (response mode) is free
    _, numbers = run(["```vox\n", "print(1)\n", "```", "\n", "Say", " 3.5", " and go."])
    assert not any(numbers)  # `3.5` is no sentence end; `go.` at the end is not one yet


def test_a_blank_line_after_prose_or_the_token_limit_ends_it() -> None:
    _, blank = run(["```vox\n", "print(1)\n", "```", "\n", "More", "\n\n"])
    assert blank[-1] and not any(blank[:-1])
    assert prose_done("", MAX_TOKENS) and not prose_done("", MAX_TOKENS - 1)
    assert prose_done("One. Two. ", 5) and not prose_done("One. Two", 5)
