"""`vox chat --model free` on the user-phrased eval tasks: how many end in `vox-script-verify: PASS`.

Start a local model first (``vox serve [EXPORT_DIR] --port 8011``), then::

    VOX_LOCAL_ENDPOINTS=http://127.0.0.1:8011/v1 VOX_HOME=$(mktemp -d) VOX_NO_KEYRING=1 \\
        .venv/bin/python bench/chat_user_tasks.py [--candidates N] [--limit N] [--out FILE]

Each task runs the real CLI command in-process (typer's runner; no API keys, so ``free`` routes to
the local model): compiler-verified best-of-n, then the repair loop. Prints PASS per task, the PASS
rate, and how often the answer declares what the task names; ``--out`` keeps the transcripts.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path


def main() -> None:
    """Run every user-phrased task through `vox chat` and print the PASS rate."""
    from typer.testing import CliRunner

    from pipeline.eval_tasks import USER_TASKS_PATH, load_tasks
    from serving.cli import app
    from serving.extract import extract_vox_blocks, join_program
    from vox_lang.requests import extract_request, missing_items

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", type=int, default=None, help="--candidates for vox chat (default: its own)")
    parser.add_argument("--limit", type=int, default=0, help="first N tasks only")
    parser.add_argument("--out", type=Path, default=None, help="write transcripts as JSON here")
    args = parser.parse_args()
    tasks = load_tasks(USER_TASKS_PATH)[: args.limit or None]
    runner = CliRunner()
    passed = declared = 0
    records = []
    start = time.perf_counter()
    for task in tasks:
        cmd = ["chat", "--model", "free", "--explain", "--vox"]
        if args.candidates:
            cmd += ["--candidates", str(args.candidates)]
        t0 = time.perf_counter()
        result = runner.invoke(app, [*cmd, task.prompt])
        out = result.output
        ok = "vox-script-verify: PASS" in out
        answer = out.rsplit("vox-script-verify:", 1)[0]
        answer = answer[answer.rfind("\n[local/") + 1:]  # the last model answer (after any repair feedback)
        blocks = extract_vox_blocks(answer)
        names_ok = bool(blocks) and not missing_items(extract_request(task.prompt), join_program(blocks))
        passed += ok
        declared += names_ok
        records.append({"task": task.id, "pass": ok, "declared": names_ok, "exit": result.exit_code,
                        "seconds": round(time.perf_counter() - t0, 1), "transcript": out})
        print(f"{task.id}: {'PASS' if ok else 'FAIL'}{'' if names_ok else ' (asked item not declared)'} "
              f"{time.perf_counter() - t0:.1f}s", flush=True)
        if args.out:  # after every task, so an interrupted run keeps its transcripts
            args.out.write_text(json.dumps(records, indent=1))
    n = len(tasks)
    print(f"vox chat --model free: PASS {passed}/{n} = {passed / n:.2f}; declares what was asked {declared}/{n}; "
          f"{time.perf_counter() - start:.0f}s")


if __name__ == "__main__":
    main()
