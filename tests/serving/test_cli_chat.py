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


def test_dry_run_with_no_usable_model_shows_what_it_considered(tmp_path: Path, keyless: pytest.MonkeyPatch) -> None:
    # new-user trial: `--dry-run` printed only the error; it shows the routing report first (stdout),
    # then the error naming the local endpoint it probed (stderr), exit 1
    keyless.setenv("VOX_HOME", str(tmp_path))
    keyless.setenv("VOX_OFFLINE", "1")
    result = CliRunner().invoke(app, ["chat", "--dry-run", "Write a Vox function `f() to int`"])
    assert result.exit_code == 1, result.output
    assert result.stdout.startswith("routing: mode=auto category=codegen (Vox code)\n  rule: "), result.stdout
    assert "models of providers without a key" in result.stdout
    assert result.stderr.startswith("error: no model can serve this request in mode 'auto' (no local model "
                                    "reachable; endpoints probed: http://127.0.0.1:9/v1 (connection refused);"), \
        result.stderr


def test_dry_run_of_an_explicit_model_that_cannot_serve_shows_why(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VOX_HOME", str(tmp_path))
    monkeypatch.setenv("VOX_LOCAL_ENDPOINTS", "")
    monkeypatch.setenv("VOX_OLLAMA", "0")
    monkeypatch.setenv("VOX_NO_KEYRING", "1")
    monkeypatch.setenv("VOX_OFFLINE", "1")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = CliRunner().invoke(app, ["chat", "--dry-run", "-m", "openai/gpt-5", "hello"])
    assert result.exit_code == 1, result.output
    assert result.stdout.startswith("routing: mode=openai/gpt-5"), result.output
    assert "  rejected openai/gpt-5 " in result.stdout and "cannot be used" in result.stderr


def test_ctrl_c_says_the_chat_was_interrupted(monkeypatch: pytest.MonkeyPatch) -> None:
    # it exited 130 with nothing on stderr (new-user tester); `vox run` says "vox run: interrupted"
    import serving.commands.chat as chat_command

    def interrupted(*_args: object, **_kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(chat_command, "_run", interrupted)
    result = CliRunner().invoke(app, ["chat", "-m", "free", "hi"])
    assert result.exit_code == 130, result.output
    assert "vox chat: interrupted" in result.stderr
