"""Export: merge the LoRA adapter into a 16-bit copy of the base and write a servable model.

The export directory holds safetensors weights, ``config.json``, the tokenizer with its
``chat_template`` (in ``tokenizer_config.json`` and ``chat_template.jinja``),
``generation_config.json`` (``eos_token_id`` always a list), ``vox_mens.json`` (the contract
read by serving) and a ``README.md`` model card. :func:`verify_export` reloads it from disk
and compares it with the adapter applied, unmerged, to the same 16-bit base.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Final, Literal

from annotated_types import Ge

from pipeline.errors import TrainingError
from pipeline.recipe_types import Positive

log = logging.getLogger(__name__)

VERIFY_PROMPTS = (
    "Write a Vox function `add(a: int, b: int) to int` that returns the sum.",
    "Write a Vox script that prints the numbers from 1 to 3.",
    "Define a record type `Pair` with two int fields.",
)


@dataclass(frozen=True)
class ExportConfig:
    """Recipe section ``export:``."""

    model_name: str = "vox-mens-tiny"  # served model id (vox_mens.json["model_name"])
    dtype: Literal["float16", "bfloat16", "float32"] = "float16"  # merged weight dtype (16-bit; float32 for tests)
    verify_atol: Annotated[float, Ge(0)] = 0.05  # max |logit difference| between export and adapter-on-base
    verify_new_tokens: Positive = 24  # greedy tokens compared per verification prompt


@dataclass(frozen=True)
class VerifyResult:
    """Round-trip check: ``passed`` iff every logit is within ``atol`` and greedy tokens match."""

    passed: bool
    max_logit_diff: float
    tokens_equal: bool
    prompts: int
    atol: float
    detail: str
    dtype_on_disk: str = ""  # safetensors dtype(s) of the floating tensors written, e.g. "F16"
    params_on_disk: int = 0  # elements stored (tied weights once)
    bytes_on_disk: int = 0  # size of the *.safetensors files


@dataclass(frozen=True)
class ExportResult:
    """Where the export went and what it says (``card`` = the ``vox_mens.json`` content)."""

    path: str
    card: dict[str, Any]
    verify: VerifyResult | None


def _dtype(name: str) -> Any:
    import torch

    if name not in ("float16", "bfloat16", "float32"):
        raise TrainingError(f"export.dtype must be float16, bfloat16 or float32, got {name!r}")
    return getattr(torch, name)


#: ``export.dtype`` -> the safetensors dtype code its tensors must have on disk
DISK_DTYPES: Final = {"float16": "F16", "bfloat16": "BF16", "float32": "F32"}


def weights_on_disk(export_dir: Path) -> tuple[set[str], int, int]:
    """What the export's safetensors hold, read from the headers (no tensor is loaded).

    Returns:
        ``(floating dtypes, elements, bytes on disk)``; integer buffers are ignored.
    """
    import math

    from safetensors import safe_open

    dtypes: set[str] = set()
    elements = size = 0
    for path in sorted(export_dir.glob("*.safetensors")):
        size += path.stat().st_size
        with safe_open(str(path), framework="pt") as f:
            for name in f.keys():
                part = f.get_slice(name)
                if part.get_dtype() in ("F16", "BF16", "F32", "F64"):
                    dtypes.add(part.get_dtype())
                    elements += math.prod(part.get_shape())
    return dtypes, elements, size


def merged_model(base: str, adapter_dir: str, dtype: str) -> tuple[Any, Any]:
    """Load the base unquantised in ``dtype``, apply the adapter and merge it into the weights."""
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(base, dtype=_dtype(dtype), device_map={"": "cpu"})
    model = PeftModel.from_pretrained(model, adapter_dir).merge_and_unload()
    return model.eval(), AutoTokenizer.from_pretrained(adapter_dir)


def model_card(card: dict[str, Any], corpus: dict[str, Any], recipe: dict[str, Any]) -> str:
    """The export's README.md: what it is, the data, the recipe, the eval numbers, usage."""
    import yaml

    k = card.get("pass_at_k") or {}
    lines = [
        f"# {card['model_name']}", "",
        f"A {card['base_model']} model fine-tuned with QLoRA to write Vox 2026 programs (vox-mens).", "",
        "## Evaluation (held-out tasks)", "",
        "A sample passes when it compiles in strict mode and declares what the task names "
        f"({card.get('eval_policy') or 'unconstrained'} decoding).", "",
        f"- pass@1: {card['pass_at_1']}" if card["pass_at_1"] is not None else "- pass@1: not evaluated",
        f"- pass@{k.get('k')}: {k.get('value')}" if k else "- pass@k: not evaluated",
        f"- raw compile rate (errors only, names not checked): {card.get('raw_compile_pass_at_1')}",
        f"- verified best-of-n pass@1: {card.get('verified_pass_at_1')}",
        f"- release gate passed: {card['eval_passed']}", "",
        "## Training data", "",
        f"- corpus version {card['corpus_version']}: {corpus.get('train_rows', '?')} train rows, "
        f"{corpus.get('heldout_rows', '?')} held-out rows",
        f"- rows per family: {json.dumps(corpus.get('train_families', {}))}", "",
        "## Prompt presentation", "",
        f"`system_prompt_mode: {card['system_prompt_mode']}` — "
        + ("the SSOT system prompt is sent first." if card["system_prompt_mode"] == "ssot"
           else "system messages are dropped before applying the chat template."), "",
        f"## Recipe `{card['recipe']}`", "", "```yaml", yaml.safe_dump(recipe, sort_keys=False).strip(), "```", "",
    ]
    return "\n".join(lines)


