"""The words of a model call that got no usable answer: a timeout, a connection that failed, an
HTTP 200 whose body is no chat completion. Each says once what happened, at which endpoint, and
what to do; :func:`serving.failures.classify` picks one.

The facts come from the exception itself where the caller does not know them: the endpoint from
LiteLLM's ``API Base`` debug line or the HTTP request in the cause chain, the time limit from that
request's timeout. LiteLLM is never imported here.
"""

from __future__ import annotations

import ast
import re
import socket
from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

#: what to do about a timeout (the limit is ``vox chat --timeout``, the seconds of each model attempt)
TIMEOUT_HINT: Final = "a slow or still-loading model needs a longer wait: vox chat --timeout SECONDS"
#: what to check when a local endpoint answers something else than an OpenAI-compatible API
LOCAL_API_HINT: Final = "is it an OpenAI-compatible /v1 endpoint? (check VOX_LOCAL_ENDPOINTS)"
#: the same for a hosted provider: something between here and the provider answered
HOSTED_API_HINT: Final = "a proxy between here and the provider?"
#: what to do when nothing listens at a local endpoint
LOCAL_DOWN_HINT: Final = "start the server (vox serve) or correct VOX_LOCAL_ENDPOINTS"

#: LiteLLM's debug line naming the base URL it called
_API_BASE: Final = re.compile(r"API Base: `(https?://[^`\s]+)`")
#: LiteLLM's wording when the OpenAI client's parse of a 200 gave no chat completion: the client
#: returns the body as text when it is not JSON (an HTML page, plain text, nothing)
_INVALID: Final = re.compile(r"Empty or invalid response from LLM endpoint\. Received: (.*)\. Check the reverse "
                             r"proxy or model server configuration", re.DOTALL)
#: LiteLLM's wording when a 200 body declared as JSON does not decode (6afe3b5's new-user trial)
_UNDECODED: Final = re.compile(r"((?:Expecting value|Extra data|Unterminated string|Invalid control character|"
                               r"JSONDecodeError)(?:[^\n,.(]*?:? line \d+ column \d+ \(char \d+\))?)"
                               r"[^\n]*?Received response",
                               re.IGNORECASE | re.DOTALL)
_TITLE: Final = re.compile(r"<(title|h1)[^>]*>(.*?)</\1>", re.IGNORECASE | re.DOTALL)


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and the exceptions it was raised from (at most 16, no cycles)."""
    out: list[BaseException] = []
    cur: BaseException | None = exc
    while cur is not None and cur not in out and len(out) < 16:
        out.append(cur)
        cur = cur.__cause__ or cur.__context__
    return out


def _http_request(exc: BaseException) -> Any:
    """The HTTP request the OpenAI client or httpx sent, from the cause chain (``None``: none).
    LiteLLM's own exceptions carry a stand-in request to api.openai.com, so only theirs count."""
    for e in _chain(exc):
        if type(e).__module__.split(".")[0] in ("openai", "httpx"):
            request = vars(e).get("request") or vars(e).get("_request")
            if request is not None and hasattr(request, "url"):
                return request
    return None


def called_endpoint(exc: BaseException) -> str | None:
    """The base URL the failed call went to (``http://127.0.0.1:8000/v1``), without a user, a
    password or a query (which may hold a key), or ``None`` when the exception does not say."""
    found = _API_BASE.search(str(getattr(exc, "litellm_debug_info", None) or ""))
    url = found.group(1) if found else str(getattr(_http_request(exc), "url", "") or "")
    if not url:
        return None
    parts = urlsplit(url)
    path = parts.path.rstrip("/").removesuffix("/chat/completions").removesuffix("/completions")
    return urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], path, "", ""))


def _request_timeout(exc: BaseException) -> float | None:
    """The read timeout (seconds) of the HTTP request in the cause chain, if it says."""
    request = _http_request(exc)
    limits = getattr(request, "extensions", {}).get("timeout") if request is not None else None
    value = limits.get("read") if isinstance(limits, Mapping) else None
    return float(value) if isinstance(value, (int, float)) and value > 0 else None


def _where(endpoint: str | None) -> str:
    return endpoint or "the server"


def timed_out(exc: BaseException, endpoint: str | None, timeout_s: float | None) -> str:
    """``http://127.0.0.1:8000/v1 sent nothing for 120 s; ...`` (a client-side timeout: the limit
    is on the wait for each piece, so this holds before the first piece and in the middle alike).

    Args:
        exc: the timeout exception (its chain tells a connect timeout and the limit).
        endpoint: the base URL called, if known (else the exception's own).
        timeout_s: the limit of the attempt, if known (else the request's own).
    """
    where = _where(endpoint or called_endpoint(exc))
    limit = timeout_s or _request_timeout(exc)
    if any(type(e).__name__ == "ConnectTimeout" for e in _chain(exc)):
        within = f"within {limit:g} s" if limit else "in time"
        return f"could not connect to {where} {within} (is the host up?); {TIMEOUT_HINT}"
    waited = f"for {limit:g} s" if limit else "within the time limit"
    return f"{where} sent nothing {waited}; {TIMEOUT_HINT}"


