"""Multi-process training under ``accelerate launch`` (DDP, gloo, 2 CPU processes).

Same global batch (1 x 4 rows vs 2 x 2 rows), same steps: the held-out loss after the run matches
within :data:`TOLERANCE`; only rank 0 writes the adapter, which has the same tensors and loads.
The two runs see the rows in a different order (DistributedSampler vs RandomSampler), so the
losses agree statistically, not bit for bit.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Literal

import pytest

from pipeline.distributed import DistributedConfig, accelerate_command
from pipeline.sample_corpus import MICRO_RECIPE

pytestmark = pytest.mark.slow
WORKER = Path(__file__).with_name("ddp_worker.py")
#: |eval loss (2 processes) - eval loss (1 process)| after 6 steps, in nats (measured difference: see the report)
TOLERANCE = 0.05



def _launch(processes: int, base: str, out: Path, batch: int) -> dict[str, Any]:
    command = accelerate_command(DistributedConfig(num_processes=processes), [str(WORKER), base, str(out), str(batch)])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parents[2]), *sys.path]),
           "OMP_NUM_THREADS": "1", "VOX_TRACKING": "off"}
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert len(lines) == 1, done.stdout[-2000:]  # rank 0 only
    return dict(json.loads(lines[0][len("RESULT "):]))


def _tensors(adapter_dir: str) -> dict[str, tuple[int, ...]]:
    from safetensors.torch import load_file

    return {k: tuple(v.shape) for k, v in load_file(str(Path(adapter_dir) / "adapter_model.safetensors")).items()}


def test_ddp_two_processes_match_one(micro_base: str, tmp_path: Path) -> None:
    one = _launch(1, micro_base, tmp_path / "one", batch=4)
    two = _launch(2, micro_base, tmp_path / "two", batch=2)
    assert one["world_size"] == 1 and two["world_size"] == 2
    assert one["steps"] == two["steps"] == 6
    assert abs(two["eval_loss"] - one["eval_loss"]) < TOLERANCE, (one["eval_loss"], two["eval_loss"])
    assert _tensors(two["adapter_dir"]) == _tensors(one["adapter_dir"])
    assert not list(Path(two["run_dir"]).glob("adapter.tmp"))
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    model = PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(micro_base), two["adapter_dir"])
    assert any("lora_A" in name for name, _ in model.named_parameters())
    print(f"eval loss 1 process {one['eval_loss']:.4f}, 2 processes {two['eval_loss']:.4f}; "
          f"tokens/s {one['tokens_per_s']:.0f} vs {two['tokens_per_s']:.0f}")


@pytest.mark.parametrize(("strategy", "kind"), [("ddp", "MULTI_GPU"), ("fsdp", "FSDP"), ("deepspeed", "DEEPSPEED")])
def test_accelerate_configs_load(strategy: Literal["ddp", "fsdp", "deepspeed"], kind: str) -> None:
    from accelerate.commands.config.config_args import ClusterConfig

    from pipeline.distributed import ACCELERATE_CONFIGS, CONFIG_DIR

    config = ClusterConfig.from_yaml_file(str(CONFIG_DIR / ACCELERATE_CONFIGS[strategy]))
    assert config.distributed_type.name == kind
    command = accelerate_command(DistributedConfig(num_processes=3, strategy=strategy), ["-m", "pipeline.train"])
    assert command[command.index("--num_processes") + 1] == "3" and command[-2:] == ["-m", "pipeline.train"]


def test_distributed_section_is_validated(tmp_path: Path) -> None:
    from pipeline.errors import RecipeError
    from pipeline.recipes import validate_recipe
    from pipeline.sample_corpus import write_micro_recipe

    good = write_micro_recipe(tmp_path / "good.yaml")
    text = good.read_text()
    (tmp_path / "ddp.yaml").write_text(text + "distributed: {num_processes: 2, strategy: ddp}\n")
    assert validate_recipe(tmp_path / "ddp.yaml")["distributed"] == DistributedConfig(2, "ddp")
    (tmp_path / "bad.yaml").write_text(text + "distributed: {num_processes: 0, strategy: dpp}\n")
    with pytest.raises(RecipeError, match="distributed.strategy"):
        validate_recipe(tmp_path / "bad.yaml")


def test_training_stage_launches_accelerate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``distributed.num_processes: 2`` makes the qlora_adapter stage run NF4 QLoRA under accelerate
    launch; rank 0's result comes back through result.json and the adapter is written once."""
    from pipeline import paths
    from pipeline.sample_corpus import write_micro_recipe, write_sample_corpus
    from pipeline.stages import run_stage

    monkeypatch.setenv("VOX_TRACKING", "off")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(Path(__file__).parents[2]), *sys.path]))
    write_sample_corpus(paths.artifacts_dir("corpus"), n=80)
    recipe = write_micro_recipe(tmp_path / "micro.yaml")
    recipe.write_text(recipe.read_text() + "distributed: {num_processes: 2, strategy: ddp}\n")
    run_stage("base_model", str(recipe))
    result = run_stage("qlora_adapter", str(recipe))
    assert result["steps"] == MICRO_RECIPE["train"]["max_steps"] and result["quantized"]
    assert (Path(result["adapter_dir"]) / "adapter_model.safetensors").is_file()
    out = paths.artifacts_dir("qlora_adapter")
    assert (out / "distributed_recipe.yaml").is_file() and (out / "result.json").is_file()
