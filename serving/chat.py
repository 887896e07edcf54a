"""The chat loop as a plain function: :func:`run_chat(send, read_line, write)`.

One-shot (``prompt`` given) or REPL (lines from ``read_line`` until ``None`` or ``/exit``).
Answers stream through ``write`` as they arrive, reasoning sections hidden. For a Vox code
request the SSOT system prompt is injected (unless a system prompt is given), the ```vox
blocks of the answer are checked together as one module with :func:`vox_lang.check`, and while
errors remain (at most ``max_repairs`` times) the diagnostics go back to the model in the
repair format. A repair call sends a compact history
(:func:`serving.chat_repair.repair_messages`): the request, the checked program alone (no prose,
no reasoning, no earlier failed attempts) and the diagnostics, so it fits small local context
windows. Each round repairs the attempt closest to passing so far (by stage, errors, requested
items declared, warnings, then the later one: :meth:`serving.chat_repair.Attempt.better_than`): a
repair that comes back worse is discarded (one ``[check]`` note in the transcript), and a turn that
fails ends on the best attempt, shown again when a later answer was worse. In a REPL session a
follow-up's attempts are also ranked against the last program that passed, which a FAIL never
silently replaces (:mod:`serving.chat_followup`; ``/last`` shows it). The turn ends with
``vox-script-verify: PASS`` (zero errors, its ``@test`` functions pass, and it declares every item
the request names:
:func:`vox_lang.requests.missing_items`; a program that compiles without one is repaired like an
error, and so is one with no top-level statement or ``fn main()`` where the request asks for a script,
:func:`vox_lang.script_requests.runs_nothing`) or ``FAIL`` and the remaining diagnostics; when no
model can take a repair call (e.g. the repair prompt does not fit any context window), repair
stops with a ``[check] repair stopped: ...`` note and ``FAIL``. Model output is only ever parsed
and checked, never executed, except its ``@test`` functions, run with no capabilities.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from serving.chat_followup import LAST_COMMAND, Passed, base_attempt, kept_note, last_text
from serving.chat_repair import (
    Attempt,
    assess,
    discarded_note,
    program_tests,
    repair_messages,
    repair_stopped_note,
    request_gaps,
)
from serving.errors import AllProvidersFailed, BudgetExceeded, NoCandidates, ServingError
from serving.extract import ThinkFilter
from serving.intent import is_question, is_vox_request, refuses_code
from serving.keys import redact
from serving.provider_status import ProviderHealth
from serving.router import DEFAULT_MAX_TOKENS, AttemptFailed, ChatEvent, Completed, TextDelta
from serving.verify import example_notes, verify_answer
from vox_lang.pasted import asked_items

Message = Mapping[str, str]
EXIT_COMMANDS = ("/exit", "/quit", ":q")
HELP_COMMANDS = ("/help", "/?")
#: what the REPL prints for /help (with or without more words), a bare ``/`` or another ``/word``
REPL_HELP = (f"commands (any case): /help (this), {LAST_COMMAND} (show the last program that passed), /exit, "
             "/quit or :q (end the session; so do Ctrl-D and an empty input stream); any other line is sent to "
             "the model\n")


@dataclass(frozen=True)
class Turn:
    """What ``send`` is told besides the messages.

    Attributes:
        request: the user's request of this turn (unchanged across repair rounds).
        vox: this turn is a Vox code request.
        repair: 0 for the first answer, n for the n-th repair round.
        budget_usd: what is left of ``--max-cost`` (``None`` = no cap).
    """

    request: str
    vox: bool
    repair: int = 0
    budget_usd: float | None = None


Send = Callable[[Sequence[Message], Turn], Iterable[ChatEvent]]


@dataclass(frozen=True)
class ChatOptions:
    """Settings of one chat session.

    Attributes:
        system: system prompt for every turn (``--system``); overrides the SSOT prompt.
        max_repairs: repair rounds per Vox turn (design: 2).
        vox: force Vox-code handling on (True) or off (False); ``None`` detects per request.
        max_cost_usd: spend cap for the whole chat, USD.
        prompt: REPL prompt string.
    """

    system: str | None = None
    max_repairs: int = 2
    vox: bool | None = None
    max_cost_usd: float | None = None
    prompt: str = "vox> "


@dataclass
class _Session:
    """Running totals (mutable: one per :func:`run_chat` call)."""

    history: list[dict[str, str]] = field(default_factory=list)
    calls: int = 0
    failed: int = 0  # model attempts that failed (a provider error, a timeout): not counted in ``calls``
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    cost_unknown: bool = False
    estimated: bool = False
    models: list[str] = field(default_factory=list)
    verdicts: list[str] = field(default_factory=list)
    vox_active: bool = False
    finish_reason: str | None = None  # of the latest answer ("length": it hit the token limit)
    turns: int = 0  # requests sent to the model so far
    last_pass: Passed | None = None  # the program of the latest turn that ended PASS


@dataclass(frozen=True)
class ChatResult:
    """Outcome of a chat: per Vox turn ``"PASS"``/``"FAIL"``, usage and cost (USD); ``budget_spent``:
    a REPL session ended because ``--max-cost`` was spent, not by the user."""

    verdicts: tuple[str, ...]
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    models: tuple[str, ...]
    budget_spent: bool = False

    @property
    def ok(self) -> bool:
        """True when every Vox turn passed."""
        return all(v == "PASS" for v in self.verdicts)

    def exit_code(self, interactive: bool) -> int:
        """The `vox chat` exit status: a one-shot chat's follows its verdict (1 on FAIL); an interactive
        session the user ended (``/exit``, Ctrl-D, end of input) exits 0 whatever its turns' verdicts or
        errors (each was shown), 1 only when the spent budget ended it."""
        if interactive:
            return 1 if self.budget_spent else 0
        return 0 if self.ok else 1


def _default_check(source: str) -> Any:
    import vox_lang

    return vox_lang.check(source, path="answer.vox")


def _render_repair(diags: Sequence[Any]) -> str:
    import vox_lang

    return str(vox_lang.render_repair(list(diags)))


def _system_prompt() -> str:
    from pipeline.prompt import system_prompt

    return system_prompt()


def run_chat(send: Send, read_line: Callable[[str], str | None], write: Callable[[str], None], *,
             prompt: str | None = None, options: ChatOptions = ChatOptions(),
             check: Callable[[str], Any] = _default_check) -> ChatResult:
    """Run a one-shot chat (``prompt``) or a REPL (``prompt is None``).

    Args:
        send: ``(messages, turn) -> events`` (:class:`TextDelta`, :class:`AttemptFailed`,
            :class:`Completed`); raises :class:`ServingError` when no model answers.
        read_line: ``(prompt) -> line`` or ``None`` at end of input (REPL only).
        write: output sink for the transcript (text, newlines included).
        prompt: the one-shot request.
        options: see :class:`ChatOptions`.
        check: ``source -> CheckResult`` (default :func:`vox_lang.check`).

    Returns:
        The session's verdicts and usage; the usage line is also written.

    Raises:
        ServingError: one-shot only (the REPL reports the error and carries on), e.g.
            :class:`AllProvidersFailed`, :class:`NoCandidates`, :class:`BudgetExceeded`.
    """
    s = _Session()
    budget_spent = False
    if options.system is not None:
        s.history.append({"role": "system", "content": options.system})
    try:
        if prompt is not None:
            _turn(prompt, send, write, options, check, s)
        else:
            while True:
                line = read_line(options.prompt)
                if line is None:  # end of input (Ctrl-D): the summary goes below the prompt
                    write("\n")
                    break
                text = line.strip()
                if not text:
                    continue
                command = text.lower() if text.startswith(("/", ":")) else text  # `/Quit` is `/quit`
                if command in EXIT_COMMANDS:
                    break
                if command == LAST_COMMAND:
                    write(last_text(s.last_pass))  # never sent to the model
                    continue
                word = command.split()[0]
                if word in HELP_COMMANDS or text == "/" or (text.startswith("/") and " " not in text
                                                            and text[1:].isalpha()):
                    if word not in HELP_COMMANDS:
                        write(f"unknown command {text}; ")
                    write(REPL_HELP)  # never sent to the model
                    continue
                try:
                    _turn(text, send, write, options, check, s)
                except BudgetExceeded as exc:
                    write(f"[budget] {exc}\n")
                    budget_spent = True
                    break
                except ServingError as exc:
                    write(f"error: {redact(str(exc))}\n")
    finally:
        write(_usage_line(s))
    return ChatResult(tuple(s.verdicts), s.calls, s.prompt_tokens, s.completion_tokens, s.cost_usd, tuple(s.models),
                      budget_spent)


def _turn(text: str, send: Send, write: Callable[[str], None], options: ChatOptions,
          check: Callable[[str], Any], s: _Session) -> None:
    # a Vox conversation stays one (a follow-up need not say Vox), unless this turn refuses code
    # or only asks a question ("whats a workflow?"; "what if it took a list?" asks for a change)
    auto = is_vox_request(text) or (s.vox_active and not refuses_code(text) and not is_question(text))
    vox = options.vox if options.vox is not None else auto
    if vox and not s.vox_active and options.system is None:
        s.history.insert(0, {"role": "system", "content": _system_prompt()})
    s.vox_active = s.vox_active or vox
    base = list(s.history)  # the conversation before this turn
    s.turns += 1
    s.history.append({"role": "user", "content": text})
    answer = _ask(send, s.history, Turn(text, vox), write, options, s)
    s.history.append({"role": "assistant", "content": answer})
    if not vox:
        for note in example_notes(answer, check):  # a question's examples: checked, no verdict
            write(f"[check] {note}\n")
        return
    asked = asked_items(text)  # backticked items, and those of code pasted to be fixed
    # the attempt closest to passing so far; a follow-up starts from the last passing program
    best: Attempt | None = base_attempt(s.last_pass, text, asked, _render_repair) if s.last_pass else None
    for repair in range(options.max_repairs + 1):
        verified = verify_answer(answer, check, finish_reason=s.finish_reason)
        program, result = verified.program, verified.result
        for note in verified.notes:
            write(f"[check] {note}\n")
        # what the request names and the program lacks, and the shape asked and missing: "script"
        # (runs nothing) or "tests" (no @test); they rank a program with errors too
        missing, unmet = request_gaps(asked, text, program)
        complete = result is not None and not result.errors and not missing and not unmet
        tests = program_tests(program) if complete else None
        if complete and result is not None and (tests is None or not tests.failed):
            if result.warnings:
                write(f"[check] 0 errors, {len(result.warnings)} warning(s):\n{_render_repair(result.warnings)}\n")
            checked = f" ({tests.verify_note()})" if tests is not None else ""
            write(f"vox-script-verify: PASS{checked}{verified.caveat}\n")
            s.history[-1] = {"role": "assistant", "content": answer}
            s.verdicts.append("PASS")
            s.last_pass = Passed(s.turns, answer, verified)
            return
        attempt = assess(repair, answer, verified, tests, _render_repair, missing, unmet)
        if best is None or attempt.better_than(best):
            best = attempt
        else:  # repair the best program again, never build on (or end with) a worse one
            write(f"[check] {discarded_note(attempt, best)}\n")  # once: the transcript, --explain or not
        # The conversation keeps the request and the best answer, not the failed attempts.
        s.history[-1] = {"role": "assistant", "content": best.answer}
        if repair == options.max_repairs or not best.repairable:
            _fail(write, s, best, repair)
            return
        write(f"[check] {best.summary}; repair {repair + 1}/{options.max_repairs}, sending:\n{best.feedback}\n")
        messages = repair_messages(base, text, best.program, best.answer, best.feedback)
        try:
            answer = _ask(send, messages, Turn(text, vox, repair + 1), write, options, s)
        except (NoCandidates, AllProvidersFailed) as exc:  # an answer is shown: end with its verdict
            write(f"[check] {repair_stopped_note(exc)}\n")
            _fail(write, s, best, repair)
            return


def _fail(write: Callable[[str], None], s: _Session, best: Attempt, last_round: int) -> None:
    """End the turn with FAIL and ``best``'s diagnostics; ``best`` is shown again first when it is
    not the latest answer (round ``last_round``) the transcript shows."""
    if best.round != last_round:
        write(f"[check] the best attempt is {best.name} ({best.summary}):\n{best.shown()}\n")
    write("vox-script-verify: FAIL\n" + best.remaining)
    if s.last_pass is not None:  # a follow-up's FAIL never silently replaces the program that passed
        write(f"[check] {kept_note(s.last_pass)}\n")
    s.verdicts.append("FAIL")


def _ask(send: Send, messages: Sequence[Message], turn: Turn, write: Callable[[str], None], options: ChatOptions,
         s: _Session) -> str:
    """One model call with ``messages``: stream the answer, report failed attempts, add usage;
    returns the answer's text (the caller records it in the history)."""
    budget = None
    if options.max_cost_usd is not None:
        budget = options.max_cost_usd - s.cost_usd
        if budget <= 0:
            raise BudgetExceeded(f"--max-cost ${options.max_cost_usd:.4f} is spent (${s.cost_usd:.4f} used)")
    turn = Turn(turn.request, turn.vox, turn.repair, budget)
    shown = ThinkFilter()
    current: str | None = None
    at_line_start = True

    def out(text: str) -> None:
        nonlocal at_line_start
        if text:
            write(text)
            at_line_start = text.endswith("\n")

    for event in send([dict(m) for m in messages], turn):
        if isinstance(event, TextDelta):
            if event.model != current:
                current = event.model
                out(("" if at_line_start else "\n") + f"[{event.model}]\n")
                shown = ThinkFilter()
            out(shown.feed(event.text))
        elif isinstance(event, AttemptFailed):
            if event.partial:
                out(shown.flush())
                then = ("another deployment of it answers afresh" if event.next_model == event.model
                        else "the next model answers afresh" if event.next_model else "no model is left to answer")
                out(("" if at_line_start else "\n") + f"[abandoned: partial answer from {event.model} above; "
                    f"{event.reason}; {then}]\n")
            else:
                out(("" if at_line_start else "\n") + f"[failed: {event.model}: {event.reason}]\n")
            s.failed += 1
            current = None
        elif isinstance(event, Completed):
            out(shown.flush())
            if not at_line_start:
                out("\n")
            if shown.hidden_chars:
                out(f"[reasoning hidden: {shown.hidden_chars} characters]\n")
            s.calls += 1
            s.finish_reason = event.finish_reason
            s.prompt_tokens += event.prompt_tokens
            s.completion_tokens += event.completion_tokens
            s.estimated = s.estimated or event.estimated_usage
            if event.cost_usd is None:
                s.cost_unknown = True
            else:
                s.cost_usd += event.cost_usd
            if event.model not in s.models:
                s.models.append(event.model)
            return event.text
    raise ServingError("the model stream ended without a complete answer")


