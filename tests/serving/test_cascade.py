"""Executing a cascade through litellm.Router: failures move on, every attempt is reported."""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import pytest

from serving.errors import AllProvidersFailed, RequestRejected
from serving.keys import ResolvedKey, Secret
from serving.router import AttemptFailed, Candidate, Completed, Decision, TextDelta, complete, import_litellm


@pytest.fixture(scope="module", autouse=True)
def _litellm_imported(replay: Any) -> None:
    """Import LiteLLM and make one HTTP call up front (≈5 s: the import, then the OpenAI client's
    first-call set-up) so the timing assertions measure only the cascade."""
    import_litellm()
    with replay.ReplayServer(["warm"], model="warm") as server:
        list(complete(decision(local("warm", server.base_url)), MESSAGES, keys={}, timeout=30))


KEYS = {"openai": ResolvedKey("openai", "explicit", Secret("sk-test-openai-000000"))}
MESSAGES = [{"role": "user", "content": "hello"}]


def hosted(i: int) -> Candidate:
    return Candidate(f"openai/model-{i}", "openai/gpt-4o-mini", "openai", 1.0 - i / 10, "fixture",
                     input_usd_per_mtok=0.15, output_usd_per_mtok=0.6)


def local(name: str, base_url: str) -> Candidate:
    return Candidate(f"local/{name}", f"openai/{name}", "local", 0.5, "fixture", api_base=base_url,
                     input_usd_per_mtok=0.0, output_usd_per_mtok=0.0)


def decision(*cands: Candidate) -> Decision:
    return Decision("auto", "chat", False, "test", tuple(cands))


def run(d: Decision, **kw: Any) -> list[Any]:
    return list(complete(d, MESSAGES, keys=KEYS, **kw))


@pytest.mark.parametrize("stream", [False, True])
def test_mock_failures_land_on_third_model(stream: bool) -> None:
    d = decision(hosted(1), hosted(2), hosted(3), hosted(4))
    mock = {"openai/model-1": "litellm.RateLimitError", "openai/model-2": "litellm.InternalServerError",
            "openai/model-3": "answer from three", "openai/model-4": "answer from four"}
    events = run(d, mock=mock, stream=stream)
    failed = [e for e in events if isinstance(e, AttemptFailed)]
    assert [f.model for f in failed] == ["openai/model-1", "openai/model-2"]
    assert "RateLimitError" in failed[0].reason and "InternalServerError" in failed[1].reason
    done = events[-1]
    assert isinstance(done, Completed) and done.model == "openai/model-3" and done.text == "answer from three"
    assert [m for m, _ in done.attempts] == ["openai/model-1", "openai/model-2"]
    assert all(isinstance(e, TextDelta) and e.model == "openai/model-3" for e in events[2:-1])


def test_http_402_503_and_timeout_move_on(replay: Any) -> None:
    with replay.ReplayServer([replay.Scripted("out of credit", status=402)], model="a") as a, \
            replay.ReplayServer([replay.Scripted("overloaded", status=503)], model="b") as b, \
            replay.ReplayServer([replay.Scripted("late", delay_s=3.0)], model="c") as c, \
            replay.ReplayServer(["fine from d"], model="d") as dd:
        d = decision(local("a", a.base_url), local("b", b.base_url), local("c", c.base_url), local("d", dd.base_url))
        t0 = time.perf_counter()
        events = run(d, timeout=0.5)
        elapsed = time.perf_counter() - t0
        assert [len(s.requests) for s in (a, b, c, dd)] == [1, 1, 1, 1]  # no hidden retries
    assert elapsed < 2.5
    failed = [e for e in events if isinstance(e, AttemptFailed)]
    assert [f.model for f in failed] == ["local/a", "local/b", "local/c"]
    assert "out of credit" in failed[0].reason and "overloaded" in failed[1].reason
    assert "Timeout" in failed[2].reason
    assert isinstance(events[-1], Completed) and events[-1].text == "fine from d"


