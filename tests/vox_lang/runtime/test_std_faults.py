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
