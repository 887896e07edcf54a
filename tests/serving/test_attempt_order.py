"""The total order of a Vox turn's attempts (serving.chat_repair.Attempt.better_than), rung by
rung: stage, then errors, then requested items declared, then warnings, then the later attempt;
and the repair loop that follows it (the real front end, a scripted model)."""

from __future__ import annotations

from typing import Any

import pytest

import vox_lang
from serving.chat import ChatOptions, run_chat
from serving.chat_repair import (
    COMPILE_ERRORS,
    CUT_OFF,
    MISSING_ITEMS,
    NO_PROGRAM,
    TESTS_FAIL,
    UNTYPED,
    Attempt,
    assess,
    discarded_note,
    request_gaps,
)
from serving.verify import verify_answer
from tests.serving.scripted_model import Model
from vox_lang.pasted import asked_items

NAMED = "Write a Vox function `double(n: int) to int` that doubles n."
#: two undefined names each; the first declares `twice` (not asked), the second `double` as asked
UNASKED = "```vox\nfn twice(n: int) to int { ret m * k }\n```"
ASKED = "```vox\nfn double(n: int) to int { ret a * b }\n```"


def made(round_: int, stage: int, errors: int, gaps: int = 0, warnings: int = 0) -> Attempt:
    return Attempt(round_, "answer", "program", stage, errors, "summary", "feedback", "remaining\n",
                   gaps=gaps, warnings=warnings)


def checked(round_: int, answer: str, request: str = NAMED) -> Attempt:
    """``answer`` assessed as the chat does (the real front end, the request's items)."""
    verified = verify_answer(answer, lambda program: vox_lang.check(program, path="answer.vox"))
    missing, unmet = request_gaps(asked_items(request), request, verified.program)
    return assess(round_, answer, verified, None, lambda diags: "\n".join(d.code for d in diags), missing, unmet)


#: (round, stage, errors, gaps, warnings): each pair differs on one rung in favour of ``closer``, and
#: every rung after it favours ``farther`` (the later attempt, with fewer errors, gaps, warnings)
@pytest.mark.parametrize(("closer", "farther"), [
    # 1. the stage, whatever the count: compiles with failing tests < compiles without what was
    # asked < compile errors < syntax that hid the types < cut off < no program
    ((0, TESTS_FAIL, 3, 2, 5), (1, MISSING_ITEMS, 1, 1, 0)),
    ((0, MISSING_ITEMS, 3, 3, 5), (1, COMPILE_ERRORS, 1, 0, 0)),
    ((0, COMPILE_ERRORS, 3, 2, 5), (1, UNTYPED, 1, 0, 0)),
    ((0, UNTYPED, 3, 2, 5), (1, CUT_OFF, 1, 0, 0)),
    ((0, CUT_OFF, 3, 2, 5), (1, NO_PROGRAM, 1, 0, 0)),
    # 2. the count of errors (failed tests, missing items, compile errors) within a stage
    ((0, COMPILE_ERRORS, 1, 2, 5), (1, COMPILE_ERRORS, 2, 0, 0)),
    ((0, TESTS_FAIL, 1, 0, 5), (1, TESTS_FAIL, 2, 0, 0)),
    # 3. requested items declared (and the shape asked) by a program that does not compile yet
    ((0, COMPILE_ERRORS, 2, 0, 5), (1, COMPILE_ERRORS, 2, 1, 0)),
    # 4. fewer warnings
    ((0, TESTS_FAIL, 1, 0, 0), (1, TESTS_FAIL, 1, 0, 1)),
    # 5. a full tie: the later attempt (it answered the feedback; repairing it is not the same call again)
    ((2, COMPILE_ERRORS, 2, 1, 1), (1, COMPILE_ERRORS, 2, 1, 1)),
    ((0, MISSING_ITEMS, 1, 1, 0), (-1, MISSING_ITEMS, 1, 1, 0)),  # a follow-up's answer vs the last pass
])
def test_each_rung_of_the_order(closer: tuple[int, ...], farther: tuple[int, ...]) -> None:
    a, b = made(*closer), made(*farther)
    assert a.better_than(b) and not b.better_than(a)