def export_model(base: str, adapter_dir: str, out_root: Path, cfg: ExportConfig, *, recipe: str,
                 eval_summary: dict[str, Any], corpus: dict[str, Any], recipe_sections: dict[str, Any],
                 system_prompt_mode: str, verify: bool = True) -> ExportResult:
    """Merge, save, verify and (if verified and the eval gate passed) point ``out_root/latest.json`` at it.

    Args:
        base: the base model (HF id or dir) the adapter was trained on.
        adapter_dir: the saved LoRA adapter.
        out_root: ``exports_dir()``; the export goes to ``out_root/<model_name>-<stamp>-<random>``.
        eval_summary: ``{"pass_at_1", "pass_at_k": {"k", "value"}, "eval_passed"}`` (values may be None).
        corpus: corpus summary (``version``, row counts) for the card.
        recipe_sections: the recipe as loaded, for the card.
        system_prompt_mode: how training presented prompts.
        verify: run :func:`verify_export` before publishing.

    Raises:
        TrainingError: bad dtype, or the base/adapter cannot be loaded.
    """
    from transformers import GenerationConfig

    from pipeline.decoding import eos_ids
    from pipeline.paths import new_export_dir, publish_export

    model, tokenizer = merged_model(base, adapter_dir, cfg.dtype)
    created = datetime.now(UTC)
    # collision-free name (microseconds + random suffix) and a private staging dir (mkdtemp)
    final, tmp = new_export_dir(out_root, cfg.model_name, created)
    try:
        gen = model.generation_config.to_dict() if model.generation_config else {}
        model.generation_config = GenerationConfig(**{**gen, "eos_token_id": list(eos_ids(model, tokenizer)),
                                                      "pad_token_id": tokenizer.pad_token_id})
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp, save_jinja_files=False)
        if isinstance(tokenizer.chat_template, str):
            (tmp / "chat_template.jinja").write_text(tokenizer.chat_template)
        card = {
            "model_name": cfg.model_name, "base_model": base, "recipe": recipe,
            "system_prompt_mode": system_prompt_mode, "pass_at_1": eval_summary.get("pass_at_1"),
            "pass_at_k": eval_summary.get("pass_at_k"), "eval_passed": bool(eval_summary.get("eval_passed")),
            "raw_compile_pass_at_1": eval_summary.get("raw_compile_pass_at_1"),
            "verified_pass_at_1": eval_summary.get("verified_pass_at_1"), "eval_policy": eval_summary.get("policy"),
            "corpus_version": str(corpus.get("version", "")), "created": created.isoformat(),
        }
        (tmp / "vox_mens.json").write_text(json.dumps(card, indent=1))
        (tmp / "README.md").write_text(model_card(card, corpus, recipe_sections))
        os.replace(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)  # never leave a stale staging dir
        raise
    result = verify_export(final, base, adapter_dir, cfg) if verify else None
    # latest.json moves only for an export that passed every gate (eval and round trip)
    if not publish_export(final, card, verified=result is None or result.passed):
        why = result.detail if result is not None and not result.passed else "eval gate failed"
        log.warning("export: %s not published (%s); latest.json not updated", final, why)
    return ExportResult(path=str(final), card=card, verify=result)


