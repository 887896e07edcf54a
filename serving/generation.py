"""Token-level decoding: KV-cache (or full-sequence) forward passes, greedy and nucleus sampling.

:func:`generate_ids` is the one decode loop. With ``use_cache`` it runs the prompt once and then
one token per step through the library cache (attention KV *and* linear-attention conv/recurrent
state for hybrid models); without it, every step re-runs the whole sequence (slow, always right).
:func:`cache_is_consistent` compares the two on a short probe so that an architecture whose cache
is wrong can be served with full-sequence forward instead of returning wrong output.
torch is imported inside functions (callers load it anyway; importing this module stays cheap).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    import torch

# Architectures whose library cache is known to give wrong output (model_type values): served
# with full-sequence forward. Empty for transformers 5.24: Qwen3, Qwen3-Next and Qwen3.5 hybrids
# pass tests/serving/test_cache_parity.py; the load-time self-check catches regressions anyway.
FULL_FORWARD_MODEL_TYPES: Final[frozenset[str]] = frozenset()


#: temperatures below this decode greedily (logits / 1e-40 overflow float32 to inf -> NaN probs)
MIN_SAMPLING_TEMPERATURE = 1e-4


@dataclass(frozen=True, slots=True)
class SamplingParams:
    """How to pick tokens.

    Attributes:
        max_new_tokens: hard cap on generated tokens (≥ 1).
        temperature: 0 means greedy (argmax); > 0 divides the logits before sampling.
        top_p: nucleus sampling mass in (0, 1]; 1 disables it. Ignored when greedy.
        stop: strings that end generation; the text is cut before the first one found.
        seed: seed for the sampler's RNG (``None``: nondeterministic).
    """

    max_new_tokens: int = 256
    temperature: float = 0.0
    top_p: float = 1.0
    stop: tuple[str, ...] = ()
    seed: int | None = None

    def __post_init__(self) -> None:
        if self.max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be >= 1, got {self.max_new_tokens}")
        if not 0.0 <= self.temperature <= 2.0:
            raise ValueError(f"temperature must be in [0, 2], got {self.temperature}")
        if not 0.0 < self.top_p <= 1.0:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p}")
        if any(not isinstance(s, str) or not s for s in self.stop):
            raise ValueError(f"stop strings must be non-empty strings, got {self.stop!r}")
        if self.seed is not None and not -(2**63) <= self.seed < 2**64:  # torch.Generator's range
            raise ValueError(f"seed must be a 64-bit integer, got {self.seed}")

    @property
    def greedy(self) -> bool:
        """True when tokens are picked by argmax (temperature 0, or so close to 0 that dividing
        float32 logits by it would overflow: sampling would be argmax anyway)."""
        return self.temperature < MIN_SAMPLING_TEMPERATURE


def _cache_kwarg(model: Any) -> str:
    """Name of the forward argument carrying the cache (``cache`` in transformers ≥ 5.2x)."""
    params = inspect.signature(model.forward).parameters
    return "past_key_values" if "past_key_values" in params and "cache" not in params else "cache"


def _accepts(model: Any, name: str) -> bool:
    return name in inspect.signature(model.forward).parameters


class Decoder:
    """Runs forward passes for one model: a prefill + per-token steps, cached or not.

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
        with torch.inference_mode():
            logits, cache = self._forward(seq, cache)
            # A model that returns no cache would silently decode from the last token alone.
            cached = self.use_cache and cache is not None
            while True:
                token = yield logits[0]
                step = torch.tensor([[token]], dtype=torch.long, device=device)
                if cached:
                    logits, cache = self._forward(step, cache)
                else:
                    seq = torch.cat([seq, step], dim=1)
                    logits, _ = self._forward(seq, None)  # fresh cache (or none) every step


def pick_token(logits: torch.Tensor, params: SamplingParams, generator: torch.Generator | None) -> int:
    """Choose the next token from ``logits`` (``[vocab]``): argmax, or temperature + top-p sampling."""
    import torch

    if params.greedy:
        return int(torch.argmax(logits).item())
    probs = torch.softmax(logits / params.temperature, dim=-1)
    if params.top_p < 1.0:
        sorted_probs, order = torch.sort(probs, descending=True)
        cumulative = torch.cumsum(sorted_probs, dim=-1)
        # Keep the smallest prefix whose mass reaches top_p (always at least the top token).
        # (A top_p below float32's smallest value compares as 0, so pin the top token explicitly.)
        drop = cumulative - sorted_probs >= params.top_p
        drop[..., 0] = False
        sorted_probs = sorted_probs.masked_fill(drop, 0.0)
        choice = torch.multinomial(sorted_probs / sorted_probs.sum(), 1, generator=generator)
        return int(order[choice].item())
    return int(torch.multinomial(probs, 1, generator=generator).item())


def generate_ids(
    model: Any,
    prompt_ids: list[int],
    params: SamplingParams,
    eos_ids: tuple[int, ...] | frozenset[int] = (),
    *,
    use_cache: bool = True,
    on_logits: Callable[[torch.Tensor], None] | None = None,
) -> Generator[int, None, None]:
    """Generate token ids after ``prompt_ids``, one at a time.

    Args:
        model: causal LM in eval mode on its device.
        prompt_ids: the rendered prompt (non-empty).
        params: sampling parameters (``max_new_tokens`` caps the number of yielded ids).
        eos_ids: any of these ends generation; the EOS id itself is yielded last.
        use_cache: KV/recurrent cache (fast) or full-sequence forward each step.
        on_logits: called with each step's logits (``[vocab]``, float32) before picking; tests
            use it to compare cached and uncached runs.

    Yields:
        Token ids; closing the generator stops the computation.
    """
    import torch

    if not prompt_ids:
        raise ValueError("prompt_ids must not be empty")
    generator = None
    if not params.greedy:
        device = next(model.parameters()).device
        generator = torch.Generator(device=device)
        if params.seed is not None:
            generator.manual_seed(params.seed)
        else:
            generator.seed()
    stops = frozenset(eos_ids)
    steps = Decoder(model, use_cache).run(prompt_ids)
    try:
        logits = next(steps)
        for i in range(params.max_new_tokens):
            if on_logits is not None:
                on_logits(logits)
            token = pick_token(logits, params, generator)
            yield token
            if token in stops or i + 1 == params.max_new_tokens:
                return
            logits = steps.send(token)
    finally:
        steps.close()


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
    cached, full = Decoder(model, use_cache=True).run(prompt), Decoder(model, use_cache=False).run(prompt)
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
