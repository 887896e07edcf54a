"""Catalog sources, units, priors, the cache file (age, --force, corruption) and local models."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from serving import catalog as cat
from serving.errors import CatalogError
from serving.priors import prior_for

OPENROUTER = {"data": [
    {"id": "qwen/qwen3-coder:free", "pricing": {"prompt": "0", "completion": "0"}, "context_length": 262000,
     "supported_parameters": ["tools"]},
    {"id": "anthropic/claude-sonnet-4.5", "pricing": {"prompt": "0.000003", "completion": "0.000015"},
     "context_length": 1000000, "supported_parameters": ["reasoning"]},
    {"id": "openrouter/auto", "pricing": {"prompt": "-1", "completion": "-1"}},
]}


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Never reach a real endpoint: local probing points nowhere unless a test says otherwise."""
    monkeypatch.setenv("VOX_LOCAL_ENDPOINTS", "")
    monkeypatch.setenv("VOX_OLLAMA", "0")
    monkeypatch.setenv("VOX_OPENROUTER_URL", "http://127.0.0.1:9/api/v1")  # discard port: refused at once


def fake_openrouter(url: str, timeout: float) -> Any:
    assert url.endswith("/models") and timeout <= 5
    return OPENROUTER


def test_unit_conversion_and_sanity() -> None:
    assert cat.per_token_to_per_mtok(2.5e-6, "x") == 2.5
    assert cat.per_token_to_per_mtok("0.000015", "x") == 15.0
    assert cat.per_token_to_per_mtok("-1", "x") is None  # OpenRouter's "variable price"
    assert cat.per_token_to_per_mtok(0.003, "x") is None  # $3000/M: a per-1K price mistaken for per-token
    assert cat.per_token_to_per_mtok(None, "x") is None and cat.per_token_to_per_mtok("n/a", "x") is None


def test_openrouter_entries() -> None:
    by_id = {e.id: e for e in cat.entries_from_openrouter(OPENROUTER)}
    free = by_id["openrouter/qwen/qwen3-coder:free"]
    assert free.is_free and free.input_usd_per_mtok == 0.0 and "tools" in free.capabilities
    sonnet = by_id["openrouter/anthropic/claude-sonnet-4.5"]
    assert (sonnet.input_usd_per_mtok, sonnet.output_usd_per_mtok, sonnet.context_window) == (3.0, 15.0, 1000000)
    assert sonnet.prior_source.startswith("aa-v3") and "reasoning" in sonnet.capabilities
    assert by_id["openrouter/openrouter/auto"].input_usd_per_mtok is None
    with pytest.raises(CatalogError):
        cat.entries_from_openrouter({"models": []})


def test_litellm_entries_filter_and_convert() -> None:
    cost_map = {
        "sample_spec": {"mode": "one of: chat"},
        "gpt-5-mini": {"litellm_provider": "openai", "mode": "chat", "input_cost_per_token": 2.5e-7,
                       "output_cost_per_token": 2e-6, "max_input_tokens": 272000, "supports_vision": True},
        "old-model": {"litellm_provider": "openai", "mode": "chat", "deprecation_date": "2020-01-01"},
        "bedrock/*/1-month-commitment/x": {"litellm_provider": "bedrock", "mode": "chat"},
        "dall-e-3": {"litellm_provider": "openai", "mode": "image_generation"},
    }
    entries = cat.entries_from_litellm(cost_map, today="2026-01-01")
    assert [e.id for e in entries] == ["openai/gpt-5-mini"]
    e = entries[0]
    assert (e.input_usd_per_mtok, e.output_usd_per_mtok, e.context_window) == (0.25, 2.0, 272000)
    assert e.intelligence_prior == 61 and "vision" in e.capabilities


def test_bundled_cost_map_is_read_without_importing_litellm() -> None:
    code = ("import sys; from serving.catalog import litellm_cost_map, entries_from_litellm; "
            "n = len(entries_from_litellm(litellm_cost_map())); assert 'litellm' not in sys.modules; print(n)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": ""})
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) > 500


