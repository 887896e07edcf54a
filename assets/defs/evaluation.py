"""Evaluation domain: the ``eval_report`` asset with its blocking release gate."""

import base64
from pathlib import Path

import dagster as dg

from assets.defs._failures import pipeline_failures
from assets.defs.resources import VoxStateResource

GATE = "adapter_beats_base_and_threshold"


def _table(per: dict[str, dict[str, float]], base: dict[str, dict[str, float]]) -> str:
    rows = [f"| {name} | {int(v['tasks'])} | {base.get(name, {}).get('pass@1', 0):.2f} | {v['pass@1']:.2f} "
            f"| {v['pass@k']:.2f} | {v.get('exec_pass@1', 0):.2f} | {v.get('exec_pass@k', 0):.2f} |"
            for name, v in per.items()]
    head = ("| group | tasks | base pass@1 | adapter pass@1 | adapter pass@k | adapter exec pass@1 "
            "| adapter exec pass@k |\n|---|---|---|---|---|---|---|\n")
    return head + "\n".join(rows)


@dg.asset(
    deps=["qlora_adapter"], group_name="evaluation", kinds={"pytorch"}, owners=["team:ml"],
    check_specs=[dg.AssetCheckSpec(GATE, asset="eval_report", blocking=True,
                                   description="adapter compile-pass@1 >= recipe threshold and > base pass@1")],
    description="Compile-pass@1 and pass@k of base vs adapter on the held-out task suite (9 families + "
                "script tasks), per family, with top failure codes and a plot.",
)
def eval_report(context: dg.AssetExecutionContext, vox_state: VoxStateResource) -> dg.MaterializeResult:
    from pipeline.evaluate import policy_table
    from pipeline.stages import run_stage

    with pipeline_failures():
        r = run_stage("eval_report", vox_state.recipe, vox_state.root())
    base, adapter = r["base"], r["adapter"]
    plot = ""
    if r["plot_path"] and Path(r["plot_path"]).is_file():
        png = base64.b64encode(Path(r["plot_path"]).read_bytes()).decode()
        plot = f"![pass@1 per family](data:image/png;base64,{png})"
    k = adapter["k"]
    return dg.MaterializeResult(
        metadata={
            "tasks": r["tasks"], "system_prompt_mode": r["system_prompt_mode"],
            "base_pass@1": round(base["pass_at_1"], 4), "adapter_pass@1": round(adapter["pass_at_1"], 4),
            f"base_pass@{k}": round(base["pass_at_k"], 4), f"adapter_pass@{k}": round(adapter["pass_at_k"], 4),
            "base_exec_pass@1": round(base.get("exec_pass_at_1", 0.0), 4),
            "adapter_exec_pass@1": round(adapter.get("exec_pass_at_1", 0.0), 4),
            f"adapter_exec_pass@{k}": round(adapter.get("exec_pass_at_k", 0.0), 4),
            "threshold": r["threshold"],
            # adapter - base with its paired bootstrap 95% interval (pipeline.eval_stats)
            "adapter_minus_base": (r.get("difference") or {}).get("text", "n/a"),
            "per_family": dg.MetadataValue.md(_table(adapter["per_family"], base["per_family"])),
            "policies_per_family": dg.MetadataValue.md(policy_table(r.data)),  # unconstrained/constrained/verified
            "policies_per_suite": dg.MetadataValue.md(policy_table(r.data, "per_suite")),
            "adapter_raw_compile@1": round(adapter.get("raw_pass_at_1", 0.0), 4),
            "adapter_declared_rate": (
                "n/a" if adapter.get("declared_rate") is None else round(adapter["declared_rate"], 4)),
            "adapter_failure_classes": dg.MetadataValue.json(adapter.get("failure_classes") or {}),
            # completions where the name mask met a dead end and the grammar alone chose a token
            "adapter_name_mask_skips": "n/a" if adapter.get("mask_skips") is None else adapter["mask_skips"],
            # blocks that derailed and were wound down instead of cut by the token limit (pipeline.decoding_derail)
            "adapter_wound_down_blocks": "n/a" if adapter.get("wound_down") is None else adapter["wound_down"],
            # compiler-checked retries of the gate policy (pipeline.decoding_retry): faulty, retried, replaced, fixed
            "adapter_retries": dg.MetadataValue.json(adapter.get("retries") or {}),
            "gate_policy": r.get("gate_policy", "unconstrained"), "pending_policies": ", ".join(r.get("pending") or ()),
            "per_kind": dg.MetadataValue.md(_table(adapter["per_kind"], base["per_kind"])),
            "adapter_top_failures": dg.MetadataValue.json(dict(map(tuple, adapter["failure_codes"]))),
            "base_top_failures": dg.MetadataValue.json(dict(map(tuple, base["failure_codes"]))),
            "leaked_tasks": len(r["leaked_tasks"]), "plot": dg.MetadataValue.md(plot or "(no plot)"),
            "eval_seconds": round(base["seconds"] + adapter["seconds"], 1),
        },
        check_results=[dg.AssetCheckResult(check_name=GATE, passed=bool(r["passed"]),
                                           metadata={"reason": r["reason"]})],
    )
