"""Compiler-verified best-of-n: the pick rule, candidate counts, and the chat transcript (scripted
sampler and, end to end, the loopback replay server through the real router)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import pytest

from serving.best_of_n import (
    DEFAULT_LOCAL_CANDIDATES,
    Samples,
    best_of_n_events,
    candidate_count,
    check_candidate,
    pick,
)
from serving.cascade import AttemptFailed, Completed, TextDelta
from serving.chat import ChatOptions, routed_sender, run_chat

REQUEST = "Write a Vox function `double(n: int) to int` that doubles n."
GOOD = "```vox\nfn double(n: int) to int { ret n * 2 }\n```"
WRONG_NAME = "```vox\nfn twice(n: int) to int { ret n * 2 }\n```"
ONE_ERROR = "```vox\nfn double(n: int) to int { ret m * 2 }\n```"
TWO_ERRORS = "```vox\nfn double(n: int) to int { ret m * k }\n```"


class Local:
    id, provider, litellm_model, api_base = "local/tiny", "local", "openai/tiny", "http://127.0.0.1:9/v1"
    input_usd_per_mtok = output_usd_per_mtok = 0.0
    max_tokens = None


def test_pick_first_passing_else_compiling_else_fewest_errors() -> None:
    chosen = pick([TWO_ERRORS, WRONG_NAME, GOOD, GOOD], REQUEST)
    assert chosen.index == 2 and chosen.passed == 2
    assert "2/4 candidates passed" in chosen.summary() and "candidate 3" in chosen.summary()
    assert pick([TWO_ERRORS, WRONG_NAME], REQUEST).index == 1  # compiles, but misses `double`
    none = pick([TWO_ERRORS, "no code at all", ONE_ERROR], REQUEST)
    assert none.index == 2 and none.passed == 0 and "fewest errors: 1" in none.summary()


def test_of_as_many_errors_the_candidate_declaring_what_was_asked_is_kept() -> None:
    """The chat's order (serving.chat_repair.Attempt.better_than): requested items declared break a
    tie of errors; the earlier candidate only on a full tie."""
    unasked = "```vox\nfn twice(n: int) to int { ret m * k }\n```"  # two errors, `double` not declared
    assert pick([unasked, TWO_ERRORS], REQUEST).index == 1
    assert pick([TWO_ERRORS, TWO_ERRORS], REQUEST).index == 0


def test_a_cut_off_candidate_ranks_after_complete_ones() -> None:
    cut = "```vox\nfn double(n: int) to int {\n  ret n * (2 +"  # hit its token limit: one E0203, no end
    assert check_candidate(cut, REQUEST).cut and not check_candidate(TWO_ERRORS, REQUEST).cut
    chosen = pick([cut, TWO_ERRORS], REQUEST)
    assert chosen.index == 1 and "fewest errors: 2" in chosen.summary()
    only_cut = pick([cut, "no code at all"], REQUEST)
    assert only_cut.index == 0 and "every candidate cut off" in only_cut.summary()


def test_a_candidate_whose_syntax_stopped_type_checking_ranks_after_checked_ones() -> None:
    hidden = "```vox\nfn double(n: int) to int {\n  let v = 1\n  <p>x</p>\n  ret m\n}\n```"  # one E0305
    verdict = check_candidate(hidden, REQUEST)
    assert verdict.errors == 1 and not verdict.typed and check_candidate(TWO_ERRORS, REQUEST).typed
    chosen = pick([hidden, TWO_ERRORS], REQUEST)
    assert chosen.index == 1 and "fewest errors: 2" in chosen.summary()


def test_candidates_are_judged_as_the_chat_verifies_them() -> None:
    # A comment-only block compiles with zero errors but is no program (the chat's verify says FAIL).
    comments = "```vox\n// double n\n```"
    assert pick([comments, GOOD], "Write a Vox program that doubles a number.").index == 1
    assert not check_candidate(comments, REQUEST).passed and not check_candidate(comments, REQUEST).has_code
    # A draft, then the corrected program: the last complete block is the program (as in verify_answer).
    draft = ONE_ERROR + "\nFixed:\n" + GOOD
    assert check_candidate(draft, REQUEST).passed


def test_candidate_count_local_default_hosted_one_unless_asked() -> None:
    class Hosted:
        provider = "openai"

    assert candidate_count(None, Local()) == DEFAULT_LOCAL_CANDIDATES == 8
    assert candidate_count(None, Hosted()) == 1
    assert candidate_count(3, Hosted()) == 3 and candidate_count(1, Local()) == 1


def _ignore(_text: str) -> None:
    """A ``write`` that drops the transcript."""


def _fake_send(texts: Sequence[str], notes: list[str], sampled: list[int], repairs: Sequence[str] = ()) -> Any:
    """A ``send`` like routed_sender's: best-of-n on the first answer of a Vox turn, then one answer
    per repair call (``repairs`` in order, then GOOD); ``send.sent`` records each repair call's messages."""
    queue = list(texts)
    fixes = list(repairs)

    def sample(candidate: Any, messages: Sequence[Mapping[str, str]], n: int) -> Samples:
        sampled.append(n)
        return Samples(tuple(queue[:n]), 10, 20)

    def send(messages: Sequence[Mapping[str, str]], turn: Any) -> Any:
        if turn.repair == 0:
            return best_of_n_events(Local(), messages, 4, turn.request, sample=sample, fallback=lambda: [],
                                    explain=notes.append)
        send.sent.append([dict(m) for m in messages])  # type: ignore[attr-defined]
        text = fixes.pop(0) if fixes else GOOD
        return [TextDelta(text, "local/tiny"), Completed("local/tiny", text, 5, 5, 0.0, False, ())]

    send.sent = []  # type: ignore[attr-defined]
    return send


