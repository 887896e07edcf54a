"""run_chat with a queue-fed fake model: transcript, REPL, prompts, reasoning, abandonment, budget."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from pipeline.prompt import system_prompt
from serving.chat import ChatOptions, Turn, run_chat
from serving.errors import AllProvidersFailed, BudgetExceeded, NoCandidates, PromptTooLong
from serving.router import AttemptFailed, ChatEvent, Completed, TextDelta


@dataclass(frozen=True)
class FakeResult:
    """Stand-in for vox_lang's CheckResult (test_repair_loop uses the real front end)."""

    errors: tuple[Any, ...] = ()
    warnings: tuple[Any, ...] = ()

    @property
    def diagnostics(self) -> tuple[Any, ...]:
        return self.errors + self.warnings


class FakeModel:
    """Answers from a queue; each answer is a list of events or a plain string (streamed in 2 pieces)."""

    def __init__(self, *answers: str | list[ChatEvent] | Exception, cost: float = 0.001) -> None:
        self.answers = list(answers)
        self.cost = cost
        self.calls: list[tuple[list[dict[str, str]], Turn]] = []

    def __call__(self, messages: Sequence[Any], turn: Turn) -> Iterable[ChatEvent]:
        self.calls.append(([dict(m) for m in messages], turn))
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        if isinstance(answer, list):
            return answer
        half = len(answer) // 2
        return [TextDelta(answer[:half], "fake/m"), TextDelta(answer[half:], "fake/m"),
                Completed("fake/m", answer, 10, 5, self.cost, False, ())]


def transcript(send: Any, prompt: str | None = None, lines: Sequence[str] = (), **opts: Any) -> tuple[str, Any]:
    out: list[str] = []
    queue = list(lines)
    result = run_chat(send, lambda _p: queue.pop(0) if queue else None, out.append, prompt=prompt,
                      options=ChatOptions(**opts))
    return "".join(out), result


def test_one_shot_chat_streams_and_reports_usage() -> None:
    model = FakeModel("Hello! I am fine.")
    text, result = transcript(model, "hello, how are you?")
    assert "[fake/m]\nHello! I am fine.\n" in text
    assert text.endswith("[session] 1 model call(s), 10 prompt + 5 completion tokens, cost $0.0010; models: fake/m\n")
    assert "vox-script-verify" not in text and result.verdicts == ()
    messages, turn = model.calls[0]
    assert messages == [{"role": "user", "content": "hello, how are you?"}] and not turn.vox


def test_vox_request_injects_ssot_prompt_unless_system_given() -> None:
    ok = "```vox\nprint(1)\n```"
    model = FakeModel(ok)
    out: list[str] = []
    run_chat(model, lambda _p: None, out.append, prompt="write a vox script that prints 1",
             check=lambda src: FakeResult())
    assert model.calls[0][0][0] == {"role": "system", "content": system_prompt()}
    assert "vox-script-verify: PASS" in "".join(out)
    custom = FakeModel(ok)
    run_chat(custom, lambda _p: None, out.append, prompt="write a vox script", options=ChatOptions(system="Be terse."),
             check=lambda src: FakeResult())
    assert custom.calls[0][0][0] == {"role": "system", "content": "Be terse."}



def test_a_turn_that_refuses_code_is_answered_in_prose_in_a_vox_conversation() -> None:
    model = FakeModel("```vox\nprint(1)\n```", "An actor is...", "```vox\nprint(2)\n```")
    lines = ["write a vox script that prints 1", "whats an actor? no code please", "now print 2"]
    result = run_chat(model, lambda _p: lines.pop(0) if lines else None, lambda _t: None,
                      check=lambda src: FakeResult())
    assert [turn.vox for _, turn in model.calls] == [True, False, True]  # a follow-up stays Vox
    assert result.verdicts == ("PASS", "PASS")


def test_a_question_in_a_vox_conversation_is_answered_in_prose_and_a_change_is_code() -> None:
    model = FakeModel("```vox\nprint(1)\n```", "A workflow is...", "```vox\nprint([1])\n```",
                      "It prints...", "```vox\nprint(2)\n```")
    lines = ["write a vox script that prints 1", "whats a workflow?", "What if it printed a list?",
             "Why does it print that?", "how about printing 2"]
    result = run_chat(model, lambda _p: lines.pop(0) if lines else None, lambda _t: None,
                      check=lambda src: FakeResult())
    assert [turn.vox for _, turn in model.calls] == [True, False, True, False, True]
    assert result.verdicts == ("PASS", "PASS", "PASS")


