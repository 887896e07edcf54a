"""Base model stage: tokenizer + chat template, bootstrap build/reuse, HF id pass-through."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.base_model import EOS, BaseModelConfig, build_base_model, pretrain_texts, train_tokenizer
from pipeline.errors import DataError, TrainingError
from pipeline.sample_corpus import MICRO_RECIPE, sample_rows

MICRO = BaseModelConfig(**MICRO_RECIPE["base_model"])


def test_tokenizer_masks_assistant_turn_including_end_of_turn() -> None:
    tok = train_tokenizer(["fn add(a: int) to int { ret a }", "Write a function."] * 20, 300)
    msgs = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "```vox\nlet x = 1\n```"}]
    out = tok.apply_chat_template(msgs, tokenize=True, return_dict=True, return_assistant_tokens_mask=True)
    ids, mask = out["input_ids"], out["assistant_masks"]
    trained = tok.decode([i for i, m in zip(ids, mask) if m])
    assert trained == "```vox\nlet x = 1\n```" + EOS
    assert "hi" not in trained
    prompt = tok.apply_chat_template(msgs[:1], tokenize=False, add_generation_prompt=True)
    assert prompt.endswith("<|im_start|>assistant\n")


def test_pretraining_refuses_heldout_rows() -> None:
    rows = sample_rows(20)
    heldout = [r for r in rows if r["split"] == "heldout"] or [{**rows[0], "split": "heldout"}]
    with pytest.raises(DataError, match="train only"):
        pretrain_texts(heldout)


@pytest.mark.slow
def test_bootstrap_builds_offline_and_is_reused(tmp_path: Path) -> None:
    rows = [r for r in sample_rows(60) if r["split"] == "train"]
    out = tmp_path / "model"
    first = build_base_model(MICRO, rows, out, corpus_version="v1")
    assert first.bootstrap and not first.reused and first.params and first.params < 200_000
    assert len(first.pretrain_losses) == MICRO.pretrain_steps
    probe = first.copy_probe  # pipeline.copy_probe: a micro model does not copy, but it is measured
    assert probe and probe["first_tokens"] and probe["repeat_tokens"] and probe["repeat_nll"] is not None
    gen = json.loads((out / "generation_config.json").read_text())
    assert isinstance(gen["eos_token_id"], list) and len(gen["eos_token_id"]) == 2
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["model_type"] == "qwen3"
    assert (out / "tokenizer.json").is_file()
    again = build_base_model(MICRO, rows, out, corpus_version="v1")
    assert again.reused and again.fingerprint == first.fingerprint and again.copy_probe == probe
    changed = build_base_model(MICRO, rows, out, corpus_version="v2")
    assert not changed.reused and changed.fingerprint != first.fingerprint


def test_hf_id_is_passed_through_without_network(tmp_path: Path) -> None:
    res = build_base_model(BaseModelConfig(model="Qwen/Qwen2.5-Coder-1.5B-Instruct"), [], tmp_path / "m")
    assert res.model == "Qwen/Qwen2.5-Coder-1.5B-Instruct" and not res.bootstrap
    with pytest.raises(TrainingError, match="no config.json"):
        build_base_model(BaseModelConfig(model=str(tmp_path)), [], tmp_path / "m")


def test_generation_stops_once_the_first_vox_block_closes() -> None:
    import torch

    from pipeline.decoding import FirstBlockClosed

    tok = train_tokenizer(["```vox\nlet x = 1\n```\nmore text", "plain words"] * 20, 300)
    texts = ["```vox\nlet x = 1\n```", "```vox\nlet x = 1", "Sure:\n```vox\nlet y = 2\n``` and"]
    rows = [tok(t, add_special_tokens=False)["input_ids"] for t in texts]
    width = max(map(len, rows))
    ids = torch.tensor([[tok.pad_token_id] * (width - len(r)) + r for r in rows])
    prompt = torch.tensor([[tok.pad_token_id] * 2] * 3)
    done = FirstBlockClosed(tok, 2)(torch.cat([prompt, ids], dim=1), None)
    assert done.tolist() == [True, False, True]


def test_the_cli_says_a_bad_recipe_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    """``python -m pipeline.base_model --recipe nope`` ended in a RecipeError traceback."""
    from pipeline.base_model import main

    assert main(["--recipe", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: unknown recipe 'nope'") and err.count("\n") == 1
