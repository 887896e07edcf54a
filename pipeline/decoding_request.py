"""What a conversation asks the decoder for: the request the masks read (issue 9 item 3b).

:func:`request_text` picks the user message an answer must satisfy (a repair turn keeps the
original request); :func:`request_spec` reads the items it names
(:func:`vox_lang.pasted.asked_items`: in backticks, or declared by code pasted to be fixed).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from vox_lang.requests import RequestSpec


def content_text(content: Any) -> str:
    """A message's text: a string as it is, a list of OpenAI content parts as its ``text`` parts
    joined (what the chat template renders); anything else ``""``. Never raises."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p["text"] for p in content
                       if isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str))
    return ""


def user_texts(messages: Iterable[Any]) -> list[str]:
    """The text of every user message, in order (:func:`content_text`)."""
    return [content_text(m.get("content")) for m in messages if isinstance(m, dict) and m.get("role") == "user"]


def request_text(messages: Iterable[dict[str, Any]]) -> str:
    """The user message a conversation's answer must satisfy: the last one that names an item
    (:func:`vox_lang.pasted.asked_items`: backticked, or declared by code pasted to be fixed), else
    the last one (``""`` if none).

    A repair turn (``vox chat``: the request, the answer, then the compiler's diagnostics as the
    last user message) names nothing itself; the corrected program must still declare what the
    original request asked for, so that request stays the one the masks read. Content given as a
    list of text parts reads as their joined text (:func:`content_text`), as a string would.
    """
    from vox_lang.pasted import asked_items

    users = user_texts(messages)
    for text in reversed(users):
        if asked_items(text):
            return text
    return users[-1] if users else ""


def request_spec(messages: Iterable[dict[str, Any]]) -> RequestSpec:
    """What the conversation's request names (:func:`request_text`; ``RequestSpec()`` if nothing)."""
    from vox_lang.pasted import asked_items

    return asked_items(request_text(messages))
