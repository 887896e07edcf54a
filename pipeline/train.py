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

Usage (:mod:`pipeline.train_cli`; defaults < recipe < flags)::

    python -m pipeline.train --config cpu-tiny                    # QLoRA (4-bit base + LoRA)
    python -m pipeline.train --config cuda-qlora --max-steps 500  # GPU recipe, flag override
    python -m pipeline.train --config cpu-tiny --quantization none  # plain LoRA, 16-bit base
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Literal

from annotated_types import Ge, Gt, Lt

from pipeline import atomic
from pipeline.chat_format import check_mode, present
from pipeline.errors import PipelineError, RecipeError, TrainingError

log = logging.getLogger(__name__)

#: a count that must be at least 1 (checked by the recipe schema, :mod:`pipeline.recipe_schema`)
Positive = Annotated[int, Ge(1)]
#: a torch dtype name; "auto" = bf16 on CUDA, fp32 elsewhere (:func:`pipeline.quant.torch_dtype`)
DType = Literal["auto", "float32", "bfloat16", "float16"]


@dataclass(frozen=True)
class TrainConfig:
    """Recipe section ``train:`` (defaults = a small CPU QLoRA run)."""

    base_model: str = ""  # model to adapt; "" = the base_model stage's output
    quantization: Literal["nf4", "none"] = "nf4"  # "nf4" = QLoRA (bitsandbytes 4-bit), "none" = plain LoRA
    double_quant: bool = True  # quantise the quantisation constants (saves ~0.4 bit/param)
    compute_dtype: DType = "auto"  # 4-bit dequant dtype: auto = bf16 on CUDA, fp32 on CPU
    bf16: Literal["auto", "on", "off"] = "auto"  # bf16 autocast; auto = where native (CUDA, AMX/AVX512-BF16 CPUs)
    adapter_dtype: DType = "auto"  # LoRA weight dtype: auto = bf16 on CUDA (trl default), fp32 on CPU
    device: Literal["auto", "cuda", "mps", "cpu"] = "auto"  # auto = cuda, then mps, then cpu
    lora_r: Positive = 16  # LoRA rank
    lora_alpha: Positive = 32  # LoRA scale numerator (scale = alpha / r)
    lora_dropout: Annotated[float, Ge(0), Lt(1)] = 0.05  # dropout on the LoRA input
    target_modules: tuple[str, ...] = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
    system_prompt_mode: Literal["ssot", "none"] = "none"  # ssot = the full SSOT system prompt first, none = drop it
    max_length: Positive = 512  # tokens per packed row (and truncation of single examples)
    batch_size: Positive = 4  # packed rows per device step
    grad_accum: Positive = 1  # micro-batches per optimizer step
    max_steps: int = 100  # optimizer steps (-1 = use epochs)
    epochs: float = 1.0  # used when max_steps = -1
    learning_rate: Annotated[float, Gt(0)] = 2e-3  # peak LR (LoRA tolerates high LRs; 2e-4 typical for 1B+ models)
    warmup_ratio: float = 0.05  # share of steps in linear warm-up
    lr_scheduler: str = "cosine"  # transformers scheduler name
    weight_decay: float = 0.0  # on LoRA weights
    sources: tuple[str, ...] = ()  # corpus sources to fine-tune on (empty = all)
    max_train_rows: int = 0  # cap on train rows (0 = all)
    max_eval_rows: int = 64  # held-out rows used for eval loss (eval cost bound)
    eval_steps: Positive = 50  # eval loss every N steps (and at the end)
    save_steps: Positive = 25  # checkpoint every N steps (resume granularity)
    save_total_limit: int = 2  # checkpoints kept
    logging_steps: Positive = 5  # loss / LR / tokens-per-second logging interval
    gradient_checkpointing: bool = False  # trade compute for memory (on for big GPU models)
    seed: int = 0  # data order, LoRA init
    resume: bool = True  # continue an interrupted run with the same fingerprint


@dataclass(frozen=True)
class SFTData:
    """Training inputs: conversational ``datasets.Dataset`` s (column ``messages``) + provenance."""

    train: Any
    eval: Any | None
    corpus_version: str = ""
    base_fingerprint: str = ""


