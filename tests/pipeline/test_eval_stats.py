"""The paired bootstrap of adapter - base and the completions log (pipeline.eval_stats)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from pipeline.eval_stats import completion_rows, paired_difference, task_rates, write_completions


def test_tie_interval_straddles_zero() -> None:
    base = [1.0, 0.0, 0.5, 0.25] * 25
    adapter = [0.0, 1.0, 0.5, 0.25] * 25  # same mean, different tasks
    d = paired_difference(base, adapter)
    assert d.delta == 0.0 and d.tasks == 100 and d.better == 25 and d.worse == 25
    assert d.ci95[0] < 0.0 < d.ci95[1]
    assert d.text().startswith("+0.000 (95% CI -")


def test_clear_gain_interval_excludes_zero() -> None:
    d = paired_difference([0.0] * 80 + [0.5] * 20, [0.5] * 80 + [0.5] * 20)
    assert d.delta == pytest.approx(0.4) and 0.3 < d.ci95[0] < 0.4 < d.ci95[1] < 0.5
    assert d == paired_difference([0.0] * 80 + [0.5] * 20, [0.5] * 80 + [0.5] * 20)  # seeded


def test_unpaired_input_is_refused() -> None:
    with pytest.raises(ValueError, match="equal, non-empty"):
        paired_difference([0.1], [0.1, 0.2])
    with pytest.raises(ValueError):
        paired_difference([], [])


def _score(passed: bool) -> SimpleNamespace:
    return SimpleNamespace(passed=passed, compiled=passed, truncated=not passed, codes=() if passed else ("E0203",),
                           missing=())


def test_completions_log_has_every_sample(tmp_path: Path) -> None:
    scores = [[_score(True), _score(False)], [_score(False), _score(False)]]
    assert task_rates(scores) == [0.5, 0.0]
    rows = completion_rows("adapter", "constrained", ["t1", "t2"], [["a", "b"], ["c", "d"]], scores)
    assert write_completions(tmp_path / "c.jsonl", rows) == 4
    lines = [json.loads(x) for x in (tmp_path / "c.jsonl").read_text().splitlines()]
    assert [(r["task"], r["sample"], r["passed"]) for r in lines] == [
        ("t1", 0, True), ("t1", 1, False), ("t2", 0, False), ("t2", 1, False)]
    assert lines[1]["codes"] == ["E0203"] and lines[3]["completion"] == "d"
