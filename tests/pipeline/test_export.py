"""Export: merged 16-bit model round-trips (logits and greedy tokens match the unmerged adapter)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pipeline.base_model import BaseModelConfig, build_base_model
from pipeline.export import ExportConfig, ExportResult, export_model, verify_export
from pipeline.sample_corpus import MICRO_RECIPE, sample_rows

pytestmark = pytest.mark.slow

CARD_KEYS = {"model_name", "base_model", "recipe", "system_prompt_mode", "pass_at_1", "pass_at_k", "eval_passed",
             "corpus_version", "created", "raw_compile_pass_at_1", "verified_pass_at_1", "eval_policy"}


@pytest.fixture(scope="module")
def base_and_adapter(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """A micro bootstrap base and a LoRA adapter with random (non-zero) weights."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    root = tmp_path_factory.mktemp("export")
    rows = [r for r in sample_rows(60) if r["split"] == "train"]
    base = build_base_model(BaseModelConfig(**MICRO_RECIPE["base_model"]), rows, root / "base", "v1").model
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(base)
    lora = LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj", "down_proj"], init_lora_weights=False)
    peft_model = get_peft_model(model, lora)
    for name, p in peft_model.named_parameters():
        if "lora_" in name:
            p.data.mul_(0.3)  # sizeable but not saturating effect on the logits
    adapter = root / "adapter"
    peft_model.save_pretrained(str(adapter))
    AutoTokenizer.from_pretrained(base).save_pretrained(adapter)
    return base, str(adapter)


def _export(base: str, adapter: str, out: Path, **cfg: Any) -> ExportResult:
    return export_model(base, adapter, out, ExportConfig(**{**MICRO_RECIPE["export"], **cfg}), recipe="micro",
                        eval_summary={"pass_at_1": 0.5, "pass_at_k": {"k": 2, "value": 0.7}, "eval_passed": True},
                        corpus={"version": "v1", "train_rows": 10, "heldout_rows": 2},
                        recipe_sections={"train": {"lora_r": 4}}, system_prompt_mode="none")


def _assert_stored_in(export_dir: Path, dtype: str) -> None:
    """Every weight tensor on disk has ``dtype``, and the files weigh ``itemsize`` bytes per parameter."""
    import torch
    from safetensors import safe_open
    from transformers import AutoModelForCausalLM

    itemsize = torch.empty((), dtype=getattr(torch, dtype)).element_size()
    files = list(export_dir.glob("*.safetensors"))
    stored = set()
    for path in files:
        with safe_open(str(path), framework="pt") as f:
            stored |= {f.get_tensor(k).dtype for k in f.keys()}
    assert stored == {getattr(torch, dtype)}
    params = AutoModelForCausalLM.from_pretrained(export_dir).num_parameters()  # tied weights counted once
    size = sum(p.stat().st_size for p in files)
    assert params * itemsize <= size <= params * itemsize + 64 * 1024  # + the JSON header


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_export_round_trip_matches_adapter(base_and_adapter: tuple[str, str], tmp_path: Path, dtype: str) -> None:
    from pipeline import paths

    base, adapter = base_and_adapter
    atol = 1e-3 if dtype == "float32" else 0.05
    res = _export(base, adapter, paths.exports_dir(), dtype=dtype, verify_atol=atol)
    assert res.verify is not None and res.verify.passed, res.verify
    assert res.verify.tokens_equal and res.verify.max_logit_diff <= atol
    out = Path(res.path)
    for name in ("model.safetensors", "config.json", "tokenizer.json", "tokenizer_config.json", "README.md",
                 "generation_config.json", "vox_mens.json", "chat_template.jinja"):
        assert (out / name).is_file(), name
    assert "chat_template" in json.loads((out / "tokenizer_config.json").read_text())
    _assert_stored_in(out, dtype)
    eos = json.loads((out / "generation_config.json").read_text())["eos_token_id"]
    assert isinstance(eos, list) and len(eos) >= 2
    card = json.loads((out / "vox_mens.json").read_text())
    assert set(card) == CARD_KEYS and card["system_prompt_mode"] == "none" and card["eval_passed"] is True
    assert not any(p.name.endswith(".tmp") for p in out.parent.iterdir())
    assert paths.latest_export() == out
    assert "pass@1: 0.5" in (out / "README.md").read_text()


def test_verify_detects_a_wrong_export(base_and_adapter: tuple[str, str], tmp_path: Path) -> None:
    """An export whose weights differ from base+adapter fails the round-trip check."""
    from safetensors.torch import load_file, save_file

    base, adapter = base_and_adapter
    res = _export(base, adapter, tmp_path)
    weights_path = Path(res.path) / "model.safetensors"
    weights = load_file(str(weights_path))
    key = next(k for k in weights if "q_proj" in k)
    weights[key] = weights[key] + 0.5
    save_file(weights, str(weights_path), metadata={"format": "pt"})
    bad = verify_export(Path(res.path), base, adapter, ExportConfig(**MICRO_RECIPE["export"]))
    assert not bad.passed and bad.max_logit_diff > 1e-3


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_a_16bit_export_is_16bit_on_disk(base_and_adapter: tuple[str, str], tmp_path: Path, dtype: str) -> None:
    base, adapter = base_and_adapter
    res = _export(base, adapter, tmp_path, dtype=dtype, verify_atol=1.0)
    assert res.verify is not None and res.verify.passed, res.verify
    assert res.verify.dtype_on_disk == {"float16": "F16", "bfloat16": "BF16"}[dtype]
    assert res.verify.bytes_on_disk <= 2 * res.verify.params_on_disk + 64 * 1024
    _assert_stored_in(Path(res.path), dtype)


def test_a_float32_merge_fails_verification(base_and_adapter: tuple[str, str], tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A merge that loads the base in float32 writes float32 weights; reloading in fp16 would hide it."""
    from pipeline import export

    real = export.merged_model
    monkeypatch.setattr(export, "merged_model", lambda base, adapter, dtype: real(base, adapter, "float32"))
    base, adapter = base_and_adapter
    res = _export(base, adapter, tmp_path, dtype="float16", verify_atol=1.0)
    assert res.verify is not None and not res.verify.passed
    assert "weights on disk are F32, expected F16" in res.verify.detail
    assert res.verify.bytes_on_disk >= 4 * res.verify.params_on_disk
