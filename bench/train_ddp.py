"""Training tokens/s: 1 process vs 2 DDP processes (``accelerate launch``, gloo) on CPU, same global batch.

Same model (a cpu-tiny-sized bootstrap built offline, 1 pretraining step: throughput does not depend
on its weights), same rows, same recipe (cpu-tiny's ``train:`` section: NF4 QLoRA, 1024-token packed
rows), same global batch (1 x B rows vs 2 x B/2 rows), same steps. Both sides run under the same
launcher (:mod:`pipeline.train_launch`), so start-up costs are alike; tokens/s is non-pad tokens over
the trainer's own runtime (start-up excluded), wall is the whole launch. Three runs, on the same cores:

- 1 process x 2 threads (the fair baseline on 2 cores), 1 process x 1 thread (reference),
- 2 processes x 1 thread (DDP).

Prints each run's tokens/s, wall time and training loss after N steps, and the ratios. On a shared
2-core machine the gain is small: the point of DDP here is correctness (tests/pipeline/test_distributed.py).

    nice -n 5 .venv/bin/python bench/train_ddp.py [--steps 12] [--batch 4] [--rows 400] [--repeats 1]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
RESULT = "bench_result.json"


@dataclass(frozen=True)
class Run:
    """One measured launch."""

    label: str
    processes: int
    threads: int
    tokens_per_s: float
    wall_s: float
    loss: float
    steps: int


def median(runs: list[Run]) -> Run:
    """The run with the median tokens/s (lower median for an even count)."""
    return sorted(runs, key=lambda r: r.tokens_per_s)[(len(runs) - 1) // 2]


def rows(n: int) -> list[dict]:
    """Train rows of the sample corpus (no corpus build needed)."""
    from pipeline.sample_corpus import sample_rows

    return [r for r in sample_rows(n) if r["split"] == "train"]


def worker(args: argparse.Namespace) -> None:
    """One training process: cpu-tiny's train section, no eval, no checkpoints, no MLflow."""
    from pipeline.distributed import is_main_process, world_size
    from pipeline.recipes import stage_config
    from pipeline.tracking import NullTracker
    from pipeline.train import TrainConfig, make_sft_data, train

    cfg = replace(stage_config(TrainConfig, "train", args.recipe), base_model=args.base, max_steps=args.steps,
                  batch_size=args.batch, grad_accum=1, logging_steps=1, save_steps=10_000, eval_steps=10_000,
                  max_eval_rows=0, device="cpu")
    data = make_sft_data(rows(args.rows), [], cfg, "bench", "bench")
    result = train(cfg, data, args.out, tracker=NullTracker())
    if is_main_process():
        (args.out / RESULT).write_text(json.dumps({**asdict(result), "world_size": world_size()}, default=str))


def launch(label: str, processes: int, threads: int, per_device: int, args: argparse.Namespace, base: str,
           root: Path) -> Run:
    """Run the worker in ``processes`` processes of ``threads`` torch threads each; read rank 0's result."""
    from pipeline.distributed import DistributedConfig, accelerate_command

    out = root / label.replace(" ", "_")
    out.mkdir(parents=True)
    command = accelerate_command(DistributedConfig(num_processes=processes), [
        str(Path(__file__).resolve()), "--worker", "--base", base, "--out", str(out), "--batch", str(per_device),
        "--steps", str(args.steps), "--rows", str(args.rows), "--recipe", args.recipe])
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "VOX_TORCH_THREADS": str(threads), "VOX_TRACKING": "off",
           "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    start = time.perf_counter()
    with open(out / "launch.log", "w") as log:
        done = subprocess.run(command, env=env, stdout=log, stderr=subprocess.STDOUT, check=False)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{label} failed ({done.returncode}):\n" + (out / "launch.log").read_text()[-3000:])
    res = json.loads((out / RESULT).read_text())
    assert res["world_size"] == processes
    run = Run(label, processes, threads, res["tokens_per_s"], wall, res["train_loss"], res["steps"])
    print(f"  {label:<27} {run.tokens_per_s:7.0f} tok/s  wall {run.wall_s:5.0f} s  loss after {run.steps} steps "
          f"{run.loss:.4f}", flush=True)
    return run


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=12, help="optimizer steps per run")
    parser.add_argument("--batch", type=int, default=4, help="global batch in packed rows (even)")
    parser.add_argument("--rows", type=int, default=400, help="sample-corpus rows generated (train split used)")
    parser.add_argument("--recipe", default="cpu-tiny", help="recipe whose base_model and train sections are used")
    parser.add_argument("--repeats", type=int, default=1, help="rounds of the three runs, alternating (the CPU is "
                                                                "shared: the median is reported)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--base", default="", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return 0
    if args.batch % 2:
        parser.error("--batch must be even (split over 2 processes)")

    from pipeline.base_model import BaseModelConfig, build_base_model
    from pipeline.recipes import stage_config

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        os.environ["VOX_STATE_DIR"] = str(root / "state")
        bcfg = replace(stage_config(BaseModelConfig, "base_model", args.recipe), pretrain_steps=1, pretrain_warmup=1)
        base = build_base_model(bcfg, rows(args.rows), root / "base", "bench")
        print(f"bench/train_ddp.py: {(base.params or 0) / 1e6:.1f}M-param bootstrap ({args.recipe}), "
              f"{len(rows(args.rows))} sample rows; global batch {args.batch} packed rows; {args.steps} steps; "
              f"{os.cpu_count()} CPUs", flush=True)
        rounds = [(launch(f"1 process x 2 threads #{i + 1}", 1, 2, args.batch, args, base.model, root),
                   launch(f"1 process x 1 thread #{i + 1}", 1, 1, args.batch, args, base.model, root),
                   launch(f"2 processes x 1 thread #{i + 1}", 2, 1, args.batch // 2, args, base.model, root))
                  for i in range(args.repeats)]
    one2, one1, two = (median([r[k] for r in rounds]) for k in range(3))
    print(f"median of {args.repeats} round(s):")
    print(f"DDP 2 x 1 thread vs 1 x 2 threads: {two.tokens_per_s / one2.tokens_per_s:.2f}x tokens/s "
          f"({two.tokens_per_s:.0f} vs {one2.tokens_per_s:.0f}); vs 1 x 1 thread: "
          f"{two.tokens_per_s / one1.tokens_per_s:.2f}x; wall {two.wall_s:.0f} s vs {one2.wall_s:.0f} s")
    print(f"loss after {args.steps} steps: 1 process {one2.loss:.4f} / {one1.loss:.4f}, 2 processes {two.loss:.4f} "
          f"(|diff| {abs(two.loss - one2.loss):.4f}; the row order differs: DistributedSampler vs RandomSampler)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
