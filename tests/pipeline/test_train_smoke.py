"""QLoRA training on a micro model: loss logged, LoRA weights change, 4-bit layers, resume."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pipeline.base_model import BaseModelConfig, build_base_model
from pipeline.sample_corpus import MICRO_RECIPE, sample_rows
from pipeline.train import TrainConfig, make_sft_data, run_fingerprint, train

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def micro_base(tmp_path_factory: pytest.TempPathFactory) -> str:
    rows = [r for r in sample_rows(80) if r["split"] == "train"]
    out = tmp_path_factory.mktemp("base") / "model"
    return build_base_model(BaseModelConfig(**MICRO_RECIPE["base_model"]), rows, out, "v1").model


def _setup(base: str, **overrides: Any) -> tuple[TrainConfig, Any]:
    cfg = TrainConfig(**{**MICRO_RECIPE["train"], "base_model": base, **overrides})
    rows = sample_rows(80)
    data = make_sft_data([r for r in rows if r["split"] == "train"], [r for r in rows if r["split"] == "heldout"],
                         cfg, corpus_version="v1", base_fingerprint="b1")
    return cfg, data


def _lora(adapter_dir: str) -> dict[str, Any]:
    from safetensors.torch import load_file

    return load_file(str(Path(adapter_dir) / "adapter_model.safetensors"))


def test_four_bit_layers_present(micro_base: str) -> None:
    from pipeline.quant import count_4bit_layers, load_for_training

    model, quantized = load_for_training(micro_base, "nf4", "cpu")
    assert quantized
    assert count_4bit_layers(model) == 2 * 7  # 2 blocks x (q, k, v, o, gate, up, down)
    plain, q2 = load_for_training(micro_base, "none", "cpu")
    assert not q2 and count_4bit_layers(plain) == 0


def test_smoke_loss_logged_and_lora_changed(micro_base: str, tmp_path: Path) -> None:
    from mlflow.tracking import MlflowClient

    from pipeline.tracking import default_tracking_uri

    cfg, data = _setup(micro_base)
    res = train(cfg, data, tmp_path, recipe_name="micro")
    assert res.quantized and res.steps == cfg.max_steps and res.device == "cpu"
    assert len(res.losses) >= cfg.max_steps and all(loss > 0 for _, loss in res.losses)
    assert res.eval_loss is not None and res.tokens > 0
    weights = _lora(res.adapter_dir)
    lora_b = [w for k, w in weights.items() if "lora_B" in k]
    assert lora_b and all(float(w.abs().sum()) > 0 for w in lora_b)  # peft initialises B to zero
    run = MlflowClient(default_tracking_uri()).get_run(res.mlflow_run_id)
    assert run.info.status == "FINISHED"
    assert "loss" in run.data.metrics and "eval_loss" in run.data.metrics
    assert run.data.params["train.lora_r"] == str(cfg.lora_r)
    # finished: the same fingerprint is reused, not retrained
    assert train(cfg, data, tmp_path).reused


class Interrupt(Exception):
    """Stands in for a killed process."""


def test_resume_after_interrupt(micro_base: str, tmp_path: Path) -> None:
    from transformers import TrainerCallback

    class KillAfterFirstCheckpoint(TrainerCallback):
        def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            raise Interrupt(f"killed after checkpoint-{state.global_step}")

    cfg, data = _setup(micro_base)
    with pytest.raises(Exception, match="killed after checkpoint-2"):
        train(cfg, data, tmp_path, callbacks=[KillAfterFirstCheckpoint()])
    run_dir = tmp_path / "runs" / run_fingerprint(cfg, data)
    assert json.loads((run_dir / "run.json").read_text())["status"] == "failed"
    assert (run_dir / "checkpoint-2").is_dir() and not (run_dir / "adapter").exists()
    res = train(cfg, data, tmp_path)
    assert res.resumed_from == "checkpoint-2" and res.steps == cfg.max_steps
    assert [s for s, _ in res.losses][-1] == cfg.max_steps


def test_changed_recipe_or_corpus_is_a_new_run(micro_base: str) -> None:
    cfg, data = _setup(micro_base)
    fp = run_fingerprint(cfg, data)
    assert run_fingerprint(replace(cfg, learning_rate=1e-3), data) != fp
    assert run_fingerprint(cfg, replace(data, corpus_version="v2")) != fp
    assert run_fingerprint(replace(cfg, save_steps=99), data) == fp  # bookkeeping knobs do not fork runs


def test_assistant_only_labels(micro_base: str, tmp_path: Path) -> None:
    from pipeline.train import build_trainer

    cfg, data = _setup(micro_base, max_train_rows=8, max_length=1024)
    trainer = build_trainer(cfg, data, tmp_path)
    tok = trainer.processing_class
    row = trainer.train_dataset[0]
    batch = trainer.data_collator([row])
    labels = [i for i in batch["labels"][0].tolist() if i != -100]
    text = tok.decode(labels)
    assert "```vox" in text and "<|im_end|>" in text
    assert "<|im_start|>" not in text and "Write" not in text  # no prompt tokens in the loss
    assert "attention_mask" not in batch and "position_ids" in batch  # padding-free packed batch
