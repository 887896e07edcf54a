"""The OpenAI chat-completions wire format, as ``vox serve`` speaks it.

:class:`ChatRequest` is the request body FastAPI validates; :func:`error_response`,
:func:`validation_error_response` and :func:`non_utf8_body_response` build OpenAI-style error
bodies (``{"error": {"message", "type", "param", "code"}}``); :func:`completion_body`,
:func:`chunk_body` and :func:`usage` build response bodies (``n`` choices, usage counting the
prompt once and every choice's tokens).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final

from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from pipeline.decoding import SEED_MAX, SEED_MIN
from serving.errors import RequestError, param_path
from serving.messages import plain_messages
from serving.prepared import Completion

#: OpenAI request fields this server cannot honour and whose values change what the answer is
#: (a tool call, JSON, log-probabilities, audio, tokens forced or banned by ``logit_bias``):
#: field -> (the values that ask for none of it, so they stay accepted; what the server does
#: instead). Any other value is a 400 naming the field,
#: never silently ignored. Fields that only tune sampling or bookkeeping (``user``,
#: ``presence_penalty``, ``parallel_tool_calls``, ``store``...) and unknown ones are accepted.
UNSUPPORTED_FIELDS: Final[dict[str, tuple[tuple[Any, ...], str]]] = {
    "tools": ((None, []), "it never calls tools"),
    "tool_choice": ((None, "none", "auto"), "it never calls tools"),
    "functions": ((None, []), "it never calls functions"),
    "function_call": ((None, "none", "auto"), "it never calls functions"),
    "response_format": ((None, {"type": "text"}), "it answers in plain text"),
    "logprobs": ((None, False), "it returns no log-probabilities"),
    "top_logprobs": ((None, 0), "it returns no log-probabilities"),
    "modalities": ((None, ["text"]), "it answers in text only"),
    "audio": ((None,), "it answers in text only"),
    "logit_bias": ((None, {}), "it applies no per-token bias"),  # forces or bans named tokens: not a tuning
}
UNSUPPORTED_CODE: Final = "unsupported_parameter"  # OpenAI's error code for a parameter a model does not take
#: pydantic error type of a message :func:`serving.messages.plain_messages` refuses (its words
#: and ``param`` ride in the error's context)
MESSAGE_ERROR: Final = "invalid_message"
#: errors named in one 400 message; more are counted ("and N more")
MAX_NAMED_ERRORS: Final = 5


class ChatRequest(BaseModel):
    """The subset of OpenAI's chat-completions request that we honour.

    FastAPI validates the body against this model; :func:`validation_error_response` turns a
    failure into the OpenAI-style 400 body naming the field (``param``). The messages are checked
    here too (:func:`serving.messages.plain_messages`), so that a malformed message is reported
    with the body's other faults, not after them. The fields of
    :data:`UNSUPPORTED_FIELDS` are accepted only with a value that asks for nothing; other
    fields, known to OpenAI or not, are accepted and ignored (clients send extras).
    """

    model_config = ConfigDict(extra="allow")

    model: str
    messages: list[dict[str, Any]] = Field(min_length=1)
    # strict: "n": "2", "stream": "yes" or "vox_constrained": 0 are 400s, not silently converted
    # (a typed-in "yes" is a mistake to report, not a value to guess); ints are still numbers
    stream: bool = Field(default=False, strict=True)
    max_tokens: int | None = Field(default=None, ge=1, strict=True)
    max_completion_tokens: int | None = Field(default=None, ge=1, strict=True)
    temperature: float | None = Field(default=None, ge=0.0, le=2.0, strict=True)
    top_p: float | None = Field(default=None, gt=0.0, le=1.0, strict=True)
    stop: str | list[str] | None = None
    n: int | None = Field(default=None, ge=1, strict=True)
    seed: int | None = Field(default=None, ge=SEED_MIN, le=SEED_MAX, strict=True)  # the sampler's RNG takes 64 bits
    stream_options: dict[str, Any] | None = None
    # Vox extensions: grammar-constrained decoding of ```vox blocks (default on), and code-only answers.
    vox_constrained: bool | None = Field(default=None, strict=True)
    vox_code_only: bool = Field(default=False, strict=True)
    vox_names: bool | None = Field(default=None, strict=True)  # name- and request-aware masking (default on)
    vox_retries: int | None = Field(default=None, ge=0, strict=True)  # compiler-checked retry rounds (default RETRIES)
    # sampling tunings this server does not apply (accepted and ignored, as OpenAI-compatible servers
    # do), but typed: `"frequency_penalty": "x"` is a client's mistake, a 400 naming the field.
    # Range: OpenAI's API reference, -2.0 to 2.0.
    frequency_penalty: float | None = Field(default=None, ge=-2.0, le=2.0, strict=True)
    presence_penalty: float | None = Field(default=None, ge=-2.0, le=2.0, strict=True)
    # OpenAI fields this server cannot honour (UNSUPPORTED_FIELDS): any type, so that a value
    # asking for them is refused as unsupported rather than as mistyped
    tools: Any = None
    tool_choice: Any = None
    functions: Any = None
    function_call: Any = None
    response_format: Any = None
    logprobs: Any = None
    top_logprobs: Any = None
    modalities: Any = None
    audio: Any = None
    logit_bias: Any = None

    @field_validator("stream", "vox_code_only", mode="before")
    @classmethod
    def _null_is_default(cls, value: Any) -> Any:
        """``null`` asks for the default (false), as for every other optional field (OpenAI's
        own clients send ``"stream": null``)."""
        return False if value is None else value

    @field_validator("stream_options")
    @classmethod
    def _options_need_a_stream(cls, value: dict[str, Any] | None, info: ValidationInfo) -> dict[str, Any] | None:
        """``stream_options`` only with ``"stream": true``, as OpenAI's API refuses it otherwise
        (a client that sets it expects a stream; a new-user trial saw it silently ignored). A
        ``stream`` that is itself invalid is reported alone."""
        if value is not None and info.data.get("stream") is False:
            raise PydanticCustomError("stream_options", "stream_options is only allowed when stream is true")
        return value

    @field_validator("messages")
    @classmethod
    def _plain_messages(cls, value: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Refuse messages the engine would refuse (role, content), naming the field as it does."""
        try:
            plain_messages(value)
        except RequestError as exc:
            raise PydanticCustomError(MESSAGE_ERROR, "{message}", {"message": str(exc), "param": exc.param}) from None
        return value

    @field_validator(*UNSUPPORTED_FIELDS)
    @classmethod
    def _refuse_unsupported(cls, value: Any, info: ValidationInfo) -> Any:
        """Keep a value of an unsupported field that asks for nothing; refuse any other."""
        field = str(info.field_name)
        inert, instead = UNSUPPORTED_FIELDS[field]
        if value in inert:  # == as JSON reads it: `logprobs: 0` asks for no more than false
            return value
        if field == "response_format" and not isinstance(value, dict):  # "text" is mistyped, not a request for JSON
            raise PydanticCustomError("dict_type", "response_format must be an object")
        raise PydanticCustomError(UNSUPPORTED_CODE, "{field} is not supported by this server ({instead})",
                                  {"field": field, "instead": instead})