def test_chat_answers_with_the_first_passing_candidate() -> None:
    out: list[str] = []
    notes: list[str] = []
    sampled: list[int] = []
    result = run_chat(_fake_send([ONE_ERROR, GOOD, GOOD, WRONG_NAME], notes, sampled), lambda _p: None,
                      out.append, prompt=REQUEST)
    text = "".join(out)
    assert sampled == [4] and result.verdicts == ("PASS",) and result.calls == 1
    assert "[local/tiny]\n" + GOOD in text and "ret m" not in text
    assert notes == ["[best-of-4] 2/4 candidates passed the check; answering with candidate 2\n"]


def test_chat_repairs_from_the_best_candidate_when_none_passes() -> None:
    out: list[str] = []
    notes: list[str] = []
    result = run_chat(_fake_send([TWO_ERRORS, ONE_ERROR, TWO_ERRORS, TWO_ERRORS], notes, []), lambda _p: None,
                      out.append, prompt=REQUEST, options=ChatOptions(max_repairs=1))
    text = "".join(out)
    assert result.verdicts == ("PASS",) and result.calls == 2
    assert "[check] 1 error(s) in 1 ```vox block(s); repair 1/1" in text  # repair starts from ONE_ERROR
    assert "0/4 candidates passed" in notes[0] and "candidate 2" in notes[0]


def test_a_worse_repair_is_discarded_and_the_best_candidate_is_shown_at_the_end() -> None:
    # Real front end: the best candidate has 1 error; both repairs come back with 2 (a repair that got
    # worse used to be repaired further and shown as the result).
    out: list[str] = []
    notes: list[str] = []
    send = _fake_send([TWO_ERRORS, ONE_ERROR, TWO_ERRORS, TWO_ERRORS], notes, [], repairs=[TWO_ERRORS, TWO_ERRORS])
    result = run_chat(send, lambda _p: None, out.append, prompt=REQUEST)
    text = "".join(out)
    assert result.verdicts == ("FAIL",) and result.calls == 3
    best = {"role": "assistant", "content": ONE_ERROR}
    assert [msgs[2] for msgs in send.sent] == [best, best]  # each round repairs the best program
    worse = ("repair {} is worse than the first answer (2 error(s) in 1 ```vox block(s); "
             "the first answer: 1 error(s) in 1 ```vox block(s)): discarded, the first answer stays the best\n")
    assert len(notes) == 1 and "[repair]" not in text  # the routing notes hold only the best-of-n line
    assert text.count("[check] " + worse.format(1)) == 1 and text.count("[check] " + worse.format(2)) == 1
    tail = text[text.rindex("[check] the best attempt"):]
    assert tail.startswith("[check] the best attempt is the first answer (1 error(s) in 1 ```vox block(s)):\n"
                           + ONE_ERROR + "\nvox-script-verify: FAIL\n")
    assert "`m`" in tail and "`k`" not in tail  # the best program's diagnostics, not the last answer's


