"""The stages and their one runner: every stage is ``run(config, inputs, out_dir) -> StageResult``
(the ``run`` functions are in :mod:`pipeline.stage_runs`).

``config`` is the stage's frozen recipe dataclass, ``inputs`` maps each upstream stage to its
:class:`~pipeline.stage_result.StageResult`, ``out_dir`` is ``<state>/artifacts/<stage>/``.
:func:`run_stage` resolves those three (the state directory only through :mod:`pipeline.paths`),
holds the run-directory lock for training and export, calls the stage and writes its
``result.json``. Dagster assets (``assets/defs``), ``python -m pipeline.stages`` and
``python -m pipeline.train`` all go through :func:`run_stage`; ``assets/main.py`` reads the same
results with :func:`read_result`.
"""

from __future__ import annotations

import argparse
import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline import paths
from pipeline.stage_result import StageResult
from pipeline.stage_runs import (
    corpus_result,
    run_base_model,
    run_corpus,
    run_eval_report,
    run_exported_model,
    run_gated_pairs,
    run_generated_pairs,
    run_qlora_adapter,
    run_system_prompt,
)

log = logging.getLogger(__name__)

Inputs = Mapping[str, StageResult]


# --- the registry and the runner ----------------------------------------------------------------

@dataclass(frozen=True)
class Stage:
    """One stage: its recipe config loader, upstream stages, ``run`` function and whether it locks."""

    name: str
    config: Callable[[str | None, Mapping[str, Any]], Any]
    inputs: tuple[str, ...]
    run: Callable[..., StageResult]
    locked: bool = False  # one runner at a time per out_dir (training, export)


def _corpus_cfg(recipe: str | None, overrides: Mapping[str, Any]) -> Any:
    from pipeline.corpus import corpus_config

    return corpus_config(recipe, overrides)


def _section(module: str, cls: str, section: str) -> Callable[[str | None, Mapping[str, Any]], Any]:
    def load(recipe: str | None, overrides: Mapping[str, Any]) -> Any:
        import importlib

        from pipeline.recipes import stage_config

        return stage_config(getattr(importlib.import_module(module), cls), section, recipe, dict(overrides))
    return load


STAGES: dict[str, Stage] = {s.name: s for s in (
    Stage("system_prompt", lambda recipe, overrides: None, (), run_system_prompt),
    Stage("generated_pairs", _corpus_cfg, (), run_generated_pairs),
    Stage("gated_pairs", _corpus_cfg, ("generated_pairs",), run_gated_pairs),
    Stage("corpus", _corpus_cfg, ("gated_pairs",), run_corpus),
    Stage("base_model", _section("pipeline.base_model", "BaseModelConfig", "base_model"), ("corpus",),
          run_base_model, locked=True),
    Stage("qlora_adapter", _section("pipeline.train", "TrainConfig", "train"), ("corpus", "base_model"),
          run_qlora_adapter, locked=True),
    Stage("eval_report", _section("pipeline.evaluate", "EvalConfig", "eval"), ("corpus", "qlora_adapter"),
          run_eval_report),
    Stage("exported_model", _section("pipeline.export", "ExportConfig", "export"), ("qlora_adapter", "eval_report"),
          run_exported_model, locked=True),
)}
#: extra keyword arguments each stage's ``run`` accepts (beyond config, inputs, out_dir)
_EXTRAS = {"qlora_adapter": {"recipe", "callbacks", "tracker"}, "eval_report": {"checker"},
           "exported_model": {"recipe"}, "generated_pairs": {"partition"}, "gated_pairs": {"partition"}}
#: stages stored per corpus partition (:mod:`pipeline.corpus_partitions`)
PARTITIONED = frozenset({"generated_pairs", "gated_pairs"})


