"""Run-directory locks and export names under real concurrency (two processes at once)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from pipeline.errors import TrainingError
from pipeline.run_lock import run_lock

HOLD = """
import sys, time
from pathlib import Path
from pipeline.run_lock import run_lock
with run_lock(Path(sys.argv[1]), "training"):
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
"""


def _holder(directory: Path, seconds: float) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(directory), str(seconds)], stdout=subprocess.PIPE,
                            text=True, cwd=Path(__file__).resolve().parents[2])
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def test_a_second_runner_fails_with_a_clear_message(tmp_path: Path) -> None:
    proc = _holder(tmp_path / "run", 30)
    try:
        with pytest.raises(TrainingError, match=r"training: .*run is in use by pid \d+ \(training\) \(waited 0.2 s\)"):
            with run_lock(tmp_path / "run", "training", timeout=0.2):
                pass
    finally:
        proc.kill()
        proc.wait()
    with run_lock(tmp_path / "run", "training", timeout=5):  # a killed holder leaves no stale lock
        pass


def test_a_second_runner_waits_for_the_first(tmp_path: Path) -> None:
    proc = _holder(tmp_path / "run", 0.8)
    start = time.perf_counter()
    with run_lock(tmp_path / "run", "export", timeout=30):
        waited = time.perf_counter() - start
    assert waited > 0.5  # got in only after the first one released it (it holds it 0.8 s)
    proc.wait()


EXPORT = """
import sys
from pathlib import Path
from pipeline.paths import new_export_dir
names = []
for _ in range(int(sys.argv[2])):
    final, staging = new_export_dir(Path(sys.argv[1]), "vox-mens-tiny")
    (staging / "weights").write_text("x")
    staging.rename(final)
    names.append(final.name)
print("\\n".join(names))
"""


def test_concurrent_exports_get_distinct_names_and_leave_no_temp_dirs(tmp_path: Path) -> None:
    procs = [subprocess.Popen([sys.executable, "-c", EXPORT, str(tmp_path), "20"], stdout=subprocess.PIPE, text=True,
                              cwd=Path(__file__).resolve().parents[2]) for _ in range(2)]
    names = [n for p in procs for n in p.communicate(timeout=120)[0].split()]
    assert all(p.returncode == 0 for p in procs)
    assert len(names) == 40 and len(set(names)) == 40
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(names)  # no stale .tmp dirs
