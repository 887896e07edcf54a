"""Token estimates (:mod:`serving.tokens`): LiteLLM's ``token_counter`` figures to the token,
without importing LiteLLM, from a local vocabulary file only; a character rule without one."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from serving import tokens


@pytest.fixture
def fresh_counter() -> Iterator[None]:
    """Build the counter again in this test (and again after it, for the others)."""
    tokens._counter.cache_clear()
    yield
    tokens._counter.cache_clear()


def _texts() -> list[str]:
    rnd = random.Random(7)
    pieces = ["fn ", "x", " ", "\n", "é", "😀", "to int", "{", "}", "  ", "\t", "1234", "ret ", "<|endoftext|>"]
    soup = ["".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 900))) for _ in range(40)]
    # long runs cross LiteLLM's 1,024-character pieces, in and out of a word
    return ["", "hello", "Write a Vox function `f(x: int) to int`", "a" * 5000, " \n\n  " * 400, *soup]


def test_figures_equal_litellm_token_counter() -> None:
    from serving.llm import import_litellm

    litellm = import_litellm()
    for text in _texts():
        assert tokens.count_text(text) == litellm.token_counter(model="", text=text), text[:80]
    conversations = [[{"role": "user", "content": "hello"}], [{"role": "user", "content": "x", "name": "bob"}]]
    conversations += [[{"role": "system", "content": "Be terse."}, {"role": "user", "content": text},
                       {"role": "assistant", "content": ""}] for text in _texts()[:8]]
    for messages in conversations:
        system = [m for m in messages if m["role"] == "system"]
        expected = tokens.TokenEstimate(litellm.token_counter(model="", messages=messages),
                                        litellm.token_counter(model="", messages=system) if system else 0)
        assert tokens.estimate(messages) == expected


def test_the_vocabulary_is_found_offline_in_this_install() -> None:
    # LiteLLM bundles cl100k_base; if a release stops doing so the estimates fall back to the
    # character rule (other figures, other routing near context limits): this test says so first.
    path = tokens.vocabulary_file()
    assert path is not None and path.is_file(), "no local cl100k_base file: token estimates use the character rule"


def test_without_the_vocabulary_the_character_rule_counts(fresh_counter: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tokens, "vocabulary_file", lambda: None)
    assert tokens.count_text("abcdefghi") == 3  # ceil(9 / 4)
    messages = [{"role": "system", "content": "abcd"}, {"role": "user", "content": "abcde"}]
    # 3 per message + ceil(len/4) for each of role and content + 3 for the reply's primer
    assert tokens.estimate(messages) == tokens.TokenEstimate(3 + (3 + 2 + 1) + (3 + 1 + 2), 3 + (3 + 2 + 1))


def test_a_corrupt_vocabulary_file_is_not_used(fresh_counter: None, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    bad = tmp_path / "cl100k_base.tiktoken"
    bad.write_bytes(b"aGVsbG8= 0\n")
    monkeypatch.setattr(tokens, "vocabulary_file", lambda: bad)
    assert tokens.count_text("hello world") == 3  # the character rule: ceil(11 / 4)


def test_estimates_are_deterministic_and_empty_is_zero() -> None:
    assert tokens.estimate([]) == tokens.TokenEstimate(0, 0) and tokens.count_text("") == 0
    messages = [{"role": "user", "content": "Write a Vox function `f(x: int) to int`"}]
    assert tokens.estimate(messages) == tokens.estimate(messages) == tokens.TokenEstimate(3 + 3 + 1 + 13, 0)
