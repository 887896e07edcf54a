"""What a failed model call means for the cascade: :func:`classify` turns a provider error into a
:class:`Failure` of one kind, and the kind says whether the next model may try.

====================  =====================================================  ==========================
kind                  recognised by                                          the cascade
====================  =====================================================  ==========================
``credit``            HTTP 402; "insufficient credits", "usage limit",       next model; the provider's
                      "credit balance is too low", OpenAI's 429               paid models are skipped for
                      ``insufficient_quota``                                  the session (and cached)
``rate_limit``        HTTP 429                                               next model
``timeout``           client timeouts, HTTP 408 and 504                      next model
``server``            HTTP 5xx, connection errors, a stream that dies,       next model
                      an answer with no choices or no text (:class:`EmptyAnswer`),
                      a 200 whose body is no chat completion (:class:`BadResponse`)
``auth``              HTTP 401/403 (this provider's key)                     next model
``not_found``         HTTP 404 (the model id is gone)                        next model
``context``           LiteLLM's ``ContextWindowExceededError`` and the       next model with a larger
                      wordings of other servers (vLLM, llama.cpp, TGI,        context window
                      OpenRouter, Mistral, ``vox serve``...)
``too_large``         HTTP 413: the request *body* is over this server's     next model (a limit in
                      size limit (``vox serve``: 4 MiB; Anthropic: 32 MB)     bytes, not in tokens: no
                                                                              window is ruled out)
``request``           any other 4xx (an invalid parameter, a refused         stops: the same request
                      prompt): the request itself is at fault                 would fail everywhere
====================  =====================================================  ==========================

``auth`` and ``not_found`` move on because they are faults of one provider or model, not of the
request: another provider may serve it. A failure with no HTTP answer (a timeout, a failed
connection) or with a 200 that is no chat completion is worded by :mod:`serving.failure_text`: once
what happened, at which endpoint, and what to do. LiteLLM is never imported here (classes are
matched by name), so importing this module is free.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from serving.failure_text import bad_body, connection_failed, describe_body, not_json_body, timed_out
from serving.keys import redact


class EmptyAnswer(Exception):
    """A model call that succeeded (HTTP 200) with nothing to show: no choices, or only blank text.
    Classified as ``server`` (the next model tries); never shown to the user as an empty answer.
    A new-user trial's fake server answering ``{"choices": []}`` hung best-of-n sampling in a loop
    of requests (7,690 in 30 s) and gave the cascade an empty answer with exit status 0."""


class BadResponse(Exception):
    """A model call answered HTTP 200 with a body that is no chat completion: an HTML page (a
    proxy, a web server on the wrong port), plain text, nothing. Classified as ``server`` (the next
    deployment or model tries), worded by :func:`serving.failure_text.bad_body`.

    Attributes:
        what: the body in a few words (``an HTML page``, ``an empty body``, ``text/plain``).
        stream: the request was a streaming one (an event stream was due).
    """

    def __init__(self, what: str, *, stream: bool) -> None:
        super().__init__(f"the server answered HTTP 200 with {what}")
        self.what = what
        self.stream = stream


def stream_body_fault(hidden: object) -> BadResponse | None:
    """For a stream that gave no text at all: a :class:`BadResponse` when the response headers
    LiteLLM kept (``_hidden_params["additional_headers"]``) show the body was no event stream (an
    HTML page, JSON, nothing), else ``None`` (an event stream that was empty: :class:`EmptyAnswer`).
    """
    headers = hidden.get("additional_headers") if isinstance(hidden, Mapping) else None
    if not isinstance(headers, Mapping):
        return None
    ctype = headers.get("llm_provider-content-type")
    empty = str(headers.get("llm_provider-content-length", "")).strip() == "0"
    media = ctype.split(";")[0].strip().lower() if isinstance(ctype, str) else None
    if (media is None or media == "text/event-stream") and not empty:
        return None
    return BadResponse(describe_body(ctype if isinstance(ctype, str) else None, None, empty=empty), stream=True)


#: kinds after which the next model of the cascade may try
MOVES_ON: Final = frozenset({"credit", "rate_limit", "timeout", "server", "auth", "not_found", "context",
                            "too_large"})

#: out-of-credit wordings (402 bodies, and providers that answer 429/403/400 for an empty balance)
_CREDIT: Final = re.compile(
    r"insufficient[ _]credits?|insufficient[ _]quota|exceeded your current quota|credit balance is too low|"
    r"requires more credits|out of credits?|usage limits?|payment required|billing (?:hard )?limit|"
    r"no credits? (?:left|remaining)", re.IGNORECASE)

#: context-overflow wordings LiteLLM's own checker does not know (it reads OpenAI's, Anthropic's,
#: Gemini's, llama.cpp's, TGI's and a few more), e.g. OpenRouter's "This endpoint's maximum context
#: length", Mistral's "too large for model with N maximum context length", Ollama's and our own
#: ``vox serve``'s ``context_length_exceeded`` code (quoted either way in the error text).
_CONTEXT: Final = re.compile(
    r"context[_ ]length[_ ]exceeded|maximum context length|context (?:window|length|size) (?:is |of )?"
    r"(?:exceeded|too small)|exceeds? (?:the )?(?:model'?s? |available )?context|"
    r"(?:prompt|input) (?:is )?too long|too many (?:input )?tokens|reduce the length of the (?:messages|prompt)|"
    r"this model's context is", re.IGNORECASE)

#: the OpenAI client's whole message when nothing answered (connection refused, reset, DNS), which
#: LiteLLM re-raises as ``InternalServerError`` with a stand-in status 500 (a new-user trial saw
#: ``InternalServerError (HTTP 500): Connection error.`` for a stopped ``vox serve``)
_NO_ANSWER: Final = re.compile(r"Connection error\.?", re.IGNORECASE)

_BY_CLASS: Final = {  # LiteLLM / OpenAI client exception class names -> kind (checked after credit/context)
    "PaymentRequiredError": "credit",
    "RateLimitError": "rate_limit",
    "Timeout": "timeout", "APITimeoutError": "timeout",
    "APIConnectionError": "server", "InternalServerError": "server", "ServiceUnavailableError": "server",
    "BadGatewayError": "server", "MidStreamFallbackError": "server", "EmptyAnswer": "server",
    "BadResponse": "server",
    "AuthenticationError": "auth", "PermissionDeniedError": "auth",
    "NotFoundError": "not_found",
    "ContextWindowExceededError": "context",
    "BadRequestError": "request", "UnprocessableEntityError": "request",
    "ContentPolicyViolationError": "request", "UnsupportedParamsError": "request",
}
#: what LiteLLM puts before the provider's words: ``litellm.RateLimitError: RateLimitError: OpenAIException - ``
_PREFIX: Final = re.compile(r"(?:litellm\.)?\w*(?:Error|Exception|Timeout)(?::| -) +")


@dataclass(frozen=True, slots=True)
class Failure:
    """One failed model call, classified.

    Attributes:
        kind: one of the kinds in the module docstring.
        status: the provider's HTTP status (``None`` when no HTTP answer came back).
        error_type: the exception's class name (``PaymentRequiredError``).
        message: the provider's message, first line, secrets redacted, at most 200 characters;
            for a failure without an HTTP answer, what happened at which endpoint and what to do.
        endpoint: the base URL of the local endpoint called (``None``: a hosted provider, or unknown).
    """

    kind: str
    status: int | None
    error_type: str
    message: str
    endpoint: str | None = None

    @property
    def moves_on(self) -> bool:
        """True when the next model of the cascade may try (see :data:`MOVES_ON`)."""
        return self.kind in MOVES_ON

    def line(self) -> str:
        """``PaymentRequiredError (HTTP 402): insufficient credits`` (redacted, one line), then
        ``(endpoint URL)`` unless the message names the endpoint already: it is named once. At
        most 300 characters: a provider's message is cut at 200, ours (endpoint, hint) fit."""
        status = f" (HTTP {self.status})" if self.status else ""
        at = f" (endpoint {self.endpoint})" if self.endpoint and self.endpoint not in self.message else ""
        return redact(f"{self.error_type}{status}: {self.message}")[:300 - len(at)] + redact(at)


