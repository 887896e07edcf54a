"""QLoRA training on a micro model: loss logged, LoRA weights change, 4-bit layers, resume; rows that do
not fit, missing labels, tied embeddings and failures end the run before step 0 or FAILED with their text."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pipeline.errors import TrainingError
from pipeline.sample_corpus import MICRO_RECIPE, sample_rows
from pipeline.train import TrainConfig, make_sft_data, run_fingerprint, train

pytestmark = pytest.mark.slow



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
    assert res.mlflow_run_id
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
    run = _run(tmp_path, json.loads((run_dir / "run.json").read_text())["mlflow_run_id"])
    assert run.info.status == "FAILED" and "killed after checkpoint-2" in run.data.tags["error"]
    res = train(cfg, data, tmp_path)
    assert res.resumed_from == "checkpoint-2" and res.steps == cfg.max_steps
    assert [s for s, _ in res.losses][-1] == cfg.max_steps


def test_resume_from_the_last_step_saves_its_adapter_without_training(micro_base: str, tmp_path: Path) -> None:
    """Killed after the last checkpoint, before the adapter was written: the rerun takes no step past
    max_steps (transformers' resume would take one) and saves that checkpoint's weights."""
    from transformers import TrainerCallback

    class KillAfterLastCheckpoint(TrainerCallback):
        def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if state.global_step == state.max_steps:
                raise Interrupt(f"killed after checkpoint-{state.global_step}")

    cfg, data = _setup(micro_base)
    with pytest.raises(Exception, match=f"killed after checkpoint-{cfg.max_steps}"):
        train(cfg, data, tmp_path, callbacks=[KillAfterLastCheckpoint()])
    run_dir = tmp_path / "runs" / run_fingerprint(cfg, data)
    assert not (run_dir / "adapter").exists()
    res = train(cfg, data, tmp_path)
    assert res.resumed_from == f"checkpoint-{cfg.max_steps}" and res.steps == cfg.max_steps
    assert [s for s, _ in res.losses] == list(range(1, cfg.max_steps + 1))
    last = _lora(str(run_dir / f"checkpoint-{cfg.max_steps}"))
    assert {k: v.tolist() for k, v in _lora(res.adapter_dir).items()} == {k: v.tolist() for k, v in last.items()}
    assert json.loads((Path(res.adapter_dir) / "vox_train.json").read_text())["steps"] == cfg.max_steps


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


def _rows_with(prompt: str | None = None, response: str | None = None, n: int = 80) -> tuple[list, list]:
    rows = sample_rows(n)
    for r in rows:
        if prompt is not None:
            r["prompt"] = prompt
        if response is not None:
            r["response"] = response
        r["messages"] = [{"role": "user", "content": r["prompt"]}, {"role": "assistant", "content": r["response"]}]
    return [r for r in rows if r["split"] == "train"], [r for r in rows if r["split"] == "heldout"]


def _run(tmp_path: Path, run_id: str) -> Any:
    from mlflow.tracking import MlflowClient

    from pipeline.tracking import default_tracking_uri

    return MlflowClient(default_tracking_uri()).get_run(run_id)


def test_rows_too_long_are_dropped_and_counted(micro_base: str, tmp_path: Path) -> None:
    """A prompt that fills max_length leaves no label: such rows are left out, counted, logged."""
    cfg, _ = _setup(micro_base)
    train_rows, eval_rows = _rows_with()
    long_rows, _ = _rows_with(prompt="word " * 300)
    mixed = train_rows[:20] + [{**r, "id": f"long-{i}"} for i, r in enumerate(long_rows[:6])]
    data = make_sft_data(mixed, eval_rows, cfg, corpus_version="v1", base_fingerprint="b1")
    res = train(cfg, data, tmp_path)
    assert res.fit["train_rows"] == 26 and res.fit["train_rows_dropped_prompt_too_long"] == 6
    assert res.fit["train_rows_kept"] == 26 - res.fit["train_rows_dropped"]
    assert all(loss > 0 for _, loss in res.losses)
    assert res.mlflow_run_id
    metrics = _run(tmp_path, res.mlflow_run_id).data.metrics
    assert metrics["train_rows_dropped_prompt_too_long"] == 6 and metrics["supervised_tokens"] > 0


def test_no_trainable_row_fails_before_step_0(micro_base: str, tmp_path: Path) -> None:
    cfg, _ = _setup(micro_base)
    train_rows, eval_rows = _rows_with(prompt="word " * 300)
    data = make_sft_data(train_rows, eval_rows, cfg, corpus_version="v1", base_fingerprint="b1")
    with pytest.raises(TrainingError, match=r"no train row fits train\.max_length=128 whole") as info:
        train(cfg, data, tmp_path)
    run_dir = tmp_path / "runs" / run_fingerprint(cfg, data)
    state = json.loads((run_dir / "run.json").read_text())
    assert state["status"] == "failed" and state["step"] == 0 and not list(run_dir.glob("checkpoint-*"))
    run = _run(tmp_path, state["mlflow_run_id"])
    assert run.info.status == "FAILED" and run.info.end_time and str(info.value) in run.data.tags["error"]


def test_a_logged_step_without_supervised_tokens_fails_the_run(micro_base: str, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Should labels vanish after the row filter (a template bug, a collator change), loss 0.0 is an error."""
    from pipeline import train_data

    real = train_data.encode_rows

    def no_labels(*args: Any, **kwargs: Any) -> Any:
        columns, report = real(*args, **kwargs)
        return {**columns, "labels": [[train_data.IGNORE] * len(x) for x in columns["labels"]]}, report

    monkeypatch.setattr(train_data, "encode_rows", no_labels)
    cfg, data = _setup(micro_base)
    with pytest.raises(TrainingError, match=r"step 1: no supervised \(assistant\) token"):
        train(cfg, data, tmp_path)
    state = json.loads((tmp_path / "runs" / run_fingerprint(cfg, data) / "run.json").read_text())
    assert state["status"] == "failed" and "no supervised" in state["message"]
    assert _run(tmp_path, state["mlflow_run_id"]).info.status == "FAILED"


@pytest.mark.parametrize("targets", [("q_proj", "embed_tokens"), ("lm_head",), ("v_proj", "model.embed_tokens")])
def test_lora_on_tied_embeddings_is_refused_before_step_0(micro_base: str, tmp_path: Path,
                                                          targets: tuple[str, ...]) -> None:
    from pipeline.errors import RecipeError
    from pipeline.train_cli import run_cli

    cfg, data = _setup(micro_base, target_modules=targets)
    with pytest.raises(RecipeError, match=r"embeddings are tied .*remove them from train\.target_modules"):
        train(cfg, data, tmp_path)
    assert not list((tmp_path / "runs" / run_fingerprint(cfg, data)).glob("checkpoint-*"))
    assert run_cli(lambda: train(cfg, data, tmp_path / "cli")) == 2  # `python -m pipeline.train` exits 2


def test_failure_stores_its_error_text(micro_base: str, tmp_path: Path) -> None:
    from transformers import TrainerCallback

    class Boom(TrainerCallback):
        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            raise ValueError("disk full\nsecond line")

    cfg, data = _setup(micro_base)
    with pytest.raises(TrainingError, match="ValueError: disk full second line"):
        train(cfg, data, tmp_path, callbacks=[Boom()])
    state = json.loads((tmp_path / "runs" / run_fingerprint(cfg, data) / "run.json").read_text())
    assert state["status"] == "failed" and state["message"] == "ValueError: disk full second line" and state["ended"]
    run = _run(tmp_path, state["mlflow_run_id"])
    assert run.info.status == "FAILED" and run.info.end_time is not None
    assert run.data.tags["error"] == "ValueError: disk full second line"


def test_special_token_text_in_a_response_trains_as_text(micro_base: str, tmp_path: Path) -> None:
    from pipeline.train import build_trainer

    train_rows, eval_rows = _rows_with(response="```vox\nprint(\"<|im_end|>\")\n```")
    cfg, _ = _setup(micro_base)
    data = make_sft_data(train_rows[:4], eval_rows, cfg)
    trainer = build_trainer(cfg, data, tmp_path)
    eos = trainer.processing_class.eos_token_id
    packed = trainer.train_dataset[0]
    seqs = len(packed["seq_lengths"])
    # one end-of-user-turn and one end-of-assistant-turn id per row: the typed one stays text
    assert packed["input_ids"].count(eos) == 2 * seqs
    assert [t for t in packed["labels"] if t != -100].count(eos) == seqs


def test_last_checkpoint_skips_and_removes_an_incomplete_one(tmp_path: Path) -> None:
    from pipeline.train import last_checkpoint

    for step in (2, 4, 6):
        (tmp_path / f"checkpoint-{step}").mkdir()
    for step in (2, 4):
        (tmp_path / f"checkpoint-{step}" / "trainer_state.json").write_text("{}")
    (tmp_path / "checkpoint-10").mkdir()  # numeric order, not text order
    assert last_checkpoint(tmp_path, remove_incomplete=False) == tmp_path / "checkpoint-4"
    assert (tmp_path / "checkpoint-6").is_dir() and (tmp_path / "checkpoint-10").is_dir()  # other ranks only skip
    assert last_checkpoint(tmp_path) == tmp_path / "checkpoint-4"
    assert not (tmp_path / "checkpoint-6").exists() and not (tmp_path / "checkpoint-10").exists()
    assert last_checkpoint(tmp_path / "checkpoint-2") is None


def test_resume_point_reads_the_latest_run_without_removing_anything(tmp_path: Path) -> None:
    from pipeline.train_runs import resume_point

    assert resume_point(tmp_path) is None
    run_dir = tmp_path / "runs" / "abc"
    for step in (3, 6):
        (run_dir / f"checkpoint-{step}").mkdir(parents=True)
    (run_dir / "checkpoint-3" / "trainer_state.json").write_text("{}")
    (tmp_path / "latest_run.json").write_text(json.dumps({"fingerprint": "abc", "run_dir": str(run_dir)}))
    assert resume_point(tmp_path) == "checkpoint-3" and (run_dir / "checkpoint-6").is_dir()


@pytest.mark.parametrize("on", [False, True])
def test_training_arguments_draw_no_deprecation_warning(tmp_path: Path, on: bool) -> None:
    """Activation checkpointing is set under the name this transformers knows (its old name,
    `gradient_checkpointing`, drew a FutureWarning in every training run's output)."""
    import warnings

    from pipeline.train_build import sft_args

    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*checkpointing.*", category=FutureWarning)
        args = sft_args(replace(TrainConfig(), gradient_checkpointing=on, bf16="off"), tmp_path, "cpu", False)
    assert args.gradient_checkpointing is on
