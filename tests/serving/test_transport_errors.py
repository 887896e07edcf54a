"""A model call that got no usable answer says once what happened, at which endpoint, and what to
do: a timeout, a connection refused or reset or closed mid-answer, an HTTP 200 whose body is no
chat completion (an HTML page, plain text, nothing), streaming or not (a new-user trial saw
``Timeout: Request timed out. Error_str: Request timed out.`` with no URL, and ``InternalServerError
(HTTP 500): Empty or invalid response`` for a web page served with 200)."""

from __future__ import annotations

import socket
from typing import Any

import pytest
from typer.testing import CliRunner

from serving.errors import AllProvidersFailed
from serving.failure_text import LOCAL_API_HINT, LOCAL_DOWN_HINT, TIMEOUT_HINT
from serving.router import AttemptFailed, Candidate, Completed, Decision, complete, import_litellm

MESSAGES = [{"role": "user", "content": "hello"}]
NGINX = "<!DOCTYPE html><html><head><title>Welcome to nginx!</title></head><body>hi</body></html>"


@pytest.fixture(scope="module", autouse=True)
def _litellm_imported() -> None:
    import_litellm()


def local(name: str, base_url: str, *deployments: str) -> Candidate:
    return Candidate(f"local/{name}", f"openai/{name}", "local", 0.5, "fixture", api_base=base_url,
                     input_usd_per_mtok=0.0, output_usd_per_mtok=0.0, deployments=deployments)


def run(*cands: Candidate, **kw: Any) -> list[Any]:
    return list(complete(Decision("auto", "chat", False, "test", cands), MESSAGES, keys={}, **kw))


def failed_reasons(*cands: Candidate, **kw: Any) -> list[AttemptFailed]:
    with pytest.raises(AllProvidersFailed) as info:
        run(*cands, **kw)
    return [AttemptFailed(m, r) for m, r in info.value.attempts]


def closed_port() -> int:
    with socket.socket() as s:  # bound, never listening: a connect is refused
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def assert_names_once(reason: str, url: str) -> None:
    assert reason.count(url) == 1, reason
    assert "Request timed out" not in reason and "Error_str" not in reason and "HTTP 500" not in reason, reason


# --------------------------------------------------------------------------- no answer at all

@pytest.mark.parametrize("stream", [True, False])
def test_a_timeout_names_the_endpoint_once_the_limit_and_the_flag_that_raises_it(replay: Any, stream: bool) -> None:
    with replay.ReplayServer([replay.Scripted("late", delay_s=3.0)], model="m") as server:
        [failed] = failed_reasons(local("m", server.base_url), stream=stream, timeout=0.5)
    assert failed.reason == f"Timeout: {server.base_url} sent nothing for 0.5 s; {TIMEOUT_HINT}"
    assert "vox chat --timeout SECONDS" in failed.reason
    assert_names_once(failed.reason, server.base_url)


def test_a_refused_connection_names_the_endpoint_and_how_to_start_a_server() -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    [failed] = failed_reasons(local("m", url), timeout=2.0)
    assert failed.reason == f"APIConnectionError: connection refused at {url}: nothing listens there; {LOCAL_DOWN_HINT}"
    assert_names_once(failed.reason, url)


@pytest.mark.parametrize("stream", [True, False])
def test_a_reset_connection_names_the_endpoint_once(replay: Any, stream: bool) -> None:
    with replay.ReplayServer([replay.Scripted("", reset=True)], model="m") as server:
        [failed] = failed_reasons(local("m", server.base_url), stream=stream, timeout=5.0)
    assert failed.reason.startswith(f"APIConnectionError: {server.base_url} reset the connection before answering")
    assert_names_once(failed.reason, server.base_url)


def test_a_connection_closed_mid_answer_says_so_and_names_the_endpoint(replay: Any) -> None:
    with replay.ReplayServer([replay.Scripted("cut off half way through", drop_after=1)], model="m") as server:
        [failed] = failed_reasons(local("m", server.base_url), timeout=5.0)
    assert f"{server.base_url} closed the connection in the middle of the answer" in failed.reason
    assert_names_once(failed.reason, server.base_url)


def test_an_http_error_of_a_local_endpoint_names_it_once(replay: Any) -> None:
    with replay.ReplayServer([replay.Scripted("overloaded", status=503)], model="m") as server:
        [failed] = failed_reasons(local("m", server.base_url), timeout=5.0)
    assert failed.reason.endswith(f"overloaded (endpoint {server.base_url})")
    assert_names_once(failed.reason, server.base_url)


