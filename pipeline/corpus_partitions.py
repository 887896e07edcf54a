"""The corpus partitions: one per program family, plus the preflight (repair) rows.

``generated_pairs`` and ``gated_pairs`` (with its rejection table) are stored per partition, each
partition on its own and deterministic from (corpus seed, family, program index)
(:data:`pipeline.generators.PARTITIONS`)::

    <state>/artifacts/generated_pairs/<partition>/pairs.parquet + result.json
    <state>/artifacts/gated_pairs/<partition>/pairs.parquet + rejections.parquet + result.json

Any subset of partitions can be (re)built independently; the ``corpus`` stage reads every
partition's gated pairs and mixes their union exactly as one table (the mix sorts rows by id, so
the split into partitions never changes the corpus). The whole-stage view (``read_result`` without
a partition, ``python -m pipeline.stages``, the ``make run`` summary) is the aggregate of the
partition results computed here, never a separate file that could go stale.
"""

from __future__ import annotations

import hashlib
import os
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from pipeline import paths
from pipeline.errors import DataError
from pipeline.generators import PARTITIONS, PREFLIGHT_PARTITION
from pipeline.stage_result import StageResult

#: the stages stored per partition
PARTITIONED_STAGES: Final = ("generated_pairs", "gated_pairs")
#: rejection rows shown in an error or in metadata
SHOWN_REJECTIONS: Final = 20
#: a state directory (None: :func:`pipeline.paths.state_dir`'s resolution)
Root = str | os.PathLike[str] | None

__all__ = ["PARTITIONS", "PARTITIONED_STAGES", "PREFLIGHT_PARTITION", "GateRejectedAll", "aggregate",
           "check_partition", "partition_dir", "read_partition", "read_partitions"]


class GateRejectedAll(DataError):
    """The gate kept no pair of a partition: the partition fails (its rejection table is written).

    Attributes:
        partition: the partition key.
        summary: the gate summary (``rows_in``, ``reasons``, ``rejections`` (first rows), ``rejections_path``).
    """

    def __init__(self, partition: str, summary: Mapping[str, Any]) -> None:
        self.partition = partition
        self.summary = dict(summary)
        first = (summary.get("rejections") or [{}])[0]
        where = f" at {first.get('line')}:{first.get('col')}" if first.get("line") else ""
        diag = f"{first.get('code') or first.get('reason', '?')}{where} {first.get('message', '')}".strip()
        reasons = ", ".join(f"{k} {v}" for k, v in sorted((summary.get("reasons") or {}).items()))
        super().__init__(f"gated_pairs partition {partition!r}: the gate rejected all {summary.get('rows_in', 0)} "
                         f"pairs ({reasons}); first: {first.get('id', '?')}: {diag}; "
                         f"rejection table: {summary.get('rejections_path', '?')}")


def check_partition(partition: str) -> str:
    """``partition`` if it is a corpus partition.

    Raises:
        DataError: an unknown partition (lists the valid ones).
    """
    if partition not in PARTITIONS:
        raise DataError(f"unknown corpus partition {partition!r}; valid: {', '.join(PARTITIONS)}")
    return partition


def partition_dir(stage: str, partition: str, root: Root = None, *, create: bool = True) -> Path:
    """``<state>/artifacts/<stage>/<partition>/`` (created unless ``create=False``)."""
    path = paths.artifacts_dir(stage, root, create=create) / check_partition(partition)
    if create:
        path.mkdir(parents=True, exist_ok=True)
    return path


def clear_partition(out_dir: Path) -> None:
    """Remove a partition's gated pairs and result (a failed gate must not leave an older, passing one)."""
    for name in ("pairs.parquet", "result.json"):
        (out_dir / name).unlink(missing_ok=True)


def read_partition(stage: str, partition: str, root: Root = None) -> StageResult:
    """The last result of ``stage`` for one partition.

    Raises:
        DataError: not materialized (names the asset and partition), or unreadable.
    """
    out = partition_dir(stage, partition, root, create=False)
    if not (out / "result.json").is_file():
        raise DataError(f"{out / 'result.json'} is missing: materialize the `{stage}` asset's partition "
                        f"{partition!r} first")
    return StageResult.read(out, stage)


def read_partitions(stage: str, root: Root = None) -> dict[str, StageResult]:
    """Every partition's result of ``stage``, in :data:`PARTITIONS` order.

    Raises:
        DataError: one or more partitions are missing (all named in one line) or unreadable.
    """
    missing = [k for k in PARTITIONS if not (partition_dir(stage, k, root, create=False) / "result.json").is_file()]
    if missing:
        where = paths.artifacts_dir(stage, root, create=False)
        raise DataError(f"{where}: partition(s) {', '.join(missing)} missing: materialize the `{stage}` asset's "
                        f"partitions first (a corpus backfill, or python -m pipeline.stages {stage})")
    return {k: read_partition(stage, k, root) for k in PARTITIONS}


def _version(results: Mapping[str, StageResult]) -> str:
    return hashlib.sha256("\x1f".join(f"{k}={r.version}" for k, r in results.items()).encode()).hexdigest()[:16]


def _merge(dicts: Any) -> dict[str, int]:
    total: Counter[str] = Counter()
    for d in dicts:
        total.update(d)
    return dict(sorted(total.items()))


def aggregate(stage: str, results: Mapping[str, StageResult], root: Root = None) -> StageResult:
    """The whole-stage result of ``stage`` from its partition results (sums, merged counts).

    ``data["paths"]`` lists each partition's Parquet file in partition order; ``data["path"]`` is
    the stage's folder; ``data["partitions"]`` holds the per-partition row counts (and, for the
    gate, pass rates); the version is derived from the partition versions.
    """
    data: dict[str, Any] = {"path": str(paths.artifacts_dir(stage, root, create=False)),
                            "paths": [r["path"] for r in results.values()]}
    if stage == "generated_pairs":
        data |= {"rows": sum(r["rows"] for r in results.values()),
                 "programs": sum(r["programs"] for r in results.values()),
                 "per_source": _merge(r["per_source"] for r in results.values()),
                 "per_family": _merge(r["per_family"] for r in results.values()),
                 "partitions": {k: {"rows": r["rows"]} for k, r in results.items()}}
    else:
        rows_in = sum(r["rows_in"] for r in results.values())
        kept = sum(r["rows_kept"] for r in results.values())
        codes: Counter[str] = Counter()
        for r in results.values():
            codes.update({c: n for c, n in r["top_codes"]})
        family_rates = {f: rate for r in results.values() for f, rate in r["family_pass_rates"].items()}
        data |= {"rows_in": rows_in, "rows_kept": kept, "pass_rate": kept / rows_in if rows_in else 1.0,
                 "min_pass_rate": min((r["min_pass_rate"] for r in results.values()), default=0.0),
                 "family_pass_rates": dict(sorted(family_rates.items())),
                 "top_codes": [list(c) for c in codes.most_common(10)],
                 "reasons": _merge(r["reasons"] for r in results.values()),
                 "rejections": [row for r in results.values() for row in r["rejections"]][:SHOWN_REJECTIONS],
                 **{k: sum(r.get(k, 0) for r in results.values())
                    for k in ("checks", "cache_hits", "test_runs", "tests_rejected")},
                 "partitions": {k: {"rows_in": r["rows_in"], "rows_kept": r["rows_kept"],
                                    "pass_rate": r["pass_rate"]} for k, r in results.items()}}
    return StageResult(stage, _version(results), data)
