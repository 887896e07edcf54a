"""End to end, offline: `vox chat --model free` with no API keys routes to the exported model
served by `vox serve` (the tiny test export on a loopback port) and verifies its answer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from serving.cli import app

# The servers run in this test process, which holds torch, transformers and LiteLLM: one full
# garbage collection takes ~1.5 s on a busy machine, and one landing inside the 200 ms default probe
# window made the probe time out (model "unreachable") while the replay server then wrote its late
# answer to the closed socket (the ConnectionResetError/BrokenPipeError traceback in the output).
PROBE_TIMEOUT = "10"


@pytest.fixture
def offline_env(keyless: pytest.MonkeyPatch, local_server: str, tiny_export_dir: Path) -> str:
    """No keys anywhere, only the local server reachable, the tiny export registered as latest."""
    _only_local(keyless, local_server)
    from pipeline.paths import exports_dir

    (exports_dir() / "latest.json").write_text(json.dumps({"path": str(tiny_export_dir), "eval_passed": True}))
    return local_server


def test_free_mode_routes_to_the_local_export(offline_env: str, tiny_model_name: str) -> None:
    runner = CliRunner()
    # --system: the SSOT prompt (~3.9k tokens) does not fit the tiny test model's 512-token context
    result = runner.invoke(app, ["chat", "--model", "free", "--explain", "--max-tokens", "16", "--max-repairs", "0",
                                 "--system", "You write Vox programs in ```vox blocks.",
                                 "Write a Vox function that adds two integers."])
    out = result.output
    assert f"primary  local/{tiny_model_name}" in out and "Vox pass@1 0.50" in out  # routing, from the card
    assert f"[local/{tiny_model_name}]\n" in out  # the answer streamed from the local server
    assert "vox-script-verify: " in out  # a random tiny model cannot pass; the verdict is still given
    assert f"models: local/{tiny_model_name}" in out and "cost $0.0000" in out
    assert result.exit_code == (0 if "vox-script-verify: PASS" in out else 1)


@pytest.mark.usefixtures("keyless")
def test_local_only_without_a_server_is_one_clear_error() -> None:
    result = CliRunner().invoke(app, ["chat", "-m", "genius", "--local-only", "hello"])
    assert result.exit_code == 1
    assert ("error: no local model is reachable (--local-only; endpoints probed: http://127.0.0.1:9/v1 "
            "(connection refused))") in result.output
    assert "`vox serve`" in result.output and "VOX_LOCAL_ENDPOINTS" in result.output
    assert "set a provider key" not in result.output and "Traceback" not in result.output


def test_an_endpoint_that_is_not_openai_compatible_is_named_as_such(keyless: pytest.MonkeyPatch) -> None:
    """User trial: a web server on the local endpoint was reported as "no local model reachable", as
    if nothing listened there. The error now says it answers, and how."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from threading import Thread

    class NotFound(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server API
            self.send_error(404)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), NotFound)
    Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        _only_local(keyless, url)
        result = CliRunner().invoke(app, ["chat", "-m", "free", "--local-only", "hello"])
    finally:
        server.shutdown()
        server.server_close()
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert (f"endpoints probed: {url} (answers, but not as an OpenAI-compatible server: GET /models gave "
            "HTTP 404)") in result.output, result.output


def _only_local(monkeypatch: pytest.MonkeyPatch, url: str) -> None:
    """After ``keyless``: only ``url`` is probed, with a deadline that survives a garbage collection."""
    monkeypatch.setenv("VOX_PROBE_TIMEOUT", PROBE_TIMEOUT)
    monkeypatch.setenv("VOX_LOCAL_ENDPOINTS", url)