def test_mid_stream_failure_abandons_partial_answer(replay: Any) -> None:
    with replay.ReplayServer([replay.Scripted("this answer will be cut off half way", drop_after=2)],
                             model="a") as a, replay.ReplayServer(["a fresh full answer"], model="b") as b:
        events = run(decision(local("a", a.base_url), local("b", b.base_url)))
        assert len(b.requests) == 1 and b.requests[0]["messages"] == MESSAGES  # afresh, not a continuation
    abandoned = [e for e in events if isinstance(e, AttemptFailed)]
    assert len(abandoned) == 1 and abandoned[0].model == "local/a"
    assert abandoned[0].partial == "this answer will be cut off half way"[:24]
    done = events[-1]
    assert isinstance(done, Completed) and done.model == "local/b" and done.text == "a fresh full answer"
    assert done.cost_usd == 0.0 and done.prompt_tokens == 10  # usage from the server's last chunk


def test_all_failing_is_one_clear_error_quickly() -> None:
    d = decision(hosted(1), hosted(2), hosted(3))
    mock = {c.id: "litellm.RateLimitError" for c in d.candidates}
    t0 = time.perf_counter()
    with pytest.raises(AllProvidersFailed) as info:
        run(d, mock=mock)
    assert time.perf_counter() - t0 < 5
    assert [m for m, _ in info.value.attempts] == ["openai/model-1", "openai/model-2", "openai/model-3"]
    assert str(info.value).startswith("all models failed: openai/model-1: RateLimitError")


def test_unreachable_local_endpoint_fails_over(replay: Any) -> None:
    with replay.ReplayServer(["from the live one"], model="up") as up:
        d = decision(local("down", "http://127.0.0.1:9/v1"), local("up", up.base_url))
        events = run(d, timeout=2.0)
    assert isinstance(events[0], AttemptFailed) and events[0].model == "local/down"
    assert isinstance(events[-1], Completed) and events[-1].model == "local/up"


def test_each_candidate_gets_its_own_max_tokens(replay: Any) -> None:
    # A small-context model is asked for its own cap; the fallback after it for the request's limit.
    with replay.ReplayServer([replay.Scripted("overloaded", status=503)], model="small") as small, \
            replay.ReplayServer(["fine"], model="big") as big:
        capped = dataclasses.replace(local("small", small.base_url), max_tokens=300)
        events = run(decision(capped, local("big", big.base_url)), max_tokens=1024, timeout=5.0)
        assert isinstance(events[-1], Completed) and events[-1].model == "local/big"
        assert [r["max_tokens"] for r in small.requests] == [300]
        assert [r["max_tokens"] for r in big.requests] == [1024]


# --------------------------------------------------------------------------- which failures move on

