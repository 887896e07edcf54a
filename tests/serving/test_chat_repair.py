"""Which attempt of a Vox turn is best (serving.chat_repair): a cut-off answer ranks after complete ones."""

from __future__ import annotations

from typing import Any

import pytest

import vox_lang
from serving.chat_repair import COMPILE_ERRORS, CUT_OFF, UNTYPED, Attempt, assess
from serving.verify import verify_answer


def attempt(round_: int, answer: str) -> Attempt:
    verified = verify_answer(answer, lambda program: vox_lang.check(program, path="answer.vox"))
    return assess(round_, answer, verified, None, lambda diags: "\n".join(d.code for d in diags))


def test_a_cut_off_answer_is_worse_than_a_complete_one_with_more_errors() -> None:
    complete = attempt(0, "```vox\nfn double(n: int) to int { ret m * k }\n```")  # two undefined names
    cut = attempt(1, "```vox\nfn double(n: int) to int {\n  ret n * (2 +")  # token limit: one E0203
    assert complete.stage == COMPILE_ERRORS and complete.errors == 2
    assert cut.stage == CUT_OFF and cut.errors <= 2 and "cut off" in cut.summary
    assert complete.better_than(cut) and not cut.better_than(complete)


def test_an_answer_whose_syntax_hides_its_types_is_worse_than_one_with_more_type_errors() -> None:
    # one E0305 stops name and type checking (spec §6): its count of 1 says nothing of the rest
    typed = attempt(0, "```vox\nfn double(n: int) to int { ret m * k }\n```")  # two undefined names
    hidden = attempt(1, "```vox\nfn double(n: int) to int {\n  let v = 1\n  <p>x</p>\n  ret m\n}\n```")
    assert typed.stage == COMPILE_ERRORS and typed.errors == 2
    assert hidden.stage == UNTYPED and hidden.errors == 1
    assert typed.better_than(hidden) and not hidden.better_than(typed)


def test_every_repair_message_asks_for_a_block_as_the_server_reads_it() -> None:
    """vox serve bounds the prose before the block of an answer whose turn asks for one
    (pipeline.decoding_prose.asks_for_block): every repair message of vox chat must read so."""
    from pipeline.decoding_prose import asks_for_block
    from serving.chat_repair import (
        NO_BLOCK_MESSAGE,
        SCRIPT_MESSAGE,
        missing_message,
        repair_message,
        test_repair_message,
    )
    from serving.verify import EMPTY_PROGRAM_MESSAGE

    for message in (NO_BLOCK_MESSAGE, EMPTY_PROGRAM_MESSAGE, SCRIPT_MESSAGE, missing_message([]),
                    test_repair_message("f", 1, 1), repair_message("Line 1, Col 1: error[E0401] x", 1, 1)):
        assert asks_for_block([{"role": "user", "content": message}]), message


def test_program_tests_runs_nothing_for_a_test_only_in_a_string_or_comment(monkeypatch: pytest.MonkeyPatch) -> None:
    """program_tests asks vox_lang.script_requests.declares_tests (the runtime's definition of a
    test), not whether the text holds "@test": a comment, a string or `@test.slow` runs no tests."""
    import vox_lang.runtime
    from serving.chat_repair import program_tests

    no_tests = ('// @test is what marks a test\nfn label() to str {\n  ret "@test"\n}\n'
                '@test.slow\nfn t_later() {\n  assert(label() == "@test")\n}\n')
    real = vox_lang.runtime.run_tests
    calls: list[str] = []

    def counted(source: str, *args: Any, **kwargs: Any) -> Any:
        calls.append(source)
        return real(source, *args, **kwargs)

    monkeypatch.setattr(vox_lang.runtime, "run_tests", counted)
    assert program_tests(no_tests) is None and calls == []  # nothing compiled or run
    report = program_tests(no_tests + '@test\nfn t_now() {\n  assert(label() == "@test")\n}\n')
    assert report is not None and [o.name for o in report.outcomes] == ["t_now"] and report.passed == 1
    assert len(calls) == 1


@pytest.mark.parametrize("given", [None, "per-test"])
def test_program_tests_share_one_step_budget_whatever_the_config_says(given: str | None,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A model-written program's tests share its limits (RunConfig.tests_share_limits), even when
    the caller's config leaves them per test: three tests of 600 steps each pass alone under a
    1,000-step budget, but not together."""
    import serving.chat_repair as chat_repair
    from vox_lang.runtime.limits import RunConfig

    loops = "".join(f"@test\nfn t_{i}() {{\n  for x in range(0, 600) {{ }}\n}}\n" for i in range(3))
    monkeypatch.setattr(chat_repair, "ANSWER_TEST_STEPS", 1000)
    config = RunConfig(max_steps=1000, tests_share_limits=False) if given else None
    report = chat_repair.program_tests(loops, config)
    assert report is not None
    assert [(o.name, o.passed) for o in report.outcomes] == [("t_0", True), ("t_1", False), ("t_2", False)]
    assert {o.fault.code for o in report.outcomes[1:]} == {"R0006"}
    assert all("in tests together" in o.fault.diagnostic.message for o in report.outcomes[1:])
    # `vox test`'s per-test limits (the runtime's default) would pass every one of them
    from vox_lang.runtime import run_tests

    assert run_tests(loops, "answer.vox", RunConfig(max_steps=1000)).passed == 3
