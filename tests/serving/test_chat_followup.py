"""A follow-up turn of a ``vox chat`` session never silently loses the last program that passed:
its attempts are compared with that program (when it is an attempt at the follow-up), a repair
may build on it, and a FAIL says that it is kept (``/last`` shows it). The real front end, a
scripted model."""

from __future__ import annotations

from typing import Any

import vox_lang
from serving.chat import ChatOptions, run_chat
from serving.chat_repair import TESTS_MESSAGE
from tests.serving.scripted_model import Model

NAMED = "Write a Vox function `double(n: int) to int` that doubles n."
DOUBLE = "```vox\nfn double(n: int) to int {\n  ret n * 2\n}\n```"
ADD_TEST = "now add a @test for it"
TEST = "@test\nfn t_double() {\n  assert(double(2) == 4)\n}\n"
TESTED = DOUBLE[:-3] + TEST + "```"
#: tests added, but `double` broken (one undefined name): it does not compile
BROKEN = TESTED.replace("ret n * 2", "ret n * m")




def session(model: Model, lines: list[str], **opts: Any) -> tuple[str, Any]:
    out: list[str] = []
    queue = list(lines)
    result = run_chat(model, lambda _p: queue.pop(0) if queue else None, out.append, options=ChatOptions(**opts),
                      check=lambda source: vox_lang.check(source, path="answer.vox"))
    return "".join(out), result


def test_a_failed_follow_up_ends_on_the_passing_program_not_a_worse_one() -> None:
    """The new-user trial: turn 1 PASS; "now add a @test for it" got broken answers and ended
    FAIL on a program that no longer compiled, with no word of turn 1's program."""
    model = Model(DOUBLE, BROKEN, BROKEN, BROKEN)
    text, result = session(model, [NAMED, ADD_TEST])
    assert result.verdicts == ("PASS", "FAIL") and len(model.calls) == 4
    assert ("[check] the first answer is worse than the last passing program (turn 1) (1 error(s) in 1 ```vox "
            "block(s); the last passing program (turn 1): compiles, but has no `@test` function") in text
    # each repair builds on the program that passed, asked for what the follow-up adds
    for call in model.calls[2:]:
        assert call[-2] == {"role": "assistant", "content": DOUBLE} and call[-1]["content"] == TESTS_MESSAGE
    tail = text[text.index("[check] the best attempt is"):]
    assert tail.startswith("[check] the best attempt is the last passing program (turn 1) (compiles, but has no "
                           "`@test` function (the request asks for tests)):\n" + DOUBLE + "\nvox-script-verify: FAIL\n")
    assert "[check] the last passing program (turn 1) is kept; /last shows it again\n" in tail


def test_a_repair_of_the_passing_program_can_pass_the_follow_up() -> None:
    model = Model(DOUBLE, BROKEN, TESTED)
    text, result = session(model, [NAMED, ADD_TEST, "/last"])
    assert result.verdicts == ("PASS", "PASS")
    assert model.calls[2][-2] == {"role": "assistant", "content": DOUBLE}
    assert text.count("vox-script-verify: PASS") == 2 and "is kept" not in text
    assert text.split("[last]", 1)[1].startswith(" the last passing program (turn 2):\n" + TESTED + "\n")


def test_the_unchanged_program_does_not_pass_a_follow_up_that_asks_for_more() -> None:
    model = Model(DOUBLE, DOUBLE)
    text, result = session(model, [NAMED, ADD_TEST], max_repairs=0)
    assert result.verdicts == ("PASS", "FAIL")
    assert text.rstrip().count("vox-script-verify: PASS") == 1
    assert "compiles, but has no `@test` function (the request asks for tests)" in text


def test_a_new_request_is_not_repaired_from_an_unrelated_program_but_the_pass_is_kept() -> None:
    """A follow-up naming only items the passing program lacks is a new task: its own attempts are
    repaired (the passing program stays in the history the repair call sends), and the FAIL says
    the passing program is kept."""
    broken = "```vox\nfn triple(n: int) to int {\n  ret n * k\n}\n```"
    model = Model(DOUBLE, broken, broken)
    text, result = session(model, [NAMED, "Write a Vox function `triple(n: int) to int`."], max_repairs=1)
    assert result.verdicts == ("PASS", "FAIL") and "discarded" not in text
    repair = model.calls[2]
    assert repair[-2] == {"role": "assistant", "content": broken}
    assert {"role": "assistant", "content": DOUBLE} in repair  # the last passing program is in the history
    assert text.endswith("vox-script-verify: FAIL\nLine 2, Col 11: error[E0401] undefined name `k`\n"
                         "[check] the last passing program (turn 1) is kept; /last shows it again\n\n"
                         + text[text.index("[session]"):])


def test_last_before_any_pass_says_so_and_calls_no_model() -> None:
    model = Model()
    text, result = session(model, ["/last"])
    assert "[last] no program has passed in this session yet\n" in text and result.calls == 0
