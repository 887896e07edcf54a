"""Corpus domain: system prompt -> generated pairs -> compiler gate (+ rejections) -> corpus.

``generated_pairs``, ``gated_pairs`` and ``gate_rejections`` are partitioned by source family
(:data:`assets.defs._corpus_partitions.CORPUS_PARTITIONS`); ``corpus`` is not, and reads every
partition (Dagster's all-partitions mapping). Rematerializing one partition regenerates and
re-gates only it. The ``corpus_backfill`` job (:mod:`assets.defs.corpus_backfill`) builds many
partitions in one run, in parallel processes under the multiprocess executor.

Assets are thin: each runs one stage through :func:`pipeline.stages.run_stage` under the
resource's state directory and turns its :class:`~pipeline.stage_result.StageResult` into
metadata. Files live under ``<state>/artifacts/<asset>/``; settings come from the recipe's
``corpus:`` section (resource ``vox_state``). A pipeline error (bad recipe, bad data) fails the
step with its one-line message (:func:`assets.defs._failures.pipeline_failures`).
"""

import base64
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg

from assets.defs import _corpus_partitions as parts
from assets.defs._corpus_partitions import CORPUS_PARTITIONS, counts, md_table
from assets.defs._failures import pipeline_failures
from assets.defs.resources import VoxStateResource

GROUP = "corpus"
OWNERS = ["team:corpus"]
TAGS = {"stage": "corpus"}


def _run(vox_state: VoxStateResource, stage: str) -> Any:
    """Run ``stage`` under the resource's state dir and recipe; pipeline errors fail in one line."""
    from pipeline.stages import run_stage

    with pipeline_failures():
        return run_stage(stage, vox_state.recipe, vox_state.root())


@dg.asset(
    group_name=GROUP, owners=OWNERS, tags=TAGS, kinds={"python", "text"},
    description="The Vox script-writer system prompt (single source of truth: "
                "pipeline/prompts/system_prompt.txt, read via pipeline.prompt.system_prompt()).",
)
def system_prompt(vox_state: VoxStateResource) -> dg.MaterializeResult:
    from pipeline.prompt import system_prompt as read_prompt

    r = _run(vox_state, "system_prompt")
    return dg.MaterializeResult(
        metadata={"source": dg.MetadataValue.path(r["source"]), "chars": r["chars"], "lines": r["lines"],
                  "sha256": r.version, "preview": dg.MetadataValue.md(read_prompt()[:1500])},
        data_version=dg.DataVersion(r.version),
    )


@dg.asset_check(asset=system_prompt, blocking=True,
                description="Every ```vox block compiles in strict mode; retired syntax (vox_lang.find_retired) "
                            "appears only in the one list labelled as forms never to write.")
def system_prompt_is_2026_syntax() -> dg.AssetCheckResult:
    from pipeline.prompt import audit_prompt

    with pipeline_failures():
        audit = audit_prompt()
    return dg.AssetCheckResult(passed=audit.ok, metadata={
        "vox_blocks": audit.vox_blocks, "problems": dg.MetadataValue.md(
            "\n".join(f"- {p}" for p in audit.problems()) or "none")})


@dg.asset(
    deps=[system_prompt], group_name=GROUP, owners=OWNERS, tags=TAGS, kinds={"python", "parquet"},
    partitions_def=CORPUS_PARTITIONS,
    description="Training pairs, one partition per source family: the organic template families, synthetic "
                "script and web pairs, and `preflight` (repair pairs derived from every family's programs). "
                "Each partition is deterministic on its own for the recipe's seed.",
)
def generated_pairs(context: dg.AssetExecutionContext, vox_state: VoxStateResource) -> dg.MaterializeResult:
    s, metadata = parts.generate(vox_state, context.partition_key)
    context.log.info(f"{context.partition_key}: generated {s['rows']} pairs")
    return dg.MaterializeResult(metadata=metadata, data_version=dg.DataVersion(s.version))


