"""Compiler-in-the-loop repair, end to end: a real loopback HTTP model server replaying scripted
answers, the real router (litellm.Router) and the real Vox front end."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from serving.catalog import Catalog, CatalogEntry
from serving.chat import ChatOptions, routed_sender, run_chat

REQUEST = "Write a Vox script with a function add(a, b) and print add(1, 2)."
BROKEN = ("Sure! Here is the script:\n\n```vox\nfn add(a: int, b: int) to int {\n  ret a + c\n}\n"
          "print(add(1, totl))\n```\nIt prints 3.")
FIXED = ("<think>c should be b</think>Fixed:\n```vox\nfn add(a: int, b: int) to int {\n  ret a + b\n}\n"
         "print(add(1, 2))\n```")
BROKEN_PROGRAM = "```vox\nfn add(a: int, b: int) to int {\n  ret a + c\n}\nprint(add(1, totl))\n```"
EXPECTED_FEEDBACK = ("Line 2, Col 11: error[E0401] undefined name `c`\n"
                     "Line 4, Col 14: error[E0401] undefined name `totl`")


def catalog_for(base_url: str) -> Catalog:
    entry = CatalogEntry(
        id="local/replay-model", provider="local", litellm_model="openai/replay-model", input_usd_per_mtok=0.0,
        output_usd_per_mtok=0.0, context_window=None, is_free=True, capabilities=("chat", "stream"),
        intelligence_prior=20.0, coding_prior=20.0, speed_prior_tps=30.0, prior_source="test", source="local",
        api_base=base_url, vox_pass_at_1=0.5, reachable=True)
    return Catalog((entry,), 0.0, {})


Chat = Callable[..., tuple[str, Any, list[dict[str, Any]]]]


@pytest.fixture
def chat(replay: Any) -> Chat:
    """``chat(script, **options) -> (transcript, result, requests the server got)``."""

    def run(script: list[str], **opts: Any) -> tuple[str, Any, list[dict[str, Any]]]:
        out: list[str] = []
        with replay.ReplayServer(script, model="replay-model") as server:
            send = routed_sender(catalog_for(server.base_url), {}, "free", timeout=10, candidates=1)
            result = run_chat(send, lambda _p: None, out.append, prompt=REQUEST, options=ChatOptions(**opts))
            return "".join(out), result, server.requests

    return run


def test_broken_then_fixed_ends_with_pass(chat: Chat) -> None:
    text, result, requests = chat([BROKEN, FIXED])
    assert result.verdicts == ("PASS",) and len(requests) == 2
    assert "[check] 2 error(s) in 1 ```vox block(s); repair 1/2, sending:" in text
    assert EXPECTED_FEEDBACK in text
    repair_prompt = requests[1]["messages"][-1]
    assert repair_prompt["role"] == "user" and EXPECTED_FEEDBACK in repair_prompt["content"]
    # compact history: system prompt, request, the checked program alone (no prose), diagnostics
    system, request, program = requests[1]["messages"][:3]
    assert len(requests[1]["messages"]) == 4 and system == requests[0]["messages"][0]
    assert request == {"role": "user", "content": REQUEST}
    assert program == {"role": "assistant", "content": BROKEN_PROGRAM}
    assert requests[0]["messages"][0]["role"] == "system" and "Vox" in requests[0]["messages"][0]["content"]
    assert text.rstrip().splitlines()[-2] == "vox-script-verify: PASS"
    assert "c should be b" not in text  # reasoning hidden


def test_never_fixed_ends_with_fail_after_exactly_two_repairs(chat: Chat) -> None:
    text, result, requests = chat([BROKEN])
    assert result.verdicts == ("FAIL",) and not result.ok
    assert len(requests) == 3  # the answer + exactly 2 repair rounds
    assert text.count("sending:\nThe Vox compiler reported 2 error(s)") == 2
    # each repair call re-sends only the latest program, never the earlier failed attempts
    assert [len(r["messages"]) for r in requests] == [2, 4, 4]
    assert requests[2]["messages"][2] == {"role": "assistant", "content": BROKEN_PROGRAM}
    tail = text[text.index("vox-script-verify: FAIL"):]
    assert tail.startswith("vox-script-verify: FAIL\n" + EXPECTED_FEEDBACK + "\n")


@pytest.mark.parametrize("repairs", [0, 1])
def test_repair_rounds_are_configurable(chat: Chat, repairs: int) -> None:
    _, result, requests = chat([BROKEN], max_repairs=repairs)
    assert result.verdicts == ("FAIL",) and len(requests) == 1 + repairs


def test_answer_without_vox_block_is_asked_again(chat: Chat) -> None:
    text, result, requests = chat(["I would write it in Python instead.", FIXED])
    assert result.verdicts == ("PASS",) and "no ```vox fenced block" in requests[1]["messages"][-1]["content"]


NAMED = "Write a Vox function `double(n: int) to int` that doubles n."
RENAMED = "```vox\nfn twice(n: int) to int { ret n * 2 }\n```"  # compiles, but not what was asked
DOUBLE = "```vox\nfn double(n: int) to int { ret n * 2 }\n```"


def _named_chat(replay: Any, script: list[str], repairs: int) -> tuple[str, Any, list[dict[str, Any]]]:
    out: list[str] = []
    with replay.ReplayServer(script, model="replay-model") as server:
        send = routed_sender(catalog_for(server.base_url), {}, "free", timeout=10, candidates=1)
        result = run_chat(send, lambda _p: None, out.append, prompt=NAMED, options=ChatOptions(max_repairs=repairs))
        return "".join(out), result, server.requests


def test_a_program_that_compiles_without_the_requested_item_is_repaired_not_passed(replay: Any) -> None:
    # It used to end in PASS: the loop counted only errors and tests (seen with the tiny model on us-18).
    text, result, requests = _named_chat(replay, [RENAMED, DOUBLE], 1)
    assert result.verdicts == ("PASS",) and len(requests) == 2
    assert "[check] compiles, but does not declare `double`; repair 1/1, sending:" in text
    feedback = requests[1]["messages"][-1]["content"]
    assert "does not declare what the request asks for" in feedback
    assert "- function double(n: int) to int" in feedback


def test_still_missing_after_the_repairs_ends_in_fail_naming_the_item(replay: Any) -> None:
    text, result, _ = _named_chat(replay, [RENAMED, RENAMED], 1)
    assert result.verdicts == ("FAIL",)
    assert "vox-script-verify: PASS" not in text
    assert ("vox-script-verify: FAIL\ncompiles, but does not declare `double`\n"
            "  missing: function double(n: int) to int\n") in text


def test_an_answer_that_compiles_without_the_item_beats_one_with_errors(replay: Any) -> None:
    broken = "```vox\nfn double(n: int) to int { ret m * 2 }\n```"
    text, result, requests = _named_chat(replay, [RENAMED, broken], 1)
    assert result.verdicts == ("FAIL",) and len(requests) == 2
    assert "repair 1 is worse than the first answer" in text


UNCALLED = "```vox\nfn add(a: int, b: int) to int {\n  ret a + b\n}\n```"  # compiles; running it does nothing


def test_a_script_request_answered_without_statements_is_repaired_not_passed(chat: Chat) -> None:
    """REQUEST asks for a script: a program of declarations only compiles but runs nothing; it
    used to end in PASS (new-user trial)."""
    text, result, requests = chat([UNCALLED, FIXED])
    assert result.verdicts == ("PASS",) and len(requests) == 2
    assert ("[check] compiles, but no top-level statement or `fn main()` calls anything (the request asks for a "
            "script); repair 1/2") in text
    assert "calls anything, so running it does nothing" in requests[1]["messages"][-1]["content"]
    _, stuck, _ = chat([UNCALLED], max_repairs=1)
    assert stuck.verdicts == ("FAIL",)
