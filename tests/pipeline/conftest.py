"""Fixtures shared by the training tests of ``tests/pipeline``."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def micro_base(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A micro bootstrap base model (``MICRO_RECIPE``), built once per test module; its path."""
    from pipeline.base_model import BaseModelConfig, build_base_model
    from pipeline.sample_corpus import MICRO_RECIPE, sample_rows

    rows = [r for r in sample_rows(80) if r["split"] == "train"]
    out = tmp_path_factory.mktemp("base") / "model"
    return build_base_model(BaseModelConfig(**MICRO_RECIPE["base_model"]), rows, out, "v1").model