def _classes(exc: BaseException) -> list[str]:
    return [k.__name__ for k in type(exc).__mro__]


def _status(exc: BaseException, classes: list[str], message: str) -> int | None:
    status = getattr(exc, "status_code", None)
    if not isinstance(status, int) or isinstance(status, bool) or not 100 <= status <= 599:
        return None
    if "Timeout" in classes or "APITimeoutError" in classes:
        return None if status == 408 else status  # 408: LiteLLM's stand-in for a client-side timeout
    if "APIConnectionError" in classes:
        return None  # LiteLLM's stand-in 500: no server answered
    if status == 500 and _NO_ANSWER.fullmatch(message):
        return None  # the OpenAI client's "Connection error." that LiteLLM re-raises as a 500
    return status


def _message(exc: BaseException) -> str:
    """The provider's own words: LiteLLM prefixes ``litellm.XError: XError: OpenAIException - ``."""
    text = str(getattr(exc, "message", None) or exc).strip()
    first = text.splitlines()[0] if text else ""
    while (prefix := _PREFIX.match(first)) is not None and prefix.end() < len(first):
        first = first[prefix.end():]
    return redact(first.strip())[:200]


def _body_text(exc: BaseException) -> str:
    body: Any = getattr(exc, "body", None)
    return str(body) if body else ""