def test_default_max_tokens_is_capped_to_a_small_local_context(keyless: pytest.MonkeyPatch, replay: Any) -> None:
    # Regression: `vox chat -m free` sent max_tokens=1024 to a 512-token `vox serve` model, which
    # rejects it (HTTP 400). The card's max_model_len and system_prompt_mode now set the cap.
    from pipeline.prompt import system_prompt
    from serving.router import LOCAL_PROMPT_FACTOR, LOCAL_TEMPLATE_TOKENS, route_request

    request = "Write a Vox function that adds two integers."
    answer = "```vox\nfn add(a: int, b: int) to int {\n    ret a + b\n}\n```"
    card = {"max_model_len": 512, "system_prompt_mode": "none"}
    with replay.ReplayServer([answer], model="vox-mens-tiny", card=card) as server:
        _only_local(keyless, server.base_url)
        result = CliRunner().invoke(app, ["chat", "-m", "free", "--explain", "--max-repairs", "0", "--candidates", "1",
                                          request])
    assert "Traceback" not in result.output and "[failed:" not in result.output, result.output
    [sent] = server.requests
    assert sent["messages"][0] == {"role": "system", "content": system_prompt()}  # sent; the server drops it
    asked = [{"role": "system", "content": system_prompt()}, {"role": "user", "content": request}]
    est = route_request(request, asked).presented_tokens["none"]  # as the server presents it: no system prompt
    cap = 512 - (est * LOCAL_PROMPT_FACTOR + LOCAL_TEMPLATE_TOKENS)
    assert sent["max_tokens"] == cap and 16 <= cap < 512
    assert f"max_tokens capped to {cap}: context window 512" in result.output
    assert "vox-script-verify: " in result.output


def test_tiny_local_server_answers_without_max_tokens(offline_env: str, tiny_model_name: str) -> None:
    # The real server (512-token context, system messages kept) accepts the capped request.
    result = CliRunner().invoke(app, ["chat", "--model", "free", "--max-repairs", "0", "--no-vox",
                                      "--system", "You write Vox programs in ```vox blocks.",
                                      "Write a Vox function that adds two integers."])
    assert f"[local/{tiny_model_name}]\n" in result.output and "[failed:" not in result.output, result.output
    assert f"models: local/{tiny_model_name}" in result.output and result.exit_code == 0


TINY_CARD = {"max_model_len": 512, "system_prompt_mode": "none"}
TINY_REQUEST = "Write a Vox function that returns the larger of two ints."


def test_tiny_context_repair_sends_a_compact_history(keyless: pytest.MonkeyPatch, replay: Any) -> None:
    # Regression: the first repair turn re-sent the whole answer (prose included), which did not
    # fit the 512-token export; only the request, the checked program and the diagnostics go back.
    prose = "This function compares the two integers and returns whichever one is larger. " * 20
    broken = f"Here it is:\n```vox\nfn larger(a: int, b: int) to int {{\n  ret c\n}}\n```\n{prose}"
    fixed = "```vox\nfn larger(a: int, b: int) to int {\n  ret a\n}\n```"
    with replay.ReplayServer([broken, fixed], model="vox-mens-tiny", card=TINY_CARD) as server:
        _only_local(keyless, server.base_url)
        result = CliRunner().invoke(app, ["chat", "-m", "free", "--candidates", "1", TINY_REQUEST])
    assert "error:" not in result.output and result.exit_code == 0, result.output
    assert "vox-script-verify: PASS" in result.output
    first, repair = server.requests
    assert [m["role"] for m in repair["messages"]] == ["system", "user", "assistant", "user"]
    assert repair["messages"][1] == {"role": "user", "content": TINY_REQUEST}
    assert repair["messages"][2] == {"role": "assistant",
                                     "content": "```vox\nfn larger(a: int, b: int) to int {\n  ret c\n}\n```"}
    assert "Line 2, Col 7: error[E0401] undefined name `c`" in repair["messages"][3]["content"]
    assert prose[:40] not in str(repair["messages"])


def test_tiny_context_repair_that_cannot_fit_ends_with_fail(keyless: pytest.MonkeyPatch, replay: Any) -> None:
    # Even the compact repair prompt is too big for 512 tokens: FAIL with the diagnostics and a
    # note, not "error: no model can serve" after the answer was shown; exit code as for FAIL.
    body = "\n".join(f"  let v{i} = missing_name_{i}" for i in range(12))
    broken = f"```vox\nfn larger(a: int, b: int) to int {{\n{body}\n  ret a\n}}\n```"
    with replay.ReplayServer([broken], model="vox-mens-tiny", card=TINY_CARD) as server:
        _only_local(keyless, server.base_url)
        result = CliRunner().invoke(app, ["chat", "-m", "free", "--explain", "--candidates", "1", TINY_REQUEST])
    out = result.output
    assert "no model can serve" not in out and "Traceback" not in out, out
    assert len(server.requests) == 1 and result.exit_code == 1
    note = "[check] repair stopped: the repair prompt does not fit local/vox-mens-tiny's 512-token context\n"
    tail = out[out.index(note) + len(note):]
    assert tail.startswith("vox-script-verify: FAIL\nLine 2, Col 12: error[E0401] undefined name `missing_name_0`")
    assert "[session] 1 model call(s)" in tail
