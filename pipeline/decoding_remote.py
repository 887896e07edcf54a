"""The mask worker: a served request's Vox masks built in a second process, during the forward pass.

In process, the masks of :func:`pipeline.decoding_masks.token_masks` cost ~350 µs a token on
the default export and slow the decode step by about a third (``bench/decoding.py``; the mask
work also leaves the forward pass's caches cold). Only the step's sampled tokens decide the next
mask, and they are known as soon as the step ends: the worker takes them then and builds the
next mask on another core while the main process runs the next forward pass. The main process
only sends the tokens, waits for the mask (by then usually ready) and adds it to the logits.

The worker is its own interpreter (``python -m pipeline.decoding_remote FD``), connected by one
socket pair (a :class:`multiprocessing.connection.Connection`, pickled tuples; ``gen`` numbers
the generations, ``step`` counts a generation's sampled tokens so far):

- main -> worker: ``("init", tokenizer, eos, vocab_size)`` once; ``("start", gen, spec, rows,
  prompt_ids, path)`` (``path``: a new mask file to map, else ``None``); ``("tokens", gen, ids)``
  after each step (:meth:`RemoteMasks.sampled`); ``("scores", gen, row, bytes)`` when asked;
  ``("end", gen)``; ``("close",)``.
- worker -> main: ``("ready",)`` or ``("error", why)`` once; ``("mask", gen, step, events)``
  each step, its mask written to the shared file ``path`` first; ``("need", gen, row)`` when a
  rule reads the row's logits (the script rule of :mod:`pipeline.decoding_hold`, the only one of
  the token masks; the prose cap, which rewrites the logits, runs in the main process after
  them: :func:`pipeline.decoding_masks.logit_rules`); ``("ended", gen, events)`` after ``end``.

The worker runs the processors on a zero ``scores`` tensor and writes the result to the shared
file (float32 ``[rows, vocab]``, in ``/dev/shm`` where there is one): ``-inf`` where they mask,
the value they add elsewhere (``0``, or the copy bias). The main process adds it to the model's
logits, so a generation gets the tokens it would get in process (a test holds this). A worker
that dies or does not answer in :data:`ANSWER_TIMEOUT_S` leaves the generation unconstrained
from that step (a line in the report) and is marked dead (:attr:`MaskWorker.alive`): the engine
builds later requests' masks in process.
"""

from __future__ import annotations

import contextlib
import logging
import mmap
import os
import select
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Sequence
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Final

import numpy as np
from transformers import LogitsProcessor

from pipeline.decoding_constraint import ConstraintReport
from pipeline.decoding_logits import add_scores
from pipeline.decoding_masks import MaskSpec

log = logging.getLogger(__name__)

#: seconds the main process waits for the worker's mask before it gives the worker up: a step's
#: mask takes well under a millisecond, a request's first ones tens, so only a stuck or starved
#: worker comes near this
ANSWER_TIMEOUT_S: Final = 30.0
#: seconds the worker may take to start (import torch and transformers, compile the grammar)
START_TIMEOUT_S: Final = 120.0
#: seconds the worker polls for its next message before it sleeps on the socket: a sleeping
#: worker is woken by the kernel (an inter-processor interrupt, tens of microseconds in a VM, paid
#: by the main process's send); a generation's next message comes within one decode step
SPIN_S: Final = 0.05


class WorkerGone(RuntimeError):
    """The mask worker died, closed its end, or did not answer in time (the message says which)."""


class _Ended(Exception):
    """Worker side: the generation ended while a step waited for logits."""


def _readable(conn: Connection, timeout: float) -> bool:
    """Whether ``conn`` has data within ``timeout`` seconds (one ``select``: ``Connection.poll``
    builds a selector per call, ~10 µs)."""
    return bool(select.select([conn.fileno()], [], [], timeout)[0])


class _Shared:
    """A float32 ``[rows, vocab]`` array in a file both processes map (``/dev/shm`` if present).

    The main process creates the file and removes its name once the worker has mapped it
    (:meth:`unlink`, at the worker's first answer after ``start``): the memory lives as long as
    both maps, and nothing is left behind however either process ends.
    """

    def __init__(self, rows: int, width: int, path: str | None = None) -> None:
        self.rows, self.width = rows, width
        size = rows * width * 4
        self.owner = path is None
        if path is None:
            folder = "/dev/shm" if os.path.isdir("/dev/shm") else None
            fd, path = tempfile.mkstemp(prefix="vox-masks-", dir=folder)
            os.ftruncate(fd, size)
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