def connection_failed(exc: BaseException, message: str, endpoint: str | None, local: bool) -> str | None:
    """What a failed connection was (refused, reset, closed mid-answer, unknown host), at which
    endpoint, and what to do; ``None`` when neither the cause chain nor the words say it was one.

    Args:
        exc: the exception (LiteLLM's, the OpenAI client's, or httpx's).
        message: its own words, LiteLLM's prefixes taken off (``Connection error.``).
        endpoint: the base URL called, if known (else the exception's own).
        local: whether the endpoint is a local one of ``VOX_LOCAL_ENDPOINTS`` (the hints differ).
    """
    where = _where(endpoint or called_endpoint(exc))
    down = LOCAL_DOWN_HINT if local else "check the network and any proxy settings"
    crashed = "(did the server crash? see its log)"
    chain = _chain(exc)
    names = {type(e).__name__ for e in chain}
    words = " ".join(str(e) for e in chain)
    if "ConnectionRefusedError" in names or re.search(r"connection refused", words, re.IGNORECASE):
        return f"connection refused at {where}: nothing listens there; {down}"
    if "ConnectionResetError" in names or re.search(r"connection reset", words, re.IGNORECASE):
        return f"{where} reset the connection before answering {crashed}"
    if re.search(r"without sending complete message body|incomplete chunked read", words, re.IGNORECASE):
        return f"{where} closed the connection in the middle of the answer {crashed}"
    if re.search(r"disconnected without sending a response", words, re.IGNORECASE):
        return f"{where} closed the connection without answering {crashed}"
    if any(isinstance(e, socket.gaierror) for e in chain) or re.search(
            r"name or service not known|nodename nor servname|getaddrinfo failed", words, re.IGNORECASE):
        return f"cannot resolve the host of {where}; check the URL"
    if re.fullmatch(r"Connection error\.?", message, re.IGNORECASE):
        return f"no answer from {where} (the connection failed); {down}"
    return None


def not_json_body(text: str) -> str | None:
    """The body in a few words (:func:`describe_body`) when LiteLLM's ``text`` says a 200 body was
    no chat completion, else ``None``."""
    found = _INVALID.search(text)
    if found:
        try:
            body = ast.literal_eval(found.group(1).strip())
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return "a body that is not a chat completion"
        return describe_body(None, body if isinstance(body, str) else None, parsed=not isinstance(body, str))
    found = _UNDECODED.search(text)
    return f"an empty or malformed body ({found.group(1).strip()})" if found else None


def describe_body(content_type: str | None, body: str | None, *, empty: bool = False, parsed: bool = False) -> str:
    """A few words for a body that is no chat completion: ``an HTML page ('Welcome to nginx!')``,
    ``an empty body``, ``text/plain``, ``plain text ('hello')``.

    Args:
        content_type: its ``Content-Type`` (``None``: unknown).
        body: its text (``None``: unknown).
        empty: the body is known to be empty (``Content-Length: 0``).
        parsed: it was JSON, but not a chat completion.
    """
    media = (content_type or "").split(";")[0].strip().lower()
    if empty or body == "":
        return "an empty body" + (f" ({media})" if media else "")
    if parsed:
        return "JSON that is not a chat completion"
    if body is not None and body.lstrip().startswith("<"):
        title = _TITLE.search(body)
        named = " ".join(title.group(2).split())[:60] if title else ""
        return "an HTML page" + (f" ({named!r})" if named else "")
    if media == "text/html":
        return "an HTML page (text/html)"
    if body is not None:
        return f"plain text ({' '.join(body.split())[:40]!r})"
    return media or "a body of unknown type"


def bad_body(endpoint: str | None, what: str, *, stream: bool, local: bool) -> str:
    """``http://127.0.0.1:8000/v1 answered HTTP 200 with an HTML page, not JSON: is it ...?``

    Args:
        endpoint: the base URL called (``None``: unknown).
        what: the body in a few words (:func:`describe_body`, :func:`not_json_body`).
        stream: a streaming request (an event stream was due, not JSON).
        local: a local endpoint (else a hosted provider: the hint differs).
    """
    due = "a chat completion stream (text/event-stream)" if stream else "JSON"
    return f"{_where(endpoint)} answered HTTP 200 with {what}, not {due}: " + (
        LOCAL_API_HINT if local else HOSTED_API_HINT)
