"""One corpus partition's steps and metadata, shared by the partitioned assets and the backfill job.

The partitions are :data:`pipeline.generators.PARTITIONS` (one per program family, then
``preflight``). :func:`generate` and :func:`gate` run the stage for one partition through
:func:`pipeline.stages.run_stage` and return Dagster metadata an analyst reads per partition (row
counts, pass rate, rejection reasons). A partition whose gate keeps nothing fails with a one-line
:class:`dg.Failure` carrying its rejection table as metadata. This module defines no Dagster
definitions (the defs loader imports every module here).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import dagster as dg

from assets.defs._failures import pipeline_failures
from assets.defs.resources import VoxStateResource
from pipeline.generators import PARTITIONS

#: the partitions of ``generated_pairs``, ``gated_pairs`` and ``gate_rejections``
CORPUS_PARTITIONS: Final = dg.StaticPartitionsDefinition(list(PARTITIONS))
GATE_CHECK: Final = "gate_pass_rate"


def md_table(header: tuple[str, ...], rows: list[tuple[Any, ...]]) -> dg.MetadataValue:
    """A Markdown table metadata value (``|`` in cells escaped)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |" for row in rows]
    return dg.MetadataValue.md("\n".join(lines))


def counts(d: Mapping[str, int]) -> dg.MetadataValue:
    """A ``name | rows`` table."""
    return md_table(("name", "rows"), sorted(d.items()))


def _rejection_rows(rejections: list[dict[str, Any]]) -> dg.MetadataValue:
    return md_table(("id", "source", "family", "reason", "code", "message"),
                    [(r["id"], r["source"], r["family"], r["reason"], r["code"], r["message"]) for r in rejections])


def generate(vox_state: VoxStateResource, partition: str,
             overrides: Mapping[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
    """Generate one partition's pairs: ``(StageResult, metadata)``."""
    from pipeline.stages import run_stage

    with pipeline_failures():
        s = run_stage("generated_pairs", vox_state.recipe, vox_state.root(), partition=partition, overrides=overrides)
    return s, {"path": dg.MetadataValue.path(s["path"]), "rows": s["rows"], "programs": s["programs"],
               "per_source": counts(s["per_source"]), "per_family": counts(s["per_family"]),
               "dagster/row_count": s["rows"]}


def gate(vox_state: VoxStateResource, partition: str,
         overrides: Mapping[str, Any] | None = None) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """Gate one partition: ``(StageResult, gated_pairs metadata, gate_rejections metadata)``.

    Raises:
        dg.Failure: the gate kept none of the partition's pairs (one line; metadata: the rejection
            table's first rows, the reasons and the table's path), or another pipeline error.
    """
    from pipeline.corpus_partitions import GateRejectedAll
    from pipeline.errors import PipelineError
    from pipeline.stages import run_stage

    try:
        s = run_stage("gated_pairs", vox_state.recipe, vox_state.root(), partition=partition, overrides=overrides)
    except GateRejectedAll as exc:
        raise dg.Failure(description=str(exc), metadata={
            "partition": partition, "rows_in": exc.summary["rows_in"], "rows_kept": 0, "pass_rate": 0.0,
            "reasons": counts(exc.summary["reasons"]),
            "rejection_table": dg.MetadataValue.path(exc.summary["rejections_path"]),
            "first_rejections": _rejection_rows(exc.summary["rejections"])}) from None
    except PipelineError as exc:
        raise dg.Failure(description=str(exc)) from None
    kept, rejected = s["rows_kept"], s["rows_in"] - s["rows_kept"]
    gated = {"path": dg.MetadataValue.path(s["path"]), "rows_in": s["rows_in"], "rows_kept": kept,
             "pass_rate": float(s["pass_rate"]), "min_pass_rate": float(s["min_pass_rate"]),
             "front_end_checks": s["checks"], "cache_hits": s["cache_hits"],
             "test_runs": s.get("test_runs", 0), "tests_rejected": s.get("tests_rejected", 0),
             "pass_rate_per_family": md_table(("family", "pass rate"),
                                              [(f, f"{r:.1%}") for f, r in s["family_pass_rates"].items()]),
             "top_codes": md_table(("code", "rejections"), [tuple(c) for c in s["top_codes"]]),
             "dagster/row_count": kept}
    rejections = {"path": dg.MetadataValue.path(s["rejections_path"]), "rows": rejected,
                  "reasons": counts(s["reasons"]), "first_rejections": _rejection_rows(s["rejections"]),
                  "dagster/row_count": rejected}
    return s, gated, rejections


def gate_rate(s: Any) -> tuple[bool, dict[str, Any]]:
    """The blocking gate-rate rule on one partition's gate result: ``(passed, metadata)``.

    Per partition, so a regressed family cannot hide behind the others' rows:
    ``pass_rate >= min_gate_pass_rate`` (:func:`pipeline.corpus.gate_rate_ok`).
    """
    from pipeline.corpus import gate_rate_ok

    rate, minimum = float(s["pass_rate"]), float(s["min_pass_rate"])
    return gate_rate_ok(rate, minimum), {"pass_rate": rate, "min_pass_rate": minimum, "kept": s["rows_kept"],
                                         "rejected": s["rows_in"] - s["rows_kept"]}
