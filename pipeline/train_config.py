"""Training recipe and results: the ``train:`` recipe section (:class:`TrainConfig`), the datasets a
run trains on (:class:`SFTData`) and what a run returns (:class:`TrainResult`).

Plain dataclasses with no heavy imports, so the recipe schema, the command line and the stage
runner can load them without torch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from annotated_types import Ge, Gt, Lt

from pipeline.recipe_types import NonNegative, Positive, Seed, StepLimit  # Positive is re-exported by pipeline.train

#: a torch dtype name; "auto" = bf16 on CUDA, fp32 elsewhere (:func:`pipeline.quant.torch_dtype`)
DType = Literal["auto", "float32", "bfloat16", "float16"]


@dataclass(frozen=True)
class TrainConfig:
    """Recipe section ``train:`` (defaults = a small CPU QLoRA run)."""

    base_model: str = ""  # model to adapt; "" = the base_model stage's output
    quantization: Literal["nf4", "none"] = "nf4"  # "nf4" = QLoRA (bitsandbytes 4-bit), "none" = plain LoRA
    double_quant: bool = True  # quantise the quantisation constants (saves ~0.4 bit/param)
    compute_dtype: DType = "auto"  # 4-bit dequant dtype: auto = bf16 where native (CUDA, AMX/AVX512-BF16), else fp32
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
    max_steps: StepLimit = 100  # optimizer steps (-1 = use epochs)
    epochs: Annotated[float, Gt(0)] = 1.0  # used when max_steps = -1
    learning_rate: Annotated[float, Gt(0)] = 2e-3  # peak LR (LoRA tolerates high LRs; 2e-4 typical for 1B+ models)
    warmup_ratio: Annotated[float, Ge(0), Lt(1)] = 0.05  # share of steps in linear warm-up
    lr_scheduler: str = "cosine"  # transformers scheduler name
    weight_decay: Annotated[float, Ge(0)] = 0.0  # on LoRA weights
    sources: tuple[str, ...] = ()  # corpus sources to fine-tune on (empty = all)
    max_train_rows: NonNegative = 0  # cap on train rows (0 = all)
    max_eval_rows: NonNegative = 64  # held-out rows used for eval loss (eval cost bound; 0 = no eval loss)
    eval_steps: Positive = 50  # eval loss every N steps (and at the end)
    save_steps: Positive = 25  # checkpoint every N steps (resume granularity)
    save_total_limit: NonNegative = 2  # checkpoints kept (0 = all)
    logging_steps: Positive = 5  # loss / LR / tokens-per-second logging interval
    gradient_checkpointing: bool = False  # trade compute for memory (on for big GPU models)
    seed: Seed = 0  # data order, LoRA init
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
    """Outcome of :func:`pipeline.train.train`.

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
