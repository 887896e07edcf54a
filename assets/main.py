"""The main job (``make run``): materialize the whole graph on the default recipe, then summarise.

Two runs against the ``$DAGSTER_HOME`` instance, so both, their asset materializations and checks
show in ``make ui``: first the ``corpus_backfill`` job builds every corpus partition (generate +
gate, one step per partition) in parallel processes under the multiprocess executor
(``max_concurrent``: ``$VOX_MAX_CONCURRENT``, else the recipe's ``corpus.workers``); when it
succeeds, ``vox_main_job`` runs in this process (system prompt -> corpus mix of all partitions ->
base model -> QLoRA adapter -> eval -> export). Then it prints corpus rows, gate pass rate (per
partition too), final losses, pass@1 before/after and the export path. Exit status 0 iff both runs
succeeded.
"""

from __future__ import annotations

import argparse
import logging
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from pipeline import paths

#: the stages in graph order, with the label used in the timing line
TIMED_STEPS = (("system_prompt", "prompt"), ("corpus", "mix"), ("base_model", "pretrain"), ("qlora_adapter", "QLoRA"),
               ("eval_report", "eval"), ("exported_model", "export"))


#: metadata keys of a check result that say why it failed, most specific first
_WHY_KEYS = ("reason", "detail", "problems")


def failure_reason(event: Any, run: Any = None) -> str:
    """One line saying why a failed step failed (from ``ExecuteInProcessResult.get_step_failure_events()``).

    A ``dg.Failure`` (pipeline errors) gives its description; a failed blocking asset check (the
    release gate, the corpus checks) names each check with its description and why it failed, read
    from ``run``'s check evaluations (:func:`failed_checks`); any other error gives the innermost
    cause's class and message (the first line, with the lines a trailing colon announces), not
    Dagster's "Error occurred while executing op" wrapper.
    """
    data = event.step_failure_data
    if data.user_failure_data is not None and data.user_failure_data.description:
        return str(data.user_failure_data.description).strip().splitlines()[0]
    error = data.error
    while error is not None and error.cause is not None:
        error = error.cause
    if error is None or not error.message:
        return "see the log above"
    if error.cls_name == "DagsterAssetCheckFailedError" and run is not None:
        checks = failed_checks(run, event.step_key)
        if checks:
            return "; ".join(checks)
    lines = [line.strip() for line in error.message.strip().splitlines() if line.strip()]
    text = lines.pop(0).split(": ", 1)[-1]  # the message starts with the exception's qualified class
    while text.endswith(":") and lines:  # e.g. "1 blocking asset check failed with ERROR severity:" + which
        text += " " + lines.pop(0)
    return f"{error.cls_name}: {text}"


def failed_checks(run: Any, step_key: str | None) -> list[str]:
    """``check <name> (<description>) failed: <why>`` for each blocking check that failed in ``step_key``.

    ``why`` is the check result's ``reason``, ``detail`` or first ``problems`` line (else its
    description); the description is the check spec's, from ``run.job_def``, where it has one.
    """
    import dagster as dg

    found = []
    for event in run.all_events:
        check = event.event_specific_data
        if event.event_type_value != dg.DagsterEventType.ASSET_CHECK_EVALUATION.value or \
                event.step_key != step_key or check.passed or not check.blocking:
            continue
        meta = {k: str(getattr(v, "value", v)).strip() for k, v in (check.metadata or {}).items()}
        why = next((meta[k] for k in _WHY_KEYS if meta.get(k) not in (None, "", "none")), check.description or "")
        what = _check_description(run, check.asset_check_key)
        name = check.check_name + (f" [{check.partition}]" if check.partition else "") + (f" ({what})" if what else "")
        why = why.strip().splitlines()[0].lstrip("- ") if why.strip() else ""  # a problems list: its first item
        found.append(f"check {name} failed" + (f": {why}" if why else ""))
    return found


def _check_description(run: Any, key: Any) -> str:
    """The description of asset check ``key`` in ``run``'s job, or ``""`` (none, or not in the job)."""
    try:
        spec = run.job_def.asset_layer.asset_graph.get_check_spec(key)
    except (AttributeError, KeyError):
        return ""
    return " ".join((spec.description or "").split())


