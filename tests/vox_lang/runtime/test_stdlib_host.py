"""Host std errors name what failed (:mod:`vox_lang.runtime.stdlib_host`). User trial:
``fs.write`` on a directory gave ``Error("Is a directory")`` and ``process.run("nosuchcmd", [])``
gave ``Error("No such file or directory")``, naming neither; every OS error is now ``path:
reason``, as ``fs.read`` already named its file."""

from __future__ import annotations

import shutil
import socket
from pathlib import Path

import pytest

from vox_lang.runtime import RunConfig, run_source
from vox_lang.runtime.stdlib_pure import os_error_text

HOST = RunConfig(capabilities=frozenset({"fs", "process", "net"}), timeout_s=20.0)


def _errors(imports: str, calls: list[str]) -> list[str]:
    """What each call's ``Error`` says (``OK`` for an ``Ok``)."""
    body = "".join(f'match {c} {{\n  Ok(v) -> print("OK")\n  Error(e) -> print(e)\n}}\n' for c in calls)
    result = run_source(imports + body, config=HOST)
    assert result.status == "ok", result.fault.render_repair() if result.fault else result.message
    return result.output.splitlines()


def test_fs_errors_name_the_path(tmp_path: Path) -> None:
    d, missing, f = tmp_path / "dir", tmp_path / "missing", tmp_path / "file.txt"
    d.mkdir()
    f.write_text("x")
    calls = [f'fs.write("{d}", "x")', f'fs.read("{d}")', f'fs.list("{missing}")', f'fs.remove("{missing}")',
             f'fs.stat("{missing}")', f'fs.copy("{missing}", "{f}")', f'fs.copy("{f}", "{d}")',
             f'fs.list_dir("{f}")', f'fs.remove_dir_all("{missing}")', f'fs.mkdir("{f}")',
             f'fs.canonicalize("{missing}")']
    assert _errors("import std.fs\n", calls) == [
        f"{d}: Is a directory", f"{d}: Is a directory", f"{missing}: No such file or directory",
        f"{missing}: No such file or directory", f"{missing}: No such file or directory",
        f"{missing}: No such file or directory", f"{d}: Is a directory", f"{f}: Not a directory",
        f"{missing}: No such file or directory", f"{f}: File exists", f"{missing}: No such file or directory",
    ]


@pytest.mark.skipif(shutil.which("sh") is None, reason="needs a POSIX shell")
def test_process_errors_name_the_command(tmp_path: Path) -> None:
    calls = ['process.run("nosuchcmd", [])', 'process.run_capture("nosuchcmd", ["a"])',
             'process.spawn_background("nosuchcmd", [])', f'process.run_ex("sh", [], "{tmp_path}/nowhere", [])',
             'process.run("sh", ["-c", "echo boom >&2; exit 3"])', 'process.run("sh", ["-c", "printf \'\\\\377\'"])',
             f'process.run("{tmp_path}", [])']
    assert _errors("import std.process\n", calls) == [
        "cannot run nosuchcmd: No such file or directory", "cannot run nosuchcmd: No such file or directory",
        "cannot run nosuchcmd: No such file or directory",
        f"cannot run sh in {tmp_path}/nowhere: No such file or directory",
        "sh exited with status 3: boom", "sh: output is not UTF-8 text (byte 0xFF at 0)",
        f"cannot run {tmp_path}: Permission denied",
    ]


def test_http_errors_name_the_url() -> None:
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/x"
    assert _errors("import std.http\n", [f'http.get("{url}")', 'http.get("http://[::1")']) == [
        f"{url}: Connection refused", "http://[::1: Invalid IPv6 URL"]


def test_os_error_text() -> None:
    missing = FileNotFoundError(2, "No such file or directory", "a.txt")
    assert os_error_text(missing) == "a.txt: No such file or directory"
    two_paths = OSError(18, "Invalid cross-device link", "a", None, "b")
    assert os_error_text(two_paths) == "a -> b: Invalid cross-device link"
    assert os_error_text(OSError("the run has ended")) == "the run has ended"
