"""`vox` start-up: seconds of the main CLI entry points, each a fresh process, median of N runs.

Measured: ``vox --help``, ``vox check`` on a small example, ``vox chat --dry-run`` (a provider key
is set, so it routes and prints the decision; no model is called), ``vox chat`` with no model
available (no key, no local server: the "no model can serve" error), ``vox model list``, and for
reference what the first model call adds: importing LiteLLM. Runs offline in a temporary
``VOX_HOME`` (catalog built once first, untimed; no keyring; local endpoint on a closed port).
Figures only: nothing is asserted (``tests/serving/test_startup_imports.py`` guards the import
structure instead). Wall time includes time descheduled on a shared machine, so the CPU time of
the process (user + system) is printed too, and the load average.

Run: ``.venv/bin/python bench/cli_startup.py [--runs 5]``
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PROMPT = "Write a Vox function `f(x: int) to int`"
#: (label, ``vox`` arguments, extra environment, expected exit status)
COMMANDS: list[tuple[str, list[str], dict[str, str], int]] = [
    ("vox --help", ["--help"], {}, 0),
    ("vox check examples/run_commands.vox", ["check", "examples/run_commands.vox"], {}, 0),
    ("vox chat --dry-run PROMPT (key set)", ["chat", "--dry-run", PROMPT], {"OPENAI_API_KEY": "sk-bench-dry-run"}, 0),
    ("vox chat PROMPT (no model available)", ["chat", PROMPT], {}, 1),
    ("vox model list", ["model", "list"], {}, 0),
]
LITELLM_IMPORT = "from serving.llm import import_litellm; import_litellm()"


def environment(home: str) -> dict[str, str]:
    """This process's environment, offline and keyless, with ``home`` as VOX_HOME/VOX_STATE_DIR."""
    from serving.keys import PROVIDER_ENV

    env = {k: v for k, v in os.environ.items() if not any(k in names for names in PROVIDER_ENV.values())}
    env.update(VOX_HOME=home, VOX_STATE_DIR=str(Path(home) / "state"), VOX_NO_KEYRING="1", VOX_OFFLINE="1",
               VOX_LOCAL_ENDPOINTS="http://127.0.0.1:9/v1", VOX_OLLAMA="0", HF_HUB_OFFLINE="1",
               PYTHONPATH=os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    return env


def timed(argv: list[str], env: dict[str, str], expected: int) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one run of ``argv``.

    Raises:
        SystemExit: the command exited with another status than ``expected`` (its stderr shown).
    """
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=REPO, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    if done.returncode != expected:
        raise SystemExit(f"{' '.join(argv)}: exit {done.returncode}, expected {expected}\n{done.stderr[-2000:]}")
    return seconds, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=5, help="runs per command (median reported)")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    vox = [sys.executable, "-m", "serving.cli"]
    with tempfile.TemporaryDirectory(prefix="vox-bench-startup-") as home:
        env = environment(home)
        timed([*vox, "model", "discover"], env, 0)  # build the catalog once, as a first `vox` command would
        print(f"CLI start-up, seconds, median of {args.runs} runs (load average {os.getloadavg()[0]:.1f} "
              f"on {os.cpu_count()} cores):")
        rows = [(label, [*vox, *argv], {**env, **extra}, code) for label, argv, extra, code in COMMANDS]
        rows.append(("reference: importing LiteLLM (first model call)", [sys.executable, "-c", LITELLM_IMPORT], env, 0))
        for label, argv, run_env, code in rows:
            walls, cpus = zip(*(timed(argv, run_env, code) for _ in range(args.runs)), strict=True)
            print(f"  {label:52} wall {statistics.median(walls):5.2f} (min {min(walls):5.2f})  "
                  f"CPU {statistics.median(cpus):5.2f}")


if __name__ == "__main__":
    main()
