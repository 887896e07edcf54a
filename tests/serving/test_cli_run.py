"""`vox run` and `vox test` (spec §11): exit codes 0/1/2/3, output on stdout, runtime errors with
the Vox stack on stderr in the three formats, capabilities by --allow, one line per test."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import vox_lang
from serving.cli import app

GOOD = 'fn double(x: int) to int {\n  ret x * 2\n}\nprint(double(21))\n'
FAULT = "fn ratio(a: int, b: int) to int {\n  ret a / b\n}\nprint(ratio(1, 0))\n"
TESTS = ("fn add(a: int, b: int) to int {\n  ret a + b\n}\n@test\nfn t_ok() {\n  assert(add(1, 1) == 2)\n}\n"
         "@test\nfn t_bad() {\n  assert(add(1, 1) == 3)\n}\n")


@pytest.fixture()
def runner() -> CliRunner:
    return CliRunner()


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_binary_files_are_refused_by_run_and_test(runner: CliRunner, tmp_path: Path) -> None:
    path = tmp_path / "blob.bin"
    path.write_bytes(b"print(1)\n\x00\xff" * 1000)
    for cmd in ("run", "test"):
        res = runner.invoke(app, [cmd, str(path)])
        assert res.exit_code == 2
        assert res.stderr == f"vox {cmd}: cannot read {path}: binary file (NUL byte at offset 9), not Vox source\n"


def test_run_check_and_test_word_an_unreadable_input_alike(runner: CliRunner, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """`vox run DIR` said "not a regular file" where `vox check DIR` said "is a directory, not a regular
    file (use `-` ...)", and a binary file "cannot check" in all three: one helper words them now."""
    (tmp_path / "dir.vox").mkdir()
    (tmp_path / "blob.vox").write_bytes(b"print(1)\n\x00")
    write(tmp_path, "secret.vox", GOOD)
    import builtins

    import serving.commands.inputs

    def deny(name: str, *args: Any, **kwargs: Any) -> Any:
        if str(name).endswith("secret.vox"):
            raise PermissionError(13, "Permission denied", str(name))
        return builtins.open(name, *args, **kwargs)

    monkeypatch.setattr(serving.commands.inputs, "open", deny, raising=False)  # chmod 000 does not stop root
    (tmp_path / "gone.vox").symlink_to("nowhere.vox")  # a dangling link: named as such
    why = {"missing.vox": "no such file", "dir.vox": "is a directory, not a regular file",
           "blob.vox": "binary file (NUL byte at offset 9), not Vox source", "secret.vox": "Permission denied",
           "gone.vox": "broken symbolic link (to nowhere.vox, which does not exist)"}
    for name, reason in why.items():
        path = str(tmp_path / name)
        for cmd in ("check", "run", "test"):
            # check and test walk a directory (an empty one is named as such); run takes one file
            said = (f"vox {cmd}: no .vox files in {path} (hidden files and directories and symlinked directories "
                    "are skipped)" if name == "dir.vox" and cmd != "run"
                    else f"vox {cmd}: cannot read {path}: {reason}")
            res = runner.invoke(app, [cmd, path])
            assert (res.exit_code, res.stderr) == (2, f"{said}\n"), (cmd, name)
    for cmd in ("check", "run", "test"):  # an empty argument (a shell variable that was not set)
        res = runner.invoke(app, [cmd, ""])
        assert (res.exit_code, res.stderr) == (2, f"vox {cmd}: cannot read '': an empty path names no file\n")
    every = [str(tmp_path / name) for name in why if name != "dir.vox"]
    for cmd in ("check", "test"):  # every unreadable argument is named, not only the first
        res = runner.invoke(app, [cmd, *every])
        assert res.exit_code == 2 and res.stderr.count(f"vox {cmd}: cannot read ") == 4
        assert runner.invoke(app, [cmd, "-", "-"], input="").stderr == (
            f"vox {cmd}: `-` (standard input) may be given only once\n")