@dataclass(frozen=True)
class TrainResult:
    """Outcome of :func:`train`.

    Attributes:
        adapter_dir: the saved LoRA adapter (+ tokenizer).
        run_dir: the run folder (checkpoints, ``run.json``).
        fingerprint: run key (recipe + base + corpus).
        steps: optimizer steps done in total.
        train_loss: last logged training loss. eval_loss: last held-out loss (None if no eval).
        tokens: non-pad tokens trained on; tokens_per_s over this session's training time.
        seconds: wall time of this call. resumed_from: checkpoint resumed, if any.
        reused: a finished run with this fingerprint was returned without training.
        quantized: whether the base was 4-bit. device: where it ran.
        system_prompt_mode: how prompts were presented. mlflow_run_id: the MLflow run.
        losses: ``(step, loss)`` pairs logged; eval_losses likewise.
        fit: rows kept and dropped because they do not fit ``max_length`` whole, per split
            (:meth:`pipeline.train_data.FitReport.metrics`; also logged to MLflow).
    """

    adapter_dir: str
    run_dir: str
    fingerprint: str
    steps: int
    train_loss: float | None
    eval_loss: float | None
    tokens: int
    tokens_per_s: float
    seconds: float
    quantized: bool
    device: str
    system_prompt_mode: str
    base_model: str
    mlflow_run_id: str | None = None
    resumed_from: str | None = None
    reused: bool = False
    losses: tuple[tuple[int, float], ...] = ()
    eval_losses: tuple[tuple[int, float], ...] = ()
    fit: dict[str, int] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)


def peft_config(cfg: TrainConfig) -> Any:
    """The one place LoRA is configured: a ``peft.LoraConfig`` from the recipe."""
    from peft import LoraConfig

    return LoraConfig(r=cfg.lora_r, lora_alpha=cfg.lora_alpha, lora_dropout=cfg.lora_dropout,
                      target_modules=list(cfg.target_modules), bias="none", task_type="CAUSAL_LM")


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


def run_fingerprint(cfg: TrainConfig, data: SFTData) -> str:
    """Digest of recipe + base + corpus (+ system prompt when presented): same key, same run."""
    from pipeline.prompt import system_prompt

    ignore = {"resume", "eval_steps", "save_steps", "save_total_limit", "logging_steps", "device"}
    blob = {k: v for k, v in asdict(cfg).items() if k not in ignore}
    blob.update(corpus=data.corpus_version, base=data.base_fingerprint, rows=len(data.train))
    if cfg.system_prompt_mode == "ssot":
        blob["system_prompt"] = hashlib.sha256(system_prompt().encode()).hexdigest()
    return hashlib.sha256(json.dumps(blob, sort_keys=True, default=str).encode()).hexdigest()[:16]


def sft_args(cfg: TrainConfig, run_dir: Path, device: str, has_eval: bool) -> Any:
    """The ``trl.SFTConfig`` for ``cfg`` (no hub, no integrations: MLflow is ours)."""
    from trl import SFTConfig

    from pipeline.quant import fast_bf16

    if cfg.bf16 not in ("auto", "on", "off"):
        raise RecipeError(f"train.bf16 must be auto, on or off, got {cfg.bf16!r}")
    bf16 = cfg.bf16 == "on" or (cfg.bf16 == "auto" and fast_bf16(device))
    return SFTConfig(
        output_dir=str(run_dir), max_steps=cfg.max_steps, num_train_epochs=cfg.epochs,
        per_device_train_batch_size=cfg.batch_size, per_device_eval_batch_size=cfg.batch_size,
        gradient_accumulation_steps=cfg.grad_accum, learning_rate=cfg.learning_rate,
        warmup_steps=cfg.warmup_ratio, lr_scheduler_type=cfg.lr_scheduler, weight_decay=cfg.weight_decay,
        max_length=cfg.max_length, packing=True, packing_strategy="bfd", padding_free=True,
        assistant_only_loss=False,  # the dataset carries assistant-only labels (pipeline.train_data)
        eval_strategy="steps" if has_eval else "no", eval_steps=cfg.eval_steps,
        save_strategy="steps", save_steps=cfg.save_steps, save_total_limit=cfg.save_total_limit,
        logging_steps=cfg.logging_steps, logging_first_step=True, report_to="none",
        include_num_input_tokens_seen="non_padding", seed=cfg.seed, data_seed=cfg.seed,
        bf16=bf16, fp16=False, use_cpu=device == "cpu", gradient_checkpointing=cfg.gradient_checkpointing,
        dataloader_pin_memory=device == "cuda", disable_tqdm=True, dataset_num_proc=None,
    )


def last_checkpoint(run_dir: Path) -> Path | None:
    """The newest complete checkpoint of ``run_dir`` (``transformers``' ``get_last_checkpoint``).

    A checkpoint without ``trainer_state.json`` (written last) was cut short by a crash: it is
    removed and the one before it is used.
    """
    from transformers.trainer_utils import get_last_checkpoint

    while (found := get_last_checkpoint(str(run_dir))) is not None:
        if (Path(found) / "trainer_state.json").is_file():
            return Path(found)
        log.warning("train: removing incomplete checkpoint %s", found)
        shutil.rmtree(found)
    return None


