"""A real SIGTERM or SIGINT during training: the MLflow run ends KILLED with an end time, ``run.json``
says why, and the command prints one line (no traceback) and exits 128 + signal number."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

#: trains slowly (one step per ~0.3 s) through the CLI's error handling, printing each step
WORKER = """
import sys, time
from pathlib import Path
from transformers import TrainerCallback
from pipeline.sample_corpus import MICRO_RECIPE, sample_rows
from pipeline.train import TrainConfig, make_sft_data, train
from pipeline.train_cli import run_cli

class Slow(TrainerCallback):
    def on_step_end(self, args, state, control, **kwargs):
        print(f"STEP {state.global_step}", flush=True)
        time.sleep(0.3)

cfg = TrainConfig(**{**MICRO_RECIPE["train"], "base_model": sys.argv[1], "max_steps": 400, "save_steps": 400,
                     "eval_steps": 400})
rows = sample_rows(80)
data = make_sft_data([r for r in rows if r["split"] == "train"], [r for r in rows if r["split"] == "heldout"], cfg)
sys.exit(run_cli(lambda: train(cfg, data, Path(sys.argv[2]), callbacks=[Slow()])))
"""



@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_ends_the_run_killed_with_one_line(micro_base: str, tmp_path: Path, sig: signal.Signals) -> None:
    from mlflow.tracking import MlflowClient

    from pipeline.tracking import default_tracking_uri

    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.Popen([sys.executable, "-c", WORKER, micro_base, str(tmp_path)], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + 240
        for line in proc.stdout:  # wait until training has really started
            if line.startswith("STEP 2"):
                break
            assert time.monotonic() < deadline
        else:
            pytest.fail(f"training did not start: {proc.communicate()[1][-3000:]}")
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + sig, err[-3000:]
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err[-3000:]
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"interrupted: stopped by {sig.name} at step ") and "resume" in last
    state = json.loads(next(tmp_path.glob("runs/*/run.json")).read_text())
    assert state["status"] == "killed" and state["ended"] and sig.name in state["message"] and state["step"] >= 2
    run = MlflowClient(default_tracking_uri()).get_run(state["mlflow_run_id"])
    assert run.info.status == "KILLED" and run.info.end_time is not None
    assert run.data.tags["interrupted"] == state["message"]
