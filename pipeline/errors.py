"""The pipeline's small error hierarchy: messages say what is wrong and where."""

from __future__ import annotations


class PipelineError(Exception):
    """Root of every error raised by ``pipeline``."""


class RecipeError(PipelineError):
    """A recipe file or override is invalid (unknown key, wrong type, missing file)."""


class DataError(PipelineError):
    """An input artifact (corpus, dataset, task suite) is missing or malformed."""


class TrainingError(PipelineError):
    """Training, export or evaluation could not proceed (e.g. incompatible checkpoint)."""


class DecodingError(PipelineError):
    """A device or decoding setting this machine or model cannot honour."""