def check_tied_targets(model: Any, target_modules: tuple[str, ...]) -> None:
    """Refuse LoRA on an embedding or output layer whose weights are tied to the other one.

    With tied embeddings ``embed_tokens`` and ``lm_head`` share one matrix; an adapter on either
    cannot be merged into it without changing the other, so the export no longer matches the
    adapter (measured max logit diff ~18.6, issue 14 item 8).

    Raises:
        RecipeError: names the matched modules and what to do.
    """
    inp, out = model.get_input_embeddings(), model.get_output_embeddings()
    if inp is None or out is None or inp.weight is not out.weight:
        return
    hits = sorted({t for name, module in model.named_modules() if module is inp or module is out
                   for t in target_modules if name == t or name.endswith("." + t)})
    if hits:
        raise RecipeError(
            f"train.target_modules {hits} adapts the input or output embedding of "
            f"{model.config.name_or_path or 'the base'}, "
            "whose embeddings are tied (tie_word_embeddings): the merged export could not match the adapter; "
            "remove them from train.target_modules")


def build_trainer(cfg: TrainConfig, data: SFTData, run_dir: Path, callbacks: Sequence[Any] = (),
                  tracker: Any | None = None) -> Any:
    """Tokenize the data, load the base (4-bit unless ``quantization: none``), build the trainer.

    Rows are encoded by :mod:`pipeline.train_data` (contents as text, assistant-only labels); rows
    that do not fit ``max_length`` whole are left out and counted.

    Args:
        tracker: where :class:`~pipeline.train_callbacks.SupervisionGuard` logs ``supervised_tokens``.

    Returns:
        the trainer; ``trainer.vox_info`` holds ``{"device", "quantized", "base_model", "fit"}``.

    Raises:
        TrainingError: no base model, or no train row fits ``max_length`` (before the model loads).
        RecipeError: LoRA targets a tied embedding (:func:`check_tied_targets`).
    """
    import datasets
    import torch
    from transformers import AutoTokenizer, PrinterCallback

    from pipeline.quant import load_for_training, pick_device, torch_dtype
    from pipeline.train_callbacks import CountingSFTTrainer, SupervisedTokens, SupervisionGuard
    from pipeline.train_data import encode_rows, require_trainable, warn_dropped

    device = pick_device(cfg.device)
    if not cfg.base_model:
        raise TrainingError("train.base_model is empty: pass the base_model stage's output")
    if device == "cpu":
        torch.set_num_threads(min(torch.get_num_threads(), int(os.environ.get("VOX_TORCH_THREADS", "2"))))
    datasets.disable_progress_bars()
    tokenizer = AutoTokenizer.from_pretrained(cfg.base_model)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    train_cols, train_fit = encode_rows(tokenizer, data.train["messages"], cfg.max_length)
    require_trainable(train_fit, "train")
    eval_ds, fit = None, train_fit.metrics("train")
    if data.eval is not None:
        eval_cols, eval_fit = encode_rows(tokenizer, data.eval["messages"], cfg.max_length)
        fit.update(eval_fit.metrics("eval"))
        warn_dropped(eval_fit, "held-out")  # none left: no eval loss, training goes on
        eval_ds = datasets.Dataset.from_dict(eval_cols) if eval_fit.kept else None
    model, quantized = load_for_training(cfg.base_model, cfg.quantization, device, cfg.compute_dtype,
                                         cfg.double_quant)
    check_tied_targets(model, cfg.target_modules)
    counts = SupervisedTokens()
    trainer: Any = CountingSFTTrainer(model=model, args=sft_args(cfg, run_dir, device, eval_ds is not None),
                                 train_dataset=datasets.Dataset.from_dict(train_cols), eval_dataset=eval_ds,
                                 processing_class=tokenizer, peft_config=peft_config(cfg),
                                 callbacks=[SupervisionGuard(counts, tracker), *callbacks])
    trainer.supervised = counts
    trainer.remove_callback(PrinterCallback)  # MlflowCallback logs one compact line instead
    adapter_dtype = torch_dtype(cfg.adapter_dtype, device)
    for p in trainer.model.parameters():  # trl casts LoRA weights to bf16 on 4-bit bases
        if p.requires_grad and p.dtype != adapter_dtype:
            p.data = p.data.to(adapter_dtype)
    trainer.vox_info = {"device": device, "quantized": quantized, "base_model": cfg.base_model, "fit": fit}
    return trainer


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
    from pipeline.distributed import is_main_process
    from pipeline.interrupts import interrupts_raise
    from pipeline.tracking import NullTracker, default_tracker

    start = time.perf_counter()
    fp = run_fingerprint(cfg, dataset)
    run_dir = out_dir / "runs" / fp
    run_dir.mkdir(parents=True, exist_ok=True)
    state_path, latest_path = run_dir / "run.json", out_dir / "latest_run.json"
    state = json.loads(state_path.read_text()) if state_path.is_file() else {}
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
    checkpoint = last_checkpoint(run_dir) if cfg.resume else None
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
            message = _end_message(exc, step)
            exc.add_note(message)  # the CLI prints it as the one line (pipeline.train_cli.run_cli)
            tracker.end("KILLED" if killed else "FAILED", message)
            if main:
                atomic.write_json(state_path, {"status": "killed" if killed else "failed", "message": message,
                                               "step": step, "ended": datetime.now(UTC).isoformat(), **record},
                                  default=str)
            if killed or isinstance(exc, PipelineError):
                raise
            raise TrainingError(f"training run {fp} failed: {message}") from exc


