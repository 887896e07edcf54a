"""Shared fixtures: every test runs with a temporary state dir and user dir, offline."""

from __future__ import annotations

import os
from pathlib import Path

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
