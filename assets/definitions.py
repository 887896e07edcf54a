"""Entry point for ``dagster dev -w workspace.yaml`` and ``dagster ... -m assets.definitions``.

Every module under ``assets/defs/`` is loaded; each domain contributes assets, checks,
jobs, schedules, sensors or resources.
"""

from __future__ import annotations

from pathlib import Path

import dagster as dg


@dg.definitions
def defs() -> dg.Definitions:
    """All project definitions, loaded from ``assets/defs``."""
    return dg.load_from_defs_folder(path_within_project=Path(__file__).parent / "defs")
