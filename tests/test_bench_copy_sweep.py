"""``bench/copy_sweep.py``'s run specs: shapes and budgets parse, malformed ones name what is wrong."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "bench" / "copy_sweep.py"


@pytest.fixture(scope="module")
def sweep() -> ModuleType:
    spec = importlib.util.spec_from_file_location("copy_sweep_under_test", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(module)
    return module


def test_shape_sizes_match_cpu_tiny(sweep: ModuleType) -> None:
    assert sweep.shape_sizes("L4d128") == {"num_layers": 4, "hidden_size": 128, "num_heads": 2,
                                           "num_kv_heads": 1, "intermediate_size": 384}
    assert sweep.shape_sizes("L4d256")["num_kv_heads"] == 2


def test_run_spec_gives_tokens_and_steps(sweep: ModuleType) -> None:
    run = sweep.Run.parse("L4d128:4.0:256:0.003")
    assert (run.tokens, run.block, run.batch) == (4_000_000, 256, 16)
    cfg = run.config()
    assert cfg.pretrain_steps == 977 and cfg.hidden_size == 128 and cfg.pretrain_lr == 0.003
    assert sweep.Run.parse("L2d64:1:128:0.01:4").batch == 4


@pytest.mark.parametrize(("spec", "message"), [
    ("L4x:1:256:0.1", "expected L<layers>d<width>"),
    ("L4d100:1:256:0.1", "multiple of 64"),
    ("L4d128:x:256:0.1", "are numbers"),
    ("L4d128:1:256", "SHAPE:MTOKENS:BLOCK:LR"),
    ("L4d128:1:4:0.1", "BLOCK >= 8"),
])
def test_bad_spec_names_the_fault(sweep: ModuleType, spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        sweep.Run.parse(spec)