def _usage_line(s: _Session) -> str:
    approx = "~" if s.estimated else ""
    cost = f"${s.cost_usd:.4f}" + (" + unknown" if s.cost_unknown else "")
    models = ", ".join(s.models) or "none"
    failed = f" ({s.failed} failed attempt(s) besides)" if s.failed else ""
    return (f"[session] {s.calls} model call(s){failed}, {approx}{s.prompt_tokens} prompt + "
            f"{approx}{s.completion_tokens} completion tokens, cost {cost}; models: {models}\n")


def progress_line(model: str, n: int, repair: int) -> str:
    """The ``[vox]`` line said before a model call: ``n`` candidates of ``model``, ``repair`` round."""
    what = f"sampling {n} candidates from {model}" if n > 1 else f"asking {model}"
    return f"[vox] {f'repair {repair}: ' if repair else ''}{what} ...\n"


def routed_sender(catalog: Any, keys: Mapping[str, Any], mode: str, *, k: int = 4, local_only: bool = False,
                  explain: Callable[[str], None] | None = None, timeout: float = 120.0,
                  max_tokens: int | None = None, stream: bool = True, mock: Mapping[str, Any] | None = None,
                  health: ProviderHealth | None = None, candidates: int | None = None, sampler: Any = None,
                  progress: Callable[[str], None] | None = None) -> Send:
    """A ``send`` that routes each call with :func:`serving.router.decide` and runs it with
    :func:`serving.router.complete` (the CLI's sender; tests may pass ``mock`` responses).

    Args:
        catalog: the catalog (local reachability already probed).
        keys: provider → :class:`serving.keys.ResolvedKey`.
        mode: ``--model`` value (mode, alias or model id).
        max_tokens: answer cap asked for (``--max-tokens``); ``None``: :data:`serving.router.DEFAULT_MAX_TOKENS`.
        explain: where to print the routing decision of each new request (``--explain``).
        health: the session's :class:`serving.provider_status.ProviderHealth` (default: a fresh
            one that remembers out-of-credit providers for this sender only, writing nothing).
        candidates: best-of-n for every answer of a Vox turn, the first and each repair
            (:mod:`serving.best_of_n`): ``--candidates``; ``None`` = 8 for a local primary model,
            1 for a hosted one.
        sampler: draws the candidates (default: one LiteLLM request with ``n``).
        progress: where to say, before each model call, what is being asked of which model (one
            ``[vox] ...`` line: a local best-of-n call may take a minute with nothing streamed); the
            CLI passes stderr, so that stdout stays the answer alone.
    """
    from serving.best_of_n import best_of_n_events, candidate_count, litellm_sampler
    from serving.router import complete, decide, route_request

    memory = health if health is not None else ProviderHealth()
    given = max_tokens is not None
    limit = max_tokens if max_tokens is not None else DEFAULT_MAX_TOKENS
    # one sampler for the session: it remembers how many choices each server gives per request
    sample = sampler or litellm_sampler(keys, timeout=timeout, max_tokens=limit, mock=mock)

    def send(messages: Sequence[Message], turn: Turn) -> Iterable[ChatEvent]:
        request = route_request(turn.request, messages, max_output_tokens=limit, max_tokens_given=given,
                                category="codegen" if turn.vox else None, vox=turn.vox,
                                local_only=local_only, budget_usd=turn.budget_usd)
        decision = decide(request, mode, catalog=catalog, keys=set(keys), k=k, excluded=memory.excluded())
        if explain is not None and turn.repair == 0:
            explain(decision.explain() + "\n")
        def cascade() -> Iterable[ChatEvent]:
            return complete(decision, messages, keys=keys, stream=stream, timeout=timeout,
                            max_tokens=limit, mock=mock, health=memory)

        n = candidate_count(candidates, decision.primary) if turn.vox else 1
        if progress is not None:
            progress(progress_line(decision.primary.id, n, turn.repair))
        if n > 1:
            return best_of_n_events(decision.primary, messages, n, turn.request, sample=sample, fallback=cascade,
                                    explain=explain)
        return cascade()

    return send
