"""Executing a cascade through litellm.Router: failures move on, every attempt is reported."""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import pytest

from serving.errors import AllProvidersFailed
from serving.keys import ResolvedKey, Secret
from serving.router import AttemptFailed, Candidate, Completed, Decision, TextDelta, complete, import_litellm


@pytest.fixture(scope="module", autouse=True)
def _litellm_imported() -> None:
    """Import LiteLLM once up front (≈5 s) so the timing assertions measure only the cascade."""
    import_litellm()


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
