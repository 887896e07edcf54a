"""The main job: a bad recipe is rejected in one line before Dagster starts; the summary reads this run."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from assets.main import main


def test_unknown_recipe_is_a_one_line_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--recipe", "no-such-recipe"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: unknown recipe 'no-such-recipe'")
    assert "cpu-tiny" in err and "Traceback" not in err


def test_summary_reads_this_runs_results_and_times_each_step(tmp_path: Path) -> None:
    import dagster as dg

    from assets.defs.corpus import system_prompt
    from assets.defs.resources import VoxStateResource
    from assets.main import summary

    with dg.instance_for_test() as instance:
        result = dg.materialize([system_prompt], instance=instance,
                                resources={"vox_state": VoxStateResource(state_dir=str(tmp_path))})
        lines = summary(result, 6.0, instance, tmp_path)
    assert lines[0].startswith("vox-mens main job: SUCCESS in 0.1 min") and "cores, load" in lines[0]
    assert "(commit " in lines[0] and lines[1].startswith("  Dagster runs:       ")
    assert any(line.startswith("  corpus:             not built (") for line in lines)
    assert "  gate pass rate:     n/a (gate not run)" in lines
    assert "  export:             not produced in this run" in lines
    assert any(line.startswith("  stage minutes:      prompt 0.") for line in lines)


def test_main_builds_every_partition_then_the_rest_and_summarises(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """`make run` end to end on a tiny recipe: the backfill (step processes) then the main job, whose heavy
    stages are faked (the seam is real); the summary names the partitions and the per-partition gate."""
    import dataclasses

    from pipeline import stages
    from tests.assets.test_state_dir import FAKED, _fake

    recipe = tmp_path / "tiny.yaml"
    recipe.write_text("corpus:\n  seed: 9\n  pairs: 120\n  size: 200\n  workers: 1\n")
    monkeypatch.setenv("VOX_RECIPE", str(recipe))
    monkeypatch.setenv("VOX_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("VOX_MAX_CONCURRENT", "2")
    seen: dict[str, Path] = {}
    for name in FAKED:
        monkeypatch.setitem(stages.STAGES, name, dataclasses.replace(stages.STAGES[name], run=_fake(name, seen)))
    sigterm = signal.getsignal(signal.SIGTERM)
    sigint = signal.signal(signal.SIGINT, signal.SIG_IGN)  # as in a background job: Dagster would leave SIGTERM so
    try:
        assert main([]) == 0
        assert signal.getsignal(signal.SIGTERM) == sigterm, "the runs left SIGTERM changed"
    finally:
        signal.signal(signal.SIGINT, sigint)
    out = capsys.readouterr().out
    assert "vox-mens main job: SUCCESS" in out
    assert "  corpus partitions:  13/13 built in " in out and "(2 processes)" in out
    assert "  gate pass rate:     100.0% (minimum 95% per partition; partitions 100.0%..100.0%)" in out
    assert "  name copying:       4.10 nats on a name's repeat vs 3.90 first (does not copy names" in out
    assert "  next:               `.venv/bin/vox serve`" in out and "`make ui`" in out  # what to do now
    assert (tmp_path / "state" / "artifacts" / "corpus" / "train.parquet").is_file() and set(seen) >= set(FAKED)


def test_dagster_runs_leave_sigterm_as_it_was() -> None:
    """Dagster maps SIGTERM to SIGINT's handler during an in-process run and leaves it so: with SIGINT
    ignored (a background job), SIGTERM would stay ignored, and the DDP launcher with it."""
    import dagster as dg

    from pipeline.interrupts import handlers_restored

    @dg.asset
    def one() -> int:
        return 1

    sigterm = signal.getsignal(signal.SIGTERM)
    sigint = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with handlers_restored():
            assert dg.materialize([one]).success
        assert signal.getsignal(signal.SIGTERM) == sigterm and signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, sigint)


def test_a_failed_release_gate_says_how_to_serve_the_adapter_anyway(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A fresh run whose adapter did not beat the base publishes no export: the summary names the
    command that serves the base model with this run's adapter (new-user trial: nothing said what next)."""
    import assets.main as m

    class Run:
        run_id, success = "0123456789", False

        def get_asset_materialization_events(self) -> list[Any]:
            return []

        def get_step_failure_events(self) -> list[Any]:
            return []

    results = {"qlora_adapter": {"base_model": "/s/base_model/model", "adapter_dir": "/s/runs/f/adapter",
                                 "eval_loss": 1.2, "train_loss": 0.6, "steps": 80, "tokens_per_s": 2000.0,
                                 "quantized": True, "device": "cpu"},
               "eval_report": {"base": {"pass_at_1": 0.311, "pass_at_k": 0.4, "k": 2},
                               "adapter": {"pass_at_1": 0.287, "pass_at_k": 0.39, "k": 2}, "tasks": 102,
                               "passed": False, "reason": "adapter pass@1 0.287 not above base 0.311"}}
    monkeypatch.setattr(m, "_this_run", lambda stage, produced, root: results.get(stage))
    lines = m.summary(Run(), 60.0, None, tmp_path)
    assert "  release gate:       FAIL: adapter pass@1 0.287 not above base 0.311" in lines
    assert lines[-1] == ("  next:               serve it anyway: `.venv/bin/vox serve /s/base_model/model "
                         "--adapter /s/runs/f/adapter`, then `.venv/bin/vox chat --model free`")


def test_the_code_version_is_the_commit_and_says_when_files_changed(tmp_path: Path) -> None:
    """User trial: the summary printed two Dagster run ids (which read like commit hashes) and not the
    git commit the README asks figures to be quoted with."""
    import subprocess

    from assets.main import code_version

    assert code_version(tmp_path) == "unknown (not a git checkout)"
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    (tmp_path / "a.txt").write_text("1\n")
    subprocess.run([*git, "add", "a.txt"], check=True)
    subprocess.run([*git, "commit", "-qm", "one"], check=True)
    head = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    assert code_version(tmp_path) == head
    (tmp_path / "new.txt").write_text("untracked files do not count\n")
    assert code_version(tmp_path) == head
    (tmp_path / "a.txt").write_text("2\n")
    assert code_version(tmp_path) == f"{head} + uncommitted changes"


def test_a_failed_blocking_check_is_named_with_its_description_and_reason() -> None:
    """User trial: the failed-step line stopped at "1 blocking asset check failed with ERROR severity:"
    (the check's name was on the next line of Dagster's error, and why it failed nowhere)."""
    from assets.main import failure_reason

    @dg.asset(check_specs=[dg.AssetCheckSpec("beats_base", asset="report", blocking=True,
                                             description="adapter pass@1 > base pass@1")])
    def report() -> dg.MaterializeResult:
        return dg.MaterializeResult(check_results=[dg.AssetCheckResult(
            check_name="beats_base", passed=False, metadata={"reason": "adapter 0.287 not above base 0.311"})])

    @dg.asset(deps=[report])
    def exported() -> None: ...

    with dg.instance_for_test() as instance:
        result = dg.materialize([report, exported], instance=instance, raise_on_error=False)
    [event] = result.get_step_failure_events()
    assert failure_reason(event, result) == ("check beats_base (adapter pass@1 > base pass@1) failed: "
                                             "adapter 0.287 not above base 0.311")
    # without the run's check evaluations: Dagster's message whole, not cut at its colon
    assert failure_reason(event) == ("DagsterAssetCheckFailedError: 1 blocking asset check failed with ERROR "
                                     "severity: report: beats_base")
