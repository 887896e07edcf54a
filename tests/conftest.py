"""Shared fixtures: every test runs with a temporary state dir and user dir, offline, and must leave
the process's signal handling as it found it."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture(autouse=True)
def _isolated_state(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Point ``VOX_STATE_DIR``, ``VOX_HOME`` and ``DAGSTER_HOME`` at per-test temp folders."""
    base: Path = tmp_path_factory.mktemp("state")
    monkeypatch.setenv("VOX_STATE_DIR", str(base / "state"))
    monkeypatch.setenv("VOX_HOME", str(base / "home"))
    (base / "dagster").mkdir()
    monkeypatch.setenv("DAGSTER_HOME", str(base / "dagster"))


def _signal_state() -> tuple[Any, Any, frozenset[int]]:
    return (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT),
            frozenset(signal.pthread_sigmask(signal.SIG_BLOCK, [])))


@pytest.fixture(autouse=True)
def _signals_unchanged() -> Iterator[None]:
    """Fail a test that leaves the SIGTERM/SIGINT handlers or the blocked signals changed (they are put
    back first). An ignored or blocked SIGTERM survives ``exec``: a later test's child processes would
    not stop when told to (the die-with-parent DDP test once failed so). Microseconds per test."""
    before = _signal_state()
    yield
    after = _signal_state()
    if after == before:
        return
    for sig, old in ((signal.SIGTERM, before[0]), (signal.SIGINT, before[1])):
        if old is not None:
            signal.signal(sig, old)
    signal.pthread_sigmask(signal.SIG_SETMASK, before[2])
    pytest.fail(f"the test left signal handling changed (SIGTERM, SIGINT, blocked): {before} -> {after}")
