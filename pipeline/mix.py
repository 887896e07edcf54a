"""Corpus mix: gated pairs -> deduplicated, source-weighted, split ``train``/``heldout`` corpus.

Steps (all deterministic for a given seed): drop over-long rows; exact duplicates (whitespace-
normalised prompt + response); near duplicates across instances (``datasketch`` MinHash LSH over
token 3-shingles, verified by exact Jaccard); sample each source to its weight; hold out whole name
themes (so all rows of one program — paraphrases, broken and fixed variants — fall on one side,
and held-out names never occur in training; train rows that mention a held-out theme's names
are dropped); attach chat ``messages`` with the SSOT system prompt. The written corpus is read
back only through :func:`pipeline.corpus_io.load_corpus`.
"""

from __future__ import annotations

import hashlib
import random
import re
import zlib
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pipeline.errors import DataError
from pipeline.generators.base import SOURCES
from pipeline.generators.themes import THEME_BY_KEY, vocabulary, words

_TOKEN = re.compile(r"\w+|[^\w\s]")
_PERMS = 128  # MinHash permutations (estimate standard error <= 0.045)
#: the LSH finds candidates from ``threshold - _LSH_MARGIN`` up; exact Jaccard decides. With the
#: LSH tuned for the threshold itself, ~20% of pairs right at it were never compared.
_LSH_MARGIN = 0.2


def approx_tokens(text: str) -> int:
    """Token count proxy (words and punctuation marks) used for length statistics."""
    return len(_TOKEN.findall(text))


def _norm(text: str) -> str:
    return " ".join(text.split())


def _shingles(text: str) -> set[int]:
    toks = _TOKEN.findall(text)
    if len(toks) < 3:
        return {zlib.crc32(" ".join(toks).encode())}
    return {zlib.crc32("\x1f".join(toks[i: i + 3]).encode()) for i in range(len(toks) - 2)}


def near_duplicates(rows: Sequence[Mapping[str, Any]], threshold: float, seed: int) -> set[int]:
    """Indices of rows that nearly duplicate an earlier kept row of a *different* instance.

    Rows are compared on token 3-shingles of prompt + response. Candidates come from
    ``datasketch.MinHashLSH`` (128 permutations) tuned for ``threshold - 0.2``, so that pairs at the
    threshold itself are almost never missed; each candidate is confirmed with the exact Jaccard
    similarity >= ``threshold``. Rows of the same instance (paraphrases, repair variants) are
    never merged. ``threshold >= 1`` turns the step off.
    """
    from datasketch import MinHash, MinHashLSH

    if threshold >= 1.0 or not rows:
        return set()
    lsh = MinHashLSH(threshold=max(0.1, threshold - _LSH_MARGIN), num_perm=_PERMS)
    # one set of permutations for all rows; shingles are already 32-bit hashes (crc32)
    permutations = MinHash(num_perm=_PERMS, seed=seed, hashfunc=int, scheme="affine32").permutations
    kept: dict[int, set[int]] = {}
    dropped: set[int] = set()
    for i, row in enumerate(rows):
        sh = _shingles(row["prompt"] + "\n" + row["response"])
        sketch = MinHash(num_perm=_PERMS, hashfunc=int, permutations=permutations, scheme="affine32")
        sketch.update_batch(list(sh))
        for j in sorted(lsh.query(sketch)):
            other = kept[j]
            inter = len(sh & other)
            if rows[j]["instance_id"] != row["instance_id"] and inter / (len(sh) + len(other) - inter) >= threshold:
                dropped.add(i)
                break
        else:
            kept[i] = sh
            lsh.insert(i, sketch)
    return dropped


@dataclass(frozen=True)
class MixConfig:
    """The mix's knobs (a view of :class:`pipeline.corpus.CorpusConfig`)."""

    seed: int
    size: int
    weights: Mapping[str, float]
    heldout_fraction: float
    near_dup_threshold: float
    max_chars: int


@dataclass(frozen=True)
class MixResult:
    """The mixed corpus and what happened on the way.

    Attributes:
        train, heldout: corpus rows (dicts with :data:`pipeline.corpus_files.CORPUS_COLUMNS`).
        stats: counts per step (``input``, ``too_long``, ``exact_dups``, ``near_dups``,
            ``sampled_out``, ``leak_dropped``).
        heldout_themes: the name themes held out.
    """

    train: list[dict[str, Any]]
    heldout: list[dict[str, Any]]
    stats: dict[str, int] = field(default_factory=dict)
    heldout_themes: tuple[str, ...] = ()


