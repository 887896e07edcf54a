"""Where the pipeline keeps its state and artifacts (one state directory, ignored by git).

``VOX_STATE_DIR`` (default ``<project>/.vox-state``) holds ``dagster/`` (DAGSTER_HOME),
``mlflow/`` (tracking store) and ``artifacts/<asset>/``. ``serving`` may import this module
to find exported models; nothing else of ``pipeline``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[1]


def state_dir() -> Path:
    """The state directory (``$VOX_STATE_DIR`` or ``<project>/.vox-state``), created if missing."""
    path = Path(os.environ.get("VOX_STATE_DIR") or PROJECT_ROOT / ".vox-state").resolve()
    path.mkdir(parents=True, exist_ok=True)
    return path


def artifacts_dir(name: str) -> Path:
    """``<state>/artifacts/<name>/``, created if missing (one folder per asset)."""
    path = state_dir() / "artifacts" / name
    path.mkdir(parents=True, exist_ok=True)
    return path


def mlflow_dir() -> Path:
    """``<state>/mlflow/``: the local MLflow tracking store (sqlite ``mlflow.db`` + artifacts)."""
    path = state_dir() / "mlflow"
    path.mkdir(parents=True, exist_ok=True)
    return path


def exports_dir() -> Path:
    """``<state>/artifacts/exported_model/``: one subfolder per export, plus ``latest.json``."""
    return artifacts_dir("exported_model")


def latest_export(require_passed: bool = True) -> Path | None:
    """The newest exported model directory, or ``None`` if there is none.

    Reads ``exports_dir()/latest.json`` (``{"path": ..., "eval_passed": bool, ...}``), written
    by the export stage. With ``require_passed`` an export whose eval gate failed is skipped.
    """
    pointer = exports_dir() / "latest.json"
    if not pointer.is_file():
        return None
    try:
        info = json.loads(pointer.read_text())
    except (OSError, ValueError):
        return None
    if require_passed and not info.get("eval_passed", False):
        return None
    path = Path(info.get("path", ""))
    return path if path.is_dir() else None