def read_result(stage: str, root: str | os.PathLike[str] | None = None, *,
                partition: str | None = None) -> StageResult:
    """The last result of ``stage`` under the state dir ``root`` (the corpus via the corpus reader).

    A partitioned stage (:data:`PARTITIONED`) gives one partition's result, or without ``partition``
    the aggregate of all of them (:func:`pipeline.corpus_partitions.aggregate`).

    Raises:
        DataError: the stage (or a partition of it) has not run (names the asset to materialize), or
            its result is unreadable.
    """
    if stage in PARTITIONED:
        from pipeline.corpus_partitions import aggregate, read_partition, read_partitions

        if partition is not None:
            return read_partition(stage, partition, root)
        return aggregate(stage, read_partitions(stage, root), root)
    out = paths.artifacts_dir(stage, root, create=False)
    return corpus_result(out) if stage == "corpus" else StageResult.read(out, stage)


def serve_anyway(adapter: StageResult | Mapping[str, Any]) -> str:
    """The commands that serve the base model with a trained adapter the release gate kept from export.

    Args:
        adapter: a ``qlora_adapter`` result (``base_model``, ``adapter_dir``).

    Returns:
        ```vox serve <base> --adapter <dir>`, then `vox chat --model free``` (backquoted, one line).
    """
    return (f"`.venv/bin/vox serve {adapter['base_model']} --adapter {adapter['adapter_dir']}`, "
            "then `.venv/bin/vox chat --model free`")


def gate_failure(root: str | os.PathLike[str] | None = None) -> str | None:
    """Why nothing was exported, when the last eval of the current adapter failed the release gate.

    Reads the ``eval_report`` and ``qlora_adapter`` results under the state dir ``root``.

    Returns:
        ``"the last eval failed the release gate (<reason>); serve its adapter anyway: <commands>"``
        (:func:`serve_anyway`), or ``None``: no eval yet, it passed, it evaluated an adapter that has
        been retrained since, or that adapter is gone.
    """
    from pipeline.errors import DataError

    try:
        report, adapter = read_result("eval_report", root), read_result("qlora_adapter", root)
    except DataError:
        return None
    if report.get("passed", True) or report.version != adapter.version \
            or not adapter.get("adapter_dir") or not Path(adapter["adapter_dir"]).is_dir():
        return None
    return (f"the last eval failed the release gate ({report.get('reason') or 'see eval_report'}); "
            f"serve its adapter anyway: {serve_anyway(adapter)}")


def run_stage(name: str, recipe: str | None = None, root: str | os.PathLike[str] | None = None, *,
              overrides: Mapping[str, Any] | None = None, out_dir: Path | None = None,
              partition: str | None = None, **extras: Any) -> StageResult:
    """Run one stage under the state dir ``root``: config from ``recipe`` (< ``overrides``), inputs
    from the upstream results, output in ``<root>/artifacts/<name>/`` plus its ``result.json``.

    Args:
        name: a key of :data:`STAGES`.
        recipe: recipe name or YAML path (``None``: ``$VOX_RECIPE`` or ``cpu-tiny``).
        root: the state directory (``None``: :func:`pipeline.paths.state_dir`'s resolution).
        overrides: values over the recipe section (CLI flags).
        out_dir: write here instead of ``<root>/artifacts/<name>/`` (e.g. ``python -m pipeline.train --out``).
        partition: for a partitioned stage (:data:`PARTITIONED`), the one corpus partition to build
            (in ``<root>/artifacts/<name>/<partition>/``, inputs from the same partition); ``None``
            builds every partition and returns their aggregate (written per partition only).
        extras: ``recipe``-independent objects a stage accepts (``tracker``, ``callbacks``, ``checker``).

    Raises:
        PipelineError: bad recipe, missing input, a failed stage, or a busy run directory.
    """
    stage = STAGES[name]
    unknown = set(extras) - _EXTRAS.get(name, set())
    if unknown:
        raise TypeError(f"stage {name} takes no {', '.join(sorted(unknown))}")
    if "recipe" in _EXTRAS.get(name, set()):
        extras["recipe"] = recipe
    if partition is not None and name not in PARTITIONED:
        raise TypeError(f"stage {name} is not partitioned")
    if name in PARTITIONED and partition is None:  # the whole stage: every partition in turn, then their aggregate
        from pipeline.corpus_partitions import PARTITIONS, aggregate

        return aggregate(name, {key: run_stage(name, recipe, root, overrides=overrides, partition=key,
                                               out_dir=out_dir / key if out_dir else None, **extras)
                                for key in PARTITIONS})
    with paths.use_state_dir(root) as state:
        config = stage.config(recipe, overrides or {})
        if partition is not None:
            from pipeline.corpus_partitions import check_partition

            extras["partition"] = check_partition(partition)
        inputs = {up: read_result(up, state, partition=partition if up in PARTITIONED else None)
                  for up in stage.inputs}
        out = out_dir or paths.artifacts_dir(name, state)
        if partition is not None and out_dir is None:
            out = out / partition
        out.mkdir(parents=True, exist_ok=True)
        from pipeline.distributed import is_main_process

        main = is_main_process()  # under `accelerate launch`, rank 0 holds the lock and writes result.json
        if stage.locked and main and not os.environ.get("VOX_RUN_LOCK_HELD"):  # held by a launching parent
            from pipeline.run_lock import run_lock

            with run_lock(out, name):
                result = stage.run(config, inputs, out, **extras)
                result.write(out)
        else:
            result = stage.run(config, inputs, out, **extras)
            if main:
                result.write(out)
    return result