def error_response(status: int, message: str, *, param: str | None = None, code: str | None = None) -> JSONResponse:
    """An OpenAI-style error body (``type`` follows the status: 4xx invalid request, 5xx server)."""
    kind = {401: "authentication_error", 404: "invalid_request_error", 429: "rate_limit_error"}.get(
        status, "invalid_request_error" if status < 500 else "server_error"
    )
    body = {"error": {"message": message, "type": kind, "param": param, "code": code}}
    return JSONResponse(body, status_code=status)


#: plain-words rule per parameter, for fields whose pydantic message would confuse (union branch
#: names such as ``stop.str``, "less than or equal to 2" for a NaN)
_FIELD_RULES = {
    "temperature": "must be a number in [0, 2]",
    "top_p": "must be a number in (0, 1]",
    "stop": "must be a string or a list of strings",
    "stream": "must be true or false",
    "vox_constrained": "must be true or false",
    "vox_code_only": "must be true or false",
    "vox_names": "must be true or false",
    "n": "must be an integer >= 1",
    "max_tokens": "must be an integer >= 1",
    "max_completion_tokens": "must be an integer >= 1",
    "seed": f"must be a 64-bit integer ({SEED_MIN} to {SEED_MAX})",
    "vox_retries": "must be an integer >= 0",
    "frequency_penalty": "must be a number in [-2, 2]",
    "presence_penalty": "must be a number in [-2, 2]",
    "response_format": 'must be an object like {"type": "text"}',  # only a mistyped value gets here
}


#: pydantic error types meaning "the body is not a JSON object" (e.g. ``[1, 2]`` or a bare string)
_NOT_AN_OBJECT = frozenset({"model_attributes_type", "model_type", "dict_type"})


