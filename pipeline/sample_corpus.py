"""A small deterministic corpus with the real corpus schema, for tests and benchmarks.

The real corpus is built by the corpus assets (``pipeline.mix``); this module only writes a
stand-in ``train.parquet`` / ``heldout.parquet`` pair so training code can be exercised
without it (tests, ``bench/train.py`` on a fresh clone). Programs follow the 2026 syntax.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from pipeline.prompt import system_prompt

NOUNS = ("price", "score", "count", "total", "width", "height", "speed", "weight", "level", "limit",
         "amount", "budget", "stock", "rate", "depth", "size", "age", "distance", "balance", "load")
VERBS = ("double", "clamp", "scale", "bump", "shift", "trim", "grow", "halve", "boost", "cap")
THINGS = ("Order", "Ticket", "Invoice", "Sensor", "Player", "Parcel", "Booking", "Task", "Note", "Device")


def _cap(s: str) -> str:
    return s[:1].upper() + s[1:]


def _fn(r: random.Random) -> tuple[str, str]:
    verb, noun = r.choice(VERBS), r.choice(NOUNS)
    k = r.randint(2, 9)
    op = r.choice(["*", "+", "-"])
    body = f"fn {verb}_{noun}({noun}: int) to int {{\n  ret {noun} {op} {k}\n}}"
    return f"Write a Vox function `{verb}_{noun}` that takes an int {noun} and returns it {op} {k}.", body


def _types(r: random.Random) -> tuple[str, str]:
    thing, a, b = r.choice(THINGS), *r.sample(NOUNS, 2)
    body = (f"type {thing} = {{ {a}: int, {b}: int }}\n\n"
            f"fn {thing.lower()}_sum(x: {thing}) to int {{\n  ret x.{a} + x.{b}\n}}")
    return f"Define a record type {thing} with int fields {a} and {b}, and a function summing them.", body


def _actors(r: random.Random) -> tuple[str, str]:
    thing, noun = r.choice(THINGS), r.choice(NOUNS)
    body = (f"actor {thing}Counter {{\n  on add_{noun}(n: int) to int {{\n    ret n + 1\n  }}\n}}\n\n"
            f"let c = spawn({thing}Counter)\nprint(c.add_{noun}(1))")
    return f"Write an actor {thing}Counter with a handler add_{noun} that increments an int, and call it once.", body


def _workflows(r: random.Random) -> tuple[str, str]:
    noun = r.choice(NOUNS)
    body = (f"activity check_{noun}(v: int) to Result[int] {{\n  if v < 0 {{ ret Error(\"negative\") }}\n"
            f"  ret Ok(v)\n}}\n\nworkflow run_{noun}(v: int) to Result[int] {{\n"
            f"  let x = check_{noun}(v)?\n  ret Ok(x * 2)\n}}")
    return f"Write a workflow run_{noun} that validates a {noun} with an activity and doubles it.", body


def _mcp(r: random.Random) -> tuple[str, str]:
    verb, noun = r.choice(VERBS), r.choice(NOUNS)
    body = f"@mcp.tool \"{_cap(verb)} a {noun}\"\nfn {verb}_{noun}(v: int) to int {{\n  ret v * 2\n}}"
    return f"Expose an MCP tool {verb}_{noun} that takes an int {noun} and returns twice it.", body


def _tests(r: random.Random) -> tuple[str, str]:
    noun, k = r.choice(NOUNS), r.randint(1, 9)
    body = (f"fn inc_{noun}(v: int) to int {{\n  ret v + {k}\n}}\n\n@test\n"
            f"fn test_inc_{noun}() {{\n  assert(inc_{noun}(1) == {k + 1})\n}}")
    return f"Write inc_{noun} adding {k} to an int, with a @test that checks it.", body


def _views(r: random.Random) -> tuple[str, str]:
    thing = r.choice(THINGS)
    body = (f"fn {thing}Page(name: str) to Element {{\n  ret column(gap=2) {{\n    heading(text=name)\n"
            f"    \"{thing.lower()} details\"\n  }}\n}}\n\nroutes {{\n  \"/{thing.lower()}/:name\" to {thing}Page\n}}")
    return f"Create a {thing}Page view showing a heading with the name, routed at /{thing.lower()}/:name.", body


def _modules(r: random.Random) -> tuple[str, str]:
    noun, k = r.choice(NOUNS), r.randint(10, 99)
    body = (f"import std.env\n\nlet max_{noun} = {k}\n\nfn within_{noun}(v: int) to bool {{\n"
            f"  ret v <= max_{noun}\n}}")
    return f"Write a module with a constant max_{noun} = {k} and a function within_{noun} checking a value.", body


def _automation(r: random.Random) -> tuple[str, str]:
    name = r.choice(NOUNS)
    body = (f"import std.fs\n\nmatch fs.read(\"{name}.txt\") {{\n  Ok(text) -> print(len(text))\n"
            f"  Error(msg) -> print(\"failed: \" + msg)\n}}")
    return f"Write a Vox script that reads {name}.txt and prints its length, or the error.", body


FAMILIES = {
    "functions": _fn, "types_match": _types, "actors": _actors, "workflows": _workflows, "mcp": _mcp,
    "tests": _tests, "views": _views, "modules": _modules, "automation": _automation,
}


def sample_rows(n: int, seed: int = 0, heldout_fraction: float = 0.1) -> list[dict[str, Any]]:
    """``n`` rows in the corpus schema (``split`` set by a seeded per-instance draw).

    Args:
        n: number of rows (one per generated program).
        seed: RNG seed; same seed, same rows.
        heldout_fraction: share of instances put in the held-out split.
    """
    r = random.Random(seed)
    sp = system_prompt()
    rows = []
    families = list(FAMILIES)
    for i in range(n):
        family = families[i % len(families)]
        prompt, code = FAMILIES[family](r)
        response = f"```vox\n{code}\n```"
        split = "heldout" if r.random() < heldout_fraction else "train"
        rows.append({
            "id": f"sample-{i:06d}", "instance_id": f"inst-{i:06d}", "split": split,
            "source": "organic", "family": family, "construct": family, "difficulty": 1,
            "seed": seed, "prompt": prompt, "response": response,
            "messages": [{"role": "system", "content": sp}, {"role": "user", "content": prompt},
                         {"role": "assistant", "content": response}],
        })
    return rows


def write_sample_corpus(out_dir: Path, n: int = 400, seed: int = 0) -> Path:
    """Write ``train.parquet`` and ``heldout.parquet`` (corpus schema) under ``out_dir``.

    Returns:
        ``out_dir``.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    out_dir.mkdir(parents=True, exist_ok=True)
    rows = sample_rows(n, seed)
    for split in ("train", "heldout"):
        part = [row for row in rows if row["split"] == split]
        pq.write_table(pa.Table.from_pylist(part), out_dir / f"{split}.parquet")
    return out_dir


