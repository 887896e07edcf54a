"""Trainer hooks used by :mod:`pipeline.train`: MLflow logging through our small tracker, a guard that
fails the run when a logged step trained on no supervised token (its loss is meaningless), and one that
fails it when a logged loss is NaN or infinite (:mod:`pipeline.loss_guard`)."""

from __future__ import annotations

import logging
import time
from typing import Any

from transformers import TrainerCallback
from trl import SFTTrainer

from pipeline.errors import TrainingError
from pipeline.loss_guard import require_finite

log = logging.getLogger("pipeline.train")

IGNORE = -100  # label of tokens outside the loss


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


class SupervisedTokens:
    """Counts of supervised (label != -100) training tokens: in total and since the last log record."""

    def __init__(self) -> None:
        self.total = 0
        self.since_log = 0

    def add(self, n: int) -> None:
        """Count ``n`` more supervised tokens."""
        self.total += n
        self.since_log += n


class CountingSFTTrainer(SFTTrainer):
    """``SFTTrainer`` that counts the supervised tokens of every training micro-batch in ``supervised``."""

    supervised: SupervisedTokens

    def compute_loss(self, model: Any, inputs: dict[str, Any], return_outputs: bool = False,
                     num_items_in_batch: Any = None) -> Any:
        """The parent's loss; counts ``labels != -100`` first when training (not in evaluation)."""
        if model.training and "labels" in inputs:
            self.supervised.add(int((inputs["labels"] != IGNORE).sum()))
        return super().compute_loss(model, inputs, return_outputs=return_outputs,
                                    num_items_in_batch=num_items_in_batch)


class SupervisionGuard(TrainerCallback):
    """Fail the run at a training log record when no supervised token was trained on since the last one.

    A step without labels logs loss 0.0 and grad norm 0.0 and looks like success (issue 14 item 6).
    Also logs ``supervised_tokens`` (cumulative) with each record.

    Raises:
        TrainingError: from ``on_log``, naming the step.
    """

    def __init__(self, counts: SupervisedTokens, tracker: Any | None = None) -> None:
        self.counts, self.tracker = counts, tracker

    def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None,
               **kwargs: Any) -> None:
        if "loss" not in (logs or {}):
            return
        if self.counts.since_log == 0:
            raise TrainingError(f"step {state.global_step}: no supervised (assistant) token was trained on since the "
                                f"last log; the logged loss {logs['loss'] if logs else '?'} means nothing")
        self.counts.since_log = 0
        if self.tracker is not None:
            self.tracker.log_metrics({"supervised_tokens": self.counts.total}, step=state.global_step)


class FiniteLossGuard(TrainerCallback):
    """Fail the run at a log record whose training or held-out loss is NaN or infinite
    (:func:`pipeline.loss_guard.require_finite`), instead of saving a diverged adapter as a success.

    Raises:
        TrainingError: from ``on_log``, naming the step and the loss.
    """

    def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None,
               **kwargs: Any) -> None:
        require_finite(logs or {}, state.global_step)
