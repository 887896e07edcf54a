"""`vox chat ""` (new-user tester): an empty or blank PROMPT is a usage error (exit 2) before any
catalog or model is touched; it used to be sent to the model as an empty user turn."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from serving.cli import app


@pytest.mark.parametrize("prompt", ["", "   ", "\n"])
def test_blank_prompt_is_a_usage_error(prompt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VOX_HOME", str(tmp_path))
    result = CliRunner().invoke(app, ["chat", "-m", "free", prompt])
    assert result.exit_code == 2, result.output
    assert "the PROMPT is empty" in result.stderr
    assert not (tmp_path / "cache").exists()  # no catalog built, no model asked


def test_an_unknown_model_is_a_usage_error_before_any_request(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # It used to route the request first (importing LiteLLM to count tokens: 13-26 s for a new user)
    # and print a "[session] 0 model call(s)" line before the error.
    monkeypatch.setenv("VOX_HOME", str(tmp_path))
    monkeypatch.setenv("VOX_LOCAL_ENDPOINTS", "")
    monkeypatch.setenv("VOX_OLLAMA", "0")
    monkeypatch.setenv("VOX_NO_KEYRING", "1")
    result = CliRunner().invoke(app, ["chat", "-m", "nonsense", "Write a Vox function `f() to int`"])
    assert result.exit_code == 2, result.output
    assert "unknown model or mode 'nonsense'" in result.stderr
    assert "[session]" not in result.output


def test_an_interactive_session_ended_by_the_user_exits_0_when_no_model_could_serve(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # every turn failed with "no model can serve"; the user ended the session: exit 0 (README)
    monkeypatch.setenv("VOX_HOME", str(tmp_path))
    monkeypatch.setenv("VOX_LOCAL_ENDPOINTS", "")
    monkeypatch.setenv("VOX_OLLAMA", "0")
    monkeypatch.setenv("VOX_NO_KEYRING", "1")
    monkeypatch.setenv("VOX_OFFLINE", "1")
    result = CliRunner().invoke(app, ["chat", "-m", "free"], input="Write a Vox function `f() to int`\n/exit\n")
    assert "no model can serve this request" in result.output, result.output
    assert result.exit_code == 0, result.output
