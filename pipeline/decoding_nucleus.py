"""Nucleus (top-p) filtering without sorting the vocabulary, for the one decoder.

``transformers``' ``TopPLogitsWarper`` sorts every row of the scores (``torch.sort`` of
``[rows, vocab]``): in the evaluation's batches of 96 rows x 2,048 ids on one CPU core that is
~7 ms a step, 15% of a constrained batch (``cProfile`` of ``HFGenerator`` on the default export,
2026-12-04), for a nucleus that at the eval's temperature 0.2 holds a handful of ids.
:class:`Nucleus` keeps exactly the same ids (the smallest set of the most likely ids whose
probability mass reaches ``top_p``, at least one; the rule of Holtzman et al. 2020, "The Curious
Case of Neural Text Degeneration", as the library implements it) from the ``k`` largest scores
(``torch.topk``), falling back to a full sort for a row whose nucleus does not fit in them.

The library applies its temperature warper *after* every custom processor, so :class:`Nucleus`
(a custom processor, run last among ours) divides by the temperature itself to choose the ids
and leaves the kept scores as they are; the library then divides them. The generation config
then carries ``top_p=1`` (:func:`pipeline.decoding._generation_config`) so no second nucleus is cut.
"""

from __future__ import annotations

from typing import Any, Final

from transformers import LogitsProcessor

#: candidates read per row before a full sort is needed (the nucleus of a sharp distribution is
#: a few ids; a row whose ``k`` best ids hold less than ``top_p`` of the mass is sorted in full)
TOP_K: Final = 64


class Nucleus(LogitsProcessor):
    """Set every score outside the row's top-``top_p`` nucleus to ``-inf`` (in place).

    Args:
        top_p: nucleus mass in (0, 1); 1 would keep everything (then do not add this processor).
        temperature: the sampling temperature (> 0) the library applies afterwards; the nucleus
            is chosen on ``scores / temperature``, as the library's own order (temperature,
            then top-p) does.
        k: candidates read with ``torch.topk`` before falling back to a sort (:data:`TOP_K`).

    Raises:
        ValueError: ``top_p`` not in (0, 1] or ``temperature`` not > 0.
    """

    def __init__(self, top_p: float, temperature: float = 1.0, k: int = TOP_K) -> None:
        if not 0.0 < top_p <= 1.0:
            raise ValueError(f"top_p must be in (0, 1], got {top_p}")
        if not temperature > 0.0:
            raise ValueError(f"temperature must be > 0, got {temperature}")
        self.top_p, self.temperature, self.k = float(top_p), float(temperature), max(1, int(k))

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import torch

        if self.top_p >= 1.0:
            return scores
        logits = scores.float() / self.temperature
        k = min(self.k, logits.shape[-1])
        top, index = logits.topk(k, dim=-1)  # descending
        total = torch.logsumexp(logits, dim=-1, keepdim=True)
        probs = torch.exp(top - total)
        mass = probs.cumsum(dim=-1)
        # id i (in descending order) is kept when the mass before it is still below top_p; the
        # library's rule with ties aside: drop the ids whose ascending cumulative mass <= 1 - top_p
        keep = (mass - probs) < self.top_p
        keep[..., 0] = True  # at least one id (min_tokens_to_keep=1)
        short = mass[..., -1] < self.top_p  # rows whose nucleus may reach past the k best ids
        drop = torch.ones_like(scores, dtype=torch.bool)
        drop.scatter_(-1, index, ~keep)
        if bool(short.any()):
            for row in torch.nonzero(short).flatten().tolist():
                drop[row] = _sorted_drop(logits[row], self.top_p)
        return scores.masked_fill_(drop, float("-inf"))


def _sorted_drop(logits: Any, top_p: float) -> Any:
    """Bool ``[vocab]``: the ids outside the nucleus of one row of (tempered) ``logits``, by a
    full sort (the library's computation)."""
    ordered, index = logits.sort(descending=False)
    cumulative = ordered.softmax(dim=-1).cumsum(dim=-1)
    remove = cumulative <= (1 - top_p)
    remove[-1] = False
    return remove.scatter(0, index, remove)
