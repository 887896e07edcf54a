"""Every asset selection a user can type plans (the way ``dagster asset materialize --select`` does it),
and a few run: either asset of the gate multi-asset alone, and a stage whose input is missing
fails in one line.

Selections: each asset ``k``, ``*k``, ``k+``, ``+k``, ``k*``; each ``group:<g>``; ``*``.
Before the gate multi-asset could be subset, ``gated_pairs``, ``*corpus`` and ``*exported_model``
raised ``DagsterInvalidSubsetError`` while planning.
"""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from tests.assets.test_definitions import ASSET_KEYS

GROUPS = ("corpus", "training", "evaluation", "export")
SELECTIONS = [s for key in ASSET_KEYS for s in (key, f"*{key}", f"{key}+", f"+{key}", f"{key}*")] \
    + [f"group:{g}" for g in GROUPS] + ["*"]


@pytest.fixture(scope="module")
def repo() -> dg.RepositoryDefinition:
    from assets.definitions import defs

    return defs().get_repository_def()


def _subset_job(repo: dg.RepositoryDefinition, select: str) -> tuple[dg.JobDefinition, set[dg.AssetKey]]:
    """What the CLI does with ``--select``: resolve, pick the implicit job, subset it."""
    keys = dg.AssetSelection.from_coercible(select.split(",")).resolve(repo.asset_graph)
    job = repo.get_implicit_job_def_for_assets(keys)
    assert job is not None
    return job.get_subset(asset_selection=keys), set(keys)


@pytest.mark.parametrize("select", SELECTIONS)
def test_every_selection_plans(repo: dg.RepositoryDefinition, select: str) -> None:
    from dagster._core.execution.api import create_execution_plan

    job, keys = _subset_job(repo, select)
    assert keys, f"{select} selects nothing"
    plan = create_execution_plan(job)  # what failed before: the plan of a partial multi-asset
    assert plan.steps
    assert set(job.asset_layer.selected_asset_keys) == keys


def test_groups_cover_every_asset(repo: dg.RepositoryDefinition) -> None:
    graph = repo.asset_graph
    grouped = {k.to_user_string() for g in GROUPS for k in dg.AssetSelection.groups(g).resolve(graph)}
    assert sorted(grouped) == ASSET_KEYS


@pytest.fixture
def tiny_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    recipe = tmp_path / "tiny.yaml"
    recipe.write_text("corpus:\n  seed: 9\n  pairs: 120\n  size: 200\n  workers: 1\n  min_gate_pass_rate: 0.5\n")
    monkeypatch.setenv("VOX_RECIPE", str(recipe))
    monkeypatch.setenv("VOX_STATE_DIR", str(tmp_path / "state"))
    return tmp_path / "state"


def _run(select: str, partition: str | None = None) -> dg.ExecuteInProcessResult:
    from assets.definitions import defs

    job, _ = _subset_job(defs().get_repository_def(), select)  # defs() reads the env now
    with dg.instance_for_test() as instance:
        return job.execute_in_process(instance=instance, raise_on_error=False, partition_key=partition)


def test_either_gate_asset_runs_alone(tiny_env: Path) -> None:
    first = _run("*gate_rejections", "web")  # system_prompt, generated_pairs, gate_rejections (not gated_pairs)
    assert first.success
    made = {str(e.asset_key and e.asset_key.to_user_string()) for e in first.get_asset_materialization_events()}
    assert made == {"system_prompt", "generated_pairs", "gate_rejections"}
    assert not [c for c in first.get_asset_check_evaluations() if c.check_name == "gate_pass_rate"]
    second = _run("gated_pairs", "web")
    assert second.success
    assert {str(e.asset_key and e.asset_key.to_user_string())
            for e in second.get_asset_materialization_events()} == {"gated_pairs"}
    (check,) = [c for c in second.get_asset_check_evaluations() if c.check_name == "gate_pass_rate"]
    assert check.passed and check.metadata["min_pass_rate"].value == 0.5


@pytest.mark.parametrize("select, missing", [("qlora_adapter", "corpus"), ("eval_report", "corpus"),
                                             ("exported_model", "qlora_adapter"), ("base_model", "corpus")])
def test_a_stage_without_its_input_fails_in_one_line(tiny_env: Path, select: str, missing: str) -> None:
    from assets.main import failure_reason

    result = _run(select)
    assert not result.success
    (event,) = result.get_step_failure_events()
    reason = failure_reason(event)
    assert event.step_failure_data.error is not None and event.step_failure_data.error.cls_name == "Failure"
    assert reason.endswith(f"is missing: materialize the `{missing}` asset first") and "\n" not in reason
