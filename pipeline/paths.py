"""Where the pipeline keeps its state and artifacts (one state directory, ignored by git).

The state directory holds ``dagster/`` (DAGSTER_HOME), ``mlflow/`` (tracking store) and
``artifacts/<asset>/``. It is resolved here and nowhere else: an explicit ``root`` argument,
else the root set by :func:`use_state_dir` (the Dagster resource and the stage runner set it for
the duration of a stage), else ``$VOX_STATE_DIR``, else ``<project>/.vox-state``.

Exports live in ``artifacts/exported_model/<name>/`` with ``latest.json`` pointing at the newest
export that passed every gate. ``serving`` may import this module to find exported models;
nothing else of ``pipeline``.
"""

from __future__ import annotations

import json
import os
import secrets
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pipeline import atomic

PROJECT_ROOT = Path(__file__).resolve().parents[1]
#: ``latest.json`` under :func:`exports_dir`: ``{"path", "eval_passed", "model_name", "created", "pass_at_1"}``
POINTER = "latest.json"
#: written into each export dir by :func:`publish_export`: ``{"eval_passed", "verified", "passed"}``
GATES_FILE = "gates.json"

_ROOT: ContextVar[Path | None] = ContextVar("vox_state_root", default=None)


def state_dir(root: str | os.PathLike[str] | None = None, *, create: bool = True) -> Path:
    """The state directory, resolved as the module docstring says (absolute).

    Args:
        root: an explicit state directory (wins over everything else).
        create: create the directory if it is missing.
    """
    chosen = root or _ROOT.get() or os.environ.get("VOX_STATE_DIR") or PROJECT_ROOT / ".vox-state"
    path = Path(chosen).expanduser().resolve()
    if create:
        path.mkdir(parents=True, exist_ok=True)
    return path


@contextmanager
def use_state_dir(root: str | os.PathLike[str] | None) -> Iterator[Path]:
    """Within the block, :func:`state_dir` without ``root`` resolves to ``root`` (``None``: unchanged).

    The Dagster resource's ``state_dir`` reaches code that asks :mod:`pipeline.paths` (the MLflow
    store, the export pointer) through this, not through the environment.
    """
    token = _ROOT.set(Path(root).expanduser().resolve() if root else _ROOT.get())
    try:
        yield state_dir()
    finally:
        _ROOT.reset(token)


def artifacts_dir(name: str, root: str | os.PathLike[str] | None = None, *, create: bool = True) -> Path:
    """``<state>/artifacts/<name>/`` (one folder per asset), created unless ``create=False``."""
    path = state_dir(root, create=create) / "artifacts" / name
    if create:
        path.mkdir(parents=True, exist_ok=True)
    return path


def mlflow_dir(root: str | os.PathLike[str] | None = None) -> Path:
    """``<state>/mlflow/``: the local MLflow tracking store (sqlite ``mlflow.db`` + artifacts)."""
    path = state_dir(root) / "mlflow"
    path.mkdir(parents=True, exist_ok=True)
    return path


def exports_dir(root: str | os.PathLike[str] | None = None, *, create: bool = True) -> Path:
    """``<state>/artifacts/exported_model/``: one subfolder per export, plus ``latest.json``."""
    return artifacts_dir("exported_model", root, create=create)


def new_export_dir(out_root: Path, model_name: str, created: datetime | None = None) -> tuple[Path, Path]:
    """A collision-free final name for a new export and a private staging directory for it.

    The name is ``<model_name>-<UTC time to the microsecond>-<6 random hex>``, so two exports
    started in the same second (or microsecond) never share a name; the staging directory is
    created by ``mkdtemp`` (unique, hidden) in ``out_root`` so it can be renamed into place.

    Returns:
        ``(final_dir, staging_dir)``; ``final_dir`` does not exist yet.
    """
    created = created or datetime.now(UTC)
    name = f"{model_name}-{created.strftime('%Y%m%dT%H%M%S%f')}-{secrets.token_hex(3)}"
    out_root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{name}.", suffix=".tmp", dir=out_root))
    staging.chmod(0o777 & ~atomic.current_umask())  # mkdtemp makes it 0700; an export is read by other users too
    return out_root / name, staging


