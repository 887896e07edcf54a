"""Shared resources: where state lives and which recipe runs (``VOX_STATE_DIR``, ``VOX_RECIPE``)."""

from __future__ import annotations

from pathlib import Path

import dagster as dg

from pipeline import paths
from pipeline.recipes import DEFAULT_RECIPE


class VoxStateResource(dg.ConfigurableResource):
    """The pipeline state directory and the active recipe name.

    ``state_dir`` empty means ``pipeline.paths.state_dir()`` (``$VOX_STATE_DIR`` or
    ``<project>/.vox-state``); ``recipe`` is a name under ``pipeline/recipes`` or a YAML path.
    """

    state_dir: str = ""
    recipe: str = DEFAULT_RECIPE

    def root(self) -> Path:
        """The resolved state directory."""
        if self.state_dir:
            path = Path(self.state_dir).resolve()
            path.mkdir(parents=True, exist_ok=True)
            return path
        return paths.state_dir()


@dg.definitions
def resources() -> dg.Definitions:
    """Resource bindings; values come from the environment at launch."""
    return dg.Definitions(
        resources={
            "vox_state": VoxStateResource(
                state_dir=dg.EnvVar("VOX_STATE_DIR").get_value(""),
                recipe=dg.EnvVar("VOX_RECIPE").get_value(DEFAULT_RECIPE),
            )
        }
    )