@pytest.mark.parametrize(("text", "question"), [
    ("whats a workflow?", True), ("Why does it return 0?", True), ("Does it handle empty lists?", True),
    ("What if it took a list?", False), ("how about negative numbers?", False), ("What about floats?", False),
    ("Can you make it generic?", False), ("Now add a test", False), ("Could you add a doc comment?", False),
])
def test_is_question(text: str, question: bool) -> None:
    from serving.intent import is_question

    assert is_question(text) is question


def test_repl_keeps_history_and_exits() -> None:
    model = FakeModel("one", "two")
    text, result = transcript(model, None, ["first", "", "second", "/exit", "never sent"])
    assert result.calls == 2 and len(model.calls) == 2
    assert [m["content"] for m in model.calls[1][0]] == ["first", "one", "second"]


@pytest.mark.parametrize("command", ["/exit", "/EXIT", "/Quit", ":Q"])
def test_repl_commands_ignore_case(command: str) -> None:
    model = FakeModel("one")
    text, result = transcript(model, None, ["/HELP", "first", command, "never sent"])
    assert result.calls == 1 and model.calls[0][0][-1]["content"] == "first" and "unknown command" not in text


def test_repl_help_and_unknown_commands_are_never_sent_to_the_model() -> None:
    from serving.chat import REPL_HELP

    model = FakeModel("one")
    text, result = transcript(model, None, ["/help", "/hepl", "/help foo", "/", "/usr/bin/vox is a path, send it",
                                            "/exit"])
    assert result.calls == 1 and model.calls[0][0][-1]["content"] == "/usr/bin/vox is a path, send it"
    assert text.count(REPL_HELP) == 4 and "unknown command /hepl; " in text and "unknown command /; " in text


def test_repl_end_of_input_puts_the_summary_on_its_own_line() -> None:
    # Ctrl-D leaves the cursor after the "vox> " prompt; the summary used to be printed there.
    text, _ = transcript(FakeModel("one"), None, ["first"])
    assert text.endswith("one\n\n" + text[text.index("[session]"):])
    exited, _ = transcript(FakeModel("one"), None, ["first", "/exit"])  # Enter already ended the line
    assert "one\n[session]" in exited


def test_reasoning_is_hidden_from_display_and_from_the_check() -> None:
    seen: list[str] = []
    answer = "<think>try ```vox\nbroken(\n```</think>```vox\nprint(2)\n```"
    out: list[str] = []
    def check(src: str) -> FakeResult:
        seen.append(src)
        return FakeResult()

    run_chat(FakeModel(answer), lambda _p: None, out.append, prompt="write vox code", check=check)
    text = "".join(out)
    assert "broken(" not in text and "[reasoning hidden:" in text
    assert seen == ["print(2)\n"]


def test_mid_stream_abandonment_is_marked_and_excluded() -> None:
    events: list[ChatEvent] = [
        TextDelta("partial ans", "a/one"),
        AttemptFailed("a/one", "APIConnectionError: reset", "partial ans", next_model="b/two"),
        TextDelta("full answer", "b/two"), Completed("b/two", "full answer", 3, 2, 0.0, True, (("a/one", "x"),)),
    ]
    model = FakeModel(events, "next")
    text, result = transcript(model, None, ["q1", "q2"])
    assert ("[abandoned: partial answer from a/one above; APIConnectionError: reset; "
            "the next model answers afresh]") in text
    assert "[b/two]\nfull answer" in text and "~13 prompt" in text  # estimated usage is marked ~
    assert model.calls[1][0][1] == {"role": "assistant", "content": "full answer"}  # not the partial one


def test_failed_attempts_are_reported() -> None:
    events: list[ChatEvent] = [AttemptFailed("x/1", "RateLimitError: slow down"), TextDelta("ok", "x/2"),
                               Completed("x/2", "ok", 1, 1, None, False, (("x/1", "RateLimitError"),))]
    text, _ = transcript(FakeModel(events), "hi")
    assert "[failed: x/1: RateLimitError: slow down]" in text and "cost $0.0000 + unknown" in text
    assert "[session] 1 model call(s) (1 failed attempt(s) besides)," in text  # the failed one is not lost


