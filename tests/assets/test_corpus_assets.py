"""Corpus assets through Dagster: materialize the group with checks (every partition, then the
mix), byte-identical reruns, and a blocking prompt check that stops the graph on a legacy prompt."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from assets.defs import corpus as corpus_defs
from assets.defs.resources import VoxStateResource

ASSETS = [corpus_defs.system_prompt, corpus_defs.system_prompt_is_2026_syntax, corpus_defs.generated_pairs,
          corpus_defs.compiler_gate, corpus_defs.corpus, corpus_defs.corpus_split_is_clean]
UNPARTITIONED = [corpus_defs.system_prompt, corpus_defs.system_prompt_is_2026_syntax, corpus_defs.corpus,
                 corpus_defs.corpus_split_is_clean]


@pytest.fixture
def recipe(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.yaml"
    path.write_text("corpus:\n  seed: 9\n  pairs: 260\n  size: 400\n  workers: 1\n")
    return path


def _run(state: Path, recipe: Path, assets: list[Any] = UNPARTITIONED,
         partition: str | None = None) -> dg.ExecuteInProcessResult:
    return dg.materialize(assets, resources={"vox_state": VoxStateResource(state_dir=str(state), recipe=str(recipe))},
                          raise_on_error=False, partition_key=partition)


def test_materialize_corpus_group_twice_is_byte_identical(tmp_path: Path, recipe: Path) -> None:
    """Every partition (backfill job), then the mix, twice: the same bytes; all checks pass."""
    from pipeline.generators import PARTITIONS
    from tests.assets.test_corpus_partitions import backfill_in_process

    outputs = []
    for run in ("a", "b"):
        parts = backfill_in_process(tmp_path / run, recipe)
        assert parts.success
        made = {(str(e.asset_key and e.asset_key.to_user_string()), e.partition)
                for e in parts.get_asset_materialization_events()}
        assert made == {(a, k) for a in ("generated_pairs", "gated_pairs", "gate_rejections") for k in PARTITIONS}
        result = _run(tmp_path / run, recipe)
        assert result.success
        checks = [*result.get_asset_check_evaluations(), *parts.get_asset_check_evaluations()]
        assert len(checks) == 2 + len(PARTITIONS) and all(c.passed for c in checks)
        corpus_dir = tmp_path / run / "artifacts" / "corpus"
        outputs.append([(corpus_dir / f).read_bytes() for f in ("train.parquet", "heldout.parquet")])
        meta = result.asset_materializations_for_node("corpus")[0].metadata
        assert int(str(meta["train_rows"].value)) > 0 and "base64" in str(meta["token_length_histogram"].value)
        assert all(f"| {k} |" in str(meta["gated_rows_per_partition"].value) for k in PARTITIONS)
    assert outputs[0] == outputs[1]


def test_blocking_prompt_check_stops_the_graph(tmp_path: Path, recipe: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pipeline import prompt

    legacy = tmp_path / "legacy.txt"
    legacy.write_text(prompt.system_prompt() + "\n\n## Old style\nactor Counter:\n  state count: int = 0\n")
    monkeypatch.setattr(prompt, "SYSTEM_PROMPT_PATH", legacy)
    prompt.system_prompt.cache_clear()
    try:
        result = _run(tmp_path / "s", recipe, ASSETS[:3], partition="web")
    finally:
        prompt.system_prompt.cache_clear()
    evaluation = result.get_asset_check_evaluations()[0]
    assert not evaluation.passed
    assert not result.asset_materializations_for_node("generated_pairs")
    assert not (tmp_path / "s" / "artifacts" / "generated_pairs" / "web" / "pairs.parquet").exists()


def test_bad_recipe_fails_the_step_with_its_one_line_message(tmp_path: Path) -> None:
    # VOX_RECIPE=nope used to show a full Python traceback around the RecipeError.
    result = dg.materialize([corpus_defs.generated_pairs], raise_on_error=False, partition_key="web",
                            resources={"vox_state": VoxStateResource(state_dir=str(tmp_path), recipe="nope")})
    assert not result.success
    failure = result.get_step_failure_events()[0].step_failure_data
    assert failure.error is not None and failure.error.cls_name == "Failure" and failure.error.cause is None
    assert failure.user_failure_data is not None
    description = str(failure.user_failure_data.description)
    assert description.startswith("unknown recipe 'nope': expected a YAML path or one of:")