def test_failed_sampling_falls_back_to_the_cascade() -> None:
    def broken(candidate: Any, messages: Any, n: int) -> Samples:
        raise ConnectionError("refused")

    events = list(best_of_n_events(Local(), [], 4, REQUEST, sample=broken,
                                   fallback=lambda: [Completed("local/tiny", GOOD, 1, 1, 0.0, False, ())]))
    assert isinstance(events[0], AttemptFailed) and "best-of-4: ConnectionError: refused" in events[0].reason
    assert isinstance(events[-1], Completed) and events[-1].text == GOOD


def test_a_failed_best_of_n_call_is_worded_as_the_cascade_words_it() -> None:
    # a stopped vox serve read "best-of-8: InternalServerError: litellm.InternalServerError: ..." (new-user trial)
    import litellm

    def gone(candidate: Any, messages: Any, n: int) -> Samples:
        raise litellm.InternalServerError(message="Connection error.", llm_provider="openai", model="tiny")

    events = list(best_of_n_events(Local(), [], 8, REQUEST, sample=gone, fallback=lambda: []))
    assert isinstance(events[0], AttemptFailed) and events[0].failure is not None
    assert events[0].reason == ("best-of-8: APIConnectionError: no answer from http://127.0.0.1:9/v1 (the connection "
                                "failed); start the server (vox serve) or correct VOX_LOCAL_ENDPOINTS")


def test_local_model_gets_its_candidates_in_one_request_end_to_end(replay: Any) -> None:
    # --candidates 4: the replay server scripts four answers
    from tests.serving.test_repair_loop import catalog_for

    out: list[str] = []
    notes: list[str] = []
    # The replay server answers one choice per request, so the sampler asks again for the rest.
    with replay.ReplayServer([TWO_ERRORS, WRONG_NAME, GOOD, ONE_ERROR], model="replay-model") as server:
        send = routed_sender(catalog_for(server.base_url), {}, "free", timeout=10, explain=notes.append, candidates=4)
        result = run_chat(send, lambda _p: None, out.append, prompt=REQUEST)
        requests = server.requests
    assert result.verdicts == ("PASS",)
    assert requests[0]["n"] == 4 and len(requests) == 4 and not requests[0].get("stream")
    assert any("1/4 candidates passed the check; answering with candidate 3" in n for n in notes)
    assert "[local/replay-model]\n" + GOOD in "".join(out)


def test_each_repair_call_to_a_local_model_is_best_of_n_too(replay: Any) -> None:
    # No first candidate passes; the repair call asks for 4 candidates again and answers with the one
    # that passes (the third), so one repair round suffices where one repair sample would fail.
    from tests.serving.test_repair_loop import catalog_for

    out: list[str] = []
    notes: list[str] = []
    script = [TWO_ERRORS, ONE_ERROR, TWO_ERRORS, TWO_ERRORS, ONE_ERROR, TWO_ERRORS, GOOD, ONE_ERROR]
    with replay.ReplayServer(script, model="replay-model") as server:
        send = routed_sender(catalog_for(server.base_url), {}, "free", timeout=10, explain=notes.append, candidates=4)
        result = run_chat(send, lambda _p: None, out.append, prompt=REQUEST, options=ChatOptions(max_repairs=1))
        requests = server.requests
    assert result.verdicts == ("PASS",) and len(requests) == 8
    assert requests[0]["n"] == 4 and requests[4]["n"] == 4  # the first answer, then the repair call
    assert "error[E0401]" in requests[4]["messages"][-1]["content"]  # the repair feedback went with it
    assert any("0/4 candidates passed the check; keeping candidate 2 (fewest errors: 1)" in n for n in notes)
    assert any("1/4 candidates passed the check; answering with candidate 3" in n for n in notes)


def test_progress_lines_name_each_call_and_stay_off_the_transcript(replay: Any) -> None:
    # new-user trial: a one-shot local answer took 55-70 s with nothing on screen unless --explain;
    # the CLI sends these lines to stderr, so stdout (the transcript) stays the answer alone
    from tests.serving.test_repair_loop import catalog_for

    out: list[str] = []
    progress: list[str] = []
    script = [TWO_ERRORS, ONE_ERROR, TWO_ERRORS, TWO_ERRORS, ONE_ERROR, TWO_ERRORS, GOOD, ONE_ERROR]
    with replay.ReplayServer(script, model="replay-model") as server:
        send = routed_sender(catalog_for(server.base_url), {}, "free", timeout=10, candidates=4,
                             progress=progress.append)
        result = run_chat(send, lambda _p: None, out.append, prompt=REQUEST, options=ChatOptions(max_repairs=1))
    assert result.verdicts == ("PASS",)
    assert progress == ["[vox] sampling 4 candidates from local/replay-model ...\n",
                        "[vox] repair 1: sampling 4 candidates from local/replay-model ...\n"]
    assert "[vox]" not in "".join(out)


