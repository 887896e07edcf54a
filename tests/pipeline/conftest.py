"""Fixtures shared by the training tests of ``tests/pipeline``."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture(scope="module")
def micro_base(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A micro bootstrap base model (``MICRO_RECIPE``), built once per test module; its path."""
    from pipeline.base_model import BaseModelConfig, build_base_model
    from pipeline.sample_corpus import MICRO_RECIPE, sample_rows

    rows = [r for r in sample_rows(80) if r["split"] == "train"]
    out = tmp_path_factory.mktemp("base") / "model"
    return build_base_model(BaseModelConfig(**MICRO_RECIPE["base_model"]), rows, out, "v1").model


@pytest.fixture(scope="session")
def bpe_tokenizer() -> Any:
    """The byte-level BPE tokenizer of ``test_decoding_constraint.py`` (trained here on
    ``examples/``, ChatML specials), for tests of the decoding masks (tests are not a package)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).with_name("test_decoding_constraint.py")
    spec = importlib.util.spec_from_file_location("vox_tests_constraint_fixture", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.tokenizer()
