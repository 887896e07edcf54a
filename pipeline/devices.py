"""Device names accepted by ``--device`` flags, checked without importing torch.

A name's spelling is checked here so that a command can refuse ``--device tpu`` as fast as any
other usage mistake; whether the device is present is :func:`pipeline.decoding.pick_device`'s
question, which needs torch.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Final

from pipeline.errors import DecodingError

#: device kinds in order of preference when none is asked for
DEVICE_KINDS: Final = ("cuda", "mps", "cpu")


def device_kind(preferred: str | None) -> str | None:
    """The kind of device ``preferred`` names (``"cuda"`` for ``"cuda:1"``), ``None`` for auto.

    Args:
        preferred: ``None`` or ``"auto"`` (best present), or a device such as ``"cuda:1"`` (an
            empty string is no device: ``--device ""`` is a mistake, not a request for the default).

    Raises:
        DecodingError: ``preferred`` is not a device name.
    """
    if preferred is None or preferred == "auto":
        return None
    kind = preferred.split(":", 1)[0]
    if kind not in DEVICE_KINDS:
        raise DecodingError(f"unknown device {preferred!r} (expected auto, cpu, cuda, cuda:N or mps)")
    return kind


def usable_cores() -> int:
    """CPUs this process may run on: its affinity mask where the OS has one (a container's or
    ``taskset``'s limit, ``os.sched_getaffinity``), else ``os.cpu_count()``, and no more than its
    cgroup's CPU quota allows, rounded down (:func:`cpu_quota`: a container run with
    ``--cpus 1.5`` has one whole core); at least 1."""
    import os

    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cores = os.cpu_count() or 1
    quota = cpu_quota()
    if quota is not None:
        cores = min(cores, int(quota))
    return max(1, cores)


def cpu_quota(root: Path = Path("/sys/fs/cgroup"), membership: Path = Path("/proc/self/cgroup")) -> float | None:
    """The CPU time this process's cgroup may use, in cores (``cpu.max`` of cgroup v2, else
    ``cpu.cfs_quota_us / cpu.cfs_period_us`` of cgroup v1; the smallest along the group's
    ancestors), or ``None`` when no quota is set or none can be read (not Linux, no cgroup fs).

    Args:
        root: where the cgroup file systems are mounted.
        membership: the process's groups, lines ``ID:CONTROLLERS:PATH`` (``proc(5)``).
    """
    try:
        lines = membership.read_text().splitlines()
    except OSError:
        return None
    found: list[float] = []
    for line in lines:
        _id, controllers, group = (line.split(":", 2) + ["", ""])[:3]
        if controllers == "" and (root / "cpu.max").exists():  # v2, the unified hierarchy
            found += _quotas(root, group, _v2_quota)
        elif "cpu" in controllers.split(","):  # v1, mounted as cpu or cpu,cpuacct
            for mount in (root / controllers, root / "cpu"):
                if mount.is_dir():
                    found += _quotas(mount, group, _v1_quota)
                    break
    return min(found) if found else None


def _quotas(mount: Path, group: str, read: Callable[[Path], float | None]) -> list[float]:
    """The quotas set on ``group`` and its ancestors under ``mount`` (the mount's own root too: in
    a container the group's path is often that of the host)."""
    folders = [mount / group.strip("/")] if group.strip("/") else []
    folders += [folder for folder in (mount / group.strip("/")).parents if folder.is_relative_to(mount)]
    folders.append(mount)
    quotas = (read(folder) for folder in dict.fromkeys(folders) if folder.is_dir())
    return [q for q in quotas if q is not None]


def _v2_quota(folder: Path) -> float | None:
    """``cpu.max`` (``"QUOTA PERIOD"`` in µs, ``max`` for none) as cores."""
    try:
        quota, period = (folder / "cpu.max").read_text().split()[:2]
        return None if quota == "max" else int(quota) / int(period)
    except (OSError, ValueError):
        return None


def _v1_quota(folder: Path) -> float | None:
    """``cpu.cfs_quota_us / cpu.cfs_period_us`` (quota ``-1`` for none) as cores."""
    try:
        quota = int((folder / "cpu.cfs_quota_us").read_text())
        period = int((folder / "cpu.cfs_period_us").read_text())
    except (OSError, ValueError):
        return None
    return quota / period if quota > 0 and period > 0 else None
