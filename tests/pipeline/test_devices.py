"""CPU quotas read from cgroup files (pipeline.devices.cpu_quota), on fake cgroup trees."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline import devices
from pipeline.devices import cpu_quota, usable_cores


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_v2_quota_is_the_smallest_along_the_ancestors(tmp_path: Path) -> None:
    _write(tmp_path / "proc", "0::/box/inner\n")
    _write(tmp_path / "cg" / "cpu.max", "max 100000\n")
    _write(tmp_path / "cg" / "box" / "cpu.max", "250000 100000\n")
    _write(tmp_path / "cg" / "box" / "inner" / "cpu.max", "max 100000\n")
    assert cpu_quota(tmp_path / "cg", tmp_path / "proc") == 2.5
    _write(tmp_path / "cg" / "box" / "inner" / "cpu.max", "150000 100000\n")
    assert cpu_quota(tmp_path / "cg", tmp_path / "proc") == 1.5


def test_v1_quota_and_no_quota(tmp_path: Path) -> None:
    _write(tmp_path / "proc", "4:memory:/m\n2:cpu,cpuacct:/job\n")
    mount = tmp_path / "cg" / "cpu,cpuacct"
    _write(mount / "cpu.cfs_quota_us", "-1\n")
    _write(mount / "cpu.cfs_period_us", "100000\n")
    assert cpu_quota(tmp_path / "cg", tmp_path / "proc") is None  # -1: none set
    _write(mount / "job" / "cpu.cfs_quota_us", "50000\n")
    _write(mount / "job" / "cpu.cfs_period_us", "100000\n")
    assert cpu_quota(tmp_path / "cg", tmp_path / "proc") == 0.5


def test_a_group_path_of_the_host_falls_back_to_the_mount_root(tmp_path: Path) -> None:
    """In a container /proc/self/cgroup may name the host's path, absent from its own mount."""
    _write(tmp_path / "proc", "0::/host/only/path\n")
    _write(tmp_path / "cg" / "cpu.max", "100000 100000\n")
    assert cpu_quota(tmp_path / "cg", tmp_path / "proc") == 1.0


@pytest.mark.parametrize("text", ["", "garbage", "0::/\n"])
def test_unreadable_or_absent_files_mean_no_quota(tmp_path: Path, text: str) -> None:
    _write(tmp_path / "proc", text)
    assert cpu_quota(tmp_path / "cg", tmp_path / "proc") is None
    assert cpu_quota(tmp_path / "cg", tmp_path / "missing") is None


def test_usable_cores_rounds_a_quota_down_and_keeps_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(devices, "cpu_quota", lambda: 1.5)
    assert usable_cores() == 1
    monkeypatch.setattr(devices, "cpu_quota", lambda: 0.2)
    assert usable_cores() == 1
    monkeypatch.setattr(devices, "cpu_quota", lambda: None)
    assert usable_cores() >= 1
