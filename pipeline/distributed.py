"""Multi-process training: the recipe's ``distributed:`` section, this process's rank, and the
``accelerate launch`` command that runs the training stage in N processes.

Hugging Face Accelerate does the work: under ``accelerate launch`` the ``transformers`` Trainer
wraps the model in DDP (gloo on CPU, NCCL on CUDA), FSDP or DeepSpeed from the config file in
``pipeline/accelerate/``. Here only what the pipeline must decide itself: which process is rank 0
(the only one that takes the run lock, logs to MLflow, writes ``run.json`` and the adapter; the
Trainer already writes checkpoints from rank 0 only).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from annotated_types import Ge

#: accelerate config per strategy (files under pipeline/accelerate/)
ACCELERATE_CONFIGS: dict[str, str] = {"ddp": "ddp.yaml", "fsdp": "fsdp_qlora.yaml", "deepspeed": "deepspeed_zero2.yaml"}
CONFIG_DIR = Path(__file__).parent / "accelerate"


@dataclass(frozen=True)
class DistributedConfig:
    """Recipe section ``distributed:``."""

    num_processes: Annotated[int, Ge(1)] = 1  # training processes (1 = plain single process, no launcher)
    strategy: Literal["ddp", "fsdp", "deepspeed"] = "ddp"  # ddp: full replica per process; fsdp: QLoRA shards
    # with 4-bit storage dtype (CUDA); deepspeed: ZeRO-2 (CUDA). Global batch = num_processes x batch_size x grad_accum


def rank() -> int:
    """This process's global rank (``RANK`` set by the launcher; 0 without one)."""
    return int(os.environ.get("RANK", "0"))


def world_size() -> int:
    """Number of training processes (``WORLD_SIZE``; 1 without a launcher)."""
    return int(os.environ.get("WORLD_SIZE", "1"))


def is_main_process() -> bool:
    """True on rank 0 (and in a single process): the process that logs and writes."""
    return rank() == 0


def accelerate_command(cfg: DistributedConfig, target: list[str]) -> list[str]:
    """``accelerate launch`` argv running ``target`` in ``cfg.num_processes`` processes.

    Args:
        cfg: the recipe's ``distributed`` section.
        target: what each process runs: ``["-m", "pipeline.train", *args]`` or ``[script, *args]``.

    Without CUDA the same command runs CPU processes with the gloo backend (accelerate's ``--cpu`` flag
    would fall back to one process, so it is not used).
    """
    command = [sys.executable, "-m", "accelerate.commands.launch",
               "--config_file", str(CONFIG_DIR / ACCELERATE_CONFIGS[cfg.strategy]),
               "--num_processes", str(cfg.num_processes)]
    return [*command, *target]
