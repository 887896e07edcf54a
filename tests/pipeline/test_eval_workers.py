"""The eval's second worker draws the same base samples as the eval itself would, or steps aside."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import pytest

from pipeline.eval_policies import model_generators
from pipeline.eval_tasks import Task
from pipeline.eval_workers import BaseSampler, BaseSamples, threads_per_worker
from pipeline.evaluate import EvalConfig, run_eval, sample_and_score

ASK = "Write a Vox function `add(a: int, b: int) to int` that adds two numbers."
TASKS = [Task("f1", "functions", "code", ASK), Task("f2", "functions", "code", "Write a Vox function `twice`.")]
GOOD = "```vox\nfn add(a: int, b: int) -> int {\n  ret a + b\n}\n```"


def _never(conversations: Sequence[list[dict[str, str]]], n: int) -> list[list[str]]:
    raise AssertionError("the base was sampled here although the worker gave its samples")


def _good(conversations: Sequence[list[dict[str, str]]], n: int) -> list[list[str]]:
    return [[GOOD] * n for _ in conversations]


class _Stub:
    def __init__(self, samples: BaseSamples | None) -> None:
        self.samples, self.asked = samples, ""

    def result(self, policy: str) -> BaseSamples | None:
        self.asked = policy
        return self.samples


def test_run_eval_takes_the_base_samples_from_the_worker() -> None:
    cfg = EvalConfig(n_samples=2, k=1, temperature=0.5)
    texts, scores, _ = sample_and_score(_good, TASKS, cfg, "none")
    stub = _Stub(BaseSamples("constrained", texts, scores, 1.5, {"mask_skips": 3, "wound_down": 1, "retries": None}))
    report = run_eval(_never, _good, TASKS, cfg, "none", constrained=(_never, _good), base_sampler=stub)  # type: ignore[arg-type]
    assert stub.asked == "constrained"
    assert report.base.pass_at_1 == report.adapter.pass_at_1 and report.base.seconds == 1.5
    assert report.base.mask_skips == 3 and report.base.wound_down == 1


def test_without_the_worker_s_samples_the_base_is_sampled_here() -> None:
    cfg = EvalConfig(n_samples=2, k=1, temperature=0.5)
    report = run_eval(_good, _good, TASKS, cfg, "none", base_sampler=_Stub(None))  # type: ignore[arg-type]
    assert report.gate_policy == "unconstrained" and report.base.pass_at_1 == report.adapter.pass_at_1


def test_threads_are_shared_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VOX_TORCH_THREADS", "2")
    assert (threads_per_worker(1), threads_per_worker(2)) == (2, 1)
    monkeypatch.setenv("VOX_TORCH_THREADS", "1")
    assert threads_per_worker(2) == 1


def test_the_worker_draws_what_this_process_draws(micro_base: str) -> None:
    import torch

    cfg = EvalConfig(n_samples=2, k=1, temperature=0.5, max_new_tokens=12, batch_size=4, retries=1)
    with BaseSampler(micro_base, cfg, "cpu", TASKS, "none", threads=1) as sampler:
        torch.set_num_threads(1)
        plain, constrained = model_generators(micro_base, None, cfg, "cpu")
        policy, gen = ("constrained", constrained) if constrained is not None else ("unconstrained", plain)
        texts, scores, _ = sample_and_score(gen, TASKS, cfg, "none")
        drawn = sampler.result(policy)
    assert drawn is not None and drawn.policy == policy
    assert drawn.texts == texts and drawn.scores == scores


def test_a_failing_worker_leaves_the_base_to_this_process(tmp_path: Any, caplog: pytest.LogCaptureFixture) -> None:
    cfg = EvalConfig(n_samples=1, k=1, max_new_tokens=4)
    with caplog.at_level(logging.WARNING), BaseSampler(str(tmp_path / "no-model"), cfg, "cpu", TASKS, "none", 1) as s:
        assert s.result("constrained") is None
    assert "base worker failed" in caplog.text and "sampling the base here" in caplog.text
