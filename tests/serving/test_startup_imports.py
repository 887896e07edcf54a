"""The `vox` commands that call no model import no heavy library (new-user trial: `vox chat --dry-run`
and the "no model can serve" error took 11-14 s, ~5 s of it importing LiteLLM to count tokens; `vox serve
--device tpu` took 4.7 s to refuse, importing torch first).

Guards the import structure, not a time (``bench/cli_startup.py`` prints the times): each command
runs in one fresh interpreter, and the heavy modules it pulled in are reported per command.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
#: libraries that take seconds to import and that these commands never need
HEAVY = ("litellm", "openai", "torch", "transformers", "dagster", "fastapi", "mlflow")
PROMPT = "Write a Vox function `f(x: int) to int`"

SCRIPT = """
import json, sys
from typer.testing import CliRunner
from serving.cli import app
heavy = {heavy!r}
report = []
for args, env in {commands!r}:
    result = CliRunner().invoke(app, args, env=env)
    report.append([args, result.exit_code, sorted(m for m in heavy if m in sys.modules), result.output[-500:]])
print(json.dumps(report))
"""


def test_commands_that_call_no_model_import_no_heavy_library(tmp_path: Path) -> None:
    from serving.keys import PROVIDER_ENV

    commands = [
        (["--help"], {}),
        (["check", str(REPO / "examples" / "run_commands.vox")], {}),
        (["model", "list", "--limit", "1"], {}),
        (["chat", "--dry-run", PROMPT], {"OPENAI_API_KEY": "sk-test-dry-run-only"}),  # routes, calls nothing
        (["chat", PROMPT], {}),  # no key, no local model: "no model can serve this request"
        (["serve", "--device", "tpu"], {}),  # a misspelt device is refused before torch loads (took 4.7 s)
    ]
    env = {k: v for k, v in os.environ.items() if not any(k in names for names in PROVIDER_ENV.values())}
    env.update(VOX_HOME=str(tmp_path / "home"), VOX_STATE_DIR=str(tmp_path / "state"), VOX_NO_KEYRING="1",
               VOX_OFFLINE="1", VOX_LOCAL_ENDPOINTS="http://127.0.0.1:9/v1", VOX_OLLAMA="0",
               PYTHONPATH=str(REPO))
    code = SCRIPT.format(heavy=HEAVY, commands=commands)
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.splitlines()[-1])
    assert [(args[0], exit_code) for args, exit_code, _, _ in report] == [
        ("--help", 0), ("check", 0), ("model", 0), ("chat", 0), ("chat", 1), ("serve", 2)], report
    assert "no model can serve this request" in report[-2][3]
    assert "unknown device 'tpu'" in report[-1][3]
    imported = {" ".join(args[:2]): heavy for args, _, heavy, _ in report if heavy}
    assert not imported, f"heavy libraries imported (cumulative, first by the command named): {imported}"
