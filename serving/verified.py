"""``vox serve``'s compiler-checked retries (:mod:`pipeline.decoding_retry`) for one request.

With ``vox_retries`` above 0 (the default for constrained requests), the request's ``n`` choices
are decoded whole first; a choice whose first ```vox block has a front-end diagnostic is decoded
again from the start of its first faulty line (that prefix forced), up to that many
rounds, all retried choices of a round in one batch, sampled at the request's temperature but at
least :data:`pipeline.decoding_retry.RETRY_TEMPERATURE` (a greedy retry would repeat the line).
Only then is each choice's text handed out: a streamed request receives its text once it is
checked, never text that a retry takes back. Each choice reports its own retries (not the
request's): whether its first pass had a fault, how many times it was decoded again, whether it
ended clean.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from pipeline.decoding import SamplingParams, generate_rows
from pipeline.decoding_retry import RETRY_TEMPERATURE, ForcedPrefix, retry_faults
from serving.choice_text import ChoiceText
from serving.prepared import Prepared, StreamEvent, constraint_summary
from vox_lang.requests import RequestSpec


def decode_choices(model: Any, tokenizer: Any, prompt_ids: list[int], params: SamplingParams, eos: Sequence[int],
                   processors: Callable[[int], list[Any]], n: int, *, use_cache: bool, cancel: threading.Event | None,
                   forced: Sequence[Sequence[int]] | None = None) -> list[list[int]]:
    """Each of ``n`` choices' token ids (the EOS id included when it ended on one), decoded from
    one prompt in one batch (the one decoder, :func:`pipeline.decoding.generate_rows`), each
    ending at EOS or a stop string as :class:`serving.choice_text.ChoiceText` decides.
    ``processors(n)`` builds the constraint's processors for ``n`` rows; ``forced``: per row,
    tokens the choice must start with."""
    procs = processors(n)
    if forced is not None:
        procs = [*procs, ForcedPrefix(forced, len(prompt_ids))]
    texts = [ChoiceText(tokenizer, params.stop, eos) for _ in range(n)]
    out: list[list[int]] = [[] for _ in range(n)]
    stopped: set[int] = set()
    steps = generate_rows(model, prompt_ids, params, tuple(eos), n=n, use_cache=use_cache, cancel=cancel,
                          processors=procs, stopped=stopped)
    try:
        for step in steps:
            for i, token in enumerate(step[:n]):
                if texts[i].finish is not None:
                    continue
                out[i].append(token)
                texts[i].push(token)
                if texts[i].finish is not None:
                    stopped.add(i)
            if cancel is not None and cancel.is_set():
                break
    finally:
        steps.close()
    return out


def verified_choices(model: Any, tokenizer: Any, prompt_ids: list[int], params: SamplingParams, eos: Sequence[int],
                     processors: Callable[[int], list[Any]], n: int, rounds: int, *, use_cache: bool,
                     cancel: threading.Event | None, request: RequestSpec | None = None,
                     ) -> tuple[list[list[int]], list[dict[str, int]]]:
    """Each of the ``n`` choices' token ids after up to ``rounds`` rounds of compiler-checked
    retries (see the module docstring; replay them through a ``ChoiceText`` for the text and the
    finish reason), and per choice what its retries did: ``{"rounds", "faulty", "retried",
    "fixed"}`` (``faulty``, ``fixed``: 0 or 1; ``retried``: its retry decodes). A cancelled
    request is not retried; a retry never replaces a choice with one that lost an item
    ``request`` names."""
    first = decode_choices(model, tokenizer, prompt_ids, params, eos, processors, n, use_cache=use_cache,
                           cancel=cancel)
    texts = [[tokenizer.decode(c, skip_special_tokens=True)] for c in first]
    ids = [[c] for c in first]

    def decode(conversations: Sequence[Any], _n: int, round_params: Any, ids_out: list[list[list[int]]],
               forced: Sequence[Sequence[int]] | None) -> list[list[str]]:
        if cancel is not None and cancel.is_set():
            ids_out.extend([[]] for _ in conversations)
            return [[""] for _ in conversations]  # no closed block: replaces nothing
        rows = decode_choices(model, tokenizer, prompt_ids, round_params, eos, processors, len(conversations),
                              use_cache=use_cache, cancel=cancel, forced=forced)
        ids_out.extend([r] for r in rows)
        return [[tokenizer.decode(r, skip_special_tokens=True)] for r in rows]

    retry = dataclasses.replace(params, temperature=max(params.temperature, RETRY_TEMPERATURE))
    stats = retry_faults(decode, list(range(n)), texts, ids, tokenizer, retry, rounds, params.seed or 0,
                         specs=[request or RequestSpec()] * n)
    reports = [{"rounds": rounds, **stats.of(i)} for i in range(n)]
    return [row[0] for row in ids], reports


def replay(prepared: Prepared, rows: Sequence[list[int]], retries: Sequence[dict[str, int]], tokenizer: Any,
           eos: Iterable[int], processor: Any, cancelled: bool) -> Iterator[StreamEvent]:
    """The events of each choice's final tokens ``rows[i]``, choice by choice, as
    :meth:`serving.engine.Engine.stream` hands them out: text pieces through a
    :class:`~serving.choice_text.ChoiceText` (stop strings and EOS end a choice), then its last
    event with the finish reason, token counts and the constraint summary (``processor``: the
    first pass's grammar processor) with ``retries[i]``, that choice's own retry report."""
    params = prepared.params
    for i, ids in enumerate(rows):
        choice = ChoiceText(tokenizer, params.stop, eos)
        for token in ids:
            piece = choice.push(token)
            if piece:
                yield StreamEvent(piece, index=i)
            if choice.finish is not None:
                break
        if choice.finish is None:
            choice.finish = "cancelled" if cancelled and choice.tokens < params.max_new_tokens else "length"
        summary = constraint_summary(prepared, processor, i, retries[i])
        yield StreamEvent(choice.rest(), choice.finish, len(prepared.prompt_ids), choice.tokens, summary, i)
