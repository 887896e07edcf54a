"""The stages and their one runner: every stage is ``run(config, inputs, out_dir) -> StageResult``.

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
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from pipeline import paths
from pipeline.stage_result import StageResult

log = logging.getLogger(__name__)

Inputs = Mapping[str, StageResult]


def _threads() -> None:
    import torch

    torch.set_num_threads(int(os.environ.get("VOX_TORCH_THREADS", "2")))


def corpus_result(corpus_dir: Path) -> StageResult:
    """The corpus as a stage result, read by the one corpus reader (:func:`pipeline.corpus_io.load_corpus`).

    ``version`` is the corpus version; ``data`` holds ``path`` and the row summary.

    Raises:
        DataError: the corpus is missing or malformed (says to materialize ``corpus``).
    """
    from pipeline.corpus_io import load_corpus

    corpus = load_corpus(corpus_dir)
    return StageResult("corpus", corpus.version, {"path": str(corpus_dir), **corpus.summary()})


def _load_corpus(inputs: Inputs) -> Any:
    from pipeline.corpus_io import load_corpus

    return load_corpus(Path(inputs["corpus"]["path"]))


# --- corpus -------------------------------------------------------------------------------------

def run_system_prompt(config: None, inputs: Inputs, out_dir: Path) -> StageResult:
    """Copy the single-source system prompt into ``out_dir`` and audit it (problems in ``data``)."""
    import hashlib

    from pipeline import atomic
    from pipeline.prompt import SYSTEM_PROMPT_PATH, audit_prompt, system_prompt

    text = system_prompt()
    atomic.write_text(out_dir / "system_prompt.txt", text)
    audit = audit_prompt()
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    return StageResult("system_prompt", digest, {
        "source": str(SYSTEM_PROMPT_PATH), "chars": len(text), "lines": text.count("\n") + 1,
        "vox_blocks": audit.vox_blocks, "problems": list(audit.problems())})


def run_generated_pairs(config: Any, inputs: Inputs, out_dir: Path, *, partition: str | None = None) -> StageResult:
    """Generate one partition's pairs (:func:`pipeline.corpus.generate`) into ``out_dir/pairs.parquet``;
    ``partition=None``: every partition in turn (``out_dir/<partition>/``), returning their aggregate."""
    from pipeline.corpus import generate

    if partition is None:
        return _each_partition("generated_pairs", config, out_dir)
    s = generate(config, out_dir, partition)
    return StageResult("generated_pairs", s["sha256"][:16], s)


def run_gated_pairs(config: Any, inputs: Inputs, out_dir: Path, *, partition: str | None = None) -> StageResult:
    """Gate one partition's generated pairs (:func:`pipeline.corpus.gate`): ``pairs.parquet`` +
    ``rejections.parquet`` in ``out_dir``; ``partition=None``: every partition in turn, returning
    their aggregate.

    ``data["min_pass_rate"]`` is the recipe's ``corpus.min_gate_pass_rate`` that the blocking
    ``gate_pass_rate`` check compares ``data["pass_rate"]`` with (per partition).

    Raises:
        GateRejectedAll: the gate kept none of the partition's pairs (see :mod:`pipeline.corpus_partitions`).
    """
    from pipeline.corpus import gate

    if partition is None:
        return _each_partition("gated_pairs", config, out_dir)
    s = gate(config, Path(inputs["generated_pairs"]["path"]), out_dir, out_dir, partition)
    return StageResult("gated_pairs", inputs["generated_pairs"].version,
                       {**s, "min_pass_rate": config.min_gate_pass_rate})


def _each_partition(stage: str, config: Any, out_dir: Path) -> StageResult:
    """Run a partitioned stage for every partition under ``out_dir/<partition>/``; their aggregate."""
    from pipeline.corpus_partitions import PARTITIONS, aggregate

    results = {}
    for key in PARTITIONS:
        part_dir = out_dir / key
        part_dir.mkdir(parents=True, exist_ok=True)
        inputs = {up: read_result(up, partition=key) for up in STAGES[stage].inputs}
        results[key] = STAGES[stage].run(config, inputs, part_dir, partition=key)
        results[key].write(part_dir)
    return aggregate(stage, results)


def run_corpus(config: Any, inputs: Inputs, out_dir: Path) -> StageResult:
    """Mix every partition's gated pairs into the corpus (:func:`pipeline.corpus.build`); the version
    comes from the reader.

    ``data`` is the manifest plus ``path``; the histogram PNG is ``out_dir/token_lengths.png``.

    Raises:
        DataError: a partition is missing, or its gate pass rate is below ``corpus.min_gate_pass_rate``.
    """
    from pipeline.corpus import build, gate_rate_ok

    gated = inputs["gated_pairs"]
    low = [f"{k} {p['pass_rate']:.1%}" for k, p in (gated.get("partitions") or {}).items()
           if not gate_rate_ok(p["pass_rate"], config.min_gate_pass_rate)]
    if low:
        from pipeline.errors import DataError

        raise DataError(f"gated_pairs partition(s) below corpus.min_gate_pass_rate {config.min_gate_pass_rate:.1%}: "
                        f"{', '.join(low)}; fix them and rematerialize those partitions")
    manifest = build(config, [Path(p) for p in gated["paths"]], out_dir)
    manifest.pop("plot_png", None)
    read = corpus_result(out_dir)
    return StageResult("corpus", read.version, {**manifest, **read.data, "gated_partitions": gated["partitions"]})


# --- training, evaluation, export ---------------------------------------------------------------

def run_base_model(config: Any, inputs: Inputs, out_dir: Path) -> StageResult:
    """Build or resolve the base model (:func:`pipeline.base_model.build_base_model`) in ``out_dir/model``."""
    from pipeline.base_model import build_base_model

    _threads()
    corpus = _load_corpus(inputs)
    rows = corpus.train_rows() if config.model == "bootstrap" else []
    result = build_base_model(config, rows, out_dir / "model", corpus.version)
    return StageResult("base_model", result.fingerprint, asdict(result))


def run_qlora_adapter(config: Any, inputs: Inputs, out_dir: Path, *, recipe: str | None = None,
                      callbacks: list[Any] | tuple[Any, ...] = (), tracker: Any = None) -> StageResult:
    """Train the adapter (:func:`pipeline.train.train`, the one training function) on the corpus.

    ``config.base_model`` empty means the ``base_model`` input's model. ``data`` is the
    ``TrainResult`` plus the corpus summary; ``version`` is the run fingerprint.
    """
    from pipeline.distributed import DistributedConfig, world_size
    from pipeline.recipes import stage_config
    from pipeline.train import make_sft_data, train

    dist = stage_config(DistributedConfig, "distributed", recipe, {})
    if dist.num_processes > 1 and world_size() == 1:
        return _launch_training(dist, config, recipe, out_dir)
    _threads()
    base = inputs["base_model"]
    if not config.base_model:
        config = replace(config, base_model=base["model"])
    corpus = _load_corpus(inputs)
    data = make_sft_data(corpus.train_rows(), corpus.heldout_rows(), config, corpus.version, base["fingerprint"])
    result = train(config, data, out_dir, recipe_name=str(recipe or ""), callbacks=list(callbacks), tracker=tracker)
    return StageResult("qlora_adapter", result.fingerprint, {**asdict(result), "corpus": corpus.summary()})


def _launch_training(dist: Any, config: Any, recipe: str | None, out_dir: Path) -> StageResult:
    """Run the training stage in ``dist.num_processes`` processes under ``accelerate launch``.

    The children run ``python -m pipeline.train`` on a copy of the recipe whose ``train:`` section is
    ``config`` (flags included) and no ``distributed:`` section; this process keeps the run lock
    (``VOX_RUN_LOCK_HELD``) and reads rank 0's ``result.json``. The launcher is
    :func:`pipeline.train_launch.launch_training`: a dead worker fails the run within bounded time.

    Raises:
        TrainingError: a worker failed or died: one line naming the rank, how it ended and the
            checkpoint the next run resumes from.
    """
    import yaml

    from pipeline.recipes import load_recipe
    from pipeline.train_launch import launch_training

    sections = {k: v for k, v in load_recipe(recipe).items() if k != "distributed"}
    sections["train"] = {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(config).items()}
    launch_recipe = out_dir / "distributed_recipe.yaml"
    launch_recipe.write_text(yaml.safe_dump(sections, sort_keys=False))
    env = {**os.environ, "VOX_STATE_DIR": str(paths.state_dir()), "VOX_RUN_LOCK_HELD": "1"}
    launch_training(dist, ["-m", "pipeline.train", "--config", str(launch_recipe), "--out", str(out_dir)], out_dir,
                    env=env)
    return StageResult.read(out_dir, "qlora_adapter")


def run_eval_report(config: Any, inputs: Inputs, out_dir: Path, *, checker: Any = None) -> StageResult:
    """Evaluate base vs adapter (:func:`pipeline.evaluate.run_eval`) with the training presentation,
    under every decoding policy :func:`pipeline.eval_policies.eval_generators` provides."""
    from pipeline.eval_policies import eval_generators
    from pipeline.evaluate import load_tasks, run_eval
    from pipeline.quant import pick_device

    _threads()
    adapter = inputs["qlora_adapter"]
    tasks = load_tasks(Path(config.tasks_path) if config.tasks_path else None)  # None: core + user-phrased suites
    base, tuned, constrained = eval_generators(adapter, config, pick_device(config.device))
    train_prompts = {r["prompt"] for r in _load_corpus(inputs).train.select(["prompt"]).to_pylist()}
    report = run_eval(base, tuned, tasks, config, adapter["system_prompt_mode"], checker=checker,
                      train_prompts=train_prompts, out_dir=out_dir, constrained=constrained)
    return StageResult("eval_report", adapter.version, asdict(report))


def run_exported_model(config: Any, inputs: Inputs, out_dir: Path, *, recipe: str | None = None) -> StageResult:
    """Merge the adapter into a 16-bit base and publish it (:func:`pipeline.export.export_model`).

    ``latest.json`` moves only when the eval gate and the round trip both passed
    (``data["published"]``).
    """
    from pipeline.export import export_model
    from pipeline.recipes import load_recipe, recipe_path

    _threads()
    adapter, report = inputs["qlora_adapter"], inputs["eval_report"]
    adapter_eval = report["adapter"]
    verified = (report.get("policies") or {}).get("verified") or {}
    summary = {"pass_at_1": round(adapter_eval["pass_at_1"], 4),
               "pass_at_k": {"k": adapter_eval["k"], "value": round(adapter_eval["pass_at_k"], 4)},
               "eval_passed": report["passed"],
               # the headline above is strict + declares what was asked; these are secondary
               "raw_compile_pass_at_1": round(adapter_eval.get("raw_pass_at_1", 0.0), 4),
               "verified_pass_at_1": round(verified["pass_at_1"], 4) if verified else None,
               "policy": report.get("gate_policy")}
    sections = {k: v for k, v in load_recipe(recipe).items() if k != "corpus"}
    result = export_model(adapter["base_model"], adapter["adapter_dir"], out_dir, config,
                          recipe=recipe_path(recipe).stem, eval_summary=summary, corpus=adapter.get("corpus", {}),
                          recipe_sections=sections, system_prompt_mode=adapter["system_prompt_mode"])
    published = paths.latest_export(require_passed=True, root=out_dir.parents[1]) == Path(result.path)
    return StageResult("exported_model", Path(result.path).name, {
        "path": result.path, "card": result.card, "verify": asdict(result.verify) if result.verify else None,
        "published": published})


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
    with paths.use_state_dir(root) as state:
        config = stage.config(recipe, overrides or {})
        if name in PARTITIONED:
            from pipeline.corpus_partitions import check_partition

            extras["partition"] = partition if partition is None else check_partition(partition)
        whole = name in PARTITIONED and partition is None  # the stage reads each partition's inputs itself
        inputs = {} if whole else {up: read_result(up, state, partition=partition if up in PARTITIONED else None)
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
            if main and not whole:  # a partitioned stage's aggregate is derived, never stored
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
