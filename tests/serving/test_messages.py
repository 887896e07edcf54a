"""plain_messages: the checks on OpenAI messages, without a model or a server."""

from __future__ import annotations

from typing import Any

import pytest

from serving.errors import RequestError
from serving.messages import plain_messages


@pytest.mark.parametrize(("message", "said"), [
    ({"role": "user"}, "messages[0].content is missing"),
    ({"role": "system"}, "messages[0].content is missing"),
    ({"role": "tool", "tool_call_id": "c1"}, "messages[0].content is missing"),
    ({"role": "assistant"}, "messages[0].content is missing"),
    ({"role": "user", "content": None}, "messages[0].content is null (only an assistant message with tool_calls "
                                        "may omit it)"),
])
def test_content_is_required_outside_tool_calls(message: dict[str, Any], said: str) -> None:
    # a user message without content used to be read as "" and answered
    with pytest.raises(RequestError) as info:
        plain_messages([message])
    assert (str(info.value), info.value.param) == (said, "messages[0].content")


def test_an_assistant_message_with_tool_calls_may_have_no_content() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "hi"}, {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "assistant", "tool_calls": [call]}]
    assert [m["content"] for m in plain_messages(messages)] == ["hi", "", ""]
