"""The grammar's work for the next step starts before the model's forward pass
(:meth:`pipeline.decoding_constraint.GrammarProcessor.prefetch`): the tokens decoded are the same
as when the processor does it all when called, and a processor out of step falls back."""

from __future__ import annotations

from typing import Any

import pytest

from tests.pipeline.test_decoding_constraint import grammar, tiny_model


class Inline:
    """The processor without its ``prefetch`` method: all work done when called."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        return self.inner(input_ids, scores)


class Counting:
    """The processor with its ``prefetch`` method, counting the steps prefetched."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.prefetched = inner, 0

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        return self.inner(input_ids, scores)

    def prefetch(self, input_ids: Any) -> None:
        self.prefetched += 1
        self.inner.prefetch(input_ids)


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_prefetching_decodes_the_same_tokens(temperature: float) -> None:
    from pipeline.decoding import SamplingParams, encode_chat, generate_rows

    model, tok = tiny_model()
    prompt = encode_chat(tok, [{"role": "user", "content": "Write a function `add(a: int, b: int) to int`."}])
    params = SamplingParams(max_new_tokens=40, temperature=temperature, seed=7)
    eos = [tok.eos_token_id]

    def run(wrap: Any) -> tuple[list[list[int]], Any]:
        proc = wrap(grammar().processor(3, len(prompt), "code"))
        return list(generate_rows(model, prompt, params, eos, n=3, processors=[proc])), proc

    inline, _ = run(Inline)
    ahead, counted = run(Counting)
    assert ahead == inline
    assert counted.prefetched >= 1


def test_a_processor_out_of_step_falls_back_to_unconstrained() -> None:
    import torch

    tok = tiny_model()[1]
    proc = grammar().processor(rows=1, prompt_len=3, mode="code")
    first = torch.tensor([[1, 2, 3]])
    proc(first, torch.zeros(1, len(tok)))
    allowed = [t for t in range(len(tok)) if tok.decode([t]).startswith("`")][:1]
    proc.prefetch(torch.tensor([[1, 2, 3] + allowed]))
    scores = proc(torch.tensor([[1, 2, 3] + allowed * 2]), torch.zeros(1, len(tok)))  # a step later
    assert torch.isfinite(scores).all()
    assert proc.report.fell_back and "out of step" in proc.report.events[0]


def test_a_forked_child_gets_its_own_worker_threads() -> None:
    import os

    g = grammar()
    assert g.pool.submit(lambda: 1).result(timeout=5) == 1
    pid = os.fork()
    if pid == 0:  # the child: a pool copied from the parent would never run this
        try:
            os._exit(0 if g.pool.submit(lambda: 2).result(timeout=5) == 2 else 1)
        except BaseException:  # noqa: BLE001 - reported through the exit status
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
