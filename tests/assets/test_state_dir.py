"""One path for data between stages (issue 12.1/12.2; partitioned corpus: issue 13.1).

Setting the resource's ``state_dir`` puts everything under it — corpus, every later stage's
output and result, the MLflow store — and nothing under ``$VOX_STATE_DIR``. The corpus version is
one string: the ``corpus`` asset's data version, the reader's version and what
``python -m pipeline.stages`` reports for the same recipe.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from pipeline import paths, stages
from pipeline.generators import PARTITIONS
from pipeline.stage_result import StageResult

RECIPE = "corpus:\n  seed: 9\n  pairs: 120\n  size: 200\n  workers: 1\n"

def _fake_data() -> dict[str, dict[str, Any]]:
    """Results shaped like the real stages' (their own dataclasses), for the asset metadata code."""
    from pipeline.base_model import BaseModelResult
    from pipeline.evaluate import EvalReport, ModelEval
    from pipeline.train import TrainResult

    scores = ModelEval(pass_at_1=0.2, pass_at_k=0.2, k=2, n=2, per_family={}, per_kind={}, failure_codes=())
    report = EvalReport(base=scores, adapter=scores, threshold=0.1, passed=True, reason="ok",
                        system_prompt_mode="none", tasks=1)
    train = TrainResult(adapter_dir="a", run_dir="r", fingerprint="fp", steps=1, train_loss=1.0, eval_loss=None,
                        tokens=1, tokens_per_s=1.0, seconds=0.0, quantized=True, device="cpu",
                        system_prompt_mode="none", base_model="m", losses=((1, 1.0),))
    return {
        "base_model": dataclasses.asdict(BaseModelResult(model="m", bootstrap=True, params=1, fingerprint="fp",
                                                         pretrain_losses=(1.0,),
                                                         copy_probe={"first_nll": 3.9, "repeat_nll": 4.1,
                                                                     "first_tokens": 10, "repeat_tokens": 12})),
        "qlora_adapter": {**dataclasses.asdict(train), "corpus": {"version": "v"}},
        "eval_report": dataclasses.asdict(report),
        "exported_model": {"path": "e", "published": False,
                           "verify": {"passed": True, "detail": "ok", "max_logit_diff": 0.0},
                           "card": {"model_name": "m", "eval_passed": True, "pass_at_1": 0.2,
                                    "system_prompt_mode": "none", "corpus_version": "v"}},
    }


FAKED = ("base_model", "qlora_adapter", "eval_report", "exported_model")


def _fake(name: str, seen: dict[str, Path]) -> Any:
    def run(config: Any, inputs: Any, out_dir: Path, **extras: Any) -> StageResult:
        seen[name] = paths.state_dir()  # what any nested code resolving the state dir gets
        tracker = extras.get("tracker")
        if tracker is not None:
            seen["mlflow"] = Path(tracker.tracking_uri.removeprefix("sqlite:///"))
        (out_dir / "made.txt").write_text(name)
        return StageResult(name, "v", _fake_data()[name])
    return run


def test_the_resource_state_dir_receives_everything(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from assets.defs.corpus import compiler_gate, corpus, generated_pairs, system_prompt
    from assets.defs.evaluation import eval_report
    from assets.defs.export import exported_model
    from assets.defs.resources import VoxStateResource
    from assets.defs.training import MlflowResource, base_model, qlora_adapter

    env_dir, root = tmp_path / "env", tmp_path / "resource"
    monkeypatch.setenv("VOX_STATE_DIR", str(env_dir))
    (tmp_path / "tiny.yaml").write_text(RECIPE)
    seen: dict[str, Path] = {}
    for name in FAKED:  # the heavy stages are faked; the seam (root passing) is real
        monkeypatch.setitem(stages.STAGES, name, dataclasses.replace(stages.STAGES[name], run=_fake(name, seen)))
    from tests.assets.test_corpus_partitions import materialize_partitions

    assert all(r.success for r in materialize_partitions(root, tmp_path / "tiny.yaml", ["web"],
                                                         [generated_pairs, compiler_gate]))
    for key in PARTITIONS:  # the other partitions straight through the stage runner, under the same root
        if key != "web":
            for stage in ("generated_pairs", "gated_pairs"):
                stages.run_stage(stage, str(tmp_path / "tiny.yaml"), root, partition=key)
    result = dg.materialize(
        [system_prompt, corpus, base_model, qlora_adapter, eval_report, exported_model],
        resources={"vox_state": VoxStateResource(state_dir=str(root), recipe=str(tmp_path / "tiny.yaml")),
                   "mlflow": MlflowResource()})
    assert result.success
    for name in ("system_prompt", "generated_pairs/web", "gated_pairs/web", "corpus", *FAKED):
        assert (root / "artifacts" / name / "result.json").is_file() or name == "corpus", name
    assert {k: v for k, v in seen.items() if k != "mlflow"} == {name: root.resolve() for name in FAKED}
    assert seen["mlflow"] == root.resolve() / "mlflow" / "mlflow.db"
    assert (root / "artifacts" / "corpus" / "train.parquet").is_file()
    assert not env_dir.exists() or not any(env_dir.rglob("*"))
    corpus_version = (result.asset_materializations_for_node("corpus")[0].tags or {})["dagster/data_version"]
    assert corpus_version == stages.read_result("corpus", root).version
    base_meta = result.asset_materializations_for_node("base_model")[0].metadata  # the name-copying probe
    assert (base_meta["name_nll_first"].value, base_meta["name_nll_repeat"].value) == (3.9, 4.1)
    assert base_meta["copies_names"].value is False


def test_dagster_and_the_stage_cli_report_the_same_corpus_version(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from assets.defs import corpus as corpus_defs
    from assets.defs.resources import VoxStateResource
    from pipeline.corpus_io import load_corpus

    recipe = tmp_path / "tiny.yaml"
    recipe.write_text(RECIPE)
    dagster_root, cli_root = tmp_path / "dagster", tmp_path / "cli"
    from tests.assets.test_corpus_partitions import backfill_in_process

    assert backfill_in_process(dagster_root, recipe).success  # every partition, then the mix
    result = dg.materialize([corpus_defs.system_prompt, corpus_defs.corpus],
                            resources={"vox_state": VoxStateResource(state_dir=str(dagster_root), recipe=str(recipe))})
    monkeypatch.setenv("VOX_STATE_DIR", str(cli_root))
    assert stages.main(["--recipe", str(recipe), "system_prompt", "generated_pairs", "gated_pairs", "corpus"]) == 0
    data_version = (result.asset_materializations_for_node("corpus")[0].tags or {})["dagster/data_version"]
    cli = load_corpus(cli_root / "artifacts" / "corpus")
    assert data_version == cli.version == load_corpus(dagster_root / "artifacts" / "corpus").version
    # the partitioned path and the stage CLI write the same bytes: corpus and every partition's tables
    files = ["corpus/train.parquet", "corpus/heldout.parquet", "corpus/manifest.json"] + [
        f"{stage}/{key}/{name}" for key in PARTITIONS
        for stage, name in (("generated_pairs", "pairs.parquet"), ("gated_pairs", "pairs.parquet"),
                            ("gated_pairs", "rejections.parquet"))]
    for name in files:
        assert (dagster_root / "artifacts" / name).read_bytes() == (cli_root / "artifacts" / name).read_bytes(), name
    assert os.path.samefile(paths.artifacts_dir("corpus"), cli_root / "artifacts" / "corpus")
