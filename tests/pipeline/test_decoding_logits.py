"""The in-place score helpers the Vox logits processors share (pipeline/decoding_logits.py)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from pipeline.decoding_logits import add_scores, finite_scores, mask_rows


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("rows", [[0], [1], [0, 2], [0, 1, 2]])
def test_mask_rows_sets_disallowed_tokens_to_minus_infinity_in_place(dtype: torch.dtype, rows: list[int]) -> None:
    scores = torch.arange(15, dtype=torch.float32).reshape(3, 5).to(dtype)
    before = scores.clone()
    masks = [np.array([True, False, True, False, k % 2 == 0]) for k in range(len(rows))]
    mask_rows(scores, rows, masks)
    for row in range(3):
        if row not in rows:
            assert torch.equal(scores[row], before[row])  # rows not named are untouched
            continue
        mask = masks[rows.index(row)]
        assert torch.equal(torch.isfinite(scores[row]), torch.from_numpy(mask))
        assert torch.equal(scores[row][torch.from_numpy(mask)], before[row][torch.from_numpy(mask)])
    assert finite_scores(scores).tolist() == torch.isfinite(scores).tolist()


def test_mask_rows_checks_its_arguments_and_accepts_nothing() -> None:
    scores = torch.zeros(2, 4)
    mask_rows(scores, [], [])
    assert torch.equal(scores, torch.zeros(2, 4))
    with pytest.raises(ValueError, match="2 rows for 1 masks"):
        mask_rows(scores, [0, 1], [np.ones(4, dtype=np.bool_)])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_add_scores_masks_and_adds_in_place(dtype: torch.dtype) -> None:
    scores = torch.arange(8, dtype=torch.float32).reshape(2, 4).to(dtype)
    values = np.array([[0.0, -np.inf, 2.0, 0.0], [-np.inf, -np.inf, 0.0, 0.0]], dtype=np.float32)
    same = scores
    add_scores(scores, values)
    assert same is scores and scores.dtype == dtype
    assert scores.float().tolist() == [[0.0, -np.inf, 4.0, 3.0], [-np.inf, -np.inf, 6.0, 7.0]]
