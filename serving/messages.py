"""OpenAI chat messages in, plain ``{"role", "content"}`` messages out (before presentation).

:func:`plain_messages` checks the roles (``developer`` is read as ``system``) and flattens content
given as a list of text parts; anything else is a :class:`~serving.errors.RequestError` naming
the field as :func:`~serving.errors.param_path` does (``messages[2].role``), in its message and
its ``param``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from serving.errors import RequestError, param_path

#: roles a message may have (OpenAI's ``developer`` is accepted and read as ``system``)
ROLES: Final = ("system", "user", "assistant", "tool")


def plain_messages(messages: Sequence[dict[str, Any]]) -> list[dict[str, str]]:
    """Validate OpenAI-style messages: ``[{"role": str, "content": str}, ...]``.

    Raises:
        RequestError: empty list, unknown role, missing or null content (outside an assistant
            message with tool calls), or non-text content.
    """
    if not messages:
        raise RequestError("messages must contain at least one message", param="messages")
    out = []
    for i, message in enumerate(messages):
        role = message.get("role")
        role = "system" if role == "developer" else role
        if role not in ROLES:
            field = param_path("messages", i, "role")
            roles = ", ".join(ROLES)
            said = f"{field} is missing (one of {roles})" if "role" not in message else (
                f"{field} must be one of {roles}, got {role!r}")
            raise RequestError(said, param=field)
        if message.get("content") is None and not _calls_tools(message, str(role)):
            field = param_path("messages", i, "content")
            said = "is missing" if "content" not in message else (
                "is null (only an assistant message with tool_calls may omit it)")
            raise RequestError(f"{field} {said}", param=field)
        out.append({"role": str(role), "content": message_text(message.get("content"), i)})
    return out


def _calls_tools(message: dict[str, Any], role: str) -> bool:
    """Whether ``message`` may go without content: OpenAI requires it everywhere except on an
    assistant message that carries ``tool_calls`` (or the older ``function_call``)."""
    return role == "assistant" and bool(message.get("tool_calls") or message.get("function_call"))


def message_text(content: Any, index: int) -> str:
    """Flatten OpenAI message content (a string or a list of ``{"type": "text"}`` parts).

    Raises:
        RequestError: a part that is not text, or content of another type.
    """
    if content is None:
        return ""
    if isinstance(content, str):
        return _unicode(content, index)
    if isinstance(content, list):
        parts = []
        for part in content:
            if not isinstance(part, dict) or part.get("type") != "text" or not isinstance(part.get("text"), str):
                field = param_path("messages", index, "content")
                raise RequestError(f"{field}: only text parts are supported", param=field)
            parts.append(part["text"])
        return _unicode("".join(parts), index)
    field = param_path("messages", index, "content")
    raise RequestError(f"{field} must be a string or a list of text parts", param=field)


def _unicode(text: str, index: int) -> str:
    """``text`` if it is valid Unicode; a lone UTF-16 surrogate (JSON ``"\\ud800"`` without its
    pair) is not text a tokenizer can encode.

    Raises:
        RequestError: naming the message and the character offset.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        field = param_path("messages", index, "content")
        raise RequestError(
            f"{field} holds a lone UTF-16 surrogate ({text[exc.start]!r} at character {exc.start}), which is not "
            "valid Unicode text", param=field
        ) from None
    return text