def test_priors_longest_family_match() -> None:
    def family(model_id: str) -> str | None:
        prior = prior_for(model_id)
        return prior.family if prior is not None else None

    assert family("openai/gpt-5-mini-2025-08-07") == "gpt-5-mini"
    assert family("openai/gpt-5") == "gpt-5"
    assert family("openrouter/anthropic/claude-opus-4.5") == "claude-opus-4.5"
    assert prior_for("openai/gpt-5.6-luna") is None  # a new minor version is not claimed by gpt-5
    assert prior_for("some/unknown-model") is None
    p = prior_for("gemini/gemini-2.5-flash-lite")
    assert p is not None and p.source.split()[1].count("-") == 1  # "aa-v3 2025-10": source and date


def test_build_with_openrouter_reachable_and_unreachable() -> None:
    built = cat.build_catalog(openrouter_fetch=fake_openrouter, local_urls=[])
    assert built.sources["openrouter"]["status"] == "ok"
    assert "openrouter/qwen/qwen3-coder:free" in built.by_id()
    assert built.sources["litellm"]["entries"] > 500
    t0 = time.perf_counter()
    offline = cat.build_catalog(local_urls=[])  # real fetch to a refused port
    assert time.perf_counter() - t0 < 3
    assert offline.sources["openrouter"]["status"] == "unreachable"
    assert not any(e.source == "openrouter" for e in offline.entries)