def test_the_order_is_total_and_strict_within_a_turn() -> None:
    attempts = [made(r, stage, errors, gaps, warnings) for r, (stage, errors, gaps, warnings) in enumerate(
        [(COMPILE_ERRORS, 2, 1, 0), (COMPILE_ERRORS, 2, 1, 0), (TESTS_FAIL, 1, 0, 0), (MISSING_ITEMS, 1, 1, 2),
         (NO_PROGRAM, 1, 0, 0), (COMPILE_ERRORS, 2, 0, 1), (CUT_OFF, 1, 0, 0)])]
    for a in attempts:
        assert not a.better_than(a)
        for b in attempts:
            if a is not b:
                assert a.better_than(b) != b.better_than(a)


def test_declaring_the_requested_function_breaks_a_tie_of_errors() -> None:
    """A new-user trial: both answers had two errors; the one declaring what was asked lost the tie."""
    first, second = checked(0, UNASKED), checked(1, ASKED)
    assert (first.stage, first.errors, first.gaps) == (COMPILE_ERRORS, 2, 1)
    assert (second.stage, second.errors, second.gaps) == (COMPILE_ERRORS, 2, 0)
    assert second.better_than(first) and not first.better_than(second)
    assert "declares 1 fewer of the requested items" in discarded_note(first, second)


def test_a_cut_off_program_loses_to_a_complete_one_with_as_many_errors() -> None:
    cut = checked(0, "```vox\nfn double(n: int) to int {\n  ret (n *")
    assert cut.stage == CUT_OFF and checked(1, ASKED).better_than(cut)


def test_fewer_warnings_break_a_tie_of_everything_else() -> None:
    tests = "@test\nfn t_double() {\n  assert(double(2) == 5)\n}\n"  # fails when run
    quiet = "```vox\nfn double(n: int) to int {\n  ret n * 2\n}\n" + tests + "```"
    noisy = quiet.replace("ret n * 2", "return n * 2")  # W0001: `return` is a compat spelling
    from serving.chat_repair import program_tests

    def attempt(round_: int, answer: str) -> Attempt:
        verified = verify_answer(answer, lambda program: vox_lang.check(program, path="answer.vox"))
        return assess(round_, answer, verified, program_tests(verified.program),
                      lambda diags: "\n".join(d.code for d in diags))

    a, b = attempt(0, quiet), attempt(1, noisy)
    assert (a.stage, a.errors, a.warnings, b.warnings) == (TESTS_FAIL, 1, 0, 1)
    assert a.better_than(b) and "1 more warning(s)" in discarded_note(b, a)




def chat(model: Model, prompt: str, **opts: Any) -> tuple[str, Any]:
    out: list[str] = []
    result = run_chat(model, lambda _p: None, out.append, prompt=prompt, options=ChatOptions(vox=True, **opts),
                      check=lambda source: vox_lang.check(source, path="answer.vox"))
    return "".join(out), result


def test_a_repair_that_declares_what_was_asked_is_kept_and_repaired_next() -> None:
    model = Model(UNASKED, ASKED, ASKED)
    text, result = chat(model, NAMED, max_repairs=2)
    assert result.verdicts == ("FAIL",) and "discarded" not in text
    assert model.calls[2][-2] == {"role": "assistant", "content": ASKED}  # repair 2 builds on repair 1
    tail = text[text.index("vox-script-verify: FAIL"):]
    assert "the best attempt is the first answer" not in text and "E0401" in tail


def test_a_full_tie_repairs_the_later_program_and_the_loop_stays_bounded() -> None:
    """Two programs the checker cannot tell apart, alternating: each repair call sends the latest
    (never the same call twice in a row), and the turn still ends after max_repairs rounds."""
    one = "```vox\nfn double(n: int) to int { ret a * 2 }\n```"
    other = "```vox\nfn double(n: int) to int { ret b * 2 }\n```"
    model = Model(one, other, one, other, one)
    text, result = chat(model, NAMED, max_repairs=4)
    assert result.verdicts == ("FAIL",) and len(model.calls) == 5
    assert [call[-2]["content"] for call in model.calls[1:]] == [one, other, one, other]
    assert "discarded" not in text and "the best attempt is" not in text  # the last answer is the best
