"""The mask worker: a served request's Vox masks built in a second process, during the forward pass.

In process, the masks of :func:`pipeline.decoding_masks.token_masks` cost ~350 µs a token on
the default export and slow the decode step by about a third (``bench/decoding.py``; the mask
work also leaves the forward pass's caches cold). Only the step's sampled tokens decide the next
mask, and they are known as soon as the step ends: the worker takes them then and builds the
next mask on another core while the main process runs the next forward pass. The main process
only sends the tokens, waits for the mask (by then usually ready) and adds it to the logits.

The worker is its own interpreter (:mod:`pipeline.decoding_worker`), connected by one
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
file (float32 ``[rows, vocab]``, in ``/dev/shm`` when it has room:
:class:`pipeline.decoding_worker.SharedMasks`): ``-inf`` where they mask,
the value they add elsewhere (``0``, or the copy bias). The main process adds it to the model's
logits, so a generation gets the tokens it would get in process (a test holds this). A worker
that dies or does not answer in :data:`ANSWER_TIMEOUT_S` leaves the generation unconstrained
from that step (a line in the report) and is marked dead (:attr:`MaskWorker.alive`; logged once,
also when it dies between requests): the engine builds later requests' masks in process. When
no folder has room for the mask file, that request's masks are built in process (logged).
"""

from __future__ import annotations

import contextlib
import logging
import signal
import socket
import subprocess
import threading
from collections.abc import Iterable, Sequence
from multiprocessing.connection import Connection
from typing import Any, Final

from transformers import LogitsProcessor

from pipeline.decoding_constraint import ConstraintReport
from pipeline.decoding_logits import add_scores
from pipeline.decoding_masks import MaskSpec
from pipeline.decoding_worker import SharedMasks, command, readable

log = logging.getLogger(__name__)

#: seconds the main process waits for the worker's mask before it gives the worker up: a step's
#: mask takes well under a millisecond, a request's first ones tens, so only a stuck or starved
#: worker comes near this
ANSWER_TIMEOUT_S: Final = 30.0
#: seconds the worker may take to start (import torch and transformers, compile the grammar)
START_TIMEOUT_S: Final = 120.0


class WorkerGone(RuntimeError):
    """The mask worker died, closed its end, or did not answer in time (the message says which)."""


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
        # (:func:`pipeline.decoding_worker.command`), in its own session: a terminal's Ctrl-C
        # reaches the server, which ends the worker by closing its socket
        ours, theirs = socket.socketpair()
        try:
            self._proc = subprocess.Popen(command(theirs.fileno()), pass_fds=[theirs.fileno()],
                                          stdin=subprocess.DEVNULL, start_new_session=True)
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
        self._shared: SharedMasks | None = None
        self._no_room = False  # the last mask file could not be made (logged)
        self._gen = 0
        try:
            self.conn.send(("init", tokenizer, tuple(sorted(set(eos))), self.width))
            first = self.recv(START_TIMEOUT_S)
        except Exception as exc:  # noqa: BLE001 - e.g. a tokenizer that cannot be pickled: serve in process
            self.close()
            raise WorkerGone(f"the mask worker did not start: {exc}") from None
        except BaseException:  # Ctrl-C while it starts: no worker left behind
            self.close()
            raise
        if first[0] != "ready":
            self.close()
            raise WorkerGone(f"the mask worker did not start: {first[-1]}")

    @property
    def alive(self) -> bool:
        """True while the worker can take a generation; a worker found exited (e.g. killed
        between requests) is given up here, logged once (:meth:`stop`)."""
        if self.why_dead is None and (code := self._proc.poll()) is not None:
            self.stop(f"it exited ({_exit_cause(code)})")
        return self.why_dead is None

    def processors(self, spec: MaskSpec, rows: int, prompt_ids: Sequence[int]) -> list[RemoteMasks]:
        """The one processor that adds the worker's token masks
        (:func:`pipeline.decoding_masks.token_masks`) to a generation of ``rows`` sequences after
        ``prompt_ids`` (``spec``: its constraint); the logit rules
        (:func:`pipeline.decoding_masks.logit_rules`) go after it, in this process. Pass them to
        :func:`pipeline.decoding.generate_rows`, which hands it each step's tokens and closes it.

        Raises:
            WorkerGone: the worker is dead (:attr:`why_dead`), or no folder has room for the mask
                file (the worker is kept for later requests); build these masks in process.
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
                    self._shared = None
                try:
                    self._shared = SharedMasks(rows, self.width)
                except OSError as exc:  # no room: this request in process, the worker kept
                    why = exc.strerror or str(exc)
                    if not self._no_room:  # once, not for each retry pass
                        log.warning("Vox masks are built in process while %s", why)
                    self._no_room = True
                    raise WorkerGone(why) from None
                self._no_room = False
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
            if not readable(self.conn, timeout):
                raise WorkerGone(f"no answer in {timeout:g} s")
            return self.conn.recv()
        except (EOFError, OSError) as exc:
            try:  # its end closed: it is exiting, say how (as for a worker found dead between requests)
                cause = _exit_cause(self._proc.wait(timeout=1))
            except subprocess.TimeoutExpired:
                cause = type(exc).__name__
            raise WorkerGone(f"it exited ({cause})") from None

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

    def __init__(self, worker: MaskWorker, gen: int, prompt_len: int, shared: SharedMasks, rows: int) -> None:
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


def _exit_cause(code: int) -> str:
    """``"signal SIGKILL"`` for a negative return code, else ``"code N"``."""
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"signal {signal.Signals(-code).name}"
    return f"code {code}"