def test_errors_raise_in_one_shot_and_are_reported_in_repl() -> None:
    with pytest.raises(AllProvidersFailed):
        transcript(FakeModel(AllProvidersFailed("all models failed: a: 429")), "hi")
    text, result = transcript(FakeModel(AllProvidersFailed("all models failed: a: 429"), "fine"), None, ["a", "b"])
    assert "error: all models failed: a: 429" in text and result.calls == 1


def test_max_cost_stops_further_calls() -> None:
    model = FakeModel("one", "two", "three", cost=0.6)
    text, result = transcript(model, None, ["a", "b", "c"], max_cost_usd=1.0)
    assert result.calls == 2 and "[budget] --max-cost $1.0000 is spent" in text
    assert model.calls[1][1].budget_usd == pytest.approx(0.4)
    with pytest.raises(BudgetExceeded):
        transcript(FakeModel("x"), "hi", max_cost_usd=0.0)


def test_exit_code_one_shot_follows_the_verdict_a_session_the_user_ends_is_0(fake_render: None) -> None:
    # new-user trial: `/exit` gave 1 after a FAIL turn but 0 after turns that all failed with
    # "no model can serve"; an interactive session the user ends now exits 0 either way
    failing = "```vox\nbad\n```"
    _, one_shot = _repair_transcript(FakeModel(failing), _Check(), max_repairs=0)
    assert one_shot.verdicts == ("FAIL",) and one_shot.exit_code(interactive=False) == 1
    out: list[str] = []
    lines = ["write vox code", "write vox code again", "/exit"]
    session = run_chat(FakeModel(failing, NoCandidates("no model can serve this request")),
                       lambda _p: lines.pop(0), out.append, options=ChatOptions(max_repairs=0), check=_Check())
    assert session.verdicts == ("FAIL",) and "error: no model can serve" in "".join(out)
    assert session.exit_code(interactive=True) == 0
    _, spent = transcript(FakeModel("one", "two", cost=0.6), None, ["a", "b", "c"], max_cost_usd=1.0)
    assert spent.budget_spent and spent.exit_code(interactive=True) == 1


def test_repl_with_closed_stdin_ends_cleanly_without_a_traceback() -> None:
    # `vox chat <&-` used to die with "RuntimeError: input(): lost sys.stdin".
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = dict(os.environ, VOX_LOCAL_ENDPOINTS="", VOX_OLLAMA="0", VOX_NO_KEYRING="1",
               VOX_OPENROUTER_URL="http://127.0.0.1:9/api/v1", LITELLM_LOCAL_MODEL_COST_MAP="True")
    res = subprocess.run(
        [sys.executable, "-c", "from serving.cli import main; main()", "chat"],
        cwd=Path(__file__).resolve().parents[2], env=env, capture_output=True,
        preexec_fn=lambda: os.close(0), timeout=120, text=True,
    )
    assert res.returncode == 0, res.stderr
    assert "Traceback" not in res.stderr


