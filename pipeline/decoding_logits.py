"""Reading and masking a batch's next-token scores in place, for the Vox logits processors.

Both processors (:class:`pipeline.decoding_constraint.GrammarProcessor` and
:class:`pipeline.decoding_names.NameMask`) run once per generated token, where a served
request's decode step of the tiny default model is ~2.3 ms: a torch op's dispatch (~3-5 µs) is
then worth avoiding. On a CPU float tensor these helpers work on its memory through numpy (a
view, no copy); anywhere else (CUDA, bfloat16) through torch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def _numpy_view(scores: Any) -> Any | None:
    """``scores`` as a numpy array sharing its memory, or ``None`` when it is not a CPU float tensor."""
    import torch

    if scores.device.type == "cpu" and scores.dtype in (torch.float32, torch.float64, torch.float16):
        return scores.detach().numpy()
    return None


def finite_scores(scores: Any) -> Any:
    """Bool numpy ``[rows, vocab]``: which of ``scores`` (a ``[rows, vocab]`` tensor) are finite,
    i.e. not masked by an earlier processor. Read straight from the tensor's memory when it is a
    CPU float tensor (a fraction of a microsecond; ``torch.isfinite`` costs ~30 µs between two
    forward passes, measured with ``bench/decoding.py``), else through torch."""
    import torch

    view = _numpy_view(scores)
    if view is not None:
        return np.isfinite(view)
    return torch.isfinite(scores).cpu().numpy()


def row_scores(scores: Any, row: int) -> Any:
    """Float numpy ``[vocab]``: row ``row`` of ``scores`` (``[rows, vocab]``), a view when it is a
    CPU float tensor, else a copy (one device transfer)."""
    view = _numpy_view(scores)
    if view is not None:
        return view[row]
    return scores[row].float().cpu().numpy()


def mask_rows(scores: Any, rows: Sequence[int], masks: Sequence[Any]) -> None:
    """Set ``scores[row, t] = -inf`` for every token ``t`` that ``masks[k]`` (bool numpy
    ``[vocab]``) does not allow, for each ``row = rows[k]``; in place.

    Raises:
        ValueError: ``rows`` and ``masks`` differ in length.
    """
    import torch

    if len(rows) != len(masks):
        raise ValueError(f"{len(rows)} rows for {len(masks)} masks")
    if not rows:
        return
    view = _numpy_view(scores)
    if view is not None:
        if len(rows) == 1:
            np.copyto(view[rows[0]], -np.inf, where=~masks[0])
        elif list(rows) == list(range(view.shape[0])):
            np.copyto(view, -np.inf, where=~np.stack(masks))
        else:
            for row, mask in zip(rows, masks):
                np.copyto(view[row], -np.inf, where=~mask)
        return
    drop = torch.from_numpy(~np.stack(masks)).to(scores.device)
    if list(rows) == list(range(scores.shape[0])):
        scores.masked_fill_(drop, float("-inf"))
    else:
        index = torch.tensor(list(rows), device=scores.device)
        scores[index] = scores[index].masked_fill(drop, float("-inf"))


def add_scores(scores: Any, values: Any) -> None:
    """``scores += values`` in place: ``values`` a float32 numpy ``[rows, vocab]`` array (``-inf``
    where a mask refuses a token, what a rule adds elsewhere). Through numpy on a CPU float tensor
    (one call, a few microseconds), else one torch op on the scores' device."""
    import torch

    view = _numpy_view(scores)
    if view is not None:
        np.add(view, values, out=view, casting="unsafe")
        return
    scores += torch.from_numpy(values).to(device=scores.device, dtype=scores.dtype)