@dg.multi_asset(
    specs=[
        dg.AssetSpec("gated_pairs", deps=[generated_pairs], group_name=GROUP, owners=OWNERS, tags=TAGS,
                     kinds={"python", "parquet"}, skippable=True, partitions_def=CORPUS_PARTITIONS,
                     description="Pairs whose ```vox blocks pass the whole front end in strict mode (repair "
                                 "pairs: broken fails with the kind's code, fixed passes), per partition."),
        dg.AssetSpec("gate_rejections", deps=[generated_pairs], group_name=GROUP, owners=OWNERS, tags=TAGS,
                     kinds={"python", "parquet"}, skippable=True, partitions_def=CORPUS_PARTITIONS,
                     description="Rejected pairs: row id, source, family, reason and first diagnostic, per "
                                 "partition (next to the partition's gated pairs)."),
    ],
    check_specs=[dg.AssetCheckSpec(
        parts.GATE_CHECK, asset="gated_pairs", blocking=True,
        description="Blocks the corpus when the share of a partition's generated pairs passing the gate is below "
                    "the recipe's corpus.min_gate_pass_rate (a template or the front end regressed); per "
                    "partition, so one family's regression cannot hide behind the others' rows.")],
    # either asset alone is a valid selection (`--select gated_pairs`, `*corpus`): one gate run
    # writes both files; only the selected assets are reported as materialized
    can_subset=True,
)
def compiler_gate(context: dg.AssetExecutionContext,
                  vox_state: VoxStateResource) -> Iterator[dg.MaterializeResult | dg.AssetCheckResult]:
    """Gate one partition; a partition whose gate keeps nothing fails with its rejection table."""
    s, gated, rejections = parts.gate(vox_state, context.partition_key)
    context.log.info(f"{context.partition_key}: gate kept {s['rows_kept']}/{s['rows_in']} ({s['pass_rate']:.1%})")
    selected = {k.to_user_string() for k in context.selected_asset_keys}
    if "gated_pairs" in selected:
        yield dg.MaterializeResult(asset_key="gated_pairs", metadata=gated, data_version=dg.DataVersion(s.version))
    if "gate_rejections" in selected:
        yield dg.MaterializeResult(asset_key="gate_rejections", metadata=rejections)
    if dg.AssetCheckKey(dg.AssetKey("gated_pairs"), parts.GATE_CHECK) in context.selected_asset_check_keys:
        passed, metadata = parts.gate_rate(s)
        yield dg.AssetCheckResult(asset_key="gated_pairs", check_name=parts.GATE_CHECK, passed=passed,
                                  metadata=metadata)


@dg.asset(
    deps=["gated_pairs"], group_name=GROUP, owners=OWNERS, tags=TAGS, kinds={"python", "parquet"},
    description="The training corpus: source-weighted, deduplicated (exact + MinHash near-duplicates), split "
                "train/heldout by name theme (no instance or name leakage); train.parquet, heldout.parquet, "
                "manifest.json. Its data version is the corpus version (pipeline.corpus_io).",
)
def corpus(context: dg.AssetExecutionContext, vox_state: VoxStateResource) -> dg.MaterializeResult:
    m = _run(vox_state, "corpus")
    png = base64.b64encode((Path(m["path"]) / "token_lengths.png").read_bytes()).decode()
    context.log.info(f"corpus: {m['rows']} (version {m.version})")
    split_fams = m["per_split_family"]
    fams = sorted(set(split_fams["train"]) | set(split_fams["heldout"]))
    return dg.MaterializeResult(metadata={
        "path": dg.MetadataValue.path(m["path"]), "schema_version": m["schema_version"],
        "train_rows": m["rows"]["train"], "heldout_rows": m["rows"]["heldout"],
        "corpus_version": m.version, "heldout_themes": ", ".join(m["heldout_themes"]),
        "rows_per_source": counts(m["per_source"]),
        "rows_per_family": md_table(("family", "train", "heldout"),
                                     [(f, split_fams["train"].get(f, 0), split_fams["heldout"].get(f, 0))
                                      for f in fams]),
        "mix_steps": counts(m["mix_stats"]),
        "gated_rows_per_partition": md_table(("partition", "gated in", "kept", "pass rate"), [
            (k, p["rows_in"], p["rows_kept"], f"{p['pass_rate']:.1%}") for k, p in m["gated_partitions"].items()]),
        "token_lengths": dg.MetadataValue.json(m["token_lengths"]),
        "token_length_histogram": dg.MetadataValue.md(f"![token lengths](data:image/png;base64,{png})"),
        "dagster/row_count": m["rows"]["train"] + m["rows"]["heldout"]},
        data_version=dg.DataVersion(m.version))


@dg.asset_check(asset=corpus, blocking=True,
                description="Schema version and columns; no instance on both sides; no held-out name in train.")
def corpus_split_is_clean(vox_state: VoxStateResource) -> dg.AssetCheckResult:
    from pipeline import paths
    from pipeline.corpus_check import verify_corpus

    with pipeline_failures():
        problems = verify_corpus(paths.artifacts_dir("corpus", vox_state.root()))
    return dg.AssetCheckResult(passed=not problems, metadata={
        "problems": dg.MetadataValue.md("\n".join(f"- {p}" for p in problems) or "none")})
