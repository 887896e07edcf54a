"""Load-time self-check: does the library cache give the same logits as full-sequence forward?

:func:`cache_is_consistent` runs a short greedy probe through both paths (a prefill and a few
single-token steps through the model's own cache class — attention KV *and* linear-attention
conv/recurrent state for hybrid models — versus re-running the whole sequence each step) and
compares the logits. An architecture whose cache is wrong is then decoded with
``use_cache=False`` (slow, always right) instead of serving wrong output. torch is imported inside.
"""

from __future__ import annotations

import inspect
from collections.abc import Generator
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    import torch

# Architectures whose library cache is known to give wrong output (model_type values): decoded
# with full-sequence forward. Empty for transformers 5.24: Qwen3, Qwen3-Next and Qwen3.5 hybrids
# pass tests/serving/test_cache_parity.py; the load-time self-check catches regressions anyway.
FULL_FORWARD_MODEL_TYPES: Final[frozenset[str]] = frozenset()


def _cache_kwarg(model: Any) -> str:
    """Name of the forward argument carrying the cache (``cache`` in transformers ≥ 5.2x)."""
    params = inspect.signature(model.forward).parameters
    return "past_key_values" if "past_key_values" in params and "cache" not in params else "cache"


def _accepts(model: Any, name: str) -> bool:
    return name in inspect.signature(model.forward).parameters


class _Probe:
    """Forward passes for the probe: a prefill + per-token steps, cached or not.

    Args:
        model: a causal LM in eval mode (``model(input_ids, ...) -> .logits``).
        use_cache: step through the library cache (fast) or re-run the full sequence (safe).
    """

    def __init__(self, model: Any, use_cache: bool) -> None:
        self.model = model
        self.use_cache = use_cache
        self._cache_kw = _cache_kwarg(model)
        self._logits_to_keep = _accepts(model, "logits_to_keep")

    def _forward(self, ids: torch.Tensor, cache: Any) -> tuple[torch.Tensor, Any]:
        kwargs: dict[str, Any] = {"use_cache": self.use_cache}
        if self.use_cache:
            kwargs[self._cache_kw] = cache
        if self._logits_to_keep:
            kwargs["logits_to_keep"] = 1
        out = self.model(input_ids=ids, **kwargs)
        new_cache = getattr(out, "cache", None) if self.use_cache else None
        if self.use_cache and new_cache is None:
            new_cache = getattr(out, "past_key_values", None)
        return out.logits[:, -1, :].float(), new_cache

    def run(self, prompt_ids: list[int]) -> Generator[torch.Tensor, int, None]:
        """Yield next-token logits (shape ``[vocab]``, float32) step by step.

        The caller sends the chosen token id back with ``gen.send(token_id)``; the first
        ``next()`` returns the logits after the prompt.
        """
        import torch

        device = next(self.model.parameters()).device
        seq = torch.tensor([prompt_ids], dtype=torch.long, device=device)
        cache = None  # the model builds the right cache class for its architecture on the prefill
        # inference_mode is entered per forward, never held across a ``yield``: grad mode is
        # thread-local, and two probes run interleaved would restore it out of order, leaving
        # the caller's thread in inference mode (later training then fails: "does not require grad").
        with torch.inference_mode():
            logits, cache = self._forward(seq, cache)
        # A model that returns no cache would silently decode from the last token alone.
        cached = self.use_cache and cache is not None
        while True:
            token = yield logits[0]
            step = torch.tensor([[token]], dtype=torch.long, device=device)
            with torch.inference_mode():
                if cached:
                    logits, cache = self._forward(step, cache)
                else:
                    seq = torch.cat([seq, step], dim=1)
                    logits, _ = self._forward(seq, None)  # fresh cache (or none) every step


def cache_is_consistent(model: Any, vocab_size: int, steps: int = 4, prompt_len: int = 8) -> bool:
    """Check that cached decoding matches full-sequence decoding on a short greedy probe.

    Feeds a deterministic ``prompt_len``-token prompt, then ``steps`` greedy tokens (chosen from
    the full-sequence logits) to both decoders in lockstep, and compares each step's logits:
    max abs difference ≤ ``tol × max(1, max |logit|)``, ``tol`` 1e-3 in float32, 5e-2 in half
    precision. Costs ``steps + 1`` forwards of ≤ ``prompt_len + steps`` tokens each way.
    """
    import torch

    prompt = [(7 + 31 * i) % max(vocab_size, 1) for i in range(prompt_len)]
    tol = 1e-3 if next(model.parameters()).dtype == torch.float32 else 5e-2
    cached, full = _Probe(model, use_cache=True).run(prompt), _Probe(model, use_cache=False).run(prompt)
    try:
        a, b = next(cached), next(full)
        for step in range(steps + 1):
            scale = max(1.0, float(b.abs().max()))
            if float((a - b).abs().max()) > tol * scale:
                return False
            if step < steps:
                token = int(torch.argmax(b).item())
                a, b = cached.send(token), full.send(token)
    finally:
        cached.close()
        full.close()
    return True
