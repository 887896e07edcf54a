"""Load a model directory's weights and tokenizer onto a device for :class:`serving.engine.Engine`.

:func:`load_model` validates the directory (:mod:`serving.model_dir`), picks a device and dtype,
loads weights and tokenizer (merging a PEFT adapter if given), and decides whether decoding steps
through the library cache: by the ``cache`` setting, and under ``"auto"`` by a load-time parity
probe against full-sequence forward (:func:`pipeline.decoding.cache_is_consistent`). torch and
transformers are imported inside, so importing this module stays light.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.decoding import FULL_FORWARD_MODEL_TYPES, DecodingError, cache_is_consistent, pick_device
from serving.errors import ModelLoadError, ServingError, UsageError
from serving.model_dir import ModelDirInfo, inspect_model_dir

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class LoadedModel:
    """A model in memory and what decoding it needs.

    Attributes:
        model: the causal LM in eval mode on ``device`` (an adapter already merged).
        tokenizer: its tokenizer (the adapter's when the adapter directory has one).
        info: what the model directory declares.
        device: the torch device string the model lives on.
        use_cache: whether decoding steps through the library cache (else full-sequence forward).
    """

    model: Any
    tokenizer: Any
    info: ModelDirInfo
    device: str
    use_cache: bool


def default_dtype(device: str) -> Any:
    """The torch dtype for ``device``: bfloat16 on a GPU that supports it (else float16), float16
    on MPS, float32 on CPU."""
    import torch

    if device.startswith("cuda"):
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    if device.startswith("mps"):
        return torch.float16
    return torch.float32


def load_model(
    path: str | Path,
    adapter: str | Path | None = None,
    *,
    device: str | None = None,
    dtype: Any = None,
    cache: str = "auto",
) -> LoadedModel:
    """Load a model directory (or base + adapter) onto a device (arguments as in
    :meth:`serving.engine.Engine.load`).

    Raises:
        ModelLoadError: the directory is missing/incomplete or the weights do not load.
        UsageError: the requested device is unknown or not on this machine.
        ServingError: ``cache`` is not one of ``"auto"``, ``"on"``, ``"off"``.
    """
    if cache not in ("auto", "on", "off"):
        raise ServingError(f"cache must be 'auto', 'on' or 'off', got {cache!r}")
    info = inspect_model_dir(path, adapter)
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        device = pick_device(device)
    except DecodingError as exc:
        raise UsageError(str(exc)) from exc
    dtype = dtype or default_dtype(device)
    tokenizer_dir = info.path
    if info.adapter_path is not None and (info.adapter_path / "tokenizer_config.json").is_file():
        tokenizer_dir = info.adapter_path
    try:
        tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
        # Non-CPU devices: load the weights straight onto the device (no CPU copy).
        placement = {} if device == "cpu" else {"device_map": device}
        model: Any = AutoModelForCausalLM.from_pretrained(info.path, dtype=dtype, **placement)
        if info.adapter_path is not None:
            from peft import PeftModel

            model = PeftModel.from_pretrained(model, info.adapter_path).merge_and_unload()
    except Exception as exc:  # noqa: BLE001 - safetensors, tokenizers, peft raise their own types
        raise ModelLoadError(f"cannot load model from {info.path}: {exc}") from exc
    model = model.to(device).eval()
    use_cache = cache == "on"
    if cache == "auto":
        use_cache = info.model_type not in FULL_FORWARD_MODEL_TYPES
        if use_cache:
            with torch.inference_mode():
                use_cache = cache_is_consistent(model, int(model.config.get_text_config().vocab_size))
            if not use_cache:
                log.warning(
                    "%s: cached decoding disagrees with full-sequence forward for model_type %r;"
                    " serving with full-sequence forward (correct but slower)",
                    info.path,
                    info.model_type,
                )
    return LoadedModel(model, tokenizer, info, device, use_cache)


#: below this many parameters a CPU decode step runs faster on one thread than on all cores: the
#: matrices are too small to share out (the default 1.1M-parameter export on 2 cores: 1,935 vs
#: 2,220 µs per token, ``bench/decoding.py --threads 1|2``, 2026-12-04)
ONE_THREAD_PARAMS = 50_000_000


def serving_threads(model: Any, device: str, requested: int = 0) -> int | None:
    """Torch intra-op threads for serving ``model`` on ``device``: ``requested`` when it is
    positive; else, on a CPU, 1 for a model under :data:`ONE_THREAD_PARAMS` parameters; else
    ``None`` (torch's default: every core).

    Raises:
        UsageError: ``requested`` is negative.
    """
    if requested < 0:
        raise UsageError(f"--threads must be 0 (automatic) or a positive count, got {requested}")
    if requested:
        return requested
    if not str(device).startswith("cpu"):
        return None
    return 1 if sum(p.numel() for p in model.parameters()) < ONE_THREAD_PARAMS else None
