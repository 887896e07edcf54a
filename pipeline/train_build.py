"""Building the trainer of a run: the base model (4-bit NF4 unless ``quantization: none``), the LoRA
config, the ``trl.SFTConfig`` and the ``SFTTrainer`` over rows tokenized by :mod:`pipeline.train_data`.

``torch``/``trl``/``peft`` are imported inside the functions so importing this module stays cheap.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pipeline.errors import RecipeError, TrainingError
from pipeline.train_config import SFTData, TrainConfig


def peft_config(cfg: TrainConfig) -> Any:
    """The one place LoRA is configured: a ``peft.LoraConfig`` from the recipe."""
    from peft import LoraConfig

    return LoraConfig(r=cfg.lora_r, lora_alpha=cfg.lora_alpha, lora_dropout=cfg.lora_dropout,
                      target_modules=list(cfg.target_modules), bias="none", task_type="CAUSAL_LM")


def sft_args(cfg: TrainConfig, run_dir: Path, device: str, has_eval: bool) -> Any:
    """The ``trl.SFTConfig`` for ``cfg`` (no hub, no integrations: MLflow is ours).

    Under ``accelerate launch`` the process group's collective timeout is the launcher's
    ``distributed.timeout_s`` (:func:`pipeline.distributed.collective_timeout_s`), not transformers' 30 min.
    """
    from trl import SFTConfig

    from pipeline.distributed import collective_timeout_s
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
        bf16=bf16, fp16=False, use_cpu=device == "cpu", **_checkpointing(cfg.gradient_checkpointing),
        dataloader_pin_memory=device == "cuda", disable_tqdm=True, dataset_num_proc=None,
        ddp_timeout=collective_timeout_s(),
        ddp_find_unused_parameters=False,  # every LoRA weight is in every forward: skip DDP's extra graph walk
    )


def _checkpointing(on: bool) -> dict[str, Any]:
    """The ``SFTConfig`` argument that turns activation (gradient) checkpointing ``on``: recent
    transformers 5 call it ``activation_checkpointing`` and warn on the older name on every
    training run; earlier 5.x releases know only ``gradient_checkpointing``."""
    import dataclasses

    from trl import SFTConfig

    names = {f.name for f in dataclasses.fields(SFTConfig)}
    return {"activation_checkpointing" if "activation_checkpointing" in names else "gradient_checkpointing": on}


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
    that do not fit ``max_length`` whole are left out and counted. The trainer fails the run at a log
    record without supervised tokens (:class:`~pipeline.train_callbacks.SupervisionGuard`) or with a
    NaN/infinite loss (:class:`~pipeline.train_callbacks.FiniteLossGuard`, after the other callbacks log it).

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
    from pipeline.train_callbacks import CountingSFTTrainer, FiniteLossGuard, SupervisedTokens, SupervisionGuard
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
                                 callbacks=[SupervisionGuard(counts, tracker), *callbacks, FiniteLossGuard()])
    trainer.supervised = counts
    trainer.remove_callback(PrinterCallback)  # MlflowCallback logs one compact line instead
    adapter_dtype = torch_dtype(cfg.adapter_dtype, device)
    for p in trainer.model.parameters():  # trl casts LoRA weights to bf16 on 4-bit bases
        if p.requires_grad and p.dtype != adapter_dtype:
            p.data = p.data.to(adapter_dtype)
    trainer.vox_info = {"device": device, "quantized": quantized, "base_model": cfg.base_model, "fit": fit}
    return trainer
