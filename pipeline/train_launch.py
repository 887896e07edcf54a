"""The launcher of multi-process training: ``accelerate launch`` run in-process, so that a dead
worker ends the run within bounded time with one line naming the rank, never a hang.

What bounds a failure (every setting explicit, see :class:`pipeline.distributed.DistributedConfig`):

- torchelastic checks its workers every 0.5 s and does not restart them (``--max_restarts 0``); when
  one fails, the others get SIGTERM (they end their run KILLED) and SIGKILL ``shutdown_s`` later;
- a rank blocked on a peer that is alive but stuck fails after ``timeout_s`` (the gloo/NCCL process
  group timeout, passed to the workers as ``VOX_DDP_TIMEOUT_S``);
- the launcher gets SIGTERM when the process that started it dies, and the workers get SIGTERM when
  the launcher dies (``PR_SET_PDEATHSIG``, :func:`pipeline.distributed.die_with_parent`), so a
  SIGKILLed stage or launcher leaves no orphan training on.

The adapter appears whole or not at all (rank 0 writes ``adapter.tmp`` and renames it), so a failed
run leaves none; the next run resumes from the last complete checkpoint.

Usage (what :func:`pipeline.distributed.accelerate_command` builds)::

    python -m pipeline.train_launch --timeout-s 900 --shutdown-s 15 [--report F] -- \\
        --config_file pipeline/accelerate/ddp.yaml --num_processes 2 ... -m pipeline.train --config R
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from pipeline import atomic
from pipeline.distributed import LAUNCHER_PID_ENV, TIMEOUT_ENV, DistributedConfig, accelerate_command, die_with_parent
from pipeline.errors import TrainingError

log = logging.getLogger("pipeline.train")

#: the launcher's report of a failed run, in the training stage folder
REPORT_NAME = "launch_failure.json"
_SIGNALS = frozenset(int(s) for s in signal.Signals)


def describe_failure(first_rank: int, failures: dict[int, Any]) -> str:
    """One line naming the rank that failed first and how, then the ranks stopped after it.

    Args:
        first_rank: torchelastic's root cause (``ChildFailedError.get_first_failure()``).
        failures: global rank -> ``ProcessFailure`` (``exitcode`` < 0: killed by that signal).
    """
    def how(failure: Any) -> str:
        code = failure.exitcode
        if code < 0 or (128 < code < 160 and code - 128 in _SIGNALS):  # a signal, or 128 + its number
            sig = signal.Signals(-code if code < 0 else code - 128)
            return f"was {'stopped' if sig in (signal.SIGTERM, signal.SIGINT) else 'killed'} by {sig.name}"
        return f"exited with status {code}"

    first = failures[first_rank]
    line = f"rank {first_rank} {how(first)} (pid {first.pid})"
    others = [f"rank {r} {how(f)}" for r, f in sorted(failures.items()) if r != first_rank]
    return line + (f"; then {', '.join(others)}" if others else "")


def launch_training(dist: DistributedConfig, target: list[str], out_dir: Path, *,
                    env: dict[str, str] | None = None, timeout_s: float | None = None) -> None:
    """Run ``target`` in ``dist.num_processes`` processes and wait; raise on any failure.

    Args:
        dist: the recipe's ``distributed`` section.
        target: what each process runs (``["-m", "pipeline.train", ...]`` or a script and its args).
        out_dir: the training stage folder (the failure report goes there; the resume point is read
            from its ``latest_run.json``).
        env: the launcher's environment (default: this process's).
        timeout_s: wall-clock limit of the whole launch (None: none); past it the launcher is stopped.

    Raises:
        TrainingError: a worker failed or died: one line with the rank, how it ended and the
            checkpoint the next run resumes from; or the launch ran past ``timeout_s``.
        KeyboardInterrupt: this process was interrupted; the launcher got SIGTERM and stopped its workers.
    """
    from pipeline.train_runs import resume_point

    out_dir.mkdir(parents=True, exist_ok=True)
    report = out_dir / REPORT_NAME
    report.unlink(missing_ok=True)
    command = accelerate_command(dist, target, report)
    log.info("train: %s", " ".join(command))
    proc = subprocess.Popen(command, env=env)
    try:
        status = proc.wait(timeout=timeout_s)
    except BaseException as exc:
        proc.terminate()  # SIGTERM: torchelastic stops the workers, which end the run KILLED
        try:
            proc.wait(timeout=dist.shutdown_s + 30)
        except subprocess.TimeoutExpired:
            proc.kill()
        if not isinstance(exc, subprocess.TimeoutExpired):
            raise
        status = None
    if status == 0:
        return
    try:
        what = str(json.loads(report.read_text())["error"])
    except (OSError, ValueError, KeyError):
        what = (f"the launcher exited with {status}" if status is not None
                else f"did not finish within {timeout_s} s and was stopped")
    resume = resume_point(out_dir)
    then = f"run it again to resume from {resume}" if resume else "no checkpoint was saved: run it again to start over"
    raise TrainingError(f"distributed training ({dist.num_processes} x {dist.strategy}) failed: {what}; {then}")


def main(argv: list[str] | None = None) -> int:
    """The launcher process (see the module docstring). Exit status: 0; 1 a worker failed (one line
    on stderr, and in ``--report``); 128 + signal when the launcher itself was stopped."""
    from accelerate.commands.launch import launch_command, launch_command_parser
    from torch.distributed.elastic.multiprocessing.api import SignalException
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError

    parser = argparse.ArgumentParser(prog="python -m pipeline.train_launch")
    parser.add_argument("--timeout-s", type=int, required=True, help="collective timeout of the workers")
    parser.add_argument("--shutdown-s", type=int, required=True, help="SIGTERM-to-SIGKILL grace for the workers")
    parser.add_argument("--parent-pid", type=int, default=None, help="stop when this process (the caller) dies")
    parser.add_argument("--report", type=Path, default=None, help="write {'error': line} here on failure")
    parser.add_argument("launch", nargs=argparse.REMAINDER, help="-- then `accelerate launch` arguments")
    args = parser.parse_args(argv)
    die_with_parent(args.parent_pid)
    os.environ.update({TIMEOUT_ENV: str(args.timeout_s), LAUNCHER_PID_ENV: str(os.getpid()),
                       "TORCH_ELASTIC_SHUTDOWN_TIMEOUT": str(args.shutdown_s)})
    launch = args.launch[1:] if args.launch[:1] == ["--"] else args.launch
    try:
        launch_command(launch_command_parser().parse_args(launch))
    except ChildFailedError as exc:
        rank, _ = exc.get_first_failure()
        line = describe_failure(rank, exc.failures)
    except SignalException as exc:  # SIGTERM/SIGINT to the launcher: torchelastic has stopped the workers
        print(f"interrupted: launcher stopped by {exc.sigval.name}; workers stopped", file=sys.stderr, flush=True)
        return 128 + int(exc.sigval)
    else:
        return 0
    print(f"error: distributed training failed: {line}", file=sys.stderr, flush=True)
    if args.report is not None:
        atomic.write_json(args.report, {"error": line})
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
