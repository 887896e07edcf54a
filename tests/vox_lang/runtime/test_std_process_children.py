"""No process a run starts outlives it: a ``std.process`` command past the time limit is killed
with everything it started (its process group), and ``spawn_background`` processes are killed
when the run ends, whether it ends normally, by a fault, by ``process.exit`` or by R0010."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from vox_lang.runtime.children import Children, kill_group
from vox_lang.runtime.limits import RunConfig
from vox_lang.runtime.runner import run_source

pytestmark = pytest.mark.skipif(
    os.name != "posix" or shutil.which("sh") is None or shutil.which("sleep") is None,
    reason="needs POSIX process groups, sh and sleep",
)

IMPORT = "import std.process\n"
#: a shell that starts a grandchild, writes its pid, and waits for it
_GRANDCHILD = 'sleep 30 & echo $! > {pidfile}; wait'


def _config(timeout_s: float) -> RunConfig:
    return RunConfig(capabilities=frozenset({"process"}), timeout_s=timeout_s)


def _alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie waiting for its reaper counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state != "Z"


def _gone_within(pid: int, seconds: float = 3.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return not _alive(pid)


def _pid_from(path: Path) -> int:
    text = path.read_text().strip()
    assert text, f"{path} is empty: the shell never started its grandchild"
    return int(text)


def _wait_for(pidfile: Path) -> str:
    """A Vox statement that blocks until ``pidfile`` holds a pid (through the process capability)."""
    return f'process.run("sh", ["-c", "while [ ! -s {pidfile} ]; do sleep 0.01; done"])\n'


def test_a_command_past_the_time_limit_is_killed_with_its_children(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    cmd = _GRANDCHILD.format(pidfile=pidfile)
    start = time.monotonic()
    result = run_source(IMPORT + f'print(process.run("sh", ["-c", "{cmd}"]))\n', config=_config(1.0))
    assert time.monotonic() - start < 4.0
    assert result.status in ("ok", "runtime_error")
    if result.status == "runtime_error":
        assert result.fault is not None and result.fault.code == "R0010"
    else:
        assert "timed out" in result.output
    assert _gone_within(_pid_from(pidfile))


def test_a_finished_command_leaves_nothing_in_the_background(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    cmd = f"sleep 30 > /dev/null 2>&1 & echo $! > {pidfile}"
    result = run_source(IMPORT + f'print(process.run("sh", ["-c", "{cmd}"]))\nprint("after")\n', config=_config(5.0))
    assert result.status == "ok", result.fault or result.message
    assert result.output.endswith("after\n")
    assert _gone_within(_pid_from(pidfile))


@pytest.mark.parametrize(
    ("tail", "status"),
    [
        ('print("done")\n', "ok"),
        ("let n = 0\nassert(n > 1)\n", "runtime_error"),
        ("process.exit(4)\n", "ok"),
        ("let mut i = 0\nwhile true {\n  i += 1\n}\n", "runtime_error"),
    ],
    ids=["normal", "fault", "exit", "timeout"],
)
def test_background_processes_are_killed_when_the_run_ends(tmp_path: Path, tail: str, status: str) -> None:
    pidfile = tmp_path / "pid"
    cmd = _GRANDCHILD.format(pidfile=pidfile)
    text = (IMPORT
            + f'match process.spawn_background("sh", ["-c", "{cmd}"]) {{\n'
            + '  Ok(pid) -> print(str(pid))\n  Error(e) -> print("error: " + e)\n}\n'
            + _wait_for(pidfile) + tail)
    result = run_source(text, config=_config(1.5))
    assert result.status == status, result.fault or result.message
    shell = int(result.output.splitlines()[0])
    grandchild = _pid_from(pidfile)
    assert _gone_within(shell)
    assert _gone_within(grandchild)


def test_children_refuse_new_processes_once_the_run_ended() -> None:
    children = Children()
    proc = children.popen(["sleep", "30"])
    assert len(children) == 1
    children.kill_all()
    assert proc.returncode is not None
    assert len(children) == 0
    with pytest.raises(OSError, match="the run has ended"):
        children.popen(["sleep", "30"])
    children.kill_all()  # idempotent


def test_kill_group_ignores_a_group_that_is_gone() -> None:
    proc = subprocess.Popen(["sh", "-c", "exit 0"], start_new_session=True)
    proc.wait()
    kill_group(proc)  # no ProcessLookupError
