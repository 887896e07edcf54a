"""The corpus backfill job: build many corpus partitions in one run, in parallel processes.

A Dagster backfill of a partitioned asset is one run per partition; this job instead fans the
chosen partitions out as steps of *one* run (a dynamic output per partition), so the run's
executor decides the parallelism: under the multiprocess executor (the default one, or
``VOX_EXECUTOR=multiprocess``) up to ``max_concurrent`` partitions are generated and gated at once,
each in its own process (run config ``execution.config.multiprocess.max_concurrent``, or
``VOX_MAX_CONCURRENT``; :func:`run_config` fills it in). The largest partition (``preflight``)
is started first.

Each step runs the same functions as the partitioned assets (:mod:`assets.defs._corpus_partitions`)
and reports what they report: materializations of ``generated_pairs``, ``gated_pairs`` and
``gate_rejections`` for its partition (with per-partition metadata) and the ``gate_pass_rate``
check evaluation. A partition whose gate keeps nothing, or whose pass rate is below the minimum,
fails its own step with a one-line reason; the other partitions still finish, and the run fails.
``make run`` (:mod:`assets.main`) runs this job, then the main job over everything downstream.
"""

from collections.abc import Iterator, Sequence
from typing import Any, Final

import dagster as dg

from assets.defs import _corpus_partitions as parts
from assets.defs.resources import VoxStateResource
from pipeline.generators import PARTITIONS, PREFLIGHT_PARTITION

BACKFILL_JOB: Final = "corpus_backfill"
_DATA_VERSION: Final = "dagster/data_version"
#: modules the forkserver imports once, so each partition step starts in well under a second
PRELOAD: Final = ("dagster", "pyarrow.parquet", "assets.preload", "assets.defs.corpus_backfill", "pipeline.stages",
                  "pipeline.corpus", "pipeline.gate", "vox_lang")


class BackfillConfig(dg.Config):
    """Which partitions to build (empty: all of :data:`pipeline.generators.PARTITIONS`)."""

    partitions: list[str] = []


class PartitionStepConfig(dg.Config):
    """Processes each partition step uses inside (0: the recipe's ``corpus.workers``). The default 1
    leaves the parallelism to the executor: one process per partition."""

    workers: int = 1


def ordered(partitions: Sequence[str]) -> list[str]:
    """``partitions`` in build order: ``preflight`` (the largest) first, then :data:`PARTITIONS` order.

    Raises:
        dg.Failure: an unknown partition (one line listing the valid ones).
    """
    unknown = [k for k in partitions if k not in PARTITIONS]
    if unknown:
        raise dg.Failure(description=f"unknown corpus partition(s) {', '.join(unknown)}; "
                                     f"valid: {', '.join(PARTITIONS)}")
    chosen = set(partitions or PARTITIONS)
    return sorted(chosen, key=lambda k: (k != PREFLIGHT_PARTITION, PARTITIONS.index(k)))


@dg.op(out=dg.DynamicOut(str), description="One dynamic output per corpus partition to build.")
def corpus_partition_keys(config: BackfillConfig) -> Iterator[dg.DynamicOutput[str]]:
    for key in ordered(config.partitions):
        yield dg.DynamicOutput(key, mapping_key=key)


@dg.op(description="Generate and gate one corpus partition; report its materializations and gate check.")
def build_corpus_partition(context: dg.OpExecutionContext, config: PartitionStepConfig,
                           vox_state: VoxStateResource, partition: str) -> str:
    overrides = {"workers": config.workers} if config.workers > 0 else None
    s, metadata = parts.generate(vox_state, partition, overrides)
    context.log_event(dg.AssetMaterialization("generated_pairs", partition=partition, metadata=metadata,
                                              tags={_DATA_VERSION: s.version}))
    g, gated, rejections = parts.gate(vox_state, partition, overrides)
    context.log_event(dg.AssetMaterialization("gated_pairs", partition=partition, metadata=gated,
                                              tags={_DATA_VERSION: g.version}))
    context.log_event(dg.AssetMaterialization("gate_rejections", partition=partition, metadata=rejections))
    passed, check = parts.gate_rate(g)
    # log_event records check evaluations too (its annotation lists only the older event types)
    evaluation: Any = dg.AssetCheckEvaluation(asset_key=dg.AssetKey("gated_pairs"), check_name=parts.GATE_CHECK,
                                              passed=passed, metadata=check, partition=partition, blocking=True)
    context.log_event(evaluation)
    context.log.info(f"{partition}: {s['rows']} pairs generated, gate kept {g['rows_kept']} ({g['pass_rate']:.1%})")
    if not passed:
        raise dg.Failure(description=f"gated_pairs partition {partition!r}: gate pass rate {g['pass_rate']:.1%} is "
                                     f"below corpus.min_gate_pass_rate {g['min_pass_rate']:.1%}", metadata=check)
    return partition


@dg.op(description="Log which partitions the backfill built.")
def corpus_partitions_built(context: dg.OpExecutionContext, partitions: list[str]) -> list[str]:
    context.log.info(f"corpus backfill: built {len(partitions)} partition(s): {', '.join(partitions)}")
    return partitions


@dg.job(name=BACKFILL_JOB, tags={"stage": "corpus"},
        description="Generate and gate corpus partitions (default: all) in one run, one step per partition; "
                    "the multiprocess executor runs up to max_concurrent of them in parallel processes.")
def corpus_backfill() -> None:
    corpus_partitions_built(corpus_partition_keys().map(build_corpus_partition).collect())


def backfill_job() -> dg.JobDefinition:
    """The backfill job with the project's resources and executor bound (``dg.reconstructable`` target:
    the multiprocess executor re-creates it in each step's process). Cached: resolving the definitions
    takes seconds, and step processes forked from the preloading forkserver (:mod:`assets.preload`)
    inherit the resolved job."""
    if _Resolved.job is None:
        from assets.definitions import defs

        _Resolved.job = defs().resolve_job_def(BACKFILL_JOB)
    return _Resolved.job


class _Resolved:
    """Holds the resolved job (a class attribute: the defs loader collects definitions held in
    module-level lists, and would see the job twice)."""

    job: dg.JobDefinition | None = None


def run_config(job: dg.JobDefinition, partitions: Sequence[str] = (), max_concurrent: int | None = None,
               workers: int = 1, state: VoxStateResource | None = None) -> dict[str, Any]:
    """Run config for :data:`BACKFILL_JOB`: the partitions, each step's inner processes and, when the job
    runs on Dagster's default executor, ``multiprocess.max_concurrent`` (an executor configured through
    ``VOX_EXECUTOR`` keeps its own config, e.g. ``VOX_MAX_CONCURRENT``).

    ``state`` pins the state directory (resolved to an absolute path) and recipe in the run config, so
    every step process uses this process's, whatever environment it was started with.
    """
    config: dict[str, Any] = {"ops": {"corpus_partition_keys": {"config": {"partitions": list(partitions)}},
                                      "build_corpus_partition": {"config": {"workers": workers}}}}
    if state is not None:
        config["resources"] = {"vox_state": {"config": {"state_dir": str(state.root()), "recipe": state.recipe}}}
    if max_concurrent is not None and job.executor_def is dg.multi_or_in_process_executor:
        config["execution"] = {"config": {"multiprocess": {"max_concurrent": max_concurrent, "start_method": {
            "forkserver": {"preload_modules": list(PRELOAD)}}}}}
    return config