def publish_export(export_dir: Path, card: dict[str, Any], verified: bool) -> bool:
    """Record an export's gates and, only if it passed every gate, point ``latest.json`` at it.

    Args:
        export_dir: the finished export (``<exports_dir>/<name>``).
        card: its ``vox_mens.json`` content (``eval_passed``, ``model_name``, ``created``, ``pass_at_1``).
        verified: the round-trip verification passed (or was not asked for).

    Returns:
        Whether the pointer now names ``export_dir``. A gate-failed export is kept on disk (with
        ``gates.json`` saying why) but never becomes ``latest.json``; a newer passing export
        already named by the pointer is not replaced by an older one.
    """
    eval_passed = bool(card.get("eval_passed"))
    gates = {"eval_passed": eval_passed, "verified": bool(verified), "passed": eval_passed and bool(verified)}
    atomic.write_json(export_dir / GATES_FILE, gates)
    if not gates["passed"]:
        return False
    pointer = export_dir.parent / POINTER
    current = _read_json(pointer)
    if current and current.get("eval_passed") and current.get("path") and Path(current["path"]).is_dir() \
            and str(current.get("created", "")) > str(card.get("created", "")):
        return False
    atomic.write_json(pointer, {"path": str(export_dir), "eval_passed": True, "model_name": card.get("model_name"),
                                "created": card.get("created"), "pass_at_1": card.get("pass_at_1")})
    return True


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _exports(root: Path) -> list[tuple[str, Path, bool]]:
    """``(created, dir, passed every gate)`` for each finished export under ``root``, oldest first."""
    found = []
    for d in root.iterdir() if root.is_dir() else ():
        card = _read_json(d / "vox_mens.json") if d.is_dir() and not d.name.startswith(".") else None
        if card is None:
            continue
        gates = _read_json(d / GATES_FILE) or {}
        found.append((str(card.get("created", "")), d, bool(gates.get("passed"))))
    return sorted(found, key=lambda t: (t[0], t[1].name))


def latest_export(require_passed: bool = True, root: str | os.PathLike[str] | None = None) -> Path | None:
    """The export to serve by default, or ``None``.

    With ``require_passed`` (what ``vox serve`` uses): the directory ``latest.json`` names if it
    passed its eval gate, else the newest export whose ``gates.json`` says it passed every gate
    (a stale or missing pointer falls back to what is on disk). Without it: the newest export
    of any outcome (used to explain why nothing passing was found).
    """
    out = exports_dir(root, create=False)
    info = _read_json(out / POINTER)
    pointed = Path(info["path"]) if info and info.get("path") else None
    if require_passed:
        if info and info.get("eval_passed", False) and pointed is not None and pointed.is_dir():
            return pointed
        passing = [d for _, d, ok in _exports(out) if ok]
        return passing[-1] if passing else None
    every = [d for _, d, _ in _exports(out)]
    if every:
        return every[-1]
    return pointed if pointed is not None and pointed.is_dir() else None


def main() -> int:
    """``python -m pipeline.paths``: print the export ``vox serve`` would serve (the latest that
    passed its gates) for shell use (``EXPORT=$(...)``), or say on stderr why there is none and
    return 1, so that a script stops there instead of serving a path named ``None``.

    When the last eval failed the release gate (so ``make run`` would stop there again), the
    message says so and gives the command that serves its adapter anyway
    (:func:`pipeline.stages.gate_failure`); otherwise it points at ``make run``."""
    import sys

    from pipeline.stages import gate_failure  # here only: serving imports this module, never the stages

    latest = latest_export(require_passed=True)
    if latest is not None:
        print(latest)
        return 0
    failed = latest_export(require_passed=False)
    reason = (f"the latest export {failed} did not pass its eval gate" if failed is not None
              else f"there is no exported model under {exports_dir(create=False)}")
    advice = gate_failure() or "run the pipeline (`make run`) to export one"
    print(f"python -m pipeline.paths: {reason}; {advice}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