#: a micro recipe (seconds per stage on CPU) for tests and smoke runs; same keys as the real ones.
#: Widths stay >= 64: bitsandbytes' CPU 4-bit kernels work on blocks of 64 input features.
MICRO_RECIPE: dict[str, dict[str, Any]] = {
    "base_model": {"model": "bootstrap", "vocab_size": 320, "hidden_size": 64, "num_layers": 2, "num_heads": 2,
                   "num_kv_heads": 1, "intermediate_size": 128, "max_positions": 256, "pretrain_steps": 4,
                   "pretrain_batch_size": 4, "pretrain_block_size": 64, "pretrain_lr": 3.0e-3,
                   "pretrain_warmup": 1},
    "train": {"quantization": "nf4", "lora_r": 4, "lora_alpha": 8, "max_length": 128, "batch_size": 2,
              "max_steps": 4, "learning_rate": 1.0e-2, "warmup_ratio": 0.0, "max_train_rows": 64,
              "max_eval_rows": 8, "eval_steps": 4, "save_steps": 2, "logging_steps": 1},
    "eval": {"n_samples": 2, "k": 2, "verify_n": 2, "temperature": 0.7, "max_new_tokens": 12, "batch_size": 64,
             "pass_threshold": 0.0},
    "export": {"model_name": "vox-mens-micro", "dtype": "float32", "verify_atol": 1.0e-3, "verify_new_tokens": 6},
}


def write_micro_recipe(path: Path, **sections: dict[str, Any]) -> Path:
    """Write :data:`MICRO_RECIPE` (section values updated from ``sections``) as YAML at ``path``."""
    import yaml

    recipe = {name: {**body, **sections.get(name, {})} for name, body in MICRO_RECIPE.items()}
    path.write_text(yaml.safe_dump(recipe, sort_keys=False))
    return path
