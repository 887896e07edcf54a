"""`vox check`: exit codes, the three formats, stdin, --fix / --fix --diff, bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from serving.cli import app

GOOD = 'fn double(x: int) to int { ret x * 2 }\nprint(double(2))\n'
COMPAT = "fn f() to int {\n  return 1\n}\nprint(f())\n"
BAD = "let x = 3 $ 4\n"
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture()
def runner() -> CliRunner:
    return CliRunner()


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_clean_file_exits_0(runner: CliRunner, tmp_path: Path) -> None:
    res = runner.invoke(app, ["check", str(write(tmp_path, "ok.vox", GOOD))])
    assert res.exit_code == 0, res.output
    assert "no problems" in res.stdout


def test_errors_exit_1_with_human_rendering(runner: CliRunner, tmp_path: Path) -> None:
    path = write(tmp_path, "bad.vox", BAD)
    res = runner.invoke(app, ["check", str(path)])
    assert res.exit_code == 1
    assert f"{path}:1:11: error[E0101]: unknown character `$`" in res.stdout
    assert "1 | let x = 3 $ 4" in res.stdout and "hint: delete it" in res.stdout


def test_warnings_fail_only_in_strict_mode(runner: CliRunner, tmp_path: Path) -> None:
    path = str(write(tmp_path, "compat.vox", COMPAT))
    assert runner.invoke(app, ["check", path]).exit_code == 0
    res = runner.invoke(app, ["check", path, "--strict", "--format", "repair"])
    assert res.exit_code == 1
    assert res.stdout.strip() == (
        "Line 2, Col 3: error[W0001] `return` is a compat spelling (hint: fix: `ret`)"
    )


def test_json_is_one_list_whatever_the_number_of_files(runner: CliRunner, tmp_path: Path) -> None:
    # It was the spec's list for one file but an object keyed by path for several.
    bad = str(write(tmp_path, "bad.vox", BAD))
    good = str(write(tmp_path, "good.vox", GOOD))
    one = json.loads(runner.invoke(app, ["check", bad, "--format", "json"]).stdout)
    assert [(d["file"], d["code"]) for d in one] == [(bad, "E0101")]
    assert list(one[0]) == ["file", "code", "severity", "message", "line", "col", "end_line", "end_col", "hint",
                            "fix"]  # the spec's fields (§6) after the file
    res = runner.invoke(app, ["check", good, bad, bad, "-f", "json"])
    assert res.exit_code == 1
    both = json.loads(res.stdout)
    assert [(d["file"], d["code"], d["col"]) for d in both] == [(bad, "E0101", 11)]  # each file once
    assert json.loads(runner.invoke(app, ["check", good, good, "-f", "json"]).stdout) == []
    assert json.loads(runner.invoke(app, ["check", "-", "-f", "json"], input=BAD).stdout)[0]["file"] == "<stdin>"


def test_stdin(runner: CliRunner) -> None:
    res = runner.invoke(app, ["check", "-", "--format", "repair"], input=BAD)
    assert res.exit_code == 1
    assert res.stdout.startswith("Line 1, Col 11: error[E0101]")


def test_invalid_utf8_is_a_diagnostic(runner: CliRunner, tmp_path: Path) -> None:
    path = write(tmp_path, "latin1.vox", b'let s = "caf\xe9"\n')
    res = runner.invoke(app, ["check", str(path), "-f", "json"])
    assert res.exit_code == 1
    assert [(d["code"], d["col"], d["message"]) for d in json.loads(res.stdout)] == [
        ("E0106", 13, "invalid UTF-8 byte 0xE9")
    ]


def test_an_unreadable_file_is_reported_and_the_others_still_checked(runner: CliRunner, tmp_path: Path) -> None:
    """As linters do: one line per unreadable argument, the rest checked and shown, exit 2; the
    JSON list holds the readable files' diagnostics. --fix stays all-or-nothing."""
    good = write(tmp_path, "good.vox", GOOD)
    bad = write(tmp_path, "bad.vox", BAD)
    binary = write(tmp_path, "bin.vox", b"\x7fELF\x00\x01\x02")
    res = runner.invoke(app, ["check", str(good), str(bad), str(binary), "-f", "json"])
    assert res.exit_code == 2
    assert {d["file"] for d in json.loads(res.stdout)} == {str(bad)}
    assert res.stderr == (f"vox check: cannot read {binary}: binary file (NUL byte at offset 4), not Vox source\n"
                          "vox check: 1 could not be read (see above); 2 file(s) checked\n")
    human = runner.invoke(app, ["check", str(good), str(tmp_path / "missing.vox")])
    assert human.exit_code == 2 and "checked 1 file" in human.stdout and "no such file" in human.stderr
    fixing = runner.invoke(app, ["check", "--fix", str(bad), str(binary)])
    assert fixing.exit_code == 2 and fixing.stdout == ""


