"""Statistics and records of one eval run that the headline numbers leave out.

* :func:`paired_difference`: adapter − base headline pass@1 with a paired bootstrap 95% interval
  over tasks (Efron & Tibshirani 1993, ch. 13, percentile interval; tasks are the resampled unit
  because the samples of one task are not independent). It tells an analyst whether a gap (or a
  tie) between base and adapter is larger than the noise of a 100-task suite; the release gate
  itself stays the recipe's rule (:func:`pipeline.evaluate.gate`).
* :func:`write_completions`: every completion with its verdict, one JSON object per line
  (``completions.jsonl`` next to ``report.json``), so every figure of the report can be traced to
  the texts behind it (the report keeps only a few samples).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline import atomic


@dataclass(frozen=True)
class PairedDifference:
    """Adapter − base headline pass@1 on the same tasks.

    Attributes:
        delta: mean over tasks of (adapter pass rate − base pass rate), in pass@1 units.
        ci95: ``(low, high)`` percentile bootstrap interval of ``delta``.
        resamples: bootstrap resamples drawn (tasks with replacement).
        tasks: number of tasks paired.
        better, worse: tasks where the adapter's pass rate is above / below the base's.
    """

    delta: float
    ci95: tuple[float, float]
    resamples: int
    tasks: int
    better: int
    worse: int

    def text(self) -> str:
        """One line for logs and summaries, e.g. ``+0.012 (95% CI -0.020..+0.044; 9 tasks better, 7 worse)``."""
        lo, hi = self.ci95
        return (f"{self.delta:+.3f} (95% CI {lo:+.3f}..{hi:+.3f} over {self.tasks} tasks; "
                f"{self.better} better, {self.worse} worse)")


def paired_difference(base: Sequence[float], adapter: Sequence[float], resamples: int = 2000,
                      seed: int = 0) -> PairedDifference:
    """Paired bootstrap of ``mean(adapter) − mean(base)``.

    Args:
        base, adapter: per-task pass rates in ``[0, 1]`` (fraction of a task's samples that pass),
            index ``i`` is the same task in both.
        resamples: bootstrap resamples (2,000 gives the 2.5/97.5 percentiles to about ±0.003 here).
        seed: resampling seed (the interval is reproducible).

    Raises:
        ValueError: the two sequences differ in length or are empty.
    """
    if len(base) != len(adapter) or not base:
        raise ValueError(f"paired_difference needs two equal, non-empty lists (got {len(base)} and {len(adapter)})")
    diffs = [a - b for a, b in zip(adapter, base)]
    n = len(diffs)
    rng = random.Random(seed)
    means = sorted(sum(diffs[rng.randrange(n)] for _ in range(n)) / n for _ in range(resamples))
    lo = means[int(0.025 * (resamples - 1))]
    hi = means[int(round(0.975 * (resamples - 1)))]
    return PairedDifference(delta=sum(diffs) / n, ci95=(lo, hi), resamples=resamples, tasks=n,
                            better=sum(d > 0 for d in diffs), worse=sum(d < 0 for d in diffs))


def task_rates(scores: Sequence[Sequence[Any]]) -> list[float]:
    """Per-task headline pass rate: ``scores[i]`` are the :class:`~pipeline.eval_scoring.SampleScore`
    of task ``i``; the rate is the fraction whose ``passed`` is true."""
    return [sum(s.passed for s in ss) / len(ss) if ss else 0.0 for ss in scores]


def completion_rows(model: str, policy: str, task_ids: Sequence[str], texts: Sequence[Sequence[str]],
                    scores: Sequence[Sequence[Any]]) -> Iterable[dict[str, Any]]:
    """One record per completion: ``model``, ``policy``, ``task``, ``sample`` (index), ``passed``
    (headline), ``compiled`` (raw), ``truncated``, ``codes`` (diagnostic codes), ``missing``
    (requested names not declared) and ``completion`` (the full text)."""
    for tid, ts, ss in zip(task_ids, texts, scores):
        for i, (text, s) in enumerate(zip(ts, ss)):
            yield {"model": model, "policy": policy, "task": tid, "sample": i, "passed": s.passed,
                   "compiled": s.compiled, "truncated": s.truncated, "codes": list(s.codes),
                   "missing": list(s.missing), "completion": text}


def write_completions(path: Path, rows: Iterable[dict[str, Any]]) -> int:
    """Write ``rows`` as JSON Lines to ``path`` atomically (all or nothing). Returns the row count."""
    lines = [json.dumps(r, ensure_ascii=False) for r in rows]
    atomic.write_text(path, "".join(line + "\n" for line in lines))
    return len(lines)
