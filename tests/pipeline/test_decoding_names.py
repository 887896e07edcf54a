"""Name- and request-aware masking: identifier uses stay resolvable; requested items hold the fence."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

from pipeline.decoding_names import NameMask, declared_names, position, token_table
from vox_lang.requests import RequestSpec, extract_request

_HELPERS = Path(__file__).with_name("test_decoding_constraint.py")  # its tokenizer (tests are not a package)
_spec = importlib.util.spec_from_file_location("vox_tests_constraint", _HELPERS)
assert _spec and _spec.loader
_helpers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_helpers)
tokenizer = _helpers.tokenizer


@pytest.mark.parametrize(("code", "partial", "continues", "fresh"), [
    ("fn f(a: int) to int {\n  ret ", "", True, True),
    ("fn f(a: int) to int {\n  ret a + to", "to", True, True),   # `to` may grow into `total`
    ("fn f(a: int) to int {\n  ret", "ret", False, True),         # a name after `ret ` is a use
    ("fn f(", "", False, False),                                 # a parameter is being declared
    ("let x = foo(", "", False, False),                          # argument or named argument: free
    ("let s = \"he", "he", False, False),                        # inside a string
    ("// see ", "", False, False),                               # inside a comment
    ("let n = 1", "1", False, False),                            # a number
    ("fn id<", "", False, False),                                # generics being declared
    ("let p: Li", "Li", True, False),                            # a type annotation
])
def test_position(code: str, partial: str, continues: bool, fresh: bool) -> None:
    pos = position(code)
    assert (pos.partial, pos.continues_use, pos.fresh_use) == (partial, continues, fresh)


def test_declared_names() -> None:
    code = ("import std.fs\nimport a.b as c\ntype Shape = | Circle(r: float) | Square(side: float)\n"
            "fn area<T>(s: Shape, k: T) to float {\n  let mut total = 0.0\n  for x, i in [1] { }\n"
            "  match s { Circle(r) -> r, other -> 0.0 }\n}\nactor A { on hit(n: int) { } }")
    assert {"fs", "c", "Shape", "Circle", "Square", "area", "T", "s", "k", "total", "x", "i", "r", "other",
            "A", "hit", "n"} <= declared_names(code)


def _mask(code: str, request: str = "") -> tuple[Any, Any]:
    import torch

    tok = tokenizer()
    table = token_table(tok)
    prompt = [1, 2]
    ids = prompt + tok.encode("```vox\n" + code, add_special_tokens=False)
    proc = NameMask(tok, table, [extract_request(request)], len(prompt), eos_ids=[tok.eos_token_id])
    scores = proc(torch.tensor([ids]), torch.zeros(1, len(tok)))
    return torch.isfinite(scores[0]), table


def test_identifier_uses_must_resolve() -> None:
    tok = tokenizer()
    code = "fn add(alpha: int, beta: int) to int {\n  ret alpha +"
    allowed, table = _mask(code)
    names = declared_names(code) | _helpers_names()
    fresh = [i for i in table.ws_ident]
    assert any(allowed[i] for i in fresh) and not all(allowed[i] for i in fresh)
    for i in fresh:
        lead = tok.decode([i]).strip()
        word = lead.split("(")[0].split(".")[0]
        if allowed[i]:
            assert any(n.startswith(word) or word.startswith(n) for n in names), word
    # Inside a call's argument list the mask does not apply (named arguments are free).
    allowed, _ = _mask("fn f() {\n  print(")
    assert bool(allowed.all())


def _helpers_names() -> set[str]:
    from pipeline.decoding_names import PRELUDE_NAMES

    return set(PRELUDE_NAMES)


def test_requested_items_hold_the_fence() -> None:
    tok = tokenizer()
    request = "Write a function `late(x: int) to int`."
    allowed, table = _mask("fn other() { }\n", request)
    assert not any(allowed[i] for i in table.backtick) and not allowed[tok.eos_token_id]
    allowed, table = _mask("fn late(x: int) to int {\n  ret x\n}\n", request)
    assert all(allowed[i] for i in table.backtick)
    allowed, table = _mask("fn other() { }\n")  # nothing requested: nothing held
    assert all(allowed[i] for i in table.backtick)


def test_outside_a_block_nothing_is_masked() -> None:
    import torch

    tok = tokenizer()
    proc = NameMask(tok, token_table(tok), [RequestSpec()], 0)
    ids = tok.encode("Here is a sentence with + undefined", add_special_tokens=False)
    assert torch.isfinite(proc(torch.tensor([ids]), torch.zeros(1, len(tok)))).all()
