"""Device names accepted by ``--device`` flags, checked without importing torch.

A name's spelling is checked here so that a command can refuse ``--device tpu`` as fast as any
other usage mistake; whether the device is present is :func:`pipeline.decoding.pick_device`'s
question, which needs torch.
"""

from __future__ import annotations

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
    ``taskset``'s limit, ``os.sched_getaffinity``), else ``os.cpu_count()``; at least 1."""
    import os

    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)