def test_a_large_or_endless_input_is_refused_without_reading_it_all(runner: CliRunner, tmp_path: Path) -> None:
    """`vox check - < /dev/zero` grew to 23 GB: reading stops at the first NUL's chunk or past
    MAX_SOURCE_BYTES, and a file over it is refused from its size."""
    from serving.commands.inputs import MAX_SOURCE_BYTES

    big = tmp_path / "big.vox"
    with big.open("wb") as out:
        out.truncate(MAX_SOURCE_BYTES + 1)  # sparse: no disk used
    res = runner.invoke(app, ["check", str(big)])
    assert res.exit_code == 2 and "larger than the 16 MB a Vox source file may have" in res.stderr
    res = runner.invoke(app, ["check", "-"], input=b"let x = 1\n" * (MAX_SOURCE_BYTES // 10 + 1))
    assert res.exit_code == 2 and "more than 16 MB" in res.stderr
    res = runner.invoke(app, ["check", "-"], input=b"\x00" * (3 * 1024 * 1024))
    assert res.exit_code == 2 and "binary file (NUL byte at offset 0)" in res.stderr


def test_a_binary_file_is_refused_once_not_checked_byte_by_byte(runner: CliRunner, tmp_path: Path) -> None:
    # 5 MB of random bytes gave 2.6 million errors (1 GB of output, 100 s); an ELF file 756 for 2 KB
    elf = write(tmp_path, "a.out", b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 8)
    for args in (["check", str(elf)], ["check", "--format", "json", str(elf)]):
        res = runner.invoke(app, args)
        assert res.exit_code == 2
        assert res.stdout == ""
        assert res.stderr == f"vox check: cannot read {elf}: binary file (NUL byte at offset 7), not Vox source\n"
    res = runner.invoke(app, ["check", "-"], input=b"let x = 1\n\x00")
    assert res.exit_code == 2
    assert res.stderr == "vox check: cannot read <stdin>: binary file (NUL byte at offset 10), not Vox source\n"
    # UTF-16 or UTF-32 text (a Windows editor's "Unicode"), with or without its byte order mark, is
    # named as such, byte order and mark included
    source = "fn f() {\n  print(\"日本\")\n}\n"
    for name, data, said in (
            ("bom.vox", b"\xff\xfe" + source.encode("utf-16-le"), "UTF-16 LE text (byte order mark FF FE)"),
            ("be-bom.vox", b"\xfe\xff" + source.encode("utf-16-be"), "UTF-16 BE text (byte order mark FE FF)"),
            ("le.vox", source.encode("utf-16-le"), "UTF-16 LE text (no byte order mark)"),
            ("be.vox", source.encode("utf-16-be"), "UTF-16 BE text (no byte order mark)"),
            ("32.vox", b"\xff\xfe\x00\x00" + source.encode("utf-32-le"),
             "UTF-32 LE text (byte order mark FF FE 00 00)"),
            ("32be.vox", b"\x00\x00\xfe\xff" + source.encode("utf-32-be"),
             "UTF-32 BE text (byte order mark 00 00 FE FF)"),
            ("mark.vox", b"\xff\xfe" + bytes(range(256)) * 4, "binary file (NUL byte at offset 2), not Vox source")):
        path = write(tmp_path, name, data)
        res = runner.invoke(app, ["check", str(path)])
        wide = "" if said.startswith("binary") else ", not UTF-8: Vox source is UTF-8 (save the file as UTF-8)"
        assert (res.exit_code, res.stderr) == (2, f"vox check: cannot read {path}: {said}{wide}\n"), name


def test_human_and_repair_show_the_first_diagnostics_then_a_count(runner: CliRunner, tmp_path: Path) -> None:
    from serving.commands.check import MAX_SHOWN

    n = MAX_SHOWN + 70
    path = str(write(tmp_path, "many.vox", "let x = 3 $ 4\n" * n))
    human = runner.invoke(app, ["check", path])
    assert human.exit_code == 1
    assert human.stdout.count("error[E0101]") == MAX_SHOWN
    assert human.stdout.endswith(
        f"many.vox:{MAX_SHOWN}:11: error[E0101]: unknown character `$`\n{MAX_SHOWN} | let x = 3 $ 4\n"
        f"{' ' * len(str(MAX_SHOWN))} |           ^\nhint: delete it\n"
        "… 70 more diagnostics not shown (--format json lists all)\n"
        f"checked 1 file: {n} errors, 0 warnings\n"
    ), human.stdout[-400:]
    repair = runner.invoke(app, ["check", path, "-f", "repair"]).stdout.splitlines()
    assert len(repair) == MAX_SHOWN + 1 and repair[-1].startswith("… 70 more")
    assert len(json.loads(runner.invoke(app, ["check", path, "-f", "json"]).stdout)) == n
    small = runner.invoke(app, ["check", str(write(tmp_path, "few.vox", "let x = 3 $ 4\n" * MAX_SHOWN))])
    assert "not shown" not in small.stdout


@pytest.mark.parametrize("args", [["nope.vox"], ["-", "-"], ["--diff", "x.vox"], [], ["-f", "xml", "x.vox"]])
def test_usage_errors_exit_2_without_traceback(
    runner: CliRunner, tmp_path: Path, args: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "x.vox", GOOD)
    res = runner.invoke(app, ["check", *args], input="")
    assert res.exit_code == 2
    assert "Traceback" not in res.output
    assert res.exception is None or isinstance(res.exception, SystemExit)


def test_missing_file_names_the_path(runner: CliRunner, tmp_path: Path) -> None:
    res = runner.invoke(app, ["check", str(tmp_path / "nope.vox")])
    assert res.exit_code == 2
    assert f"vox check: cannot read {tmp_path / 'nope.vox'}: no such file" in res.stderr


def test_fix_rewrites_in_place(runner: CliRunner, tmp_path: Path) -> None:
    path = write(tmp_path, "old.vox", "let n = 1  # note\n" + COMPAT)
    path.chmod(0o640)
    res = runner.invoke(app, ["check", str(path), "--fix", "--strict"])
    assert res.exit_code == 0, res.output
    assert path.read_text() == "let n = 1  // note\nfn f() to int {\n  ret 1\n}\nprint(f())\n"
    assert path.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["old.vox"]  # no temp file left
    assert f"vox check: fixed {path} (2 lines rewritten)" in res.stderr  # says what it changed
    again = runner.invoke(app, ["check", str(path), "--fix", "--strict"])
    assert again.exit_code == 0 and "fixed" not in again.stderr  # nothing to fix: nothing said


def test_fix_diff_prints_the_change_and_writes_nothing(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "old.vox", COMPAT)
    res = runner.invoke(app, ["check", "old.vox", "--fix", "--diff"])
    assert res.exit_code == 0
    assert res.stdout.splitlines() == [
        "--- a/old.vox", "+++ b/old.vox", "@@ -1,4 +1,4 @@", " fn f() to int {",
        "-  return 1", "+  ret 1", " }", " print(f())",
    ]
    assert (tmp_path / "old.vox").read_text() == COMPAT


def test_fix_diff_says_on_stderr_why_it_exits_1(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Nothing to fix mechanically but an error left: it used to exit 1 printing nothing at all.
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "typed.vox", 'fn f(x: int) to int {\n  ret "no"\n}\n')
    res = runner.invoke(app, ["check", "typed.vox", "--fix", "--diff"])
    assert res.exit_code == 1 and res.stdout == ""
    assert res.stderr == ("vox check: typed.vox: no mechanical fix applies, 1 error(s) remain "
                          "(vox check without --fix lists them)\n")
    res = runner.invoke(app, ["check", "-", "--fix"], input="fn f() to int {\n  return \"a\"\n}\n")
    assert res.exit_code == 1 and "ret" in res.stdout
    assert "vox check: <stdin>: after the fix, 1 error(s) remain" in res.stderr


def test_fix_of_stdin_prints_the_fixed_source(runner: CliRunner) -> None:
    res = runner.invoke(app, ["check", "-", "--fix"], input="let a = 1; print(a)\n")
    assert res.exit_code == 0
    assert res.stdout == "let a = 1\nprint(a)\n"


@pytest.mark.parametrize("args", [["-", "--fix"], ["x.vox", "--fix", "--diff"]])
@pytest.mark.parametrize("fmt", ["json", "repair"])
def test_a_report_format_does_not_go_with_fixed_text_on_stdout(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], fmt: str
) -> None:
    """With --fix on stdin (stdout: the fixed source) or --diff (stdout: the diff) a JSON or repair
    report has no place: a usage error naming both, before anything is fixed."""
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "x.vox", COMPAT)
    res = runner.invoke(app, ["check", *args, "--format", fmt], input=COMPAT)
    assert res.exit_code == 2 and res.stdout == ""
    what = "--fix --diff (standard output holds the diff)" if "--diff" in args else \
        "--fix on standard input (standard output holds the fixed source)"
    assert f"--format {fmt} does not go with {what}" in res.stderr
    assert (tmp_path / "x.vox").read_text() == COMPAT


