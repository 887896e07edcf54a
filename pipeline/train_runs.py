"""Run bookkeeping of :func:`pipeline.train.train`: the run key, the run folder's state files and
its checkpoints (what a rerun resumes from).

Layout of a training stage folder::

    latest_run.json                      {"fingerprint", "run_dir"} of the last run started
    runs/<fingerprint>/run.json          {"status": running|complete|failed|killed, ...}
    runs/<fingerprint>/checkpoint-<N>/   transformers checkpoints (trainer_state.json written last)
    runs/<fingerprint>/adapter/          the finished adapter (appears whole: written as adapter.tmp, renamed)

Under ``accelerate launch`` only rank 0 writes these (:func:`pipeline.distributed.is_main_process`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import shutil
from dataclasses import asdict
from pathlib import Path
from typing import Any

from pipeline.errors import PipelineError
from pipeline.train_config import SFTData, TrainConfig

log = logging.getLogger("pipeline.train")

#: recipe fields that change bookkeeping, not what is trained: they do not fork a run
NOT_IN_KEY = frozenset({"resume", "eval_steps", "save_steps", "save_total_limit", "logging_steps", "device"})
_CHECKPOINT = re.compile(r"^checkpoint-(\d+)$")


def run_fingerprint(cfg: TrainConfig, data: SFTData) -> str:
    """Digest of recipe + base + corpus (+ system prompt when presented): same key, same run."""
    from pipeline.prompt import system_prompt

    blob = {k: v for k, v in asdict(cfg).items() if k not in NOT_IN_KEY}
    blob.update(corpus=data.corpus_version, base=data.base_fingerprint, rows=len(data.train))
    if cfg.system_prompt_mode == "ssot":
        blob["system_prompt"] = hashlib.sha256(system_prompt().encode()).hexdigest()
    return hashlib.sha256(json.dumps(blob, sort_keys=True, default=str).encode()).hexdigest()[:16]


def last_checkpoint(run_dir: Path, *, remove_incomplete: bool = True) -> Path | None:
    """The newest complete checkpoint of ``run_dir`` (one with ``trainer_state.json``, written last).

    Args:
        run_dir: a run folder (``runs/<fingerprint>``).
        remove_incomplete: delete newer checkpoints that a crash cut short. Only one process may
            do this (rank 0 under DDP); the others pass False and skip them.

    Returns:
        the checkpoint folder, or None when there is none.
    """
    if not run_dir.is_dir():
        return None
    found = sorted(((int(m.group(1)), p) for p in run_dir.iterdir()
                    if p.is_dir() and (m := _CHECKPOINT.match(p.name))), reverse=True)
    for _, path in found:
        if (path / "trainer_state.json").is_file():
            return path
        if remove_incomplete:
            log.warning("train: removing incomplete checkpoint %s", path)
            shutil.rmtree(path, ignore_errors=True)
    return None


def resume_point(out_dir: Path) -> str | None:
    """Name of the checkpoint the next run of the training stage in ``out_dir`` would resume from.

    Read-only (nothing is removed); None when no run started or it has no complete checkpoint.
    """
    latest = out_dir / "latest_run.json"
    try:
        run_dir = Path(json.loads(latest.read_text())["run_dir"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    found = last_checkpoint(run_dir, remove_incomplete=False)
    return found.name if found else None


def read_state(run_dir: Path) -> dict[str, Any]:
    """The run's ``run.json`` (empty when the run never started)."""
    path = run_dir / "run.json"
    return dict(json.loads(path.read_text())) if path.is_file() else {}


def end_message(exc: BaseException, step: int) -> str:
    """One line saying why a run ended early (stored in MLflow and ``run.json``)."""
    from pipeline.interrupts import signal_name

    if not isinstance(exc, Exception):
        name = signal_name(exc) if isinstance(exc, KeyboardInterrupt) else type(exc).__name__
        return f"stopped by {name} at step {step}; run the same command again to resume from the last checkpoint"
    text = " ".join(str(exc).split()) or "(no message)"
    return text if isinstance(exc, PipelineError) else f"{type(exc).__name__}: {text}"
