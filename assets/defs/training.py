"""Training domain: the ``base_model`` and ``qlora_adapter`` assets and the MLflow resource.

Assets are thin: each runs one stage through :func:`pipeline.stages.run_stage` under the
resource's state directory and turns its result into metadata; a pipeline error fails the step
in one line. Heavy libraries load inside the stages, so loading definitions stays fast.
"""

from typing import Any

import dagster as dg

from assets.defs._failures import pipeline_failures
from assets.defs.resources import VoxStateResource


class MlflowResource(dg.ConfigurableResource):
    """The local MLflow store (``tracking_uri`` empty = ``sqlite:///<state>/mlflow/mlflow.db``)."""

    tracking_uri: str = ""
    experiment: str = "vox-mens"

    def tracker(self, state_dir: Any = None) -> Any:
        """A fresh :class:`pipeline.tracking.Tracker` on this store (the local one under ``state_dir``)."""
        from pipeline import paths
        from pipeline.tracking import Tracker

        with paths.use_state_dir(state_dir):
            return Tracker(self.tracking_uri or None, self.experiment)


@dg.asset(
    deps=["corpus"], group_name="training", kinds={"pytorch"}, owners=["team:ml"],
    description="Base causal LM: an HF id/path, or `bootstrap` (BPE tokenizer + tiny Qwen3 pre-trained on "
                "the train split only).",
)
def base_model(context: dg.AssetExecutionContext, vox_state: VoxStateResource) -> dg.MaterializeResult:
    from pipeline.stages import run_stage

    with pipeline_failures():
        r = run_stage("base_model", vox_state.recipe, vox_state.root())
    context.log.info(f"base model {r['model']} (reused={r['reused']})")
    return dg.MaterializeResult(metadata={
        "model": r["model"], "bootstrap": r["bootstrap"], "params": r["params"] or 0, "fingerprint": r.version,
        "final_pretrain_loss": float(r["pretrain_losses"][-1]) if r["pretrain_losses"] else 0.0,
        "pretrain_tokens": r["pretrain_tokens"], "seconds": round(r["seconds"], 1), "reused": r["reused"],
        **_copy_metadata(r.get("copy_probe")),
    }, data_version=dg.DataVersion(r.version))


def _copy_metadata(probe: dict[str, Any] | None) -> dict[str, Any]:
    """The name-copying probe (pipeline.copy_probe) as metadata: NLL of name tokens on their first
    and repeat occurrences (nats); a model that copies names from its context is far lower on repeat."""
    from pipeline.copy_probe import copies_names

    if not probe or probe.get("first_nll") is None or probe.get("repeat_nll") is None:
        return {}
    first, repeat = float(probe["first_nll"]), float(probe["repeat_nll"])
    return {"name_nll_first": first, "name_nll_repeat": repeat, "copies_names": copies_names(first, repeat)}


@dg.asset(
    deps=["corpus", base_model], group_name="training", kinds={"pytorch"}, owners=["team:ml"],
    description="QLoRA adapter: trl SFTTrainer + peft LoRA on a 4-bit NF4 base, assistant-only loss, packed "
                "padding-free batches, checkpoints with resume; logged to MLflow.",
)
def qlora_adapter(context: dg.AssetExecutionContext, vox_state: VoxStateResource,
                  mlflow: MlflowResource) -> dg.MaterializeResult:
    from pipeline.stages import run_stage

    root = vox_state.root()
    with pipeline_failures():
        r = run_stage("qlora_adapter", vox_state.recipe, root, tracker=mlflow.tracker(root))
    if r["resumed_from"]:
        context.log.info(f"resumed from {r['resumed_from']}")
    losses = "\n".join(f"| {step} | {loss:.4f} |" for step, loss in r["losses"][-12:])
    return dg.MaterializeResult(metadata={
        "adapter_dir": dg.MetadataValue.path(r["adapter_dir"]), "steps": r["steps"],
        "final_train_loss": r["train_loss"] or 0.0, "final_eval_loss": r["eval_loss"] or 0.0,
        "tokens": r["tokens"], "tokens_per_s": round(r["tokens_per_s"], 1), "quantized_4bit": r["quantized"],
        "device": r["device"], "system_prompt_mode": r["system_prompt_mode"], "fingerprint": r.version,
        "corpus_version": r["corpus"]["version"], "mlflow_run_id": r["mlflow_run_id"] or "",
        "resumed_from": r["resumed_from"] or "", "reused": r["reused"], "seconds": round(r["seconds"], 1),
        "loss_curve": dg.MetadataValue.md("| step | loss |\n|---|---|\n" + losses),
        # rows left out because they do not fit train.max_length whole (pipeline.train_data.FitReport)
        **{k: int(v) for k, v in (r.get("fit") or {}).items()},
    }, data_version=dg.DataVersion(r.version))


@dg.definitions
def training_defs() -> dg.Definitions:
    """The training assets and the MLflow resource (``MLFLOW_TRACKING_URI`` overrides the local
    store). A module with a ``@dg.definitions`` function contributes only what it returns."""
    mlflow = MlflowResource(tracking_uri=dg.EnvVar("MLFLOW_TRACKING_URI").get_value("") or "")
    return dg.Definitions(assets=[base_model, qlora_adapter], resources={"mlflow": mlflow})
