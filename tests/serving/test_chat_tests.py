"""vox chat runs the @test functions of a program that compiles (no capabilities): failures go
back to the model in the repair format with the Vox call stack, and the verify line says what
was checked."""

from __future__ import annotations

from typing import Any

from serving.chat import ChatOptions, run_chat
from tests.serving.scripted_model import Model

WRONG = ("```vox\nfn add(a: int, b: int) to int {\n  ret a - b\n}\n@test\nfn t_add() {\n  assert(add(2, 3) == 5)\n}\n"
         "@test\nfn t_zero() {\n  assert(add(0, 0) == 0)\n}\n```")
RIGHT = WRONG.replace("ret a - b", "ret a + b")




def chat(model: Model, **opts: Any) -> str:
    out: list[str] = []
    run_chat(model, lambda _p: None, out.append, prompt="write a vox function add with tests",
             options=ChatOptions(vox=True, **opts))
    return "".join(out)


def test_passing_tests_are_stated_in_the_verify_line() -> None:
    text = chat(Model(RIGHT))
    assert "vox-script-verify: PASS (compiled; 2/2 tests passed)" in text


def test_failing_tests_become_repair_feedback_with_the_stack() -> None:
    model = Model(WRONG, RIGHT)
    text = chat(model)
    feedback = model.calls[1][-1]["content"]
    assert "1 of its 2 @test function(s) failed" in feedback
    assert "Line 6, Col 3: runtime error[R0002] assertion failed" in feedback
    assert "in fn t_add (Line 6, Col 3)" in feedback
    assert "vox-script-verify: PASS (compiled; 2/2 tests passed)" in text


def test_tests_failing_after_the_last_repair_fail_the_turn() -> None:
    text = chat(Model(WRONG, WRONG), max_repairs=1)
    assert "vox-script-verify: FAIL" in text
    assert text.split("vox-script-verify: FAIL", 1)[1].lstrip().startswith("test t_add failed:")


def test_a_repair_that_no_longer_compiles_is_worse_than_failing_tests() -> None:
    broken = RIGHT.replace("ret a + b", "ret a + c")  # every test would pass, but it does not compile
    model = Model(WRONG, broken)
    text = chat(model, max_repairs=1)
    assert "repair 1 is worse than the first answer (1 error(s) in 1 ```vox block(s); the first answer: " \
           "1/2 test(s) failed when run)" in text
    tail = text[text.index("[check] the best attempt is the first answer"):]
    assert tail.split("\n", 1)[1].startswith(WRONG + "\nvox-script-verify: FAIL\ntest t_add failed:")


def test_an_answer_s_tests_share_one_time_limit(monkeypatch: Any) -> None:
    """The verdict runs an answer's tests under one limit for them all (serving.chat_repair
    ANSWER_TEST_SECONDS), not one each: five tests that sleep to the limit are all stopped by the
    first one's deadline (each test getting spec §11's 10 s afresh held the chat for 50 s)."""
    import serving.chat_repair as chat_repair

    monkeypatch.setattr(chat_repair, "ANSWER_TEST_SECONDS", 0.3)
    tests = "".join(f"@test\nfn t_sleep_{i}() {{\n  time.sleep(60000)\n}}\n" for i in range(5))
    sleepy = f"```vox\nimport std.time\nfn add(a: int, b: int) to int {{\n  ret a + b\n}}\n{tests}```"
    model = Model(sleepy, RIGHT)
    text = chat(model)
    feedback = model.calls[1][-1]["content"]
    assert "5 of its 5 @test function(s) failed" in feedback
    assert feedback.count("runtime error[R0010] time limit exceeded: the tests together took longer than 0.3 s") == 5
    assert "vox-script-verify: PASS (compiled; 2/2 tests passed)" in text
