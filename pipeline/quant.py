"""Devices and model loading: 4-bit NF4 (QLoRA) for training, 16-bit for merge and eval.

bitsandbytes 0.50 runs NF4 ``Linear4bit`` forward and backward on CUDA and on CPU, so the
CPU recipe is real QLoRA. On Apple MPS there is no 4-bit kernel: training falls back to plain
LoRA on a 16-bit base with a logged warning.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from pipeline.errors import RecipeError, TrainingError

log = logging.getLogger(__name__)

DEVICES = ("auto", "cuda", "mps", "cpu")


def pick_device(preference: str = "auto") -> str:
    """Resolve ``auto`` to ``cuda``, then ``mps``, then ``cpu``.

    Raises:
        RecipeError: unknown preference, or an explicit device that is not available.
    """
    from pipeline.decoding import DecodingError, pick_device as _pick

    if preference not in DEVICES:
        raise RecipeError(f"device must be one of {', '.join(DEVICES)}, got {preference!r}")
    try:
        return _pick(preference)  # the one device rule, shared with serving
    except DecodingError as exc:
        raise RecipeError(f"device {preference!r} requested but not available on this machine") from exc


def cpu_has_fast_bf16() -> bool:
    """Whether this CPU has native bf16 matmul (Intel AMX or AVX512-BF16; Linux ``/proc/cpuinfo``)."""
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    return "amx_bf16" in flags or "avx512_bf16" in flags


def fast_bf16(device: str) -> bool:
    """Whether bf16 compute is native and fast on ``device`` (CUDA with bf16, or such a CPU)."""
    import torch

    if device == "cuda":
        return torch.cuda.is_bf16_supported()
    return device == "cpu" and cpu_has_fast_bf16()


def torch_dtype(name: str, device: str) -> Any:
    """``"auto"`` → bfloat16 on CUDA, float32 elsewhere; else the named ``torch`` dtype."""
    import torch

    if name == "auto":
        return torch.bfloat16 if device == "cuda" else torch.float32
    dtype = getattr(torch, name, None)
    if not isinstance(dtype, torch.dtype):
        raise RecipeError(f"unknown dtype {name!r}: use auto, float32, bfloat16 or float16")
    return dtype


def compute_torch_dtype(name: str, device: str) -> Any:
    """The dtype of the 4-bit dequant + matmul: ``"auto"`` is bfloat16 where bf16 is native
    (:func:`fast_bf16`: CUDA with bf16, AMX/AVX512-BF16 CPUs), else float32; any other name as
    :func:`torch_dtype`. Measured on the cpu-tiny QLoRA step (2 cores): bf16 1,848 tok/s with AMX,
    but 160 tok/s on an AVX2-only CPU, where float32 gives 828 tok/s.

    Raises:
        RecipeError: unknown dtype name.
    """
    import torch

    if name == "auto":
        return torch.bfloat16 if fast_bf16(device) else torch.float32
    return torch_dtype(name, device)


def load_for_training(model_id: str, quantization: str, device: str, compute_dtype: str = "auto",
                      double_quant: bool = True) -> tuple[Any, bool]:
    """Load ``model_id`` for adapter training.

    Args:
        model_id: HF id or local directory.
        quantization: ``"nf4"`` (QLoRA) or ``"none"`` (plain LoRA).
        device: a resolved device (see :func:`pick_device`).
        compute_dtype: dtype of the 4-bit matmuls / the 16-bit weights (:func:`compute_torch_dtype`).
        double_quant: quantise the quantisation constants too (QLoRA paper, ~0.4 bit/param).

    Returns:
        ``(model, quantized)``; ``quantized`` is False when falling back (MPS).

    Raises:
        TrainingError: the model cannot be loaded (message names it).
    """
    from transformers import AutoModelForCausalLM, BitsAndBytesConfig

    if quantization not in ("nf4", "none"):
        raise RecipeError(f"train.quantization must be nf4 or none, got {quantization!r}")
    dtype = compute_torch_dtype(compute_dtype, device)
    quantized = quantization == "nf4"
    if quantized and device == "mps":
        log.warning("bitsandbytes 4-bit is not available on MPS: training plain LoRA on a 16-bit base")
        quantized = False
    kwargs: dict[str, Any] = {"dtype": dtype, "device_map": {"": device}}
    if quantized:
        import os

        # FSDP flattens parameters of one dtype: store the packed 4-bit weights in the compute dtype
        # (QLoRA + FSDP, pipeline/accelerate/fsdp_qlora.yaml; the launcher sets ACCELERATE_USE_FSDP)
        storage = dtype if os.environ.get("ACCELERATE_USE_FSDP", "").lower() == "true" else torch_dtype("uint8", device)
        kwargs["quantization_config"] = BitsAndBytesConfig(
            load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_use_double_quant=double_quant,
            bnb_4bit_compute_dtype=dtype, bnb_4bit_quant_storage=storage,
        )
    try:
        model = AutoModelForCausalLM.from_pretrained(model_id, **kwargs)
    except (OSError, ValueError) as exc:
        raise TrainingError(f"cannot load base model {model_id!r}: {exc}") from exc
    if quantized:
        from peft import prepare_model_for_kbit_training

        model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=False)
    return model, quantized


def load_16bit(model_id: str, device: str = "cpu", dtype: str = "auto") -> Any:
    """Load the unquantised base (bf16 on CUDA, fp32 on CPU by default) in eval mode.

    Raises:
        TrainingError: the model cannot be loaded.
    """
    from transformers import AutoModelForCausalLM

    try:
        model = AutoModelForCausalLM.from_pretrained(model_id, dtype=torch_dtype(dtype, device),
                                                     device_map={"": device})
    except (OSError, ValueError) as exc:
        raise TrainingError(f"cannot load base model {model_id!r}: {exc}") from exc
    return model.eval()


def count_4bit_layers(model: Any) -> int:
    """Number of ``bitsandbytes.nn.Linear4bit`` modules in ``model`` (0 if bnb is absent)."""
    try:
        from bitsandbytes.nn import Linear4bit
    except ImportError:
        return 0
    return sum(isinstance(m, Linear4bit) for m in model.modules())
