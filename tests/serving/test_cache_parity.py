"""Cache parity: decoding through the library cache must equal full-sequence decoding.

Tiny random models built from configs: plain Qwen3 (full attention only) and two hybrids with
3:1 linear (Gated DeltaNet) to full attention layers (Qwen3-Next, Qwen3.5 text) — the shape of
the design document's bug, where cached decoding ignored the recurrent state after token 1.
When an architecture's cache is wrong, the engine must fall back to full-sequence forward.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pipeline.decoding import SamplingParams, cache_is_consistent, generate_ids
from serving.engine import Engine

NEW_TOKENS = 40
ATOL = 1e-4  # float32 on CPU; observed differences are ~3e-7


def _run(model: Any, prompt: list[int], use_cache: bool) -> tuple[list[int], list[Any]]:
    logits: list[Any] = []
    tokens = list(
        generate_ids(model, prompt, SamplingParams(max_new_tokens=NEW_TOKENS), use_cache=use_cache,
                     on_logits=logits.append)
    )
    return tokens, logits


@pytest.mark.parametrize("model_type", ["qwen3", "qwen3_next", "qwen3_5_text"])
def test_cached_generation_equals_full_forward(model_type: str, tiny_export_factory: Callable[..., Path]) -> None:
    engine = Engine.load(tiny_export_factory(model_type=model_type), device="cpu")
    config = engine.model.config
    if model_type != "qwen3":
        assert "linear_attention" in config.layer_types and "full_attention" in config.layer_types
    assert engine.use_cache, "the load-time probe found the library cache wrong"
    prompt = engine.render([{"role": "user", "content": "Write fn add(a: int, b: int) to int."}])

    cached_tokens, cached_logits = _run(engine.model, prompt, use_cache=True)
    full_tokens, full_logits = _run(engine.model, prompt, use_cache=False)

    assert len(cached_tokens) == NEW_TOKENS  # no EOS set: all 40 steps compared
    assert cached_tokens == full_tokens
    for step, (a, b) in enumerate(zip(cached_logits, full_logits)):
        diff = float((a - b).abs().max())
        assert diff <= ATOL, f"step {step}: max |logit diff| {diff:.2e}"


def _forget_state_after_first_token(model: Any) -> None:
    """Break the model's cache the way the design document's bug did: each cached decode step
    sees a fresh, empty cache, so recurrent/attention state from earlier tokens is ignored."""
    from transformers import DynamicCache

    original = model.forward

    @functools.wraps(original)
    def forward(*args: Any, cache: Any = None, **kwargs: Any) -> Any:
        if cache is not None and cache.get_seq_length() > 0:
            cache = DynamicCache(config=model.config)
        return original(*args, cache=cache, **kwargs)

    model.forward = forward


def test_broken_cache_falls_back_to_full_forward(
    tiny_export_factory: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    import transformers

    model_dir = tiny_export_factory(model_type="qwen3_next")
    reference = Engine.load(model_dir, device="cpu", cache="off")
    expected = reference.chat([{"role": "user", "content": "hi"}], max_tokens=32, temperature=0.0)

    real = transformers.AutoModelForCausalLM.from_pretrained

    def broken_from_pretrained(*args: Any, **kwargs: Any) -> Any:
        model = real(*args, **kwargs)
        _forget_state_after_first_token(model)
        return model

    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", broken_from_pretrained)
    engine = Engine.load(model_dir, device="cpu")
    assert not cache_is_consistent(engine.model, len(engine.tokenizer))
    assert engine.use_cache is False  # detected at load: never serve wrong output
    got = engine.chat([{"role": "user", "content": "hi"}], max_tokens=32, temperature=0.0)
    assert (got.text, got.completion_tokens) == (expected.text, expected.completion_tokens)

    forced = Engine.load(model_dir, device="cpu", cache="on")  # forcing the broken cache is wrong
    assert forced.chat([{"role": "user", "content": "hi"}], max_tokens=32, temperature=0.0).text != expected.text


def test_the_self_check_leaves_grad_mode_as_it_found_it() -> None:
    """The load-time probe runs two decoders interleaved; it must not leave the thread in
    inference mode (training in the same process would then fail: "does not require grad")."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    from pipeline.decoding_cache import cache_is_consistent

    model = GPT2LMHeadModel(GPT2Config(n_layer=1, n_embd=16, n_head=2, vocab_size=50, n_positions=32)).eval()
    assert cache_is_consistent(model, 50)
    assert torch.is_grad_enabled() and not torch.is_inference_mode_enabled()