def _sample_by_weight(rows: list[dict[str, Any]], weights: Mapping[str, float], size: int,
                      rng: random.Random) -> list[dict[str, Any]]:
    by_src: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_src.setdefault(r["source"], []).append(r)
    active = {s: w for s, w in weights.items() if w > 0}
    total_w = sum(active.values())
    if not active or total_w <= 0:
        raise DataError("corpus.weights: no source has a positive weight")
    share = {s: w / total_w for s, w in active.items()}
    target = min([size] + [len(by_src.get(s, [])) / share[s] for s in share])
    out: list[dict[str, Any]] = []
    for s in sorted(share):
        pool = list(by_src.get(s, []))
        rng.shuffle(pool)
        out += pool[: int(target * share[s])]
    return out


def _split(rows: list[dict[str, Any]], fraction: float, rng: random.Random) -> tuple[set[str], list, list, int]:
    themes = sorted({r["theme"] for r in rows})
    rng.shuffle(themes)
    per_theme = Counter(r["theme"] for r in rows)
    held: set[str] = set()
    n_held = 0
    for t in themes:
        if n_held >= fraction * len(rows) or len(held) >= len(themes) - 1:
            break
        held.add(t)
        n_held += per_theme[t]
    vocab = set().union(*(vocabulary(THEME_BY_KEY[t]) for t in held)) if held else set()
    train, heldout, leaks = [], [], 0
    for r in rows:
        if r["theme"] in held:
            heldout.append(r)
        elif vocab & words(r["prompt"] + "\n" + r["response"]):
            leaks += 1
        else:
            train.append(r)
    return held, train, heldout, leaks


def leaked_names(train: Sequence[Mapping[str, Any]], heldout_themes: Sequence[str]) -> set[str]:
    """Held-out theme names that occur in any train row (empty when the split is clean)."""
    vocab = set().union(*(vocabulary(THEME_BY_KEY[t]) for t in heldout_themes)) if heldout_themes else set()
    found: set[str] = set()
    for r in train:
        found |= vocab & words(r["prompt"] + "\n" + r["response"])
    return found


def mix(pairs: Sequence[Mapping[str, Any]], cfg: MixConfig, system: str) -> MixResult:
    """Mix gated pair rows (dicts with :data:`pipeline.corpus_files.PAIR_COLUMNS`) into a corpus.

    Raises:
        DataError: no rows, or a row's theme or source is unknown.
    """
    if not pairs:
        raise DataError("the gate kept no pairs: nothing to mix (see gate_rejections)")
    for r in pairs:
        if r["theme"] not in THEME_BY_KEY or r["source"] not in SOURCES:
            raise DataError(f"pair {r['id']}: unknown theme {r['theme']!r} or source {r['source']!r}")
    rng = random.Random(cfg.seed)
    rows = sorted((dict(r) for r in pairs), key=lambda r: r["id"])
    stats = {"input": len(rows)}
    short = [r for r in rows if len(r["prompt"]) + len(r["response"]) <= cfg.max_chars]
    stats["too_long"] = len(rows) - len(short)
    seen: set[str] = set()
    unique = []
    for r in short:
        key = hashlib.sha1((_norm(r["prompt"]) + "\0" + _norm(r["response"])).encode()).hexdigest()
        if key not in seen:
            seen.add(key)
            unique.append(r)
    stats["exact_dups"] = len(short) - len(unique)
    near = near_duplicates(unique, cfg.near_dup_threshold, cfg.seed)
    distinct = [r for i, r in enumerate(unique) if i not in near]
    stats["near_dups"] = len(near)
    sampled = _sample_by_weight(distinct, cfg.weights, cfg.size, rng)
    stats["sampled_out"] = len(distinct) - len(sampled)
    held, train, heldout, leaks = _split(sorted(sampled, key=lambda r: r["id"]), cfg.heldout_fraction, rng)
    stats["leak_dropped"] = leaks
    out = {}
    for split, part in (("train", train), ("heldout", heldout)):
        part = sorted(part, key=lambda r: r["id"])
        rng.shuffle(part)
        out[split] = [_corpus_row(r, split, system) for r in part]
    return MixResult(out["train"], out["heldout"], stats, tuple(sorted(held)))


def _corpus_row(r: Mapping[str, Any], split: str, system: str) -> dict[str, Any]:
    return {
        "id": r["id"], "instance_id": r["instance_id"], "split": split, "source": r["source"],
        "family": r["family"], "construct": r["construct"], "difficulty": int(r["difficulty"]),
        "seed": int(r["seed"]), "prompt": r["prompt"], "response": r["response"],
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": r["prompt"]},
                     {"role": "assistant", "content": r["response"]}],
    }
