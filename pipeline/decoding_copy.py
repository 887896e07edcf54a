"""Copy bias: the decoder can lend a model that cannot copy names the preference for its own locals.

Where an expression starts with a name (a *use* position, :mod:`pipeline.decoding_position`, no
word begun yet), the tokens that begin a name the open bodies declare (parameters, ``let``s, loop
and arm variables: :func:`pipeline.decoding_scan.local_names`) get ``+bias`` added to their logits
(a logits processor: before the temperature divides them, so at the eval's 0.2 the bonus weighs
five times as much as at 1.0). The name mask (:mod:`pipeline.decoding_names`) already removes what cannot
resolve; this re-ranks what is left toward the program's own values, which is what a model that
copies from its context does by itself.

Why: a base model that does not copy names from its context (``bench/copying.py``; the former
3.7M cpu-tiny base at 1.2M pretraining tokens: name tokens cost 4.11 nats on their repeat vs 3.91 on
their first occurrence) writes ``str(``, ``range(`` or ``match`` at ``for v in`` instead of the list
parameter it was given, and the body derails from there. For that base the bias raised pass@1 by
0.03-0.04. The present cpu-tiny base copies by itself (0.42 vs 2.77 nats) and the bias no longer
helps it, so :data:`COPY_BIAS` is ``0`` (off; see its comment); for a base that does not copy,
set ``NameMask.copy_bias`` (2.0 was best there).
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from pipeline.decoding_namespace import VALUE, namespace
from pipeline.decoding_position import USE, Position
from pipeline.decoding_tokens import TokenTable

#: logit bonus, nats, for tokens that begin a local name at a value position (0: off). Measured
#: with ``bench/retries.py --rounds 4``, seeds 0 and 1, adapter pass@1 / verified best-of-4:
#: on the former non-copying 3.7M default (off 0.321 / 0.294 pass@1) 2.0 gave 0.350 / 0.338 and 4.0
#: 0.341 / 0.338; 8.0 lowered the first pass. On the present 1.1M default that copies (2026-12-04):
#: off 0.529, 0.512 / 0.725, 0.667; 1.0 0.522, 0.517 / 0.657, 0.716; 2.0 0.537, 0.480 / 0.657,
#: 0.676; E0401 under 3% of completed blocks either way: no gain, so off.
COPY_BIAS: Final = 0.0


_CACHE_MAX: Final = 512


def copy_ids(table: TokenTable, code: str, pos: Position, local: frozenset[str],
             cache: dict[tuple[bool, bool, frozenset[str]], Any]) -> Any | None:
    """Int64 ids ``[n]`` to bias at the end of ``code`` (an open block; ``pos`` its
    :func:`~pipeline.decoding_position.position`) toward ``local`` names, or ``None`` when there
    are none: no value may start here, glued on a word begun or after whitespace
    (:func:`pipeline.decoding_namespace.namespace`: a type, an actor or a declaration is no place
    for a local), or no local is declared. Cached in ``cache`` (the caller's, one per request: the
    local sets are the request's own)."""
    if not local:
        return None
    head = code[:len(code) - len(pos.partial)]
    glued = pos.cont == USE and not pos.partial and namespace(head) == VALUE  # no word begun yet
    fresh = pos.fresh == USE and namespace(code if code[-1:] in (" ", "\t") else code + " ") == VALUE
    if not (glued or fresh):
        return None

    key = (glued, fresh, local)
    found = cache.get(key)
    if found is None:
        if len(cache) >= _CACHE_MAX:
            cache.clear()
        ids = (table.name_prefix_ids(local) if glued else []) + \
            (table.name_prefix_ids(local, glued=False) if fresh else [])
        found = cache[key] = np.unique(np.asarray(ids, dtype=np.int64))
    return found if len(found) else None


def add_bias(scores: Any, rows: list[int], ids: list[Any], bias: float) -> None:
    """``scores[row, ids] += bias`` for each row (``scores``: torch ``[batch, vocab]``, in place;
    ids past the scores' width are dropped)."""
    import torch

    width = scores.shape[1]
    for row, row_ids in zip(rows, ids):
        keep = row_ids[row_ids < width]
        if len(keep):
            scores[row, torch.from_numpy(keep).to(scores.device)] += bias
