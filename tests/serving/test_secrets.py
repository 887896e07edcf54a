"""A planted API key never shows up in output, logs or the catalog file; resolution order."""

from __future__ import annotations

import json
import logging

import pytest
from typer.testing import CliRunner

from serving.catalog import cache_path
from serving.cli import app
from serving.errors import AllProvidersFailed
from serving.keys import KeyConfigError, Secret, load_config_keys, parse_key_options, redact, resolve_key, vox_home
from serving.router import AttemptFailed, Candidate, Decision, complete, import_litellm

PLANTED = "sk-PLANTED-do-not-leak-7f3a9c1e5b"


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", PLANTED)
    monkeypatch.setenv("VOX_NO_KEYRING", "1")
    monkeypatch.setenv("VOX_LOCAL_ENDPOINTS", "")
    monkeypatch.setenv("VOX_OLLAMA", "0")
    monkeypatch.setenv("VOX_OPENROUTER_URL", "http://127.0.0.1:9/api/v1")


def test_resolution_order_explicit_config_env() -> None:
    env = {"OPENAI_API_KEY": "sk-env-000000"}
    found = resolve_key("openai", env=env, use_keyring=False)
    assert found is not None and found.source == "env:OPENAI_API_KEY"
    got = resolve_key("openai", config={"openai": "sk-config-0000"}, env=env, use_keyring=False)
    assert got is not None and got.source == "config"
    got = resolve_key("openai", explicit={"openai": "sk-explicit-00"}, config={"openai": "sk-config-0000"}, env=env)
    assert got is not None and got.source == "explicit" and got.secret.reveal() == "sk-explicit-00"
    assert resolve_key("anthropic", env={}, use_keyring=False) is None
    assert parse_key_options(["openai=sk-x"]) == {"openai": "sk-x"}


def test_secret_never_prints_itself() -> None:
    s = Secret(PLANTED)
    assert PLANTED not in f"{s} {s!r} {[s]}"
    s.reveal()
    assert redact(f"Incorrect API key provided: {PLANTED}.") == "Incorrect API key provided: ***."


def test_bad_config_file_names_the_file_not_the_value() -> None:
    path = vox_home() / "keys.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'{{"openai": ["{PLANTED}"]}}')
    with pytest.raises(Exception) as info:
        load_config_keys()
    assert str(path) in str(info.value) and PLANTED not in str(info.value)


def test_a_directory_in_place_of_the_config_file_is_an_error() -> None:
    path = vox_home() / "keys.json"
    path.mkdir(parents=True, exist_ok=True)
    with pytest.raises(KeyConfigError, match="not a file"):
        load_config_keys()


def test_cli_output_and_catalog_file_hold_no_key(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    runner = CliRunner()
    discovered = runner.invoke(app, ["model", "discover", "--force"])
    routed = runner.invoke(app, ["chat", "--dry-run", "-m", "balanced", "hello there"])
    assert discovered.exit_code == 0 and routed.exit_code == 0, routed.output
    assert "openai/" in routed.output  # the key made OpenAI models candidates...
    for text in (discovered.output, routed.output, caplog.text, cache_path().read_text()):
        assert PLANTED not in text  # ...but the value appears nowhere
    assert not any("key" in field for field in json.loads(cache_path().read_text())["entries"][0])


def test_provider_error_echoing_the_key_is_redacted(caplog: pytest.LogCaptureFixture) -> None:
    import_litellm()
    caplog.set_level(logging.DEBUG)
    key = resolve_key("openai")
    assert key is not None
    cands = tuple(Candidate(f"openai/m{i}", "openai/gpt-4o-mini", "openai", 1.0, "test") for i in range(2))
    mock = {c.id: Exception(f"Incorrect API key provided: {PLANTED}") for c in cands}
    events = []
    with pytest.raises(AllProvidersFailed) as info:
        for event in complete(Decision("auto", "chat", False, "t", cands), [{"role": "user", "content": "hi"}],
                              keys={"openai": key}, mock=mock):
            events.append(event)
    logging.getLogger("LiteLLM").critical("provider said: %s", PLANTED)
    reasons = " ".join(e.reason for e in events if isinstance(e, AttemptFailed))
    assert "Incorrect API key provided: ***" in reasons
    for text in (reasons, str(info.value), repr(info.value.attempts), caplog.text):
        assert PLANTED not in text


@pytest.mark.parametrize("option", [PLANTED, f"{PLANTED}=", f"={PLANTED}"])
def test_malformed_key_option_never_echoes_the_value(option: str) -> None:
    # `--key sk-...` (provider forgotten) used to print the whole key in the error message.
    result = CliRunner().invoke(app, ["chat", "--key", option, "hi"])
    assert result.exit_code == 2, result.output
    assert "--key expects PROVIDER=KEY" in result.stderr
    assert PLANTED not in result.output and PLANTED not in result.stderr
