"""Honest verification of a model's answer: empty programs, drafts then corrections, cut-off answers."""

from __future__ import annotations

from typing import Any

import pytest

import vox_lang
from serving.chat import ChatOptions, run_chat
from serving.router import Completed, TextDelta
from serving.verify import EMPTY_PROGRAM_SUMMARY, verify_answer

GOOD = "fn add(a: int, b: int) to int {\n    ret a + b\n}\nprint(add(1, 2))"
DRAFT = "fn add(a: int, b: int) to int {\n    ret a + c\n}"


def check(source: str) -> Any:
    return vox_lang.check(source, path="answer.vox")


@pytest.mark.parametrize("source, empty", [
    ("", True), ("\n\n  \t\n", True), ("// TODO: write the program\n", True), ("  // a\n// b", True),
    ("\r\n// windows\r\n", True), ("print(1)", False), ("// note\nprint(1)", False), ("# not a comment", False),
    (b"\xff", False),
])
def test_is_empty_program(source: str | bytes, empty: bool) -> None:
    assert vox_lang.is_empty_program(source) is empty


@pytest.mark.parametrize("block", ["", "// the program goes here", "\n\n", "// a\n\n// b"])
def test_an_empty_or_comment_only_block_is_not_a_pass(block: str) -> None:
    # The compiler accepts an empty module with zero diagnostics; it used to verify as PASS.
    v = verify_answer(f"Here you go:\n```vox\n{block}\n```", check)
    assert v.empty and not v.passed and v.result is None


def test_a_draft_then_the_corrected_program_uses_the_last_block() -> None:
    answer = f"First try:\n```vox\n{DRAFT}\n```\nCorrected:\n```vox\n{GOOD}\n```"
    v = verify_answer(answer, check)
    assert v.passed and v.program == GOOD + "\n"
    assert v.notes == ("the 2 ```vox blocks fail together (2 error(s)); the last complete block (line 8) passes "
                       "alone and is used as the program",)


def test_blocks_that_pass_together_are_checked_together() -> None:
    answer = "```vox\nfn add(a: int, b: int) to int {\n    ret a + b\n}\n```\n```vox\nprint(add(1, 2))\n```"
    v = verify_answer(answer, check)
    assert v.passed and v.notes == () and v.program == GOOD.replace("}\nprint", "}\n\nprint") + "\n"


def test_the_last_block_is_not_used_when_it_fails_alone_too() -> None:
    v = verify_answer(f"```vox\n{GOOD}\n```\n```vox\n{DRAFT}\n```", check)
    assert not v.passed and v.notes == () and len(v.blocks) == 2


def test_an_unterminated_block_passes_only_with_a_caveat() -> None:
    v = verify_answer(f"Sure:\n```vox\n{GOOD}\n", check)
    assert v.passed and v.caveat == " (unterminated ```vox block: the answer may be cut off)"
    assert v.notes == ("the ```vox block at line 2 has no closing fence: the answer may be cut off; "
                       "what arrived was checked",)


def test_an_answer_that_hit_the_token_limit_says_so() -> None:
    v = verify_answer(f"```vox\n{GOOD}\n```\nThis works because", check, finish_reason="length")
    assert v.passed and v.caveat == " (the answer hit the token limit)"


def test_a_cut_off_correction_is_left_out_and_named() -> None:
    answer = f"```vox\n{GOOD}\n```\nA shorter version:\n```vox\nfn add(a: int, b: int) to int {{\n    ret a +"
    v = verify_answer(answer, check)
    assert v.passed and v.program == GOOD + "\n" and v.caveat == ""
    assert "the unterminated ```vox block at line 8 was left out" in v.notes


# ------------------------------------------------------------------------------------------- vox chat

def fake_send(*answers: str, finish_reason: str | None = None) -> Any:
    queue = list(answers)

    def send(messages: Any, turn: Any) -> list[Any]:
        text = queue.pop(0)
        return [TextDelta(text, "fake/m"), Completed("fake/m", text, 10, 5, 0.0, False, (), finish_reason)]

    return send


def chat(*answers: str, max_repairs: int = 0, finish_reason: str | None = None) -> tuple[str, Any]:
    out: list[str] = []
    result = run_chat(fake_send(*answers, finish_reason=finish_reason), lambda _p: None, out.append,
                      prompt="write a vox function add", options=ChatOptions(max_repairs=max_repairs))
    return "".join(out), result


def test_chat_empty_block_is_a_fail_with_its_own_message() -> None:
    text, result = chat("```vox\n// TODO\n```")
    assert result.verdicts == ("FAIL",)
    assert f"vox-script-verify: FAIL\n{EMPTY_PROGRAM_SUMMARY}\n" in text


def test_chat_empty_block_asks_for_the_program_in_the_repair_round() -> None:
    text, result = chat("```vox\n```", f"```vox\n{GOOD}\n```", max_repairs=1)
    assert result.verdicts == ("PASS",)
    assert f"[check] {EMPTY_PROGRAM_SUMMARY}; repair 1/1, sending:\nYour ```vox block holds no program" in text


def test_chat_unterminated_pass_is_labelled() -> None:
    text, result = chat(f"```vox\n{GOOD}\n")
    assert "[check] the ```vox block at line 1 has no closing fence" in text
    assert "vox-script-verify: PASS (unterminated ```vox block: the answer may be cut off)\n" in text


def test_chat_token_limit_pass_is_labelled() -> None:
    text, _ = chat(f"```vox\n{GOOD}\n```", finish_reason="length")
    assert "vox-script-verify: PASS (the answer hit the token limit)\n" in text


@pytest.mark.parametrize("answer", ["Sure", "Here it is:\n```vox\n", "```vox\n// first", ""])
def test_chat_answer_cut_by_the_token_limit_before_a_program_is_not_repaired(answer: str) -> None:
    """User trial: `vox chat --max-tokens 1` said "no ```vox block in the answer" and spent both
    repairs, each cut by the same limit. It now says the limit stopped it, and sends no repair."""
    text, result = chat(answer, max_repairs=2, finish_reason="length")  # a second answer would be popped
    assert result.verdicts == ("FAIL",) and "repair 1/2" not in text
    assert "vox-script-verify: FAIL\nthe answer hit the token limit (finish_reason=length) before it wrote" in text
    assert "Raise --max-tokens" in text


def test_chat_no_block_without_the_token_limit_is_still_repaired() -> None:
    text, result = chat("Sure, I can help.", f"```vox\n{GOOD}\n```", max_repairs=1)
    assert result.verdicts == ("PASS",) and "[check] no ```vox block in the answer; repair 1/1" in text


def test_chat_draft_then_correction_passes_and_says_which_block() -> None:
    text, result = chat(f"Draft:\n```vox\n{DRAFT}\n```\nCorrected:\n```vox\n{GOOD}\n```")
    assert result.verdicts == ("PASS",)
    assert "[check] the 2 ```vox blocks fail together (2 error(s)); the last complete block (line 8)" in text


def test_chat_crlf_answer_passes_without_repairs() -> None:
    text, result = chat(f"Here:\r\n```vox\r\n{GOOD.replace(chr(10), chr(13) + chr(10))}\r\n```\r\nIt prints 3.\r\n")
    assert result.verdicts == ("PASS",) and "vox-script-verify: PASS\n" in text
