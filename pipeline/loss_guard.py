"""Fail a run loudly when its loss stops being a number.

A diverged run (too high a learning rate, a bad batch, bf16 overflow) logs ``loss nan`` or ``inf`` and
otherwise looks finished: the trainer saves an adapter and the stage reports success. The fine-tuning
callback (:class:`pipeline.train_callbacks.FiniteLossGuard`) and the pretraining loop
(:func:`pipeline.base_model.pretrain`) call :func:`require_finite` on every loss they see instead.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final

from pipeline.errors import TrainingError

#: the loss figures a transformers log record may hold (per-step training, held-out, whole-run mean)
LOSS_KEYS: Final = ("loss", "eval_loss", "train_loss")


def require_finite(metrics: Mapping[str, Any], step: int, what: str = "training") -> None:
    """Raise when a loss in ``metrics`` (keys :data:`LOSS_KEYS`) is NaN or infinite.

    Args:
        metrics: a log record, e.g. ``{"loss": 2.3, "learning_rate": 1e-3}``; other keys are ignored.
        step: the optimizer step the record belongs to (named in the message).
        what: the run, in the message (``training``, ``pretraining``).

    Raises:
        TrainingError: ``training step 12: loss is nan (not a finite number): the run diverged; ...``.
    """
    for key in LOSS_KEYS:
        value = metrics.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and not math.isfinite(value):
            raise TrainingError(f"{what} step {step}: {key} is {value} (not a finite number): the run diverged; "
                                "lower the learning rate or check the data, then run again")
