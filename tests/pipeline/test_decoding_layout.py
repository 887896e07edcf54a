"""The canonical-layout cap of constrained decoding (pipeline.decoding_layout): at most one blank
line in a row inside a ```vox block (inside brackets too), comments of bounded length, prose free."""

from __future__ import annotations

import re

import pytest

from pipeline.decoding_layout import MAX_COMMENT, LayoutState, LayoutTable, canonical_blank_lines, comment_length

TEXTS = ["a", "\n", "\n\n", "\n\n\n", " ", "  \n", "(", ")", "}\n\n", "}\n\n\n", "```", "```vox", "//", " word",
         "x\n\n\ny", "\"", "\n```"]


def ids(*pieces: str) -> list[int]:
    return [TEXTS.index(p) for p in pieces]


def allowed(state: LayoutState) -> set[str]:
    mask = state.mask(len(TEXTS))
    return set(TEXTS) if mask is None else {t for t, ok in zip(TEXTS, mask.tolist()) if ok}


def fed(*pieces: str, program: bool = False) -> LayoutState:
    state = LayoutState(LayoutTable.build(TEXTS), in_block=program)
    for i in ids(*pieces):
        state.feed(i)
    return state


def test_canonical_blank_lines_collapses_runs_only() -> None:
    assert canonical_blank_lines("a\n\n\n\nb\n  \n\t\nc\n\nd\ne") == "a\n\nb\n\nc\n\nd\ne"


def test_prose_is_free_and_blocks_are_capped() -> None:
    assert allowed(fed("\n", "\n", "\n")) == set(TEXTS)  # prose: nothing restricted
    one = allowed(fed("```vox", "\n"))
    assert "\n" in one and "\n\n" not in one and "}\n\n" in one and "}\n\n\n" not in one and "x\n\n\ny" not in one
    two = allowed(fed("```vox", "\n", "a", "\n", "  \n"))  # a whitespace-only line is blank
    assert "\n" not in two and "\n\n" not in two and "\n```" not in two
    assert {"a", "(", "```", " ", "//"} <= two
    assert allowed(fed("```vox", "\n", "(", "\n", "\n")) == two  # inside brackets too (L1)
    assert "\n" in allowed(fed("```vox", "\n", "\n", "a"))  # a non-blank token resets the run
    assert allowed(fed("```vox", "\n", "a", "\n```", "\n", "\n", "\n")) == set(TEXTS)  # closed: prose again


def test_program_mode_is_one_block() -> None:
    assert "\n" not in allowed(fed("a", "\n\n", program=True))


def test_long_comments_must_end() -> None:
    state = fed("```vox", "\n", "//")
    while comment_length(state.line) < MAX_COMMENT:
        assert " word" in allowed(state)
        state.feed(TEXTS.index(" word"))
    assert allowed(state) == {"\n", "\n\n", "\n```", "\n\n\n"} - {"\n\n\n"}
    assert comment_length('print("// no") // yes') == len("// yes")
    assert comment_length('let s = "// in a string"') == 0


@pytest.mark.parametrize("seed", range(4))
def test_the_cap_holds_under_the_grammar_on_random_logits(seed: int) -> None:
    """Random scores through the real processor (grammar + cap): no block ever holds more than
    one blank line in a row, and no comment outgrows the cap."""
    import torch

    from tests.pipeline.test_decoding_constraint import grammar, tokenizer

    tok = tokenizer()
    gen = torch.Generator().manual_seed(seed)
    proc = grammar().processor(rows=2, prompt_len=1, mode="code")
    ids_ = torch.zeros(2, 1, dtype=torch.long)
    newline = [i for i in range(len(tok)) if tok.decode([i]).strip(" \t") == "" and "\n" in tok.decode([i])]
    for _ in range(160):
        scores = torch.rand(2, len(tok), generator=gen)
        scores[:, newline] += 5.0  # a model that loves newlines
        out = proc(ids_, scores)
        ids_ = torch.cat([ids_, out.argmax(dim=1, keepdim=True)], dim=1)
    for row in range(2):
        text = tok.decode(ids_[row, 1:])
        body = text.split("```vox", 1)[1].split("```", 1)[0]
        assert not re.search(r"\n[ \t\r]*\n[ \t\r]*\n", body), text
        assert all(comment_length(line) < MAX_COMMENT + 12 for line in body.split("\n")), text
    assert not proc.report.fell_back


def test_a_block_holds_a_bounded_number_of_comment_lines() -> None:
    from pipeline.decoding_layout import MAX_COMMENT_LINES

    state = fed("```vox", "\n")
    for _ in range(MAX_COMMENT_LINES):
        assert "//" in allowed(state)
        for piece in ("//", " word", "\n"):
            state.feed(TEXTS.index(piece))
    assert "//" not in allowed(state) and "a" in allowed(state)
    state.feed(TEXTS.index("\""))
    assert "//" in allowed(state)  # inside a string, `//` is text


def test_backticks_in_a_comment_or_string_do_not_end_the_block() -> None:
    state = fed("```vox", "\n", "//", "```", "\n", "\n")
    assert state.in_block and "\n" not in allowed(state)
    state = fed("```vox", "\n", "\"", "```", "\"", "\n", "\n")
    assert state.in_block and "\n" not in allowed(state)
