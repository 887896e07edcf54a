"""Compatibility names for serving: decoding is :mod:`pipeline.decoding` (the one decoder shared
with evaluation; ``model.generate`` with our processors and criteria). Import from there."""

from __future__ import annotations

from pipeline.decoding import (
    FULL_FORWARD_MODEL_TYPES,
    MIN_SAMPLING_TEMPERATURE,
    SamplingParams,
    cache_is_consistent,
    generate_ids,
)

__all__ = ["FULL_FORWARD_MODEL_TYPES", "MIN_SAMPLING_TEMPERATURE", "SamplingParams", "cache_is_consistent",
           "generate_ids"]