def _provider_errors() -> list[tuple[str, Any, str, int | None]]:
    """``(name, exception raised by the provider call, expected kind, HTTP status shown)``: every
    LiteLLM error class a provider call can raise, plus wordings that only the text identifies."""
    import httpx
    import litellm

    kw: dict[str, Any] = {"llm_provider": "openai", "model": "gpt-4o-mini"}
    request = httpx.Request("POST", "https://api.example.test/v1/chat/completions")

    def status(code: int) -> httpx.Response:
        return httpx.Response(code, request=request)

    return [
        ("402", litellm.PaymentRequiredError(message="insufficient credits", **kw), "credit", 402),
        ("429-quota", litellm.RateLimitError(message="You exceeded your current quota, please check your plan "
                                             "and billing details (insufficient_quota)", **kw), "credit", 429),
        ("usage-limit", litellm.APIError(status_code=403, message="You have reached your usage limit",
                                         request=request, **kw), "credit", 403),
        ("429", litellm.RateLimitError(message="slow down", **kw), "rate_limit", 429),
        ("timeout", litellm.Timeout(message="Request timed out", **kw), "timeout", None),
        ("504", litellm.Timeout(message="gateway timeout", exception_status_code=504, **kw), "timeout", 504),
        ("connection", litellm.APIConnectionError(message="connection refused", request=request, **kw),
         "server", None),
        ("500", litellm.InternalServerError(message="boom", **kw), "server", 500),
        ("502", litellm.BadGatewayError(message="bad gateway", **kw), "server", 502),
        ("503", litellm.ServiceUnavailableError(message="overloaded", **kw), "server", 503),
        ("529", litellm.APIError(status_code=529, message="overloaded_error", request=request, **kw), "server", 529),
        ("401", litellm.AuthenticationError(message="invalid x-api-key", **kw), "auth", 401),
        ("403", litellm.PermissionDeniedError(message="forbidden", response=status(403), **kw), "auth", 403),
        ("404", litellm.NotFoundError(message="model gpt-x does not exist", **kw), "not_found", 404),
        ("context", litellm.ContextWindowExceededError(message="maximum context length exceeded", **kw),
         "context", 400),
        ("context-openrouter", litellm.BadRequestError(
            message="This endpoint's maximum context length is 8192 tokens. However, you requested about 9000",
            **kw), "context", 400),
        ("context-vox-serve", litellm.BadRequestError(
            message="{'error': {'message': 'the prompt is 600 tokens; this model's context is 512', "
                    "'code': 'context_length_exceeded'}}", **kw), "context", 400),
        ("context-mistral", litellm.BadRequestError(
            message="Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768 maximum "
                    "context length", **kw), "context", 400),
        ("413", litellm.APIError(status_code=413, message="request entity too large", request=request, **kw),
         "too_large", 413),
        ("413-vox-serve", litellm.APIError(status_code=413, message="the request body is 5000000 bytes; this server "
                                           "accepts at most 4194304 (request_too_large)", request=request, **kw),
         "too_large", 413),
        ("400", litellm.BadRequestError(message="Unsupported value: 'temperature' does not support 0.0", **kw),
         "request", 400),
        ("422", litellm.UnprocessableEntityError(message="messages: field required", response=status(422), **kw),
         "request", 422),
        ("content-policy", litellm.ContentPolicyViolationError(message="request rejected by the safety system",
                                                               **kw), "request", 400),
    ]


@pytest.mark.parametrize("name, exc, kind, status", _provider_errors(), ids=[e[0] for e in _provider_errors()])
def test_every_provider_error_class(name: str, exc: Exception, kind: str, status: int | None) -> None:
    from serving.errors import RequestRejected
    from serving.failures import MOVES_ON

    other = Candidate("anthropic/model-2", "anthropic/claude-haiku-4-5", "anthropic", 0.5, "fixture")
    d = decision(hosted(1), other)  # another provider: an out-of-credit provider's own models are skipped
    mock = {"openai/model-1": exc, "anthropic/model-2": "answer from two"}
    shown = f"(HTTP {status})" if status else ""
    if kind in MOVES_ON:
        events = run(d, mock=mock, stream=False)
        failed = [e for e in events if isinstance(e, AttemptFailed)]
        assert [f.model for f in failed] == ["openai/model-1"] and failed[0].next_model == "anthropic/model-2"
        assert failed[0].failure is not None and failed[0].failure.kind == kind
        assert failed[0].reason.startswith(f"{type(exc).__name__} {shown}".rstrip() + ":"), failed[0].reason
        assert isinstance(events[-1], Completed) and events[-1].model == "anthropic/model-2"
    else:  # a request error ends the cascade with the provider's message: model-2 is never called
        with pytest.raises(RequestRejected) as info:
            run(d, mock=mock, stream=False)
        message = str(info.value)
        assert message.startswith(f"openai/model-1 rejected the request: {type(exc).__name__} {shown}:")
        words = {"400": "Unsupported value: 'temperature' does not support 0.0", "422": "messages: field required",
                 "content-policy": "request rejected by the safety system"}[name]
        assert f"{shown}: {words} (not retried on other models" in message  # the provider's own words
        assert [m for m, _ in info.value.attempts] == ["openai/model-1"]
    if status is None:
        assert "HTTP" not in run_reason(exc)


def run_reason(exc: Exception) -> str:
    from serving.failures import classify

    return classify(exc).line()


