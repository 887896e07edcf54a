"""One training process of tests/pipeline/test_distributed.py and test_train_ddp.py (run under
``accelerate launch``).

argv: BASE_MODEL OUT_DIR BATCH_SIZE [--track] [--die RANK:STEP] [--hold STEP]. Trains plain LoRA (fp32,
no dropout) on the micro sample corpus with :func:`pipeline.train.train` (checkpoint every 3 steps);
rank 0 prints ``RESULT {json}``. ``--track``: rank 0 logs to the MLflow store of ``$VOX_STATE_DIR``
(default: no tracking). Faults for the tests: ``--die 1:4`` SIGKILLs rank 1 at the end of step 4;
``--hold 6`` makes rank 0 print ``HOLD 6`` once checkpoint-6 is saved and then wait (to be killed).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch
from transformers import TrainerCallback

from pipeline.distributed import is_main_process, rank, world_size
from pipeline.sample_corpus import MICRO_RECIPE, sample_rows
from pipeline.tracking import NullTracker
from pipeline.train import TrainConfig, make_sft_data, train

STEPS = 6
SAVE_STEPS = 3


class Faults(TrainerCallback):
    """The faults asked for on the command line."""

    def __init__(self, die: tuple[int, int] | None, hold: int | None) -> None:
        self.die, self.hold = die, hold

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if self.die is not None and (rank(), state.global_step) == self.die:
            print(f"DIE {time.time():.3f}", flush=True)  # when, for timing how soon the run fails
            os.kill(os.getpid(), signal.SIGKILL)

    def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if self.hold is not None and state.global_step == self.hold and is_main_process():
            print(f"HOLD {state.global_step}", flush=True)
            time.sleep(600)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("base")
    parser.add_argument("out", type=Path)
    parser.add_argument("batch", type=int)
    parser.add_argument("--track", action="store_true")
    parser.add_argument("--die", default=None, help="RANK:STEP")
    parser.add_argument("--hold", type=int, default=None)
    args = parser.parse_args()
    die_rank, _, die_step = (args.die or "").partition(":")
    die = (int(die_rank), int(die_step)) if args.die else None
    torch.set_num_threads(1)
    cfg = TrainConfig(**{**MICRO_RECIPE["train"], "base_model": args.base, "quantization": "none", "bf16": "off",
                         "batch_size": args.batch, "max_steps": STEPS, "learning_rate": 5e-3, "lora_dropout": 0.0,
                         "eval_steps": STEPS, "save_steps": SAVE_STEPS, "logging_steps": 1, "device": "cpu"})
    rows = sample_rows(80)
    data = make_sft_data([r for r in rows if r["split"] == "train"], [r for r in rows if r["split"] == "heldout"],
                         cfg, corpus_version="v1", base_fingerprint="b1")
    result = train(cfg, data, args.out, tracker=None if args.track else NullTracker(),
                   callbacks=[Faults(die, args.hold)])
    if is_main_process():
        print("RESULT " + json.dumps({**asdict(result), "world_size": world_size()}, default=str), flush=True)


if __name__ == "__main__":
    main()
