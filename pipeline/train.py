"""QLoRA supervised fine-tuning: trl ``SFTTrainer`` + peft LoRA on a 4-bit NF4 base.

Rows are tokenized by :mod:`pipeline.train_data`: message contents as plain text (a typed
``<|im_end|>`` is never the end-of-turn id), loss on assistant tokens only (``{% generation %}``
markers), and rows that do not fit ``max_length`` whole are dropped and counted, never truncated
(no row left: the run fails before step 0; a logged step without supervised tokens fails it too).
Best-fit-decreasing packing (padding-free batches), eval loss on the held-out split, checkpoints
every ``save_steps`` with automatic resume. A run is keyed by a fingerprint of the train recipe,
the base model and the corpus version: the same key resumes (or reuses a finished adapter), a
changed key starts a new run and says so. Every run is logged to the local MLflow store and ends
FINISHED, FAILED (error text in tag ``error``) or KILLED (SIGTERM/SIGINT, tag ``interrupted``).

The recipe and result types are in :mod:`pipeline.train_config`, the trainer is built by
:mod:`pipeline.train_build`, the run folder's bookkeeping (key, ``run.json``, checkpoints) is
:mod:`pipeline.train_runs`; names are re-exported here. Under ``accelerate launch``
(:mod:`pipeline.train_launch`, recipe ``distributed:``) every process runs :func:`train`; only rank 0
logs to MLflow and writes ``run.json`` and the adapter; a rerun after a dead worker or a killed
launcher resumes from the last complete checkpoint.

Usage (:mod:`pipeline.train_cli`; defaults < recipe < flags)::

    python -m pipeline.train --config cpu-tiny                    # QLoRA (4-bit base + LoRA)
    python -m pipeline.train --config cuda-qlora --max-steps 500  # GPU recipe, flag override
    python -m pipeline.train --config cpu-tiny --quantization none  # plain LoRA, 16-bit base
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import time
from collections.abc import Sequence
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pipeline import atomic
from pipeline.chat_format import check_mode, present
from pipeline.errors import PipelineError, RecipeError, TrainingError
from pipeline.train_build import build_trainer, check_tied_targets, peft_config, sft_args
from pipeline.train_config import DType, Positive, SFTData, TrainConfig, TrainResult
from pipeline.train_runs import end_message, last_checkpoint, read_state, run_fingerprint

__all__ = ["DType", "Positive", "SFTData", "TrainConfig", "TrainResult", "build_trainer", "check_tied_targets",
           "last_checkpoint", "main", "make_parser", "make_sft_data", "peft_config", "run_fingerprint", "sft_args",
           "train"]

log = logging.getLogger(__name__)


def make_sft_data(train_rows: list[dict[str, Any]], eval_rows: list[dict[str, Any]], cfg: TrainConfig,
                  corpus_version: str = "", base_fingerprint: str = "") -> SFTData:
    """Conversational datasets from corpus rows, presented per ``cfg.system_prompt_mode``."""
    from datasets import Dataset

    check_mode(cfg.system_prompt_mode)
    if cfg.sources:
        train_rows = [r for r in train_rows if r.get("source") in cfg.sources]
        eval_rows = [r for r in eval_rows if r.get("source") in cfg.sources]
        if not train_rows:
            raise RecipeError(f"train.sources {list(cfg.sources)} selects no train rows")
    if cfg.max_train_rows:
        train_rows = train_rows[: cfg.max_train_rows]
    eval_rows = eval_rows[: cfg.max_eval_rows] if cfg.max_eval_rows else []

    def convo(rows: list[dict[str, Any]]) -> Any:
        return Dataset.from_list([{"messages": present(r["messages"], cfg.system_prompt_mode)} for r in rows])

    return SFTData(train=convo(train_rows), eval=convo(eval_rows) if eval_rows else None,
                   corpus_version=corpus_version, base_fingerprint=base_fingerprint)


def train(cfg: TrainConfig, dataset: SFTData, out_dir: Path, *, tracker: Any | None = None,
          callbacks: Sequence[Any] = (), recipe_name: str = "") -> TrainResult:
    """Fine-tune a LoRA adapter on ``dataset``; resume or reuse by fingerprint.

    Args:
        cfg: the train recipe section (``cfg.base_model`` must be set).
        dataset: see :func:`make_sft_data`.
        out_dir: stage folder; runs live in ``out_dir/runs/<fingerprint>``.
        tracker: a :class:`pipeline.tracking.Tracker` (default: :func:`pipeline.tracking.default_tracker`).
        callbacks: extra ``TrainerCallback`` s (tests use one to interrupt).
        recipe_name: recorded in MLflow.

    Returns:
        a :class:`TrainResult`; the adapter is at ``result.adapter_dir``.

    Raises:
        TrainingError: no base model, no row fits ``max_length``, a logged step had no supervised
            token, or the trainer failed: the MLflow run ends FAILED with the error text (tag
            ``error``) and ``run.json`` says ``failed`` with the message.
        RecipeError: the recipe does not fit the model (LoRA on tied embeddings), also FAILED.
        pipeline.interrupts.Interrupted: SIGTERM/SIGINT; the run ends KILLED with an end time and
            ``run.json`` says ``killed`` (rerunning resumes from the last checkpoint).
    """
    from pipeline.distributed import follow_launcher, is_main_process
    from pipeline.interrupts import interrupts_ignored, interrupts_raise
    from pipeline.tracking import NullTracker, default_tracker

    follow_launcher()  # a worker of `accelerate launch` stops (SIGTERM) when its launcher dies, even by SIGKILL
    start = time.perf_counter()
    fp = run_fingerprint(cfg, dataset)
    run_dir = out_dir / "runs" / fp
    run_dir.mkdir(parents=True, exist_ok=True)
    state_path, latest_path = run_dir / "run.json", out_dir / "latest_run.json"
    state = read_state(run_dir)
    if latest_path.is_file():
        previous = json.loads(latest_path.read_text()).get("fingerprint")
        if previous and previous != fp:
            log.info("train: recipe, base model or corpus changed (run %s -> %s): starting a new run", previous, fp)
    main = is_main_process()  # under `accelerate launch` only rank 0 logs and writes (pipeline.distributed)
    if main:
        atomic.write_json(latest_path, {"fingerprint": fp, "run_dir": str(run_dir)}, default=str)
    if cfg.resume and state.get("status") == "complete" and Path(state["result"]["adapter_dir"]).is_dir():
        log.info("train: run %s already finished; reusing its adapter", fp)
        return TrainResult(**{**state["result"], "reused": True, "seconds": time.perf_counter() - start,
                              "losses": tuple(map(tuple, state["result"]["losses"])),
                              "eval_losses": tuple(map(tuple, state["result"]["eval_losses"]))})
    checkpoint = last_checkpoint(run_dir, remove_incomplete=main) if cfg.resume else None
    if not cfg.resume and main:
        for old in run_dir.glob("checkpoint-*"):
            shutil.rmtree(old)
    tracker = (tracker or default_tracker()) if main else NullTracker()  # VOX_TRACKING=off: no MLflow
    with interrupts_raise():  # SIGTERM/SIGINT end the run KILLED below instead of leaving it RUNNING
        run_id = tracker.start(f"qlora-{fp[:8]}", run_id=state.get("mlflow_run_id") if checkpoint else None,
                               tags={"fingerprint": fp, "recipe": recipe_name})
        record = {"fingerprint": fp, "mlflow_run_id": run_id}
        if main:
            atomic.write_json(state_path, {"status": "running", **record}, default=str)
        built: list[Any] = []  # the trainer, once built (for the step reached)
        try:
            return _fit(cfg, dataset, run_dir, tracker, list(callbacks), recipe_name, checkpoint, built, start)
        except BaseException as exc:
            step = built[0].state.global_step if built else 0
            killed = not isinstance(exc, Exception)
            message = end_message(exc, step)
            exc.add_note(message)  # the CLI prints it as the one line (pipeline.train_cli.run_cli)
            with interrupts_ignored("recording how the run ended"):  # under DDP the launcher stops every rank
                if main:
                    atomic.write_json(state_path, {"status": "killed" if killed else "failed", "message": message,
                                                   "step": step, "ended": datetime.now(UTC).isoformat(), **record},
                                      default=str)
                tracker.end("KILLED" if killed else "FAILED", message)
            if killed or isinstance(exc, PipelineError):
                raise
            raise TrainingError(f"training run {fp} failed: {message}") from exc


def _fit(cfg: TrainConfig, dataset: SFTData, run_dir: Path, tracker: Any, callbacks: list[Any], recipe_name: str,
         checkpoint: Path | None, built: list[Any], start: float) -> TrainResult:
    """The body of :func:`train` once its MLflow run is open: train, save the adapter, record the result."""
    from pipeline.train_callbacks import MlflowCallback

    fp, run_id = run_dir.name, tracker.run_id
    mlcb = MlflowCallback(tracker)
    trainer = build_trainer(cfg, dataset, run_dir, [mlcb, *callbacks], tracker)
    built.append(trainer)
    info = trainer.vox_info
    tracker.log_params({"train": asdict(cfg), "recipe": recipe_name, "corpus_version": dataset.corpus_version,
                        "base_fingerprint": dataset.base_fingerprint, "device": info["device"],
                        "quantized": info["quantized"], "train_rows": len(dataset.train),
                        "trainable_params": sum(p.numel() for p in trainer.model.parameters() if p.requires_grad)})
    tracker.log_metrics(info["fit"], step=0)
    finished = _finished_state(checkpoint) if checkpoint else None
    if checkpoint and finished is not None:  # the trainer would take one step past max_steps (see _finished_state)
        from peft import set_peft_model_state_dict
        from safetensors.torch import load_file

        log.info("train: run %s already reached step %d in %s; saving its adapter", fp, finished.global_step,
                 checkpoint.name)
        set_peft_model_state_dict(trainer.model, load_file(str(checkpoint / "adapter_model.safetensors")))
        trainer.state, runtime, session_tokens = finished, 1e-9, 0
    else:
        if checkpoint:
            log.info("train: resuming run %s from %s", fp, checkpoint.name)
        output = trainer.train(resume_from_checkpoint=str(checkpoint) if checkpoint else None)
        runtime = float(output.metrics.get("train_runtime", 0.0)) or 1e-9
        session_tokens = trainer.state.num_input_tokens_seen - mlcb.tokens_at_start
    hist = trainer.state.log_history
    losses = tuple((h["step"], float(h["loss"])) for h in hist if "loss" in h)
    eval_losses = tuple((h["step"], float(h["eval_loss"])) for h in hist if "eval_loss" in h)
    adapter_dir = run_dir / "adapter"
    result = TrainResult(
        adapter_dir=str(adapter_dir), run_dir=str(run_dir), fingerprint=fp, steps=trainer.state.global_step,
        train_loss=losses[-1][1] if losses else None, eval_loss=eval_losses[-1][1] if eval_losses else None,
        tokens=int(trainer.state.num_input_tokens_seen), tokens_per_s=session_tokens / runtime,
        seconds=time.perf_counter() - start, quantized=info["quantized"], device=info["device"],
        system_prompt_mode=cfg.system_prompt_mode, base_model=cfg.base_model, mlflow_run_id=run_id,
        resumed_from=checkpoint.name if checkpoint else None, losses=losses, eval_losses=eval_losses,
        fit=info["fit"],
    )
    main = trainer.is_world_process_zero()  # one writer under DDP; the others wait for the adapter
    if main:  # written whole in adapter.tmp, then renamed: a crash leaves no half-written adapter
        tmp = run_dir / "adapter.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        trainer.model.save_pretrained(tmp)
        trainer.processing_class.save_pretrained(tmp)
        (tmp / "vox_train.json").write_text(json.dumps(asdict(result), indent=1, default=str))
        shutil.rmtree(adapter_dir, ignore_errors=True)
        os.replace(tmp, adapter_dir)
    trainer.accelerator.wait_for_everyone()
    tracker.log_metrics({"final_train_loss": result.train_loss or 0.0, "tokens_per_s": result.tokens_per_s,
                         "tokens": result.tokens}, step=result.steps)
    tracker.log_artifacts(adapter_dir, "adapter")
    tracker.end("FINISHED")
    if main:
        atomic.write_json(run_dir / "run.json", {"status": "complete", "fingerprint": fp, "mlflow_run_id": run_id,
                                                 "ended": datetime.now(UTC).isoformat(), "result": asdict(result)},
                          default=str)
    log.info("train: %d steps, loss %s, eval loss %s, %.0f tok/s, %.0fs", result.steps, result.train_loss,
             result.eval_loss, result.tokens_per_s, result.seconds)
    return result


def _finished_state(checkpoint: Path) -> Any | None:
    """The ``TrainerState`` of ``checkpoint`` if it is the run's last step (``global_step >= max_steps``), else None.

    ``Trainer.train(resume_from_checkpoint=...)`` starts a step before it checks ``max_steps``, so
    resuming from the last checkpoint would train one step too many; such a run only saves its adapter.
    """
    from transformers import TrainerState

    state = TrainerState.load_from_json(str(checkpoint / "trainer_state.json"))
    return state if 0 < state.max_steps <= state.global_step else None


def make_parser() -> Any:
    """The command line's ``HfArgumentParser`` (see :mod:`pipeline.train_cli`)."""
    from pipeline.train_cli import make_parser as cli_parser

    return cli_parser()


def main(argv: list[str] | None = None) -> int:
    """``python -m pipeline.train``: train on the built corpus and base model (see :mod:`pipeline.train_cli`)."""
    from pipeline.train_cli import main as cli_main

    return cli_main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