def main(argv: list[str] | None = None) -> int:
    """``python -m pipeline.stages [--recipe R] [STAGE ...]``: run stages in order (default all).

    Exit status: 0 on success; 2 on a pipeline error (printed in one line) or when a stage's own
    verification fails (prompt audit, export round trip).
    """
    from pipeline.errors import PipelineError

    parser = argparse.ArgumentParser(prog="python -m pipeline.stages", description=__doc__.splitlines()[0])
    parser.add_argument("--recipe", default=None, help="recipe name or YAML path (default $VOX_RECIPE or cpu-tiny)")
    parser.add_argument("stages", nargs="*", metavar="STAGE", help=f"any of {', '.join(STAGES)} (default all)")
    args = parser.parse_args(argv)
    unknown = [s for s in args.stages if s not in STAGES]
    if unknown:
        parser.error(f"unknown stage(s) {', '.join(unknown)}; choose from {', '.join(STAGES)}")
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    chosen = [s for s in STAGES if s in args.stages] if args.stages else list(STAGES)
    try:
        from pipeline.recipes import validate_recipe

        validate_recipe(args.recipe)  # the whole recipe, before any stage runs
        for name in chosen:
            result = run_stage(name, args.recipe)
            log.info("stage %s: version %s -> %s", name, result.version or "-", paths.artifacts_dir(name))
            problem = _verification_problem(result)
            if problem:
                print(f"error: {name}: {problem}")
                return 2
    except PipelineError as exc:
        print(f"error: {exc}")
        return 2
    return 0


def _verification_problem(result: StageResult) -> str | None:
    """A stage's own failed verification in one line (the Dagster checks' CLI counterpart), else None."""
    from pipeline.corpus import gate_rate_ok

    if result.stage == "system_prompt" and result["problems"]:
        return f"the system prompt fails its audit: {result['problems'][0]}"
    if result.stage == "gated_pairs" and not gate_rate_ok(result["pass_rate"], result["min_pass_rate"]):
        return (f"gate pass rate {result['pass_rate']:.1%} is below "
                f"corpus.min_gate_pass_rate {result['min_pass_rate']:.1%}")
    low = [f"{k} {p['pass_rate']:.1%}" for k, p in (result.get("partitions") or {}).items()
           if result.stage == "gated_pairs" and not gate_rate_ok(p["pass_rate"], result["min_pass_rate"])]
    if low:
        return (f"gate pass rate below corpus.min_gate_pass_rate {result['min_pass_rate']:.1%} "
                f"in partition(s) {', '.join(low)}")
    if result.stage == "eval_report" and not result["passed"]:
        return f"release gate failed: {result['reason']}"
    if result.stage == "exported_model" and not (result["verify"] or {}).get("passed", True):
        return f"the export's round trip failed: {result['verify']['detail']}"
    return None


if __name__ == "__main__":
    raise SystemExit(main())
