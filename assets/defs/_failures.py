"""Turn pipeline errors into Dagster failures with a one-line message (no traceback).

A :class:`pipeline.errors.PipelineError` (``RecipeError``, ``DataError``, ``TrainingError``) is
a user mistake or bad input with a message that already says what and where; raised inside an
asset it would be shown under a full Python traceback. :func:`pipeline_failures` re-raises it
as ``dg.Failure(description=message)``, which Dagster reports as the step's failure reason.
This module defines no Dagster definitions (the defs loader imports every module here).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import dagster as dg

from pipeline.errors import PipelineError


@contextmanager
def pipeline_failures() -> Iterator[None]:
    """``with pipeline_failures(): ...`` around an asset's body.

    Raises:
        dg.Failure: a :class:`PipelineError` was raised inside; ``description`` is its message.
    """
    try:
        yield
    except PipelineError as exc:
        raise dg.Failure(description=str(exc)) from None
