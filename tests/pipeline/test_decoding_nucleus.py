"""The sort-free nucleus keeps the ids the library's temperature + top-p warpers keep."""

from __future__ import annotations

import pytest
import torch
from transformers import TemperatureLogitsWarper, TopPLogitsWarper

from pipeline.decoding import SamplingParams, _generation_config, sampling_processors
from pipeline.decoding_nucleus import Nucleus


def _library(scores: torch.Tensor, top_p: float, temperature: float) -> torch.Tensor:
    ids = torch.zeros((scores.shape[0], 1), dtype=torch.long)
    return TopPLogitsWarper(top_p)(ids, TemperatureLogitsWarper(temperature)(ids, scores.clone()))


def _ours(scores: torch.Tensor, top_p: float, temperature: float, k: int = 64) -> torch.Tensor:
    ids = torch.zeros((scores.shape[0], 1), dtype=torch.long)
    return TemperatureLogitsWarper(temperature)(ids, Nucleus(top_p, temperature, k)(ids, scores.clone()))


@pytest.mark.parametrize("top_p", [0.5, 0.9, 0.95, 0.999])
@pytest.mark.parametrize("temperature", [0.2, 1.0, 1.7])
@pytest.mark.parametrize("k", [1, 8, 64, 4096])
def test_keeps_the_library_nucleus(top_p: float, temperature: float, k: int) -> None:
    generator = torch.Generator().manual_seed(int(top_p * 1000) + int(temperature * 10) + k)
    scores = torch.randn((12, 2048), generator=generator) * 3
    scores[3, 100:] = float("-inf")  # an earlier mask left a few ids
    scores[4, :] = float("-inf")
    scores[4, 7] = 1.0  # one id left: kept alone
    expected, got = _library(scores, top_p, temperature), _ours(scores, top_p, temperature, k)
    assert torch.equal(torch.isfinite(expected), torch.isfinite(got))
    finite = torch.isfinite(expected)
    assert torch.allclose(expected[finite], got[finite])


def test_a_flat_row_falls_back_to_the_full_sort() -> None:
    scores = torch.zeros((1, 1000))  # uniform: the nucleus of 0.9 holds 900 ids, past k
    kept = torch.isfinite(_ours(scores, 0.9, 1.0, k=16)).sum().item()
    assert kept == torch.isfinite(_library(scores, 0.9, 1.0)).sum().item()
    assert 890 <= kept <= 910


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="top_p"):
        Nucleus(0.0)
    with pytest.raises(ValueError, match="temperature"):
        Nucleus(0.9, 0.0)


def test_the_generation_config_leaves_top_p_to_the_processor() -> None:
    sample = SamplingParams(max_new_tokens=4, temperature=0.7, top_p=0.9)
    assert _generation_config(sample, [0], 0, True, 1).top_p == 1.0
    assert [type(p) for p in sampling_processors(sample)] == [Nucleus]
    assert sampling_processors(SamplingParams(max_new_tokens=4, temperature=0.0, top_p=0.9)) == []
    assert sampling_processors(SamplingParams(max_new_tokens=4, temperature=0.7, top_p=1.0)) == []
