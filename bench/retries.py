"""Retries benchmark: what compiler-checked retries (``pipeline/decoding_retry.py``) add to the
constrained policy, and what they cost.

On a stored run (``$VOX_STATE_DIR``, default ``.vox-state``: the base model and adapter of the
last ``make run``), decodes the eval suite (``pipeline/data/eval_tasks*.yaml``, 4 samples per task,
the eval's sampling settings) once under the constrained policy, prints headline pass@1 (strict +
declares what was asked), raw compile rate, "declares what was asked" (over the tasks that name
items), blocks cut by the token limit and the seconds it took;
then runs ``--rounds`` rounds of retries at ``--temperature`` on the same first pass (a paired
comparison: the gain is the retries' alone) and prints the same figures with the retry counts
(faulty, retried, replaced, fixed) and their seconds.

Run: ``.venv/bin/python bench/retries.py [--rounds 1] [--temperature 0.7] [--first-temperature T] [--base]
[--seed 0] [--save answers.jsonl]``.
Exits 2 when there is no stored run.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def figures(tasks: list[Any], texts: list[list[str]]) -> str:
    """``pass@1 .., best-of-n .., compiled .., declares .., cut N`` of ``texts`` (``n`` per task;
    best-of-n: the share of tasks with a passing sample, the eval's verified policy; "declares":
    the share of samples whose task names items that declare them all)."""
    from pipeline.eval_scoring import score_completion, vox_checker

    checker = vox_checker(False)
    rows = [[score_completion(x, t.prompt, checker) for x in row] for t, row in zip(tasks, texts)]
    flat = [s for row in rows for s in row]
    n = max(1, len(flat))
    named = [s for s in flat if s.named]
    best = sum(any(s.passed for s in row) for row in rows) / max(1, len(rows))
    return (f"pass@1 {sum(s.passed for s in flat) / n:.3f}, best-of-{len(texts[0]) if texts else 0} {best:.3f}, "
            f"compiled {sum(s.compiled for s in flat) / n:.3f}, "
            f"declares {sum(s.declared for s in named) / max(1, len(named)):.3f}, "
            f"cut {sum(s.truncated for s in flat)} of {len(flat)}")


def main() -> int:
    from bench.stored_run import add_run_arguments, load_stored_run

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--temperature", type=float, default=0.7, help="the retries' temperature")
    parser.add_argument("--first-temperature", type=float, default=None,
                        help="the first pass's temperature (default: the default recipe's eval.temperature)")
    parser.add_argument("--max-new", type=int, default=None,
                        help="token limit per answer (default: the default recipe's eval.max_new_tokens)")
    parser.add_argument("--save", type=Path, default=None,
                        help="write every answer (after the retries) as JSON lines: task, sample, completion")
    add_run_arguments(parser)
    args = parser.parse_args()

    import torch

    from pipeline.decoding import SamplingParams
    from pipeline.decoding_retry import retry_faults
    from pipeline.eval_tasks import load_tasks
    from pipeline.evaluate import EvalConfig
    from pipeline.recipes import stage_config

    run = load_stored_run(args.base)
    if run is None:
        return 2
    cfg = stage_config(EvalConfig, "eval")  # the default recipe's eval section
    budget = args.max_new or cfg.max_new_tokens
    tok = run.tokenizer
    first_t = cfg.temperature if args.first_temperature is None else args.first_temperature
    gen = run.generator(budget, first_t, args.seed)
    tasks = load_tasks(None)
    conversations = run.conversations([t.prompt for t in tasks])
    torch.manual_seed(args.seed)
    start = time.perf_counter()
    ids: list[list[list[int]]] = []
    first = SamplingParams(budget, first_t, cfg.top_p, seed=args.seed)  # seeded: the pass repeats
    texts = gen._decode(conversations, cfg.n_samples, first, ids)
    print(f"{'base' if args.base else 'adapter'}, constrained, {budget} tokens, first pass at {first_t}: "
          f"{figures(tasks, texts)}"
          f" ({time.perf_counter() - start:.0f} s)")
    start = time.perf_counter()
    stats = retry_faults(gen._decode, conversations, texts, ids, tok,
                         SamplingParams(budget, args.temperature, cfg.top_p, seed=args.seed), args.rounds, args.seed)
    print(f"after {args.rounds} round(s) of retries at {args.temperature}: {figures(tasks, texts)}"
          f" ({time.perf_counter() - start:.0f} s; faulty {stats.faulty}, retried {stats.retried},"
          f" replaced {stats.replaced}, fixed {stats.fixed})")
    if args.save is not None:
        import json

        with args.save.open("w", encoding="utf-8") as out:
            for task, row in zip(tasks, texts):
                for i, text in enumerate(row):
                    out.write(json.dumps({"task": task.id, "sample": i, "completion": text}) + "\n")
        print(f"answers written to {args.save}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
