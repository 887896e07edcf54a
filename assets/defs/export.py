"""Export domain: the ``exported_model`` asset and its blocking round-trip check."""

import dagster as dg

from assets.defs.resources import VoxStateResource

ROUNDTRIP = "reload_matches_adapter"


@dg.asset(
    deps=["eval_report"], group_name="export", kinds={"pytorch", "safetensors"}, owners=["team:ml"],
    check_specs=[dg.AssetCheckSpec(ROUNDTRIP, asset="exported_model", blocking=True,
                                   description="the reloaded export matches the adapter on the same 16-bit base "
                                               "(logits within tolerance, greedy tokens equal)")],
    description="Adapter merged into a 16-bit base: safetensors, tokenizer + chat template, generation config "
                "(EOS id list), vox_mens.json and a model card; latest.json points at it.",
)
def exported_model(context: dg.AssetExecutionContext, vox_state: VoxStateResource) -> dg.MaterializeResult:
    from pipeline.stages import run_export

    vox_state.root()
    r = run_export(vox_state.recipe)
    v = r.verify
    return dg.MaterializeResult(
        metadata={"path": dg.MetadataValue.path(r.path), "model_name": r.card["model_name"],
                  "eval_passed": r.card["eval_passed"], "pass_at_1": r.card["pass_at_1"] or 0.0,
                  "system_prompt_mode": r.card["system_prompt_mode"], "corpus_version": r.card["corpus_version"]},
        check_results=[dg.AssetCheckResult(
            check_name=ROUNDTRIP, passed=bool(v and v.passed),
            metadata={"detail": v.detail if v else "not verified",
                      "max_logit_diff": v.max_logit_diff if v else -1.0})],
    )
