"""The Dagster instance settings ``make run`` / ``make ui`` use, and cleanup of runs whose process died.

``python -m assets.instance_config $DAGSTER_HOME/dagster.yaml`` writes :data:`INSTANCE_CONFIG`
(the Makefile does this): telemetry off and run monitoring on, so the daemon under ``make ui``
fails a run that never starts, hangs while cancelling, or outlives ``max_runtime_seconds``.
The default run launcher cannot check a worker's health, so ``make run`` also tags its run with
its pid and host, and :func:`fail_orphaned_runs` (called at the next start) marks a ``STARTED``
run whose process is gone (e.g. SIGKILL) as failed instead of leaving it ``STARTED`` forever.
"""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path
from typing import Any, Final

#: written to ``$DAGSTER_HOME/dagster.yaml``
INSTANCE_CONFIG: Final[dict[str, Any]] = {
    "telemetry": {"enabled": False},
    "run_monitoring": {
        "enabled": True,
        "start_timeout_seconds": 180,  # a launched run whose worker never reports STARTED fails
        "cancel_timeout_seconds": 180,  # a cancel that hangs ends as CANCELED
        "max_runtime_seconds": 6 * 3600,  # cpu-tiny takes ~10 min; a GPU recipe well under 6 h
        "poll_interval_seconds": 60,
    },
}
PID_TAG: Final = "vox/pid"
HOST_TAG: Final = "vox/host"


def write_instance_config(path: Path) -> Path:
    """Write :data:`INSTANCE_CONFIG` as YAML to ``path`` (parents created); returns ``path``."""
    import yaml

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("# written by `python -m assets.instance_config` (Makefile); edits are overwritten\n"
                    + yaml.safe_dump(INSTANCE_CONFIG, sort_keys=False), encoding="utf-8")
    return path


def run_tags() -> dict[str, str]:
    """Tags that let :func:`fail_orphaned_runs` tell whether this process still runs the run."""
    return {PID_TAG: str(os.getpid()), HOST_TAG: socket.gethostname()}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def fail_orphaned_runs(instance: Any) -> list[str]:
    """Mark ``STARTED`` runs tagged by :func:`run_tags` on this host whose process is gone as failed.

    Returns:
        The run ids marked failed.
    """
    import dagster as dg

    host, marked = socket.gethostname(), []
    for record in instance.get_run_records(filters=dg.RunsFilter(statuses=[dg.DagsterRunStatus.STARTED],
                                                                  tags={HOST_TAG: host})):
        run = record.dagster_run
        pid = run.tags.get(PID_TAG, "")
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            instance.report_run_failed(run, f"the process running it (pid {pid}) is gone (killed?)")
            marked.append(run.run_id)
    return marked


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m assets.instance_config PATH/dagster.yaml")
    print(f"wrote {write_instance_config(Path(sys.argv[1]))}")
