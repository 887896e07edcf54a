"""`vox model list` says which models `vox chat` can call now (new-user trial: offline, it listed
3,160 hosted models without saying that none of them was usable)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from serving.cli import app

NO_KEY = ("usable now: 0 of {n} models: no provider key is set (e.g. OPENAI_API_KEY, or `vox chat --key "
          "PROVIDER=KEY`, $VOX_HOME/keys.json, the system keyring); no local model answers "
          "(start one with `vox serve`)")


@pytest.fixture(autouse=True)
def _offline_and_keyless(keyless: pytest.MonkeyPatch) -> None:
    keyless.setenv("VOX_OFFLINE", "1")


def _rows(output: str) -> list[list[str]]:
    """The table rows of ``vox model list`` output, split into columns."""
    return [line.split() for line in output.splitlines()[1:] if not line.startswith(("...", "usable now:"))]


def test_offline_without_keys_every_row_is_unusable_and_the_last_line_says_why() -> None:
    result = CliRunner().invoke(app, ["model", "list", "--limit", "3"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split()[-2:] == ["deploy", "usable"]
    assert [row[-1] for row in _rows(result.output)] == ["no", "no", "no"]
    total = int(lines[-2].split()[2]) + 3  # "... and N more (--limit)"
    assert lines[-1] == NO_KEY.format(n=total)


def test_a_provider_key_makes_its_models_usable_and_lists_them_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-model-list-0000")
    result = CliRunner().invoke(app, ["model", "list", "--limit", "5"])
    assert result.exit_code == 0, result.output
    rows = _rows(result.output)
    assert all(row[0].startswith("openai/") and row[-1] == "yes" for row in rows)
    summary = result.output.splitlines()[-1]
    assert summary.startswith("usable now: ") and "keys for openai; no local model answers" in summary
    assert summary.endswith("; `--usable` lists only these")
    assert "sk-test" not in result.output

    only = CliRunner().invoke(app, ["model", "list", "--usable", "--limit", "100000"])
    assert only.exit_code == 0, only.output
    usable = _rows(only.output)
    assert usable and all(row[0].startswith("openai/") and row[-1] == "yes" for row in usable)
    assert only.output.splitlines()[-1] == f"usable now: {len(usable)} of {summary.split()[4]} models: " \
        "keys for openai; no local model answers (start one with `vox serve`)"


def test_usable_with_nothing_usable_is_an_error_that_says_why() -> None:
    total = CliRunner().invoke(app, ["model", "list", "--limit", "1"]).output.splitlines()[-1].split()[4]
    result = CliRunner().invoke(app, ["model", "list", "--usable"])
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == f"error: no models match --usable; {NO_KEY.format(n=total)}\n"


def test_free_with_no_free_model_is_an_error_that_says_why() -> None:
    # new-user trial: `--free` said only "no models match --free", where `--usable` says why
    result = CliRunner().invoke(app, ["model", "list", "--free"])
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr.startswith("error: no models match --free; free models are local ones and zero-cost "
                                    "hosted ones: no local endpoint answered (http://127.0.0.1:9/v1: down"), \
        result.stderr
    assert "the catalog lists no zero-cost hosted model (OpenRouter: skipped: VOX_OFFLINE is set)" in result.stderr


@pytest.mark.parametrize("args", [["model", "list"], ["model", "list", "--provider", "local"], ["model", "discover"],
                                  ["chat", "--model", "free", "--dry-run", "write a Vox function `f() to int`"]])
def test_a_malformed_local_endpoint_is_one_error_line_with_a_cached_catalog(
        args: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # second new-user trial: with the catalog already cached, `vox model list` re-probes the local
    # endpoints outside its error handling and printed a CatalogError traceback
    assert CliRunner().invoke(app, ["model", "discover"]).exit_code == 0  # cache the catalog first
    monkeypatch.setenv("VOX_LOCAL_ENDPOINTS", "not a url")
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.stderr.splitlines()[-1] == (
        "error: VOX_LOCAL_ENDPOINTS: 'not a url' is not an http(s) URL with a host and a port in 1-65535 "
        "(e.g. http://127.0.0.1:8000/v1)")


def test_the_console_entry_turns_an_escaped_serving_error_into_one_line(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import serving.cli as cli
    from serving.errors import CatalogError

    def boom() -> None:
        raise CatalogError("the catalog cache at X is not JSON")

    monkeypatch.setattr(cli, "app", boom)
    with pytest.raises(SystemExit) as exited:
        cli.main()
    assert exited.value.code == 1
    assert capsys.readouterr().err == "error: the catalog cache at X is not JSON\n"
