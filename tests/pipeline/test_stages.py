"""The stage contract (``run(config, inputs, out_dir) -> StageResult``) and its runner and CLI."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pipeline import paths, stages
from pipeline.errors import DataError, TrainingError
from pipeline.stage_result import StageResult


def test_result_round_trip_and_errors(tmp_path: Path) -> None:
    result = StageResult("qlora_adapter", "abc", {"steps": 3, "losses": [[1, 0.5]]})
    result.write(tmp_path / "qlora_adapter")
    assert StageResult.read(tmp_path / "qlora_adapter") == result
    assert [p.name for p in (tmp_path / "qlora_adapter").iterdir()] == ["result.json"]  # no temp file left
    with pytest.raises(DataError, match=r"result.json is missing: materialize the `eval_report` asset first"):
        StageResult.read(tmp_path / "eval_report")
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "result.json").write_text('{"steps": 3}')  # a pre-contract result
    with pytest.raises(DataError, match="not a `old` result"):
        StageResult.read(tmp_path / "old")


def test_every_stage_follows_the_contract() -> None:
    import inspect

    for name, stage in stages.STAGES.items():
        params = list(inspect.signature(stage.run).parameters)
        assert params[:3] == ["config", "inputs", "out_dir"], name
        assert set(stage.inputs) <= set(stages.STAGES), name


def _fake_stage(monkeypatch: pytest.MonkeyPatch, name: str, data: dict[str, Any], **changes: Any) -> None:
    def run(config: Any, inputs: Any, out_dir: Path, **extras: Any) -> StageResult:
        return StageResult(name, "v", data)

    monkeypatch.setitem(stages.STAGES, name, dataclasses.replace(stages.STAGES[name], run=run, inputs=(), **changes))


@pytest.mark.parametrize("name, data, message", [
    ("eval_report", {"passed": False, "reason": "adapter pass@1 0.050 < threshold 0.100"},
     "error: eval_report: release gate failed: adapter pass@1 0.050 < threshold 0.100"),
    ("exported_model", {"verify": {"passed": False, "detail": "max |logit diff| 18.6"}},
     "error: exported_model: the export's round trip failed: max |logit diff| 18.6"),
    # gated_pairs runs per partition (run_stage aggregates them): every partition at 50%
    ("gated_pairs", {"path": "p", "rows_in": 2, "rows_kept": 1, "pass_rate": 0.5, "min_pass_rate": 0.95,
                     "family_pass_rates": {}, "top_codes": [], "reasons": {}, "rejections": []},
     "error: gated_pairs: gate pass rate 50.0% is below corpus.min_gate_pass_rate 95.0%"),
])
def test_the_cli_exits_non_zero_when_a_stage_fails_its_own_check(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], name: str, data: dict[str, Any],
        message: str) -> None:
    _fake_stage(monkeypatch, name, data)
    assert stages.main([name]) == 2
    assert capsys.readouterr().out.strip() == message


def test_the_cli_names_a_missing_input(capsys: pytest.CaptureFixture[str]) -> None:
    assert stages.main(["qlora_adapter"]) == 2
    out = capsys.readouterr().out.strip()
    assert out.startswith("error: ") and out.endswith("is missing: materialize the `corpus` asset first")
    with pytest.raises(SystemExit):
        stages.main(["no_such_stage"])


HOLD = """
import sys, time
from pathlib import Path
from pipeline.run_lock import run_lock
with run_lock(Path(sys.argv[1]), "qlora_adapter"):
    print("held", flush=True)
    time.sleep(30)
"""


def test_a_second_training_runner_is_refused_while_the_first_holds_the_run_dir(
        monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_stage(monkeypatch, "qlora_adapter", {"steps": 1})
    monkeypatch.setenv("VOX_LOCK_TIMEOUT", "0.2")
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(paths.artifacts_dir("qlora_adapter"))],
                              stdout=subprocess.PIPE, text=True, cwd=Path(__file__).resolve().parents[2])
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(TrainingError, match=r"qlora_adapter: .* is in use by pid \d+"):
            stages.run_stage("qlora_adapter")
    finally:
        holder.kill()
        holder.wait()
    assert stages.run_stage("qlora_adapter")["steps"] == 1


def _gate_run(adapter_dir: Path, passed: bool, eval_version: str = "v1") -> None:
    """An adapter (version v1) and its eval report under the test's state dir."""
    adapter_dir.mkdir(parents=True, exist_ok=True)
    StageResult("qlora_adapter", "v1", {"base_model": "/s/base", "adapter_dir": str(adapter_dir)}).write(
        paths.artifacts_dir("qlora_adapter"))
    StageResult("eval_report", eval_version, {"passed": passed, "reason": "adapter pass@1 0.287 not above base"}).write(
        paths.artifacts_dir("eval_report"))


def test_a_failed_release_gate_gives_the_serve_anyway_command(tmp_path: Path) -> None:
    assert stages.gate_failure() is None  # nothing evaluated yet
    _gate_run(tmp_path / "adapter", passed=False)
    assert stages.gate_failure() == (
        "the last eval failed the release gate (adapter pass@1 0.287 not above base); serve its adapter anyway: "
        f"`.venv/bin/vox serve /s/base --adapter {tmp_path / 'adapter'}`, then `.venv/bin/vox chat --model free`")


@pytest.mark.parametrize("passed, eval_version", [(True, "v1"), (False, "v0")])
def test_no_serve_anyway_command_for_a_passed_or_stale_eval(tmp_path: Path, passed: bool, eval_version: str) -> None:
    """A passing gate is not a gate failure; a report on an adapter since retrained says nothing of it."""
    _gate_run(tmp_path / "adapter", passed, eval_version)
    assert stages.gate_failure() is None
