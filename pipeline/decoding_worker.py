"""The mask worker's process: it builds each step's Vox masks for the main process
(:mod:`pipeline.decoding_remote`, which starts it and holds the protocol), and the shared file
the masks cross in.

The worker is its own interpreter, started by :func:`command`; its lifetime is its socket's: it
exits when the main process closes its end (``close``, or the main process ended however), so
it ignores ``SIGINT`` and ``SIGTERM`` (it runs in its own session besides: a Ctrl-C in the
terminal, or a ``SIGTERM`` to the server's process group, does not stop it in the middle of a
generation; the server shuts down first and the worker follows).
"""

from __future__ import annotations

import contextlib
import errno
import mmap
import os
import select
import signal
import sys
import tempfile
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Final

import numpy as np

from pipeline.decoding_masks import MaskSpec

#: seconds the worker polls for its next message before it sleeps on the socket: a sleeping
#: worker is woken by the kernel (an inter-processor interrupt, tens of microseconds in a VM, paid
#: by the main process's send); a generation's next message comes within one decode step
SPIN_S: Final = 0.05
#: folders tried, in order, for the shared mask file (``None``: the temporary folder)
MASK_FOLDERS: Final = ("/dev/shm", None)


def command(fd: int) -> list[str]:
    """The command line that starts the worker on socket ``fd``: this interpreter, with this
    project's root first on ``sys.path`` (``python -m`` would put the working folder first, and a
    ``pipeline`` package there would be imported instead of ours)."""
    root = str(Path(__file__).resolve().parent.parent)
    code = f"import sys; sys.path.insert(0, {root!r}); from pipeline.decoding_worker import main; main({fd})"
    return [sys.executable, "-c", code]


def main(fd: int) -> None:
    """The worker process's entry point (:func:`command`): serve socket ``fd`` until it closes."""
    for sig in (signal.SIGINT, signal.SIGTERM):  # its lifetime is its socket's (module docstring)
        signal.signal(sig, signal.SIG_IGN)
    import torch

    torch.set_num_threads(1)  # its masks are small numpy work; the cores are the forward pass's
    worker_main(Connection(fd))


def readable(conn: Connection, timeout: float) -> bool:
    """Whether ``conn`` has data within ``timeout`` seconds (one ``select``: ``Connection.poll``
    builds a selector per call, ~10 µs)."""
    return bool(select.select([conn.fileno()], [], [], timeout)[0])


def _reserve(size: int) -> tuple[int, str]:
    """A new file of ``size`` bytes, its blocks allocated (``posix_fallocate``), in the first of
    :data:`MASK_FOLDERS` with room: ``(fd, path)``.

    Raises:
        OSError: none has room (the message names the folders and the size).
    """
    tried = []
    for folder in MASK_FOLDERS:
        if folder is not None and not os.path.isdir(folder):
            continue
        fd, path = tempfile.mkstemp(prefix="vox-masks-", dir=folder)
        try:
            os.posix_fallocate(fd, 0, size)
            return fd, path
        except OSError as exc:
            os.close(fd)
            os.unlink(path)
            tried.append(f"{folder or tempfile.gettempdir()} ({exc.strerror})")
    amount = f"{size / 2**20:.1f} MiB" if size >= 2**20 else f"{size / 2**10:.0f} KiB"
    raise OSError(errno.ENOSPC, f"there is no room for the {amount} mask file in " + ", ".join(tried))


class SharedMasks:
    """A float32 ``[rows, vocab]`` array in a file both processes map (in ``/dev/shm`` when it has
    room, else in the temporary folder).

    The main process creates the file and removes its name once the worker has mapped it
    (:meth:`unlink`, at the worker's first answer after ``start``): the memory lives as long as
    both maps, and from then on nothing is left behind however either process ends (only a
    ``SIGKILL`` of the main process in the milliseconds before that answer leaves the file).

    Args:
        rows: sequences of the generation (rows of the array).
        width: the model's vocabulary size (columns).
        path: the file to map (the worker's side), ``None`` to create one (the main process's).

    Raises:
        OSError: no folder has room for the file (``ENOSPC``; the space is reserved up front,
            so a full ``/dev/shm`` is found here, never as a ``SIGBUS`` in either process).
    """

    def __init__(self, rows: int, width: int, path: str | None = None) -> None:
        self.rows, self.width = rows, width
        size = rows * width * 4
        self.owner = path is None
        if path is None:
            fd, path = _reserve(size)
        else:
            fd = os.open(path, os.O_RDWR)
        self.path = path
        try:
            self._map = mmap.mmap(fd, size)
        finally:
            os.close(fd)
        self.array = np.frombuffer(self._map, dtype=np.float32).reshape(rows, width)

    def unlink(self) -> None:
        """Remove the file's name (the maps stay); idempotent."""
        if self.owner:
            self.owner = False
            with contextlib.suppress(OSError):
                os.unlink(self.path)

    def close(self) -> None:
        self.unlink()
        self.array = np.empty((0, 0), dtype=np.float32)  # drop the view before the map
        with contextlib.suppress(BufferError):
            self._map.close()


