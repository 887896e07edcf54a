"""A ``vox chat`` session's last passing program, and what a follow-up turn makes of it.

A Vox conversation often grows one program turn by turn ("now add a @test for it"). The session
keeps the last program that passed (:class:`Passed`). A follow-up's attempts are ranked against it
(:func:`base_attempt`), so a follow-up whose answers are all further from passing ends on it, and
its repairs build on it, instead of ending on a broken program that lost what the conversation had;
the program as it was never passes a follow-up that asks for more, since it is checked against the
follow-up's request. A follow-up that ends FAIL says that the passing program is kept
(:func:`kept_note`), and the REPL's ``/last`` shows it again (:func:`last_text`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from serving.chat_repair import Attempt, assess, request_gaps, shown_program
from serving.verify import Verification
from vox_lang.requests import RequestSpec

#: the REPL command that shows the last passing program again (no model call)
LAST_COMMAND: Final = "/last"


@dataclass(frozen=True)
class Passed:
    """The program of a turn that ended ``vox-script-verify: PASS``.

    Attributes:
        turn: the session's turn it passed in (1-based; every request sent counts).
        answer: the model's whole reply.
        verified: its :class:`serving.verify.Verification` (the checked program and its result).
    """

    turn: int
    answer: str
    verified: Verification

    @property
    def name(self) -> str:
        """``"the last passing program (turn n)"``."""
        return f"the last passing program (turn {self.turn})"

    def shown(self) -> str:
        """The program re-fenced as one ```vox block."""
        return shown_program(self.verified.program, self.answer)


def base_attempt(passed: Passed, request: str, asked: RequestSpec,
                 render: Callable[[Sequence[Any]], str]) -> Attempt | None:
    """``passed`` as an attempt at the follow-up ``request`` (round -1, so any attempt of the turn
    that ties with it wins: :meth:`serving.chat_repair.Attempt.better_than`), or ``None`` where it
    is none:

    - it lacks nothing of ``request`` the check can see (``asked``: its items; the shape it asks
      for): the change asked is one only the user can judge ("now make it triple"), and the program
      as it was is no answer to it, so it cannot rank among the answers;
    - ``request`` names items and it declares none of them: a new task rather than a change of this
      program; repairing that program into the new one would drag it along.

    Otherwise it compiles and lacks only what the follow-up adds (tests, a script's statements,
    some of the items named): it ranks with the turn's attempts as one that compiles without
    declaring what was asked, ahead of any with compile errors.

    Args:
        passed: the session's last passing program.
        request: the follow-up's text.
        asked: ``request``'s items (:func:`vox_lang.pasted.asked_items`).
        render: renders diagnostics in the repair format.
    """
    missing, unmet = request_gaps(asked, request, passed.verified.program)
    if not missing and not unmet:
        return None
    if asked.items and len(missing) == len(asked.items):
        return None
    attempt = assess(-1, passed.answer, passed.verified, None, render, missing, unmet)
    return replace(attempt, label=passed.name)


def kept_note(passed: Passed) -> str:
    """The line a follow-up that ends FAIL adds: the passing program is kept, and how to see it."""
    return f"{passed.name} is kept; {LAST_COMMAND} shows it again"


def last_text(passed: Passed | None) -> str:
    """What ``/last`` writes: the last passing program, or that none has passed yet."""
    if passed is None:
        return "[last] no program has passed in this session yet\n"
    return f"[last] {passed.name}:\n{passed.shown()}\n"
