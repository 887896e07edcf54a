"""The bounds on prose around the block (pipeline.decoding_prose): the system prompt's "at most two
short sentences" after it, enforced by forcing EOS; before it, where the turn asks for a block, by
forcing the opening fence."""

from __future__ import annotations

import math

import pytest
import torch

from pipeline.decoding_prose import MAX_TOKENS, ProseCap, closers, prose_done

EOS = 0
WORDS = ["<eos>", "```vox\n", "print(1)\n", "```", "\n", "Done", ". ", "It prints", " 1", "! ", "\n\n", "More", " x",
         "Say", " 3.5", " and go.", "}", "  })", "\n}", "  "]
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
    # a sentence run into the next one without a space still ends (new-user trial); numbers,
    # member names and abbreviations do not
    assert prose_done("It sums.It also counts.Then", 5) and prose_done("Done!Then it stops? ", 5)
    assert not prose_done("Use list.len or 3.5 here, e.g.the sum", 5)


def test_prose_before_an_asked_block_is_bounded_by_forcing_the_fence() -> None:
    """A turn that asks for a ```vox block (vox chat's repair turns): once the prose before the
    block holds two sentence ends, the opening fence is forced; rows that ask none stay free."""
    from pipeline.decoding_declare import TokenIndex

    pieces = [""] + WORDS[1:]
    cap = ProseCap(pieces, 2, prompt_len=1, eos_ids=[EOS], index=TokenIndex(pieces), before=[0])
    ids = [7]
    for word in ["Done", ". ", "It prints", " 1", "! "]:
        ids.append(ID[word])
    scores = cap(torch.tensor([ids, ids]), torch.zeros(2, len(WORDS)))
    allowed = {WORDS[i] for i in range(len(WORDS)) if bool(torch.isfinite(scores[0, i]))}
    assert allowed == {"\n"} and cap.fenced == {0}  # the fence goes on a line of its own
    assert bool(torch.isfinite(scores[1]).all())  # row 1 asked no block: free
    ids.append(ID["\n"])
    scores = cap(torch.tensor([ids, ids]), torch.zeros(2, len(WORDS)))
    assert {WORDS[i] for i in range(len(WORDS)) if bool(torch.isfinite(scores[0, i]))} == {"```", "```vox\n"}
    ids.append(ID["```vox\n"])
    scores = cap(torch.tensor([ids, ids]), torch.zeros(2, len(WORDS)))
    assert bool(torch.isfinite(scores[0]).all())  # the block is open: the grammar's turn


def test_a_fence_the_grammar_refuses_is_not_forced() -> None:
    from pipeline.decoding_declare import TokenIndex

    pieces = [""] + WORDS[1:]
    cap = ProseCap(pieces, 1, prompt_len=1, eos_ids=[EOS], index=TokenIndex(pieces), before=[0])
    ids = [7] + [ID[w] for w in ["Done", ". ", "It prints", " 1", "! ", "\n"]]
    scores = torch.zeros(1, len(WORDS))
    scores[0, [ID["```vox\n"], ID["```"]]] = float("-inf")  # an earlier mask refuses the fence here
    out = cap(torch.tensor([ids]), scores.clone())
    assert bool(torch.isfinite(out[0, ID["Done"]])) and cap.fenced == set()


def test_fence_rest_and_asks_for_block() -> None:
    from pipeline.decoding_prose import asks_for_block, fence_rest

    assert fence_rest("Fix.") == "\n```vox\n" and fence_rest("Fix.\n") == "```vox\n"
    assert fence_rest("Fix.\n``") == "`vox\n" and fence_rest("") == "```vox\n"
    repair = "The Vox compiler reported 1 error(s)...\nFix every error and reply with the complete corrected " \
             "program in one ```vox block."
    assert asks_for_block([{"role": "user", "content": "Write `f() to int`"}, {"role": "user", "content": repair}])
    assert not asks_for_block([{"role": "user", "content": repair}, {"role": "user", "content": "What is Vox?"}])
    assert not asks_for_block([])
    # quoting a program asks for no block (new-user trial: its explanation was cut to one line)
    quoted = "I found this program:\n```vox\nprint(1)\n```\nExplain what it prints. No code please."
    assert not asks_for_block([{"role": "user", "content": quoted}])
    assert not asks_for_block([{"role": "user", "content": "Answer without any ```vox block."}])


def test_a_line_of_loose_code_before_an_asked_block_is_enough() -> None:
    """Repair answers opened with lines of code and no sentence end before their block: one whole
    line of prose is the bound there (the system prompt's one sentence naming the fault)."""
    from pipeline.decoding_declare import TokenIndex
    from pipeline.decoding_prose import before_done

    pieces = [""] + WORDS[1:]
    cap = ProseCap(pieces, 1, prompt_len=1, eos_ids=[EOS], index=TokenIndex(pieces), before=[0])
    ids = [7, ID["print(1)\n"]]
    scores = cap(torch.tensor([ids]), torch.zeros(1, len(WORDS)))
    assert {WORDS[i] for i in range(len(WORDS)) if bool(torch.isfinite(scores[0, i]))} == {"```", "```vox\n"}
    assert before_done("The fault is `c`.\n", 6) and not before_done("The fault is `c`", 5)
    assert before_done("x", 64) and not before_done("\n\n", 2)  # blank lines alone are no prose


def refused_after(words: list[str]) -> set[str]:
    """The words refused (masked) for row 0 right after ``words``."""
    pieces = [""] + WORDS[1:]
    cap = ProseCap(pieces, 1, prompt_len=1, eos_ids=[EOS])
    ids = [7]
    for word in [*words, None]:
        out = cap(torch.tensor([ids]), torch.zeros(1, len(WORDS)))
        if word is not None:
            ids.append(ID[word])
    return {WORDS[i] for i in range(len(WORDS)) if torch.isinf(out[0, i])}


def test_a_line_of_only_closing_brackets_after_the_block_is_refused() -> None:
    """A new-user trial's constrained answer ended ``"```\\n  }\\n}"``: leftover code after the
    block, streamed and whole alike. A line of only closing brackets is refused there, its
    weight going to EOS (the answer ends where that code would start)."""
    brackets = {"}", "  })", "\n}"}
    assert refused_after(["```vox\n", "print(1)\n", "```", "\n"]) == brackets  # a blank line start
    assert refused_after(["```vox\n", "print(1)\n", "```", "\n", "  "]) == brackets  # spaces only so far
    assert refused_after(["```vox\n", "print(1)\n", "```"]) == brackets  # right after the fence
    assert refused_after(["```vox\n", "print(1)\n", "```", "\n", "More"]) == {"\n}"}  # "More}" is no such line
    assert refused_after(["```vox\n", "print(1)\n", "\n"]) == set()  # inside the block: the grammar's business
    assert refused_after(["Say", "\n"]) == set()  # no block, or prose before it: untouched
    assert closers(["", "}", " ])", "}\n", "\n  }", "x}", "a\nb", "{"]) == ([1, 2, 3], [4])
    pieces = [""] + WORDS[1:]
    cap = ProseCap(pieces, 1, prompt_len=1, eos_ids=[EOS])
    ids = [7] + [ID[w] for w in ["```vox\n", "print(1)\n", "```", "\n"]]
    out = cap(torch.tensor([ids]), torch.zeros(1, len(WORDS)))
    assert float(out[0, EOS]) == pytest.approx(math.log(4))  # its own weight and the three refused words
