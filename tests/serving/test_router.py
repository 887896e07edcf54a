"""Routing decisions on a fixed catalog: every mode and category, keys, reachability, prices."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from serving.catalog import Catalog, CatalogEntry, entries_from_litellm, entries_from_openrouter
from serving.decision import Decision
from serving.errors import NoCandidates, UnknownModel
from serving.intent import is_vox_request, refuses_code
from serving.router import RouteRequest, decide, resolve_model
from serving.scoring import ALIASES, MODES, infer_category

LITELLM = {  # USD per token, as LiteLLM ships it
    "gpt-5": {"litellm_provider": "openai", "mode": "chat", "input_cost_per_token": 1.25e-6,
              "output_cost_per_token": 1e-5, "max_input_tokens": 272000, "supports_reasoning": True},
    "gpt-5-mini": {"litellm_provider": "openai", "mode": "chat", "input_cost_per_token": 2.5e-7,
                   "output_cost_per_token": 2e-6, "max_input_tokens": 272000},
    "gpt-4o-mini": {"litellm_provider": "openai", "mode": "chat", "input_cost_per_token": 1.5e-7,
                    "output_cost_per_token": 6e-7, "max_input_tokens": 128000},
    "claude-opus-4-5": {"litellm_provider": "anthropic", "mode": "chat", "input_cost_per_token": 5e-6,
                        "output_cost_per_token": 2.5e-5, "max_input_tokens": 200000},
    "claude-sonnet-4-5": {"litellm_provider": "anthropic", "mode": "chat", "input_cost_per_token": 3e-6,
                          "output_cost_per_token": 1.5e-5, "max_input_tokens": 200000},
    "claude-haiku-4-5": {"litellm_provider": "anthropic", "mode": "chat", "input_cost_per_token": 1e-6,
                         "output_cost_per_token": 5e-6, "max_input_tokens": 200000},
    "gemini/gemini-2.5-pro": {"litellm_provider": "gemini", "mode": "chat", "input_cost_per_token": 1.25e-6,
                              "output_cost_per_token": 1e-5, "max_input_tokens": 1048576},
    "gemini/gemini-2.5-flash": {"litellm_provider": "gemini", "mode": "chat", "input_cost_per_token": 3e-7,
                                "output_cost_per_token": 2.5e-6, "max_input_tokens": 1048576},
    "gemini/gemini-2.5-flash-lite": {"litellm_provider": "gemini", "mode": "chat", "input_cost_per_token": 1e-7,
                                     "output_cost_per_token": 4e-7, "max_input_tokens": 1048576},
    "mistral/mystery-model": {"litellm_provider": "mistral", "mode": "chat", "max_input_tokens": 32000},  # no price
    "text-embedding-3-small": {"litellm_provider": "openai", "mode": "embedding", "input_cost_per_token": 2e-8},
}
OPENROUTER = {"data": [  # USD per token as strings, as OpenRouter serves it
    {"id": "qwen/qwen3-coder:free", "pricing": {"prompt": "0", "completion": "0"}, "context_length": 262000},
    {"id": "openai/gpt-oss-120b:free", "pricing": {"prompt": "0", "completion": "0"}, "context_length": 131072},
    {"id": "z-ai/glm-4.5-air:free", "pricing": {"prompt": "0", "completion": "0"}, "context_length": 131072},
    {"id": "openai/gpt-5", "pricing": {"prompt": "0.00000125", "completion": "0.00001"}, "context_length": 400000},
]}


def local(name: str, pass_at_1: float | None, reachable: bool = True) -> CatalogEntry:
    return CatalogEntry(
        id=f"local/{name}", provider="local", litellm_model=f"openai/{name}", input_usd_per_mtok=0.0,
        output_usd_per_mtok=0.0, context_window=None, is_free=True, capabilities=("chat", "stream"),
        intelligence_prior=20.0, coding_prior=20.0, speed_prior_tps=30.0, prior_source="heuristic:price",
        source="local", api_base="http://127.0.0.1:8000/v1", vox_pass_at_1=pass_at_1, reachable=reachable)


@pytest.fixture
def catalog() -> Catalog:
    entries = entries_from_litellm(LITELLM, today="2026-01-01") + entries_from_openrouter(OPENROUTER)
    entries += [local("vox-mens-small", 0.31), local("vox-mens-large", 0.62), local("vox-mens-gone", 0.9, False)]
    return Catalog(tuple(entries), 0.0, {})


ALL_KEYS = {"openai", "anthropic", "gemini", "mistral", "openrouter"}
CODE = "write a vox script that totals a list of prices"
CHAT = "hello there, how are you today?"
ANALYSIS = "analyze the trade-offs of actors versus workflows"


def ids(decision: Decision) -> list[str]:
    return [c.id for c in decision.candidates]


def entry_id(spec: str, catalog: Catalog) -> str:
    """The catalog id ``spec`` resolves to (fails the test if it names a routing mode instead)."""
    found = resolve_model(spec, catalog)
    assert isinstance(found, CatalogEntry), found
    return found.id


def test_category_and_vox_inference() -> None:
    assert infer_category(CODE) == "codegen"
    assert infer_category(CHAT) == "chat"
    assert infer_category(ANALYSIS) == "reasoning"
    assert is_vox_request(CODE) and is_vox_request("fix this .vox file")
    assert not is_vox_request("write a python script") and not is_vox_request("what is vox?")
    # a backticked signature in Vox's own syntax (return type after `to`) says Vox without the word
    assert is_vox_request("Define a record `User` and a function `is_adult(u: User) to bool`.")
    assert is_vox_request("Implement `fn pick(xs: List[int], f: fn(int) to bool) to List[int]`")
    assert not is_vox_request("Write `is_adult(u: User) -> bool` in Python")
    assert not is_vox_request("convert `x` to int")
    # a question about the language asks for no code (a new-user trial got a made-up function and PASS)
    for question in ("what is an actor in Vox?", "How do workflows work in Vox?", "Explain Vox's type rules",
                     "Is a Vox function allowed to return nothing?", "  Why does Vox use `ret`?",
                     "Hi! What is an actor in Vox?", "In Vox, what is a workflow?",
                     "Quick question - what is a type in Vox?", "I'm curious: how do routes work in Vox?"):
        assert not is_vox_request(question), question
    for ask in ("Can you code a Vox function that reverses a string?", "Could I have a Vox function that sums?",
                "What would a Vox actor for a counter look like?", "Can you refactor this Vox function? fn f(x: int)",
                "Why doesn't my Vox function compile? fn f(x: int) -> int { ret x }",
                "What is a workflow in Vox? I need one that sums a list.",
                "How do I write a workflow in Vox?", "Can you fix this Vox function?", "what would a Vox actor "
                "look like? give me an example", "Vox function that counts words", "Make a Vox actor `Clerk`",
                "A Vox function, which sums a list", "Hi! Can you write a Vox actor?"):
        assert is_vox_request(ask), ask


@pytest.mark.parametrize("question", [
    # a question word without its apostrophe, or misspelt (a new user's probe)
    "Whats an actor in Vox?", "whats a workflow", "whats a workflow in vox", "What's a Vox actor?",
    "Hows a Vox test written?", "Hows a Vox actor written?", "Wheres the type of a Vox actor declared?",
    "Whys Vox using `ret`?", "wat is a vox workflow", "Doesnt a Vox actor hold state?",
    "Cant a Vox workflow call an activity?", "Hi! Whats an actor in Vox?",
    # a question, or any text, that refuses code
    "What is an actor in Vox? Don't write any code.", "Explain workflows in Vox, no code please",
    "Explain Vox actors without code.", "How does a Vox workflow work? No code, just explain.",
    "Vox actors: just explain them", "Describe Vox routes without any code examples",
    "What is a type in Vox? Do not give me a function.", "Tell me about Vox actors, I'm not asking for code",
    "What does `f(x: int) to int` mean in Vox? No code please.",
])
def test_questions_and_refusals_ask_for_no_vox_code(question: str) -> None:
    assert not is_vox_request(question)


@pytest.mark.parametrize("ask", [
    "Write a Vox function `f(x: int) to int` that doubles x, no comments please",
    "Can you code a Vox function that reverses a string?",
    "Why doesn't my Vox function compile? fn f(x: int) -> int { ret x }",
    "Whats wrong with my Vox function? fn f(x: int) -> int { ret x }",
    "Hows this Vox actor look? Fix it: actor A { }", "Whats the best way to write a Vox actor? Show me.",
    "I have no code yet. Write a Vox function that sums a list",
    "Write a Vox function without code duplication", "Write a Vox actor, no code comments please",
    "Don't use loops: write a Vox function that sums a list", "Dont use loops in the Vox function `total`",
    "However you like, write a Vox actor", "Write a Vox workflow and just explain the activities briefly",
])
def test_requests_stay_requests_whatever_their_question_words_and_nos(ask: str) -> None:
    assert is_vox_request(ask)


def test_refuses_code_only_when_nothing_else_is_asked() -> None:
    assert refuses_code("whats a workflow? no code please") and refuses_code("Just explain it")
    assert refuses_code("Don't write any code, I only want to understand actors.") is False  # "want": asks
    assert not refuses_code("I have no code yet. Write a Vox function") and not refuses_code("no code comments")


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("text", [CODE, CHAT, ANALYSIS])
def test_every_mode_and_category_gives_a_cascade(catalog: Catalog, mode: str, text: str) -> None:
    d = decide(RouteRequest(text), mode, catalog=catalog, keys=ALL_KEYS)
    assert d.mode == mode
    assert 1 <= len([c for c in d.candidates if "router fallback" not in c.reasons]) <= 4
    assert len({c.id for c in d.candidates}) == len(d.candidates)
    scores = [c.score for c in d.candidates if "router fallback" not in c.reasons]
    assert scores == sorted(scores, reverse=True)
    assert "local/vox-mens-gone" not in ids(d)
    assert "score =" in d.rule and "q" in d.explain()


def test_mode_characters(catalog: Catalog) -> None:
    genius = decide(RouteRequest(CODE), "genius", catalog=catalog, keys=ALL_KEYS)
    assert genius.primary.id == "anthropic/claude-opus-4-5"  # frontier coding prior wins, price barely counts
    assert decide(RouteRequest(ANALYSIS), "genius", catalog=catalog, keys=ALL_KEYS).category == "reasoning"
    efficient = decide(RouteRequest(CHAT), "efficient", catalog=catalog, keys=ALL_KEYS - {"openrouter"})
    assert efficient.primary.id in {"gemini/gemini-2.5-flash-lite", "openai/gpt-5-mini", "gemini/gemini-2.5-flash"}
    assert "claude-opus" not in " ".join(ids(efficient))
    free = decide(RouteRequest(CODE), "free", catalog=catalog, keys=ALL_KEYS)
    assert all(c.id.endswith(":free") or c.id.startswith("local/") or "router fallback" in c.reasons
               for c in free.candidates)
    assert free.candidates[-1].id == "openrouter/openrouter/free"  # free-router fallback last
    auto_code = decide(RouteRequest("write a python function"), "auto", catalog=catalog, keys=ALL_KEYS)
    auto_chat = decide(RouteRequest(CHAT), "auto", catalog=catalog, keys=ALL_KEYS)
    assert auto_code.category == "codegen" and auto_chat.category == "chat"
    assert "performance" in auto_code.rule and "balanced" in auto_chat.rule


@pytest.mark.parametrize("alias,mode", sorted(ALIASES.items()))
def test_aliases(catalog: Catalog, alias: str, mode: str) -> None:
    assert decide(RouteRequest(CHAT), alias, catalog=catalog, keys=ALL_KEYS).mode == mode


def test_no_keys_leaves_only_free_and_local(catalog: Catalog) -> None:
    for mode in MODES:
        d = decide(RouteRequest(CODE), mode, catalog=catalog, keys=set())
        assert all(c.id.startswith("local/") for c in d.candidates), mode
        assert d.skipped_no_key > 0 or mode == "free"


def test_vox_code_ranks_local_models_by_pass_at_1(catalog: Catalog) -> None:
    d = decide(RouteRequest(CODE), "free", catalog=catalog, keys=set())
    assert ids(d) == ["local/vox-mens-large", "local/vox-mens-small"]
    assert "Vox pass@1 0.62" in d.primary.reasons


def test_unreachable_local_model_is_rejected_with_reason(catalog: Catalog) -> None:
    d = decide(RouteRequest(CODE), "free", catalog=catalog, keys=set())
    gone = [c for c in d.rejected if c.id == "local/vox-mens-gone"]
    assert gone and "unreachable" in (gone[0].rejected or "")
    with pytest.raises(NoCandidates, match="unreachable"):
        decide(RouteRequest(CODE), "local/vox-mens-gone", catalog=catalog, keys=set())


def test_unknown_price(catalog: Catalog) -> None:
    entry = catalog.by_id()["mistral/mystery-model"]
    assert entry.input_usd_per_mtok is None and entry.blended_usd_per_mtok is None
    d = decide(RouteRequest(CHAT), "mistral/mystery-model", catalog=catalog, keys=ALL_KEYS)
    assert "price unknown" in d.primary.reasons
    d = decide(RouteRequest(CHAT), "efficient", catalog=catalog, keys={"mistral"})
    assert "mistral/mystery-model" in ids(d)  # still usable without a budget...
    capped = decide(RouteRequest(CHAT, budget_usd=1.0), "efficient", catalog=catalog, keys={"mistral"})
    assert "mistral/mystery-model" not in ids(capped)  # ...but not under --max-cost
    assert any(c.id == "mistral/mystery-model" and "price unknown" in (c.rejected or "") for c in capped.rejected)


def test_price_units_agree_across_sources(catalog: Catalog) -> None:
    by_id = catalog.by_id()
    a, b = by_id["openai/gpt-5"], by_id["openrouter/openai/gpt-5"]
    assert (a.input_usd_per_mtok, a.output_usd_per_mtok) == (1.25, 10.0) == (b.input_usd_per_mtok,
                                                                            b.output_usd_per_mtok)
    assert by_id["openrouter/qwen/qwen3-coder:free"].is_free
    assert "openai/text-embedding-3-small" not in by_id


def test_max_cost_filters_expensive_models(catalog: Catalog) -> None:
    req = RouteRequest(CODE, est_input_tokens=2000, max_output_tokens=2000, budget_usd=0.002)
    d = decide(req, "genius", catalog=catalog, keys=ALL_KEYS - {"openrouter"})
    assert "anthropic/claude-opus-4-5" not in ids(d)
    assert any("budget" in (c.rejected or "") for c in d.rejected)


def test_local_only_and_context_window(catalog: Catalog) -> None:
    d = decide(RouteRequest(CHAT, local_only=True), "genius", catalog=catalog, keys=ALL_KEYS)
    assert all(c.id.startswith("local/") for c in d.candidates)
    d = decide(RouteRequest(CHAT, est_input_tokens=300_000), "genius", catalog=catalog, keys=ALL_KEYS)
    assert all((catalog.by_id()[c.id].context_window or 10**9) >= 300_000
               for c in d.candidates if "router" not in c.reasons)


def test_concrete_model_ids(catalog: Catalog) -> None:
    assert entry_id("gpt-5", catalog) == "openai/gpt-5"
    assert entry_id("vox-mens-large", catalog) == "local/vox-mens-large"
    d = decide(RouteRequest(CHAT), "anthropic/claude-haiku-4-5", catalog=catalog, keys=ALL_KEYS)
    assert ids(d) == ["anthropic/claude-haiku-4-5"]
    with pytest.raises(NoCandidates, match="ANTHROPIC_API_KEY"):
        decide(RouteRequest(CHAT), "anthropic/claude-haiku-4-5", catalog=catalog, keys=set())
    with pytest.raises(UnknownModel, match="genius"):
        decide(RouteRequest(CHAT), "genuis", catalog=catalog, keys=ALL_KEYS)


def test_cascade_depth_and_purity(catalog: Catalog) -> None:
    req = RouteRequest(CHAT)
    assert len(decide(req, "balanced", catalog=catalog, keys=ALL_KEYS, k=2).candidates) == 2
    assert len(decide(req, "balanced", catalog=catalog, keys=ALL_KEYS).candidates) == 4
    again = dataclasses.replace(catalog, rank_cache={})
    assert decide(req, "balanced", catalog=catalog, keys=ALL_KEYS) == decide(req, "balanced", catalog=again,
                                                                             keys=ALL_KEYS)


GATEWAYS = {  # the same upstream model under gateway providers (ids ending in another provider's id)
    "vercel_ai_gateway/anthropic/claude-3-5-sonnet-20241022": {
        "litellm_provider": "vercel_ai_gateway", "mode": "chat", "input_cost_per_token": 3e-6,
        "output_cost_per_token": 1.5e-5},
    "together_ai/meta-llama/llama-3-8b": {"litellm_provider": "together_ai", "mode": "chat"},
    "deepinfra/meta-llama/llama-3-8b": {"litellm_provider": "deepinfra", "mode": "chat"},
    "together_ai/acme/only-here": {"litellm_provider": "together_ai", "mode": "chat"},
}


@pytest.fixture
def gateway_catalog(catalog: Catalog) -> Catalog:
    return catalog.with_entries([*catalog.entries, *entries_from_litellm(GATEWAYS, today="2026-01-01")])


def test_provider_qualified_id_never_resolves_to_another_provider(gateway_catalog: Catalog) -> None:
    # `vox chat -m anthropic/claude-3-5-sonnet-20241022` with ANTHROPIC_API_KEY used to route to
    # vercel_ai_gateway/... by suffix and fail "no API key for vercel_ai_gateway".
    with pytest.raises(UnknownModel) as info:
        decide(RouteRequest(CHAT), "anthropic/claude-3-5-sonnet-20241022", catalog=gateway_catalog, keys={"anthropic"})
    message = str(info.value)
    assert "did you mean" in message and "anthropic/claude-sonnet-4-5" in message  # same provider first
    assert "vercel_ai_gateway/anthropic/claude-3-5-sonnet-20241022" in message  # named, not chosen
    exact = resolve_model("anthropic/claude-haiku-4-5", gateway_catalog)
    assert isinstance(exact, CatalogEntry) and exact.id == "anthropic/claude-haiku-4-5"


def test_openrouter_style_and_unambiguous_suffix_ids(gateway_catalog: Catalog) -> None:
    def resolved(spec: str) -> str:
        return entry_id(spec, gateway_catalog)

    assert resolved("qwen/qwen3-coder:free") == "openrouter/qwen/qwen3-coder:free"
    assert resolved("openai/gpt-oss-120b:free") == "openrouter/openai/gpt-oss-120b:free"
    assert resolved("openai/gpt-5") == "openai/gpt-5"  # exact beats the OpenRouter mirror
    assert resolved("acme/only-here") == "together_ai/acme/only-here"  # not a provider, one match
    with pytest.raises(UnknownModel, match="deepinfra/meta-llama/llama-3-8b.*together_ai/meta-llama/llama-3-8b"):
        resolved("meta-llama/llama-3-8b")  # two gateways: ambiguous


def test_cli_provider_qualified_unknown_id_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from serving.cli import app

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-000000")
    monkeypatch.setenv("VOX_NO_KEYRING", "1")
    monkeypatch.setenv("VOX_OFFLINE", "1")
    monkeypatch.setenv("VOX_LOCAL_ENDPOINTS", "")
    monkeypatch.setenv("VOX_OLLAMA", "0")
    result = CliRunner().invoke(app, ["chat", "-m", "anthropic/claude-3-5-sonnet-20241022", "--dry-run", "hi"])
    assert result.exit_code == 2, result.output
    assert "unknown model or mode 'anthropic/claude-3-5-sonnet-20241022'" in result.output
    assert "no API key for vercel_ai_gateway" not in result.output and "Traceback" not in result.output


def sized(total: int, system: int, **kw: Any) -> RouteRequest:
    """A request of ``total`` tokens, ``system`` of them the SSOT system prompt, as each local
    ``system_prompt_mode`` presents it (``none``: without it; ``ssot``: with it)."""
    return RouteRequest(CODE, est_input_tokens=total, est_system_tokens=system,
                        presented_tokens={"none": total - system, "ssot": total}, **kw)


def test_local_context_window_and_system_prompt_mode() -> None:
    # The SSOT prompt (~1460 tokens) must not disqualify a model whose server drops system
    # messages; a model that keeps them is skipped with a reason instead of failing after the call.
    keeps = dataclasses.replace(local("keeps-ssot", 0.9), context_window=512, system_prompt_mode="ssot")
    drops = dataclasses.replace(local("drops-system", 0.3), context_window=512, system_prompt_mode="none")
    req = sized(1500, 1460)
    d = decide(req, "free", catalog=Catalog((keeps, drops), 0.0, {}), keys=set())
    assert ids(d) == ["local/drops-system"]
    assert "rejected local/keeps-ssot" in d.explain()
    assert "prompt ~1500 tokens (~1460 of them the system prompt, which this model keeps) exceeds context window 512" \
        in d.explain()
    with pytest.raises(NoCandidates, match="local/keeps-ssot: prompt ~1500 tokens .* exceeds context window 512"):
        decide(req, "free", catalog=Catalog((keeps,), 0.0, {}), keys=set())
    too_long = sized(2100, 1460)  # 640 without the system prompt
    with pytest.raises(NoCandidates, match="prompt ~640 tokens exceeds context window 512"):
        decide(too_long, "local/drops-system", catalog=Catalog((drops,), 0.0, {}), keys=set())


def test_local_only_dead_end_says_how_to_start_a_local_model(catalog: Catalog) -> None:
    gone = Catalog((local("vox-mens-gone", 0.9, False),), 0.0,
                   {"local": {"endpoints": {"http://127.0.0.1:8000/v1": "down: connection refused"}}})
    with pytest.raises(NoCandidates) as info:
        decide(RouteRequest(CHAT, local_only=True), "genius", catalog=gone, keys=ALL_KEYS)
    message = str(info.value)
    assert message.startswith("no local model is reachable (--local-only; endpoints probed: http://127.0.0.1:8000/v1 "
                              "(connection refused))")
    assert "`vox serve`" in message and "VOX_LOCAL_ENDPOINTS" in message and "provider key" not in message
    small = dataclasses.replace(local("vox-mens-small", 0.3), context_window=100)
    with pytest.raises(NoCandidates, match=r"no local model can serve this request \(--local-only\): "
                                           "local/vox-mens-small: prompt ~500 tokens exceeds context window 100"):
        decide(RouteRequest(CHAT, est_input_tokens=500, local_only=True), "genius",
               catalog=Catalog((small,), 0.0, {}), keys=ALL_KEYS)


def test_max_tokens_capped_to_the_context_window() -> None:
    # A 512-token local model that drops system messages: the SSOT prompt does not count, the
    # user prompt is estimated high (x LOCAL_PROMPT_FACTOR + template), the rest is the answer cap.
    from serving.router import LOCAL_PROMPT_FACTOR, LOCAL_TEMPLATE_TOKENS

    tiny = dataclasses.replace(local("tiny", 0.3), context_window=512, system_prompt_mode="none")
    big = dataclasses.replace(local("big", 0.2), context_window=32768, system_prompt_mode="ssot")
    req = sized(1500, 1460, max_output_tokens=1024)
    d = decide(req, "free", catalog=Catalog((tiny, big), 0.0, {}), keys=set())
    cap = 512 - (40 * LOCAL_PROMPT_FACTOR + LOCAL_TEMPLATE_TOKENS)
    assert {c.id: c.max_tokens for c in d.candidates} == {"local/tiny": cap, "local/big": None}
    assert f"max_tokens capped to {cap}: context window 512" in d.explain()
    assert d.explain().split(f"capped to {cap}: ")[1].split("\n")[0].endswith("below the requested 1024")
    # no --max-tokens: the note says the default was capped, not a limit the user never asked for
    default = decide(dataclasses.replace(req, max_tokens_given=False), "free", catalog=Catalog((tiny, big), 0.0, {}),
                     keys=set())
    assert "below the default 1024" in default.explain() and "requested" not in default.explain()
    # an explicit model id gets its cap too; a request below the cap is left alone
    assert decide(req, "local/tiny", catalog=Catalog((tiny,), 0.0, {}), keys=set()).primary.max_tokens == cap
    small_req = dataclasses.replace(req, max_output_tokens=64)
    assert decide(small_req, "local/tiny", catalog=Catalog((tiny,), 0.0, {}), keys=set()).primary.max_tokens is None
    # a prompt that fits but leaves under MIN_ANSWER_TOKENS is skipped with a reason
    full = sized(1460 + 235, 1460)
    d = decide(full, "free", catalog=Catalog((tiny, big), 0.0, {}), keys=set())
    assert ids(d) == ["local/big"]
    assert "prompt ~502 tokens (estimated high) leaves 10 answer tokens in context window 512 (need at least 16)" \
        in d.explain()
    with pytest.raises(NoCandidates, match="local/tiny cannot be used: prompt ~502 tokens .* leaves 10 answer tokens"):
        decide(RouteRequest(CODE, est_input_tokens=235), "local/tiny", catalog=Catalog((tiny,), 0.0, {}), keys=set())


def test_prompt_too_long_names_the_windows_it_does_not_fit() -> None:
    # The chat's repair loop turns this into "repair stopped: ... does not fit ..." (not an error).
    from serving.errors import PromptTooLong

    tiny = dataclasses.replace(local("tiny", 0.3), context_window=512, system_prompt_mode="none")
    gone = local("gone", 0.9, reachable=False)
    req = sized(1460 + 389, 1460)  # 389 * 2 + 32 = 810
    for mode, local_only in (("free", False), ("local/tiny", False), ("genius", True)):
        with pytest.raises(PromptTooLong) as info:
            decide(dataclasses.replace(req, local_only=local_only), mode,
                   catalog=Catalog((tiny, gone), 0.0, {}), keys=set())
        assert info.value.windows == [("local/tiny", 512)]
        assert "leaves 0 answer tokens in context window 512" in str(info.value)
    # not a size problem: plain NoCandidates
    with pytest.raises(NoCandidates) as plain:
        decide(RouteRequest(CODE), "free", catalog=Catalog((gone,), 0.0, {}), keys=set())
    assert not isinstance(plain.value, PromptTooLong)


def test_a_model_with_several_deployments_carries_them_into_the_cascade() -> None:
    bases = ("http://127.0.0.1:8001/v1", "http://127.0.0.1:8002/v1")
    served = dataclasses.replace(local("vox-mens-tiny", 0.6), api_base=bases[0], deployments=bases)
    d = decide(RouteRequest(CHAT), "free", catalog=Catalog((served,), 0.0, {}), keys=set())
    assert d.primary.deployments == bases
    assert f"2 deployments, load-balanced: {bases[0]}, {bases[1]}" in d.explain()
    single = dataclasses.replace(served, deployments=bases[:1])
    d = decide(RouteRequest(CHAT), "free", catalog=Catalog((single,), 0.0, {}), keys=set())
    assert "deployments" not in d.explain()


def test_each_mode_says_what_would_help_when_nothing_can_serve() -> None:
    """free mode serves local and zero-cost models only: its dead end names a local server and the
    providers whose free models the catalog lists, never a paid key like OPENAI_API_KEY (new-user trial)."""
    paid = entries_from_litellm(LITELLM, today="2026-01-01")
    gone = [local("vox-mens-gone", 0.9, False)]
    with_free = Catalog(tuple(paid + entries_from_openrouter(OPENROUTER) + gone), 0.0, {})
    without_free = Catalog(tuple(paid + gone), 0.0, {})
    for cat, tail in ((with_free, "or set a key for a provider with free models (OPENROUTER_API_KEY)"),
                      (without_free, "; the catalog lists no free hosted models")):
        with pytest.raises(NoCandidates) as info:
            decide(RouteRequest(CODE), "free", catalog=cat, keys=set())
        message = str(info.value)
        assert "start a local model with `vox serve`" in message and message.endswith(tail + (
            " (`vox model discover` refreshes it)" if cat is without_free else ""))
        assert "OPENAI_API_KEY" not in message
    with pytest.raises(NoCandidates, match=r"set a provider key \(e\.g\. OPENAI_API_KEY\)"):
        decide(RouteRequest(CODE), "auto", catalog=without_free, keys=set())
