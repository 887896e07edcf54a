"""`vox serve`'s 400 for a body with several faults names them all, a wrong value before a missing
field (new-user trial: a body without ``model`` whose ``messages`` were malformed was told only
that ``model`` was missing). No model is loaded: the app runs over a stand-in engine."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from fastapi.testclient import TestClient

from serving.openai_wire import MAX_NAMED_ERRORS
from serving.server import create_app

OK_MESSAGES = [{"role": "user", "content": "x"}]


@pytest.fixture(scope="module")
def http() -> Iterator[TestClient]:
    engine = SimpleNamespace(model_id="m", max_context=2048, info=SimpleNamespace(system_prompt_mode="none"))
    with TestClient(create_app(engine)) as client:  # type: ignore[arg-type]  # stand-in: validation reads no engine field
        yield client


def _error(http: TestClient, body: dict[str, Any]) -> dict[str, Any]:
    response = http.post("/v1/chat/completions", json=body)
    assert response.status_code == 400, response.text
    error: dict[str, Any] = response.json()["error"]
    assert error["type"] == "invalid_request_error"
    return error


@pytest.mark.parametrize(("messages", "first", "param"), [
    ([{"content": "hi"}], "messages[0].role is missing (one of system, user, assistant, tool)", "messages[0].role"),
    ([{"role": "user", "content": "x"}, {"role": "robot", "content": "{y}"}],
     "messages[1].role must be one of system, user, assistant, tool, got 'robot'", "messages[1].role"),
    ([{"role": "user", "content": [{"type": "image_url"}]}], "messages[0].content: only text parts are supported",
     "messages[0].content"),
    ("hello", "messages: Input should be a valid list", "messages"),
])
def test_a_malformed_body_without_model_is_told_about_its_messages_first(
        http: TestClient, messages: Any, first: str, param: str) -> None:
    error = _error(http, {"messages": messages})
    assert (error["message"], error["param"]) == (f"{first}; also model is missing (a required field)", param)


def test_every_fault_is_named_in_field_order_missing_fields_last(http: TestClient) -> None:
    error = _error(http, {"messages": OK_MESSAGES, "temperature": 5, "n": "x", "tools": [{"type": "function"}]})
    assert error["message"] == ('temperature: must be a number in [0, 2], got 5; also n: must be an integer >= 1, '
                                'got "x"; tools is not supported by this server (it never calls tools); '
                                "model is missing (a required field)")
    assert (error["param"], error["code"]) == ("temperature", None)
    unsupported = _error(http, {"model": "m", "messages": OK_MESSAGES, "tools": [{"type": "function"}], "n": 0})
    assert (unsupported["param"], unsupported["code"]) == ("n", None)  # the code goes with the first fault only


def test_beyond_the_named_faults_the_rest_are_counted(http: TestClient) -> None:
    bad = {"temperature": 5, "top_p": 0, "n": 0, "seed": "s", "max_tokens": 0, "stream": "yes", "vox_retries": -1}
    error = _error(http, {"model": "m", "messages": OK_MESSAGES, **bad})
    assert error["message"].count(";") == MAX_NAMED_ERRORS - 1
    assert error["message"].endswith(f" (and {len(bad) - MAX_NAMED_ERRORS} more)")


def test_one_fault_reads_as_before(http: TestClient) -> None:
    error = _error(http, {"model": "m", "messages": [{"role": "user"}]})
    assert (error["message"], error["param"]) == ("messages[0].content is missing", "messages[0].content")
    error = _error(http, {"messages": OK_MESSAGES})
    assert (error["message"], error["param"]) == ("model is missing (a required field)", "model")


def test_stream_options_without_a_stream_is_refused(http: TestClient) -> None:
    # OpenAI refuses it too; a new-user trial saw it silently ignored
    for body in ({"stream_options": {"include_usage": True}}, {"stream": False, "stream_options": {}}):
        error = _error(http, {"model": "m", "messages": OK_MESSAGES, **body})
        assert error["message"] == "stream_options: stream_options is only allowed when stream is true"
        assert error["param"] == "stream_options"