class MaskWorker:
    """A child process that builds the Vox masks of one generation at a time (module docstring).

    Args:
        tokenizer: the model's fast tokenizer (pickled to the child).
        eos: the ids that end a sequence.
        vocab_size: width of the model's logits.

    Raises:
        WorkerGone: the child did not start (the message says why, e.g. the constraint is
            unavailable for this tokenizer).
    """

    def __init__(self, tokenizer: Any, eos: Iterable[int], vocab_size: int) -> None:
        # its own interpreter, not multiprocessing's spawn (which re-runs the caller's main module)
        ours, theirs = socket.socketpair()
        root = str(Path(__file__).resolve().parent.parent)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (root, os.environ.get("PYTHONPATH"))))}
        try:
            self._proc = subprocess.Popen([sys.executable, "-m", "pipeline.decoding_remote", str(theirs.fileno())],
                                          pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL, env=env)
        except OSError as exc:
            ours.close()
            raise WorkerGone(f"the mask worker did not start: {exc}") from None
        finally:
            theirs.close()
        self.conn = Connection(ours.detach())
        self.width = int(vocab_size)
        self.why_dead: str | None = None
        self._lock = threading.Lock()  # held while a generation is started
        self._current: RemoteMasks | None = None  # the generation using the connection
        self._shared: _Shared | None = None
        self._gen = 0
        try:
            self.conn.send(("init", tokenizer, tuple(sorted(set(eos))), self.width))
            first = self.recv(START_TIMEOUT_S)
        except Exception as exc:  # noqa: BLE001 - e.g. a tokenizer that cannot be pickled: serve in process
            self.close()
            raise WorkerGone(f"the mask worker did not start: {exc}") from None
        if first[0] != "ready":
            self.close()
            raise WorkerGone(f"the mask worker did not start: {first[-1]}")

    @property
    def alive(self) -> bool:
        """True while the worker can take a generation."""
        return self.why_dead is None and self._proc.poll() is None

    def processors(self, spec: MaskSpec, rows: int, prompt_ids: Sequence[int]) -> list[RemoteMasks]:
        """The one processor that adds the worker's token masks
        (:func:`pipeline.decoding_masks.token_masks`) to a generation of ``rows`` sequences after
        ``prompt_ids`` (``spec``: its constraint); the logit rules
        (:func:`pipeline.decoding_masks.logit_rules`) go after it, in this process. Pass them to
        :func:`pipeline.decoding.generate_rows`, which hands it each step's tokens and closes it.

        Raises:
            WorkerGone: the worker is dead (:attr:`why_dead`); build the masks in process instead.
        """
        if not self.alive:
            raise WorkerGone(self.why_dead or "the mask worker has exited")
        with self._lock:  # generations take turns (the engine's model lock already makes them)
            if self._current is not None:
                self._current.close()  # built but never run to its end (e.g. cancelled before it started)
            path = None  # a new file for the worker to map, else it keeps the one it has
            if self._shared is None or self._shared.rows < rows:
                if self._shared is not None:
                    self._shared.close()
                self._shared = _Shared(rows, self.width)
                path = self._shared.path
            self._gen += 1
            masks = self._current = RemoteMasks(self, self._gen, spec.prompt_len, self._shared, rows)
            try:
                self.conn.send(("start", self._gen, spec, rows, list(prompt_ids), path))
            except (OSError, ValueError) as exc:
                masks.lost(f"cannot reach it: {exc}")
        return [masks]

    def recv(self, timeout: float) -> Any:
        """The worker's next message.

        Raises:
            WorkerGone: none within ``timeout`` seconds, or the worker's end is closed.
        """
        try:
            if not _readable(self.conn, timeout):
                raise WorkerGone(f"no answer in {timeout:g} s")
            return self.conn.recv()
        except (EOFError, OSError) as exc:
            raise WorkerGone(f"it exited ({type(exc).__name__})") from None

    def stop(self, why: str) -> None:
        """Give the worker up for good (logged once); later requests build their masks in process."""
        if self.why_dead is None:
            self.why_dead = why
            log.warning("Vox mask worker stopped: %s; masks are built in process from now on", why)
        if self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait(timeout=5)

    def close(self) -> None:
        """Stop the child and remove the shared file (idempotent)."""
        with contextlib.suppress(OSError, ValueError):
            self.conn.send(("close",))
        try:
            self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait(timeout=5)
        self.conn.close()
        if self._shared is not None:
            self._shared.close()
            self._shared = None
        self.why_dead = self.why_dead or "closed"


