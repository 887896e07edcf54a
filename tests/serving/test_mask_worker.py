"""The mask worker (pipeline.decoding_remote): the Vox masks built in a second process give the
tokens the in-process masks give; a worker that dies, hangs up or never starts leaves serving
working (unconstrained from that step, in process afterwards), and nothing is left in /dev/shm."""

from __future__ import annotations

import glob
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pipeline.decoding_remote import MaskWorker, RemoteMasks, WorkerGone
from serving.engine import Engine
from serving.prepared import NO_RETRIES

REQUESTS = [
    ("Write a function that adds two integers.", {}),
    ("Write a Vox function `late_orders(days: List[int], limit: int) to int` counting late orders.", {}),
    ("Write a Vox script that prints the total of a list of prices.", {"vox_retries": 0}),
    ("Write a Vox type `Point` with x and y.", {"code_only": True, "n": 3}),
]


@pytest.fixture(scope="module")
def plain(tiny_export_dir: Path) -> Engine:
    return Engine.load(tiny_export_dir, device="cpu")


@pytest.fixture(scope="module")
def remote(tiny_export_dir: Path) -> Iterator[Engine]:
    engine = Engine.load(tiny_export_dir, device="cpu")
    assert engine.start_mask_worker() == "Vox masks in a second process"
    yield engine
    engine.close()


def _done(engine: Engine, text: str, **options: Any) -> list[tuple[str, str, Any]]:
    prepared = engine.prepare([{"role": "user", "content": text}], max_tokens=48, temperature=1.0, seed=7,
                              **options)
    return [(c.text, c.finish_reason, c.constraint) for c in engine.completions(prepared)]


@pytest.mark.parametrize("text, options", REQUESTS)
def test_the_worker_gives_the_tokens_and_reports_the_in_process_masks_give(
        plain: Engine, remote: Engine, text: str, options: dict[str, Any]) -> None:
    assert _done(remote, text, **options) == _done(plain, text, **options)
    assert remote.mask_worker is not None and remote.mask_worker.alive


def test_a_streamed_request_cancelled_midway_leaves_the_worker_ready(plain: Engine, remote: Engine) -> None:
    import threading

    cancel = threading.Event()
    prepared = remote.prepare([{"role": "user", "content": REQUESTS[1][0]}], max_tokens=48, temperature=1.0,
                              seed=3, vox_retries=0)
    for k, _event in enumerate(remote.stream(prepared, cancel)):
        if k == 3:
            cancel.set()
    assert remote.mask_worker is not None and remote.mask_worker.alive
    assert _done(remote, REQUESTS[0][0]) == _done(plain, REQUESTS[0][0])


def test_masks_built_but_never_run_do_not_block_the_next_generation(plain: Engine, remote: Engine) -> None:
    """A generator closed before its first step never closes its processors: the next one does."""
    from pipeline.decoding_masks import MaskSpec

    worker = remote.mask_worker
    assert worker is not None
    orphan = worker.processors(MaskSpec("response", 5, 8), 1, [1, 2, 3, 4, 5])[0]
    assert _done(remote, REQUESTS[0][0]) == _done(plain, REQUESTS[0][0])
    assert orphan._closed and worker.alive


