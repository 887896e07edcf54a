"""A chat session over the real router and cascade (LiteLLM mock responses): out-of-credit providers
are remembered, hosted models cost what the catalog says, token estimates come from one place."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from serving.catalog import Catalog, CatalogEntry, entries_from_litellm
from serving.chat import ChatOptions, routed_sender, run_chat
from serving.keys import PROVIDER_ENV, ResolvedKey, Secret
from serving.llm import import_litellm


@pytest.fixture(scope="module", autouse=True)
def _litellm_imported() -> None:
    import_litellm()


def key(provider: str) -> ResolvedKey:
    return ResolvedKey(provider, "explicit", Secret(f"sk-test-{provider}-000000"))


PAID = "openrouter/acme/smart-model"
FREE = "openrouter/acme/small-model:free"
OTHER = "openai/gpt-4o-mini"


def hosted(ident: str, provider: str, prior: float, price: float) -> CatalogEntry:
    return CatalogEntry(id=ident, provider=provider, litellm_model=ident, input_usd_per_mtok=price,
                        output_usd_per_mtok=4 * price, context_window=128000, is_free=price == 0.0,
                        capabilities=("chat", "stream"), intelligence_prior=prior, coding_prior=prior,
                        speed_prior_tps=80.0, prior_source="test", source="test")


def catalog() -> Catalog:
    return Catalog((hosted(PAID, "openrouter", 80, 0.5), hosted(FREE, "openrouter", 40, 0.0),
                    hosted(OTHER, "openai", 60, 0.15)), 0.0, {})


def repl(send: Any, lines: list[str], **options: Any) -> tuple[str, Any]:
    out: list[str] = []
    queue = list(lines)
    result = run_chat(send, lambda _p: queue.pop(0) if queue else None, out.append,
                      options=ChatOptions(vox=False, **options))
    return "".join(out), result


def test_an_out_of_credit_provider_is_not_called_again_in_the_session() -> None:
    # It used to stay primary and answer 402 on every turn of a `vox chat` session.
    import litellm

    from serving.provider_status import ProviderHealth

    explained: list[str] = []
    health = ProviderHealth()
    mock = {PAID: litellm.PaymentRequiredError(message="Insufficient credits: add more at openrouter.ai/credits",
                                               llm_provider="openrouter", model=PAID),
            FREE: "free answer", OTHER: "paid answer"}
    send = routed_sender(catalog(), {"openrouter": key("openrouter"), "openai": key("openai")}, "balanced",
                         explain=explained.append, mock=mock, health=health)
    text, result = repl(send, ["first question", "second question", "third question"])
    assert text.count("[failed: ") == 1  # only the first turn tried the provider out of credit
    assert f"[failed: {PAID}: PaymentRequiredError (HTTP 402): Insufficient credits" in text
    assert result.calls == 3 and PAID not in result.models
    first, second, _ = explained
    assert first.splitlines()[2].startswith(f"  primary  {PAID}")
    assert f"primary  {PAID}" not in second and f"rejected {PAID}" in second
    assert "openrouter is out of credit (HTTP 402 at " in second
    assert "  excluded openrouter: out of credit (HTTP 402 at " in second
    assert "Insufficient credits" in second and "vox model discover --force" in second
    assert FREE in second  # the provider's free models need no credit and stay in the cascade
    assert set(health.excluded()) == {"openrouter"}


def test_out_of_credit_is_cached_with_an_expiry_and_shown_by_the_cli(monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from serving.catalog import load_or_build
    from serving.cli import app
    from serving.failures import Failure
    from serving.provider_status import ProviderHealth, load_exclusions, status_path

    ProviderHealth(path=status_path()).note("openai", Failure("credit", 402, "APIError", "no credits left"))
    saved = json.loads(status_path().read_text())["providers"][0]
    assert saved["provider"] == "openai" and saved["status"] == 402
    assert saved["until_unix"] - saved["since_unix"] == 3600  # VOX_CREDIT_RETRY_S default
    for names in PROVIDER_ENV.values():
        for name in names:
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-openai-000000")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-000000")
    offline = {"VOX_NO_KEYRING": "1", "VOX_OFFLINE": "1", "VOX_LOCAL_ENDPOINTS": "", "VOX_OLLAMA": "0"}
    for name, value in offline.items():
        monkeypatch.setenv(name, value)
    runner = CliRunner()
    result = runner.invoke(app, ["chat", "--dry-run", "-m", "balanced", "hello there"])
    assert "excluded openai: out of credit (HTTP 402 at " in result.output and "no credits left" in result.output
    assert "primary  anthropic/" in result.output
    paid = next(e.id for e in load_or_build()[0].entries if e.provider == "openai" and not e.is_free)
    chosen = runner.invoke(app, ["chat", "--dry-run", "-m", paid, "hello there"])
    assert chosen.exit_code == 1 and f"model {paid} cannot be used: openai is out of credit (HTTP 402" \
        in chosen.output
    # expired entries are forgotten; `vox model discover --force` forgets them at once
    assert load_exclusions(now=saved["until_unix"] + 1) == {}
    load_or_build(force=True)
    assert not status_path().exists()


def test_hosted_model_cost_comes_from_the_catalog_and_max_cost_stops_the_chat() -> None:
    # A planted bug computing hosted cost as 0 left every test green and --max-cost never triggered.
    prices = {"gpt-4o-mini": {"litellm_provider": "openai", "mode": "chat", "input_cost_per_token": 1e-4,
                              "output_cost_per_token": 4e-4, "max_input_tokens": 128000}}  # $100/M in, $400/M out
    cat = Catalog(tuple(entries_from_litellm(prices, today="2026-01-01")), 0.0, {})
    entry = cat.by_id()[OTHER]
    assert (entry.input_usd_per_mtok, entry.output_usd_per_mtok) == (100.0, 400.0)
    send = routed_sender(cat, {"openai": key("openai")}, "auto", max_tokens=16, mock={OTHER: "a short answer"})
    text, result = repl(send, [f"question {i}" for i in range(8)], max_cost_usd=0.02)
    assert result.calls >= 1 and result.models == (OTHER,)
    expected = (result.prompt_tokens * 100.0 + result.completion_tokens * 400.0) / 1e6
    assert result.cost_usd == pytest.approx(expected) and result.cost_usd > 0
    assert result.calls < 8 and "exceeds remaining budget" in text  # the cap stopped further calls
    assert f"cost ${result.cost_usd:.4f};" in text


def test_token_estimates_are_litellm_token_counter() -> None:
    import litellm

    from pipeline.prompt import system_prompt
    from serving.router import route_request
    from serving.tokens import estimate

    messages = [{"role": "system", "content": system_prompt()}, {"role": "user", "content": "write a vox fn"}]
    est = estimate(messages)
    assert est.total == litellm.token_counter(messages=messages)
    assert est.system == litellm.token_counter(messages=messages[:1])
    request = route_request("write a vox fn", messages, max_output_tokens=64)
    assert (request.est_input_tokens, request.est_system_tokens) == (est.total, est.system)
    # as a local server presents it: "none" drops the system prompt, "ssot" puts the SSOT prompt first
    assert request.presented_tokens["none"] == litellm.token_counter(messages=messages[1:])
    short = [{"role": "system", "content": "Be terse."}, messages[1]]
    assert route_request("x", short).presented_tokens["ssot"] == est.total  # --system is replaced by SSOT


def test_a_local_ssot_model_is_sized_with_the_ssot_prompt_even_under_a_short_system_prompt() -> None:
    from serving.errors import NoCandidates
    from serving.router import decide, route_request

    base = CatalogEntry(id="local/tiny", provider="local", litellm_model="openai/tiny", input_usd_per_mtok=0.0,
                        output_usd_per_mtok=0.0, context_window=512, is_free=True, capabilities=("chat",),
                        intelligence_prior=20.0, coding_prior=20.0, speed_prior_tps=30.0, prior_source="test",
                        source="local", api_base="http://127.0.0.1:8000/v1", reachable=True)
    short = [{"role": "system", "content": "Be terse."}, {"role": "user", "content": "hello"}]
    request = route_request("hello", short, max_output_tokens=64)
    drops = dataclasses.replace(base, system_prompt_mode="none")
    assert decide(request, "local/tiny", catalog=Catalog((drops,), 0.0, {}), keys=set()).primary.id == "local/tiny"
    keeps = dataclasses.replace(base, system_prompt_mode="ssot")  # its server replaces "Be terse." by the SSOT
    with pytest.raises(NoCandidates, match="of them the system prompt, which this model keeps"):
        decide(request, "local/tiny", catalog=Catalog((keeps,), 0.0, {}), keys=set())
