"""assets.defs._failures: pipeline errors become one-line Dagster failures; others pass through."""

from __future__ import annotations

import dagster as dg
import pytest

from assets.defs._failures import pipeline_failures
from pipeline.errors import DataError, RecipeError


@pytest.mark.parametrize("error", [RecipeError("recipe.yaml: corpus.pairs must be >= 1"), DataError("bad.parquet")])
def test_pipeline_errors_become_failures_with_the_message(error: Exception) -> None:
    with pytest.raises(dg.Failure) as info:
        with pipeline_failures():
            raise error
    assert info.value.description == str(error)
    assert info.value.__cause__ is None and info.value.__suppress_context__  # no chained traceback


def test_other_exceptions_are_not_hidden() -> None:
    with pytest.raises(KeyError):
        with pipeline_failures():
            raise KeyError("a bug stays a bug, with its traceback")
