"""The main job: a bad recipe is rejected in one line before Dagster starts; the summary reads this run."""

from __future__ import annotations

from pathlib import Path

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
    assert any(line.startswith("  corpus:             not built (") for line in lines)
    assert "  gate pass rate:     n/a (gate not run)" in lines
    assert "  export:             not produced in this run" in lines
    assert any(line.startswith("  stage minutes:      prompt 0.") for line in lines)