class RemoteMasks(LogitsProcessor):
    """Add the worker's masks to one generation's logits (built by :meth:`MaskWorker.processors`).

    Attributes:
        report: the grammar processor's report, kept in step with the worker's (what
            :func:`serving.prepared.constraint_summary` reads from an in-process one).
    """

    def __init__(self, worker: MaskWorker, gen: int, prompt_len: int, shared: _Shared, rows: int) -> None:
        self.worker, self.gen, self.prompt_len, self._shared = worker, gen, prompt_len, shared
        self.report = ConstraintReport()
        self._masks = shared.array[:rows]  # [rows, vocab], written by the worker each step
        self._off = False  # the worker was lost: unconstrained from there
        self._closed = False

    def lost(self, why: str) -> None:
        """Give the worker up, for this generation and for good: unconstrained from here, reported."""
        if not self._off:
            self._off = True
            self.report.events.append(f"mask worker stopped ({why}); unconstrained from here")
            self.worker.stop(why)

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        if self._off:
            return scores
        step = int(input_ids.shape[1]) - self.prompt_len
        try:
            while True:
                msg = self.worker.recv(ANSWER_TIMEOUT_S)
                if msg[1] != self.gen:
                    continue  # an earlier generation's last answer
                self._shared.unlink()  # the worker answers this generation: it has mapped the file
                if msg[0] == "need":
                    row = int(msg[2])
                    logits = scores[row].detach().float().cpu().numpy()
                    self.worker.conn.send(("scores", self.gen, row, logits.tobytes()))
                elif msg[0] == "mask" and msg[2] == step:
                    if msg[3]:
                        self.report.events.extend(msg[3])
                    add_scores(scores, self._masks)
                    return scores
        except (WorkerGone, OSError, ValueError) as exc:
            self.lost(str(exc))
            return scores

    def sampled(self, tokens: list[int]) -> None:
        """Hand the worker the step's sampled ids, one per row (called by
        :func:`pipeline.decoding.generate_rows` as soon as they are sampled)."""
        if self._off or self._closed:
            return
        try:
            self.worker.conn.send(("tokens", self.gen, tokens))
        except (OSError, ValueError) as exc:
            self.lost(f"cannot reach it: {exc}")

    def close(self) -> None:
        """End the generation: collect the worker's last report lines (idempotent)."""
        if self._closed:
            return
        self._closed = True
        try:
            if not self._off:
                self.worker.conn.send(("end", self.gen))
                while True:
                    msg = self.worker.recv(ANSWER_TIMEOUT_S)
                    if msg[0] == "ended" and msg[1] == self.gen:
                        self.report.events.extend(msg[2])
                        break
        except (WorkerGone, OSError, ValueError) as exc:
            self.lost(str(exc))
        finally:
            if self.worker._current is self:
                self.worker._current = None


# -- the worker process ------------------------------------------------------------------------------


def _next(conn: Connection) -> Any:
    """The next message, polled for up to :data:`SPIN_S` before sleeping on the socket."""
    deadline = time.perf_counter() + SPIN_S
    while not _readable(conn, 0) and time.perf_counter() < deadline:
        pass
    return conn.recv()


def _worker_main(conn: Connection) -> None:
    """The worker's loop: build the masks of each generation it is sent, one step per message."""
    try:
        _init, tokenizer, eos, vocab_size = conn.recv()
        from pipeline.decoding_masks import MaskKit

        kit = MaskKit.build(tokenizer, eos, vocab_size)
    except Exception as exc:  # noqa: BLE001 - reported to the parent, which serves in process
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
        return
    conn.send(("ready",))
    job: _Job | None = None
    shared: _Shared | None = None  # the main process's mask file, mapped once
    while True:
        try:
            msg = _next(conn)
        except (EOFError, OSError):
            return  # the parent went away
        kind = msg[0]
        if kind == "close":
            return
        if kind == "start":
            gen, spec, rows, prompt, path = msg[1:]
            if path is not None:
                if shared is not None:
                    shared.close()
                shared = _Shared(rows, kit.grammar.vocab_size, path)
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
                 shared: _Shared) -> None:
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


if __name__ == "__main__":  # the worker: `python -m pipeline.decoding_remote FD` (FD: its socket end)
    import torch

    torch.set_num_threads(1)  # its masks are small numpy work; the cores are the forward pass's
    _worker_main(Connection(int(sys.argv[1])))
