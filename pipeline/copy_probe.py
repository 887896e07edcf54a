"""Does a causal LM copy names from its context? A loss probe on freshly generated documents.

Issue 9's failures (undefined names, requested items not declared) come down to one ability: after
a request names ``bamuts`` or ``is_hifun``, the program must write that name again. A model that
has not learned to copy from its context (no induction heads, Olsson et al. 2022, "In-context
Learning and Induction Heads") predicts a name's second occurrence no better than its first.

The probe runs the model over :func:`pipeline.pretrain_stream.stream_document` documents of a seed
no pretraining stream uses (request + program, every entity, field and variant name a fresh
pseudo-word) and averages the per-token negative log-likelihood, in nats, of the name tokens at
their **first** occurrence and at their **repeat** occurrences. Only the continuation tokens of a
word are scored (its first token is where a new name may start) and only words that are names:
words occurring in fewer than :data:`COMMON_SHARE` of a reference sample of documents (keywords,
builtins and English words are common; pseudo-words are not).

Measured (2026-12-04): the former cpu-tiny base (3.7M params, 300 steps x 8 x 512 tokens) repeat
4.11 vs first 3.91 nats with ``bench/copying.py``, i.e. no copying; on the H200, the same model
pretrained for 1000 x 32 x 512 tokens: repeat 0.02 vs first 2.22 (``pipeline/recipes/cuda-tiny-long.yaml``).
Copying forms as a phase change in tokens, not steps (``bench/copy_sweep.py``): that model at 3M tokens
2.69 vs 3.26, at 4M 0.19 vs 2.67; the present cpu-tiny base (1.1M params, 4M tokens in blocks of
256) 0.42 vs 2.77.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from typing import Any, Final

#: seed of the probe's documents (no recipe's pretraining stream uses it: recipes seed from 0 up)
PROBE_SEED: Final = 0x5EED_C0B1
#: documents scored by default (~10k name tokens; ~2 s for cpu-tiny's base on 2 cores)
PROBE_DOCS: Final = 48
#: a word in at least this share of the reference documents is common, not a name
COMMON_SHARE: Final = 0.02
_REFERENCE_DOCS: Final = 300
_WORD: Final = re.compile(r"[A-Za-z]+")  # snake_case names split at "_": each part is scored alone
_MIN_LEN: Final = 4


def copies_names(first_nll: float, repeat_nll: float) -> bool:
    """Whether probe figures (nats) show copying: repeat tokens cost under half of the first ones
    (a model that copies is far below: 0.02 vs 2.22 measured, see the module docstring)."""
    return repeat_nll < 0.5 * first_nll


@dataclass(frozen=True)
class CopyProbe:
    """Mean per-token NLL (nats) of name tokens at first and at repeat occurrences.

    Attributes:
        first_nll: mean over continuation tokens of a name's first occurrence in a document.
        repeat_nll: mean over continuation tokens of its later occurrences.
        first_tokens: tokens averaged in ``first_nll``.
        repeat_tokens: tokens averaged in ``repeat_nll``.
        docs: documents scored.
    """

    first_nll: float
    repeat_nll: float
    first_tokens: int
    repeat_tokens: int
    docs: int

    @property
    def gain(self) -> float:
        """``first_nll - repeat_nll`` in nats: ~0 when the model does not copy, large when it does."""
        return self.first_nll - self.repeat_nll

    @property
    def copies(self) -> bool:
        """:func:`copies_names` of these figures."""
        return copies_names(self.first_nll, self.repeat_nll)

    def figures(self) -> dict[str, float | None]:
        """``first_nll``, ``repeat_nll`` (``None`` where no token was scored), ``first_tokens``,
        ``repeat_tokens``: the JSON form kept in the base model's stage result."""
        return {"first_nll": None if math.isnan(self.first_nll) else round(self.first_nll, 4),
                "repeat_nll": None if math.isnan(self.repeat_nll) else round(self.repeat_nll, 4),
                "first_tokens": self.first_tokens, "repeat_tokens": self.repeat_tokens}

    def summary(self) -> str:
        """One line for logs and the run summary."""
        verdict = "copies names from its context" if self.copies else "does not copy names from its context"
        return (f"name tokens {self.repeat_nll:.2f} nats on repeat vs {self.first_nll:.2f} first "
                f"({verdict}; {self.docs} documents)")


def common_words(docs: Iterable[str], share: float = COMMON_SHARE) -> frozenset[str]:
    """Words (see :data:`_WORD`) found in at least ``share`` of ``docs``: everything that is not a name."""
    counts: Counter[str] = Counter()
    n = 0
    for doc in docs:
        counts.update(set(_WORD.findall(doc)))
        n += 1
    floor = max(2.0, share * n)
    return frozenset(w for w, c in counts.items() if c >= floor)


@cache
def _reference_common(seed: int) -> frozenset[str]:
    from pipeline.pretrain_stream import stream_document

    return common_words(stream_document(seed, i) for i in range(_REFERENCE_DOCS))


def name_spans(text: str, common: frozenset[str]) -> list[tuple[int, int, bool]]:
    """``(start, end, repeat)`` character spans of the names in ``text``, in order; ``repeat`` is
    whether the same word occurred earlier in ``text``. Words shorter than 4 letters and common
    words (:func:`common_words`) are skipped."""
    seen: set[str] = set()
    out: list[tuple[int, int, bool]] = []
    for m in _WORD.finditer(text):
        word = m.group(0)
        if len(word) < _MIN_LEN or word in common or word.lower() in common:
            continue
        out.append((m.start(), m.end(), word in seen))
        seen.add(word)
    return out


def probe_copying(model: Any, tokenizer: Any, docs: int = PROBE_DOCS, seed: int = PROBE_SEED) -> CopyProbe:
    """Score ``model`` (a ``transformers`` causal LM, any device) with the probe described above.

    Args:
        model: put in eval mode by the caller or not; no gradients are taken.
        tokenizer: a fast tokenizer (offsets are needed to map words to tokens).
        docs: documents to score (``>= 1``).
        seed: the probe stream's seed.

    Returns:
        the :class:`CopyProbe`; a mean over no tokens is ``nan``.

    Raises:
        ValueError: ``docs < 1`` or a tokenizer without offset mappings.
    """
    import torch

    from pipeline.pretrain_stream import stream_document

    if docs < 1:
        raise ValueError(f"probe_copying needs docs >= 1, got {docs}")
    common = _reference_common(seed + 1)
    device = next(model.parameters()).device
    sums, counts = [0.0, 0.0], [0, 0]
    for i in range(docs):
        text = stream_document(seed, i)
        enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
        ids, offsets = enc["input_ids"], enc["offset_mapping"]
        if len(ids) < 2:
            continue
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([ids], device=device)).logits[0, :-1].float()
        nll = torch.nn.functional.cross_entropy(logits, torch.tensor(ids[1:], device=device), reduction="none").cpu()
        tok = 0
        for start, end, repeat in name_spans(text, common):
            while tok < len(ids) and offsets[tok][1] <= start:  # to the token holding the word's first letter
                tok += 1
            j = tok + 1
            while j < len(ids) and offsets[j][1] <= end:  # continuation tokens, predicted from the word's start
                sums[repeat] += float(nll[j - 1])
                counts[repeat] += 1
                j += 1
    nan = float("nan")
    return CopyProbe(first_nll=sums[0] / counts[0] if counts[0] else nan,
                     repeat_nll=sums[1] / counts[1] if counts[1] else nan,
                     first_tokens=counts[0], repeat_tokens=counts[1], docs=docs)
