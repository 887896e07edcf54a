"""Gate boundaries (issue 14.19): a value exactly at a threshold is on the documented side.

The release gate (compile or exec pass@1) passes at ``adapter pass@1 == threshold`` (">= threshold") and fails at
``adapter == base`` ("> base"); the gate-rate check passes at ``pass rate == minimum``. Swapping
``<`` and ``<=`` in either rule fails one of these cases.
"""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from pipeline.corpus import gate_rate_ok
from pipeline.evaluate import ModelEval, gate


def _scores(pass_at_1: float, metric: str) -> ModelEval:
    """Scores whose ``metric`` pass@1 is ``pass_at_1`` (the other metric is set the opposite way)."""
    other = 1.0 - pass_at_1
    compile_, exec_ = (pass_at_1, other) if metric == "compile" else (other, pass_at_1)
    return ModelEval(pass_at_1=compile_, pass_at_k=compile_, k=2, n=4, per_family={}, per_kind={},
                     failure_codes=(), exec_pass_at_1=exec_)


@pytest.mark.parametrize("adapter, base, threshold, passed", [
    (0.25, 0.10, 0.25, True),     # exactly at the threshold: passes
    (0.2499, 0.10, 0.25, False),  # just below: fails
    (0.30, 0.30, 0.25, False),    # equal to base: not above it, fails
    (0.3001, 0.30, 0.25, True),   # just above base: passes
    (0.0, 0.0, 0.0, False),       # a zero threshold still needs beating the base
])
@pytest.mark.parametrize("metric", ["compile", "exec"])
def test_release_gate_boundaries(adapter: float, base: float, threshold: float, passed: bool, metric: str) -> None:
    ok, why = gate(_scores(base, metric), _scores(adapter, metric), threshold, metric)
    assert ok is passed, why


@pytest.mark.parametrize("rate, minimum, passed", [(0.95, 0.95, True), (0.9499, 0.95, False), (1.0, 1.0, True),
                                                   (0.0, 0.0, True)])
def test_gate_rate_rule_boundaries(rate: float, minimum: float, passed: bool) -> None:
    assert gate_rate_ok(rate, minimum) is passed


@pytest.mark.parametrize("kept, passed", [(19, True), (18, False)])
def test_gate_rate_check_blocks_below_the_recipe_minimum(tmp_path: Path, kept: int, passed: bool) -> None:
    """The per-partition check reads the partition's gate result: 19/20 = 0.95 passes a 0.95 minimum, 18/20 fails."""
    from assets.defs import _corpus_partitions as parts
    from assets.defs.corpus import compiler_gate
    from pipeline.stage_result import StageResult

    result = StageResult("gated_pairs", "v", {"rows_in": 20, "rows_kept": kept, "pass_rate": kept / 20,
                                              "min_pass_rate": 0.95})
    (spec,) = [s for s in compiler_gate.check_specs if s.name == parts.GATE_CHECK]
    assert spec.blocking and spec.asset_key == dg.AssetKey("gated_pairs")
    ok, metadata = parts.gate_rate(result)
    assert ok is passed and metadata["kept"] == kept and metadata["rejected"] == 20 - kept
