"""Stage runners: one call per asset, reading inputs from and writing results to the state dir.

Each runner loads its recipe section, reads the previous stage's ``result.json`` under
``artifacts_dir(<stage>)``, calls the stage module and writes its own ``result.json``
atomically. Dagster assets are thin wrappers around these; ``python -m pipeline.stages``
runs them in order without Dagster.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
from dataclasses import asdict
from pathlib import Path
from typing import Any

from pipeline import paths
from pipeline.errors import DataError

log = logging.getLogger(__name__)

STAGES = ("base_model", "qlora_adapter", "eval_report", "exported_model")


def _write(stage: str, data: dict[str, Any]) -> Path:
    path = paths.artifacts_dir(stage) / "result.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1, default=str))
    os.replace(tmp, path)
    return path


def read_result(stage: str) -> dict[str, Any]:
    """The last ``result.json`` of ``stage``.

    Raises:
        DataError: the stage has not run (names the asset to materialize).
    """
    path = paths.artifacts_dir(stage) / "result.json"
    if not path.is_file():
        raise DataError(f"{path} is missing: materialize the `{stage}` asset first")
    return json.loads(path.read_text())


def _threads() -> None:
    import torch

    torch.set_num_threads(int(os.environ.get("VOX_TORCH_THREADS", "2")))


def run_base_model(recipe: str | None = None) -> Any:
    """Build or resolve the base model (see :mod:`pipeline.base_model`)."""
    from pipeline.base_model import BaseModelConfig, build_base_model
    from pipeline.corpus_io import load_corpus
    from pipeline.recipes import stage_config

    _threads()
    cfg = stage_config(BaseModelConfig, "base_model", recipe)
    corpus = load_corpus()
    rows = corpus.train_rows() if cfg.model == "bootstrap" else []
    result = build_base_model(cfg, rows, paths.artifacts_dir("base_model") / "model", corpus.version)
    _write("base_model", asdict(result))
    return result


def run_train(recipe: str | None = None, callbacks: list[Any] = (), tracker: Any = None) -> Any:
    """Train the QLoRA adapter on the corpus over the base model (see :mod:`pipeline.train`)."""
    from pipeline.corpus_io import load_corpus
    from pipeline.recipes import stage_config
    from pipeline.train import TrainConfig, make_sft_data, train

    _threads()
    base = read_result("base_model")
    cfg = stage_config(TrainConfig, "train", recipe)
    if not cfg.base_model:
        cfg = stage_config(TrainConfig, "train", recipe, {"base_model": base["model"]})
    corpus = load_corpus()
    data = make_sft_data(corpus.train_rows(), corpus.heldout_rows(), cfg, corpus.version, base["fingerprint"])
    result = train(cfg, data, paths.artifacts_dir("qlora_adapter"), recipe_name=str(recipe or ""),
                   callbacks=list(callbacks), tracker=tracker)
    _write("qlora_adapter", {**asdict(result), "corpus": corpus.summary()})
    return result


def run_eval(recipe: str | None = None, checker: Any = None) -> Any:
    """Evaluate base vs adapter on the task suite with the training presentation."""
    from pipeline.corpus_io import load_corpus
    from pipeline.evaluate import TASKS_PATH, EvalConfig, load_tasks, run_eval as evaluate
    from pipeline.generation import HFGenerator, load_model
    from pipeline.quant import pick_device
    from pipeline.recipes import stage_config

    _threads()
    cfg = stage_config(EvalConfig, "eval", recipe)
    adapter = read_result("qlora_adapter")
    tasks = load_tasks(Path(cfg.tasks_path) if cfg.tasks_path else TASKS_PATH)
    device = pick_device(cfg.device)

    def generator(adapter_dir: str | None) -> HFGenerator:
        model, tok = load_model(adapter["base_model"], adapter_dir, device)
        return HFGenerator(model, tok, cfg.max_new_tokens, cfg.temperature, cfg.top_p, cfg.batch_size, cfg.seed)

    train_prompts = {r["prompt"] for r in load_corpus().train.select(["prompt"]).to_pylist()}
    report = evaluate(generator(None), generator(adapter["adapter_dir"]), tasks, cfg, adapter["system_prompt_mode"],
                      checker=checker, train_prompts=train_prompts, out_dir=paths.artifacts_dir("eval_report"))
    _write("eval_report", asdict(report))
    return report


def run_export(recipe: str | None = None) -> Any:
    """Merge the adapter into a 16-bit base and publish the export (see :mod:`pipeline.export`)."""
    from pipeline.export import ExportConfig, export_model
    from pipeline.recipes import load_recipe, recipe_path, stage_config

    _threads()
    cfg = stage_config(ExportConfig, "export", recipe)
    adapter, report = read_result("qlora_adapter"), read_result("eval_report")
    adapter_eval = report["adapter"]
    summary = {"pass_at_1": round(adapter_eval["pass_at_1"], 4),
               "pass_at_k": {"k": adapter_eval["k"], "value": round(adapter_eval["pass_at_k"], 4)},
               "eval_passed": report["passed"]}
    sections = {k: v for k, v in load_recipe(recipe).items() if k != "corpus"}
    result = export_model(adapter["base_model"], adapter["adapter_dir"], paths.exports_dir(), cfg,
                          recipe=recipe_path(recipe).stem, eval_summary=summary, corpus=adapter.get("corpus", {}),
                          recipe_sections=sections, system_prompt_mode=adapter["system_prompt_mode"])
    _write("exported_model", {"path": result.path, "card": result.card,
                              "verify": asdict(result.verify) if result.verify else None})
    return result


def main(argv: list[str] | None = None) -> int:
    """``python -m pipeline.stages [--recipe R] [stage ...]``: run stages in order (default all)."""
    from pipeline.errors import PipelineError

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recipe", default=None)
    parser.add_argument("stages", nargs="*", metavar="STAGE", help=f"any of {', '.join(STAGES)} (default all)")
    args = parser.parse_args(argv)
    unknown = [s for s in args.stages if s not in STAGES]
    if unknown:
        parser.error(f"unknown stage(s) {', '.join(unknown)}; choose from {', '.join(STAGES)}")
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    runners = {"base_model": run_base_model, "qlora_adapter": run_train, "eval_report": run_eval,
               "exported_model": run_export}
    try:
        for stage in args.stages or STAGES:
            log.info("stage %s: %s", stage, runners[stage](args.recipe))
    except PipelineError as exc:
        print(f"error: {exc}")
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