def test_the_final_failure_names_each_model_with_its_own_error() -> None:
    import litellm

    kw: dict[str, Any] = {"llm_provider": "openai", "model": "gpt-4o-mini"}
    d = decision(hosted(1), hosted(2), hosted(3))
    mock = {"openai/model-1": litellm.RateLimitError(message="primary is rate limited", **kw),
            "openai/model-2": litellm.ServiceUnavailableError(message="second is overloaded", **kw),
            "openai/model-3": litellm.PaymentRequiredError(message="third has no credit", **kw)}
    with pytest.raises(AllProvidersFailed) as info:
        run(d, mock=mock)
    assert info.value.attempts == [
        ("openai/model-1", "RateLimitError (HTTP 429): primary is rate limited"),
        ("openai/model-2", "ServiceUnavailableError (HTTP 503): second is overloaded"),
        ("openai/model-3", "PaymentRequiredError (HTTP 402): third has no credit"),
    ]
    assert str(info.value).endswith("openai/model-3: PaymentRequiredError (HTTP 402): third has no credit")


def windowed(i: int, window: int) -> Candidate:
    return dataclasses.replace(hosted(i), context_window=window)


def test_context_overflow_moves_on_only_to_a_larger_window() -> None:
    import litellm

    d = decision(windowed(1, 8000), windowed(2, 4000), windowed(3, 8000), windowed(4, 128000))
    mock = {"openai/model-1": litellm.ContextWindowExceededError(message="prompt is too long", llm_provider="openai",
                                                                 model="gpt-4o-mini"),
            "openai/model-2": "never asked", "openai/model-3": "never asked", "openai/model-4": "from the big one"}
    events = run(d, mock=mock)
    failed = [e for e in events if isinstance(e, AttemptFailed)]
    assert [(f.model, f.next_model) for f in failed] == [("openai/model-1", "openai/model-4")]
    assert isinstance(events[-1], Completed) and events[-1].model == "openai/model-4"
    # nothing larger left: the cascade ends, naming what it did not try and why
    small = decision(windowed(1, 8000), windowed(2, 4000))
    with pytest.raises(AllProvidersFailed, match=r"not tried: openai/model-2 \(context window 4000 is not larger "
                                                 r"than 8000\)"):
        run(small, mock=mock)


def test_a_body_too_large_moves_on_to_the_next_model_whatever_its_window() -> None:
    """413 is a limit on the request's bytes, not its tokens: the next model is tried even with a
    smaller context window (a context overflow would skip it)."""
    import httpx
    import litellm

    request = httpx.Request("POST", "https://api.example.test/v1/chat/completions")
    d = decision(windowed(1, 8000), windowed(2, 4000))
    mock = {"openai/model-1": litellm.APIError(status_code=413, message="request entity too large", request=request,
                                               llm_provider="openai", model="gpt-4o-mini"),
            "openai/model-2": "from the small one"}
    events = run(d, mock=mock)
    failed = [e for e in events if isinstance(e, AttemptFailed)]
    assert [(f.model, f.next_model) for f in failed] == [("openai/model-1", "openai/model-2")]
    assert failed[0].failure is not None and failed[0].failure.kind == "too_large"
    assert isinstance(events[-1], Completed) and events[-1].model == "openai/model-2"


def test_out_of_credit_skips_the_providers_paid_models_and_is_remembered(tmp_path: Any) -> None:
    import litellm

    from serving.provider_status import ProviderHealth, load_exclusions

    def router_model(name: str, free: bool = False) -> Candidate:
        return Candidate(f"openrouter/{name}", f"openrouter/{name}", "openrouter", 0.5, "fixture",
                         input_usd_per_mtok=0.0 if free else 1.0, output_usd_per_mtok=0.0 if free else 2.0,
                         is_free=free)

    d = decision(router_model("paid-a"), router_model("paid-b"), router_model("coder:free", free=True))
    mock = {"openrouter/paid-a": litellm.PaymentRequiredError(message="Insufficient credits", llm_provider="openrouter",
                                                               model="paid-a"),
            "openrouter/paid-b": "never asked", "openrouter/coder:free": "free answer"}
    health = ProviderHealth(path=tmp_path / "status.json")
    events = list(complete(d, MESSAGES, keys={}, mock=mock, health=health))
    failed = [e for e in events if isinstance(e, AttemptFailed)]
    assert [(f.model, f.next_model) for f in failed] == [("openrouter/paid-a", "openrouter/coder:free")]
    assert "(HTTP 402)" in failed[0].reason
    assert isinstance(events[-1], Completed) and events[-1].model == "openrouter/coder:free"
    assert set(health.excluded()) == {"openrouter"}
    saved = load_exclusions(tmp_path / "status.json")
    assert saved["openrouter"].status == 402 and "Insufficient credits" in saved["openrouter"].message
    assert load_exclusions(tmp_path / "status.json", now=saved["openrouter"].until_unix + 1) == {}  # expires


