"""Device and dtype choices for training (pipeline.quant)."""

from __future__ import annotations

import pytest
import torch

from pipeline import quant
from pipeline.errors import RecipeError


@pytest.mark.parametrize(("native", "expected"), [(True, torch.bfloat16), (False, torch.float32)])
def test_auto_compute_dtype_is_bf16_only_where_native(monkeypatch: pytest.MonkeyPatch, native: bool,
                                                      expected: torch.dtype) -> None:
    # bf16 4-bit compute on an AVX2-only CPU ran the cpu-tiny QLoRA step at 160 tok/s against 828 in fp32
    monkeypatch.setattr(quant, "cpu_has_fast_bf16", lambda: native)
    assert quant.compute_torch_dtype("auto", "cpu") is expected


def test_named_compute_dtypes_are_kept_and_unknown_ones_refused() -> None:
    assert quant.compute_torch_dtype("bfloat16", "cpu") is torch.bfloat16
    assert quant.compute_torch_dtype("float32", "cuda") is torch.float32
    with pytest.raises(RecipeError, match="unknown dtype"):
        quant.compute_torch_dtype("float8", "cpu")
