"""A small MLflow wrapper: one local store under the state dir, explicit run ids, no globals
(``VOX_TRACKING=off``: :class:`NullTracker`, nothing recorded, no MLflow import).

The store is ``sqlite:///<state>/mlflow/mlflow.db`` with artifacts in ``<state>/mlflow/artifacts``
(``make mlflow`` opens the UI on it). ``mlflow`` is imported lazily. Uses ``MlflowClient``
rather than the fluent API so that resuming a run and running several runs in one process
never depend on hidden state.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

DEFAULT_EXPERIMENT = "vox-mens"
#: longest wait for another process creating the store (migrations take ~1-5 s on a slow disk)
STORE_LOCK_TIMEOUT_S = 300
#: longest tag value stored (MLflow's limit is 8000 characters)
MAX_TAG_CHARS = 5000


def default_tracking_uri() -> str:
    """``sqlite:///<state>/mlflow/mlflow.db`` (the Makefile's ``make mlflow`` reads the same)."""
    from pipeline.paths import mlflow_dir

    return f"sqlite:///{mlflow_dir() / 'mlflow.db'}"


def _lock_path(tracking_uri: str, fallback_dir: Path) -> Path:
    """``<db>.lock`` next to a ``sqlite:///`` store; ``<fallback_dir>/store.lock`` for other URIs."""
    prefix = "sqlite:///"
    if tracking_uri.startswith(prefix):
        db = Path(tracking_uri[len(prefix):])
        db.parent.mkdir(parents=True, exist_ok=True)
        return db.with_name(db.name + ".lock")
    fallback_dir.mkdir(parents=True, exist_ok=True)
    return fallback_dir / "store.lock"


def _flat(params: dict[str, Any], prefix: str = "") -> dict[str, str]:
    """Flatten nested dicts to ``a.b`` keys; values as strings (MLflow limit: 6000 chars)."""
    out: dict[str, str] = {}
    for key, value in params.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(_flat(value, name + "."))
        else:
            out[name] = str(value)[:6000]
    return out


