"""Server tests over a real loopback socket: the `openai` client and LiteLLM (``openai/`` prefix +
``api_base``), streaming and not; 4xx errors for bad requests while the server keeps serving;
concurrent requests queued, never interleaved. The `vox serve` command is in ``test_cli_serve.py``."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator, MutableMapping
from pathlib import Path
from typing import Any

import httpx
import pytest

MESSAGES = [{"role": "user", "content": "Write fn add(a: int, b: int) to int."}]


@pytest.fixture(scope="module")
def client(local_server: str) -> Any:
    import openai

    return openai.OpenAI(base_url=local_server, api_key="unused", max_retries=0, timeout=30)


def _health(base_url: str) -> dict[str, Any]:
    response = httpx.get(base_url.removesuffix("/v1") + "/health", timeout=5)
    assert response.status_code == 200
    body: dict[str, Any] = response.json()
    return body


def test_health_and_models(local_server: str, client: Any, tiny_model_name: str) -> None:
    assert _health(local_server)["status"] == "ok"
    assert [m.id for m in client.models.list().data] == [tiny_model_name]
    card = client.models.retrieve(tiny_model_name)
    assert card.id == tiny_model_name and card.model_extra["max_model_len"] == 512
    assert card.model_extra["system_prompt_mode"] == "none"


def test_openai_client_non_streaming(client: Any, tiny_model_name: str) -> None:
    out = client.chat.completions.create(model=tiny_model_name, messages=MESSAGES, max_tokens=12, temperature=0)
    assert out.model == tiny_model_name
    assert out.choices[0].message.role == "assistant"
    assert out.choices[0].finish_reason in ("stop", "length")
    assert out.usage.prompt_tokens > 0 and 0 < out.usage.completion_tokens <= 12
    assert out.usage.total_tokens == out.usage.prompt_tokens + out.usage.completion_tokens


def test_openai_client_streaming_matches_non_streaming(client: Any, tiny_model_name: str) -> None:
    args = dict(model=tiny_model_name, messages=MESSAGES, max_tokens=12, temperature=0)
    whole = client.chat.completions.create(**args)
    chunks = list(client.chat.completions.create(stream=True, stream_options={"include_usage": True}, **args))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == whole.choices[0].message.content
    assert [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason] == [
        whole.choices[0].finish_reason
    ]
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens == whole.usage.completion_tokens

    plain = list(client.chat.completions.create(stream=True, **args))  # usage rides on the last chunk
    assert plain[-1].usage.total_tokens == whole.usage.total_tokens


def test_vox_constraint_is_reported_and_can_be_turned_off(local_server: str, tiny_model_name: str) -> None:
    payload = {"model": tiny_model_name, "messages": MESSAGES, "max_tokens": 6, "temperature": 0}
    on = httpx.post(f"{local_server}/chat/completions", json=payload, timeout=30).json()
    assert on["vox_constraint"]["mode"] == "response" and on["vox_constraint"]["applied"] is True
    off = httpx.post(f"{local_server}/chat/completions", json={**payload, "vox_constrained": False}, timeout=30).json()
    assert off["vox_constraint"]["applied"] is False and off["choices"][0]["message"]["content"] is not None
    code = httpx.post(f"{local_server}/chat/completions", json={**payload, "vox_code_only": True}, timeout=30).json()
    assert code["vox_constraint"]["mode"] == "code"
    assert "```vox".startswith(code["choices"][0]["message"]["content"][:6])


def test_every_response_carries_each_choices_retries_streamed_or_not(local_server: str, tiny_model_name: str) -> None:
    # README: every response carries vox_constraint.retries; a stream (no retry rounds by default) had none.
    payload = {"model": tiny_model_name, "messages": MESSAGES, "max_tokens": 6, "temperature": 0, "n": 2}
    whole = httpx.post(f"{local_server}/chat/completions", json=payload, timeout=30).json()
    assert [set(c["vox_constraint"]["retries"]) for c in whole["choices"]] == [
        {"rounds", "faulty", "retried", "fixed"}] * 2
    from pipeline.decoding_retry import RETRIES

    assert all(c["vox_constraint"]["retries"]["rounds"] == RETRIES for c in whole["choices"])
    assert all(c["vox_constraint"]["retries"]["faulty"] in (0, 1) for c in whole["choices"])  # its own, not a sum
    assert whole["vox_constraint"] == whole["choices"][0]["vox_constraint"]
    with httpx.stream("POST", f"{local_server}/chat/completions", json={**payload, "stream": True}, timeout=30) as r:
        lines = [line.removeprefix("data: ") for line in r.iter_lines() if line.startswith("data: {")]
    chunks = [json.loads(line) for line in lines]
    finishes = [c for chunk in chunks for c in chunk["choices"] if c["finish_reason"]]
    none_ran = {"rounds": 0, "faulty": 0, "retried": 0, "fixed": 0}
    assert [c["vox_constraint"]["retries"] for c in finishes] == [none_ran] * 2
    assert chunks[-1]["vox_constraint"]["retries"] == none_ran  # the last chunk: choice 0's report


def test_litellm_streaming_and_not(local_server: str, tiny_model_name: str) -> None:
    import litellm

    args: dict[str, Any] = dict(
        model=f"openai/{tiny_model_name}", api_base=local_server, api_key="unused", messages=MESSAGES, max_tokens=10
    )
    out = litellm.completion(temperature=0, **args)
    expected = out.choices[0].message.content
    assert isinstance(expected, str) and out.usage.completion_tokens > 0
    streamed = "".join(c.choices[0].delta.content or "" for c in litellm.completion(stream=True, temperature=0, **args))
    assert streamed == expected


# -- n choices in one request -----------------------------------------------------------------


def test_n_choices_in_one_request(client: Any, tiny_model_name: str) -> None:
    args = dict(model=tiny_model_name, messages=MESSAGES, max_tokens=10, temperature=1.0, seed=7)
    one = client.chat.completions.create(**args)
    out = client.chat.completions.create(n=3, **args)
    assert [c.index for c in out.choices] == [0, 1, 2]
    assert all(c.finish_reason in ("stop", "length") for c in out.choices)
    assert all(c.model_extra["vox_constraint"]["mode"] == "response" for c in out.choices)
    texts = [c.message.content for c in out.choices]
    assert len(set(texts)) > 1  # independent samples of a random model
    # usage: the prompt once, every choice's tokens
    assert out.usage.prompt_tokens == one.usage.prompt_tokens
    assert 3 <= out.usage.completion_tokens <= 30
    assert out.usage.total_tokens == out.usage.prompt_tokens + out.usage.completion_tokens
    # seeded: the same request gives the same choices
    assert [c.message.content for c in client.chat.completions.create(n=3, **args).choices] == texts


def test_n_greedy_choices_equal_the_single_answer_and_stop_each(client: Any, tiny_model_name: str) -> None:
    args = dict(model=tiny_model_name, messages=MESSAGES, max_tokens=16, temperature=0)
    single = client.chat.completions.create(**args).choices[0].message.content
    out = client.chat.completions.create(n=2, **args)
    assert [c.message.content for c in out.choices] == [single, single]
    assert len(single) > 4, single
    stop = single[2:4]
    cut = client.chat.completions.create(n=2, stop=[stop], **args)
    assert [(c.message.content, c.finish_reason) for c in cut.choices] == [(single[: single.index(stop)], "stop")] * 2


def test_n_streaming_carries_the_choice_index(client: Any, tiny_model_name: str) -> None:
    args = dict(model=tiny_model_name, messages=MESSAGES, max_tokens=10, temperature=1.0, seed=11, n=3)
    whole = client.chat.completions.create(**args)
    chunks = list(client.chat.completions.create(stream=True, stream_options={"include_usage": True}, **args))
    texts = ["", "", ""]
    finishes: dict[int, str] = {}
    for c in chunks:
        for choice in c.choices:
            texts[choice.index] += choice.delta.content or ""
            if choice.finish_reason:
                assert choice.index not in finishes
                finishes[choice.index] = choice.finish_reason
    assert texts == [c.message.content for c in whole.choices]
    assert finishes == {c.index: c.finish_reason for c in whole.choices}
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens == whole.usage.completion_tokens
    plain = list(client.chat.completions.create(stream=True, **args))  # usage rides on the last finish chunk
    assert plain[-1].usage.total_tokens == whole.usage.total_tokens



@pytest.mark.parametrize("constrained", [True, False])
def test_n_streamed_choices_are_each_the_whole_answers_text(client: Any, tiny_model_name: str,
                                                             constrained: bool) -> None:
    # A new-user trial saw a streamed n=2 answer whose choice 0 was "" ("stop") beside a choice 1
    # with text. Each chunk carries one choice under its own index, and each choice's text is the
    # non-streamed one for the same seed (retries off: a stream runs none by default).
    args = dict(model=tiny_model_name, messages=MESSAGES, max_tokens=12, temperature=0.7, seed=5, n=2,
                extra_body={"vox_retries": 0} if constrained else {"vox_constrained": False})
    whole = client.chat.completions.create(**args)
    texts: dict[int, str] = {}
    for chunk in client.chat.completions.create(stream=True, **args):
        assert len(chunk.choices) <= 1
        for choice in chunk.choices:
            texts[choice.index] = texts.get(choice.index, "") + (choice.delta.content or "")
    assert texts == {c.index: c.message.content for c in whole.choices}
    assert all(texts.values()), texts

@pytest.mark.parametrize(
    ("body", "status", "param"),
    [
        (b'{"model": "vox-mens-tiny", "messages": [', 400, None),  # malformed JSON
        (b"[1, 2]", 400, None),
        (json.dumps({"model": "vox-mens-tiny"}).encode(), 400, "messages"),
        (json.dumps({"model": "gpt-99", "messages": MESSAGES}).encode(), 404, "model"),
        (json.dumps({"model": "vox-mens-tiny", "messages": MESSAGES, "max_tokens": 10**6}).encode(), 400, "max_tokens"),
        (json.dumps({"model": "vox-mens-tiny", "messages": MESSAGES, "max_tokens": 0}).encode(), 400, "max_tokens"),
        (json.dumps({"model": "vox-mens-tiny", "messages": MESSAGES, "temperature": 9}).encode(), 400, "temperature"),
        (json.dumps({"model": "vox-mens-tiny", "messages": [{"role": "x", "content": "y"}]}).encode(), 400, None),
        (json.dumps({"model": "vox-mens-tiny", "messages": MESSAGES, "n": 17}).encode(), 400, "n"),  # > MAX_CHOICES
        (json.dumps({"model": "vox-mens-tiny", "messages": MESSAGES, "n": 0}).encode(), 400, "n"),
        (json.dumps({"model": "vox-mens-tiny", "messages": MESSAGES, "temperature": 1, "seed": 10**30}).encode(),
         400, "seed"),  # was a 500 (torch.Generator overflow), then a 400 with param null
        # integers out of range or not integers, each named (huge ints reached the engine)
        (json.dumps({"model": "vox-mens-tiny", "messages": MESSAGES, "seed": 999999999999999999999999}).encode(),
         400, "seed"),
        (json.dumps({"model": "vox-mens-tiny", "messages": MESSAGES, "seed": -(2**63) - 1}).encode(), 400, "seed"),
        (json.dumps({"model": "vox-mens-tiny", "messages": MESSAGES, "seed": 1e30}).encode(), 400, "seed"),
        (json.dumps({"model": "vox-mens-tiny", "messages": MESSAGES, "n": 10**30}).encode(), 400, "n"),
        (json.dumps({"model": "vox-mens-tiny", "messages": MESSAGES, "n": -(10**30)}).encode(), 400, "n"),
        (json.dumps({"model": "vox-mens-tiny", "messages": MESSAGES, "max_tokens": 10**30}).encode(), 400,
         "max_tokens"),
        (json.dumps({"model": "vox-mens-tiny", "messages": MESSAGES, "max_tokens": 1e30}).encode(), 400, "max_tokens"),
        (json.dumps({"model": "vox-mens-tiny", "messages": MESSAGES, "max_completion_tokens": 10**30}).encode(), 400,
         "max_completion_tokens"),
        (json.dumps({"model": "vox-mens-tiny", "messages": MESSAGES, "max_completion_tokens": -1}).encode(), 400,
         "max_completion_tokens"),
        (json.dumps({"model": "vox-mens-tiny", "messages": MESSAGES, "vox_retries": 10**30}).encode(), 400,
         "vox_retries"),
        (json.dumps({"model": "vox-mens-tiny", "messages": MESSAGES, "vox_retries": 2.5}).encode(), 400, "vox_retries"),
        # only system messages: the model drops them and nothing is left to answer (was a 500)
        (json.dumps({"model": "vox-mens-tiny", "messages": [{"role": "system", "content": "be brief"}] * 2}).encode(),
         400, "messages"),
        # a lone UTF-16 surrogate is not text a tokenizer can encode (was a 500)
        (json.dumps({"model": "vox-mens-tiny", "messages": [{"role": "user", "content": "hi \ud83d"}]}).encode(),
         400, "messages[0].content"),
        (json.dumps({"model": "vox-mens-tiny", "messages": [{"role": "user", "content": [
            {"type": "text", "text": "\ud800"}]}]}).encode(), 400, "messages[0].content"),
        # wrong types are refused, not converted ("yes" and 0 were read as true and false)
        (json.dumps({"model": "vox-mens-tiny", "messages": MESSAGES, "vox_constrained": "yes"}).encode(),
         400, "vox_constrained"),
        (json.dumps({"model": "vox-mens-tiny", "messages": MESSAGES, "vox_constrained": "false"}).encode(),
         400, "vox_constrained"),
        (json.dumps({"model": "vox-mens-tiny", "messages": MESSAGES, "vox_constrained": 0}).encode(),
         400, "vox_constrained"),
        (json.dumps({"model": "vox-mens-tiny", "messages": MESSAGES, "vox_names": "no"}).encode(), 400, "vox_names"),
        (json.dumps({"model": "vox-mens-tiny", "messages": MESSAGES, "vox_retries": "2"}).encode(), 400, "vox_retries"),
        (json.dumps({"model": "vox-mens-tiny", "messages": MESSAGES, "n": "2"}).encode(), 400, "n"),
        (json.dumps({"model": "vox-mens-tiny", "messages": MESSAGES, "max_tokens": True}).encode(), 400, "max_tokens"),
        (json.dumps({"model": "vox-mens-tiny", "messages": MESSAGES, "temperature": "0.5"}).encode(), 400,
         "temperature"),
        # an empty stop string: param was null, the message showed a Python tuple
        (json.dumps({"model": "vox-mens-tiny", "messages": MESSAGES, "stop": ""}).encode(), 400, "stop"),
        (json.dumps({"model": "vox-mens-tiny", "messages": MESSAGES, "stop": ["x", ""]}).encode(), 400, "stop"),
    ],
)
def test_bad_requests_get_openai_errors_and_server_keeps_serving(
    local_server: str, body: bytes, status: int, param: str | None
) -> None:
    for stream in (False, True):
        payload = body
        if stream and body.startswith(b"{") and body.endswith(b"}"):
            payload = body[:-1] + b', "stream": true}'
        response = httpx.post(
            f"{local_server}/chat/completions", content=payload, headers={"Content-Type": "application/json"}
        )
        assert response.status_code == status, response.text
        error = response.json()["error"]
        assert error["message"] and error["type"] == "invalid_request_error"
        if param is not None:
            assert error["param"] == param
    assert _health(local_server)["status"] == "ok"


@pytest.mark.parametrize(("messages", "message", "param"), [
    (["hi"], "messages[0]: Input should be a valid dictionary", "messages[0]"),  # was param "messages.0"
    ([{"role": "user", "content": "x"}, 3], "messages[1]: Input should be a valid dictionary", "messages[1]"),
    ([{"content": "x"}], "messages[0].role is missing (one of system, user, assistant, tool)",
     "messages[0].role"),  # was "..., got None"
    ([{"role": "robot", "content": "x"}], "messages[0].role must be one of system, user, assistant, tool, got 'robot'",
     "messages[0].role"),
    ([{"role": "user"}], "messages[0].content is missing", "messages[0].content"),  # was a 200 that generated
    ([{"role": "system", "content": "s"}, {"role": "user", "content": None}],
     "messages[1].content is null (only an assistant message with tool_calls may omit it)", "messages[1].content"),
    ([{"role": "user", "content": 5}], "messages[0].content must be a string or a list of text parts",
     "messages[0].content"),  # param was "messages[0]"
    ([{"role": "user", "content": [{"type": "image_url"}]}], "messages[0].content: only text parts are supported",
     "messages[0].content"),
    (None, "messages is missing (a required field)", "messages"),  # was "messages: Field required"
])
def test_request_fields_are_named_one_way(local_server: str, messages: Any, message: str, param: str) -> None:
    payload = {"model": "vox-mens-tiny", "max_tokens": 2} | ({} if messages is None else {"messages": messages})
    response = httpx.post(f"{local_server}/chat/completions", json=payload, timeout=30)
    assert response.status_code == 400
    error = response.json()["error"]
    assert (error["message"], error["param"]) == (message, param)


def test_null_asks_for_the_default(local_server: str) -> None:
    """`"stream": null` (OpenAI's clients send it) is a whole answer, as for every optional field."""
    payload = {"model": "vox-mens-tiny", "messages": MESSAGES, "max_tokens": 2, "stream": None, "vox_code_only": None}
    response = httpx.post(f"{local_server}/chat/completions", json=payload, timeout=60)
    assert response.status_code == 200, response.text
    assert response.json()["object"] == "chat.completion"


def test_openai_client_sees_typed_errors(client: Any, tiny_model_name: str) -> None:
    import openai

    with pytest.raises(openai.NotFoundError):
        client.chat.completions.create(model="no-such-model", messages=MESSAGES)
    with pytest.raises(openai.BadRequestError) as info:
        client.chat.completions.create(model=tiny_model_name, messages=MESSAGES, max_tokens=100_000, stream=True)
    assert info.value.code == "context_length_exceeded"
    ok = client.chat.completions.create(model=tiny_model_name, messages=MESSAGES, max_tokens=4)
    assert ok.choices[0].finish_reason in ("stop", "length")


FUNCTION_TOOL = {"type": "function", "function": {"name": "add", "parameters": {"type": "object"}}}


@pytest.mark.parametrize(("field", "value"), [
    ("tools", [FUNCTION_TOOL]),
    ("tool_choice", "required"),
    ("tool_choice", {"type": "function", "function": {"name": "add"}}),
    ("functions", [FUNCTION_TOOL["function"]]),
    ("function_call", {"name": "add"}),
    ("response_format", {"type": "json_object"}),
    ("response_format", {"type": "json_schema", "json_schema": {"name": "x", "schema": {}}}),
    ("logprobs", True),
    ("top_logprobs", 3),
    ("modalities", ["text", "audio"]),
    ("audio", {"voice": "alloy", "format": "wav"}),
    ("logit_bias", {"5": 100}),  # was accepted and ignored
])
def test_fields_that_change_the_answer_are_refused_not_ignored(local_server: str, field: str, value: Any) -> None:
    # they used to be accepted and ignored: a client asking for JSON or a tool call got prose
    for stream in (False, True):
        payload = {"model": "vox-mens-tiny", "messages": MESSAGES, "max_tokens": 2, "stream": stream, field: value}
        response = httpx.post(f"{local_server}/chat/completions", json=payload)
        assert response.status_code == 400, response.text
        error = response.json()["error"]
        assert error["param"] == field and error["code"] == "unsupported_parameter"
        assert error["message"].startswith(f"{field} is not supported by this server")


def test_harmless_and_unknown_fields_are_accepted(client: Any, tiny_model_name: str) -> None:
    import openai

    harmless = {"tools": [], "tool_choice": "none", "response_format": {"type": "text"}, "logprobs": False,
                "top_logprobs": 0, "modalities": ["text"], "user": "u1", "presence_penalty": 0.5,
                "frequency_penalty": 0.1, "parallel_tool_calls": False, "store": False, "metadata": {"k": "v"},
                "logit_bias": {}, "some_future_field": {"x": 1}}
    out = client.chat.completions.create(model=tiny_model_name, messages=MESSAGES, max_tokens=2, extra_body=harmless)
    assert out.choices[0].finish_reason in ("stop", "length")
    with pytest.raises(openai.BadRequestError) as info:  # what an OpenAI client sees
        client.chat.completions.create(model=tiny_model_name, messages=MESSAGES, max_tokens=2, tools=[FUNCTION_TOOL])
    assert info.value.param == "tools" and info.value.code == "unsupported_parameter"


def test_unknown_route_is_an_openai_404(local_server: str) -> None:
    response = httpx.get(f"{local_server}/embeddings")
    assert response.status_code == 404 and "error" in response.json()


def _recording(engine: Any) -> list[tuple[Any, float, float]]:
    """Make ``engine`` record (last event, start, end) of every generation; return the record."""
    spans: list[tuple[Any, float, float]] = []
    original = engine.stream

    def stream(prepared: Any, cancel: Any = None) -> Iterator[Any]:
        start = time.perf_counter()
        for event in original(prepared, cancel):
            yield event
        spans.append((event, start, time.perf_counter()))

    engine.stream = stream
    return spans


@pytest.fixture
def recording_server(tiny_export_dir: Path) -> Iterator[tuple[str, list[tuple[Any, float, float]]]]:
    """A server whose engine records (last event, start, end) of every generation."""
    from serving.engine import Engine
    from serving.server import ServerThread

    engine = Engine.load(tiny_export_dir, device="cpu")
    spans = _recording(engine)
    server = ServerThread(engine)
    server.start()
    yield server.base_url, spans
    server.stop()


@pytest.fixture
def endless_server(stoppable: tuple[Any, list[Any]]) -> tuple[str, list[tuple[Any, float, float]]]:
    """As ``recording_server``, but the engine has no EOS id: every answer runs to its token limit."""
    server, spans = stoppable
    return server.base_url, spans


def test_concurrent_requests_are_queued_not_interleaved(
    recording_server: tuple[str, list[tuple[Any, float, float]]], tiny_model_name: str
) -> None:
    base_url, spans = recording_server
    results: dict[int, str] = {}

    def call(i: int) -> None:
        # one max_tokens for all: with Vox-aware decoding the token budget steers where a block
        # closes (the budget rule), so greedy answers under different budgets need not be prefixes
        payload = {"model": tiny_model_name, "messages": MESSAGES, "max_tokens": 20, "temperature": 0}
        if i % 2:
            with httpx.stream("POST", f"{base_url}/chat/completions", json={**payload, "stream": True}) as r:
                lines = [json.loads(line[6:]) for line in r.iter_lines() if line.startswith("data: {")]
            results[i] = "".join(c["choices"][0]["delta"].get("content") or "" for c in lines if c["choices"])
        else:
            r = httpx.post(f"{base_url}/chat/completions", json=payload, timeout=30)
            results[i] = r.json()["choices"][0]["message"]["content"]

    threads = [threading.Thread(target=call, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(results) == [0, 1, 2, 3]
    assert len(spans) == 4
    ordered = sorted(spans, key=lambda s: s[1])
    for (_, _, end), (_, start, _) in zip(ordered, ordered[1:]):
        assert start >= end, "two generations overlapped"
    # Same greedy prompt and budget, streamed or not: the same answer every time (none was corrupted).
    assert len(set(results.values())) == 1, results


def test_client_disconnect_mid_stream_cancels_generation(
    recording_server: tuple[str, list[tuple[Any, float, float]]], tiny_model_name: str
) -> None:
    base_url, spans = recording_server
    payload = {"model": tiny_model_name, "messages": MESSAGES, "max_tokens": 480, "stream": True}
    with httpx.stream("POST", f"{base_url}/chat/completions", json=payload) as r:
        next(r.iter_lines())  # read one event, then hang up
    deadline = time.monotonic() + 20
    while not spans and time.monotonic() < deadline:
        time.sleep(0.02)
    last = spans[0][0]
    assert last.finish_reason in ("cancelled", "stop"), last
    if last.finish_reason == "cancelled":
        assert last.completion_tokens < 480
    assert not _health(base_url)["busy"]


@pytest.mark.parametrize(("stream", "n"), [(False, 1), (True, 1), (False, 3), (True, 3)])
def test_client_giving_up_cancels_generation_in_both_modes(
    endless_server: tuple[str, list[tuple[Any, float, float]]], tiny_model_name: str, stream: bool, n: int
) -> None:
    # A non-streamed request whose client times out used to run to max_tokens while the next
    # request waited (issue 14 item 13); streamed ones were already cancelled.
    base_url, spans = endless_server
    payload = {"model": tiny_model_name, "messages": MESSAGES, "max_tokens": 480, "temperature": 0, "stream": stream,
               "n": n}
    if stream:
        with httpx.stream("POST", f"{base_url}/chat/completions", json=payload) as r:
            next(r.iter_lines())  # read one event, then hang up
    else:
        with pytest.raises(httpx.TimeoutException):  # the client gives up waiting for the JSON body
            httpx.post(f"{base_url}/chat/completions", json=payload, timeout=0.3)
    deadline = time.monotonic() + 20
    while not spans and time.monotonic() < deadline:
        time.sleep(0.02)
    last = spans[0][0]
    assert last.finish_reason == "cancelled" and last.completion_tokens < 480, last
    assert not _health(base_url)["busy"]
    ok = httpx.post(f"{base_url}/chat/completions", json={**payload, "stream": False, "max_tokens": 4}, timeout=30)
    assert ok.status_code == 200 and ok.json()["usage"]["completion_tokens"] == 4 * n


def test_server_keeps_serving_after_engine_failure(
    recording_server: tuple[str, list[Any]], tiny_model_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    base_url, _ = recording_server
    import serving.engine

    def boom(*args: Any, **kwargs: Any) -> Iterator[list[int]]:
        raise RuntimeError("simulated device failure")
        yield [0]  # pragma: no cover

    import serving.verified

    monkeypatch.setattr(serving.engine, "generate_rows", boom)
    monkeypatch.setattr(serving.verified, "generate_rows", boom)  # a whole answer decodes there (retries)
    payload = {"model": tiny_model_name, "messages": MESSAGES, "max_tokens": 4}
    r = httpx.post(f"{base_url}/chat/completions", json=payload)
    assert r.status_code == 500 and "simulated device failure" in r.json()["error"]["message"]
    with httpx.stream("POST", f"{base_url}/chat/completions", json={**payload, "stream": True}) as s:
        body = s.read().decode()
    assert "simulated device failure" in body and body.rstrip().endswith("data: [DONE]")
    monkeypatch.undo()
    assert httpx.post(f"{base_url}/chat/completions", json=payload).status_code == 200


def test_slow_request_preparation_does_not_stall_health(
    recording_server: tuple[str, list[Any]], tiny_model_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A multi-MB prompt took ~5 s to tokenize on the event loop, during which /health hung.
    import threading

    base_url, _ = recording_server
    import serving.engine

    original = serving.engine.Engine.prepare

    def slow_prepare(self: Any, *args: Any, **kwargs: Any) -> Any:
        time.sleep(2.0)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(serving.engine.Engine, "prepare", slow_prepare)
    payload = {"model": tiny_model_name, "messages": MESSAGES, "max_tokens": 2}
    worker = threading.Thread(target=lambda: httpx.post(f"{base_url}/chat/completions", json=payload, timeout=60))
    worker.start()
    time.sleep(0.3)
    start = time.perf_counter()
    assert _health(base_url)["status"] == "ok"
    assert time.perf_counter() - start < 1.5
    worker.join()


def test_model_card_carries_system_prompt_mode_without_a_model() -> None:
    # Routers read max_model_len and system_prompt_mode ("none": this server drops system messages).
    from types import SimpleNamespace

    from fastapi.testclient import TestClient

    from serving.server import create_app

    engine = SimpleNamespace(model_id="m", max_context=2048, info=SimpleNamespace(system_prompt_mode="none"))
    with TestClient(create_app(engine)) as http:  # type: ignore[arg-type]  # stand-in: only the fields these routes read
        card = http.get("/v1/models").json()["data"][0]
    assert card["id"] == "m" and card["max_model_len"] == 2048 and card["system_prompt_mode"] == "none"
    assert "vox_pass_at_1" not in card  # no vox_mens.json pass@1: nothing claimed
    scored = SimpleNamespace(model_id="m", max_context=2048,
                             info=SimpleNamespace(system_prompt_mode="ssot", meta={"pass_at_1": 0.36}))
    with TestClient(create_app(scored)) as http:  # type: ignore[arg-type]  # stand-in: only the fields these routes read
        assert http.get("/v1/models").json()["data"][0]["vox_pass_at_1"] == 0.36


@pytest.mark.parametrize(("body", "message"), [
    (b'{"model": "m", "messages": [{"role": "user", "content": "x"}], "stop": 5}',
     "stop: must be a string or a list of strings, got 5"),
    (b'{"model": "m", "messages": [{"role": "user", "content": "x"}], "temperature": NaN}',
     "temperature: must be a number in [0, 2], got NaN"),
    # a string was refused as unsupported_parameter "(it answers in plain text)" (Found by a new-user helper)
    (b'{"model": "m", "messages": [{"role": "user", "content": "x"}], "response_format": "text"}',
     'response_format: must be an object like {"type": "text"}, got "text"'),
    # accepted and ignored, but typed: "x" was accepted silently (new-user trial)
    (b'{"model": "m", "messages": [{"role": "user", "content": "x"}], "frequency_penalty": "x"}',
     'frequency_penalty: must be a number in [-2, 2], got "x"'),
    (b'{"model": "m", "messages": [{"role": "user", "content": "x"}], "presence_penalty": 3}',
     "presence_penalty: must be a number in [-2, 2], got 3"),
])
def test_parameter_errors_name_the_request_field(body: bytes, message: str) -> None:
    # "stop": 5 was reported as param "stop.str"; a NaN temperature as "less than or equal to 2".
    from types import SimpleNamespace

    from fastapi.testclient import TestClient

    from serving.server import create_app

    engine = SimpleNamespace(model_id="m", max_context=2048, info=SimpleNamespace(system_prompt_mode="ssot"))
    with TestClient(create_app(engine)) as http:  # type: ignore[arg-type]  # stand-in: only the fields these routes read
        response = http.post("/v1/chat/completions", content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["message"] == message and error["param"] == message.split(":")[0]
    assert (error["type"], error["code"]) == ("invalid_request_error", None)


@pytest.mark.parametrize(("body", "offset"), [
    (b'{"model": "m", "messages": [{"role": "user", "content": "caf\xe9"}]}', 60),  # Latin-1 é
    (b"\xff", 0),
    # UTF-16 and UTF-32, which json.loads reads and so were parsed (with a BOM or without)
    ('\ufeff{"model": "m"}'.encode("utf-16-le"), 0),
    ('{"model": "m"}'.encode("utf-16-le"), 1),
    ('{"model": "m"}'.encode("utf-16-be"), 0),
    ('{"model": "m"}'.encode("utf-32"), 0),
])
@pytest.mark.parametrize("content_type", ["application/json", None])
def test_a_body_that_is_not_utf8_gets_the_openai_error_naming_it(body: bytes, offset: int,
                                                                 content_type: str | None) -> None:
    # It was FastAPI's own "There was an error parsing the body", which says nothing of what is wrong.
    from types import SimpleNamespace

    from fastapi.testclient import TestClient

    from serving.server import create_app

    engine = SimpleNamespace(model_id="m", max_context=2048, info=SimpleNamespace(system_prompt_mode="ssot"))
    headers = {"Content-Type": content_type} if content_type else {}
    with TestClient(create_app(engine)) as http:  # type: ignore[arg-type]  # stand-in: only the fields these routes read
        response = http.post("/v1/chat/completions", content=body, headers=headers)
    assert response.status_code == 400
    bad = body[offset:offset + 1].hex()
    assert response.json() == {"error": {
        "message": f"could not parse the JSON body of your request: it is not valid UTF-8 JSON (byte 0x{bad} at "
                   f"offset {offset})",
        "type": "invalid_request_error", "param": None, "code": None}}


def test_a_utf8_body_with_a_bom_is_read() -> None:
    # RFC 8259 lets a parser ignore the UTF-8 BOM: the body reaches validation (here: messages missing)
    from types import SimpleNamespace

    from fastapi.testclient import TestClient

    from serving.server import create_app

    engine = SimpleNamespace(model_id="m", max_context=2048, info=SimpleNamespace(system_prompt_mode="ssot"))
    with TestClient(create_app(engine)) as http:  # type: ignore[arg-type]  # stand-in: only the fields these routes read
        response = http.post("/v1/chat/completions", content='\ufeff{"model": "m"}'.encode("utf-8"))
    assert response.status_code == 400
    assert response.json()["error"]["param"] == "messages"


def test_a_body_over_the_size_limit_is_a_413_before_it_is_parsed() -> None:
    # A new-user trial's 12 MB body took 12 s of tokenizing and 1.7 GB before its 400.
    from types import SimpleNamespace

    from fastapi.testclient import TestClient

    from serving.server import MAX_BODY_BYTES, create_app

    engine = SimpleNamespace(model_id="m", max_context=2048, info=SimpleNamespace(system_prompt_mode="ssot"))
    big = b'{"model": "m", "messages": [{"role": "user", "content": "' + b"a" * MAX_BODY_BYTES + b'"}]}'

    def chunks() -> Any:  # no Content-Length: sent chunked
        yield big[:1000]
        yield big[1000:]

    with TestClient(create_app(engine)) as http:  # type: ignore[arg-type]  # stand-in: only the fields these routes read
        declared = http.post("/v1/chat/completions", content=big)
        chunked = http.post("/v1/chat/completions", content=chunks())
    assert (declared.status_code, chunked.status_code) == (413, 413)
    limit = f"this server accepts at most {MAX_BODY_BYTES}"
    assert declared.json()["error"]["message"] == f"the request body is {len(big)} bytes; {limit}"
    # chunked: read only up to the limit, so its length is not known
    assert chunked.json()["error"]["message"] == f"the request body is more than {MAX_BODY_BYTES} bytes; {limit}"
    assert {declared.json()["error"]["code"], chunked.json()["error"]["code"]} == {"request_too_large"}
    assert declared.headers["connection"] == chunked.headers["connection"] == "close"  # the rest is never read


def test_an_endless_chunked_body_is_read_only_to_the_limit() -> None:
    # A new-user trial's 300 MiB chunked body was read to its end before the 413; an endless one
    # never got it. ASGI-level: the test client would read the whole body before the app runs.
    import asyncio
    from types import SimpleNamespace

    from serving.server import MAX_BODY_BYTES, create_app

    engine = SimpleNamespace(model_id="m", max_context=2048, info=SimpleNamespace(system_prompt_mode="ssot"))
    app = create_app(engine)  # type: ignore[arg-type]  # stand-in: only the fields these routes read
    chunk = b"a" * 65536
    received: list[int] = []
    sent: list[MutableMapping[str, Any]] = []

    async def receive() -> dict[str, Any]:
        received.append(len(chunk))
        # "endless": it ends at 4x the limit only so that a server reading it all fails, not hangs
        return {"type": "http.request", "body": chunk, "more_body": sum(received) < 4 * MAX_BODY_BYTES}

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
             "path": "/v1/chat/completions", "raw_path": b"/v1/chat/completions", "query_string": b"",
             "root_path": "", "headers": [(b"content-type", b"application/json"),
                                          (b"transfer-encoding", b"chunked")],
             "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 8000)}
    asyncio.run(app(scope, receive, send))
    assert sent[0]["status"] == 413
    assert sum(received) <= MAX_BODY_BYTES + len(chunk)  # stopped at the first chunk over the limit
    body = json.loads(b"".join(m.get("body", b"") for m in sent[1:]))
    assert body["error"]["message"] == (f"the request body is more than {MAX_BODY_BYTES} bytes; "
                                        f"this server accepts at most {MAX_BODY_BYTES}")
    assert body["error"]["code"] == "request_too_large"


@pytest.mark.parametrize(("body", "reason"), [
    # FastAPI said "There was an error parsing the body" (json.loads: RecursionError)
    (b"[" * 100_000 + b"]" * 100_000, "arrays and objects are nested too deeply"),
    (b'{"model": "m", "messages": ' + b"[" * 5000 + b"]" * 5000 + b"}", "arrays and objects are nested too deeply"),
    # ValueError: Python converts at most sys.get_int_max_str_digits() digits
    (b'{"model": "m", "messages": [{"role": "user", "content": "x"}], "seed": ' + b"9" * 5000 + b"}",
     "a number has more than 4300 digits"),
])
@pytest.mark.parametrize("content_type", ["application/json", None])
def test_json_the_parser_cannot_read_gets_a_400_naming_why(body: bytes, reason: str,
                                                          content_type: str | None) -> None:
    from types import SimpleNamespace

    from fastapi.testclient import TestClient

    from serving.server import create_app

    engine = SimpleNamespace(model_id="m", max_context=2048, device="cpu", use_cache=True, busy=False,
                             info=SimpleNamespace(system_prompt_mode="ssot"))
    headers = {"Content-Type": content_type} if content_type else {}
    with TestClient(create_app(engine)) as http:  # type: ignore[arg-type]  # stand-in: only the fields these routes read
        response = http.post("/v1/chat/completions", content=body, headers=headers)
        assert http.get("/health").status_code == 200  # nothing left broken
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["message"].startswith(f"could not parse the JSON body of your request: {reason}")
    assert (error["type"], error["param"], error["code"]) == ("invalid_request_error", None, None)


def test_json_nested_within_the_limit_is_still_validated() -> None:
    # Pre-parsing keeps what FastAPI made of a readable body: a deep but parseable one is a field error
    from types import SimpleNamespace

    from fastapi.testclient import TestClient

    from serving.server import create_app

    engine = SimpleNamespace(model_id="m", max_context=2048, info=SimpleNamespace(system_prompt_mode="ssot"))
    body = b'{"model": "m", "messages": [{"role": "user", "content": "x"}], "stop": ' + b"[" * 500 + b"]" * 500 + b"}"
    with TestClient(create_app(engine)) as http:  # type: ignore[arg-type]  # stand-in: only the fields these routes read
        response = http.post("/v1/chat/completions", content=body)
        syntax = http.post("/v1/chat/completions", content=b'{"model": ')
        as_text = http.post("/v1/chat/completions", content=b"[" * 5000, headers={"Content-Type": "text/plain"})
    assert (response.status_code, response.json()["error"]["param"]) == (400, "stop")
    assert syntax.json()["error"]["message"].startswith("could not parse the JSON body of your request: Expecting")
    assert as_text.json()["error"]["message"] == "the request body must be JSON (Content-Type: application/json)"


def test_health_counts_waiting_requests_not_the_running_one() -> None:
    # with 4 requests in flight (1 running) /health said "queued": 4 (a new-user trial)
    from types import SimpleNamespace

    from fastapi.testclient import TestClient

    from serving.server import create_app

    engine = SimpleNamespace(model_id="m", max_context=2048, device="cpu", use_cache=True, busy=True,
                             info=SimpleNamespace(system_prompt_mode="ssot"))
    app = create_app(engine)  # type: ignore[arg-type]  # stand-in: only the fields these routes read
    app.state.service.pending = 4
    with TestClient(app) as http:
        body = http.get("/health").json()
    assert (body["busy"], body["queued"]) == (True, 3)
    engine.busy, app.state.service.pending = False, 0
    with TestClient(app) as http:
        assert http.get("/health").json()["queued"] == 0


@pytest.fixture
def stoppable(tiny_export_dir: Path) -> Iterator[tuple[Any, list[tuple[Any, float, float]]]]:
    """A server (its ServerThread) whose engine has no EOS id: answers run to their token limit."""
    from serving.engine import Engine
    from serving.server import ServerThread

    engine = Engine.load(tiny_export_dir, device="cpu")
    engine.eos_ids = frozenset()
    spans = _recording(engine)
    server = ServerThread(engine)
    server.start()
    yield server, spans
    server.stop()


@pytest.mark.parametrize("twice", [False, True])
def test_ctrl_c_finishes_the_running_request_and_refuses_the_waiting_ones(
        stoppable: tuple[Any, list[Any]], tiny_model_name: str, caplog: pytest.LogCaptureFixture, twice: bool) -> None:
    """A new-user trial: one Ctrl-C ran all 5 queued n=16 requests first (35 s); a second one
    printed two tracebacks. Now the running request ends (cancelled by a second Ctrl-C), the
    waiting ones get a 503 (a streamed one an SSE error), and nothing is logged as an error."""
    import signal

    server, spans = stoppable
    url = f"{server.base_url}/chat/completions"
    payload = {"model": tiny_model_name, "messages": MESSAGES, "max_tokens": 300, "temperature": 0}
    answers: dict[str, Any] = {}

    def running() -> None:
        answers["running"] = httpx.post(url, json=payload, timeout=60)

    def waiting_json() -> None:
        answers["json"] = httpx.post(url, json=payload, timeout=60)

    def waiting_stream() -> None:
        with httpx.stream("POST", url, json={**payload, "stream": True}, timeout=60) as r:
            answers["stream"] = [line for line in r.iter_lines() if line.startswith("data: ")]

    first = threading.Thread(target=running)
    first.start()
    deadline = time.monotonic() + 20
    while not _health(server.base_url)["busy"] and time.monotonic() < deadline:
        time.sleep(0.01)
    others = [threading.Thread(target=fn) for fn in (waiting_json, waiting_stream)]
    for thread in others:
        thread.start()
    while _health(server.base_url)["queued"] < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    with caplog.at_level("INFO", logger="uvicorn.error"):
        server._server.handle_exit(signal.SIGINT, None)
        if twice:
            server._server.handle_exit(signal.SIGINT, None)
        for thread in (first, *others):
            thread.join(60)
    assert "Stopping: the request in progress is finished, 2 waiting refused" in caplog.text
    assert not [r for r in caplog.records if r.levelname == "ERROR"], caplog.text
    done = answers["running"].json()
    assert answers["running"].status_code == 200
    assert (done["usage"]["completion_tokens"] < 300) == twice, done["usage"]
    refused = answers["json"]
    assert refused.status_code == 503 and refused.json()["error"]["code"] == "shutting_down"
    assert refused.json()["error"]["message"].startswith("the server is shutting down: this request was not started")
    assert any('"code": "shutting_down"' in line for line in answers["stream"]), answers["stream"]
    assert len(spans) == 1  # only the running request generated
