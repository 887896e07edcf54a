"""A scripted chat model for the repair-loop tests: answers from a queue, records each call."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from serving.cascade import ChatEvent, Completed, TextDelta
from serving.chat import Turn


class Model:
    """Answers from a queue, recording the messages of each call (``calls``: one list of
    message dicts per call). Raises ``IndexError`` when called more often than it has answers."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.calls: list[list[dict[str, str]]] = []

    def __call__(self, messages: Sequence[Any], turn: Turn) -> Iterable[ChatEvent]:
        self.calls.append([dict(m) for m in messages])
        answer = self.answers.pop(0)
        return [TextDelta(answer, "fake/m"), Completed("fake/m", answer, 10, 5, 0.0, False, ())]
