"""Which bootstrap shape learns to copy names within a pretraining token budget (pipeline.copy_probe).

Each run builds a bootstrap model of one shape, pretrains it with the pipeline's own loop
(:func:`pipeline.base_model.pretrain`: the corpus train split once, then fresh stream programs) for
a number of tokens, and prints one JSON line: steps, tokens, train seconds, the mean loss of the
last 10 steps and the copy probe's first/repeat NLL (nats). ``--rate`` instead times a few steps of
every listed shape here and prints tokens/s (building the steps' data included, as in the stage),
so a budget in minutes converts to tokens.

    .venv/bin/python bench/copy_sweep.py --rate [--shape L4d128 ...]
    .venv/bin/python bench/copy_sweep.py --run L4d128:4.0:256:0.003 [--run ...]

A run is ``SHAPE:MTOKENS:BLOCK:LR[:BATCH]``; a shape ``L<layers>d<width>`` has head_dim 64,
half as many KV heads (at least 1) and a SwiGLU width of 3x (``L4d128`` is cpu-tiny's base since
2026-12-04, ``L4d256`` the one before);
BATCH defaults to 4096 tokens per step. ``--corpus`` is a train split (default: the state's).

Measured on one H200 (2026-12-04, tokens = what 2 CPU cores here pretrain in about 4 minutes
at the ``--rate`` figures, which follow): copying forms as a phase change in *tokens*, not steps.

- L4d256 (5.0k tok/s here), block 512, first/repeat NLL at 1.2M tokens 3.98/4.09; 2.0M 3.42/3.39;
  3.0M 3.26/2.69; **4.0M 2.67/0.19**; 8.0M 2.45/0.06. 2.0M tokens in 977 steps (batch 4, or block
  256): 3.48/3.55, 3.35/3.66, so more steps do not help.
- L4d128 (15.2k tok/s at block 256): 3.3M 2.93/1.53, **4.0M 2.78/0.45**, 5.0M 2.64/0.26; at block
  512 (10.7k tok/s) 4.0M gave 3.14/2.99.
- L2d128 3.6M (block 512, 16.3k tok/s) 3.23/2.31; L2d192 2.9M (13.3k) 3.19/3.06; L2d256 2.5M
  (11.2k) 3.22/3.27; L3d192 2.5M (11.2k) 3.15/2.64 (block 256).
- LR 0.01 instead of 0.003 was no better: L2d128 3.32/3.05, L4d128 3.32/3.69, L2d256 3.68/3.86.

So the former cpu-tiny base, L4d256, needs about 4M tokens (13 min here), while L4d128 at block 256
copies after 4M tokens in about 4.4 min of these cores: cpu-tiny's base since then.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

_SHAPE = re.compile(r"L(\d+)d(\d+)")
DEFAULT_SHAPES = ("L4d256", "L4d128", "L2d128", "L2d192", "L2d256", "L3d192")


def shape_sizes(shape: str) -> dict[str, int]:
    """``BaseModelConfig`` sizes of ``L<layers>d<width>`` (head_dim 64, KV heads half, MLP 3x).

    Raises:
        ValueError: not of that form, or a width that is not a multiple of 64.
    """
    m = _SHAPE.fullmatch(shape)
    if not m or int(m[2]) % 64 or int(m[1]) < 1:
        raise ValueError(f"shape {shape!r}: expected L<layers>d<width>, width a multiple of 64 (e.g. L4d128)")
    layers, width = int(m[1]), int(m[2])
    heads = width // 64
    return {"num_layers": layers, "hidden_size": width, "num_heads": heads,
            "num_kv_heads": max(1, heads // 2), "intermediate_size": 3 * width}


@dataclass(frozen=True)
class Run:
    """One sweep point: ``shape``, ``tokens`` (pretraining tokens), ``block`` (tokens per block),
    ``lr`` (peak AdamW LR) and ``batch`` (blocks per step)."""

    shape: str
    tokens: int
    block: int
    lr: float
    batch: int

    @classmethod
    def parse(cls, spec: str) -> Run:
        """``SHAPE:MTOKENS:BLOCK:LR[:BATCH]`` (see the module docstring).

        Raises:
            ValueError: a malformed spec, naming the part that is wrong.
        """
        parts = spec.split(":")
        if len(parts) not in (4, 5):
            raise ValueError(f"run {spec!r}: expected SHAPE:MTOKENS:BLOCK:LR[:BATCH]")
        shape_sizes(parts[0])
        try:
            tokens, block, lr = int(float(parts[1]) * 1e6), int(parts[2]), float(parts[3])
            batch = int(parts[4]) if len(parts) == 5 else max(1, 4096 // block)
        except ValueError:
            raise ValueError(f"run {spec!r}: MTOKENS and LR are numbers, BLOCK and BATCH integers") from None
        if tokens < 1 or block < 8 or lr <= 0 or batch < 1:
            raise ValueError(f"run {spec!r}: MTOKENS, LR > 0; BLOCK >= 8; BATCH >= 1")
        return cls(parts[0], tokens, block, lr, batch)

    def config(self, steps: int | None = None) -> Any:
        """The ``BaseModelConfig`` of this run (``steps`` overrides the token count)."""
        from pipeline.base_model import BaseModelConfig

        n = steps if steps is not None else max(1, round(self.tokens / (self.batch * self.block)))
        size = shape_sizes(self.shape)
        return replace(BaseModelConfig(), num_layers=size["num_layers"], hidden_size=size["hidden_size"],
                       num_heads=size["num_heads"], num_kv_heads=size["num_kv_heads"],
                       intermediate_size=size["intermediate_size"], max_positions=1024, pretrain_steps=n,
                       pretrain_batch_size=self.batch, pretrain_block_size=self.block, pretrain_lr=self.lr,
                       pretrain_warmup=min(20, max(1, n // 2)))


def _model(cfg: Any, tok: Any, device: str) -> Any:
    import torch
    from transformers import AutoModelForCausalLM

    from pipeline.base_model import tiny_config

    torch.manual_seed(0)
    return AutoModelForCausalLM.from_config(tiny_config(cfg, tok), dtype=torch.float32).to(device)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, help="a train split parquet (default: the state's corpus)")
    parser.add_argument("--run", action="append", default=[], help="SHAPE:MTOKENS:BLOCK:LR[:BATCH] (repeatable)")
    parser.add_argument("--rate", action="store_true", help="time a few steps of each --shape here instead")
    parser.add_argument("--shape", action="append", default=[], help=f"for --rate (default {' '.join(DEFAULT_SHAPES)})")
    args = parser.parse_args(argv)
    try:
        runs = [Run.parse(s) for s in args.run]
        shapes = args.shape or list(DEFAULT_SHAPES)
        for s in shapes:
            shape_sizes(s)
    except ValueError as exc:
        parser.error(str(exc))
    if not runs and not args.rate:
        parser.error("nothing to do: pass --run SPEC or --rate")

    from pipeline import paths

    corpus = args.corpus or paths.artifacts_dir("corpus", create=False) / "train.parquet"
    if not corpus.is_file():
        print(f"{corpus}: no train split (run `make run` first, or pass --corpus)", file=sys.stderr)
        return 2
    from itertools import islice

    import pyarrow.parquet as pq
    import torch

    from pipeline.base_model import pretrain, pretrain_texts, train_tokenizer
    from pipeline.copy_probe import probe_copying
    from pipeline.pretrain_stream import stream_documents

    docs = pretrain_texts(pq.read_table(corpus).to_pylist())
    tok = train_tokenizer(docs + list(islice(stream_documents(0, start=1 << 40), 1000)), 2048)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    if args.rate:
        for shape in shapes:
            for block in (512, 256):
                run = Run(shape, 0, block, 3e-3, 4096 // block)
                model = _model(run.config(), tok, device)
                pretrain(model, tok, docs, run.config(steps=2))  # warm-up: allocator, kernels
                start = time.perf_counter()
                _, n = pretrain(model, tok, docs, run.config(steps=6))
                rate = n / (time.perf_counter() - start)
                params = sum(p.numel() for p in model.parameters())
                print(json.dumps({"shape": shape, "block": block, "params": params, "tok_s": round(rate)}), flush=True)
    for run in runs:
        cfg = run.config()
        model = _model(cfg, tok, device)
        start = time.perf_counter()
        losses, n = pretrain(model, tok, docs, cfg)
        seconds = time.perf_counter() - start
        probe = probe_copying(model, tok)
        print(json.dumps({"run": f"{run.shape}:{n / 1e6:.1f}:{run.block}:{run.lr}:{run.batch}",
                          "steps": cfg.pretrain_steps, "tokens": n, "train_s": round(seconds, 1),
                          "loss": round(sum(losses[-10:]) / len(losses[-10:]), 3), **probe.figures()}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
