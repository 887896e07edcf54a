"""Compatibility names for evaluation and export: the decoder itself is :mod:`pipeline.decoding`
(one code path for evaluation and ``vox serve``). Import from there in new code."""

from __future__ import annotations

from typing import Any

from pipeline.decoding import FirstBlockClosed, HFGenerator, eos_ids as _eos_ids, load_model

__all__ = ["FirstBlockClosed", "HFGenerator", "eos_ids", "load_model"]


def eos_ids(model: Any, tokenizer: Any) -> list[int]:
    """Every EOS id of ``model`` and ``tokenizer`` as a list (see :func:`pipeline.decoding.eos_ids`)."""
    return list(_eos_ids(model, tokenizer))
