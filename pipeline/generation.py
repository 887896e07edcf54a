"""Batched chat generation with Hugging Face models, for evaluation (imported only when evaluating).

:func:`load_model` gives the 16-bit base, optionally with a LoRA adapter merged in memory
(exactly what :mod:`pipeline.export` writes to disk). :class:`HFGenerator` applies the chat
template with a generation prompt, left-pads, and samples ``n`` completions per conversation,
stopping at any EOS id of the model's ``generation_config``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from transformers import StoppingCriteria, StoppingCriteriaList


def load_model(base: str, adapter_dir: str | None = None, device: str = "cpu", merge: bool = True) -> tuple[Any, Any]:
    """Load ``(model, tokenizer)``: the 16-bit ``base`` plus ``adapter_dir`` if given.

    Args:
        base: HF id or directory of the base model.
        adapter_dir: a saved peft adapter (its tokenizer is used when present).
        device: resolved device.
        merge: merge the adapter into the weights (faster generation); else keep a PeftModel.
    """
    from transformers import AutoTokenizer

    from pipeline.quant import load_16bit

    model = load_16bit(base, device)
    tokenizer = AutoTokenizer.from_pretrained(adapter_dir or base)
    if adapter_dir:
        from peft import PeftModel

        model = PeftModel.from_pretrained(model, adapter_dir)
        if merge:
            model = model.merge_and_unload()
    return model.eval(), tokenizer


def eos_ids(model: Any, tokenizer: Any) -> list[int]:
    """All end-of-sequence ids: the generation config's (int or list) plus the tokenizer's."""
    ids = model.generation_config.eos_token_id
    ids = [] if ids is None else [ids] if isinstance(ids, int) else list(ids)
    if tokenizer.eos_token_id is not None and tokenizer.eos_token_id not in ids:
        ids.append(tokenizer.eos_token_id)
    return ids


class FirstBlockClosed(StoppingCriteria):
    """Stopping criterion: a sequence is done once its first ```vox block has closed.

    Evaluation scores code, so the prose that usually follows the block is not generated.
    A ``transformers.StoppingCriteria`` (returns one bool per sequence).
    """

    def __init__(self, tokenizer: Any, prompt_len: int) -> None:
        self.tokenizer, self.prompt_len = tokenizer, prompt_len

    def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
        import torch

        texts = self.tokenizer.batch_decode(input_ids[:, self.prompt_len:], skip_special_tokens=True)
        done = []
        for text in texts:
            start = text.find("```vox")
            done.append(start >= 0 and text.find("\n```", start + 6) >= 0)
        return torch.tensor(done, dtype=torch.bool, device=input_ids.device)


class HFGenerator:
    """A :data:`pipeline.evaluate.Generator` over a loaded model.

    Args:
        model, tokenizer: from :func:`load_model`.
        max_new_tokens: cap per completion.
        temperature: 0 = greedy; else sampling with ``top_p``.
        batch_size: sequences per ``generate`` call (prompts x n).
        seed: seeds ``torch`` before each call, so runs repeat.
        stop_after_block: end each completion when its first ```vox block closes.
    """

    def __init__(self, model: Any, tokenizer: Any, max_new_tokens: int = 160, temperature: float = 0.2,
                 top_p: float = 0.95, batch_size: int = 64, seed: int = 0, stop_after_block: bool = True) -> None:
        self.model, self.tokenizer, self.stop_after_block = model, tokenizer, stop_after_block
        self.max_new_tokens, self.temperature, self.top_p = max_new_tokens, temperature, top_p
        self.batch_size, self.seed = batch_size, seed

    def __call__(self, conversations: Sequence[list[dict[str, str]]], n: int) -> list[list[str]]:
        import torch

        tok = self.tokenizer
        tok.padding_side = "left"
        pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
        texts = [tok.apply_chat_template(c, tokenize=False, add_generation_prompt=True) for c in conversations]
        per_call = max(1, self.batch_size // max(n, 1))
        out: list[list[str]] = []
        torch.manual_seed(self.seed)
        device = next(self.model.parameters()).device
        for i in range(0, len(texts), per_call):
            enc = tok(texts[i : i + per_call], return_tensors="pt", padding=True, add_special_tokens=False).to(device)
            sample = self.temperature > 0
            stop = StoppingCriteriaList()
            if self.stop_after_block:
                stop.append(FirstBlockClosed(tok, enc["input_ids"].shape[1]))
            with torch.inference_mode():
                gen = self.model.generate(
                    **enc, max_new_tokens=self.max_new_tokens, do_sample=sample, num_return_sequences=n,
                    temperature=self.temperature if sample else None, top_p=self.top_p if sample else None,
                    top_k=None, eos_token_id=eos_ids(self.model, tok), pad_token_id=pad, stopping_criteria=stop,
                )
            new = gen[:, enc["input_ids"].shape[1]:]
            decoded = tok.batch_decode(new, skip_special_tokens=True)
            out.extend(decoded[j * n : (j + 1) * n] for j in range(len(decoded) // n))
        return out
