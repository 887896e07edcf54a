"""What the engine works with: a validated request (:class:`Prepared`), the streamed pieces of its
choices (:class:`StreamEvent`), whole choices (:class:`Completion`), and the per-choice report of
what the Vox constraint did (:func:`constraint_summary`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from pipeline.decoding import SamplingParams
from vox_lang.requests import RequestSpec


@dataclass(frozen=True, slots=True)
class Prepared:
    """A validated request: rendered prompt ids, the sampling parameters, and the Vox constraint.

    ``constraint`` is ``"response"`` (free prose, ```vox blocks constrained), ``"code"`` (one
    block only) or ``None`` (unconstrained); ``constraint_note`` says why it is off when the
    request asked for it but the model cannot have it. ``n`` choices are generated in one batch.
    """

    prompt_ids: list[int]
    params: SamplingParams
    constraint: str | None = None
    constraint_note: str | None = None
    request: RequestSpec = RequestSpec()  # what the last user message names (for the name mask)
    names: bool = True  # name- and request-aware masking on top of the grammar
    n: int = 1  # choices (OpenAI ``n``)
    request_text: str = ""  # the last user message (the name mask reads what it names and asks for)
    retries: int = 0  # rounds of compiler-checked retries (pipeline.decoding_retry); constrained only
    block_asked: bool = False  # the last user message asks for a ```vox block: prose before it is bounded


@dataclass(frozen=True, slots=True)
class StreamEvent:
    """One streamed piece of output of choice ``index``.

    ``text`` is the new text of that choice since its previous event (may be empty on its last
    one). A choice's last event has ``finish_reason`` ``"stop"`` (EOS or stop string),
    ``"length"`` (max tokens) or ``"cancelled"``, and the token counts (``completion_tokens``:
    that choice's; ``prompt_tokens``: the prompt, counted once per request by the caller).
    """

    text: str
    finish_reason: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    constraint: dict[str, Any] | None = None  # last event only: what the Vox constraint did
    index: int = 0


@dataclass(frozen=True, slots=True)
class Completion:
    """A whole choice: text, why it ended, token counts and wall time of the request (seconds)."""

    text: str
    finish_reason: str
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    constraint: dict[str, Any] | None = None
    index: int = 0


#: a report line about one row of the batch (``"row 2: dead end after 7 tokens; ..."``)
_ROW_LINE: Final = re.compile(r"row (\d+): ")


def request_lines(events: Sequence[str]) -> list[str]:
    """The report lines about the whole request, not one row (``"mask worker stopped (...)"``):
    what a retry pass's report adds to the request's, whose rows are numbered otherwise."""
    return [e for e in events if _ROW_LINE.match(e) is None]


#: a choice's ``retries`` report when no retry round ran (a stream by default, ``vox_retries: 0``, an
#: unconstrained request): nothing was checked, nothing retried
NO_RETRIES: Final[dict[str, int]] = {"rounds": 0, "faulty": 0, "retried": 0, "fixed": 0}


def constraint_summary(prepared: Prepared, processor: Any, row: int = 0,
                       retries: dict[str, int] | None = None) -> dict[str, Any]:
    """``{"mode", "applied", "events", "retries"}`` for choice ``row``: what the Vox constraint did.

    ``processor`` is the request's grammar processor (``None``: unconstrained); its report lines
    about other rows are left out, lines about the whole request kept. ``retries`` is this
    choice's own compiler-checked retry report (:func:`serving.verified.verified_choices`),
    :data:`NO_RETRIES` when none ran, so every response carries one.
    """
    ran = dict(retries if retries is not None else NO_RETRIES)
    if processor is None:
        note = prepared.constraint_note or "off (vox_constrained: false)"
        return {"mode": None, "applied": False, "events": [note], "retries": ran}
    report = processor.report
    events = [e for e in report.events if (m := _ROW_LINE.match(e)) is None or int(m.group(1)) == row]
    return {"mode": prepared.constraint, "applied": report.enabled and not events, "events": events, "retries": ran}
