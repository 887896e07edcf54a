"""The effectful examples run as their comments say (new-user trial): ``file_report.vox`` writes
its report under the system temp dir, not into the current directory; ``run_commands.vox``
measures with the millisecond clock it labels ``ms``."""

from __future__ import annotations

from pathlib import Path

import pytest

from vox_lang.runtime import RunConfig, run_source

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def test_file_report_writes_under_tmpdir_not_the_current_directory(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    work, tmp = tmp_path / "work", tmp_path / "tmp"
    work.mkdir()
    tmp.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setenv("SRC_DIR", str(EXAMPLES))
    monkeypatch.delenv("REPORT", raising=False)
    text = (EXAMPLES / "file_report.vox").read_text()
    result = run_source(text, path="file_report.vox", config=RunConfig(capabilities=frozenset({"fs", "env"})))
    assert result.fault is None, result.fault
    assert list(work.iterdir()) == []
    report = tmp / "vox_file_report.txt"
    assert result.output.splitlines()[-1] == f"wrote {report}"
    assert "file_report.vox: " in report.read_text()


def test_run_commands_times_in_milliseconds() -> None:
    text = (EXAMPLES / "run_commands.vox").read_text()
    assert "clock.now_ms()" in text and "clock.now()" not in text and '" ms"' in text