def step_seconds(instance: Any, run_id: str) -> dict[str, float]:
    """Wall seconds per step of a run (first STEP_START to its STEP_SUCCESS/STEP_FAILURE), from the event log."""
    import dagster as dg

    kinds = {dg.DagsterEventType.STEP_START, dg.DagsterEventType.STEP_SUCCESS, dg.DagsterEventType.STEP_FAILURE}
    started: dict[str, float] = {}
    took: dict[str, float] = {}
    for entry in instance.all_logs(run_id, of_type=kinds):
        key = entry.step_key
        if key is None:
            continue
        if entry.dagster_event_type == dg.DagsterEventType.STEP_START:
            started.setdefault(key, entry.timestamp)
        elif key in started:
            took[key] = entry.timestamp - started[key]
    return took


def _this_run(stage: str, produced: set[str], root: Path) -> Any:
    """The stage's result if this run materialized it (an older result.json is not this run's)."""
    from pipeline.errors import DataError
    from pipeline.stages import read_result

    if stage not in produced:
        return None
    try:
        return read_result(stage, root)
    except DataError:
        return None


def code_version(repo: Path | None = None) -> str:
    """The git commit the code ran from, as the README asks figures to be quoted with.

    ``repo`` defaults to this checkout (the folder above ``assets/``). Returns the short hash,
    with ``" + uncommitted changes"`` when tracked files differ from it, or ``"unknown (not a git
    checkout)"`` when git or the repository is missing: never raises.
    """
    repo = repo or Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown (not a git checkout)"
    return f"{head} + uncommitted changes" if dirty else head


