"""What each stage does: ``run(config, inputs, out_dir) -> StageResult`` for every stage.

``config`` is the stage's frozen recipe dataclass, ``inputs`` maps each upstream stage to its
:class:`~pipeline.stage_result.StageResult`, ``out_dir`` is ``<state>/artifacts/<stage>/``. Each
function is thin: it calls the one ``pipeline`` module that does the work. The registry, the runner
that resolves those three arguments and the CLI are in :mod:`pipeline.stages`.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import asdict, replace
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


def run_generated_pairs(config: Any, inputs: Inputs, out_dir: Path, *, partition: str) -> StageResult:
    """Generate one partition's pairs (:func:`pipeline.corpus.generate`) into ``out_dir/pairs.parquet``
    (:func:`pipeline.stages.run_stage` runs every partition in turn when asked for the whole stage)."""
    from pipeline.corpus import generate

    s = generate(config, out_dir, partition)
    return StageResult("generated_pairs", s["sha256"][:16], s)


def run_gated_pairs(config: Any, inputs: Inputs, out_dir: Path, *, partition: str) -> StageResult:
    """Gate one partition's generated pairs (:func:`pipeline.corpus.gate`): ``pairs.parquet`` +
    ``rejections.parquet`` in ``out_dir``.

    ``data["min_pass_rate"]`` is the recipe's ``corpus.min_gate_pass_rate`` that the blocking
    ``gate_pass_rate`` check compares ``data["pass_rate"]`` with (per partition).

    Raises:
        GateRejectedAll: the gate kept none of the partition's pairs (see :mod:`pipeline.corpus_partitions`).
    """
    from pipeline.corpus import gate

    s = gate(config, Path(inputs["generated_pairs"]["path"]), out_dir, out_dir, partition)
    return StageResult("gated_pairs", inputs["generated_pairs"].version,
                       {**s, "min_pass_rate": config.min_gate_pass_rate})


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
    from contextlib import nullcontext

    import torch

    from pipeline.eval_policies import eval_generators
    from pipeline.eval_tasks import load_tasks
    from pipeline.eval_workers import BaseSampler, threads_per_worker
    from pipeline.evaluate import run_eval
    from pipeline.quant import pick_device

    adapter = inputs["qlora_adapter"]
    tasks = load_tasks(Path(config.tasks_path) if config.tasks_path else None)  # None: core + user-phrased suites
    device, mode = pick_device(config.device), adapter["system_prompt_mode"]
    workers = config.workers if checker is None else 1  # a checker given here cannot travel to a child
    torch.set_num_threads(threads_per_worker(workers))
    sampler = BaseSampler(adapter["base_model"], config, device, tasks, mode, threads_per_worker(workers)) \
        if workers > 1 else None
    with sampler or nullcontext():
        base, tuned, constrained = eval_generators(adapter, config, device, lazy_base=sampler is not None)
        train_prompts = {r["prompt"] for r in _load_corpus(inputs).train.select(["prompt"]).to_pylist()}
        report = run_eval(base, tuned, tasks, config, mode, checker=checker, train_prompts=train_prompts,
                          out_dir=out_dir, constrained=constrained, base_sampler=sampler)
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
