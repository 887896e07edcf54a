"""Export domain: the ``exported_model`` asset and its blocking round-trip check."""

import dagster as dg

from assets.defs._failures import pipeline_failures
from assets.defs.resources import VoxStateResource

ROUNDTRIP = "reload_matches_adapter"


@dg.asset(
    deps=["eval_report"], group_name="export", kinds={"pytorch", "safetensors"}, owners=["team:ml"],
    check_specs=[dg.AssetCheckSpec(ROUNDTRIP, asset="exported_model", blocking=True,
                                   description="the reloaded export matches the adapter on the same 16-bit base "
                                               "(logits within tolerance, greedy tokens equal)")],
    description="Adapter merged into a 16-bit base: safetensors, tokenizer + chat template, generation config "
                "(EOS id list), vox_mens.json and a model card; latest.json points at it only if the eval gate and "
                "the round trip both passed.",
)
def exported_model(context: dg.AssetExecutionContext, vox_state: VoxStateResource) -> dg.MaterializeResult:
    from pipeline.stages import run_stage

    with pipeline_failures():
        r = run_stage("exported_model", vox_state.recipe, vox_state.root())
    card, v = r["card"], r["verify"]
    if not r["published"]:
        context.log.warning(f"{r['path']} was not published: latest.json still names the last passing export")
    return dg.MaterializeResult(
        metadata={"path": dg.MetadataValue.path(r["path"]), "model_name": card["model_name"],
                  "eval_passed": card["eval_passed"], "published": r["published"],
                  "pass_at_1": card["pass_at_1"] or 0.0,
                  "system_prompt_mode": card["system_prompt_mode"], "corpus_version": card["corpus_version"]},
        check_results=[dg.AssetCheckResult(
            check_name=ROUNDTRIP, passed=bool(v and v["passed"]),
            metadata={"detail": v["detail"] if v else "not verified",
                      "max_logit_diff": v["max_logit_diff"] if v else -1.0})],
    )
