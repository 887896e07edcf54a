"""Multi-process training: the recipe's ``distributed:`` section, this process's rank, and the
``accelerate launch`` command that runs the training stage in N processes.

Hugging Face Accelerate does the work: under ``accelerate launch`` the ``transformers`` Trainer
wraps the model in DDP (gloo on CPU, NCCL on CUDA), FSDP or DeepSpeed from the config file in
``pipeline/accelerate/``. Here only what the pipeline must decide itself: which process is rank 0
(the only one that takes the run lock, logs to MLflow, writes ``run.json`` and the adapter; the
Trainer already writes checkpoints from rank 0 only), and how long a rank may wait for a dead or
stuck peer before the run fails (:mod:`pipeline.train_launch` runs the launcher).
"""

from __future__ import annotations

import logging
import os
import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Final, Literal

from annotated_types import Ge

log = logging.getLogger(__name__)

#: accelerate config per strategy (files under pipeline/accelerate/)
ACCELERATE_CONFIGS: dict[str, str] = {"ddp": "ddp.yaml", "fsdp": "fsdp_qlora.yaml", "deepspeed": "deepspeed_zero2.yaml"}
CONFIG_DIR = Path(__file__).parent / "accelerate"
#: set by the launcher (pipeline.train_launch) for its workers: the collective timeout, and its own pid
TIMEOUT_ENV: Final = "VOX_DDP_TIMEOUT_S"
LAUNCHER_PID_ENV: Final = "VOX_LAUNCHER_PID"
#: seconds between torchelastic's checks of its workers (a dead rank is noticed within this)
MONITOR_INTERVAL_S: Final = 0.5
_PR_SET_PDEATHSIG: Final = 1  # linux/prctl.h


@dataclass(frozen=True)
class DistributedConfig:
    """Recipe section ``distributed:``."""

    num_processes: Annotated[int, Ge(1)] = 1  # training processes (1 = plain single process, no launcher)
    strategy: Literal["ddp", "fsdp", "deepspeed"] = "ddp"  # ddp: full replica per process; fsdp: QLoRA shards
    # with 4-bit storage dtype (CUDA); deepspeed: ZeRO-2 (CUDA). Global batch = num_processes x batch_size x grad_accum
    timeout_s: Annotated[int, Ge(1)] = 900  # collective timeout: a rank waiting longer on a stuck peer fails the
    # run (transformers' default is 1800 s). A peer that dies is noticed by the launcher within 0.5 s instead
    shutdown_s: Annotated[int, Ge(1)] = 15  # when one rank fails, the others get SIGTERM (they record the run
    # KILLED) and SIGKILL this many seconds later: a failed run ends within ~shutdown_s, never hangs


def rank() -> int:
    """This process's global rank (``RANK`` set by the launcher; 0 without one)."""
    return int(os.environ.get("RANK", "0"))


def world_size() -> int:
    """Number of training processes (``WORLD_SIZE``; 1 without a launcher)."""
    return int(os.environ.get("WORLD_SIZE", "1"))


def is_main_process() -> bool:
    """True on rank 0 (and in a single process): the process that logs and writes."""
    return rank() == 0


def collective_timeout_s() -> int:
    """Collective (process group) timeout of this worker, in seconds: the launcher's
    ``distributed.timeout_s``, or the default without a launcher."""
    return int(os.environ.get(TIMEOUT_ENV, DistributedConfig.timeout_s))


def die_with_parent(parent_pid: int | None = None) -> None:
    """Have the kernel send this process SIGTERM when its parent exits, however it exits (SIGKILL
    included), so no training process outlives its launcher. Linux only (``PR_SET_PDEATHSIG``);
    elsewhere nothing is done.

    SIGTERM is un-ignored and unblocked first: both are inherited across ``exec``.

    Args:
        parent_pid: the expected parent; if it already died (this process was re-parented before
            the call), SIGTERM is sent at once.
    """
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    # SIG_IGN and the signal mask survive exec: a launcher that ignores or blocks SIGTERM (a test
    # runner, nohup-like wrappers) would otherwise leave this process deaf to its parent's death
    if signal.getsignal(signal.SIGTERM) == signal.SIG_IGN:
        try:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
        except ValueError:  # not the main thread: leave the disposition as it is
            log.warning("distributed: SIGTERM is ignored and cannot be reset off the main thread")
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})

    if ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0) != 0:
        log.warning("distributed: prctl(PR_SET_PDEATHSIG) failed (errno %d)", ctypes.get_errno())
        return
    if parent_pid is not None and os.getppid() != parent_pid:
        os.kill(os.getpid(), signal.SIGTERM)


def follow_launcher() -> None:
    """In a worker of :mod:`pipeline.train_launch`: stop (SIGTERM) when the launcher dies. No-op otherwise."""
    pid = os.environ.get(LAUNCHER_PID_ENV)
    if pid and world_size() > 1:
        die_with_parent(int(pid))


def accelerate_command(cfg: DistributedConfig, target: list[str], report: Path | None = None) -> list[str]:
    """Command running ``target`` in ``cfg.num_processes`` processes under ``accelerate launch``.

    The launcher is :mod:`pipeline.train_launch` (``accelerate launch`` in-process, with the
    failure handling below); everything after its ``--`` is ``accelerate launch``'s own argv.
    torchelastic is set explicitly: no restarts (a dead rank fails the run; the next run resumes
    from the last checkpoint), workers checked every :data:`MONITOR_INTERVAL_S`, a free port.

    Args:
        cfg: the recipe's ``distributed`` section.
        target: what each process runs: ``["-m", "pipeline.train", *args]`` or ``[script, *args]``.
        report: where the launcher writes ``{"error": one line}`` if the run fails.

    The launcher stops when the calling process dies (its pid is passed). Without CUDA the same
    command runs CPU processes with the gloo backend (accelerate's ``--cpu`` flag would fall back to
    one process, so it is not used).
    """
    own = [sys.executable, "-m", "pipeline.train_launch", "--timeout-s", str(cfg.timeout_s),
           "--shutdown-s", str(cfg.shutdown_s), "--parent-pid", str(os.getpid())]
    if report is not None:
        own += ["--report", str(report)]
    launch = ["--config_file", str(CONFIG_DIR / ACCELERATE_CONFIGS[cfg.strategy]),
              "--num_processes", str(cfg.num_processes), "--max_restarts", "0",
              "--monitor_interval", str(MONITOR_INTERVAL_S), "--main_process_port", "0"]
    return [*own, "--", *launch, *target]
