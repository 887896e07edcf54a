"""Best-of-n benchmark: how the share of requests that get a verified answer grows with the number
of candidates, on the decoding ``vox chat`` asks a local model for.

On a stored run (``$VOX_STATE_DIR``, default ``.vox-state``: the base model and adapter of the
last ``make run``), draws ``--n`` candidates per task for the user-phrased eval tasks
(``pipeline/data/eval_tasks_user.yaml``; ``--suite all`` adds the 72 core tasks) the way
``vox serve`` answers ``vox chat``'s best-of-n request: Vox-constrained, ``--temperature``
(``vox chat``'s candidate temperature by default), one round of compiler-checked retries. Each
candidate is judged as ``vox chat`` judges it (:func:`serving.best_of_n.check_candidate`: zero
errors and every requested item declared), and the script prints, for k = 1, 2, 4, ... up to
``--n``, the unbiased pass@k over tasks (the share of requests best-of-k answers with a verified
program), with the seconds the draw took. It also prints how many tasks no candidate solved.

Run: ``.venv/bin/python bench/best_of_n.py [--n 16] [--suite user|all] [--max-new-tokens 256] [--seed 0]``.
Exits 2 when there is no stored run.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> int:
    from bench.stored_run import add_run_arguments, load_stored_run
    from serving.best_of_n import CANDIDATE_TEMPERATURE

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=16, help="candidates drawn per task")
    parser.add_argument("--suite", choices=("user", "all"), default="user")
    parser.add_argument("--temperature", type=float, default=CANDIDATE_TEMPERATURE)
    parser.add_argument("--max-new-tokens", type=int, default=256)
    parser.add_argument("--retries", type=int, default=1)
    add_run_arguments(parser)
    args = parser.parse_args()

    from pipeline.eval_tasks import USER_TASKS_PATH, load_tasks
    from pipeline.evaluate import pass_at_k
    from serving.best_of_n import check_candidate

    run = load_stored_run(args.base)
    if run is None:
        return 2
    gen = run.generator(args.max_new_tokens, args.temperature, args.seed, retries=args.retries)
    tasks = load_tasks(None if args.suite == "all" else USER_TASKS_PATH)
    conversations = run.conversations([t.prompt for t in tasks])
    start = time.perf_counter()
    texts = gen(conversations, args.n)
    seconds = time.perf_counter() - start
    passed = [sum(check_candidate(x, t.prompt).passed for x in row) for t, row in zip(tasks, texts)]
    print(f"{'base' if args.base else 'adapter'}, {len(tasks)} tasks x {args.n} candidates "
          f"(constrained, T {args.temperature}, {args.retries} retry round(s), {args.max_new_tokens} new tokens): "
          f"{seconds:.0f} s, {seconds / len(tasks):.1f} s per task")
    k = 1
    while k <= args.n:
        rate = sum(pass_at_k(args.n, c, k) for c in passed) / len(tasks)
        print(f"  best-of-{k:<2d} verified: {rate:.3f}")
        k *= 2
    print(f"  tasks no candidate solved: {sum(c == 0 for c in passed)} of {len(tasks)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
