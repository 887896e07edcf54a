"""Dagster runs in the test process here (``dg.materialize``, ``execute_in_process``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pipeline.interrupts import handlers_restored


@pytest.fixture(autouse=True)
def _dagster_signal_handlers() -> Iterator[None]:
    """Dagster's in-process execution leaves SIGTERM mapped to SIGINT's handler (ignored, where SIGINT
    is): put both back after each test, as ``assets.main`` does around its runs."""
    with handlers_restored():
        yield