def test_a_server_refusing_n_gets_one_call_per_candidate(replay: Any) -> None:
    from tests.serving.test_repair_loop import catalog_for

    out: list[str] = []
    refused = replay.Scripted("only n=1 is supported", status=400)
    with replay.ReplayServer([refused, ONE_ERROR, GOOD, GOOD, GOOD], model="replay-model") as server:
        send = routed_sender(catalog_for(server.base_url), {}, "free", timeout=10, candidates=4)
        result = run_chat(send, lambda _p: None, out.append, prompt=REQUEST)
        requests = server.requests
    assert result.verdicts == ("PASS",) and len(requests) == 5
    assert requests[0]["n"] == 4 and all("n" not in r or r["n"] == 1 for r in requests[1:])


def _counted_engine(export: Any) -> tuple[Any, list[int]]:
    """The tiny export's engine, recording each generation's ``n``."""
    from serving.engine import Engine

    engine = Engine.load(export, device="cpu")
    calls: list[int] = []
    original = engine.completions

    def completions(prepared: Any, cancel: Any = None) -> Any:
        calls.append(prepared.n)
        return original(prepared, cancel)

    engine.completions = completions  # type: ignore[method-assign]  # records each generation
    return engine, calls


def test_local_vox_serve_answers_all_candidates_in_one_generation(tiny_export_dir: Any) -> None:
    # Through the real `vox serve` (tiny random model) and the real router: the default candidates are
    # one request with that n, generated in one batch (one engine call); --explain counts the passes.
    from serving.server import ServerThread
    from tests.serving.test_repair_loop import catalog_for

    engine, calls = _counted_engine(tiny_export_dir)
    server = ServerThread(engine)
    server.start()
    try:
        catalog = catalog_for(server.base_url)
        entry = replace(catalog.entries[0], id=f"local/{engine.model_id}", litellm_model=f"openai/{engine.model_id}")
        catalog = catalog.with_entries([entry])
        notes: list[str] = []
        send = routed_sender(catalog, {}, "free", timeout=30, max_tokens=24, explain=notes.append)
        result = run_chat(send, lambda _p: None, _ignore, prompt=REQUEST, options=ChatOptions(max_repairs=0))
    finally:
        server.stop()
    n = DEFAULT_LOCAL_CANDIDATES
    assert calls[0] == n and calls.count(n) == 1  # one generation of n choices, not n requests
    assert any(f"[best-of-{n}]" in x and f"/{n} candidates passed" in x for x in notes), notes
    assert result.calls >= 1


def test_a_400_about_another_field_is_not_retried_per_candidate(replay: Any) -> None:
    # "max_tokens=... is too large" holds the letter n; it used to be read as "n refused" and asked 4 times.
    from tests.serving.test_repair_loop import catalog_for

    too_long = replay.Scripted("max_tokens=1024 is too large: the prompt is 12 tokens", status=400)
    with replay.ReplayServer([too_long, GOOD], model="replay-model") as server:
        send = routed_sender(catalog_for(server.base_url), {}, "free", timeout=10, candidates=4)
        result = run_chat(send, lambda _p: None, _ignore, prompt=REQUEST)
        requests = server.requests
    assert result.verdicts == ("PASS",) and len(requests) == 2  # the n=4 call, then the cascade's one
    assert requests[0]["n"] == 4 and requests[1].get("n", 1) == 1


