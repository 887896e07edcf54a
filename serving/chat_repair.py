"""The pieces of ``vox chat``'s repair loop: the repair messages, and which attempt is best.

Each answer of a Vox turn that fails its check (the first answer, then each repair) becomes an
:class:`Attempt`: what is wrong with it, the feedback a repair call sends, and the diagnostics a
FAIL shows. The loop (:func:`serving.chat.run_chat`) keeps the attempt closest to passing so far
(:meth:`Attempt.better_than`: stage, errors, requested items declared, warnings, then the later
attempt) and always repairs that one, so a repair that comes back worse is discarded instead of
being built on or shown as the result. Model output is only ever parsed and checked; a program's
``@test`` functions are run with no capabilities (:func:`program_tests`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from serving.errors import PromptTooLong, ServingError
from serving.extract import strip_reasoning
from serving.keys import redact
from serving.verify import EMPTY_PROGRAM_MESSAGE, EMPTY_PROGRAM_SUMMARY, Verification
from vox_lang.requests import RequestedItem, RequestSpec, missing_items
from vox_lang.script_requests import declares_tests, unmet_shape

NO_BLOCK_MESSAGE: Final = ("Your answer has no ```vox fenced block, so nothing could be checked. "
                           "Reply with the complete program in one ```vox block.")
#: an answer the token limit stopped before it held a program: a repair under the same limit would
#: stop there too, so none is sent
LIMIT_SUMMARY: Final = "the answer stopped at the token limit before it held a program"
LIMIT_REMAINING: Final = ("the answer hit the token limit (finish_reason=length) before it wrote a program in a "
                          "```vox block, and a repair under the same limit would stop there too: no repair was "
                          "sent. Raise --max-tokens (default 1024).\n")

#: :attr:`Attempt.stage`, best first: compiles but its tests fail; compiles but does not declare what
#: the request names (:func:`vox_lang.requests.missing_items`); compile errors; syntax errors that
#: stopped name and type checking (E01xx/E02xx, E0301, E0305: spec §6; their count hides every name
#: and type error, so one E0305 is no closer than two type errors); compile errors in an answer cut
#: off by its token limit (a block without its closing fence: its error count says little, the parser
#: stops at the first unclosed bracket); no program at all
TESTS_FAIL, MISSING_ITEMS, COMPILE_ERRORS, UNTYPED, CUT_OFF, NO_PROGRAM = 0, 1, 2, 3, 4, 5


def repair_message(diagnostics: str, n_errors: int, n_blocks: int) -> str:
    """The user message asking for a corrected program (diagnostics in repair format)."""
    joined = (f"\n(Your {n_blocks} ```vox blocks were checked together as one module, "
              "one blank line between blocks; line numbers count from the first block.)") if n_blocks > 1 else ""
    return (f"The Vox compiler reported {n_errors} error(s) in your program:\n{diagnostics}{joined}\n"
            "Fix every error and reply with the complete corrected program in one ```vox block.")


#: the repair request for a program that compiles but runs nothing where a script was asked
SCRIPT_MESSAGE: Final = (
    "Your program compiles, but no top-level statement (and no `fn main()`) calls anything, so running it "
    "does nothing. The request asks for a script: add the top-level statements that do the work (for example, "
    "call your function and print its result) and reply with the complete program in one ```vox block.")
SCRIPT_SUMMARY: Final = ("compiles, but no top-level statement or `fn main()` calls anything (the request asks for "
                          "a script)")
#: the repair request for a program without a ``@test`` function where tests were asked
TESTS_MESSAGE: Final = (
    "Your program compiles, but it has no `@test` function, and the request asks for tests: add `@test` "
    "functions that check what was asked with `assert(...)` and reply with the complete program in one "
    "```vox block.")
TESTS_SUMMARY: Final = "compiles, but has no `@test` function (the request asks for tests)"


def test_repair_message(failures: str, n_failed: int, n_tests: int) -> str:
    """The user message asking for a fix when the program compiles but its tests fail when run
    (each failure: the runtime error line in repair format and the Vox call stack)."""
    return (f"Your program compiles, but {n_failed} of its {n_tests} @test function(s) failed when run "
            f"(no capabilities granted):\n{failures}\n"
            "Fix the program (or a test that is wrong) and reply with the complete corrected program "
            "in one ```vox block.")


def missing_message(items: Sequence[RequestedItem]) -> str:
    """The user message asking for a program that declares the requested ``items`` it left out."""
    listed = "\n".join(f"- {item.describe()}" for item in items)
    return ("Your program compiles, but it does not declare what the request asks for:\n"
            f"{listed}\nDeclare each with exactly that name (and signature, where one is given) and reply "
            "with the complete program in one ```vox block.")


#: limits of an answer's ``@test`` run in ``vox chat``, for all its tests together: spec §11's
#: limits of one run (a model's answer is one program; each test getting them afresh let five
#: sleeping tests hold the chat for 50 s)
ANSWER_TEST_STEPS: Final = 10_000_000
ANSWER_TEST_SECONDS: Final = 10.0


def program_tests(program: str | None, config: Any = None) -> Any:
    """Run the ``@test`` functions of a model-written program that compiles, with no
    capabilities (:func:`vox_lang.runtime.run_tests`); ``None`` when it declares none
    (:func:`vox_lang.script_requests.declares_tests`: a ``@test`` in a string or a comment is
    none) or does not compile.

    The limits bound the program, not each test: its tests share one step budget and one
    deadline (:attr:`vox_lang.runtime.limits.RunConfig.tests_share_limits`, forced on whatever
    ``config`` says), so an answer of five tests that each sleep to the limit is stopped after one
    limit, not five (``vox test`` on the user's own file keeps spec §11's limits per test).

    Args:
        program: the checked program (``None``: nothing to run).
        config: a :class:`vox_lang.runtime.limits.RunConfig` giving the limits; ``None``:
            :data:`ANSWER_TEST_STEPS` and :data:`ANSWER_TEST_SECONDS`, for all the tests together.
    """
    if program is None or not declares_tests(program):
        return None
    from vox_lang.runtime import RunConfig, run_tests

    limits = config or RunConfig(max_steps=ANSWER_TEST_STEPS, timeout_s=ANSWER_TEST_SECONDS)
    shared = replace(limits, tests_share_limits=True)
    report = run_tests(program, "answer.vox", shared)
    return report if report.compiled and report.outcomes else None


def shown_program(program: str | None, answer: str) -> str:
    """The checked ``program`` re-fenced as one ```vox block, or (no program) the ``answer``
    without its reasoning."""
    if program is not None:
        return "```vox\n" + program + ("" if program.endswith("\n") else "\n") + "```"
    return strip_reasoning(answer).strip()


def repair_messages(base: Sequence[Mapping[str, str]], request: str, program: str | None, answer: str,
                    feedback: str) -> list[dict[str, str]]:
    """The compact history of a repair call: ``base`` (the conversation before this turn, system
    prompt included), the request, an assistant message holding only the checked ``program``
    re-fenced as one ```vox block (or, when the answer had no block, the ``answer`` without its
    reasoning), and the repair ``feedback``. Earlier failed attempts are not re-sent."""
    return [*(dict(m) for m in base), {"role": "user", "content": request},
            {"role": "assistant", "content": shown_program(program, answer)}, {"role": "user", "content": feedback}]


def repair_stopped_note(exc: ServingError) -> str:
    """Why a repair call could not be made (one line)."""
    if isinstance(exc, PromptTooLong) and exc.windows:
        fits = ", ".join(f"{model}'s {window}-token context" for model, window in exc.windows)
        return f"repair stopped: the repair prompt does not fit {fits}"
    first = (str(exc).strip().splitlines() or [""])[0]
    return f"repair stopped: {redact(first)}"


def request_gaps(asked: RequestSpec, request: str,
                 program: str | None) -> tuple[list[RequestedItem], str | None]:
    """What ``program`` lacks of what ``request`` asks: the requested items (``asked``, from
    :func:`vox_lang.pasted.asked_items`) it does not declare, in request order
    (:func:`vox_lang.requests.missing_items`: an item with a syntax error declares nothing), and the
    shape it lacks (``"script"`` or ``"tests"``: :func:`vox_lang.script_requests.unmet_shape`). Read
    from the parse alone, so a program with compile errors has gaps too (a rung of
    :meth:`Attempt.better_than`). No program: no gaps."""
    if program is None:
        return [], None
    absent = set(missing_items(asked, program))
    return [item for item in asked.items if item.name in absent], unmet_shape(request, program)


@dataclass(frozen=True)
class Attempt:
    """One answer of a Vox turn that failed its check.

    Attributes:
        round: 0 for the turn's first answer, ``n`` for the ``n``-th repair; -1 for the last
            program that passed in an earlier turn, as an attempt at a follow-up
            (:mod:`serving.chat_followup`).
        answer: the model's whole reply.
        program: the checked program a repair call re-sends (``None``: the answer itself is re-sent).
        stage: :data:`TESTS_FAIL`, :data:`MISSING_ITEMS`, :data:`COMPILE_ERRORS`, :data:`UNTYPED`,
            :data:`CUT_OFF` or :data:`NO_PROGRAM`.
        errors: failed tests, requested items not declared, compile errors, or 1 (no program).
        summary: one line saying what is wrong.
        feedback: the repair request for it.
        remaining: the diagnostics a FAIL shows (ends with a newline).
        gaps: requested items it does not declare, plus 1 when it lacks the shape asked (a script,
            tests): :func:`request_gaps`, counted whether or not it compiles.
        warnings: the front end's warnings.
        label: its name in the transcript when not :attr:`round`'s (``""``: from the round).
        repairable: ``False`` when a repair call cannot help: the answer stopped at the token limit
            before it held a program (:data:`LIMIT_SUMMARY`).
    """

    round: int
    answer: str
    program: str | None
    stage: int
    errors: int
    summary: str
    feedback: str
    remaining: str
    gaps: int = 0
    warnings: int = 0
    label: str = ""
    repairable: bool = True

    @property
    def name(self) -> str:
        """``"the first answer"``, ``"repair n"``, or its :attr:`label`."""
        return self.label or ("the first answer" if self.round == 0 else f"repair {self.round}")

    @property
    def rank(self) -> tuple[int, int, int, int, int]:
        """Its place in the order of :meth:`better_than`, smallest first."""
        return self.stage, self.errors, self.gaps, self.warnings, -self.round

    def better_than(self, other: Attempt) -> bool:
        """Closer to passing than ``other``, which the check decides rung by rung:

        1. the stage: a program that compiles (only its tests fail) beats one that compiles without
           declaring what was asked, which beats one with compile errors, which beats one whose
           syntax errors stopped name and type checking, which beats a cut-off one, which beats an
           answer without a program;
        2. within a stage, fewer errors (failed tests, missing items, compile errors);
        3. then fewer :attr:`gaps`: of two programs with as many compile errors, the one that
           declares the requested function (with its signature) or the tests asked is nearer;
        4. then fewer warnings;
        5. then the later attempt. A full tie says the check cannot tell the two apart, and the
           later one is the model's answer to the feedback: repairing it sends a new program,
           whereas keeping the earlier re-sends the very call that just produced a tie (a
           deterministic model answers it the same way again), so the loop could not progress.

        The order is total and strict (rounds differ within a turn), so it cannot loop on itself;
        the repair loop is bounded anyway by ``--max-repairs`` rounds, one model call each."""
        return self.rank < other.rank

    def shown(self) -> str:
        """The program as shown again when the turn ends on it (see :func:`shown_program`)."""
        return shown_program(self.program, self.answer)


def assess(round_: int, answer: str, verified: Verification, tests: Any,
           render: Callable[[Sequence[Any]], str], missing: Sequence[RequestedItem] = (),
           unmet: str | None = None) -> Attempt:
    """The :class:`Attempt` of an ``answer`` that failed: ``verified`` is its
    :class:`serving.verify.Verification`, ``tests`` its :func:`program_tests` report (``None``
    unless it compiles and declares tests), ``render`` renders diagnostics in the repair format,
    ``missing`` the requested items its program does not declare, ``unmet``: the shape the request
    asks for that it lacks (``"script"``: it runs nothing; ``"tests"``: no ``@test`` function;
    :func:`vox_lang.script_requests.unmet_shape`); both from :func:`request_gaps`. A program that
    compiles is ranked by them (missing items first, then the shape); one with compile errors by
    its errors, with them as :attr:`Attempt.gaps`."""
    program, result = verified.program, verified.result
    gaps = len(missing) + (1 if unmet else 0)
    warnings = len(getattr(result, "warnings", ())) if result is not None else 0
    compiles = result is not None and not result.errors
    if compiles and unmet and not missing:
        summary, message = (SCRIPT_SUMMARY, SCRIPT_MESSAGE) if unmet == "script" else (TESTS_SUMMARY, TESTS_MESSAGE)
        return Attempt(round_, answer, program, MISSING_ITEMS, 1, summary, message, summary + "\n", gaps, warnings)
    if compiles and missing:
        summary = "compiles, but does not declare " + ", ".join(f"`{item.name}`" for item in missing)
        listed = "".join(f"  missing: {item.describe()}\n" for item in missing)
        return Attempt(round_, answer, program, MISSING_ITEMS, len(missing), summary, missing_message(missing),
                       summary + "\n" + listed, gaps, warnings)
    if tests is not None:  # compiles, but its @test functions fail when run
        failures = tests.render_repair()
        return Attempt(round_, answer, program, TESTS_FAIL, tests.failed,
                       f"{tests.failed}/{len(tests.outcomes)} test(s) failed when run",
                       test_repair_message(failures, tests.failed, len(tests.outcomes)), failures + "\n", gaps,
                       warnings)
    if result is None and verified.hit_limit:  # cut before any program: the same limit cuts a repair
        return Attempt(round_, answer, program, NO_PROGRAM, 1, LIMIT_SUMMARY, NO_BLOCK_MESSAGE, LIMIT_REMAINING,
                       repairable=False)
    if verified.empty:  # nothing to re-send: the repair call shows the answer itself
        return Attempt(round_, answer, None, NO_PROGRAM, 1, EMPTY_PROGRAM_SUMMARY, EMPTY_PROGRAM_MESSAGE,
                       EMPTY_PROGRAM_SUMMARY + "\n")
    if result is None:
        summary = "no ```vox block in the answer"
        return Attempt(round_, answer, program, NO_PROGRAM, 1, summary, NO_BLOCK_MESSAGE, summary + "\n")
    n_errors, n_blocks = len(result.errors), len(verified.blocks)
    cut = verified.cut_off
    stage = CUT_OFF if cut else COMPILE_ERRORS if getattr(result, "typed", True) else UNTYPED
    return Attempt(round_, answer, program, stage, n_errors,
                   f"{n_errors} error(s) in {n_blocks} ```vox block(s){', cut off' if cut else ''}",
                   repair_message(render(result.errors), n_errors, n_blocks), render(result.diagnostics) + "\n",
                   gaps, warnings)


def discarded_note(attempt: Attempt, best: Attempt) -> str:
    """One line: ``attempt`` (a repair that ranks after ``best``) is discarded, and why: the two
    summaries, and the rung that decided when stage and errors tie."""
    why = ""
    if (attempt.stage, attempt.errors) == (best.stage, best.errors):
        if attempt.gaps != best.gaps:
            why = f"; it declares {attempt.gaps - best.gaps} fewer of the requested items"
        elif attempt.warnings != best.warnings:
            why = f"; it has {attempt.warnings - best.warnings} more warning(s)"
    return (f"{attempt.name} is worse than {best.name} ({attempt.summary}; {best.name}: {best.summary}{why}): "
            f"discarded, {best.name} stays the best")
