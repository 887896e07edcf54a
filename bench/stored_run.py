"""The stored run the decoding benchmarks read: the base model and adapter of the last ``make run``
(``$VOX_STATE_DIR``, default ``.vox-state``), loaded on the CPU with every core, and its tasks
presented as the eval presents them."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class StoredRun:
    """``model``/``tokenizer`` loaded, ``mode`` the run's ``system_prompt_mode``."""

    model: Any
    tokenizer: Any
    mode: str

    def conversations(self, prompts: list[str]) -> list[Any]:
        """Each prompt as the one user turn the eval and ``vox serve`` send (same system prompt mode)."""
        from pipeline.chat_format import user_turn

        return [user_turn(p, self.mode) for p in prompts]

    def generator(self, max_new_tokens: int, temperature: float, seed: int, **options: Any) -> Any:
        """The eval's constrained :class:`pipeline.decoding_batch.HFGenerator` over this run
        (the eval recipe's ``top_p`` and batch size); ``options`` go to it as they are
        (``retries=1``, ``constrained=False`` ...)."""
        from pipeline.decoding_batch import HFGenerator
        from pipeline.evaluate import EvalConfig

        cfg = EvalConfig()
        return HFGenerator(self.model, self.tokenizer, max_new_tokens, temperature, cfg.top_p, cfg.batch_size, seed,
                           **options)


def load_stored_run(base_only: bool = False) -> StoredRun | None:
    """Load the last ``make run``'s base model (+ adapter unless ``base_only``); ``None``, with a
    line on stderr, when there is no stored run."""
    import torch

    from pipeline.decoding import load_model
    from pipeline.paths import state_dir

    result = state_dir(create=False) / "artifacts" / "qlora_adapter" / "result.json"
    if not result.is_file():
        print(f"no stored run: {result} is missing (run `make run` first)", file=sys.stderr)
        return None
    meta = json.loads(result.read_text())
    meta = meta.get("data", meta)
    torch.set_num_threads(os.cpu_count() or 1)
    model, tok = load_model(meta["base_model"], None if base_only else meta["adapter_dir"], "cpu")
    return StoredRun(model, tok, meta.get("system_prompt_mode", "none"))




def add_run_arguments(parser: Any) -> None:
    """The flags every stored-run benchmark takes: ``--base`` (no adapter) and ``--seed``."""
    parser.add_argument("--base", action="store_true", help="the base model instead of base + adapter")
    parser.add_argument("--seed", type=int, default=0)