def test_mid_stream_death_of_the_last_model_has_no_next_model(replay: Any) -> None:
    with replay.ReplayServer([replay.Scripted("cut off half way through", drop_after=1)], model="a") as a:
        with pytest.raises(AllProvidersFailed):
            for event in complete(decision(local("a", a.base_url)), MESSAGES, keys=KEYS, timeout=5.0):
                if isinstance(event, AttemptFailed):
                    assert event.partial and event.next_model is None


def test_concurrent_cascades_report_only_their_own_attempts(replay: Any) -> None:
    # The attempt reports used to go through one class-level LiteLLM callback sink shared by every
    # thread; two chats at once could see (or lose) each other's failures.
    import threading

    results: dict[str, list[Any]] = {}
    with replay.ReplayServer([replay.Scripted("busy one", status=429, delay_s=0.3)], model="a") as a, \
            replay.ReplayServer(["answer one"], model="b") as b, \
            replay.ReplayServer([replay.Scripted("down two", status=503, delay_s=0.3)], model="c") as c, \
            replay.ReplayServer(["answer two"], model="d") as dd:
        plans = {"one": decision(local("a", a.base_url), local("b", b.base_url)),
                 "two": decision(local("c", c.base_url), local("d", dd.base_url))}
        start = threading.Barrier(2)

        def chat(name: str) -> None:
            start.wait()
            results[name] = run(plans[name], timeout=10.0)

        threads = [threading.Thread(target=chat, args=(n,)) for n in plans]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
    one, two = results["one"], results["two"]

    def kinds(events: list[Any]) -> list[tuple[str, str]]:
        return [(e.model, e.failure.kind if e.failure else "") for e in events if isinstance(e, AttemptFailed)]

    assert kinds(results["one"]) == [("local/a", "rate_limit")] and kinds(results["two"]) == [("local/c", "server")]
    assert one[-1].text == "answer one"
    assert one[-1].attempts == (("local/a", f"RateLimitError (HTTP 429): busy one (endpoint {a.base_url})"),)
    assert two[-1].text == "answer two" and two[-1].attempts[0][0] == "local/c"


# --------------------------------------------------------------------------- several deployments of one model

def several(name: str, *bases: str) -> Candidate:
    """A local model served by several endpoints (one deployment each)."""
    return dataclasses.replace(local(name, bases[0]), deployments=tuple(bases))


@pytest.mark.parametrize(("failing", "stream", "kind"), [
    ({"status": 503, "text": "overloaded"}, False, "server"),
    ({"status": 429, "text": "busy"}, False, "rate_limit"),
    ({"delay_s": 3.0, "text": "late"}, False, "timeout"),
    ({"drop_after": 1, "text": "cut off half way through"}, True, "server"),
])
def test_a_failing_deployment_is_retried_on_another_deployment_first(
        replay: Any, failing: dict[str, Any], stream: bool, kind: str) -> None:
    # Deployment a always fails for a reason of its own: the request that lands on it is answered by
    # deployment b of the same model (never by the next model), and a is cooled down afterwards.
    with replay.ReplayServer([replay.Scripted(**failing)], model="m") as a, \
            replay.ReplayServer(["from b"], model="m") as b:
        d = decision(several("m", a.base_url, b.base_url), hosted(1))
        runs = [run(d, stream=stream, timeout=1.0, mock={"openai/model-1": "from the next model"})
                for _ in range(12)]
        assert len(a.requests) == 1  # picked once (2**-12 odds of never), then cooled down
        assert len(b.requests) == 12
    assert all(isinstance(r[-1], Completed) and r[-1].model == "local/m" and r[-1].deployment == b.base_url
               and r[-1].text == "from b" for r in runs)
    failed = [e for r in runs for e in r if isinstance(e, AttemptFailed)]
    assert len(failed) == 1 and failed[0].model == "local/m" and failed[0].next_model == "local/m"
    assert failed[0].deployment == a.base_url and failed[0].failure and failed[0].failure.kind == kind
    assert failed[0].reason.count(a.base_url) == 1  # the endpoint is named once, whatever the failure
    assert bool(failed[0].partial) == stream