def test_fix_diff_of_a_non_utf8_file_says_why_it_was_not_fixed(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "raw.vox", b"fn f() to int {\n  return 1 # \xe9\n}\n")
    res = runner.invoke(app, ["check", "raw.vox", "--fix", "--diff"])
    assert res.exit_code == 1 and "raw.vox: not fixed (not valid UTF-8)" in res.stderr
    assert "no mechanical fix applies" not in res.stderr


def test_fix_writes_nothing_when_a_file_it_would_rewrite_is_not_writable(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read-only file late in the list used to leave the earlier ones rewritten (exit 2)."""
    import os

    first, last = write(tmp_path, "a.vox", COMPAT), write(tmp_path, "z.vox", COMPAT)
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: False if str(p).endswith("z.vox") else real(p, mode))
    res = runner.invoke(app, ["check", str(first), str(last), "--fix"])
    assert res.exit_code == 2 and f"cannot write {last}: permission denied; nothing was fixed" in res.stderr
    assert first.read_text() == COMPAT and last.read_text() == COMPAT


def test_fix_leaves_non_utf8_files_alone(runner: CliRunner, tmp_path: Path) -> None:
    data = b"let s = 1 # \xff\n"
    path = write(tmp_path, "raw.vox", data)
    res = runner.invoke(app, ["check", str(path), "--fix"])
    assert res.exit_code == 1
    assert path.read_bytes() == data
    assert "not valid UTF-8, not fixed" in res.stderr


def test_check_imports_no_heavy_library(tmp_path: Path) -> None:
    path = write(tmp_path, "ok.vox", GOOD)
    code = (
        "import sys\nsys.argv = ['vox', 'check', sys.argv[1]]\nfrom serving.cli import main\n"
        "try:\n    main()\nexcept SystemExit as exc:\n    assert exc.code in (0, None), exc.code\n"
        "names = ('torch', 'transformers', 'dagster', 'litellm', 'mlflow', 'datasets')\n"
        "heavy = [m for m in names if m in sys.modules]\n"
        "print('HEAVY', heavy)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(path)], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert "HEAVY []" in out.stdout, out.stdout + out.stderr


def test_fix_through_a_symlink_rewrites_the_target_and_keeps_the_link(runner: CliRunner, tmp_path: Path) -> None:
    target = write(tmp_path, "real.vox", COMPAT)
    link = tmp_path / "link.vox"
    link.symlink_to(target.name)
    res = runner.invoke(app, ["check", str(link), "--fix", "--strict"])
    assert res.exit_code == 0, res.output
    assert link.is_symlink()
    assert "ret 1" in target.read_text()


def test_permission_denied_names_the_path(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path, "secret.vox", GOOD)

    def deny(name: str, *args: object) -> bytes:
        raise PermissionError(13, "Permission denied", name)

    import serving.commands.inputs

    monkeypatch.setattr(serving.commands.inputs, "open", deny, raising=False)  # chmod 000 does not stop root
    res = runner.invoke(app, ["check", str(path)])
    assert res.exit_code == 2
    assert res.stderr.strip() == f"vox check: cannot read {path}: Permission denied"


def test_closed_stdin_is_a_usage_error_not_a_traceback() -> None:
    import os

    res = subprocess.run(
        [sys.executable, "-c", "from serving.cli import main; main()", "check", "-"],
        cwd=REPO, capture_output=True,
        preexec_fn=lambda: os.close(0), timeout=60, text=True,
    )
    assert res.returncode == 2
    assert "Traceback" not in res.stderr
    assert "standard input is closed" in res.stderr


@pytest.mark.parametrize("kind", ["fifo", "chardev"])
def test_non_regular_files_are_refused_not_read_forever(tmp_path: Path, kind: str) -> None:
    # `vox check /dev/zero` or a FIFO used to read forever; in a subprocess so a regression times out.
    if kind == "fifo":
        path = str(tmp_path / "pipe.vox")
        os.mkfifo(path)
        what = "is a named pipe (FIFO)"
    else:
        path, what = "/dev/zero", "is a character device"
    code = "import sys\nsys.argv = ['vox', 'check', sys.argv[1]]\nfrom serving.cli import main\nmain()\n"
    out = subprocess.run([sys.executable, "-c", code, path], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert out.returncode == 2, out.stderr
    assert f"vox check: cannot read {path}: {what}, not a regular file (use `-` for standard input)" in out.stderr
    assert "Traceback" not in out.stderr


def test_fix_then_strict_is_clean_on_every_compat_spelling(runner: CliRunner, tmp_path: Path) -> None:
    # spec §10: --fix applies every compat fix (W0005's `import std` from name resolution too)
    src = (REPO / "tests" / "vox_lang" / "fixtures" / "compat_all.vox").read_text(encoding="utf-8")
    path = write(tmp_path, "all.vox", src)
    diff = runner.invoke(app, ["check", str(path), "--fix", "--diff"])
    assert diff.exit_code == 0, diff.output
    assert "+import std" in diff.stdout and "+pub fn status" in diff.stdout
    assert path.read_text(encoding="utf-8") == src
    assert runner.invoke(app, ["check", str(path), "--fix"]).exit_code == 0
    once = path.read_text(encoding="utf-8")
    assert runner.invoke(app, ["check", str(path), "--fix"]).exit_code == 0
    assert path.read_text(encoding="utf-8") == once
    res = runner.invoke(app, ["check", str(path), "--strict"])
    assert res.exit_code == 0, res.output


def test_a_directory_is_checked_file_by_file(runner: CliRunner, tmp_path: Path) -> None:
    """`vox check DIR` checks every *.vox file under DIR (sorted, recursively), skipping hidden
    files and directories and other files; a directory without any is a usage error, not "no errors"."""
    src = tmp_path / "src"
    src.mkdir()
    write(src, "a.vox", GOOD)
    (src / "sub").mkdir()
    write(src, "sub/b.vox", BAD)
    write(src, "notes.txt", BAD)
    (src / ".venv").mkdir()
    write(src, ".venv/c.vox", BAD)
    write(src, ".scratch.vox", BAD)  # a hidden file: skipped in the walk, checked when named
    (src / ".#a.vox").symlink_to("user@host.1234")  # an editor's lock link (dangling): never read
    res = runner.invoke(app, ["check", str(src), "-f", "json"])
    assert res.exit_code == 1
    assert {d["file"] for d in json.loads(res.stdout)} == {str(src / "sub" / "b.vox")}
    named = runner.invoke(app, ["check", str(src / ".scratch.vox"), "-f", "json"])
    assert named.exit_code == 1 and {d["file"] for d in json.loads(named.stdout)} == {str(src / ".scratch.vox")}
    human = runner.invoke(app, ["check", str(src)])
    assert human.exit_code == 1 and str(src / "sub" / "b.vox") in human.stdout and "c.vox" not in human.stdout
    (tmp_path / "empty").mkdir()
    res = runner.invoke(app, ["check", str(tmp_path / "empty"), str(src / "a.vox")])
    assert (res.exit_code, res.stderr) == (2, f"vox check: no .vox files in {tmp_path / 'empty'} (hidden files "
                                              "and directories and symlinked directories are skipped)\n"
                                              "vox check: 1 could not be read (see above); 1 file(s) checked\n")
    res = runner.invoke(app, ["test", str(src)])  # vox test walks it too
    assert res.exit_code != 2 and "cannot read" not in res.stderr
    # each file once, however often it is named (a directory twice, a file inside a directory given too)
    twice = runner.invoke(app, ["check", str(src), str(src), str(src / "sub" / "b.vox"), "-f", "json"])
    once = runner.invoke(app, ["check", str(src), "-f", "json"])
    assert len(json.loads(twice.stdout)) == len(json.loads(once.stdout))


def test_a_directory_that_cannot_be_listed_stops_the_check(runner: CliRunner, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A subdirectory that cannot be listed was skipped and the rest passed ("checked 1 file: no
    problems"); its files would go unchecked, so it is a usage error naming it, like an unreadable file."""
    (tmp_path / "ok").mkdir()
    write(tmp_path, "ok/a.vox", GOOD)
    (tmp_path / "locked").mkdir()
    write(tmp_path, "locked/bad.vox", BAD)
    real_scandir = os.scandir

    def deny(path: Any = ".") -> Any:
        if str(path).endswith("locked"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", deny)  # chmod 000 does not stop root
    res = runner.invoke(app, ["check", str(tmp_path)])
    assert (res.exit_code, res.stderr) == (2, f"vox check: cannot read {tmp_path / 'locked'}: Permission denied\n")


def test_fix_says_why_it_wrote_nothing(runner: CliRunner, tmp_path: Path) -> None:
    """--fix is all-or-nothing: with an unreadable argument it leaves the others as they are and
    now says so; with nothing to fix, --fix --diff says that instead of printing nothing."""
    old = write(tmp_path, "c2.vox", "fn f() {\n  return 1\n}\n")
    res = runner.invoke(app, ["check", str(old), str(tmp_path / "nosuch.vox"), "--fix"])
    assert res.exit_code == 2 and old.read_text() == "fn f() {\n  return 1\n}\n"
    assert res.stderr.splitlines() == [f"vox check: cannot read {tmp_path / 'nosuch.vox'}: no such file",
                                       "vox check: --fix wrote nothing: 1 file could not be read"]
    good = write(tmp_path, "good.vox", GOOD)
    for flags in (["--fix", "--diff"], ["--fix"]):
        clean = runner.invoke(app, ["check", str(good), *flags])
        assert clean.exit_code == 0 and clean.stderr == "vox check: nothing to fix\n", flags
    changed = runner.invoke(app, ["check", str(old), "--fix", "--diff"])
    assert "nothing to fix" not in changed.stderr and "+  ret 1" in changed.stdout
