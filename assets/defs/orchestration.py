"""Orchestration: the main job, a weekly retrain, a change sensor, and the corpus-then-main chain.

A retrain is two runs: the corpus backfill (every corpus partition, in parallel processes:
:mod:`assets.defs.corpus_backfill`), then the main job over everything that is not partitioned
(system prompt, corpus mix, base model, adapter, eval, export) — ``make run`` does the same. The
weekly schedule and the change sensor request the backfill; ``main_after_corpus_backfill``
requests the main job when a backfill succeeds. The change sensor hashes the inputs that change
what the model learns — the system prompt, the generator templates and the recipes — and
requests a retrain when the digest moves (the first evaluation only records a baseline).
"""

import hashlib
from pathlib import Path

import dagster as dg

from pipeline.paths import PROJECT_ROOT

MAIN_JOB = "vox_main_job"
#: the corpus backfill job (defined in :mod:`assets.defs.corpus_backfill`; named here, not imported,
#: so the defs loader sees the job once)
BACKFILL_JOB = "corpus_backfill"
#: the partitioned corpus assets: built by the backfill (or one partition at a time), not by the main job
PARTITIONED_ASSETS = ("generated_pairs", "gated_pairs", "gate_rejections")
#: where the watched paths live (module global so tests can point it elsewhere)
WATCH_ROOT: Path = PROJECT_ROOT
#: what the sensor watches, relative to ``WATCH_ROOT`` (missing paths are skipped)
WATCHED = ("pipeline/prompts", "pipeline/generators", "pipeline/templates", "pipeline/recipes")

vox_main_job = dg.define_asset_job(
    MAIN_JOB, selection=dg.AssetSelection.all() - dg.AssetSelection.assets(*PARTITIONED_ASSETS),
    description="Everything but the corpus partitions (built first by the corpus_backfill job): system prompt -> "
                "corpus mix of all partitions -> base model -> QLoRA adapter -> eval -> export.",
)

weekly_retrain = dg.ScheduleDefinition(
    name="weekly_retrain", job_name=BACKFILL_JOB, cron_schedule="0 3 * * 1", execution_timezone="UTC",
    default_status=dg.DefaultScheduleStatus.RUNNING,
    description="Retrain and re-evaluate every Monday 03:00 UTC (corpus backfill, then the main job).",
)


@dg.run_status_sensor(run_status=dg.DagsterRunStatus.SUCCESS, request_job=vox_main_job,
                      default_status=dg.DefaultSensorStatus.RUNNING,
                      description="Requests the main job when a corpus backfill run succeeds.")
def main_after_corpus_backfill(context: dg.RunStatusSensorContext) -> dg.RunRequest | dg.SkipReason:
    if context.dagster_run.job_name != BACKFILL_JOB:
        return dg.SkipReason(f"{context.dagster_run.job_name} is not the corpus backfill")
    return dg.RunRequest(run_key=f"after-{context.dagster_run.run_id}",
                         tags={"trigger": "corpus_backfill", "corpus_backfill_run": context.dagster_run.run_id})


def inputs_digest(root: Path, watched: tuple[str, ...] = WATCHED) -> str:
    """sha256 over (path, bytes) of every file under the watched paths, sorted."""
    h = hashlib.sha256()
    for rel in watched:
        base = root / rel
        files = sorted(p for p in base.rglob("*") if p.is_file() and "__pycache__" not in p.parts) \
            if base.is_dir() else ([base] if base.is_file() else [])
        for path in files:
            h.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:20]


@dg.sensor(job_name=BACKFILL_JOB, minimum_interval_seconds=60, default_status=dg.DefaultSensorStatus.RUNNING,
           description="Requests a retrain (corpus backfill, then the main job) when the system prompt, generator "
                       "templates or recipes change.")
def inputs_changed(context: dg.SensorEvaluationContext) -> dg.SensorResult | dg.SkipReason:
    digest = inputs_digest(WATCH_ROOT)
    if context.cursor is None:
        return dg.SensorResult(skip_reason="baseline recorded", cursor=digest)
    if digest == context.cursor:
        return dg.SkipReason("prompt, templates and recipes unchanged")
    return dg.SensorResult(run_requests=[dg.RunRequest(run_key=digest, tags={"trigger": "inputs_changed"})],
                           cursor=digest)