class Tracker:
    """One MLflow run at a time in a local store.

    Args:
        tracking_uri: MLflow backend URI (default :func:`default_tracking_uri`).
        experiment: experiment name, created with artifacts under ``<state>/mlflow/artifacts``.
    """

    def __init__(self, tracking_uri: str | None = None, experiment: str = DEFAULT_EXPERIMENT) -> None:
        from filelock import FileLock
        from mlflow.tracking import MlflowClient

        from pipeline.paths import mlflow_dir

        self.tracking_uri = tracking_uri or default_tracking_uri()
        # Creating a fresh store (schema migrations) and the experiment are not safe when several
        # processes do it at once ("table already exists", "duplicate column name"): do both under a
        # lock file next to the store (later opens take it only for these two quick calls).
        with FileLock(str(_lock_path(self.tracking_uri, mlflow_dir())), timeout=STORE_LOCK_TIMEOUT_S):
            self.client = MlflowClient(tracking_uri=self.tracking_uri)
            found = self.client.get_experiment_by_name(experiment)  # creates the tables when fresh
            if found is None:
                artifacts = (mlflow_dir() / "artifacts").as_uri()
                self.experiment_id = self.client.create_experiment(experiment, artifact_location=artifacts)
            else:
                self.experiment_id = found.experiment_id
        self.run_id: str | None = None

    def start(self, run_name: str, run_id: str | None = None, tags: dict[str, str] | None = None) -> str:
        """Start a new run, or reopen ``run_id`` (resume). Returns the run id."""
        if run_id:
            self.client.update_run(run_id, status="RUNNING")
            self.run_id = run_id
        else:
            run = self.client.create_run(self.experiment_id, run_name=run_name, tags=tags or {})
            self.run_id = run.info.run_id
        return self.run_id

    def _need_run(self) -> str:
        if self.run_id is None:
            raise RuntimeError("Tracker: no active run; call start() first")
        return self.run_id

    def log_params(self, params: dict[str, Any]) -> None:
        """Log (nested) params once; params already logged with the same value are skipped."""
        from mlflow.entities import Param

        run_id = self._need_run()
        existing = self.client.get_run(run_id).data.params
        flat = {k: v for k, v in _flat(params).items() if existing.get(k) != v}
        items = [Param(k, v) for k, v in flat.items() if k not in existing]
        for i in range(0, len(items), 100):
            self.client.log_batch(run_id, params=items[i : i + 100])

    def log_metrics(self, metrics: Mapping[str, Any], step: int) -> None:
        """Log numeric metrics at ``step`` in one batch (non-numeric values are skipped).

        Asynchronous, so training steps never wait on the store; :meth:`end` flushes.
        """
        from mlflow.entities import Metric

        run_id = self._need_run()
        now = int(time.time() * 1000)
        items = [Metric(k, float(v), now, step) for k, v in metrics.items()
                 if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if items:
            self.client.log_batch(run_id, metrics=items, synchronous=False)

    def set_tags(self, tags: dict[str, Any]) -> None:
        """Set run tags (stringified)."""
        run_id = self._need_run()
        for key, value in tags.items():
            self.client.set_tag(run_id, key, str(value))

    def log_artifacts(self, local_dir: Path, artifact_path: str) -> None:
        """Copy a directory into the run's artifacts under ``artifact_path``."""
        self.client.log_artifacts(self._need_run(), str(local_dir), artifact_path)

    def log_dict(self, data: dict[str, Any], name: str) -> None:
        """Store a dict as a JSON artifact file ``name``."""
        self.client.log_dict(self._need_run(), data, name)

    def end(self, status: str = "FINISHED", message: str | None = None) -> None:
        """Terminate the run (``FINISHED``, ``FAILED`` or ``KILLED``) with an end time.

        Args:
            status: the MLflow run status.
            message: why it ended early: stored as tag ``error`` (FAILED) or ``interrupted`` (KILLED).
        """
        if self.run_id is not None:
            if message:
                key = "error" if status == "FAILED" else "interrupted"
                self.client.set_tag(self.run_id, key, message[:MAX_TAG_CHARS])
            # flush *this* client's store (mlflow.flush_async_logging() would open the fluent
            # API's default store, creating ./mlflow.db)
            self.client._tracking_client.store.flush_async_logging()
            self.client.set_terminated(self.run_id, status=status)
            self.run_id = None


class NullTracker:
    """A tracker that records nothing: the same methods as :class:`Tracker`, no MLflow import.

    Chosen by ``VOX_TRACKING=off`` (:func:`default_tracker`) where MLflow and its SQL store are not
    installed, e.g. the GPU check on a bare CUDA machine (``tools/gpu_check.sh``).
    """

    def __init__(self) -> None:
        self.run_id: str | None = None

    def start(self, run_name: str, run_id: str | None = None, tags: dict[str, str] | None = None) -> str:
        """Open a run that is never stored; returns ``run_id`` or ``"untracked"``."""
        self.run_id = run_id or "untracked"
        return self.run_id

    def log_params(self, params: dict[str, Any]) -> None:
        """Drop the params."""

    def log_metrics(self, metrics: Mapping[str, Any], step: int) -> None:
        """Drop the metrics."""

    def set_tags(self, tags: dict[str, Any]) -> None:
        """Drop the tags."""

    def log_artifacts(self, local_dir: Path, artifact_path: str) -> None:
        """Drop the artifacts."""

    def log_dict(self, data: dict[str, Any], name: str) -> None:
        """Drop the dict."""

    def end(self, status: str = "FINISHED", message: str | None = None) -> None:
        """Close the run."""
        self.run_id = None


def default_tracker() -> Tracker | NullTracker:
    """The tracker a stage uses when none is passed: :class:`NullTracker` when ``VOX_TRACKING=off``,
    else a :class:`Tracker` on the local store.

    Raises:
        PipelineError: ``VOX_TRACKING`` is set to something other than ``on`` or ``off``.
    """
    import os

    from pipeline.errors import PipelineError

    switch = os.environ.get("VOX_TRACKING", "on").strip().lower()
    if switch not in ("on", "off"):
        raise PipelineError(f"environment variable VOX_TRACKING={switch!r}: use on or off")
    return NullTracker() if switch == "off" else Tracker()