class _Ended(Exception):
    """Worker side: the generation ended while a step waited for logits."""


def _next(conn: Connection) -> Any:
    """The next message, polled for up to :data:`SPIN_S` before sleeping on the socket."""
    deadline = time.perf_counter() + SPIN_S
    while not readable(conn, 0) and time.perf_counter() < deadline:
        pass
    return conn.recv()


def worker_main(conn: Connection) -> None:
    """The worker's loop: build the masks of each generation it is sent, one step per message,
    until ``close`` or the main process's end of ``conn`` closes (it exited, however)."""
    with contextlib.suppress(EOFError, OSError):  # the main process went away: nothing to tell
        _serve(conn)


def _serve(conn: Connection) -> None:
    try:
        _init, tokenizer, eos, vocab_size = conn.recv()
        from pipeline.decoding_masks import MaskKit

        kit = MaskKit.build(tokenizer, eos, vocab_size)
    except Exception as exc:  # noqa: BLE001 - reported to the parent, which serves in process
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
        return
    conn.send(("ready",))
    job: _Job | None = None
    shared: SharedMasks | None = None  # the main process's mask file, mapped once
    while True:
        msg = _next(conn)
        kind = msg[0]
        if kind == "close":
            return
        if kind == "start":
            gen, spec, rows, prompt, path = msg[1:]
            if path is not None:
                if shared is not None:
                    shared.close()
                shared = SharedMasks(rows, kit.grammar.vocab_size, path)
            if shared is None:  # cannot happen: the first start names the file
                conn.send(("error", "no mask file"))
                return
            job = _Job(conn, kit, gen, spec, rows, prompt, shared)
            job.step()
        elif kind == "tokens" and job is not None and msg[1] == job.gen:
            job.push(msg[2])
            job.step()
        elif kind == "end":
            events = job.new_events() if job is not None and msg[1] == job.gen else []
            conn.send(("ended", msg[1], events))
            if job is not None and msg[1] == job.gen:
                job = None
        # anything else belongs to an ended generation (a late "scores"): dropped
        if job is not None and job.ended:  # "end" came while a step waited for logits
            conn.send(("ended", job.gen, job.new_events()))
            job = None


class _Job:
    """Worker side: one generation's processors, token history and shared mask rows."""

    def __init__(self, conn: Connection, kit: Any, gen: int, spec: MaskSpec, rows: int, prompt: list[int],
                 shared: SharedMasks) -> None:
        import torch

        from pipeline.decoding_masks import token_masks

        self.conn, self.gen, self.rows, self.width = conn, gen, rows, kit.grammar.vocab_size
        self.procs = token_masks(kit, spec, rows)
        for proc in self.procs:
            if hasattr(proc, "row_logits"):
                proc.row_logits = self._logits
        self.ids = torch.tensor([prompt] * rows, dtype=torch.long)
        self.prompt_len = len(prompt)
        self.shared = shared  # at least ``rows`` rows: the first ones are this generation's
        self.ended = False
        self._sent = 0  # report lines already sent

    def push(self, tokens: list[int]) -> None:
        import torch

        self.ids = torch.cat([self.ids, torch.tensor(tokens, dtype=torch.long).view(self.rows, 1)], dim=1)

    def new_events(self) -> list[str]:
        events = self.procs[0].report.events
        new, self._sent = list(events[self._sent:]), len(events)
        return new

    def _logits(self, _scores: Any, row: int) -> Any:
        """The row's logits, from the main process (it answers once its forward pass is done)."""
        self.conn.send(("need", self.gen, row))
        while True:
            msg = _next(self.conn)
            if msg[0] == "scores" and msg[1] == self.gen and msg[2] == row:
                return np.frombuffer(msg[3], dtype=np.float32)
            if msg[0] in ("end", "close"):
                raise _Ended

    def step(self) -> None:
        import torch

        scores = torch.zeros((self.rows, self.width), dtype=torch.float32)
        try:
            for proc in self.procs:
                scores = proc(self.ids, scores)
        except _Ended:
            self.ended = True
            return
        self.shared.array[:self.rows] = scores.numpy()
        self.conn.send(("mask", self.gen, int(self.ids.shape[1]) - self.prompt_len, self.new_events()))
