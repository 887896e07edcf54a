"""The mask worker's protocol (pipeline.decoding_remote), both ends in this process: a step whose
rule reads the row's logits asks the main process for them and masks with them; report lines
cross over; a worker that stops answering leaves the generation unconstrained, reported.
(The worker as its own process, against the in-process masks: tests/serving/test_mask_worker.py.)"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from multiprocessing.connection import Connection
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
import torch

import pipeline.decoding_masks as masks_module
from pipeline.decoding_constraint import ConstraintReport
from pipeline.decoding_masks import MaskSpec
from pipeline.decoding_remote import RemoteMasks, WorkerGone
from pipeline.decoding_worker import SharedMasks, worker_main

WIDTH = 8


class MasksFavourite:
    """A token mask that reads the row's logits: it masks the model's first choice."""

    def __init__(self) -> None:
        self.report = ConstraintReport()
        self.row_logits: Any = None

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        logits = self.row_logits(scores, 0)
        scores[0, int(np.argmax(logits))] = float("-inf")
        self.report.events.append(f"step {input_ids.shape[1]}")
        return scores


class Stub:
    """The main side of a :class:`pipeline.decoding_remote.MaskWorker`, without its process."""

    def __init__(self, conn: Connection) -> None:
        self.conn, self._current, self.stopped = conn, None, ""

    def recv(self, timeout: float) -> Any:
        if not self.conn.poll(timeout):
            raise WorkerGone(f"no answer in {timeout:g} s")
        return self.conn.recv()

    def stop(self, why: str) -> None:
        self.stopped = why


@pytest.fixture
def worker(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Stub, SharedMasks]]:
    monkeypatch.setattr(masks_module.MaskKit, "build",
                        staticmethod(lambda *a: SimpleNamespace(grammar=SimpleNamespace(vocab_size=WIDTH))))
    monkeypatch.setattr(masks_module, "token_masks", lambda kit, spec, rows: [MasksFavourite()])
    ours, theirs = socket.socketpair()
    main, child = Connection(ours.detach()), Connection(theirs.detach())
    thread = threading.Thread(target=worker_main, args=(child,), daemon=True)
    thread.start()
    main.send(("init", None, (0,), WIDTH))
    assert main.recv() == ("ready",)
    shared = SharedMasks(1, WIDTH)
    yield Stub(main), shared
    main.send(("close",))
    thread.join(timeout=10)
    shared.close()
    main.close()


def test_a_rule_reading_the_logits_gets_them_from_the_main_process(worker: tuple[Stub, SharedMasks]) -> None:
    stub, shared = worker
    masks = RemoteMasks(stub, 1, 2, shared, 1)  # type: ignore[arg-type]
    stub.conn.send(("start", 1, MaskSpec("code", 2, 4), 1, [5, 6], shared.path))
    first = torch.tensor([[0.0, 1.0, 5.0, 2.0, 0.0, 0.0, 0.0, 0.0]])
    out = masks(torch.tensor([[5, 6]]), first.clone())
    assert out[0, 2] == float("-inf") and torch.equal(out[0, [0, 1, 3]], first[0, [0, 1, 3]])
    masks.sampled([3])
    second = torch.tensor([[0.0, 1.0, 0.0, 2.0, 9.0, 0.0, 0.0, 0.0]])
    out = masks(torch.tensor([[5, 6, 3]]), second.clone())
    assert out[0, 4] == float("-inf") and torch.isfinite(out[0, [0, 1, 2, 3, 5, 6, 7]]).all()
    masks.close()
    assert masks.report.events == ["step 2", "step 3"] and not stub.stopped


def test_a_worker_that_stops_answering_leaves_the_generation_unconstrained(
        worker: tuple[Stub, SharedMasks], monkeypatch: pytest.MonkeyPatch) -> None:
    stub, shared = worker
    masks = RemoteMasks(stub, 1, 2, shared, 1)  # type: ignore[arg-type]
    # no "start" sent: the worker never answers this generation
    monkeypatch.setattr("pipeline.decoding_remote.ANSWER_TIMEOUT_S", 0.2)
    scores = torch.arange(WIDTH, dtype=torch.float32).view(1, WIDTH)
    out = masks(torch.tensor([[5, 6]]), scores.clone())
    assert torch.equal(out, scores) and stub.stopped == "no answer in 0.2 s"
    assert masks.report.events == ["mask worker stopped (no answer in 0.2 s); unconstrained from here"]
    assert torch.equal(masks(torch.tensor([[5, 6, 1]]), scores.clone()), scores)  # off for good, no wait


def test_the_mask_file_goes_to_the_next_folder_when_one_is_full(
        tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its blocks are reserved up front, so a full /dev/shm is an error here, never a SIGBUS later."""
    import errno
    import os

    import pipeline.decoding_worker as worker_module

    full, roomy = tmp_path / "full", tmp_path / "roomy"
    full.mkdir()
    roomy.mkdir()
    reserve = os.posix_fallocate

    def fallocate(fd: int, offset: int, size: int) -> None:
        if os.readlink(f"/proc/self/fd/{fd}").startswith(str(full)):
            raise OSError(errno.ENOSPC, "No space left on device")
        reserve(fd, offset, size)

    monkeypatch.setattr(worker_module.os, "posix_fallocate", fallocate)
    monkeypatch.setattr(worker_module, "MASK_FOLDERS", (str(tmp_path / "absent"), str(full), str(roomy)))
    shared = SharedMasks(2, 3 * 2**17)
    assert shared.path.startswith(str(roomy)) and shared.array.shape == (2, 3 * 2**17)
    assert not list(full.iterdir())  # the failed file is removed
    shared.close()
    monkeypatch.setattr(worker_module, "MASK_FOLDERS", (str(full),))
    with pytest.raises(OSError, match=rf"^\[Errno 28\] there is no room for the 3.0 MiB mask file in {full} "
                                      r"\(No space left on device\)$"):
        SharedMasks(2, 3 * 2**17)
