"""Orchestration: the main job over the whole graph, a weekly retrain, and a change sensor.

The sensor hashes the inputs that change what the model learns — the system prompt, the
generator templates and the recipes — and requests a run of the main job when the digest
moves (the first evaluation only records a baseline).
"""

import hashlib
from pathlib import Path

import dagster as dg

from pipeline.paths import PROJECT_ROOT

MAIN_JOB = "vox_main_job"
#: where the watched paths live (module global so tests can point it elsewhere)
WATCH_ROOT: Path = PROJECT_ROOT
#: what the sensor watches, relative to ``WATCH_ROOT`` (missing paths are skipped)
WATCHED = ("pipeline/prompts", "pipeline/generators", "pipeline/templates", "pipeline/recipes")

vox_main_job = dg.define_asset_job(
    MAIN_JOB, selection=dg.AssetSelection.all(),
    description="The whole graph: system prompt -> corpus -> base model -> QLoRA adapter -> eval -> export.",
)

weekly_retrain = dg.ScheduleDefinition(
    name="weekly_retrain", job=vox_main_job, cron_schedule="0 3 * * 1", execution_timezone="UTC",
    default_status=dg.DefaultScheduleStatus.RUNNING, description="Retrain and re-evaluate every Monday 03:00 UTC.",
)


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


@dg.sensor(job=vox_main_job, minimum_interval_seconds=60, default_status=dg.DefaultSensorStatus.RUNNING,
           description="Requests a main-job run when the system prompt, generator templates or recipes change.")
def inputs_changed(context: dg.SensorEvaluationContext) -> dg.SensorResult | dg.SkipReason:
    digest = inputs_digest(WATCH_ROOT)
    if context.cursor is None:
        return dg.SensorResult(skip_reason="baseline recorded", cursor=digest)
    if digest == context.cursor:
        return dg.SkipReason("prompt, templates and recipes unchanged")
    return dg.SensorResult(run_requests=[dg.RunRequest(run_key=digest, tags={"trigger": "inputs_changed"})],
                           cursor=digest)
