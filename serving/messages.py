"""OpenAI chat messages in, plain ``{"role", "content"}`` messages out (before presentation).

:func:`plain_messages` checks the roles (``developer`` is read as ``system``) and flattens content
given as a list of text parts; anything else is a :class:`~serving.errors.RequestError` naming
the message (``messages[2].role``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from serving.errors import RequestError

#: roles a message may have (OpenAI's ``developer`` is accepted and read as ``system``)
ROLES: Final = ("system", "user", "assistant", "tool")


def plain_messages(messages: Sequence[dict[str, Any]]) -> list[dict[str, str]]:
    """Validate OpenAI-style messages: ``[{"role": str, "content": str}, ...]``.

    Raises:
        RequestError: empty list, unknown role, or non-text content.
    """
    if not messages:
        raise RequestError("messages must contain at least one message", param="messages")
    out = []
    for i, message in enumerate(messages):
        role = message.get("role")
        role = "system" if role == "developer" else role
        if role not in ROLES:
            raise RequestError(
                f"messages[{i}].role must be one of {', '.join(ROLES)}, got {role!r}", param=f"messages[{i}].role"
            )
        out.append({"role": str(role), "content": message_text(message.get("content"), i)})
    return out


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
                raise RequestError(
                    f"messages[{index}].content: only text parts are supported", param=f"messages[{index}]"
                )
            parts.append(part["text"])
        return _unicode("".join(parts), index)
    raise RequestError(
        f"messages[{index}].content must be a string or a list of text parts", param=f"messages[{index}]"
    )


def _unicode(text: str, index: int) -> str:
    """``text`` if it is valid Unicode; a lone UTF-16 surrogate (JSON ``"\\ud800"`` without its
    pair) is not text a tokenizer can encode.

    Raises:
        RequestError: naming the message and the character offset.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise RequestError(
            f"messages[{index}].content holds a lone UTF-16 surrogate ({text[exc.start]!r} at character "
            f"{exc.start}), which is not valid Unicode text", param=f"messages[{index}].content"
        ) from None
    return text
