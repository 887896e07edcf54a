"""pipeline.atomic: the one atomic-write helper (mode, cleanup on error, no stray temp files)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from pipeline import atomic


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_json_round_trip_and_umask_mode(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        assert atomic.current_umask() == 0o027
        out = atomic.write_json(tmp_path / "sub" / "r.json", {"b": 1, "a": "ü"}, sort_keys=True)
    finally:
        os.umask(old)
    assert json.loads(out.read_text(encoding="utf-8")) == {"a": "ü", "b": 1}
    assert out.read_text(encoding="utf-8").endswith("\n")
    assert _mode(out) == 0o640  # what open() would give, not mkstemp's 0600
    assert [p.name for p in out.parent.iterdir()] == ["r.json"]


def test_explicit_mode_and_compact(tmp_path: Path) -> None:
    out = atomic.write_json(tmp_path / "c.json", {"a": [1, 2]}, compact=True, mode=0o600)
    assert out.read_text() == '{"a":[1,2]}\n'
    assert _mode(out) == 0o600


def test_failed_write_leaves_old_file_and_no_temp(tmp_path: Path) -> None:
    path = tmp_path / "keep.txt"
    atomic.write_text(path, "old")
    with pytest.raises(RuntimeError), atomic.staged(path) as tmp:
        tmp.write_text("half")
        raise RuntimeError("writer crashed")
    with pytest.raises(TypeError):
        atomic.write_json(path, {"x": object()})
    assert path.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt"]


def test_staged_for_library_writers(tmp_path: Path) -> None:
    path = tmp_path / "blob.bin"
    with atomic.staged(path) as tmp:
        assert tmp.parent == tmp_path and tmp.exists() and tmp != path
        tmp.write_bytes(b"\x00\x01")
    assert path.read_bytes() == b"\x00\x01"
