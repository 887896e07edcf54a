"""MLflow tracker: a fresh store opened by several processes at once is created once, safely."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

PROCESSES = 4

#: opens the store only once every process is ready, so the first opens really are concurrent
WORKER = """
import sys, time
from pathlib import Path
import mlflow.tracking  # the slow import happens before the barrier
from pipeline.tracking import Tracker
go, ready = Path(sys.argv[1]), Path(sys.argv[2])
ready.touch()
while not go.exists():
    time.sleep(0.005)
tracker = Tracker()
tracker.start("race")
tracker.end()
print("ok")
"""


def test_four_processes_open_a_fresh_store_at_once(tmp_path: Path) -> None:
    from mlflow.tracking import MlflowClient

    state = tmp_path / "state"
    env = {**os.environ, "VOX_STATE_DIR": str(state), "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    go = tmp_path / "go"
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, str(go), str(tmp_path / f"ready{i}")], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in range(PROCESSES)]
    try:
        deadline = time.monotonic() + 120
        while not all((tmp_path / f"ready{i}").exists() for i in range(PROCESSES)):
            assert time.monotonic() < deadline, "workers did not start"
            assert all(p.poll() is None for p in procs), [p.communicate() for p in procs]
            time.sleep(0.05)
        assert not (state / "mlflow" / "mlflow.db").exists()  # the store is still fresh
        go.touch()
        outputs = [p.communicate(timeout=120) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    failures = [err[-2000:] for p, (_, err) in zip(procs, outputs) if p.returncode != 0]
    assert not failures, failures
    client = MlflowClient(f"sqlite:///{state / 'mlflow' / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("vox-mens")
    assert experiment is not None
    runs = client.search_runs([experiment.experiment_id])
    assert len(runs) == PROCESSES and {r.info.status for r in runs} == {"FINISHED"}