def test_all_deployments_failing_moves_on_to_the_next_model(replay: Any) -> None:
    with replay.ReplayServer([replay.Scripted("down", status=502)], model="m") as a, \
            replay.ReplayServer([replay.Scripted("down too", status=500)], model="m") as b:
        d = decision(several("m", a.base_url, b.base_url, "http://127.0.0.1:9/v1"), hosted(1))
        events = run(d, timeout=2.0, mock={"openai/model-1": "from the next model"})
        assert (len(a.requests), len(b.requests)) == (1, 1)  # each deployment once
        # now every deployment is cooling down: the next request moves on at once, calling none of them
        again = run(d, timeout=2.0, mock={"openai/model-1": "from the next model"})
        assert (len(a.requests), len(b.requests)) == (1, 1)
    failed = [e for e in events if isinstance(e, AttemptFailed)]
    assert sorted(str(f.deployment) for f in failed) == sorted([a.base_url, b.base_url, "http://127.0.0.1:9/v1"])
    assert [f.next_model for f in failed] == ["local/m", "local/m", "openai/model-1"]
    done = events[-1]
    assert isinstance(done, Completed) and done.model == "openai/model-1" and done.deployment is None
    assert [m for m, _ in done.attempts] == ["local/m"] * 3
    failed = [e for e in again if isinstance(e, AttemptFailed)]
    assert len(failed) == 1 and failed[0].failure and failed[0].failure.kind == "rate_limit"
    assert failed[0].next_model == "openai/model-1" and "No deployments available" in failed[0].reason
    assert isinstance(again[-1], Completed) and again[-1].model == "openai/model-1"


@pytest.mark.parametrize(("answer", "outcome"), [
    ("invalid value for temperature", "rejected"),  # the request's fault: fails everywhere
    ("This model's maximum context length is 512 tokens", "next model"),  # the model's window, on every deployment
])
def test_failures_of_the_request_or_the_model_are_not_retried_on_another_deployment(
        replay: Any, answer: str, outcome: str) -> None:
    with replay.ReplayServer([replay.Scripted(answer, status=400)], model="m") as a, \
            replay.ReplayServer([replay.Scripted(answer, status=400)], model="m") as b:
        d = decision(dataclasses.replace(several("m", a.base_url, b.base_url), context_window=512), hosted(1))
        if outcome == "rejected":
            with pytest.raises(RequestRejected):
                run(d, timeout=5.0)
        else:
            events = run(d, timeout=5.0, mock={"openai/model-1": "bigger window"})
            assert isinstance(events[-1], Completed) and events[-1].model == "openai/model-1"
        assert len(a.requests) + len(b.requests) == 1


