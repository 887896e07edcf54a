"""The batch path of the one decoder: evaluation's completions (``n`` per conversation, many
conversations per ``generate`` call).

:func:`generate_texts` left-pads encoded prompts into one batch and decodes ``n`` texts each, ending
a sequence once its first ```vox block closes (:class:`pipeline.decoding_criteria.FirstBlockClosed`);
:class:`HFGenerator` is the :data:`pipeline.evaluate.Generator` over it (conversations in, texts out,
Vox-constrained by default). Sampling settings, EOS ids and the generation config are
:mod:`pipeline.decoding`'s, so evaluation and ``vox serve`` decode alike. torch/transformers are
imported inside functions.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
from collections.abc import Callable, Sequence
from typing import Any

from pipeline.decoding import SamplingParams, _device, _generation_config, _seed, eos_ids, sampling_processors
from pipeline.decoding_criteria import FirstBlockClosed
from pipeline.decoding_prompt import encode_chat
from pipeline.decoding_retry import ForcedPrefix, RetryStats, retry_faults

log = logging.getLogger(__name__)

__all__ = ["HFGenerator", "generate_texts"]


def _left_pad(rows: list[list[int]], pad: int, device: Any) -> tuple[Any, Any]:
    import torch

    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, r in enumerate(rows):
        ids[i, width - len(r):] = torch.tensor(r, dtype=torch.long)
        mask[i, width - len(r):] = 1
    return ids.to(device), mask.to(device)


def generate_texts(
    model: Any,
    tokenizer: Any,
    prompts: Sequence[list[int]],
    n: int,
    params: SamplingParams,
    *,
    stop_after_block: bool = True,
    processors: Callable[[int], Sequence[Any]] | None = None,
    use_cache: bool = True,
    ids_out: list[list[list[int]]] | None = None,
) -> list[list[str]]:
    """Generate ``n`` completions for each encoded prompt in one batched ``generate`` call.

    Args:
        model, tokenizer: a loaded causal LM and its tokenizer.
        prompts: encoded prompts (left-padded together here).
        n: completions per prompt (``num_return_sequences``).
        params: sampling parameters; the RNG is seeded from ``params.seed`` when given.
        stop_after_block: end each sequence once its first ```vox block closes.
        processors: ``f(prompt_len) -> [LogitsProcessor, ...]`` built per call (constraints).
        use_cache: library cache or full-sequence forward.
        ids_out: when given, each prompt's ``n`` generated id lists are appended to it (padding
            after a sequence ended included).

    Returns:
        ``len(prompts)`` lists of ``n`` decoded texts (special tokens skipped).
    """
    import torch
    from transformers import LogitsProcessorList, StoppingCriteriaList

    stops = eos_ids(model, tokenizer)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else (stops[0] if stops else 0)
    ids, mask = _left_pad(list(prompts), pad, _device(model))
    prompt_len = ids.shape[1]
    criteria = StoppingCriteriaList([FirstBlockClosed(tokenizer, prompt_len)] if stop_after_block else [])
    procs = LogitsProcessorList((list(processors(prompt_len)) if processors is not None else [])
                                + sampling_processors(params))
    _seed(params)
    with torch.inference_mode():
        out = model.generate(input_ids=ids, attention_mask=mask, stopping_criteria=criteria, logits_processor=procs,
                             generation_config=_generation_config(params, stops, pad, use_cache, n))
    new = out[:, prompt_len:]
    texts = tokenizer.batch_decode(new, skip_special_tokens=True)
    if ids_out is not None:
        rows = new.tolist()
        ids_out.extend(rows[j * n:(j + 1) * n] for j in range(len(prompts)))
    return [texts[j * n:(j + 1) * n] for j in range(len(prompts))]


class HFGenerator:
    """A :data:`pipeline.evaluate.Generator` over a loaded model: conversations in, ``n`` texts each out.

    Args:
        model, tokenizer: from :func:`pipeline.decoding.load_model`.
        max_new_tokens: cap per completion.
        temperature: 0 = greedy; else sampling with ``top_p``.
        top_p: nucleus mass.
        batch_size: sequences per ``generate`` call (prompts x n).
        seed: the sampling seed: each ``generate`` call is seeded from it (each retry round from
            ``seed + 7919 * round``), so the same conversations give the same texts.
        stop_after_block: end each completion when its first ```vox block closes.
        constrained: Vox-constrained decoding (as ``vox serve`` does by default); a tokenizer or
            grammar llguidance cannot use gives a warning and unconstrained decoding
            (:attr:`constraint_note` says why).
        names: with ``constrained``, also mask identifier uses to resolvable names.
        require: with ``constrained``, hold each block open until it declares what the request names.
        constraint: a ``f(prompt_len, conversations, n) -> [LogitsProcessor]`` factory that
            replaces the default constraint (e.g. with name-aware masking added).
        retries: rounds of compiler-checked retries (:mod:`pipeline.decoding_retry`; 0: none):
            a completion whose first block has a diagnostic is decoded again from the start of
            its first faulty line. Only with a constraint.
        retry_temperature: sampling temperature of the retries (``None``: ``temperature``).

    Attributes:
        mask_skips: after a call, how many of its completions had the name mask skipped at a
            dead end at least once (no token both masks allow; the grammar alone chose there:
            :class:`pipeline.decoding_hold.NameReport`); 0 when no name mask ran.
        wound_down: after a call, how many blocks (first pass and retries) derailed and were
            wound down instead of running to the token limit (:mod:`pipeline.decoding_derail`).
        retry_stats: after a call, :class:`pipeline.decoding_retry.RetryStats` of its retries.
    """

    def __init__(self, model: Any, tokenizer: Any, max_new_tokens: int = 160, temperature: float = 0.2,
                 top_p: float = 0.95, batch_size: int = 64, seed: int = 0, stop_after_block: bool = True,
                 constrained: bool = True, names: bool = True, require: bool = True,
                 constraint: Callable[[int, Sequence[list[dict[str, str]]], int], Sequence[Any]] | None = None,
                 retries: int = 0, retry_temperature: float | None = None) -> None:
        if retries < 0:
            raise ValueError(f"retries must be >= 0, got {retries}")
        self.model, self.tokenizer, self.stop_after_block = model, tokenizer, stop_after_block
        self.retries, self.retry_temperature = retries, retry_temperature
        self.retry_stats = RetryStats()
        self.max_new_tokens, self.temperature, self.top_p = max_new_tokens, temperature, top_p
        self.batch_size, self.seed, self.constraint = batch_size, seed, constraint
        self.constraint_note: str | None = None
        self.mask_skips = self.wound_down = 0
        if constrained and constraint is None:
            from pipeline.decoding_constraint import ConstraintUnavailable, VoxGrammar, batch_processors

            try:
                vocab = int(model.config.get_text_config().vocab_size)
                grammar = VoxGrammar(tokenizer, eos_ids(model, tokenizer), vocab)
                self.constraint = batch_processors(grammar, tokenizer=tokenizer, names=names, require=require,
                                                   budget=max_new_tokens)
            except ConstraintUnavailable as exc:
                self.constraint_note = f"unconstrained: {exc}"
                log.warning("evaluation decodes unconstrained: %s", exc)

    def __call__(self, conversations: Sequence[list[dict[str, str]]], n: int) -> list[list[str]]:
        import torch

        params = SamplingParams(max_new_tokens=self.max_new_tokens, temperature=self.temperature, top_p=self.top_p,
                                seed=self.seed)
        torch.manual_seed(self.seed)
        self.mask_skips = self.wound_down = 0
        ids: list[list[list[int]]] = []
        out = self._decode(conversations, n, params, ids)
        self.retry_stats = RetryStats()
        if self.retries and self.constraint is not None:
            temperature = self.temperature if self.retry_temperature is None else self.retry_temperature
            retry_params = SamplingParams(max_new_tokens=self.max_new_tokens, temperature=temperature,
                                          top_p=self.top_p, seed=self.seed)
            self.retry_stats = retry_faults(self._decode, conversations, out, ids, self.tokenizer, retry_params,
                                            self.retries, self.seed)
        return out

    def _decode(self, conversations: Sequence[list[dict[str, str]]], n: int, params: SamplingParams,
                ids: list[list[list[int]]], forced: Sequence[Sequence[int]] | None = None) -> list[list[str]]:
        """``n`` texts per conversation in batches of :attr:`batch_size` sequences; their ids go
        to ``ids``. ``forced``: per conversation (``n`` = 1), tokens its completion starts with. A
        seeded ``params`` seeds each call from its first conversation's index (``seed + i``): the
        same inputs give the same texts, and no two calls draw alike."""
        prompts = [encode_chat(self.tokenizer, c) for c in conversations]
        per_call = max(1, self.batch_size // max(n, 1))
        out: list[list[str]] = []
        built: list[Any] = []  # the processors of each call, read for their reports afterwards
        for i in range(0, len(prompts), per_call):
            factory = None
            if self.constraint is not None:
                factory = functools.partial(_bind_constraint, self.constraint, conversations[i:i + per_call], n,
                                            built, forced[i:i + per_call] if forced is not None else None)
            call_params = params if params.seed is None else dataclasses.replace(params, seed=params.seed + i)
            out.extend(generate_texts(self.model, self.tokenizer, prompts[i:i + per_call], n, call_params,
                                      stop_after_block=self.stop_after_block, processors=factory, ids_out=ids))
            self.mask_skips += sum(len(getattr(getattr(p, "report", None), "skipped_rows", ())) for p in built)
            self.wound_down += sum(len(getattr(getattr(p, "report", None), "derailed_rows", ())) for p in built)
            built.clear()
        return out


def _bind_constraint(constraint: Callable[[int, Sequence[list[dict[str, str]]], int], Sequence[Any]],
                     conversations: Sequence[list[dict[str, str]]], n: int, built: list[Any],
                     forced: Sequence[Sequence[int]] | None, prompt_len: int) -> Sequence[Any]:
    procs = list(constraint(prompt_len, conversations, n))
    built.extend(procs)
    if forced is not None:
        procs.append(ForcedPrefix(forced, prompt_len))  # last: every mask consumes the forced tokens
    return procs
