"""`vox model` (not built yet)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Attach this command to the `vox` app."""
