"""A script request's call: when a request asks for a *script* and names the function it should
be built on, the block calls that function at top level before it may close (issue 9, item 3b).

A script is a program whose top-level statements do the work when it is run (spec §11;
:func:`vox_lang.script_requests.asks_for_script`). The tiny default model, asked "Write a Vox
script with a function `backup_name(path: str) to str` ... and print backup_name("app.cfg")",
declares the function and closes the fence: a program that runs nothing, which ``vox chat``
then fails (:func:`vox_lang.script_requests.runs_nothing`; 2 of the 30 user-phrased tasks of
``bench/chat_user_tasks.py`` on f4bc3af's export, in all 8 candidates and both repair turns).

**When:** the request asks for a script, every requested item is declared, the block stands at
a top-level boundary (:func:`pipeline.decoding_done.boundary`), no top-level statement of the
block calls anything yet, the call was not forced before in this block (once: a model that
then writes nothing useful is not pushed twice), and the model's first choice would close the
block (:func:`would_close`); elsewhere at such a boundary the fence waits, and a model that goes
on by itself writes its own statements (``let`` first, several calls). The budget's wind-down
and a derailed block are not held (:mod:`pipeline.decoding_hold`). **What:** the start of a call statement of the
first requested ``function`` (or ``workflow``): ``print(NAME(`` when it returns a value (its
requested signature, or its header in the block, has ``to``), else ``NAME(``; the model writes
the arguments under the other masks. A request that names no function gets nothing forced:
its answers usually are statements already, and what they should call is not known.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any, Final

import numpy as np

from pipeline.decoding_typed import closing_bracket
from vox_lang.requests import RequestSpec
from vox_lang.script_requests import runs_something

#: item kinds a script calls at top level (an actor is spawned, a type is not called)
CALLABLE: Final = ("function", "workflow")


def script_call(spec: RequestSpec, code: str) -> str | None:
    """The text that starts the requested call statement for a block ``code`` (an open block's
    text, at a top-level boundary) answering a script request that names ``spec``'s items, or
    ``None`` when the request names no function. ``print(NAME(`` for a function that returns a
    value, ``NAME(`` for one that returns nothing (see the module docstring). Never raises."""
    item = next((i for i in spec.items if i.kind in CALLABLE), None)
    if item is None:
        return None
    if item.signature is not None and not item.renamable:
        returns = " to " in item.signature
    else:  # the name alone was given: read the header the block declares
        header = re.search(rf"\b(?:fn|workflow)\s+{re.escape(item.name)}\s*\(", code)
        returns = header is not None and _returns_after(code, header.end())
    return f"print({item.name}(" if returns else f"{item.name}("


def _returns_after(code: str, start: int) -> bool:
    """Whether the header whose parameter list opens right before ``start`` in ``code`` declares
    a return type (``) to T``) before its body's ``{``."""
    close = closing_bracket(code, start - 1)
    if close < 0:
        return False
    rest = code[close + 1:]
    brace = rest.find("{")
    return re.match(r"\s*to\b", rest[: brace if brace >= 0 else len(rest)]) is not None


def would_close(closers: Collection[int], scores: Any, finite: Any, mask: Any | None) -> bool:
    """Whether the model's first choice among the tokens allowed here would close the block.

    Args:
        closers: ids that close a block (a backtick's, EOS).
        scores: float numpy ``[vocab]``, the row's logits.
        finite: bool numpy ``[vocab]``, which of them earlier masks left.
        mask: bool numpy ``[vocab]``, the masks of this step so far, or ``None``.
    """
    allowed = finite if mask is None else finite & mask
    if not allowed.any():
        return False
    return int(np.argmax(np.where(allowed, scores, -np.inf))) in closers


class RunsMemo:
    """Whether a row's block calls anything when run (:func:`vox_lang.script_requests.runs_something`),
    parsed once per text: the same boundary text comes back while the fence waits."""

    def __init__(self) -> None:
        self._last: dict[int, tuple[str, bool]] = {}

    def __call__(self, row: int, code: str) -> bool:
        """Whether ``code`` (row ``row``'s block) runs something (never raises)."""
        cached = self._last.get(row)
        if cached is None or cached[0] != code:
            cached = self._last[row] = (code, runs_something(code))
        return cached[1]