def summary(result: Any, seconds: float, instance: Any = None, root: Path | None = None,
            backfill: Any = None, backfill_seconds: float = 0.0) -> list[str]:
    """Human-readable summary of a finished main-job run: what it produced, from the stage results.

    Every figure the README quotes (rows, gate pass rate, losses, pass@1, stage timings) is printed
    here with the machine's conditions (cores, load), so it can be quoted with the command.
    ``backfill`` is the corpus backfill run before it (its partitions count as produced by this
    run; its failed steps are listed); ``result`` is ``None`` when the backfill failed and the main
    job did not start.
    """
    from pipeline.copy_probe import copies_names
    from pipeline.errors import DataError
    from pipeline.stages import read_result, serve_anyway

    root = paths.state_dir(root)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    runs = [r for r in (backfill, result) if r is not None]
    ok = result is not None and all(r.success for r in runs)
    run_ids = ", ".join(r.run_id[:8] for r in runs)
    lines = [f"vox-mens main job: {'SUCCESS' if ok else 'FAILED'} in {seconds / 60:.1f} min "
             f"(commit {code_version()}, recipe {os.environ.get('VOX_RECIPE', 'cpu-tiny')}, "
             f"{os.cpu_count()} cores, load {load:.1f} at the end)",
             f"  Dagster runs:       {run_ids} (`make ui` shows them)"]
    produced = {e.asset_key.to_user_string() for r in runs for e in r.get_asset_materialization_events()}
    if backfill is not None:
        lines.append(_partitions_line(backfill, backfill_seconds))
    try:
        c = read_result("corpus", root)
        lines.append(f"  corpus rows:        {c['train_rows']} train + {c['heldout_rows']} held-out "
                     f"(version {c.version}{'' if 'corpus' in produced else ', from an earlier run'})")
    except DataError as exc:
        lines.append(f"  corpus:             not built ({exc})")
    gate = _this_run("gated_pairs", produced, root)
    if gate:
        rates = [p["pass_rate"] for p in gate["partitions"].values()]
        lines.append(f"  gate pass rate:     {gate['pass_rate']:.1%} (minimum {gate['min_pass_rate']:.0%} per "
                     f"partition; partitions {min(rates):.1%}..{max(rates):.1%})")
    else:
        lines.append("  gate pass rate:     n/a (gate not run)")
    base, adapter = _this_run("base_model", produced, root), _this_run("qlora_adapter", produced, root)
    if base and base["pretrain_losses"]:
        lines.append(f"  pretrain loss:      {base['pretrain_losses'][-1]:.3f} ({base['params'] or 0:,} params)")
        probe = base.get("copy_probe") or {}
        if probe.get("first_nll") is not None and probe.get("repeat_nll") is not None:
            copies = copies_names(probe["first_nll"], probe["repeat_nll"])
            lines.append(f"  name copying:       {probe['repeat_nll']:.2f} nats on a name's repeat vs "
                         f"{probe['first_nll']:.2f} first ({'copies' if copies else 'does not copy'} names "
                         "from its context; bench/copying.py)")
    if adapter:
        ev = f"{adapter['eval_loss']:.3f}" if adapter["eval_loss"] is not None else "n/a"
        lines.append(f"  SFT loss:           train {adapter['train_loss']:.3f}, held-out {ev} "
                     f"({adapter['steps']} steps, {adapter['tokens_per_s']:.0f} tok/s, "
                     f"{'QLoRA 4-bit' if adapter['quantized'] else 'LoRA 16-bit'} on {adapter['device']})")
    report = _this_run("eval_report", produced, root)
    if report:
        b, a = report["base"], report["adapter"]
        lines.append(f"  compile pass@1:     base {b['pass_at_1']:.3f} -> adapter {a['pass_at_1']:.3f} "
                     f"(pass@{a['k']} {b['pass_at_k']:.3f} -> {a['pass_at_k']:.3f}, {report['tasks']} tasks)")
        if report.get("difference"):
            lines.append(f"  adapter - base:     {report['difference']['text']}")
        lines.append(f"  release gate:       {'PASS' if report['passed'] else 'FAIL'}: {report['reason']}")
    export = _this_run("exported_model", produced, root)
    if export:
        lines.append(f"  export:             {export['path']}"
                     f"{'' if export['published'] else ' (not published: latest.json unchanged)'}")
        lines.append(f"  export round-trip:  {(export['verify'] or {}).get('detail', 'not verified')}")
    else:
        lines.append("  export:             not produced in this run")
    if instance is not None and result is not None:
        took = step_seconds(instance, result.run_id)
        timed = [f"{label} {took[step] / 60:.1f}" for step, label in TIMED_STEPS if step in took]
        if timed:
            lines.append(f"  stage minutes:      {', '.join(timed)}")
    failures = [(e, r) for r in runs for e in r.get_step_failure_events()]
    for event, run in failures:
        lines.append(f"  failed step:        {event.step_key}: {failure_reason(event, run)}")
    if failures:
        lines.append("  (details above; `make ui` shows the run)")
    if result is None:
        lines.append("  main job:           not started (the corpus backfill failed)")
    elif ok:
        lines += _next_steps(bool(export and export["published"]))
    elif report and not report["passed"] and adapter:  # the gate kept the adapter from export
        lines.append(f"  next:               serve it anyway: {serve_anyway(adapter)}")
    return lines


def _next_steps(published: bool) -> list[str]:
    """What a user does after a successful run: chat with the exported model, browse the run."""
    serve = ("`.venv/bin/vox serve` (the export above), then in another terminal "
             "`.venv/bin/vox chat --model free`" if published else
             "`.venv/bin/vox serve` serves the latest export that passed its gate (none from this run)")
    return [f"  next:               {serve}",
            "                      `make ui` (lineage, asset checks), `make mlflow` (metrics)"]


def _partitions_line(backfill: Any, seconds: float) -> str:
    """``corpus partitions: 13/13 built in 0.6 min (2 processes)`` from the backfill run's events."""
    built = {e.partition for e in backfill.get_asset_materialization_events()
             if e.asset_key.to_user_string() == "gated_pairs"}
    from pipeline.generators import PARTITIONS

    concurrent = backfill.dagster_run.run_config.get("execution", {}).get("config", {}).get("multiprocess", {})
    procs = f"{concurrent['max_concurrent']} processes" if concurrent.get("max_concurrent") else "configured executor"
    return f"  corpus partitions:  {len(built)}/{len(PARTITIONS)} built in {seconds / 60:.1f} min ({procs})"


