"""What a conversation asks the decoder for: the request the masks read (issue 9 item 3b).

:func:`request_text` picks the user message an answer must satisfy (a repair turn keeps the
original request); :func:`request_spec` reads the items it names
(:func:`vox_lang.requests.extract_request`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from vox_lang.requests import RequestSpec


def request_text(messages: Iterable[dict[str, Any]]) -> str:
    """The user message a conversation's answer must satisfy: the last one that names an item
    (:func:`vox_lang.requests.extract_request`), else the last one (``""`` if none).

    A repair turn (``vox chat``: the request, the answer, then the compiler's diagnostics as the
    last user message) names nothing itself; the corrected program must still declare what the
    original request asked for, so that request stays the one the masks read.
    """
    from vox_lang.requests import extract_request

    users = [c for c in (m.get("content") for m in messages if m.get("role") == "user") if isinstance(c, str)]
    for text in reversed(users):
        if extract_request(text):
            return text
    return users[-1] if users else ""


def request_spec(messages: Iterable[dict[str, Any]]) -> RequestSpec:
    """What the conversation's request names (:func:`request_text`; ``RequestSpec()`` if nothing)."""
    from vox_lang.requests import extract_request

    return extract_request(request_text(messages))