def test_best_of_n_requests_spread_over_the_deployments_of_a_local_model(monkeypatch: Any) -> None:
    """A local model served by several endpoints (one catalog model, several deployments): each
    best-of-n request goes to one of them, not always to the first."""
    from types import SimpleNamespace

    import litellm

    from serving.best_of_n import litellm_sampler

    seen: list[str] = []

    def fake_completion(**params: Any) -> Any:
        seen.append(params["api_base"])
        choice = SimpleNamespace(message=SimpleNamespace(content=GOOD))
        return SimpleNamespace(choices=[choice] * params.get("n", 1), usage=None)

    monkeypatch.setattr(litellm, "completion", fake_completion)
    two = type("Two", (Local,), {"deployments": ("http://127.0.0.1:9/v1", "http://127.0.0.1:10/v1")})
    sample = litellm_sampler({})
    for _ in range(40):
        assert sample(two, [{"role": "user", "content": REQUEST}], 4).texts == (GOOD,) * 4
    assert set(seen) == {"http://127.0.0.1:9/v1", "http://127.0.0.1:10/v1"}


def test_a_script_request_needs_a_statement_to_pass() -> None:
    from serving.best_of_n import check_candidate, pick

    request = "Write a Vox script that prints the sum of 2 and 3."
    idle = "```vox\nfn add(a: int, b: int) to int {\n  ret a + b\n}\n```"
    runs = "```vox\nfn add(a: int, b: int) to int {\n  ret a + b\n}\nprint(add(2, 3))\n```"
    verdict = check_candidate(idle, request)
    assert verdict.unmet == "script" and not verdict.passed and verdict.errors == 0
    assert check_candidate(runs, request).passed
    assert check_candidate(idle, "Write a function `add(a: int, b: int) to int`.").passed  # no script asked
    chosen = pick([idle, runs], request)
    assert chosen.index == 1 and chosen.passed == 1
    assert "runs nothing: a script was asked" in pick([idle], request).summary()
    main = "```vox\nfn main() {\n  print(2 + 3)\n}\n```"  # spec §11: `vox run` runs it
    assert check_candidate(main, request).passed


def test_a_candidate_whose_tests_fail_does_not_pass() -> None:
    """The check the summary reports is the chat's whole check: a candidate whose ``@test``
    functions fail does not pass (a new-user trial read "3/8 candidates passed the check" and
    then "2/2 test(s) failed" for the chosen one)."""
    failing = ("```vox\nfn double(n: int) to int { ret n * 3 }\n@test\nfn test_double() {\n"
               "  assert(double(2) == 4)\n}\n```")
    passing = failing.replace("n * 3", "n * 2")
    verdict = check_candidate(failing, REQUEST)
    assert verdict.errors == 0 and verdict.tests_failed == 1 and not verdict.passed
    assert check_candidate(passing, REQUEST).passed
    chosen = pick([failing, passing], REQUEST)
    assert chosen.index == 1 and chosen.passed == 1 and "1/2 candidates passed" in chosen.summary()
    alone = pick([failing], REQUEST)
    assert alone.index == 0 and "1 test(s) fail" in alone.summary()


def test_a_fix_request_needs_the_items_of_its_pasted_code() -> None:
    request = "Fix this Vox code: fn double(x: int) -> int { return x * 2 }"
    assert check_candidate(WRONG_NAME, request).missing == ("double",)
    assert check_candidate(GOOD, request).passed


def test_a_candidate_whose_test_never_ends_fails_within_the_screening_limits() -> None:
    import time

    looping = ("```vox\nfn double(n: int) to int { ret n * 2 }\n@test\nfn test_spin() {\n  let mut i = 0\n"
               "  while true { i += 1 }\n}\n```")
    start = time.perf_counter()
    verdict = check_candidate(looping, REQUEST)
    assert verdict.tests_failed == 1 and not verdict.passed
    assert time.perf_counter() - start < 30  # bounded by CANDIDATE_TEST_STEPS, not spec §11's 10M steps


def test_a_candidate_s_tests_share_one_time_budget(monkeypatch: Any) -> None:
    """CANDIDATE_TEST_SECONDS bounds a candidate, not each of its tests: five tests that each
    sleep until the limit took five limits (10 s a candidate, minutes for eight)."""
    import time

    import serving.best_of_n as bon

    monkeypatch.setattr(bon, "CANDIDATE_TEST_SECONDS", 0.3)
    tests = "".join(f"@test\nfn test_{i}() {{\n  time.sleep(60000)\n}}\n" for i in range(5))
    sleepy = f"```vox\nimport std.time\nfn double(n: int) to int {{ ret n * 2 }}\n{tests}```"
    start = time.perf_counter()
    verdict = check_candidate(sleepy, REQUEST)
    elapsed = time.perf_counter() - start
    assert verdict.tests_failed == 5 and not verdict.passed
    assert elapsed < 0.3 + 1.0, elapsed  # per-test limits would take 5 × 0.3 s


