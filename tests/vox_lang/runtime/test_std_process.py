"""``std.process`` reads a child's output under the same cap as file and HTTP reads (new-user
tester): a child that writes more than ``MAX_READ`` bytes is killed and the call is ``Error``
instead of handing the program (and the host's memory) an unbounded string."""

from __future__ import annotations

import shutil

import pytest

from vox_lang.runtime import stdlib_host
from vox_lang.runtime.limits import RunConfig
from vox_lang.runtime.runner import run_source

IMPORT = "import std.process\n"
PROCESS = RunConfig(capabilities=frozenset({"process"}), timeout_s=20.0)

pytestmark = pytest.mark.skipif(shutil.which("sh") is None, reason="needs a POSIX shell")


def _program(call: str) -> str:
    return f"match {call} {{\n  Ok(o) -> print(o)\n  Error(e) -> print(\"error: \" + e)\n}}\n"


def test_output_past_the_read_cap_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stdlib_host, "MAX_READ", 1000)
    result = run_source(IMPORT + _program('process.run("sh", ["-c", "yes | head -c 5000"])'), config=PROCESS)
    assert result.status == "ok", result.message or result.fault
    assert result.output == "error: sh: output larger than 1000 bytes\n"


def test_output_under_the_cap_keeps_run_semantics() -> None:
    text = (IMPORT + _program('process.run("sh", ["-c", "printf \'a\\\\r\\\\nb\'; echo e >&2"])')
            + 'match process.run_capture("sh", ["-c", "echo out; echo err >&2; exit 3"]) {\n'
            + '  Ok(o) -> print(str(o.exit) + "|" + o.stdout + "|" + o.stderr)\n'
            + '  Error(e) -> print(e)\n}\n'
            + _program('process.run("sh", ["-c", "exit 4"])'))
    result = run_source(text, config=PROCESS)
    assert result.status == "ok", result.message or result.fault
    assert result.output == "a\nb\n3|out\n|err\n\nerror: sh exited with status 4\n"


@pytest.mark.parametrize("last", [True, False], ids=["last statement", "more follows"])
def test_a_child_past_the_time_limit_ends_the_run_with_r0010(last: bool) -> None:
    """The wall-clock limit ends the run (spec §11) even when the call that outlived it is the
    program's last statement (new-user tester: it used to print the child's timeout as an
    ``Error`` and exit 0)."""
    config = RunConfig(capabilities=frozenset({"process"}), timeout_s=1.0)
    text = IMPORT + _program('process.run("sleep", ["30"])') + ("" if last else 'print("after")\n')
    result = run_source(text, config=config)
    assert result.status == "runtime_error", (result.status, result.output)
    assert result.fault is not None and result.fault.code == "R0010"
    assert result.output == "" and result.exit_code == 3