# --------------------------------------------------------------------------- HTTP 200, no chat completion

BODIES = [  # (content type, body, words of the non-streaming reason, words of the streaming one)
    ("text/html", NGINX, "an HTML page ('Welcome to nginx!')", "an HTML page (text/html)"),
    ("text/html; charset=utf-8", "<html><body><h1>It works!</h1></body></html>", "an HTML page ('It works!')",
     "an HTML page (text/html)"),
    ("text/plain", "hello there", "plain text ('hello there')", "text/plain"),
    ("text/html", "", "an empty body", "an empty body (text/html)"),
    ("application/json", "", "an empty or malformed body (Expecting value: line 1 column 1 (char 0))",
     "an empty body (application/json)"),
]


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize(("ctype", "body", "plain", "streamed"), BODIES, ids=["html", "h1", "text", "empty", "json0"])
def test_a_200_that_is_no_chat_completion_is_a_bad_response_naming_the_endpoint_and_what_came(
        replay: Any, stream: bool, ctype: str, body: str, plain: str, streamed: str) -> None:
    with replay.ReplayServer([replay.Scripted(body, content_type=ctype)], model="m") as server:
        with pytest.raises(AllProvidersFailed) as info:
            list(complete(Decision("auto", "chat", False, "test", (local("m", server.base_url),)), MESSAGES,
                          keys={}, stream=stream, timeout=5.0))
    [(_, reason)] = info.value.attempts
    due = "a chat completion stream (text/event-stream)" if stream else "JSON"
    what = streamed if stream else plain
    assert reason == f"BadResponse: {server.base_url} answered HTTP 200 with {what}, not {due}: {LOCAL_API_HINT}"
    assert_names_once(reason, server.base_url)
    assert "InternalServerError" not in reason and "EmptyAnswer" not in reason


@pytest.mark.parametrize("stream", [False, True])
def test_a_bad_response_moves_on_as_a_server_fault(replay: Any, stream: bool) -> None:
    # the design for BadResponse (6afe3b5): kind "server", no HTTP status, the next model answers
    with replay.ReplayServer([replay.Scripted(NGINX, content_type="text/html")], model="web") as web, \
            replay.ReplayServer(["a real answer"], model="m") as good:
        events = run(local("web", web.base_url), local("m", good.base_url), stream=stream, timeout=5.0)
    [failed] = [e for e in events if isinstance(e, AttemptFailed)]
    assert failed.failure is not None
    assert (failed.failure.kind, failed.failure.status, failed.failure.error_type) == ("server", None, "BadResponse")
    assert failed.failure.endpoint == web.base_url and failed.next_model == "local/m"
    assert isinstance(events[-1], Completed) and events[-1].text == "a real answer"


@pytest.mark.parametrize("stream", [False, True])
def test_a_deployment_answering_a_web_page_is_retried_on_another_and_cooled_down(replay: Any, stream: bool) -> None:
    with replay.ReplayServer([replay.Scripted(NGINX, content_type="text/html")], model="m") as web, \
            replay.ReplayServer(["from b"], model="m") as b:
        cand = local("m", web.base_url, web.base_url, b.base_url)
        runs = [run(cand, stream=stream, timeout=5.0) for _ in range(10)]
        assert len(web.requests) == 1 and len(b.requests) == 10  # picked once (2**-10 odds of never), then cooled
    failed = [e for r in runs for e in r if isinstance(e, AttemptFailed)]
    assert len(failed) == 1 and failed[0].next_model == "local/m" and failed[0].deployment == web.base_url
    assert failed[0].reason.startswith(f"BadResponse: {web.base_url} answered HTTP 200 with an HTML page")
    assert all(isinstance(r[-1], Completed) and r[-1].deployment == b.base_url for r in runs)


def test_an_empty_event_stream_is_still_an_empty_answer(replay: Any) -> None:
    # a real event stream without text is the model's fault, not the endpoint's
    with replay.ReplayServer([""], model="m") as server:
        [failed] = failed_reasons(local("m", server.base_url), stream=True, timeout=5.0)
    assert failed.reason.startswith("EmptyAnswer: the model streamed no text")
    assert failed.reason.endswith(f"(endpoint {server.base_url})")


# --------------------------------------------------------------------------- the same words elsewhere

