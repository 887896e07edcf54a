"""Corpus domain: system prompt -> generated pairs -> compiler gate (+ rejections) -> corpus.

Assets are thin: each calls one :mod:`pipeline.corpus` step and turns its summary into
metadata. Files live under ``<state>/artifacts/<asset>/``; settings come from the recipe's
``corpus:`` section (resource ``vox_state``). A pipeline error (bad recipe, bad data) fails the
step with its one-line message (:func:`assets.defs._failures.pipeline_failures`).
"""


import base64
from pathlib import Path
from typing import Any, Mapping

import dagster as dg

from assets.defs._failures import pipeline_failures
from assets.defs.resources import VoxStateResource

GROUP = "corpus"
OWNERS = ["team:corpus"]
TAGS = {"stage": "corpus"}


def _dir(vox_state: VoxStateResource, name: str) -> Path:
    path = vox_state.root() / "artifacts" / name
    path.mkdir(parents=True, exist_ok=True)
    return path


def _cfg(vox_state: VoxStateResource) -> Any:
    from pipeline.corpus import corpus_config

    return corpus_config(vox_state.recipe)


def _md_table(header: tuple[str, ...], rows: list[tuple[Any, ...]]) -> dg.MetadataValue:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |" for row in rows]
    return dg.MetadataValue.md("\n".join(lines))


def _counts(d: Mapping[str, int]) -> dg.MetadataValue:
    return _md_table(("name", "rows"), sorted(d.items()))


@dg.asset(
    group_name=GROUP, owners=OWNERS, tags=TAGS, kinds={"python", "text"},
    description="The Vox script-writer system prompt (single source of truth: "
                "pipeline/prompts/system_prompt.txt, read via pipeline.prompt.system_prompt()).",
)
def system_prompt(vox_state: VoxStateResource) -> dg.MaterializeResult:
    from pipeline.corpus_files import write_bytes
    from pipeline.prompt import SYSTEM_PROMPT_PATH, system_prompt as read_prompt
    import hashlib

    with pipeline_failures():
        text = read_prompt()
    write_bytes(text.encode("utf-8"), _dir(vox_state, "system_prompt") / "system_prompt.txt")
    return dg.MaterializeResult(
        metadata={"source": dg.MetadataValue.path(str(SYSTEM_PROMPT_PATH)), "chars": len(text),
                  "lines": text.count("\n") + 1, "sha256": hashlib.sha256(text.encode()).hexdigest()[:16],
                  "preview": dg.MetadataValue.md(text[:1500])},
        data_version=dg.DataVersion(hashlib.sha256(text.encode()).hexdigest()[:16]),
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
    description="Training pairs from 9 organic template families, synthetic script/web pairs and preflight "
                "repair pairs (deterministic for the recipe's seed).",
)
def generated_pairs(context: dg.AssetExecutionContext, vox_state: VoxStateResource) -> dg.MaterializeResult:
    from pipeline.corpus import generate

    with pipeline_failures():
        s = generate(_cfg(vox_state), _dir(vox_state, "generated_pairs"))
    context.log.info(f"generated {s['rows']} pairs from {s['programs']} programs")
    return dg.MaterializeResult(metadata={
        "path": dg.MetadataValue.path(s["path"]), "rows": s["rows"], "programs": s["programs"],
        "per_source": _counts(s["per_source"]), "per_family": _counts(s["per_family"]),
        "dagster/row_count": s["rows"]}, data_version=dg.DataVersion(s["sha256"][:16]))