def test_a_worker_that_dies_mid_generation_is_reported_and_not_used_again(
        plain: Engine, tiny_export_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    engine = Engine.load(tiny_export_dir, device="cpu")
    engine.start_mask_worker()
    worker = engine.mask_worker
    assert worker is not None
    sampled, seen = RemoteMasks.sampled, []

    def kill_at_third(self: RemoteMasks, tokens: list[int]) -> None:
        seen.append(tokens)
        if len(seen) == 3:
            worker._proc.kill()
            worker._proc.wait()
        sampled(self, tokens)

    monkeypatch.setattr(RemoteMasks, "sampled", kill_at_third)
    try:
        [(text, finish, constraint)] = _done(engine, REQUESTS[0][0], vox_retries=0)
        assert finish in ("stop", "length") and not constraint["applied"]
        assert any(e.startswith("mask worker stopped (") and e.endswith("; unconstrained from here")
                   for e in constraint["events"]), constraint
        assert not worker.alive and worker.why_dead
        assert _done(engine, REQUESTS[1][0]) == _done(plain, REQUESTS[1][0])  # in process from now on
    finally:
        engine.close()


def test_a_worker_that_cannot_start_says_why_and_serving_stays_in_process(
        plain: Engine, tiny_export_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(WorkerGone, match="^the mask worker did not start: "):
        MaskWorker(object(), [0], 16)  # no tokenizer llguidance can read
    with pytest.raises(WorkerGone, match="^the mask worker did not start: "):
        MaskWorker(lambda: None, [0], 16)  # a tokenizer that cannot be pickled
    engine = Engine.load(tiny_export_dir, device="cpu")

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise WorkerGone("the mask worker did not start: test")

    import serving.engine

    monkeypatch.setattr(serving.engine, "MaskWorker", refuse)
    assert engine.start_mask_worker() == "Vox masks in process (the mask worker did not start: test)"
    assert _done(engine, REQUESTS[0][0]) == _done(plain, REQUESTS[0][0])


def test_no_mask_file_is_left_behind(tiny_export_dir: Path) -> None:
    before = set(glob.glob("/dev/shm/vox-masks-*"))
    engine = Engine.load(tiny_export_dir, device="cpu")
    engine.start_mask_worker()
    _done(engine, REQUESTS[0][0], n=2)
    assert set(glob.glob("/dev/shm/vox-masks-*")) == before  # unlinked once the worker mapped it
    engine.close()
    assert set(glob.glob("/dev/shm/vox-masks-*")) == before


def test_the_worker_runs_our_code_in_its_own_session_and_outlives_stray_signals(
        plain: Engine, remote: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A `pipeline` package in the working folder is not imported in its place; a terminal's
    Ctrl-C (its own session) or a stray SIGINT/SIGTERM does not end it: its socket does."""
    import os
    import signal

    worker = remote.mask_worker
    assert worker is not None
    assert os.getsid(worker._proc.pid) != os.getsid(0)
    for sig in (signal.SIGINT, signal.SIGTERM):
        os.kill(worker._proc.pid, sig)
    assert _done(remote, REQUESTS[1][0]) == _done(plain, REQUESTS[1][0])
    assert worker.alive
    (tmp_path / "pipeline").mkdir()
    (tmp_path / "pipeline" / "__init__.py").write_text("raise SystemExit('a user package was imported')\n")
    monkeypatch.chdir(tmp_path)
    kit = plain.masks
    assert kit is not None
    other = MaskWorker(plain.tokenizer, kit.eos, kit.grammar.vocab_size)
    assert other.alive
    other.close()


def test_a_worker_that_dies_between_requests_is_logged_once(
        plain: Engine, caplog: pytest.LogCaptureFixture) -> None:
    kit = plain.masks
    assert kit is not None
    worker = MaskWorker(plain.tokenizer, kit.eos, kit.grammar.vocab_size)
    worker._proc.kill()
    worker._proc.wait()
    with caplog.at_level("WARNING", logger="pipeline.decoding_remote"):
        assert not worker.alive and not worker.alive
    assert [r.getMessage() for r in caplog.records] == [
        "Vox mask worker stopped: it exited (signal SIGKILL); masks are built in process from now on"]
    worker.close()


def test_no_room_for_the_mask_file_builds_that_request_in_process(
        plain: Engine, remote: Engine, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    import errno

    import pipeline.decoding_worker

    def full(fd: int, offset: int, size: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(pipeline.decoding_worker.os, "posix_fallocate", full)
    text = REQUESTS[3][0]
    with caplog.at_level("WARNING", logger="pipeline.decoding_remote"):
        assert _done(remote, text, n=9) == _done(plain, text, n=9)  # more rows than any file so far
    lines = [r.getMessage() for r in caplog.records]
    tried = f"/dev/shm (No space left on device), {tempfile.gettempdir()} (No space left on device)"
    assert len(lines) == 1 and lines[0].startswith("Vox masks are built in process while there is no room for the ")
    assert lines[0].endswith(f" KiB mask file in {tried}"), lines
    worker = remote.mask_worker
    assert worker is not None and worker.alive
    monkeypatch.undo()
    assert _done(remote, text, n=9) == _done(plain, text, n=9)


def test_a_retry_pass_that_loses_the_worker_says_so(plain: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each choice's summary is the first pass's report plus what later passes saw of the whole
    request (their row lines number other rows and are left out)."""
    from types import SimpleNamespace

    import serving.engine
    from pipeline.decoding_constraint import ConstraintReport

    passes = [["row 0: dead end after 3 tokens; unconstrained from here"],
              ["row 0: about another row", "mask worker stopped (it exited (code 1)); unconstrained from here"]]

    def two_passes(model: Any, tokenizer: Any, prompt_ids: list[int], params: Any, eos: Any, make: Any,
                   n: int, rounds: int, **kwargs: Any) -> Any:
        for events in passes:
            make(n)[0].report.events.extend(events)
        return [[] for _ in range(n)], [dict(NO_RETRIES) for _ in range(n)]

    monkeypatch.setattr(serving.engine, "verified_choices", two_passes)
    prepared = plain.prepare([{"role": "user", "content": REQUESTS[0][0]}], max_tokens=8, n=2)
    make = lambda rows: [SimpleNamespace(report=ConstraintReport())]  # noqa: E731
    last = [e for e in plain._verified(prepared, make, None) if e.finish_reason is not None]
    assert [(e.constraint or {})["events"] for e in last] == [[passes[0][0], passes[1][1]], [passes[1][1]]]