def test_best_of_n_names_the_endpoint_as_the_cascade_does(replay: Any) -> None:
    from serving.best_of_n import best_of_n_events, litellm_sampler

    with replay.ReplayServer([replay.Scripted(NGINX, content_type="text/html")], model="m") as web:
        cand = local("m", web.base_url)
        [event] = best_of_n_events(cand, MESSAGES, 4, "hello", sample=litellm_sampler({}, timeout=5.0),
                                   fallback=lambda: [])
    assert isinstance(event, AttemptFailed) and event.failure is not None
    assert event.reason == (f"best-of-4: BadResponse: {web.base_url} answered HTTP 200 with an HTML page "
                            f"('Welcome to nginx!'), not JSON: {LOCAL_API_HINT}")


def test_best_of_n_names_the_deployment_that_timed_out(replay: Any) -> None:
    from serving.best_of_n import best_of_n_events, litellm_sampler

    with replay.ReplayServer([replay.Scripted("late", delay_s=3.0)], model="m") as slow:
        cand = local("m", slow.base_url, slow.base_url, slow.base_url + "/")  # which one: the exception says
        [event] = best_of_n_events(cand, MESSAGES, 2, "hello", sample=litellm_sampler({}, timeout=0.5),
                                   fallback=lambda: [])
    assert isinstance(event, AttemptFailed)
    assert event.reason == f"best-of-2: Timeout: {slow.base_url} sent nothing for 0.5 s; {TIMEOUT_HINT}"


def test_a_hosted_timeout_without_a_url_still_says_what_to_do() -> None:
    import litellm

    from serving.failures import classify

    failure = classify(litellm.Timeout(message="Request timed out. Error_str: Request timed out.",
                                       model="gpt-4o-mini", llm_provider="openai"), timeout_s=120)
    assert failure.line() == f"Timeout: the server sent nothing for 120 s; {TIMEOUT_HINT}"
    assert (failure.kind, failure.status, failure.endpoint) == ("timeout", None, None)


def test_vox_chat_prints_one_clear_timeout_line(replay: Any, keyless: pytest.MonkeyPatch) -> None:
    """The trial's command: a local endpoint that lists its model and never answers the chat."""
    from serving.cli import app

    with replay.ReplayServer([replay.Scripted("late", delay_s=5.0)], model="m") as server:
        keyless.setenv("VOX_LOCAL_ENDPOINTS", server.base_url)
        keyless.setenv("VOX_PROBE_TIMEOUT", "2")
        result = CliRunner().invoke(app, ["chat", "-q", "-m", "m", "--no-vox", "--timeout", "0.5", "hi"])
    assert result.exit_code == 1, result.output
    line = f"local/m: Timeout: {server.base_url} sent nothing for 0.5 s; {TIMEOUT_HINT}"
    assert f"[failed: {line}]" in result.stdout
    assert result.stderr == f"error: all models failed: {line}\n"


def test_a_web_page_is_a_bad_response_whatever_its_words() -> None:
    # a captive portal's "usage limit" or "payment required" page is no provider's out-of-credit answer
    import litellm

    from serving.failures import classify

    page = "<html><title>Payment required: usage limit reached</title></html>"
    exc = litellm.InternalServerError(message=f"Empty or invalid response from LLM endpoint. Received: {page!r}. "
                                      "Check the reverse proxy or model server configuration.",
                                      llm_provider="openai", model="m")
    failure = classify(exc, endpoint="http://127.0.0.1:8080/v1")
    assert (failure.kind, failure.status, failure.error_type) == ("server", None, "BadResponse")
    assert "an HTML page ('Payment required: usage limit reached')" in failure.message


def test_the_endpoint_read_from_an_exception_drops_credentials_and_query() -> None:
    from serving.failure_text import called_endpoint

    class Debugged(Exception):  # as LiteLLM's exceptions carry it
        litellm_debug_info = "\nModel: m\nAPI Base: `http://user:pw@127.0.0.1:8000/v1/?key=sk-x`\n"

    assert called_endpoint(Debugged("boom")) == "http://127.0.0.1:8000/v1"
    assert called_endpoint(RuntimeError("no endpoint here")) is None


def test_an_unknown_host_says_so() -> None:
    from serving.failures import classify

    try:
        try:
            raise socket.gaierror(-2, "Name or service not known")
        except socket.gaierror as cause:
            raise ConnectionError("Connection error.") from cause
    except ConnectionError as exc:
        failure = classify(exc, endpoint="http://gpu-box:8000/v1")
    assert failure.line() == "APIConnectionError: cannot resolve the host of http://gpu-box:8000/v1; check the URL"