def test_compile_errors_are_capped_in_human_output(runner: CliRunner, tmp_path: Path) -> None:
    res = runner.invoke(app, ["run", write(tmp_path, "bad.vox", "let x = 3 $ 4\n" * 80)])
    assert res.exit_code == 1
    assert "… 30 more diagnostics not shown (--format json lists all)" in res.stderr


def test_run_prints_output_and_exits_0(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(app, ["run", write(tmp_path, "a.vox", GOOD)])
    assert result.exit_code == 0 and result.stdout == "42\n"


def test_runtime_error_exits_3_with_stack(runner: CliRunner, tmp_path: Path) -> None:
    path = write(tmp_path, "r.vox", FAULT)
    human = runner.invoke(app, ["run", path])
    assert human.exit_code == 3
    assert "r.vox:2:7: runtime error[R0003]: division by zero" in human.stderr
    assert "  in fn ratio (Line 2, Col 7)\n  in script (Line 4, Col 7)" in human.stderr
    repair = runner.invoke(app, ["run", path, "--format", "repair"])
    assert repair.stderr.splitlines()[0] == "Line 2, Col 7: runtime error[R0003] division by zero"
    data = json.loads(runner.invoke(app, ["run", path, "--format", "json"]).stderr)
    assert data[0]["severity"] == "runtime" and data[0]["code"] == "R0003"
    assert [f["fn"] for f in data[0]["stack"]] == ["ratio", "script"]


def test_compile_errors_exit_1_and_nothing_runs(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(app, ["run", write(tmp_path, "c.vox", 'print("ran")\nlet z = 1 + "a"\n')])
    assert result.exit_code == 1 and "E0510" in result.stderr and "ran" not in result.stdout


def test_usage_errors_exit_2(runner: CliRunner, tmp_path: Path) -> None:
    assert runner.invoke(app, ["run", str(tmp_path / "missing.vox")]).exit_code == 2
    lib = write(tmp_path, "lib.vox", "fn f() to int {\n  ret 1\n}\n")
    nothing = runner.invoke(app, ["run", lib])
    assert nothing.exit_code == 2 and "nothing to run" in nothing.stderr
    # a main with parameters was reported as "no `fn main()`" (Found by a new-user helper)
    takes = runner.invoke(app, ["run", write(tmp_path, "m.vox", "fn main(x: int, y: int) {\n  print(x)\n}\n")])
    assert takes.exit_code == 2
    assert "`fn main` must take no parameters to be run (it takes `x`, `y`)" in takes.stderr
    bad_allow = runner.invoke(app, ["run", lib, "--allow", "root"])
    assert bad_allow.exit_code == 2 and "unknown capability" in bad_allow.stderr


def test_limits_and_capabilities_are_flags(runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    loop = write(tmp_path, "loop.vox", "let mut n = 0\nwhile true {\n  n += 1\n}\n")
    result = runner.invoke(app, ["run", loop, "--max-steps", "500", "--format", "repair"])
    assert result.exit_code == 3 and "runtime error[R0006]" in result.stderr
    env = write(tmp_path, "env.vox", 'import std.env\nprint(env.get("VOX_CLI_RUN_TEST").unwrap_or("unset"))\n')
    monkeypatch.setenv("VOX_CLI_RUN_TEST", "granted")
    refused = runner.invoke(app, ["run", env, "--format", "repair"])
    assert refused.exit_code == 3 and "runtime error[R0008]" in refused.stderr
    allowed = runner.invoke(app, ["run", env, "--allow", "env"])
    assert allowed.exit_code == 0 and allowed.stdout == "granted\n"


def test_vox_test_prints_one_line_per_test_and_a_summary(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(app, ["test", write(tmp_path, "t.vox", TESTS)])
    lines = result.stdout.splitlines()
    assert result.exit_code == 1
    assert lines[0] == "PASS t_ok"
    assert lines[1] == "FAIL t_bad: Line 10, Col 3: runtime error[R0002] assertion failed"
    assert lines[-1] == "1 passed, 1 failed"
    ok = runner.invoke(app, ["test", write(tmp_path, "ok.vox", TESTS.split("@test\nfn t_bad")[0])])
    assert ok.exit_code == 0 and ok.stdout.splitlines()[-1] == "1 passed, 0 failed"
    data = json.loads(runner.invoke(app, ["test", str(tmp_path / "t.vox"), "--format", "json"]).stdout)
    assert data["passed"] == 1 and data["failed"] == 1 and data["tests"][1]["error"]["code"] == "R0002"
    assert data["not_run"] == []


def test_vox_test_names_the_files_it_could_not_run(runner: CliRunner, tmp_path: Path) -> None:
    """A file with compile errors is not run: the summary says so instead of a bare "0 passed,
    0 failed" that reads like a file without tests (new-user tester)."""
    bad = write(tmp_path, "bad.vox", "fn f( to int {\n")
    ok = write(tmp_path, "ok.vox", TESTS.split("@test\nfn t_bad")[0])
    result = runner.invoke(app, ["test", ok, bad])
    assert result.exit_code == 1
    assert result.stdout.splitlines()[-1] == f"1 passed, 0 failed; not run (compile errors): {bad}"
    data = json.loads(runner.invoke(app, ["test", ok, bad, "--format", "json"]).stdout)
    assert data["passed"] == 1 and data["failed"] == 0
    # "tests" holds test results only; a file not run is under "not_run" with its errors (both were in "tests")
    assert [set(t) for t in data["tests"]] == [{"file", "test", "passed", "error", "output"}]
    assert [n["file"] for n in data["not_run"]] == [bad]
    assert data["not_run"][0]["compile_errors"] and all(d["code"] for d in data["not_run"][0]["compile_errors"])


def test_vox_test_says_which_files_have_no_tests(runner: CliRunner, tmp_path: Path) -> None:
    """A file without a @test function printed a bare "0 passed, 0 failed", as if tests had run."""
    plain = write(tmp_path, "plain.vox", GOOD)
    result = runner.invoke(app, ["test", plain])
    assert result.exit_code == 0  # nothing failed
    assert result.stdout == f"0 passed, 0 failed; no @test functions in: {plain}\n"
    ok = write(tmp_path, "ok.vox", TESTS.split("@test\nfn t_bad")[0])
    bad = write(tmp_path, "bad.vox", "fn f( to int {\n")
    mixed = runner.invoke(app, ["test", ok, plain, bad])
    assert mixed.exit_code == 1
    assert mixed.stdout.splitlines()[-1] == (f"1 passed, 0 failed; not run (compile errors): {bad}; "
                                             f"no @test functions in: {plain}")
    data = json.loads(runner.invoke(app, ["test", ok, plain, "--format", "json"]).stdout)
    assert data["no_tests"] == [plain] and data["passed"] == 1


@pytest.mark.parametrize("value", ["inf", "nan", "1e300", "0"])
def test_timeout_out_of_range_is_a_usage_error(runner: CliRunner, tmp_path: Path, value: str) -> None:
    """`--timeout inf` used to run the program and then fail inside the thread join (internal error, exit 3)."""
    result = runner.invoke(app, ["run", write(tmp_path, "a.vox", GOOD), "--timeout", value])
    assert result.exit_code == 2 and "--timeout must be a positive number" in result.stderr and result.stdout == ""


def test_closed_stdout_stops_the_program_quietly(monkeypatch: pytest.MonkeyPatch) -> None:
    """`vox run f.vox | head -1` used to end in 'internal error in the executor: BrokenPipeError'."""
    import io

    from serving.commands import run as run_cmd
    from vox_lang.runtime.errors import ExitRequest

    class Closed(io.StringIO):
        def write(self, s: str) -> int:
            raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr("sys.stdout", Closed())
    with pytest.raises(ExitRequest) as info:
        run_cmd._write_out("1\n")
    assert info.value.code == 141


def test_failing_test_shows_what_it_printed(runner: CliRunner, tmp_path: Path) -> None:
    """A failing test's own output is shown under its FAIL line (capped), and is in the JSON of every test."""
    text = ('@test\nfn t_loud() {\n  for i in range(0, 45) { print("line " + str(i)) }\n  assert(false)\n}\n'
            '@test\nfn t_quiet_pass() {\n  print("hidden")\n}\n')
    result = runner.invoke(app, ["test", write(tmp_path, "t.vox", text)])
    out = result.stdout.splitlines()
    assert result.exit_code == 1
    at = out.index("  output:")
    assert out[at + 1] == "  | line 0" and out[at + 40] == "  | line 39" and out[at + 41] == "  | … 5 more line(s)"
    assert "hidden" not in result.stdout  # a passing test's output stays captured
    data = json.loads(runner.invoke(app, ["test", str(tmp_path / "t.vox"), "-f", "json"]).stdout)
    assert data["tests"][0]["output"].startswith("line 0\nline 1\n") and data["tests"][1]["output"] == "hidden\n"


def test_show_output_prints_what_passing_tests_printed(runner: CliRunner, tmp_path: Path) -> None:
    """--show-output (cargo test's flag) shows a passing test's output under its PASS line as a
    failing test's is shown; a test that printed nothing gets no block; nothing else changes, and
    without the flag a passing test's output stays captured."""
    text = ('@test\nfn t_loud_pass() {\n  print("shown")\n  print("twice")\n}\n'
            '@test\nfn t_quiet() {\n  assert(true)\n}\n'
            '@test\nfn t_loud_fail() {\n  print("boom")\n  assert(false)\n}\n')
    path = write(tmp_path, "t.vox", text)
    default = runner.invoke(app, ["test", path])
    assert "shown" not in default.stdout and "  | boom" in default.stdout
    shown = runner.invoke(app, ["test", path, "--show-output"])
    assert shown.exit_code == default.exit_code == 1
    out = shown.stdout.splitlines()
    at = out.index("PASS t_loud_pass")
    assert out[at + 1:at + 5] == ["  output:", "  | shown", "  | twice", "PASS t_quiet"]
    assert shown.stdout.replace("  output:\n  | shown\n  | twice\n", "", 1) == default.stdout
    for fmt in ("repair", "json"):  # repair output shows it too; JSON has every test's output anyway
        flagged = runner.invoke(app, ["test", path, "-f", fmt, "--show-output"]).stdout
        plain = runner.invoke(app, ["test", path, "-f", fmt]).stdout
        assert (flagged == plain) is (fmt == "json") and ("  | shown" in flagged) is (fmt == "repair")


def test_every_entry_point_skips_a_leading_byte_order_mark(runner: CliRunner, tmp_path: Path) -> None:
    program = "\ufeff" + TESTS.replace("assert(add(1, 1) == 3)", "assert(add(1, 1) == 2)") + "print(add(1, 2))\n"
    path = write(tmp_path, "bom.vox", program)
    assert vox_lang.check(Path(path).read_bytes()).ok and vox_lang.check(Path(path).read_text("utf-8")).ok
    assert runner.invoke(app, ["check", "--strict", path]).exit_code == 0
    ran = runner.invoke(app, ["run", path])
    assert (ran.exit_code, ran.stdout) == (0, "3\n")
    tested = runner.invoke(app, ["test", path])
    assert tested.exit_code == 0 and tested.stdout.endswith("2 passed, 0 failed\n")


def test_every_entry_point_names_a_byte_order_mark_elsewhere(runner: CliRunner, tmp_path: Path) -> None:
    path = write(tmp_path, "bom.vox", "print(1)\nlet x = \ufeff2\n")
    hint = "delete it: U+FEFF is a byte-order mark, allowed only at the very start of a file"
    where = [(d.code, d.line, d.col, d.hint) for d in vox_lang.check(Path(path).read_bytes()).diagnostics]
    assert where == [("E0101", 2, 9, hint)]
    out = {cmd: runner.invoke(app, [cmd, path, "--format", "json"]) for cmd in ("check", "run", "test")}
    assert [r.exit_code for r in out.values()] == [1, 1, 1]
    for diags in (json.loads(out["check"].stdout), json.loads(out["run"].stderr),
                  json.loads(out["test"].stdout)["not_run"][0]["compile_errors"]):
        assert [(d["code"], d["line"], d["col"], d["hint"]) for d in diags] == where


@pytest.mark.parametrize("bad", ["nosuch.vox", "blob.vox", "empty"])
def test_vox_test_runs_the_readable_files_past_an_unreadable_one(runner: CliRunner, tmp_path: Path,
                                                                  bad: str) -> None:
    """As `vox check`: the unreadable argument gets its line on stderr, the others still run and
    are shown, exit 2; JSON still prints the object, with the unreadable ones listed
    (new-user trial: one "cannot read" line and an empty stdout)."""
    (tmp_path / "blob.vox").write_bytes(b"print(1)\n\x00")
    (tmp_path / "empty").mkdir()
    ok = write(tmp_path, "t.vox", TESTS.split("@test\nfn t_bad")[0])
    missing = str(tmp_path / bad)
    human = runner.invoke(app, ["test", ok, missing])
    assert human.exit_code == 2
    assert human.stdout.splitlines() == [f"PASS {ok}::t_ok", "1 passed, 0 failed"]
    assert human.stderr.splitlines()[-1] == "vox test: 1 could not be read (see above); 1 file(s) run"
    res = runner.invoke(app, ["test", ok, missing, "--format", "json"])
    assert res.exit_code == 2
    data = json.loads(res.stdout)
    assert (data["passed"], data["failed"], [t["test"] for t in data["tests"]]) == (1, 0, ["t_ok"])
    [entry] = data["unreadable"]
    assert entry["file"] == missing and entry["error"] and set(entry) == {"file", "error"}
    alone = runner.invoke(app, ["test", missing, "--format", "json"])  # nothing readable: the object all the same
    assert alone.exit_code == 2 and json.loads(alone.stdout)["unreadable"] == [entry]


def test_vox_test_does_not_count_a_file_with_compile_errors_as_run(runner: CliRunner, tmp_path: Path) -> None:
    """New-user trial: with an unreadable argument, the closing line said "2 file(s) run" when one
    of the two read files had compile errors and was not run."""
    ok = write(tmp_path, "t.vox", TESTS.split("@test\nfn t_bad")[0])
    broken = write(tmp_path, "broken.vox", 'let z = 1 + "a"\n')
    res = runner.invoke(app, ["test", ok, broken, str(tmp_path / "nosuch.vox")])
    assert res.exit_code == 2
    assert res.stderr.splitlines()[-1] == ("vox test: 1 could not be read (see above); 1 file(s) run, "
                                           "1 not run (compile errors)")


def test_json_diagnostics_name_their_file_in_check_run_and_test(runner: CliRunner, tmp_path: Path) -> None:
    """`vox run --format json` and `vox test`'s compile_errors carry the leading "file" that
    `vox check --format json` gives every diagnostic (new-user trial); a runtime fault too."""
    broken = write(tmp_path, "broken.vox", 'let z = 1 + "a"\n')
    check = json.loads(runner.invoke(app, ["check", broken, "--format", "json"]).stdout)
    run = json.loads(runner.invoke(app, ["run", broken, "--format", "json"]).stderr)
    test = json.loads(runner.invoke(app, ["test", broken, "--format", "json"]).stdout)["not_run"][0]["compile_errors"]
    assert check == run == test and list(check[0])[0] == "file" and check[0]["file"] == broken
    fault = json.loads(runner.invoke(app, ["run", write(tmp_path, "r.vox", FAULT), "--format", "json"]).stderr)
    assert list(fault[0])[:2] == ["file", "code"] and fault[0]["file"].endswith("r.vox")