class _Check:
    """Fake checker: one error per ``bad`` in the program; records what it checked."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def __call__(self, source: str) -> FakeResult:
        self.seen.append(source)
        return FakeResult(errors=("E",) * source.count("bad"))


@pytest.fixture
def fake_render(monkeypatch: pytest.MonkeyPatch) -> None:
    """Render the fake diagnostics in the repair format."""
    import serving.chat as chat

    monkeypatch.setattr(chat, "_render_repair", lambda diags: "\n".join(f"Line 1, Col 1: error[E0401] {d}"
                                                                         for d in diags))


def _repair_transcript(model: FakeModel, check: _Check, **opts: Any) -> tuple[str, Any]:
    out: list[str] = []
    result = run_chat(model, lambda _p: None, out.append, prompt="write vox code", check=check,
                      options=ChatOptions(**opts))
    return "".join(out), result


def test_repair_calls_send_only_the_request_the_best_program_and_the_diagnostics(fake_render: None) -> None:
    # the last block fails alone too, so the two blocks are checked (and re-sent) together
    first = "Here you go:\n```vox\nprint(2)\n```\nand more:\n```vox\nbad(1)\nbad(2)\n```\nLong prose " + "x" * 500
    second = "<think>hmm</think>Again:\n```vox\nbad(3)\n```\nblah"
    model = FakeModel(first, second, "```vox\nprint(4)\n```")
    check = _Check()
    text, result = _repair_transcript(model, check, max_repairs=2)
    assert result.verdicts == ("PASS",) and len(model.calls) == 3
    system = {"role": "system", "content": system_prompt()}
    request = {"role": "user", "content": "write vox code"}
    [(msgs1, turn1), (msgs2, turn2)] = [(c[0], c[1]) for c in model.calls[1:]]
    assert (turn1.repair, turn2.repair) == (1, 2)
    # the blocks joined as they were checked, re-fenced; no prose, no earlier attempts
    assert check.seen[:2] == ["print(2)\n\nbad(1)\nbad(2)\n", "bad(1)\nbad(2)\n"]  # together, then the last alone
    assert msgs1[:3] == [system, request,
                         {"role": "assistant", "content": "```vox\nprint(2)\n\nbad(1)\nbad(2)\n```"}]
    assert msgs1[3]["role"] == "user" and "Line 1, Col 1: error[E0401] E" in msgs1[3]["content"]
    assert "checked together as one module" in msgs1[3]["content"]
    assert msgs2[:3] == [system, request, {"role": "assistant", "content": "```vox\nbad(3)\n```"}]
    assert len(msgs2) == 4 and "hmm" not in str(msgs2) and "x" * 50 not in str(msgs2)


def test_repair_after_an_answer_without_a_block_sends_the_answer_without_reasoning(fake_render: None) -> None:
    model = FakeModel("<think>secret</think>I would use Python.", "```vox\nprint(1)\n```")
    text, result = _repair_transcript(model, _Check())
    assert result.verdicts == ("PASS",)
    msgs = model.calls[1][0]
    assert msgs[-2] == {"role": "assistant", "content": "I would use Python."}
    assert "no ```vox fenced block" in msgs[-1]["content"]


def test_repl_history_keeps_the_latest_answer_not_the_failed_attempts(fake_render: None) -> None:
    model = FakeModel("```vox\nbad(1)\n```", "```vox\nprint(1)\n```", "```vox\nprint(5)\n```")
    out: list[str] = []
    lines = ["write vox code", "now print 5"]
    run_chat(model, lambda _p: lines.pop(0) if lines else None, out.append, check=_Check())
    assert [m["content"] for m in model.calls[2][0][1:]] == ["write vox code", "```vox\nprint(1)\n```",
                                                       "now print 5"]


def test_worse_repairs_are_discarded_and_a_tie_is_repaired_in_its_later_form(fake_render: None) -> None:
    first, worse, tie = "```vox\nbad(1)\n```", "```vox\nbad(1)\nbad(2)\n```", "```vox\nbad(3)\n```"
    model = FakeModel(first, worse, tie, "```vox\nprint(1)\n```")
    out: list[str] = []
    result = run_chat(model, lambda _p: None, out.append, prompt="write vox code", check=_Check(),
                      options=ChatOptions(max_repairs=3))
    text = "".join(out)
    assert result.verdicts == ("PASS",) and len(model.calls) == 4
    # the best program each time: the worse repair is not built on; the tie (the model's answer to
    # the feedback) is, rather than sending the first answer's call a third time
    assert [c[0][2]["content"] for c in model.calls[1:]] == [first, first, tie]
    discarded = [line for line in text.splitlines() if "discarded" in line]
    # each discarded attempt is printed once, as a [check] line (it used to be repeated as [repair] on --explain)
    assert discarded == [
        "[check] repair 1 is worse than the first answer (2 error(s) in 1 ```vox block(s); the first answer: "
        "1 error(s) in 1 ```vox block(s)): discarded, the first answer stays the best"]
    assert "the best attempt is" not in text and text.count("repair 3/3, sending:") == 1


def test_a_failed_turn_ends_on_its_best_answer_and_keeps_it_in_the_history(fake_render: None) -> None:
    first, worse = "```vox\nbad(1)\n```", "```vox\nbad(1)\nbad(2)\n```"
    model = FakeModel(first, worse, "```vox\nprint(5)\n```")
    out: list[str] = []
    lines = ["write vox code", "now print 5"]
    result = run_chat(model, lambda _p: lines.pop(0) if lines else None, out.append, check=_Check(),
                      options=ChatOptions(max_repairs=1))
    text = "".join(out)
    assert result.verdicts == ("FAIL", "PASS")
    assert ("[check] the best attempt is the first answer (1 error(s) in 1 ```vox block(s)):\n" + first
            + "\nvox-script-verify: FAIL\nLine 1, Col 1: error[E0401] E\n[fake/m]") in text
    assert [m["content"] for m in model.calls[2][0][1:]] == ["write vox code", first, "now print 5"]


def test_a_better_repair_replaces_the_best_and_no_answer_is_shown_again(fake_render: None) -> None:
    model = FakeModel("```vox\nbad(1)\nbad(2)\n```", "```vox\nbad(3)\n```")
    text, result = _repair_transcript(model, _Check(), max_repairs=1)
    assert result.verdicts == ("FAIL",) and "discarded" not in text and "the best attempt" not in text
    assert text[text.index("vox-script-verify: FAIL"):].startswith(
        "vox-script-verify: FAIL\nLine 1, Col 1: error[E0401] E\n[session]")


@pytest.mark.parametrize("exc, note", [
    (PromptTooLong("no model can serve this request", [("local/vox-mens-tiny", 512)]),
     "[check] repair stopped: the repair prompt does not fit local/vox-mens-tiny's 512-token context\n"),
    (AllProvidersFailed("all models failed: local/x: BadRequestError: too long"),
     "[check] repair stopped: all models failed: local/x: BadRequestError: too long\n"),
])
def test_repair_that_no_model_can_take_ends_with_fail_not_an_error(exc: Exception, note: str,
                                                                  fake_render: None) -> None:
    model = FakeModel("```vox\nbad(1)\n```", exc)
    text, result = _repair_transcript(model, _Check())
    assert result.verdicts == ("FAIL",) and result.calls == 1 and len(model.calls) == 2
    tail = text[text.index("[check] repair stopped"):]
    assert tail.startswith(note + "vox-script-verify: FAIL\nLine 1, Col 1: error[E0401] E\n[session] 1 model call(s)")


def test_abandoned_last_model_does_not_promise_a_next_one() -> None:
    # "the next model answers afresh" used to be printed even when no model was left.
    events: list[ChatEvent] = [TextDelta("partial ans", "a/one"),
                               AttemptFailed("a/one", "APIConnectionError: reset", "partial ans", next_model=None)]

    def send(messages: Any, turn: Any) -> Any:
        yield from events
        raise AllProvidersFailed("all models failed: a/one: APIConnectionError: reset")

    text, result = transcript(send, None, ["q1"])
    assert "[abandoned: partial answer from a/one above; APIConnectionError: reset; no model is left to answer]" \
        in text and "answers afresh" not in text
    assert "error: all models failed: a/one: APIConnectionError: reset" in text and result.calls == 0


def test_a_request_for_tests_is_repaired_until_the_program_has_one() -> None:
    """A new-user trial's "now also add a @test function ..." got an answer without one and PASS."""
    import vox_lang

    bare = "```vox\nfn double(n: int) to int {\n  ret n * 2\n}\n```"
    tested = bare[:-3] + "@test fn doubles() {\n  assert(double(2) == 4)\n}\n```"
    model = FakeModel(bare, tested)
    lines = ["Write a Vox function `double(n: int) to int` with a test."]
    out: list[str] = []
    result = run_chat(model, lambda _p: lines.pop(0) if lines else None, out.append, check=vox_lang.check)
    assert result.verdicts == ("PASS",) and len(model.calls) == 2
    text = "".join(out)
    assert "compiles, but has no `@test` function (the request asks for tests); repair 1/2" in text
    assert "it has no `@test` function, and the request asks for tests" in model.calls[1][0][-1]["content"]


def test_a_question_s_examples_are_checked_without_a_verdict() -> None:
    import vox_lang

    answer = ("A workflow is a function that can be resumed:\n```vox\nworkflow ship(id: int) to int {\n  ret id\n}\n"
              "```\nand a made-up one:\n```vox\nprint(undefined_thing)\n```\n```vox\n// just a comment\n```\n")
    model = FakeModel(answer)
    out: list[str] = []
    result = run_chat(model, lambda _p: None, out.append, prompt="whats a workflow in vox?", check=vox_lang.check)
    text = "".join(out)
    assert not model.calls[0][1].vox and result.verdicts == ()
    assert "[check] example 1 of 2 compiles\n" in text
    assert "[check] example 2 of 2 does not compile: E0401 at 1:7 " in text
    assert "vox-script-verify" not in text


def test_a_prose_answer_without_blocks_gets_no_check_lines() -> None:
    import vox_lang

    out: list[str] = []
    run_chat(FakeModel("A workflow is resumable."), lambda _p: None, out.append, prompt="whats a workflow?",
             check=vox_lang.check)
    assert "[check]" not in "".join(out)
