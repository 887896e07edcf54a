"""The corpus stage: config, and one function per step (generate, gate, mix), each reading and
writing files under the state directory. The Dagster assets in ``assets/defs/corpus.py`` call
these; ``bench/corpus.py`` and tests call them directly.

Files: ``artifacts/generated_pairs/pairs.parquet``, ``artifacts/gated_pairs/pairs.parquet``,
``artifacts/gate_rejections/rejections.parquet``, ``artifacts/corpus/{train,heldout}.parquet``
+ ``manifest.json`` + ``token_lengths.png``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline import atomic
from pipeline.corpus_files import SCHEMA_VERSION, corpus_version, read_rows, write_parquet
from pipeline.errors import RecipeError
from pipeline.recipe_types import Seed
from pipeline.recipes import recipe_path, stage_config


def _default_weights() -> dict[str, float]:
    return {"organic": 0.5, "synthetic_script": 0.15, "synthetic_web": 0.1, "preflight": 0.25}


@dataclass(frozen=True)
class CorpusConfig:
    """Corpus stage settings (recipe section ``corpus:``)."""

    seed: Seed = 1234            # master seed: same seed -> byte-identical Parquet
    pairs: int = 5000                   # pairs generated before the gate, all sources together
    size: int = 4000                    # most rows in the mixed corpus (train + heldout)
    weights: dict[str, float] = field(default_factory=_default_weights)  # share of rows per source
    paraphrase_rate: float = 0.25       # chance a program also appears with its paraphrased prompt
    heldout_fraction: float = 0.1       # share of rows held out (whole name themes)
    near_dup_threshold: float = 0.9     # Jaccard over token 3-shingles; 1.0 turns it off
    max_chars: int = 2400               # drop rows whose prompt + response is longer (short contexts)
    workers: int = 2                    # processes for generation and the gate
    min_gate_pass_rate: float = 0.95    # blocking check: below this share of pairs passing the gate, stop
                                        # (a template or the front end regressed); 0 turns it off


def corpus_config(recipe: str | None = None, overrides: Mapping[str, Any] | None = None) -> CorpusConfig:
    """:class:`CorpusConfig` from defaults < recipe ``corpus:`` section < ``overrides``.

    Raises:
        RecipeError: unknown key or wrongly typed value (see :func:`pipeline.recipes.stage_config`),
            or a value out of range (named as ``<recipe path>: corpus.<key> ...``).
    """
    cfg = stage_config(CorpusConfig, "corpus", recipe, dict(overrides or {}))
    problem = _range_problem(cfg)
    if problem:
        raise RecipeError(f"{recipe_path(recipe)}: corpus.{problem}")
    return cfg


def _range_problem(cfg: CorpusConfig) -> str | None:
    """The first out-of-range setting as ``"<key> must be ..., got <value>"``, else ``None``."""
    from pipeline.generators.base import SOURCES

    for key in ("pairs", "size", "max_chars", "workers"):
        if getattr(cfg, key) < 1:
            return f"{key} must be at least 1, got {getattr(cfg, key)!r}"
    ranges = {"paraphrase_rate": ("in [0, 1]", lambda v: 0 <= v <= 1),
              "heldout_fraction": ("in [0, 1)", lambda v: 0 <= v < 1),
              "near_dup_threshold": ("in (0, 1]", lambda v: 0 < v <= 1),
              "min_gate_pass_rate": ("in [0, 1]", lambda v: 0 <= v <= 1)}
    for key, (bounds, ok) in ranges.items():
        if not ok(getattr(cfg, key)):
            return f"{key} must be {bounds}, got {getattr(cfg, key)!r}"
    w: object = cfg.weights  # a recipe may hold anything here
    if not isinstance(w, Mapping) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in w.values()):
        return f"weights must map source names to numbers, got {w!r}"
    unknown = sorted(str(k) for k in w if k not in SOURCES)
    if unknown:
        return f"weights: unknown source(s) {', '.join(unknown)}; valid: {', '.join(SOURCES)}"
    if any(v < 0 for v in w.values()) or sum(w.values()) <= 0:
        return f"weights must be non-negative and not all zero, got {dict(w)!r}"
    return None


def gate_rate_ok(pass_rate: float, min_pass_rate: float) -> bool:
    """The gate-rate rule (blocking check and CLI alike): a pass rate equal to the minimum passes."""
    return pass_rate >= min_pass_rate


def _pair_rows(pairs: Any) -> list[dict[str, Any]]:
    return [dataclasses.asdict(p) for p in pairs]


def generate(cfg: CorpusConfig, out_dir: Path, partition: str | None = None) -> dict[str, Any]:
    """Generate pairs (all, or one partition's: :data:`pipeline.generators.PARTITIONS`) and write
    ``out_dir/pairs.parquet``.

    A partition is generated on its own: program ``i`` of family ``f`` is seeded from
    ``(cfg.seed, f, i)``, and the plan (programs per family, repair rate) from the whole config, so
    any subset of partitions can be rebuilt and the partitions' rows together are the rows of ``None``.

    Returns:
        Summary: ``path``, ``rows``, ``programs`` (new programs: 0 for the preflight partition, whose
        rows derive from the other partitions' programs), ``sha256``, ``per_source``, ``per_family``,
        ``partition``.
    """
    from pipeline.generators import PREFLIGHT_PARTITION, generate_pairs, plan

    gplan = plan(cfg.pairs, cfg.weights, cfg.seed, cfg.paraphrase_rate)
    pairs = generate_pairs(gplan, workers=cfg.workers, partition=partition)
    path = out_dir / "pairs.parquet"
    digest = write_parquet(_pair_rows(pairs), path, "pairs")
    programs = (gplan.total_programs if partition is None else 0 if partition == PREFLIGHT_PARTITION
                else gplan.programs.get(partition, 0))
    return {"path": str(path), "rows": len(pairs), "programs": programs, "sha256": digest,
            "per_source": dict(sorted(Counter(p.source for p in pairs).items())),
            "per_family": dict(sorted(Counter(p.family for p in pairs).items())), "partition": partition}


def gate(cfg: CorpusConfig, pairs_path: Path, out_dir: Path, rejections_dir: Path,
         partition: str | None = None) -> dict[str, Any]:
    """Gate the generated pairs; write ``out_dir/pairs.parquet`` and ``rejections_dir/rejections.parquet``.

    Returns:
        Summary: ``rows_in``, ``rows_kept``, ``pass_rate``, ``family_pass_rates``, ``top_codes``,
        ``checks``, ``cache_hits``, ``path``, ``rejections_path``, ``rejections`` (first rows),
        ``test_runs`` (programs whose @test functions ran) and ``tests_rejected`` (rows whose tests failed).

    Raises:
        GateRejectedAll: a partition had pairs and the gate kept none. Its rejection table is
            written; its ``pairs.parquet`` and ``result.json`` are removed (no older file survives
            to be mixed).
    """
    from pipeline.corpus_partitions import SHOWN_REJECTIONS, GateRejectedAll, clear_partition
    from pipeline.gate import gate_pairs
    from pipeline.generators.base import Pair

    pairs = [Pair(**r) for r in read_rows(pairs_path, kind="pairs")]
    result = gate_pairs(pairs, workers=cfg.workers)
    path, rej_path = out_dir / "pairs.parquet", rejections_dir / "rejections.parquet"
    rej_rows = [r.as_row() for r in result.rejections]
    write_parquet(rej_rows, rej_path, "rejections")
    summary = {"path": str(path), "rejections_path": str(rej_path), "rows_in": result.total,
               "rows_kept": len(result.passed), "pass_rate": result.pass_rate,
               "family_pass_rates": result.family_pass_rates(), "top_codes": result.top_codes(),
               "checks": result.checks, "cache_hits": result.cache_hits, "rejections": rej_rows[:SHOWN_REJECTIONS],
               "reasons": dict(Counter(r.reason for r in result.rejections)),
               "test_runs": result.test_runs, "tests_rejected": result.tests_rejected, "partition": partition}
    if partition is not None and result.total and not result.passed:
        clear_partition(out_dir)
        raise GateRejectedAll(partition, summary)
    write_parquet(_pair_rows(result.passed), path, "pairs")
    return summary


def build(cfg: CorpusConfig, gated: Path | Sequence[Path], out_dir: Path) -> dict[str, Any]:
    """Mix the gated pairs (one file, or the union of the partitions' files) and write the corpus
    (train/heldout Parquet, manifest, plot). The mix sorts rows by id, so how the pairs are split
    over files never changes the corpus.

    Returns:
        The manifest (also written to ``out_dir/manifest.json``) plus ``plot_png`` bytes.
    """
    from pipeline.mix import MixConfig, approx_tokens, leaked_names, mix
    from pipeline.prompt import system_prompt

    mcfg = MixConfig(cfg.seed, cfg.size, dict(cfg.weights), cfg.heldout_fraction, cfg.near_dup_threshold,
                     cfg.max_chars)
    files = [gated] if isinstance(gated, Path) else list(gated)
    result = mix([row for f in files for row in read_rows(f, kind="pairs")], mcfg, system_prompt())
    hashes = {split: write_parquet(rows, out_dir / f"{split}.parquet", "corpus")
              for split, rows in (("train", result.train), ("heldout", result.heldout))}
    lengths = {s: [approx_tokens(r["prompt"] + "\n" + r["response"]) for r in rows]
               for s, rows in (("train", result.train), ("heldout", result.heldout))}
    png = length_histogram(lengths)
    atomic.write_bytes(out_dir / "token_lengths.png", png)
    everything = result.train + result.heldout
    manifest = {
        "schema_version": SCHEMA_VERSION,
        "rows": {"train": len(result.train), "heldout": len(result.heldout)},
        "content_hash": hashlib.sha256((hashes["train"] + hashes["heldout"]).encode()).hexdigest(),
        "version": corpus_version(hashes["train"], hashes["heldout"]),
        "files": {f"{s}.parquet": {"sha256": h} for s, h in hashes.items()},
        "per_source": _count(everything, "source"),
        "per_family": _count(everything, "family"),
        "per_split_family": {s: _count(rows, "family")
                             for s, rows in (("train", result.train), ("heldout", result.heldout))},
        "mix_stats": result.stats,
        "heldout_themes": list(result.heldout_themes),
        "leaked_names": sorted(leaked_names(result.train, result.heldout_themes)),
        "token_lengths": {s: _quantiles(v) for s, v in lengths.items()},
        "config": {k: (dict(v) if isinstance(v, Mapping) else v) for k, v in dataclasses.asdict(cfg).items()
                   if k != "workers"},
    }
    atomic.write_json(out_dir / "manifest.json", manifest, indent=2, sort_keys=True)
    return {**manifest, "plot_png": png}


def _count(rows: list[dict[str, Any]], key: str) -> dict[str, int]:
    return dict(sorted(Counter(r[key] for r in rows).items()))


def _quantiles(values: list[int]) -> dict[str, int]:
    if not values:
        return {"p50": 0, "p90": 0, "max": 0}
    v = sorted(values)
    return {"p50": v[len(v) // 2], "p90": v[int(len(v) * 0.9)], "max": v[-1]}


def length_histogram(lengths: Mapping[str, list[int]]) -> bytes:
    """A PNG histogram of approximate token lengths (prompt + response) per split."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.2), dpi=80)
    for split, vals in lengths.items():
        if vals:
            ax.hist(vals, bins=40, alpha=0.6, label=f"{split} ({len(vals)})")
    ax.set_xlabel("approx. tokens (prompt + response)")
    ax.set_ylabel("rows")
    ax.legend()
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    plt.close(fig)
    return buf.getvalue()
