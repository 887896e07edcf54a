"""The main job (``make run``): materialize the whole graph on the default recipe, then summarise.

Runs ``vox_main_job`` (system prompt -> corpus -> base model -> QLoRA adapter -> eval ->
export) in this process against the ``$DAGSTER_HOME`` instance, so the run, its asset
materializations and checks show in ``make ui``; then prints corpus rows, gate pass rate,
final losses, pass@1 before/after and the export path. Exit status 0 iff the run succeeded.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from typing import Any

from pipeline import paths


def _gate_pass_rate(result: Any) -> float | None:
    """The compiler-gate pass rate from any materialization metadata key naming it."""
    for event in result.get_asset_materialization_events():
        mat = event.event_specific_data.materialization
        for key, value in mat.metadata.items():
            if "pass_rate" in key and "family" not in key and isinstance(getattr(value, "value", None), float):
                return float(value.value)
    return None


def _read(stage: str) -> dict[str, Any] | None:
    path = paths.artifacts_dir(stage) / "result.json"
    return json.loads(path.read_text()) if path.is_file() else None


def summary(result: Any, seconds: float) -> list[str]:
    """Human-readable summary lines of a finished main-job run (reads the stage results)."""
    from pipeline.corpus_io import load_corpus
    from pipeline.errors import DataError

    lines = [f"vox-mens main job: {'SUCCESS' if result.success else 'FAILED'} in {seconds / 60:.1f} min "
             f"(run {result.run_id[:8]}, recipe {os.environ.get('VOX_RECIPE', 'cpu-tiny')})"]
    try:
        c = load_corpus()
        lines.append(f"  corpus rows:        {c.train.num_rows} train + {c.heldout.num_rows} held-out (version {c.version})")
    except DataError as exc:
        lines.append(f"  corpus:             not built ({exc})")
    rate = _gate_pass_rate(result)
    lines.append(f"  gate pass rate:     {rate:.1%}" if rate is not None else "  gate pass rate:     n/a")
    produced = {e.event_specific_data.materialization.asset_key.to_user_string()
                for e in result.get_asset_materialization_events()}

    def _this_run(stage: str) -> dict[str, Any] | None:
        # a stage's result.json may be left from an earlier run: show it only if this run made it
        return _read(stage) if stage in produced else None

    base, adapter = _this_run("base_model"), _this_run("qlora_adapter")
    if base and base.get("pretrain_losses"):
        lines.append(f"  pretrain loss:      {base['pretrain_losses'][-1]:.3f} ({base.get('params') or 0:,} params)")
    if adapter:
        ev = f"{adapter['eval_loss']:.3f}" if adapter.get("eval_loss") is not None else "n/a"
        lines.append(f"  SFT loss:           train {adapter['train_loss']:.3f}, held-out {ev} "
                     f"({adapter['steps']} steps, {adapter['tokens_per_s']:.0f} tok/s, "
                     f"{'QLoRA 4-bit' if adapter['quantized'] else 'LoRA 16-bit'} on {adapter['device']})")
    report = _this_run("eval_report")
    if report:
        k = report["adapter"]["k"]
        lines.append(f"  compile pass@1:     base {report['base']['pass_at_1']:.3f} -> adapter "
                     f"{report['adapter']['pass_at_1']:.3f} (pass@{k} {report['base']['pass_at_k']:.3f} -> "
                     f"{report['adapter']['pass_at_k']:.3f}, {report['tasks']} tasks)")
        lines.append(f"  release gate:       {'PASS' if report['passed'] else 'FAIL'}: {report['reason']}")
    export = _this_run("exported_model")
    if export:
        verify = export.get("verify") or {}
        lines.append(f"  export:             {export['path']}")
        lines.append(f"  export round-trip:  {verify.get('detail', 'not verified')}")
    else:
        lines.append("  export:             not produced in this run")
    failures = [e for e in result.all_events if e.event_type_value == "STEP_FAILURE"]
    for event in failures:
        error = event.event_specific_data.error
        reason = error.message.strip().splitlines()[0] if error is not None and error.message else "see the log above"
        head, sep, rest = reason.partition(": ")
        if sep and " " not in head:  # drop the exception's qualified class name
            reason = rest
        lines.append(f"  failed step:        {event.step_key}: {reason}")
    if failures:
        lines.append("  (details above; `make ui` shows the run)")
    return lines


def main(argv: list[str] | None = None) -> int:
    """Materialize the whole graph and print the summary."""
    parser = argparse.ArgumentParser(prog="python -m assets.main", description=__doc__.splitlines()[0])
    parser.add_argument("--recipe", default=None, help="recipe name or YAML (default $VOX_RECIPE or cpu-tiny)")
    args = parser.parse_args(argv)
    if args.recipe:
        os.environ["VOX_RECIPE"] = args.recipe
    from pipeline.errors import RecipeError
    from pipeline.recipes import validate_recipe

    try:  # a bad recipe is a user mistake: say so in one line before starting Dagster
        validate_recipe()
    except RecipeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    home = os.environ.setdefault("DAGSTER_HOME", str(paths.state_dir() / "dagster"))
    os.makedirs(home, exist_ok=True)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s", datefmt="%H:%M:%S")
    for noisy in ("httpx", "alembic", "mlflow", "urllib3", "datasets"):
        logging.getLogger(noisy).setLevel(logging.WARNING)

    import dagster as dg

    from assets.definitions import defs
    from assets.defs.orchestration import MAIN_JOB

    start = time.perf_counter()
    job = defs().resolve_job_def(MAIN_JOB)
    with dg.DagsterInstance.get() as instance:
        result = job.execute_in_process(
            instance=instance, raise_on_error=False, tags={"trigger": "make run"},
            run_config={"loggers": {"console": {"config": {"log_level": "INFO"}}}},
        )
    print("\n".join(summary(result, time.perf_counter() - start)), flush=True)
    return 0 if result.success else 1


if __name__ == "__main__":
    sys.exit(main())
