"""Validate and describe a model directory before anything heavy is loaded.

An exported model directory is a Hugging Face model directory (``config.json``, weights,
tokenizer files with a chat template, ``generation_config.json``) plus ``vox_mens.json``. A plain
HF directory without ``vox_mens.json`` is accepted too (its id is the directory name). An adapter
directory (``adapter_config.json`` + adapter weights) is served on top of a base model directory.
Only the standard library is used here, so validation is instant and gives clear errors.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from serving.errors import ModelLoadError

META_FILE: Final = "vox_mens.json"
SYSTEM_PROMPT_MODES: Final = ("ssot", "none")
_WEIGHT_PATTERNS: Final = ("*.safetensors", "pytorch_model*.bin", "model.safetensors.index.json")
_ADAPTER_WEIGHTS: Final = ("adapter_model.safetensors", "adapter_model.bin")
_TOKENIZER_FILES: Final = ("tokenizer.json", "tokenizer.model", "vocab.json")


@dataclass(frozen=True, slots=True)
class ModelDirInfo:
    """What serving needs to know about a model directory (no tensors loaded).

    Attributes:
        path: the model (or base model) directory.
        model_name: served model id (``vox_mens.json["model_name"]``, else the directory name).
        system_prompt_mode: ``"ssot"`` keeps system messages, ``"none"`` drops them.
        eos_token_ids: every EOS id from ``generation_config.json`` and ``config.json``, sorted.
        model_type: ``config.json["model_type"]`` (e.g. ``"qwen3"``).
        max_context: ``max_position_embeddings`` (tokens), or ``None`` if the config has none.
        adapter_path: a PEFT adapter directory to apply on top of ``path``, or ``None``.
        meta: the parsed ``vox_mens.json`` (empty for a plain HF directory).
        temperature: default sampling temperature from ``generation_config.json`` (else ``None``).
        top_p: default nucleus mass from ``generation_config.json`` (else ``None``).
    """

    path: Path
    model_name: str
    system_prompt_mode: str
    eos_token_ids: tuple[int, ...]
    model_type: str
    max_context: int | None
    adapter_path: Path | None = None
    meta: dict[str, Any] | None = None
    temperature: float | None = None
    top_p: float | None = None


def _read_json(path: Path) -> dict[str, Any]:
    """Parse a JSON object file; raise ``ModelLoadError`` naming the file if it is not one."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ModelLoadError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except ValueError as exc:
        raise ModelLoadError(f"{path} is not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise ModelLoadError(f"{path} must hold a JSON object, found {type(data).__name__}")
    return data


def _as_id_list(value: Any, where: str) -> list[int]:
    """Normalise an ``eos_token_id`` value (int, list of ints or null) to a list."""
    if value is None:
        return []
    if isinstance(value, bool):
        raise ModelLoadError(f"{where}: eos_token_id must be an int or a list of ints, got {value!r}")
    if isinstance(value, int):
        return [value]
    if isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return list(value)
    raise ModelLoadError(f"{where}: eos_token_id must be an int or a list of ints, got {value!r}")


def eos_token_ids(model_dir: Path) -> tuple[int, ...]:
    """All EOS ids of a model directory: union of ``generation_config.json`` and ``config.json``.

    Each file may give ``eos_token_id`` as an int or a list (multimodal configs nest it in
    ``text_config``). Returns the sorted, de-duplicated ids (possibly empty).
    """
    ids: set[int] = set()
    for name in ("generation_config.json", "config.json"):
        file = model_dir / name
        if not file.is_file():
            continue
        data = _read_json(file)
        ids.update(_as_id_list(data.get("eos_token_id"), str(file)))
        text_config = data.get("text_config")
        if isinstance(text_config, dict):
            ids.update(_as_id_list(text_config.get("eos_token_id"), f"{file} (text_config)"))
    return tuple(sorted(ids))


def _has_chat_template(model_dir: Path) -> bool:
    if (model_dir / "chat_template.jinja").is_file() or (model_dir / "chat_template.json").is_file():
        return True
    config = model_dir / "tokenizer_config.json"
    return config.is_file() and bool(_read_json(config).get("chat_template"))


def _check_hf_dir(model_dir: Path) -> dict[str, Any]:
    """Check that ``model_dir`` is a complete HF causal-LM directory; return its ``config.json``."""
    if not model_dir.exists():
        raise ModelLoadError(f"model directory {model_dir} does not exist")
    if not model_dir.is_dir():
        raise ModelLoadError(f"{model_dir} is not a directory")
    config_file = model_dir / "config.json"
    if not config_file.is_file():
        raise ModelLoadError(f"{model_dir} is not a model directory: config.json is missing")
    config = _read_json(config_file)
    if not any(any(model_dir.glob(pattern)) for pattern in _WEIGHT_PATTERNS):
        raise ModelLoadError(
            f"{model_dir} has no model weights (expected *.safetensors or pytorch_model*.bin)"
        )
    if not any((model_dir / name).is_file() for name in _TOKENIZER_FILES):
        raise ModelLoadError(
            f"{model_dir} has no tokenizer (expected one of {', '.join(_TOKENIZER_FILES)})"
        )
    if not _has_chat_template(model_dir):
        raise ModelLoadError(
            f"{model_dir} has no chat template (chat_template.jinja or tokenizer_config.json"
            " 'chat_template')"
        )
    return config


def _read_meta(model_dir: Path) -> dict[str, Any]:
    file = model_dir / META_FILE
    if not file.is_file():
        return {}
    meta = _read_json(file)
    name = meta.get("model_name")
    if not isinstance(name, str) or not name.strip():
        raise ModelLoadError(f"{file}: 'model_name' must be a non-empty string")
    mode = meta.get("system_prompt_mode", "ssot")
    if mode not in SYSTEM_PROMPT_MODES:
        raise ModelLoadError(
            f"{file}: 'system_prompt_mode' must be one of {SYSTEM_PROMPT_MODES}, got {mode!r}"
        )
    return meta


def _with_training_mode(adapter_dir: Path, meta: dict[str, Any]) -> dict[str, Any]:
    """The base's ``meta`` with the adapter's own ``system_prompt_mode`` (adapter without ``vox_mens.json``).

    A training run's adapter records how its prompts were presented in ``vox_train.json``
    (:mod:`pipeline.train`); serving it with another mode (e.g. the 3.8k-token SSOT prompt on a
    1024-token model) would present prompts unlike training.
    """
    file = adapter_dir / "vox_train.json"
    if not file.is_file():
        return meta
    mode = _read_json(file).get("system_prompt_mode")
    if mode not in SYSTEM_PROMPT_MODES:
        raise ModelLoadError(f"{file}: 'system_prompt_mode' must be one of {SYSTEM_PROMPT_MODES}, got {mode!r}")
    return {**meta, "system_prompt_mode": mode}


def _sampling_defaults(model_dir: Path) -> tuple[float | None, float | None]:
    """``temperature`` and ``top_p`` from ``generation_config.json``, when it sets valid ones."""
    file = model_dir / "generation_config.json"
    data = _read_json(file) if file.is_file() else {}
    temperature, top_p = data.get("temperature"), data.get("top_p")
    t = float(temperature) if isinstance(temperature, (int, float)) and 0 <= temperature <= 2 else None
    p = float(top_p) if isinstance(top_p, (int, float)) and 0 < top_p <= 1 else None
    return t, p


def _max_context(config: dict[str, Any]) -> int | None:
    for source in (config, config.get("text_config") or {}):
        value = source.get("max_position_embeddings")
        if isinstance(value, int) and value > 0:
            return value
    return None


def inspect_model_dir(path: str | Path, adapter: str | Path | None = None) -> ModelDirInfo:
    """Validate a model directory (and optional adapter) and describe it.

    Args:
        path: an exported model directory, a plain HF model directory, or (when ``adapter`` is
            ``None``) an adapter directory whose ``adapter_config.json`` names a local base model.
        adapter: a PEFT adapter directory to serve on top of ``path``.

    Returns:
        A :class:`ModelDirInfo`; the adapter's ``vox_mens.json`` (if any) wins over the base's.

    Raises:
        ModelLoadError: a directory is missing, lacks config/weights/tokenizer/chat template, or a
            JSON file is malformed; the message names the path and the missing file.
    """
    model_dir = Path(path).expanduser()
    adapter_dir = Path(adapter).expanduser() if adapter is not None else None
    if adapter_dir is None and (model_dir / "adapter_config.json").is_file():
        adapter_dir = model_dir
        base = _read_json(model_dir / "adapter_config.json").get("base_model_name_or_path")
        if not isinstance(base, str) or not Path(base).expanduser().is_dir():
            raise ModelLoadError(
                f"{model_dir} is an adapter whose base model {base!r} is not a local directory;"
                " pass the base model directory and the adapter explicitly"
            )
        model_dir = Path(base).expanduser()
    config = _check_hf_dir(model_dir)
    meta = _read_meta(model_dir)
    if adapter_dir is not None:
        if not (adapter_dir / "adapter_config.json").is_file():
            raise ModelLoadError(f"{adapter_dir} is not an adapter: adapter_config.json is missing")
        if not any((adapter_dir / name).is_file() for name in _ADAPTER_WEIGHTS):
            raise ModelLoadError(f"{adapter_dir} has no adapter weights ({' or '.join(_ADAPTER_WEIGHTS)})")
        meta = _read_meta(adapter_dir) or _with_training_mode(adapter_dir, meta)
    named_dir = adapter_dir or model_dir
    temperature, top_p = _sampling_defaults(model_dir)
    return ModelDirInfo(
        path=model_dir.resolve(),
        model_name=str(meta.get("model_name") or named_dir.resolve().name),
        system_prompt_mode=str(meta.get("system_prompt_mode", "ssot")),
        eos_token_ids=eos_token_ids(model_dir),
        model_type=str(config.get("model_type", "")),
        max_context=_max_context(config),
        adapter_path=adapter_dir.resolve() if adapter_dir is not None else None,
        meta=meta,
        temperature=temperature,
        top_p=top_p,
    )
