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
        """The resolved state directory (created): ``state_dir`` if set, else :func:`pipeline.paths.state_dir`.

        Every asset passes this root to :func:`pipeline.stages.run_stage`, so corpus, training,
        evaluation, export and the local MLflow store all land under it.
        """
        return paths.state_dir(self.state_dir or None)


@dg.definitions
def resources() -> dg.Definitions:
    """Resource bindings; values come from the environment at launch."""
    return dg.Definitions(
        resources={
            "vox_state": VoxStateResource(
                state_dir=dg.EnvVar("VOX_STATE_DIR").get_value("") or "",
                recipe=dg.EnvVar("VOX_RECIPE").get_value(DEFAULT_RECIPE) or DEFAULT_RECIPE,
            )
        }
    )
