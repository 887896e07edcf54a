"""A script request's call (pipeline.decoding_script): where the model would close a block that
runs nothing, the requested function's call is forced; elsewhere the fence waits."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pipeline.decoding_names import NameMask, token_table
from pipeline.decoding_script import RunsMemo, script_call, would_close
from vox_lang.requests import extract_request

_HELPERS = Path(__file__).with_name("test_decoding_constraint.py")  # its tokenizer (tests are not a package)
_spec = importlib.util.spec_from_file_location("vox_tests_constraint_script", _HELPERS)
assert _spec and _spec.loader
_helpers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_helpers)

ASK = ('Write a Vox script with a function `backup_name(path: str) to str` that appends ".old", and print '
       'backup_name("app.cfg").')
FN = 'fn backup_name(path: str) to str {\n  ret path + ".old"\n}\n'


@pytest.mark.parametrize(("request_text", "code", "call"), [
    (ASK, FN, "print(backup_name("),
    ("Write a script with a function `log_line(msg: str)` that prints it", "", "log_line("),  # returns nothing
    ("Write a script with a workflow `sync(n: int) to int`", "", "print(sync("),
    # only the name is given: the block's header says whether it returns a value
    ("Write a script with a function `tally` and print it", "fn tally(xs: List[int]) to int {\n", "print(tally("),
    ("Write a script with a function `shout` that prints", "fn shout(s: str) {\n", "shout("),
    ("Write a script with a type `Point` and print one", "", None),  # no function to call
    ("Write a script that prints 1 to 5", "", None),
])
def test_the_call_is_the_first_requested_function(request_text: str, code: str, call: str | None) -> None:
    assert script_call(extract_request(request_text), code) == call


def test_would_close_reads_the_first_choice_among_the_allowed_tokens() -> None:
    scores = np.array([0.0, 5.0, 3.0, 1.0])
    finite = np.array([True, True, True, True])
    assert would_close({1}, scores, finite, None)
    assert not would_close({1}, scores, finite, np.array([True, False, True, True]))  # the fence is masked
    assert would_close({2}, scores, np.array([True, False, True, True]), None)  # an earlier mask took id 1
    assert not would_close({0}, scores, np.zeros(4, dtype=bool), None)  # nothing allowed: nothing to read


def test_runs_memo_parses_once_per_text() -> None:
    memo = RunsMemo()
    assert not memo(0, FN)
    assert memo(0, FN + 'print(backup_name("a"))\n')
    assert not memo(1, FN)  # rows are apart


def _allowed(code: str, favour: str, request: str = ASK) -> tuple[list[str], Any]:
    """The token texts the name mask allows after ``code`` (an open block) answering ``request``,
    with logits that favour the token ``favour`` (the model's first choice)."""
    import torch

    from pipeline.decoding_done import request_extras

    tok = _helpers.tokenizer()
    table = token_table(tok)
    prompt = [1, 2]
    ids = prompt + tok.encode("```vox\n" + code, add_special_tokens=False)
    mask = NameMask(tok, table, [extract_request(request)], len(prompt), eos_ids=[tok.eos_token_id],
                    extras=[request_extras(request)])
    scores = torch.zeros(1, len(tok))
    (first, *_) = tok.encode(favour, add_special_tokens=False)
    scores[0, first] = 10.0
    out = mask(torch.tensor([ids]), scores)
    allowed = torch.isfinite(out[0])
    return [table.texts[i] for i in range(len(tok)) if allowed[i]], table


def test_where_the_model_would_close_a_script_that_runs_nothing_its_call_is_forced() -> None:
    texts, _ = _allowed(FN, "```")
    assert texts and all("print(backup_name(".startswith(t) for t in texts), texts


def test_elsewhere_the_fence_waits_and_the_model_writes_its_own_statements() -> None:
    texts, _ = _allowed(FN, "let")
    assert not any("`" in t for t in texts)
    assert any(t.strip().startswith("let") for t in texts)  # not only the forced call


def test_a_script_that_already_calls_something_may_close() -> None:
    texts, _ = _allowed(FN + 'print(backup_name("app.cfg"))\n', "```")
    assert any("`" in t for t in texts)


def test_a_request_for_no_script_is_left_alone() -> None:
    texts, _ = _allowed(FN, "```", request="Write a function `backup_name(path: str) to str` that appends .old")
    assert any("`" in t for t in texts)
