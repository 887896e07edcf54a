"""Runtime std faults found by the new-user tester (fault D): ``json.parse`` keeps each member's
JSON text as written (spec §10 U5), ``fs.read`` of non-UTF-8 bytes is ``Error``, ``log.*`` goes
to stderr, not into the program's output."""

from __future__ import annotations

from pathlib import Path

import pytest

from vox_lang.runtime.limits import RunConfig
from vox_lang.runtime.runner import run_source
from vox_lang.runtime.stdlib_pure import json_object
from vox_lang.runtime.values import Err, Ok


def test_json_parse_keeps_member_text_as_written() -> None:
    got = json_object('{ "a" : [1,2] , "b":"x\\ny", "c": {"k" :  1}, "d": 1.50, "e":true,"a":  null }')
    assert got == Ok({"a": "null", "b": "x\ny", "c": '{"k" :  1}', "d": "1.50", "e": "true"})
    assert json_object("{}") == Ok({})
    assert type(json_object("[1]")) is Err and type(json_object('{"a": 1} x')) is Err


def test_json_parse_in_a_program() -> None:
    text = ('import std.json\nlet m = json.parse("{\\"xs\\": [1,2]}")\n'
            'match m {\n  Ok(v) -> print(v["xs"])\n  Error(e) -> print(e)\n}\n')
    result = run_source(text)
    assert result.status == "ok", result.message or result.fault
    assert result.output == "[1,2]\n"


def test_fs_read_of_non_utf8_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "bin.txt"
    path.write_bytes(b"ok \xff\xfe bad")
    text = f'import std.fs\nmatch fs.read("{path}") {{\n  Ok(s) -> print("ok")\n  Error(e) -> print(e)\n}}\n'
    result = run_source(text, config=RunConfig(capabilities=frozenset({"fs"})))
    assert result.status == "ok", result.message or result.fault
    assert result.output == f"{path} is not UTF-8 text (byte 0xFF at 3)\n"


def test_log_goes_to_stderr_not_program_output(capsys: pytest.CaptureFixture[str]) -> None:
    result = run_source('import std.log\nlog.info("hello")\nprint("out")\n')
    assert result.status == "ok" and result.output == "out\n"
    assert capsys.readouterr().err == "[info] hello\n"
    lines: list[str] = []
    run_source('import std.log\nlog.warn("w")\n', config=RunConfig(log=lines.append))
    assert lines == ["[warn] w\n"]


@pytest.mark.parametrize(("n", "status"), [(0, 0), (7, 7), (255, 255), (256, 1), (300, 1), (-1, 1)])
def test_process_exit_outside_0_255_is_status_1_with_a_note(n: int, status: int) -> None:
    text = f"import std.process\nprint(\"a\")\nprocess.exit({n})\n"
    result = run_source(text, config=RunConfig(capabilities=frozenset({"process"})))
    assert result.exit_code == status and result.output == "a\n"
    if status == n:
        assert result.message == ""
    else:
        assert result.message == f"3:1: process.exit({n}): an exit status is 0 to 255; exiting with 1"


def test_vox_run_shows_the_exit_note(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from serving.cli import app

    path = tmp_path / "x.vox"
    path.write_text("import std.process\nprocess.exit(256)\n")
    result = CliRunner().invoke(app, ["run", "--allow", "process", str(path)])
    assert result.exit_code == 1
    assert result.stderr == f"vox run: {path}: 2:1: process.exit(256): an exit status is 0 to 255; exiting with 1\n"
