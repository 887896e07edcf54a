"""A derailed ```vox block winds down instead of running to the token limit (pipeline.decoding_derail)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pipeline.decoding_derail import derailed_at
from pipeline.decoding_names import NameMask, token_table
from vox_lang.requests import RequestSpec, extract_request

_ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("code", "line"), [
    ("fn f() {\n  print(a,\n\n", 3),                  # a blank line inside a call's arguments
    ("let xs = [1,\n  2,\n   \n", 3),                  # ... a line of spaces inside a list
    ("fn f(a: int,\n\n", 2),                           # ... inside a parameter list
    ("fn f() {\n  let a = 1\n\n \n", 4),               # two blank lines in a row inside a function
    ("fn f() {\n  let a = 1\n\n  .len()", 4),          # a continuation line right after a blank line
    ("fn f() {\n  ret a\n\n  |> g", 4),
    ("fn f() {\n  print(str(not\n \n//)\n \n.\n", 3),  # the first of several marks counts
])
def test_derailing_lines_are_found(code: str, line: int) -> None:
    at = derailed_at(code)
    assert at >= 0 and code.count("\n", 0, at) + 1 == line


@pytest.mark.parametrize("code", [
    "fn f() {\n  let a = 1\n\n  ret a\n}\n",           # one blank line between statements
    "fn f() {}\n\n\nfn g() {}\n",                       # blank lines between items
    "\n\nfn f() {\n",                                   # leading blank lines
    "type T =\n  | A\n  | B\n",                         # continuation lines without a blank line before
    "fn f() {\n  ret a\n    |> g\n}\n",
    'fn f() {\n  print("a\n',                           # an open string is not a blank line
    "let xs = [1,\n  // two\n  2]\n",                   # a comment inside a list
])
def test_well_formed_layouts_do_not_derail(code: str) -> None:
    assert derailed_at(code) == -1


def test_looking_from_an_offset_sees_only_newer_lines() -> None:
    code = "fn f() {\n  print(a,\n\n"
    assert derailed_at(code, len(code) - 1) == derailed_at(code)  # the blank line's own newline
    assert derailed_at(code + "b)\n", len(code)) == -1


def test_no_example_program_derails() -> None:
    """The examples are well-formed programs: none may be wound down (the corpus figure, 0 of
    4,014 blocks, is in the module docstring)."""
    programs = sorted((_ROOT / "examples").rglob("*.vox"))
    assert programs
    for path in programs:
        text = path.read_text(encoding="utf-8")
        for cut in range(1, len(text) + 1):  # every prefix, as the decoder sees it grow
            if text[cut - 1] in "\n.>":
                assert derailed_at(text[:cut], cut - 2) == -1, f"{path.name}: {text[:cut]!r}"


def _allowed(tok: Any, code: str, request: str = "") -> set[str]:
    """The tokens the name and request masks allow after ``code``, the processor having seen the
    block grow token by token (the derailed state is kept across steps, as in decoding)."""
    import torch

    ids = [1, 2] + tok.encode("```vox\n" + code, add_special_tokens=False)
    spec = extract_request(request) if request else RequestSpec()
    proc = NameMask(tok, token_table(tok), [spec], 2, eos_ids=[tok.eos_token_id], budget=len(ids) + 200)
    for k in range(3, len(ids)):
        proc(torch.tensor([ids[:k]]), torch.zeros(1, len(tok)))
    allowed: Any = torch.isfinite(proc(torch.tensor([ids]), torch.zeros(1, len(tok)))[0])
    return {tok.decode([i]) for i in allowed.nonzero().flatten().tolist()}


def test_a_derailed_block_closes_its_brackets_first(bpe_tokenizer: Any) -> None:
    body = "fn f(x: int) to int {\n  let y = [x, x\n\n"
    assert "," in _allowed(bpe_tokenizer, "fn f(x: int) to int {\n  let y = [x, x\n")  # not derailed yet: free
    left = _allowed(bpe_tokenizer, body)
    assert left and all(set(t) <= set(")]}`\r \t\n") and set(t) & set(")]}`") for t in left)
    assert any("]" in t for t in left)


def test_a_derailed_block_finishes_the_word_being_written_first(bpe_tokenizer: Any) -> None:
    # `ra` names nothing: a closer now would leave an undefined name (E0401)
    left = _allowed(bpe_tokenizer, "fn f(x: int) to int {\n  let y = [x,\n\n  ra")
    assert left and not any(set(t) & set(")]}") for t in left)
    assert any("range".startswith("ra" + t) or t.startswith("nge") for t in left)
    done = _allowed(bpe_tokenizer, "fn f(x: int) to int {\n  let y = [x,\n\n  x")  # a name: closers again
    assert done and all(set(t) <= set(")]}`\r \t\n") for t in done)


def test_a_derailed_block_ends_its_comment_then_closes(bpe_tokenizer: Any) -> None:
    left = _allowed(bpe_tokenizer, "fn f(x: int) to int {\n  let y = [x,\n\n  // note )")
    assert left and all("\n" in t for t in left)  # a bracket would only be comment text


def test_a_derailed_block_closes_the_fence_at_the_next_item_boundary(bpe_tokenizer: Any) -> None:
    left = _allowed(bpe_tokenizer, "fn f(x: int) to int {\n  let y = [x,\n\n  ]\n  ret x\n}\n")
    assert left and all(t.strip(" \t\r\n") == "" or t.lstrip(" \t\r\n").startswith("`") for t in left)


def test_a_requested_item_still_missing_is_forced_after_a_derailed_one(bpe_tokenizer: Any) -> None:
    """The derailed item closes; at the next item start the missing item's header is forced (a
    fresh start, not wound down)."""
    request = "Write `first(n: int) to int` and `triple(n: int) to int`."
    derailed = "fn first(n: int) to int {\n  let y = [n,\n\n  ]\n  ret n\n}\n"
    left = _allowed(bpe_tokenizer, derailed, request)
    target = "fn triple(n: int) to int {"
    assert left and all(target.startswith(t.lstrip("\n")) or t.lstrip("\n").startswith(target) for t in left)
    body = _allowed(bpe_tokenizer, derailed + target + "\n  ", request)
    assert any(t.strip().isalpha() for t in body)  # its body is written freely, not wound down



def test_a_derailed_block_may_close_once_the_requested_names_are_written(bpe_tokenizer: Any) -> None:
    """``(n,)`` is no Vox, so the program never parses and the item would count as missing
    forever: once the block has derailed and the requested names are written, the fence may
    close instead of being held to the token limit."""
    request = "Write a function `triple(n: int) to int`."
    left = _allowed(bpe_tokenizer, "fn triple(n: int) to int {\n  ret (n,\n\n  )\n}\n", request)
    assert left and all(t.strip(" \t\r\n") == "" or t.lstrip(" \t\r\n").startswith("`") for t in left)
    assert any("`" in t for t in left)
    held = _allowed(bpe_tokenizer, "fn triple(n: int) to int {\n  ret (n, n)\n}\n", request)  # not derailed: held
    assert not any("`" in t for t in held)


def test_wind_down_masks() -> None:
    from pipeline.decoding_done import closing_mask, comment_end_mask, finisher_mask

    texts = ["}", "\n", " )", "a", "\n}", "  ", '")', '"a']
    assert closing_mask(texts, len(texts), False).tolist() == [True, True, True, False, True, False, False, False]
    assert closing_mask(texts, len(texts), False, newlines=False).tolist() == [
        True, False, True, False, True, False, False, False]
    assert closing_mask(texts, len(texts), True).tolist() == [False] * 6 + [True, False]
    assert comment_end_mask(texts, len(texts)).tolist() == [False, True, False, False, True, False, False, False]
    fences = ["}```", "\n```", "```", "}\n```"]  # the fence closes on its own line (Markdown's rule)
    assert closing_mask(fences, len(fences), False).tolist() == [False, True, False, True]
    assert closing_mask(fences, len(fences), False, newlines=False, line_start=True).tolist() == [True] * 4
    assert closing_mask(['"```', '"\n```'], 2, True).tolist() == [False, True]
    finishers = ["{", " {", "0", " 0", "00", "_", "->", "x", " _"]
    assert finisher_mask(finishers, len(finishers)).tolist() == [True] * 4 + [False, True, True, False, True]
    assert finisher_mask(finishers, len(finishers), apart=True).tolist() == [
        True, True, False, True, False, False, True, False, True]
