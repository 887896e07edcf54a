"""The partitioned corpus (issue 13.1): one partition per source family, rebuilt independently.

- the partitions are the generator families plus ``preflight``; ``corpus`` reads all of them;
- the partitioned Dagster path and ``python -m pipeline.stages`` give byte-identical corpus files;
- rematerializing one partition rewrites only that partition's files;
- a partition whose gate rejects everything fails that partition in one line with its rejection
  table (metadata + file), and the corpus then refuses to mix instead of using an older file;
- the backfill job builds partitions as steps of one run, in step processes under the
  multiprocess executor, and reports per-partition materializations and gate checks.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import dagster as dg
import pytest

from assets.defs import corpus as corpus_defs
from assets.defs.resources import VoxStateResource
from pipeline.corpus_files import read_rows, write_parquet
from pipeline.generators import PARTITIONS, PREFLIGHT_PARTITION

RECIPE = "corpus:\n  seed: 9\n  pairs: 120\n  size: 200\n  workers: 1\n  min_gate_pass_rate: 0.5\n"
PARTITIONED = [corpus_defs.generated_pairs, corpus_defs.compiler_gate]


@pytest.fixture
def recipe(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.yaml"
    path.write_text(RECIPE)
    return path


def _state(root: Path, recipe: Path) -> dict[str, VoxStateResource]:
    return {"vox_state": VoxStateResource(state_dir=str(root), recipe=str(recipe))}


def materialize_partitions(root: Path, recipe: Path, keys: Sequence[str] = PARTITIONS,
                           assets: Sequence[dg.AssetsDefinition] = PARTITIONED) -> list[dg.ExecuteInProcessResult]:
    """Materialize ``assets`` for each partition in ``keys`` (one run per partition, as a Dagster backfill does)."""
    with dg.instance_for_test() as instance:
        return [dg.materialize(assets, partition_key=key, instance=instance, resources=_state(root, recipe),
                               raise_on_error=False) for key in keys]


def backfill_in_process(root: Path, recipe: Path, keys: Sequence[str] = ()) -> dg.ExecuteInProcessResult:
    """Every partition (or ``keys``) through the ``corpus_backfill`` job in one in-process run (fast)."""
    from assets.defs.corpus_backfill import backfill_job, run_config

    job = backfill_job()
    return job.execute_in_process(run_config=run_config(job, keys, state=_state(root, recipe)["vox_state"]),
                                  raise_on_error=False)


def _files(root: Path, key: str) -> dict[str, tuple[bytes, int]]:
    out = {}
    for stage in ("generated_pairs", "gated_pairs"):
        for f in sorted((root / "artifacts" / stage / key).iterdir()):
            out[f"{stage}/{f.name}"] = (f.read_bytes(), f.stat().st_mtime_ns)
    return out


def test_partitions_are_the_families_plus_preflight_and_corpus_reads_all() -> None:
    from assets.definitions import defs
    from pipeline.generators import FAMILIES

    assert PARTITIONS == (*(f.name for f in FAMILIES), PREFLIGHT_PARTITION)
    graph = defs().resolve_asset_graph()
    for key in ("generated_pairs", "gated_pairs", "gate_rejections"):
        partitions = graph.get(dg.AssetKey(key)).partitions_def
        assert partitions is not None and tuple(partitions.get_partition_keys()) == PARTITIONS
    node = graph.get(dg.AssetKey("corpus"))
    assert node.partitions_def is None and node.parent_keys == {dg.AssetKey("gated_pairs")}


def test_partition_runs_report_per_partition_metadata_and_checks(tmp_path: Path, recipe: Path) -> None:
    runs = materialize_partitions(tmp_path / "s", recipe, ["web", PREFLIGHT_PARTITION])
    assert all(r.success for r in runs)
    for run, key in zip(runs, ["web", PREFLIGHT_PARTITION]):
        meta = {m.asset_key.to_user_string(): m for m in run.asset_materializations_for_node("compiler_gate")}
        gated = meta["gated_pairs"]
        assert gated.partition == key and gated.metadata["pass_rate"].value == 1.0
        kept = gated.metadata["rows_kept"].value
        assert gated.metadata["dagster/row_count"].value == kept and isinstance(kept, int) and kept > 0
        assert meta["gate_rejections"].metadata["rows"].value == 0
        (check,) = run.get_asset_check_evaluations()
        assert check.passed and check.check_name == "gate_pass_rate"
    generated = runs[1].asset_materializations_for_node("generated_pairs")[0].metadata
    assert "| repair |" in str(generated["per_family"].value) and generated["programs"].value == 0


def test_rematerializing_one_partition_leaves_the_others_untouched(tmp_path: Path, recipe: Path) -> None:
    root = tmp_path / "s"
    assert backfill_in_process(root, recipe).success
    before = {key: _files(root, key) for key in PARTITIONS}
    (again,) = materialize_partitions(root, recipe, ["mcp"])
    assert again.success
    assert {(str(e.asset_key and e.asset_key.to_user_string()), e.partition)
            for e in again.get_asset_materialization_events()} == \
        {("generated_pairs", "mcp"), ("gated_pairs", "mcp"), ("gate_rejections", "mcp")}
    after = {key: _files(root, key) for key in PARTITIONS}
    for key in PARTITIONS:
        if key == "mcp":  # rewritten (new mtimes), same bytes: the partition is deterministic on its own
            assert {k: v[0] for k, v in after[key].items()} == {k: v[0] for k, v in before[key].items()}
            assert all(after[key][k][1] > before[key][k][1] for k in after[key])
        else:
            assert after[key] == before[key], key


def test_a_partition_whose_gate_rejects_everything_fails_with_its_rejection_table(tmp_path: Path,
                                                                                  recipe: Path) -> None:
    from assets.main import failure_reason

    root = tmp_path / "s"
    assert backfill_in_process(root, recipe).success
    pairs = root / "artifacts" / "generated_pairs" / "web" / "pairs.parquet"
    rows = read_rows(pairs, kind="pairs")
    write_parquet([{**r, "response": "no code here"} for r in rows], pairs, "pairs")  # bad input for the gate
    (failed,) = materialize_partitions(root, recipe, ["web"], [corpus_defs.compiler_gate])
    assert not failed.success
    (event,) = failed.get_step_failure_events()
    reason = failure_reason(event)
    assert reason.startswith(f"gated_pairs partition 'web': the gate rejected all {len(rows)} pairs "
                             f"(no_vox_block {len(rows)}); first: ") and "\n" not in reason
    data = event.step_failure_data.user_failure_data
    assert data is not None and "no_vox_block" in str(data.metadata["first_rejections"].value)
    web = root / "artifacts" / "gated_pairs" / "web"
    assert len(read_rows(web / "rejections.parquet", kind="rejections")) == len(rows)
    assert not (web / "pairs.parquet").exists() and not (web / "result.json").exists()  # no older file to mix
    others = [r for r in materialize_partitions(root, recipe, ["mcp"], [corpus_defs.compiler_gate])]
    assert others[0].success  # the other partitions are unaffected
    mix = dg.materialize([corpus_defs.corpus], resources=_state(root, recipe), raise_on_error=False)
    assert not mix.success
    assert "partition(s) web missing" in failure_reason(mix.get_step_failure_events()[0])


def test_the_backfill_job_builds_partitions_in_step_processes(tmp_path: Path, recipe: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Two partitions through the multiprocess executor (forkserver), as ``make run`` runs all of them."""
    from assets.main import run_backfill

    monkeypatch.setenv("VOX_RECIPE", str(recipe))
    monkeypatch.setenv("VOX_STATE_DIR", str(tmp_path / "s"))
    with dg.instance_for_test() as instance:
        result = run_backfill(instance, ("web", "mcp"), concurrent=2)
        assert result.success
        steps = {e.step_key for e in result.all_events if e.is_step_success}
        pids = {e.pid for e in result.all_events if e.is_step_start}
    assert steps == {"corpus_partition_keys", "build_corpus_partition[web]", "build_corpus_partition[mcp]",
                     "corpus_partitions_built"}
    assert os.getpid() not in pids  # every step ran in a child process
    made = {(str(e.asset_key and e.asset_key.to_user_string()), e.partition)
            for e in result.get_asset_materialization_events()}
    assert made == {(a, k) for a in ("generated_pairs", "gated_pairs", "gate_rejections") for k in ("web", "mcp")}
    checks = {(c.partition, c.passed) for c in result.get_asset_check_evaluations()}
    assert checks == {("web", True), ("mcp", True)}
    assert (tmp_path / "s" / "artifacts" / "gated_pairs" / "web" / "pairs.parquet").is_file()
    assert not (tmp_path / "s" / "artifacts" / "gated_pairs" / "functions").exists()


def test_the_backfill_job_names_an_unknown_partition_in_one_line(recipe: Path, tmp_path: Path) -> None:
    from assets.defs.corpus_backfill import backfill_job, run_config
    from assets.main import failure_reason

    job = backfill_job()
    result = job.execute_in_process(run_config=run_config(job, ["webb"], state=_state(tmp_path, recipe)["vox_state"]),
                                    raise_on_error=False)
    assert not result.success
    reason = failure_reason(result.get_step_failure_events()[0])
    assert reason == f"unknown corpus partition(s) webb; valid: {', '.join(PARTITIONS)}"