def validation_error_response(exc: RequestValidationError) -> JSONResponse:
    """The OpenAI-style 400 for a body FastAPI could not parse or validate against :class:`ChatRequest`.

    The message names every bad field, the first one also in ``param`` (and ``code``): a value
    the body holds that is wrong comes before a required field the body lacks (a request without
    ``model`` whose ``messages`` are malformed is about its messages first), otherwise in the
    order of :class:`ChatRequest`'s fields; beyond :data:`MAX_NAMED_ERRORS` they are counted
    ("and N more"). Malformed JSON and a body that is not an object get their own plain-words messages.
    """
    errors = sorted(exc.errors(), key=lambda e: _lacking(_location(e)[0], e.get("type")))
    first = errors[0] if errors else {}
    parts, kind = _location(first)
    if kind == "json_invalid":
        doc = exc.body if isinstance(exc.body, str) else ""
        pos = parts[0] if parts and isinstance(parts[0], int) else 0
        reason = str(json.JSONDecodeError(str(first.get("ctx", {}).get("error", "invalid JSON")), doc, pos))
        return error_response(400, f"could not parse the JSON body of your request: {reason}")
    if not parts and kind in _NOT_AN_OBJECT:
        if isinstance(first.get("input"), bytes | bytearray):  # a Content-Type other than JSON
            return error_response(400, "the request body must be JSON (Content-Type: application/json)")
        return error_response(400, "the request body must be a JSON object")
    if not parts and kind == "missing":
        return error_response(400, "the request has no body; send a JSON object")
    faults = list({said[0]: said for said in map(_describe, errors)}.values())  # a union's branches say one thing
    message, param, code = faults[0]
    if len(faults) > 1:
        more = len(faults) - MAX_NAMED_ERRORS
        message += ("; also " + "; ".join(m for m, _, _ in faults[1:MAX_NAMED_ERRORS])
                    + (f" (and {more} more)" if more > 0 else ""))
    return error_response(400, message, param=param, code=code)


def _location(error: Any) -> tuple[tuple[Any, ...], Any]:
    """The field path of a pydantic ``error`` (without FastAPI's leading ``"body"``) and its type."""
    parts = tuple(error.get("loc", ()))
    return (parts[1:] if parts[:1] == ("body",) else parts), error.get("type")


def _lacking(parts: tuple[Any, ...], kind: Any) -> bool:
    """Whether an error is a required top-level field the body lacks (reported after wrong values)."""
    return kind == "missing" and len(parts) == 1


def _describe(error: Any) -> tuple[str, str | None, str | None]:
    """One validation ``error`` in plain words: (message, ``param``, ``code``)."""
    parts, kind = _location(error)
    field = str(parts[0]) if parts else None
    if kind == MESSAGE_ERROR:
        ctx = error.get("ctx") or {}
        return str(ctx.get("message")), ctx.get("param"), None
    if kind == UNSUPPORTED_CODE:
        return str(error.get("msg")), field, UNSUPPORTED_CODE
    if field in _FIELD_RULES:
        got = json.dumps(error.get("input"), default=str)[:60]
        return f"{field}: {_FIELD_RULES[field]}, got {got}", field, None
    loc = param_path(*(part if isinstance(part, int) else str(part) for part in parts))  # messages[0].role
    if not loc:
        return str(error.get("msg")), None, None
    said = f"{loc} is missing (a required field)" if kind == "missing" else f"{loc}: {error.get('msg', 'invalid')}"
    return said, loc, None


def non_utf8_body_response(body: bytes) -> JSONResponse | None:
    """The OpenAI-style 400 for a body that is not UTF-8 (``None`` when it is), naming the first
    bad byte and its offset.

    JSON bodies must be UTF-8 (RFC 8259; a leading UTF-8 BOM is accepted), but ``json.loads``
    also reads UTF-16 and UTF-32, which FastAPI would parse: a NUL byte, valid UTF-8 yet never
    part of a JSON text, is such a body without its BOM, and is refused like an invalid byte.
    """
    try:
        body.decode("utf-8")
        offset = body.find(b"\x00")
    except UnicodeDecodeError as exc:
        offset = exc.start
    if offset < 0:
        return None
    return error_response(400, f"could not parse the JSON body of your request: it is not valid UTF-8 JSON "
                               f"(byte 0x{body[offset:offset + 1].hex()} at offset {offset})")


def usage(prompt_tokens: int, completion_tokens: int) -> dict[str, int]:
    """OpenAI ``usage``: the prompt once, the tokens of every choice (EOS included)."""
    return {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens}


def completion_body(completion_id: str, created: int, model: str, choices: Sequence[Completion]) -> dict[str, Any]:
    """A ``chat.completion`` body for ``choices`` (in index order, at least one).

    Each choice carries its own ``vox_constraint`` report; the top-level ``vox_constraint`` is
    choice 0's (what clients of ``n=1`` read).
    """
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [
            {
                "index": c.index,
                "message": {"role": "assistant", "content": c.text},
                "finish_reason": c.finish_reason,
                "logprobs": None,
                "vox_constraint": c.constraint,
            }
            for c in choices
        ],
        "usage": usage(choices[0].prompt_tokens, sum(c.completion_tokens for c in choices)),
        "vox_constraint": choices[0].constraint,
    }


def chunk_body(completion_id: str, created: int, model: str, choices: list[dict[str, Any]],
               **extra: Any) -> str:
    """One SSE ``data:`` line holding a ``chat.completion.chunk`` with ``choices`` (and ``extra``
    top-level fields such as ``usage``)."""
    body = {"id": completion_id, "object": "chat.completion.chunk", "created": created, "model": model,
            "choices": choices, **extra}
    return f"data: {json.dumps(body)}\n\n"