def max_concurrent(recipe: str | None = None) -> int:
    """Partition steps the backfill runs at once: ``$VOX_MAX_CONCURRENT`` (0 = CPUs), else ``corpus.workers``.

    Raises:
        RecipeError: ``$VOX_MAX_CONCURRENT`` is not a whole number (named), or the recipe is invalid.
    """
    from pipeline.corpus import corpus_config
    from pipeline.errors import RecipeError

    raw = os.environ.get("VOX_MAX_CONCURRENT", "").strip()
    if raw:
        if not raw.isdigit():
            raise RecipeError(f"VOX_MAX_CONCURRENT={raw}: expected a whole number of processes (0 = CPUs)")
        return int(raw) or (os.cpu_count() or 1)
    return corpus_config(recipe).workers


def run_backfill(instance: Any, partitions: tuple[str, ...] = (), concurrent: int | None = None,
                 tags: dict[str, str] | None = None, log_level: str = "INFO") -> Any:
    """Run the ``corpus_backfill`` job (all partitions, or ``partitions``) in step processes, on the
    state directory and recipe of this process's environment (``VOX_STATE_DIR``, ``VOX_RECIPE``).

    Returns:
        Dagster's ``ExecuteJobResult`` (``success``, ``run_id``, events).
    """
    import dagster as dg

    from assets.defs.corpus_backfill import backfill_job, run_config
    from assets.defs.resources import VoxStateResource
    from pipeline.recipes import DEFAULT_RECIPE

    state = VoxStateResource(state_dir=os.environ.get("VOX_STATE_DIR", ""),
                             recipe=os.environ.get("VOX_RECIPE") or DEFAULT_RECIPE)
    config = run_config(backfill_job(), partitions, concurrent, state=state)
    config["loggers"] = {"console": {"config": {"log_level": log_level}}}
    return dg.execute_job(dg.reconstructable(backfill_job), instance=instance, run_config=config,
                          tags=tags or {}, raise_on_error=False)


def main(argv: list[str] | None = None) -> int:
    """Materialize the whole graph and print the summary."""
    parser = argparse.ArgumentParser(prog="python -m assets.main", description=__doc__.splitlines()[0])
    parser.add_argument("--recipe", default=None, help="recipe name or YAML (default $VOX_RECIPE or cpu-tiny)")
    args = parser.parse_args(argv)
    from pipeline.errors import RecipeError
    from pipeline.recipes import validate_recipe

    try:  # a bad recipe is a user mistake: say so in one line before starting Dagster
        validate_recipe(args.recipe)
    except RecipeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.recipe:  # the resource reads it (only a valid recipe gets this far)
        os.environ["VOX_RECIPE"] = args.recipe
    from assets.instance_config import fail_orphaned_runs, run_tags, write_instance_config

    home = Path(os.environ.setdefault("DAGSTER_HOME", str(paths.state_dir() / "dagster")))
    if not (home / "dagster.yaml").is_file():  # `make run` writes it; a direct call gets the same settings
        write_instance_config(home / "dagster.yaml")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s", datefmt="%H:%M:%S")
    for noisy in ("httpx", "alembic", "mlflow", "urllib3", "datasets"):
        logging.getLogger(noisy).setLevel(logging.WARNING)

    import dagster as dg

    from assets.definitions import defs
    from assets.defs.orchestration import MAIN_JOB
    from pipeline.interrupts import handlers_restored

    try:
        concurrent = max_concurrent()
    except RecipeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    start = time.perf_counter()
    job = defs().resolve_job_def(MAIN_JOB)
    tags = {"trigger": "make run", **run_tags()}
    result = None
    # Dagster leaves SIGTERM mapped to SIGINT's handler (ignored, if SIGINT is): put both back after the runs
    with handlers_restored(), dg.DagsterInstance.get() as instance:
        for run_id in fail_orphaned_runs(instance):
            logging.getLogger(__name__).warning("marked run %s failed: its process was killed", run_id)
        backfill = run_backfill(instance, concurrent=concurrent, tags=tags)
        backfill_seconds = time.perf_counter() - start
        if backfill.success:
            result = job.execute_in_process(
                instance=instance, raise_on_error=False, tags=tags,
                run_config={"loggers": {"console": {"config": {"log_level": "INFO"}}}},
            )
        lines = summary(result, time.perf_counter() - start, instance, backfill=backfill,
                        backfill_seconds=backfill_seconds)
    print("\n".join(lines), flush=True)
    return 0 if result is not None and result.success else 1


if __name__ == "__main__":
    sys.exit(main())
