"""Trainer callbacks used by :mod:`pipeline.train`: MLflow logging through our small tracker."""

from __future__ import annotations

import logging
import time
from typing import Any

from transformers import TrainerCallback

log = logging.getLogger("pipeline.train")


class MlflowCallback(TrainerCallback):
    """Log every trainer log record (loss, eval_loss, learning_rate, grad_norm) to MLflow,
    plus ``tokens_per_s`` measured between log records (non-pad tokens / wall second).

    Attributes:
        tokens_at_start: tokens already seen when this session began (non-zero on resume).
    """

    def __init__(self, tracker: Any) -> None:
        self.tracker = tracker
        self.tokens_at_start = 0
        self._last: tuple[float, int] | None = None

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.tokens_at_start = state.num_input_tokens_seen
        self._last = (time.perf_counter(), state.num_input_tokens_seen)

    def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None,
               **kwargs: Any) -> None:
        metrics = {k: v for k, v in (logs or {}).items() if isinstance(v, (int, float))}
        if self._last is not None and "loss" in metrics:
            now, seen = time.perf_counter(), state.num_input_tokens_seen
            if now > self._last[0] and seen > self._last[1]:
                metrics["tokens_per_s"] = (seen - self._last[1]) / (now - self._last[0])
            self._last = (now, seen)
        self.tracker.log_metrics(metrics, step=state.global_step)
        shown = {k: metrics[k] for k in ("loss", "eval_loss", "learning_rate", "tokens_per_s") if k in metrics}
        if shown:
            log.info("step %d/%d %s", state.global_step, state.max_steps,
                     " ".join(f"{k}={v:.4g}" for k, v in shown.items()))
