"""Atomic file writes: readers see the old file or the new one, never a half-written one.

Every artifact writer in ``pipeline``, ``assets`` and ``serving`` goes through :func:`staged`:
a uniquely named temporary file in the destination's folder (``tempfile.mkstemp``, so two
writers never share one), flushed and ``fsync``-ed, given the permission bits a plain ``open``
would give (0666 less the umask; ``mkstemp`` alone makes 0600, unreadable for other users of a
shared state dir), then swapped in with ``os.replace``. On any error the temporary file is
removed and the destination is untouched.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = ["current_umask", "staged", "write_bytes", "write_json", "write_text"]


def current_umask() -> int:
    """The process umask, read without changing it where the platform allows.

    ``os.umask`` can only be read by setting it, which for a moment gives files created by other
    threads mode 0666; Linux reports it in ``/proc/self/status`` instead, used when present.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _fsync_dir(folder: Path) -> None:
    """Persist the rename itself (best effort: some file systems refuse to open a folder)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextmanager
def staged(path: Path, *, mode: int | None = None) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; on normal exit it replaces ``path`` atomically.

    Use it when a library writes the file itself (``pq.write_table(table, tmp)``); the helpers
    below cover bytes, text and JSON. The parent folder is created if missing.

    Args:
        path: the destination file. A symbolic link is replaced by a regular file; pass
            ``path.resolve()`` to rewrite the link's target instead.
        mode: permission bits of the new file; default 0o666 less the umask (what ``open`` gives).

    Yields:
        The temporary file's path (an empty file that already exists).

    Raises:
        OSError: the folder cannot be created or written, or the disk is full; ``path`` is untouched.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    tmp = Path(name)
    try:
        os.fchmod(fd, (0o666 & ~current_umask()) if mode is None else mode)
        os.close(fd)
        fd = -1
        yield tmp
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        if fd >= 0:
            os.close(fd)
        tmp.unlink(missing_ok=True)  # a no-op after the replace
    _fsync_dir(path.parent)


def write_bytes(path: Path, data: bytes, *, mode: int | None = None) -> Path:
    """Write ``data`` to ``path`` atomically; returns ``path``. Errors as :func:`staged`."""
    with staged(path, mode=mode) as tmp:
        tmp.write_bytes(data)
    return path


def write_text(path: Path, text: str, *, encoding: str = "utf-8", mode: int | None = None) -> Path:
    """Write ``text`` to ``path`` atomically (``encoding``, newlines unchanged); returns ``path``."""
    return write_bytes(path, text.encode(encoding), mode=mode)


def write_json(path: Path, data: Any, *, indent: int | None = 1, sort_keys: bool = False,
               default: Callable[[Any], Any] | None = None, compact: bool = False, mode: int | None = None) -> Path:
    """Write ``data`` as UTF-8 JSON (non-ASCII kept, trailing newline) to ``path`` atomically.

    Args:
        path: the destination file.
        data: anything ``json.dumps`` accepts (with ``default`` for other objects).
        indent: ``json.dumps`` indent; ignored when ``compact``.
        sort_keys: sort object keys (stable diffs and hashes).
        default: called for objects JSON cannot encode (e.g. ``str``).
        compact: no whitespace at all (``separators=(",", ":")``), for large caches.
        mode: as for :func:`staged`.

    Returns:
        ``path``.

    Raises:
        TypeError, ValueError: ``data`` cannot be encoded (nothing is written).
        OSError: as for :func:`staged`.
    """
    if compact:
        text = json.dumps(data, separators=(",", ":"), sort_keys=sort_keys, default=default, ensure_ascii=False)
    else:
        text = json.dumps(data, indent=indent, sort_keys=sort_keys, default=default, ensure_ascii=False)
    return write_text(path, text + "\n", mode=mode)
