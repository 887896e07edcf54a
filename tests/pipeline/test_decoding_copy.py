"""Copy bias (pipeline.decoding_copy): locals are favoured where an expression starts, nowhere else."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import torch

from pipeline.decoding_copy import add_bias, copy_ids
from pipeline.decoding_names import NameMask, position, token_table
from pipeline.decoding_scan import local_names, visible_names
from vox_lang.requests import RequestSpec

_HELPERS = Path(__file__).with_name("test_decoding_constraint.py")  # its tokenizer (tests are not a package)
_spec = importlib.util.spec_from_file_location("vox_tests_constraint_copy", _HELPERS)
assert _spec and _spec.loader
_helpers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_helpers)
tokenizer = _helpers.tokenizer()

LOOP = "fn count_positive(counts: List[int]) to int {\n  let mut total = 0\n  for v in"


def _words(ids: object) -> set[str]:
    return {tokenizer.decode([int(i)]).strip() for i in ids}  # type: ignore[attr-defined]


def test_locals_are_the_open_bodies_own_names() -> None:
    assert local_names(LOOP) == {"counts", "total"}
    assert local_names("fn a(x: int) to int {\n  ret x\n}\n\nfn b(y: int) to int {\n  ret y") == {"y"}
    assert local_names("fn a(x: int) to int {\n  ret x\n}\n") == frozenset()
    actor = "actor Greeter {\n  on hello(name: str) to str {\n    ret name + "
    assert local_names(actor) == {"name"}  # a handler is no value: `hello` alone is E0401
    assert "hello" not in visible_names(actor)


def test_the_tokens_that_begin_a_local_are_favoured_at_a_use_only() -> None:
    table = token_table(tokenizer)
    cache: dict = {}
    ids = copy_ids(table, LOOP, position(LOOP), local_names(LOOP), cache)
    assert ids is not None and len(ids)
    words = _words(ids)
    whole = [i for i in tokenizer.encode(" counts") if tokenizer.decode([i]).strip() == "counts"]
    assert set(whole) <= set(ids.tolist())  # a token that is the whole name is favoured too
    assert all("counts".startswith(w) or "total".startswith(w) for w in words), words
    glued = copy_ids(table, LOOP + " ", position(LOOP + " "), local_names(LOOP), cache)  # after the space: glued starts
    assert glued is not None and set(glued.tolist()) - set(ids.tolist())  # glued starts as well as spaced ones
    assert copy_ids(table, LOOP + " co", position(LOOP + " co"), local_names(LOOP), cache) is None  # a word is begun
    body = "fn f(a: int) to int {\n  "
    assert copy_ids(table, body, position(body), local_names(body), cache) is None  # a statement starts: keywords too
    assert copy_ids(table, "let x = ", position("let x = "), local_names("let x = "), cache) is None  # no locals
    typed = "fn f(a: int) to int {\n  let b: "
    assert copy_ids(table, typed, position(typed), local_names(typed), cache) is None  # a type: no value there


def test_the_bias_is_added_in_place_and_the_processor_applies_it() -> None:
    scores = torch.zeros(2, 8)
    add_bias(scores, [1], [torch.tensor([2, 5, 99]).numpy()], 1.5)  # 99 is past the width: dropped
    assert scores[1, 2] == scores[1, 5] == 1.5 and scores[0].abs().sum() == 0 and scores[1].sum() == 3.0
    table = token_table(tokenizer)
    prompt = tokenizer("x", return_tensors="pt").input_ids
    code = "```vox\n" + LOOP
    ids = torch.cat([prompt, tokenizer(code, return_tensors="pt").input_ids], dim=1)
    on, off = (NameMask(tokenizer, table, [RequestSpec()], prompt.shape[1], require=False) for _ in range(2))
    on.copy_bias, off.copy_bias = 2.0, 0.0  # the default is off (COPY_BIAS); a base that cannot copy sets it
    raw = torch.zeros(1, len(tokenizer))
    a, b = on(ids, raw.clone()), off(ids, raw.clone())
    favoured = copy_ids(table, LOOP, position(LOOP), local_names(LOOP), {})
    assert favoured is not None
    assert torch.all(a[0, favoured] == b[0, favoured] + on.copy_bias)