def test_a_request_for_tests_needs_a_test_function_to_pass() -> None:
    """"Now also add a @test function" answered without one passed (a new-user trial)."""
    from serving.best_of_n import check_candidate, pick

    request = "Write a Vox function `double(n: int) to int` with a test."
    bare = "```vox\nfn double(n: int) to int {\n  ret n * 2\n}\n```"
    tested = bare[:-3] + "@test fn doubles() {\n  assert(double(2) == 4)\n}\n```"
    assert check_candidate(bare, request).unmet == "tests" and not check_candidate(bare, request).passed
    assert check_candidate(tested, request).passed
    assert check_candidate(bare, "Write a Vox function `double(n: int) to int`, no tests.").passed
    assert "has no @test function: tests were asked" in pick([bare], request).summary()


def test_a_server_answering_no_choices_fails_the_attempt_instead_of_looping(replay: Any) -> None:
    # new-user trial: a server answering 200 with "choices": [] made the sampler ask again forever
    # (7,690 requests in 30 s); it is one failed attempt, then the cascade, which fails the same way
    import pytest

    from serving.errors import AllProvidersFailed
    from tests.serving.test_repair_loop import catalog_for

    empty = replay.Scripted("", no_choices=True)
    out: list[str] = []
    with replay.ReplayServer([empty], model="replay-model") as server:
        send = routed_sender(catalog_for(server.base_url), {}, "free", timeout=10, candidates=4)
        # the cascade's streamed call then fails too (LiteLLM: "Stream ended before a finish_reason")
        with pytest.raises(AllProvidersFailed):
            run_chat(send, lambda _p: None, out.append, prompt=REQUEST)
        requests = server.requests
    assert len(requests) <= 3, len(requests)  # best-of-n: n=4, then once more; then the cascade's call
    assert "best-of-4: EmptyAnswer: the model returned no choices" in "".join(out)


def test_blank_candidates_are_an_empty_answer_not_a_pick(replay: Any) -> None:
    import pytest

    from serving.errors import AllProvidersFailed
    from tests.serving.test_repair_loop import catalog_for

    with replay.ReplayServer(["  \n"], model="replay-model") as server:
        send = routed_sender(catalog_for(server.base_url), {}, "free", timeout=10, candidates=2)
        with pytest.raises(AllProvidersFailed, match="empty answer|streamed no text"):
            run_chat(send, lambda _p: None, lambda _t: None, prompt=REQUEST)


def test_a_server_with_a_lower_max_n_is_asked_in_batches_it_gives(tiny_export_dir: Any) -> None:
    """A new-user trial: `vox serve --max-n 4` and the default best-of-8 gave a 400, then 8 calls
    of one choice each, on every turn (3x slower). Now: batches of the limit the 400 names,
    remembered for the session (a repair turn asks for 4 at once at the first try)."""
    from serving.server import ServerThread
    from tests.serving.test_repair_loop import catalog_for

    engine, calls = _counted_engine(tiny_export_dir)
    server = ServerThread(engine, max_n=4)
    server.start()
    try:
        catalog = catalog_for(server.base_url)
        entry = replace(catalog.entries[0], id=f"local/{engine.model_id}", litellm_model=f"openai/{engine.model_id}")
        send = routed_sender(catalog.with_entries([entry]), {}, "free", timeout=30, max_tokens=16, candidates=9)
        run_chat(send, lambda _p: None, _ignore, prompt=REQUEST, options=ChatOptions(max_repairs=1))
    finally:
        server.stop()
    assert calls[:3] == [4, 4, 1], calls  # 9 = 4 + 4 + 1 after the 400 naming "at most 4"
    assert calls[3:] in ([], [4, 4, 1]), calls  # a repair turn, if one ran, without a 400 first


@pytest.mark.parametrize(("message", "limit"), [
    ("n=9 is too many choices: this server generates at most 4 per request (vox serve --max-n)", 4),
    ("n must be <= 8", 8),
    ("only n=1 is supported", None),
    ("the maximum of 1 choice", None),
])
def test_the_limit_a_400_names(message: str, limit: int | None) -> None:
    from serving.best_of_n import n_limit

    assert n_limit(message) == limit