def _end_message(exc: BaseException, step: int) -> str:
    """One line saying why a run ended early (stored in MLflow and ``run.json``)."""
    from pipeline.interrupts import signal_name

    if not isinstance(exc, Exception):
        name = signal_name(exc) if isinstance(exc, KeyboardInterrupt) else type(exc).__name__
        return f"stopped by {name} at step {step}; run the same command again to resume from the last checkpoint"
    text = " ".join(str(exc).split()) or "(no message)"
    return text if isinstance(exc, PipelineError) else f"{type(exc).__name__}: {text}"


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
    if checkpoint:
        log.info("train: resuming run %s from %s", fp, checkpoint.name)
    output = trainer.train(resume_from_checkpoint=str(checkpoint) if checkpoint else None)
    adapter_dir = run_dir / "adapter"
    tmp = run_dir / "adapter.tmp"
    main = trainer.is_world_process_zero()  # one writer under DDP; the others wait for the adapter
    if main:
        shutil.rmtree(tmp, ignore_errors=True)
        trainer.model.save_pretrained(tmp)
        trainer.processing_class.save_pretrained(tmp)
        shutil.rmtree(adapter_dir, ignore_errors=True)
        os.replace(tmp, adapter_dir)
    trainer.accelerator.wait_for_everyone()
    hist = trainer.state.log_history
    losses = tuple((h["step"], float(h["loss"])) for h in hist if "loss" in h)
    eval_losses = tuple((h["step"], float(h["eval_loss"])) for h in hist if "eval_loss" in h)
    runtime = float(output.metrics.get("train_runtime", 0.0)) or 1e-9
    session_tokens = trainer.state.num_input_tokens_seen - mlcb.tokens_at_start
    result = TrainResult(
        adapter_dir=str(adapter_dir), run_dir=str(run_dir), fingerprint=fp, steps=trainer.state.global_step,
        train_loss=losses[-1][1] if losses else None, eval_loss=eval_losses[-1][1] if eval_losses else None,
        tokens=int(trainer.state.num_input_tokens_seen), tokens_per_s=session_tokens / runtime,
        seconds=time.perf_counter() - start, quantized=info["quantized"], device=info["device"],
        system_prompt_mode=cfg.system_prompt_mode, base_model=cfg.base_model, mlflow_run_id=run_id,
        resumed_from=checkpoint.name if checkpoint else None, losses=losses, eval_losses=eval_losses,
        fit=info["fit"],
    )
    tracker.log_metrics({"final_train_loss": result.train_loss or 0.0, "tokens_per_s": result.tokens_per_s,
                         "tokens": result.tokens}, step=result.steps)
    if main:
        (adapter_dir / "vox_train.json").write_text(json.dumps(asdict(result), indent=1, default=str))
    tracker.log_artifacts(adapter_dir, "adapter")
    tracker.end("FINISHED")
    if main:
        atomic.write_json(run_dir / "run.json", {"status": "complete", "fingerprint": fp, "mlflow_run_id": run_id,
                                                 "ended": datetime.now(UTC).isoformat(), "result": asdict(result)},
                          default=str)
    log.info("train: %d steps, loss %s, eval loss %s, %.0f tok/s, %.0fs", result.steps, result.train_loss,
             result.eval_loss, result.tokens_per_s, result.seconds)
    return result


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