def test_routing_strategy_is_configurable_and_checked(replay: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from serving.cascade import routing_strategy
    from serving.errors import UsageError

    assert routing_strategy() == "simple-shuffle"
    monkeypatch.setenv("VOX_ROUTING_STRATEGY", "least-busy")
    with replay.ReplayServer(["one"], model="m") as a, replay.ReplayServer(["two"], model="m") as b:
        events = run(decision(several("m", a.base_url, b.base_url)), timeout=5.0)
    assert isinstance(events[-1], Completed) and events[-1].deployment in (a.base_url, b.base_url)
    monkeypatch.setenv("VOX_ROUTING_STRATEGY", "round-robin")
    with pytest.raises(UsageError, match="VOX_ROUTING_STRATEGY must be one of simple-shuffle, least-busy"):
        run(decision(hosted(1)), mock={"openai/model-1": "x"})


def test_a_local_server_refusing_max_tokens_is_asked_again_within_its_room(monkeypatch: pytest.MonkeyPatch) -> None:
    """vox serve answers 400 with the room it has when the router's prompt estimate ran low; the
    cascade asks the same model once more with that room instead of failing the turn."""
    import serving.cascade as cascade

    calls: list[Any] = []

    def fake_call(router: Any, target: str, c: Any, messages: Any, stream: bool, extra: Any, fake: Any,
                  att: Any) -> Any:
        calls.append(dict(extra))
        if len(calls) == 1:
            raise RuntimeError("BadRequestError: max_tokens=394 is too large: the prompt is 670 tokens and this "
                               "model's context is 1024 (at most 354 new tokens)")
        att.pieces.append("ok")
        yield TextDelta("ok", c.id)

    monkeypatch.setattr(cascade, "_call", fake_call)
    events = run(decision(local("tiny", "http://127.0.0.1:9/v1")), stream=False)
    assert [c.get("max_tokens") for c in calls] == [None, 354]
    retry = [e for e in events if isinstance(e, AttemptFailed)]
    assert len(retry) == 1 and retry[0].next_model == "local/tiny" and "max_tokens=354" in retry[0].reason
    assert isinstance(events[-1], Completed) and events[-1].text == "ok"
    assert cascade.reported_room(RuntimeError("max_tokens is wrong")) is None


def test_a_connection_error_litellm_reraises_as_a_500_reads_as_no_answer() -> None:
    # a stopped `vox serve` read "InternalServerError (HTTP 500): Connection error." (a new-user trial)
    import litellm

    from serving.failures import classify

    failure = classify(litellm.InternalServerError(message="Connection error.", llm_provider="openai",
                                                   model="vox-mens-tiny"))
    assert (failure.kind, failure.status, failure.error_type) == ("server", None, "APIConnectionError")
    assert failure.line() == ("APIConnectionError: no answer from the server (the connection failed); check the "
                              "network and any proxy settings")
    real = classify(litellm.InternalServerError(message="boom", llm_provider="openai", model="m"))
    assert (real.status, real.error_type) == (500, "InternalServerError")  # a server that answered 500


def test_a_200_whose_body_is_not_json_reads_as_a_bad_response() -> None:
    # a new-user trial: "InternalServerError (HTTP 500): error - Expecting value... Received response - <APIRes"
    import litellm

    from serving.failures import classify

    exc = litellm.InternalServerError(
        message="OpenAIException - Expecting value: line 1 column 1 (char 0). Received response - <APIResponse "
                "[200 OK] type=<class 'openai.types.chat.chat_completion.ChatCompletion'>>",
        llm_provider="openai", model="m")
    failure = classify(exc)
    assert (failure.kind, failure.status, failure.error_type) == ("server", None, "BadResponse")
    assert failure.line() == ("BadResponse: the server answered HTTP 200 with an empty or malformed body (Expecting "
                              "value: line 1 column 1 (char 0)), not JSON: a proxy between here and the provider?")


@pytest.mark.parametrize("stream", [True, False])
def test_an_answer_without_choices_or_text_moves_on_instead_of_answering_nothing(replay: Any, stream: bool) -> None:
    # new-user trial: 200 with "choices": [] printed an empty answer and exited 0
    empty = replay.Scripted("", no_choices=True)
    for script in ([empty], [""]):
        with replay.ReplayServer(script, model="replay-model") as server:
            # a stream without a choice LiteLLM itself refuses ("Stream ended before a finish_reason")
            with pytest.raises(AllProvidersFailed, match="EmptyAnswer: the model (returned no choices|returned an "
                                                         "empty answer|streamed no text)|Stream ended before"):
                run(decision(local("replay-model", server.base_url)), stream=stream, timeout=10)