def test_cache_reuse_force_and_age(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []

    def counting(url: str, timeout: float) -> Any:
        calls.append(url)
        return OPENROUTER

    first, rebuilt = cat.load_or_build(openrouter_fetch=counting, local_urls=[])
    assert rebuilt and cat.cache_path().is_file() and len(calls) == 1
    assert str(cat.cache_path()).startswith(os.environ["VOX_HOME"])
    doc = json.loads(cat.cache_path().read_text())
    assert doc["schema_version"] == 1 and doc["units"]["prices"] == "USD per million tokens"
    assert "input_usd_per_mtok" in doc["entries"][0]
    second, rebuilt = cat.load_or_build(openrouter_fetch=counting, local_urls=[])
    assert not rebuilt and second.entries == first.entries and len(calls) == 1
    _, rebuilt = cat.load_or_build(force=True, openrouter_fetch=counting, local_urls=[])
    assert rebuilt and len(calls) == 2
    monkeypatch.setenv("VOX_CATALOG_MAX_AGE", "0")
    time.sleep(0.01)
    _, rebuilt = cat.load_or_build(openrouter_fetch=counting, local_urls=[])
    assert rebuilt and len(calls) == 3


@pytest.mark.parametrize("garbage", ["{not json", '{"schema_version": 99, "entries": []}',
                                     '{"schema_version": 1, "created_unix": 1, "entries": [{"id": "x"}]}'])
def test_corrupt_cache_is_reported_and_rebuilt(garbage: str) -> None:
    path = cat.cache_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(garbage)
    with pytest.raises(CatalogError, match=str(path.name)):
        cat.load_catalog(path)
    warnings: list[str] = []
    rebuilt_cat, rebuilt = cat.load_or_build(warn=warnings.append, local_urls=[])
    assert rebuilt and len(warnings) == 1 and "corrupt" in warnings[0]
    assert cat.load_catalog(path).entries == rebuilt_cat.entries  # the file is valid again


def test_local_endpoint_models_carry_pass_at_1(tmp_path: Path, replay: Any) -> None:
    from pipeline.paths import exports_dir

    export = exports_dir() / "run-1"
    export.mkdir(parents=True)
    (export / "vox_mens.json").write_text(json.dumps({"model_name": "replay-model", "pass_at_1": 0.42}))
    (exports_dir() / "latest.json").write_text(json.dumps({"path": str(export), "eval_passed": True}))
    with replay.ReplayServer(["hi"], model="replay-model") as server:
        built = cat.build_catalog(local_urls=[server.base_url, "http://127.0.0.1:9/v1"])
        entry = built.by_id()["local/replay-model"]
        assert entry.api_base == server.base_url and entry.reachable and entry.is_free
        assert entry.vox_pass_at_1 == 0.42 and entry.litellm_model == "openai/replay-model"
        assert "down" in built.sources["local"]["endpoints"]["http://127.0.0.1:9/v1"]
    live = cat.with_live_local(built, urls=[server.base_url])  # the server is gone now
    assert live.by_id()["local/replay-model"].reachable is False


def test_model_card_fallback_for_pass_at_1(tmp_path: Path) -> None:
    (tmp_path / "vox_mens.json").write_text(json.dumps({"model_name": "m", "pass_at_1": None}))
    (tmp_path / "README.md").write_text("# m\n\n| metric | value |\n| pass@1 | 0.37 |\n")
    assert cat._read_pass_at_1(tmp_path) == ("m", 0.37)


def test_unwritable_vox_home_warns_and_still_gives_a_catalog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # VOX_HOME that is a file (or read-only) used to crash list/chat with a NotADirectoryError traceback.
    home = tmp_path / "home"
    home.write_text("not a folder")
    monkeypatch.setenv("VOX_HOME", str(home))
    warnings: list[str] = []
    catalog, rebuilt = cat.load_or_build(warn=warnings.append, local_urls=[])
    assert rebuilt and catalog.entries
    assert len(warnings) == 1 and "cannot write the model catalog cache" in warnings[0] and str(home) in warnings[0]
    with pytest.raises(CatalogError, match="cannot write the model catalog cache.*VOX_HOME"):
        cat.load_or_build(require_saved=True, local_urls=[])  # `vox model discover`


def test_a_local_entry_takes_the_vox_pass_at_1_its_server_reports(replay: Any) -> None:
    # an export served from outside this state dir showed "Vox pass@1 n/a" (a new-user trial)
    with replay.ReplayServer(["hi"], model="scored", card={"vox_pass_at_1": 0.36}) as server, \
            replay.ReplayServer(["hi"], model="odd", card={"vox_pass_at_1": "high"}) as odd:
        built = cat.build_catalog(openrouter_fetch=fake_openrouter, local_urls=[server.base_url, odd.base_url])
    assert built.by_id()["local/scored"].vox_pass_at_1 == 0.36
    assert built.by_id()["local/odd"].vox_pass_at_1 is None  # an odd value is ignored


def test_local_entries_record_context_window_and_system_prompt_mode(replay: Any) -> None:
    card = {"max_model_len": 4096, "system_prompt_mode": "none"}
    with replay.ReplayServer(["hi"], model="carded", card=card) as server, \
            replay.ReplayServer(["hi"], model="bare") as bare:
        built = cat.build_catalog(openrouter_fetch=fake_openrouter, local_urls=[server.base_url, bare.base_url])
    entry = built.by_id()["local/carded"]
    assert (entry.context_window, entry.system_prompt_mode) == (4096, "none")
    assert (built.by_id()["local/bare"].context_window, built.by_id()["local/bare"].system_prompt_mode) == (None, None)
    assert entry.vox_pass_at_1 is None
    path = cat.save_catalog(built)
    assert cat.load_catalog(path).by_id()["local/carded"] == entry
    # a cache written before system_prompt_mode existed still loads (the field defaults to None)
    doc = json.loads(path.read_text())
    for raw in doc["entries"]:
        del raw["system_prompt_mode"]
    path.write_text(json.dumps(doc))
    assert cat.load_catalog(path).by_id()["local/carded"].system_prompt_mode is None


def test_model_list_unknown_provider_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from serving.cli import app

    monkeypatch.setenv("VOX_OFFLINE", "1")
    result = CliRunner().invoke(app, ["model", "list", "--provider", "nope"])
    assert result.exit_code == 1
    assert "error: no models match provider `nope`; known providers: " in result.output
    assert "anthropic" in result.output and "openai" in result.output and "in$/M" not in result.output
    ok = CliRunner().invoke(app, ["model", "list", "--provider", "openai", "--limit", "2"])
    assert ok.exit_code == 0 and "openai/" in ok.output


@pytest.mark.parametrize(("args", "said"), [
    (["--free", "--provider", "anthropic"], "error: no models match provider `anthropic` and --free\n"),
    (["--free"], "error: no models match --free; free models are local ones and zero-cost hosted ones: "),  # offline
])
def test_model_list_with_nothing_to_show_is_an_error(monkeypatch: pytest.MonkeyPatch, args: list[str],
                                                     said: str) -> None:
    # it printed the table header alone and exited 0, unlike --provider nosuch (exit 1). Found by a new-user helper
    from typer.testing import CliRunner

    from serving.cli import app

    monkeypatch.setenv("VOX_OFFLINE", "1")
    result = CliRunner().invoke(app, ["model", "list", *args])
    assert (result.exit_code, result.stdout) == (1, "") and result.stderr.startswith(said), result.stderr
    assert result.stderr.count("\n") == 1  # one line; with --free alone it says why (test_model_list)


def test_model_list_local_without_a_local_endpoint_says_so(replay: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """`vox model list --provider local` with no local endpoint up listed the known providers (local
    not among them) as if `local` were a typo; it now says no local endpoint answered and how to start one."""
    from typer.testing import CliRunner

    from serving.cli import app

    monkeypatch.setenv("VOX_OFFLINE", "1")
    down = "http://127.0.0.1:9/v1"  # the discard port: refused at once
    monkeypatch.setenv("VOX_LOCAL_ENDPOINTS", down)
    result = CliRunner().invoke(app, ["model", "list", "--provider", "local"])
    assert result.exit_code == 1  # as for any provider with nothing to list
    assert result.stderr == (f"error: no local models: no local endpoint answered ({down}: down: connection refused); "
                             "start one with `vox serve` (it listens on http://127.0.0.1:8000/v1), or set "
                             "VOX_LOCAL_ENDPOINTS to the comma-separated base URLs of running OpenAI-compatible "
                             "servers\n")
    assert "known providers" not in result.output and "in$/M" not in result.output
    monkeypatch.setenv("VOX_LOCAL_ENDPOINTS", "")
    none = CliRunner().invoke(app, ["model", "list", "--provider", "local"])
    assert none.exit_code == 1 and "no local endpoint is configured (VOX_LOCAL_ENDPOINTS is empty" in none.stderr
    # the catalog cached while nothing answered is not the last word: the endpoints are probed again
    with replay.ReplayServer(["hi"], model="m") as server:
        monkeypatch.setenv("VOX_LOCAL_ENDPOINTS", server.base_url)
        listed = CliRunner().invoke(app, ["model", "list", "--provider", "local"])
    assert listed.exit_code == 0, listed.output
    *rows, summary = listed.output.splitlines()[1:]
    assert [line.split()[0] for line in rows] == ["local/m"] and rows[0].split()[-1] == "yes"
    assert summary == "usable now: 1 of 1 models: 1 local model(s) answering"


def test_endpoints_serving_one_model_are_one_entry_with_several_deployments(replay: Any) -> None:
    # Two servers of the same id and mode: one model, two deployments, the smaller window; the same id
    # served with another system-prompt mode is another model (its prompts are presented differently).
    with replay.ReplayServer(["hi"], model="m", card={"max_model_len": 4096, "system_prompt_mode": "none"}) as a, \
            replay.ReplayServer(["hi"], model="m", card={"max_model_len": 2048, "system_prompt_mode": "none"}) as b, \
            replay.ReplayServer(["hi"], model="m", card={"system_prompt_mode": "ssot"}) as c:
        built = cat.build_catalog(openrouter_fetch=fake_openrouter, local_urls=[a.base_url, b.base_url, c.base_url])
    entry = built.by_id()["local/m"]
    assert entry.deployments == (a.base_url, b.base_url) and entry.api_base == a.base_url
    assert entry.deployment_count == 2 and entry.context_window == 2048 and entry.system_prompt_mode == "none"
    other = built.by_id()[f"local/m@{c.base_url}"]
    assert other.deployments == (c.base_url,) and other.system_prompt_mode == "ssot"
    assert built.sources["local"]["entries"] == 2
    hosted = next(e for e in built.entries if not e.local)
    assert hosted.deployments == () and hosted.deployment_count == 1
    path = cat.save_catalog(built)
    assert cat.load_catalog(path).by_id()["local/m"] == entry  # deployments survive the cache (as a tuple)
    doc = json.loads(path.read_text())
    for raw in doc["entries"]:
        raw.pop("deployments")  # a cache written before deployments existed still loads
    path.write_text(json.dumps(doc))
    assert cat.load_catalog(path).by_id()["local/m"].deployments == ()


def test_model_discover_and_list_show_the_deployments(replay: Any, monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from serving.cli import app

    monkeypatch.setenv("VOX_OFFLINE", "1")
    monkeypatch.setenv("VOX_HOME", str(tmp_path / "home"))
    with replay.ReplayServer(["hi"], model="m") as a, replay.ReplayServer(["hi"], model="m") as b:
        monkeypatch.setenv("VOX_LOCAL_ENDPOINTS", f"{a.base_url},{b.base_url}")
        result = CliRunner().invoke(app, ["model", "discover", "--force"])
        assert result.exit_code == 0, result.output
        assert f"local model local/m at {a.base_url}, {b.base_url} (2 deployments, Vox pass@1 n/a)" in result.output
        listed = CliRunner().invoke(app, ["model", "list", "--provider", "local"])
    assert listed.exit_code == 0 and "deploy" in listed.output
    row = next(line for line in listed.output.splitlines() if line.startswith("local/m "))
    assert row.split()[-2:] == ["2", "yes"]  # deploy, usable


@pytest.mark.parametrize("value", ["abc", "-1", "nan"])
def test_a_bad_max_age_setting_is_named_not_blamed_on_the_cache(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    """``VOX_CATALOG_MAX_AGE=abc`` used to be reported as "cache is corrupt" and rebuilt on every call."""
    from serving.errors import CatalogError

    warned: list[str] = []
    cat.load_or_build(openrouter_fetch=lambda url, timeout: OPENROUTER, local_urls=[])
    before = cat.cache_path().read_bytes()
    monkeypatch.setenv("VOX_CATALOG_MAX_AGE", value)
    with pytest.raises(CatalogError, match=rf"VOX_CATALOG_MAX_AGE must be a number of seconds >= 0, got '{value}'"):
        cat.load_or_build(openrouter_fetch=lambda url, timeout: OPENROUTER, local_urls=[], warn=warned.append)
    assert not warned and cat.cache_path().read_bytes() == before  # nothing rebuilt, nothing lost


def test_local_status_is_unreachable_when_no_endpoint_answers(replay: Any, monkeypatch: pytest.MonkeyPatch,
                                                               tmp_path: Path) -> None:
    """`vox model discover` said ``local: ok`` with every local endpoint down."""
    from typer.testing import CliRunner

    from serving.cli import app

    down = ["http://127.0.0.1:9/v1", "http://127.0.0.1:9/other/v1"]  # the discard port: refused at once
    local = cat.build_catalog(openrouter_fetch=fake_openrouter, local_urls=down).sources["local"]
    assert local["status"] == "unreachable" and "no local endpoint answered (2 probed" in local["error"]
    assert local["endpoints"] == {url: "down: connection refused" for url in down} and local["entries"] == 0
    assert cat.build_catalog(openrouter_fetch=fake_openrouter, local_urls=[]).sources["local"]["status"] == "skipped"
    with replay.ReplayServer(["hi"], model="m") as server:
        built = cat.build_catalog(openrouter_fetch=fake_openrouter, local_urls=[server.base_url, down[0]])
        assert built.sources["local"]["status"] == "ok" and "error" not in built.sources["local"]
    assert cat.with_live_local(built, urls=down).sources["local"]["status"] == "unreachable"  # the server is gone

    monkeypatch.setenv("VOX_OFFLINE", "1")
    monkeypatch.setenv("VOX_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("VOX_LOCAL_ENDPOINTS", ",".join(down))
    result = CliRunner().invoke(app, ["model", "discover", "--force"])
    line = next(line for line in result.output.splitlines() if line.strip().startswith("local:"))
    assert line.strip().startswith("local: unreachable error=no local endpoint answered")
    assert "{" not in line  # the endpoints are not a raw dict: one line each, under the source
    assert all(f"      {url}: down: connection refused" in result.output.splitlines() for url in down)