@dg.multi_asset(
    specs=[
        dg.AssetSpec("gated_pairs", deps=[generated_pairs], group_name=GROUP, owners=OWNERS, tags=TAGS,
                     kinds={"python", "parquet"},
                     description="Pairs whose ```vox blocks pass the whole front end in strict mode (repair "
                                 "pairs: broken fails with the kind's code, fixed passes)."),
        dg.AssetSpec("gate_rejections", deps=[generated_pairs], group_name=GROUP, owners=OWNERS, tags=TAGS,
                     kinds={"python", "parquet"},
                     description="Rejected pairs: row id, source, family, reason and first diagnostic."),
    ],
)
def compiler_gate(context: dg.AssetExecutionContext, vox_state: VoxStateResource):  # type: ignore[no-untyped-def]
    from pipeline.corpus import gate

    gen = _dir(vox_state, "generated_pairs") / "pairs.parquet"
    with pipeline_failures():
        s = gate(_cfg(vox_state), gen, _dir(vox_state, "gated_pairs"), _dir(vox_state, "gate_rejections"))
    context.log.info(f"gate kept {s['rows_kept']}/{s['rows_in']} ({s['pass_rate']:.1%})")
    yield dg.MaterializeResult(asset_key="gated_pairs", metadata={
        "path": dg.MetadataValue.path(s["path"]), "rows_in": s["rows_in"], "rows_kept": s["rows_kept"],
        "pass_rate": float(s["pass_rate"]), "front_end_checks": s["checks"], "cache_hits": s["cache_hits"],
        "pass_rate_per_family": _md_table(("family", "pass rate"),
                                          [(f, f"{r:.1%}") for f, r in s["family_pass_rates"].items()]),
        "top_codes": _md_table(("code", "rejections"), s["top_codes"]), "dagster/row_count": s["rows_kept"]})
    yield dg.MaterializeResult(asset_key="gate_rejections", metadata={
        "path": dg.MetadataValue.path(s["rejections_path"]), "rows": s["rows_in"] - s["rows_kept"],
        "reasons": _counts(s["reasons"]),
        "first_rejections": _md_table(("id", "source", "family", "reason", "code", "message"),
                                      [(r["id"], r["source"], r["family"], r["reason"], r["code"], r["message"])
                                       for r in s["rejections"]]),
        "dagster/row_count": s["rows_in"] - s["rows_kept"]})


@dg.asset(
    deps=["gated_pairs"], group_name=GROUP, owners=OWNERS, tags=TAGS, kinds={"python", "parquet"},
    description="The training corpus: source-weighted, deduplicated (exact + MinHash near-duplicates), split "
                "train/heldout by name theme (no instance or name leakage); train.parquet, heldout.parquet, "
                "manifest.json.",
)
def corpus(context: dg.AssetExecutionContext, vox_state: VoxStateResource) -> dg.MaterializeResult:
    from pipeline.corpus import build

    out = _dir(vox_state, "corpus")
    with pipeline_failures():
        m = build(_cfg(vox_state), _dir(vox_state, "gated_pairs") / "pairs.parquet", out)
    png = base64.b64encode(m.pop("plot_png")).decode()
    context.log.info(f"corpus: {m['rows']}")
    fams = sorted(set(m["per_split_family"]["train"]) | set(m["per_split_family"]["heldout"]))
    return dg.MaterializeResult(metadata={
        "path": dg.MetadataValue.path(str(out)), "schema_version": m["schema_version"],
        "train_rows": m["rows"]["train"], "heldout_rows": m["rows"]["heldout"],
        "content_hash": m["content_hash"][:16], "heldout_themes": ", ".join(m["heldout_themes"]),
        "rows_per_source": _counts(m["per_source"]),
        "rows_per_family": _md_table(("family", "train", "heldout"),
                                     [(f, m["per_split_family"]["train"].get(f, 0),
                                       m["per_split_family"]["heldout"].get(f, 0)) for f in fams]),
        "mix_steps": _counts(m["mix_stats"]),
        "token_lengths": dg.MetadataValue.json(m["token_lengths"]),
        "token_length_histogram": dg.MetadataValue.md(f"![token lengths](data:image/png;base64,{png})"),
        "dagster/row_count": m["rows"]["train"] + m["rows"]["heldout"]},
        data_version=dg.DataVersion(m["content_hash"][:16]))


@dg.asset_check(asset=corpus, blocking=True,
                description="Schema version and columns; no instance on both sides; no held-out name in train.")
def corpus_split_is_clean(vox_state: VoxStateResource) -> dg.AssetCheckResult:
    from pipeline.corpus_check import verify_corpus

    with pipeline_failures():
        problems = verify_corpus(_dir(vox_state, "corpus"))
    return dg.AssetCheckResult(passed=not problems, metadata={
        "problems": dg.MetadataValue.md("\n".join(f"- {p}" for p in problems) or "none")})


@dg.asset_check(asset="gated_pairs", description="Warns when the gate rejects more than 5% of the generated pairs "
                                                  "(a template or the front end regressed).")
def gate_pass_rate(vox_state: VoxStateResource) -> dg.AssetCheckResult:
    from pipeline.corpus_files import read_rows

    with pipeline_failures():
        kept = len(read_rows(_dir(vox_state, "gated_pairs") / "pairs.parquet", ["id"]))
        rejected = len(read_rows(_dir(vox_state, "gate_rejections") / "rejections.parquet", ["id"]))
    rate = kept / (kept + rejected) if kept + rejected else 0.0
    return dg.AssetCheckResult(passed=rate >= 0.95, severity=dg.AssetCheckSeverity.WARN,
                               metadata={"pass_rate": rate, "kept": kept, "rejected": rejected})