def verify_export(export_dir: Path, base: str, adapter_dir: str, cfg: ExportConfig,
                  prompts: tuple[str, ...] = VERIFY_PROMPTS) -> VerifyResult:
    """Reload the export and compare it with the unmerged adapter on the same 16-bit base; check that
    the weights on disk have ``cfg.dtype`` (a float32 merge doubles the size and reloads fine).

    For each prompt (chat template, per ``vox_mens.json``'s presentation) both models decode
    greedily; the reference's tokens are then scored by both (teacher forcing) and the largest
    absolute logit difference is compared with ``cfg.verify_atol``.
    """
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from pipeline.chat_format import user_turn
    from pipeline.decoding import encode_chat, eos_ids

    mode = json.loads((export_dir / "vox_mens.json").read_text())["system_prompt_mode"]
    exported = AutoModelForCausalLM.from_pretrained(export_dir, dtype=_dtype(cfg.dtype)).eval()
    tokenizer = AutoTokenizer.from_pretrained(export_dir)
    ref_base = AutoModelForCausalLM.from_pretrained(base, dtype=_dtype(cfg.dtype), device_map={"": "cpu"})
    reference = PeftModel.from_pretrained(ref_base, adapter_dir).eval()
    max_diff, equal = 0.0, True
    stop = list(eos_ids(exported, tokenizer))
    for prompt in prompts:
        ids = torch.tensor([encode_chat(tokenizer, user_turn(prompt, mode))])  # as the server encodes it
        with torch.inference_mode():
            kw = {"max_new_tokens": cfg.verify_new_tokens, "do_sample": False, "eos_token_id": stop,
                  "pad_token_id": tokenizer.pad_token_id}
            ref_out = reference.generate(input_ids=ids, attention_mask=torch.ones_like(ids), **kw)
            exp_out = exported.generate(input_ids=ids, attention_mask=torch.ones_like(ids), **kw)
            equal &= torch.equal(ref_out, exp_out)
            a = reference(input_ids=ref_out).logits.float()
            b = exported(input_ids=ref_out).logits.float()
        max_diff = max(max_diff, float((a - b).abs().max()))
    # the reload above casts to cfg.dtype, so the dtype written must be checked on disk itself
    dtypes, elements, size = weights_on_disk(export_dir)
    dtype_ok = dtypes == {DISK_DTYPES[cfg.dtype]}
    passed = equal and max_diff <= cfg.verify_atol and dtype_ok
    detail = f"max |logit diff| {max_diff:.4g} (atol {cfg.verify_atol}), greedy tokens {'equal' if equal else 'DIFFER'}"
    if not dtype_ok:
        detail += (f"; weights on disk are {'/'.join(sorted(dtypes)) or 'missing'}, expected "
                   f"{DISK_DTYPES[cfg.dtype]} (export.dtype {cfg.dtype})")
    return VerifyResult(passed=passed, max_logit_diff=max_diff, tokens_equal=equal, prompts=len(prompts),
                        atol=cfg.verify_atol, detail=detail, dtype_on_disk="/".join(sorted(dtypes)),
                        params_on_disk=elements, bytes_on_disk=size)


def export_summary(result: ExportResult) -> dict[str, Any]:
    """Flat dict for logs/metadata."""
    return {"path": result.path, **result.card, "verify": asdict(result.verify) if result.verify else None}