def classify(exc: BaseException, *, endpoint: str | None = None, timeout_s: float | None = None) -> Failure:
    """The :class:`Failure` for an exception raised by a model call (any provider, any client).

    Order matters: out-of-credit and context-overflow wordings win over the class, because
    providers send them under many statuses (OpenAI: 429 ``insufficient_quota``; OpenRouter and
    ``vox serve``: 400 with their own context wording, which LiteLLM maps to ``BadRequestError``).

    Args:
        exc: what the call raised.
        endpoint: the base URL of the local endpoint called (``None``: a hosted provider; a
            failure without an HTTP answer then names the URL the exception records, if any).
        timeout_s: the attempt's time limit, named by a timeout (``None``: the request's own).
    """
    classes = _classes(exc)
    message = _message(exc)
    status = _status(exc, classes, message)
    text = f"{exc} {_body_text(exc)}"
    error_type = type(exc).__name__
    local = endpoint is not None
    if status is None and ("Timeout" in classes or "APITimeoutError" in classes):
        message = timed_out(exc, endpoint, timeout_s)
    elif isinstance(exc, BadResponse):
        message = bad_body(endpoint, exc.what, stream=exc.stream, local=local)
    elif status is None and (said := connection_failed(exc, message, endpoint, local)) is not None:
        error_type, message = "APIConnectionError", said
    elif (what := not_json_body(text)) is not None:  # LiteLLM re-raises it as a 500
        status, error_type, message = None, "BadResponse", bad_body(endpoint, what, stream=False, local=local)
    if error_type == "BadResponse":  # the body is no API's (a web page): its words say nothing of credit
        kind = "server"
    elif status == 402 or _CREDIT.search(text):
        kind = "credit"
    elif "ContextWindowExceededError" in classes or (
            (status is None or 400 <= status < 500) and status != 413
            and (_CONTEXT.search(text) or _litellm_says_context(text))):
        kind = "context"
    elif status == 413:
        kind = "too_large"
    else:
        kind = next((_BY_CLASS[c] for c in classes if c in _BY_CLASS), "")
        if not kind or kind == "request":
            kind = _by_status(status, kind or "server")
    return Failure(kind, status, error_type, redact(message), endpoint)


def _by_status(status: int | None, default: str) -> str:
    if status is None:
        return default
    if status == 429:
        return "rate_limit"
    if status in (408, 504):
        return "timeout"
    if status >= 500:
        return "server"
    if status in (401, 403):
        return "auth"
    if status == 404:
        return "not_found"
    return "request" if status >= 400 else default


def _litellm_says_context(text: str) -> bool:
    """LiteLLM's own context-overflow wording check, when LiteLLM is already imported."""
    import sys

    module = sys.modules.get("litellm.litellm_core_utils.exception_mapping_utils")
    checker = getattr(module, "ExceptionCheckers", None) if module else None
    return checker is not None and bool(checker.is_error_str_context_window_exceeded(text))
