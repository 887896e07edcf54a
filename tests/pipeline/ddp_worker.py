"""One training process of tests/pipeline/test_distributed.py (run under ``accelerate launch``).

argv: BASE_MODEL OUT_DIR BATCH_SIZE. Trains plain LoRA (fp32, no dropout) on the micro sample corpus
with :func:`pipeline.train.train`; rank 0 prints ``RESULT {json}``.
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path

import torch

from pipeline.distributed import is_main_process, world_size
from pipeline.sample_corpus import MICRO_RECIPE, sample_rows
from pipeline.tracking import NullTracker
from pipeline.train import TrainConfig, make_sft_data, train

STEPS = 6


def main() -> None:
    base, out, batch = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
    torch.set_num_threads(1)
    cfg = TrainConfig(**{**MICRO_RECIPE["train"], "base_model": base, "quantization": "none", "bf16": "off",
                         "batch_size": batch, "max_steps": STEPS, "learning_rate": 5e-3, "lora_dropout": 0.0,
                         "eval_steps": STEPS, "save_steps": 3, "logging_steps": 1, "device": "cpu"})
    rows = sample_rows(80)
    data = make_sft_data([r for r in rows if r["split"] == "train"], [r for r in rows if r["split"] == "heldout"],
                         cfg, corpus_version="v1", base_fingerprint="b1")
    result = train(cfg, data, out, tracker=NullTracker())
    if is_main_process():
        print("RESULT " + json.dumps({**asdict(result), "world_size": world_size()}, default=str), flush=True)


if __name__ == "__main__":
    main()
