"""Compiler-verified best-of-n for Vox answers: sample N candidates in one request, answer with
the first that passes the front end.

For a Vox request to a local model, ``vox chat`` asks the model for ``N`` candidates at once
(the OpenAI ``n`` parameter; default :data:`DEFAULT_LOCAL_CANDIDATES`, ``--candidates N``), checks
each with :func:`vox_lang.check` and answers with the first that **passes**: zero errors and
every item the request names declared (:func:`vox_lang.requests.missing_items`). When none
passes, the answer is the candidate with the fewest errors (the first that compiles, if one
compiles but misses a requested name), and the chat's repair loop starts from it. Each repair
call is best-of-n as well (the repaired program that passes, else the one with the fewest errors),
since a small local model fixes a program far more often in N tries than in one. Hosted models
keep one candidate (each costs money) unless ``--candidates`` is given explicitly.

``vox serve`` generates the ``n`` candidates in one batch (one request, one model call). A
server that refuses ``n`` as too many, naming its limit (``vox serve --max-n``: "at most K"), is
asked for K at a time, and the sampler remembers K for that server; one that refuses ``n``
otherwise or returns fewer choices gets the missing candidates as separate calls; a failed
best-of-n call falls back to the ordinary cascade (one candidate). Model output is only parsed
and checked, never executed.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from serving.cascade import LOCAL_API_KEY, AttemptFailed, ChatEvent, Completed, TextDelta, import_litellm
from serving.chat_repair import program_tests
from serving.failure_text import called_endpoint
from serving.failures import EmptyAnswer, classify
from serving.verify import verify_answer

#: candidates per Vox request to a local model when ``--candidates`` is not given. 8, not 4: on the
#: cpu-tiny default export (bench/best_of_n.py, the 30 user-phrased tasks, 16 candidates each at
#: 0.7) best-of-4 answered 0.151 of the requests with a verified program and best-of-8 0.206
#: (0.163 -> 0.214 at 0.4); a batch of 8 costs a local model far less than twice a batch of 4
DEFAULT_LOCAL_CANDIDATES: Final = 8
#: sampling temperature of the candidates: greedy decoding would give N copies of one answer
CANDIDATE_TEMPERATURE: Final = 0.7
#: a 400 about the ``n`` parameter ("only n=1 is supported", vox serve's "n=40 is too many choices"),
#: as opposed to one about another field ("max_tokens=1024 is too large" holds the letter n too)
_REFUSES_N: Final = re.compile(r"(?<![\w.])n\b")
#: the most choices a server says it gives per request ("at most 4 per request", "maximum of 4",
#: "n must be <= 4")
_N_LIMIT: Final = re.compile(r"(?:at most|maximum(?: of)?|<=|less than or equal to)\s+(\d+)", re.IGNORECASE)


def n_limit(message: str) -> int | None:
    """The most choices per request a 400 about ``n`` names (``None``: it names none, or 1)."""
    found = _N_LIMIT.search(message)
    return int(found.group(1)) if found and int(found.group(1)) > 1 else None


@dataclass(frozen=True)
class Samples:
    """``texts``: the candidates; token usage summed over every call made for them."""

    texts: tuple[str, ...]
    prompt_tokens: int
    completion_tokens: int
    estimated: bool = False


#: ``sample(candidate, messages, n) -> Samples`` (tests pass a fake; the CLI uses :func:`litellm_sampler`)
Sampler = Callable[[Any, Sequence[Mapping[str, str]], int], Samples]


#: why a candidate that compiles and declares what was asked still fails, per unmet shape
UNMET_WHY: Final = {"script": "runs nothing: a script was asked",
                    "tests": "has no @test function: tests were asked"}


@dataclass(frozen=True)
class Verdict:
    """One candidate checked: ``errors`` (count; a missing program counts as one), ``missing``
    (requested items it does not declare), ``has_code`` (a ```vox block holding a program) and
    ``cut`` (a block of it has no closing fence: the answer hit its token limit), ``typed``
    (names and types were checked: no syntax error stopped them, :attr:`vox_lang.CheckResult.typed`)
    and ``unmet`` (what the request asks of the program's shape that it lacks: ``"script"``, running
    it does nothing, or ``"tests"``, no ``@test`` function: :func:`vox_lang.script_requests.unmet_shape`);
    ``tests_failed``: of its
    ``@test`` functions, run as the chat's check runs them (:func:`serving.chat_repair.program_tests`)
    but within :data:`CANDIDATE_TEST_STEPS` steps and :data:`CANDIDATE_TEST_SECONDS` for all its tests
    together, how many failed
    (a new-user trial saw "3/8 candidates passed the check" and then the chosen one's tests fail)."""

    errors: int
    missing: tuple[str, ...] = ()
    has_code: bool = True
    cut: bool = False
    typed: bool = True
    unmet: str | None = None
    tests_failed: int = 0

    @property
    def passed(self) -> bool:
        """Zero errors, everything the request names declared, the shape it asks for (something
        that runs when a script was asked, a ``@test`` when tests were), and no failing ``@test``."""
        return self.errors == 0 and not self.missing and not self.unmet and not self.tests_failed


@dataclass(frozen=True)
class Pick:
    """The chosen candidate (``index`` into the candidates) and every candidate's verdict."""

    index: int
    verdicts: tuple[Verdict, ...]

    @property
    def passed(self) -> int:
        """How many candidates passed."""
        return sum(v.passed for v in self.verdicts)

    def summary(self) -> str:
        """One line for ``--explain``: how many passed and which one answers."""
        n = len(self.verdicts)
        if self.passed:
            return (f"[best-of-{n}] {self.passed}/{n} candidates passed the check; "
                    f"answering with candidate {self.index + 1}")
        best = self.verdicts[self.index]
        why = (f"it compiles but does not declare {', '.join(best.missing)}" if best.errors == 0 and best.missing
               else f"it compiles but {UNMET_WHY[best.unmet]}" if best.errors == 0 and best.unmet
               else f"it compiles but {best.tests_failed} test(s) fail" if best.errors == 0
               else f"fewest errors: {best.errors}{', every candidate cut off' if best.cut else ''}" if best.has_code
               else "no candidate has a ```vox program")
        return f"[best-of-{n}] 0/{n} candidates passed the check; keeping candidate {self.index + 1} ({why})"


def candidate_count(requested: int | None, primary: Any) -> int:
    """Candidates to ask ``primary`` (a routing candidate) for: ``requested`` when the user gave
    ``--candidates``, else :data:`DEFAULT_LOCAL_CANDIDATES` for a local model and 1 for a hosted one."""
    if requested is not None:
        return max(1, requested)
    return DEFAULT_LOCAL_CANDIDATES if getattr(primary, "provider", None) == "local" else 1


def check_candidate(text: str, request: str, check: Callable[[str], Any] | None = None) -> Verdict:
    """Check one answer as the chat's verification does (:func:`serving.verify.verify_answer`: its
    ```vox blocks as one module, or the last complete block when only it passes; blocks holding
    only comments are no program), and what ``request`` names."""
    from vox_lang.pasted import asked_items
    from vox_lang.requests import missing_items
    from vox_lang.script_requests import unmet_shape

    if check is None:
        import vox_lang

        def check(program: str) -> Any:
            return vox_lang.check(program, path="answer.vox")

    verified = verify_answer(text, check)
    if verified.result is None or verified.program is None:  # no block, or no program in it
        return Verdict(1, has_code=False)
    missing = tuple(missing_items(asked_items(request), verified.program))
    errors = len(verified.result.errors)
    unmet = unmet_shape(request, verified.program) if errors == 0 and not missing else None
    tests = program_tests(verified.program, _candidate_limits()) if errors == 0 and not missing and not unmet else None
    return Verdict(errors, missing, cut=verified.cut_off, typed=getattr(verified.result, "typed", True), unmet=unmet,
                   tests_failed=tests.failed if tests is not None else 0)


#: limits of a candidate's ``@test`` run, shared by all its tests (spec §11's defaults are 10,000,000
#: steps and 10 s per test; up to eight candidates are screened per round, so a candidate costs at
#: most about 2 s however many tests it has; the answer's own check runs under the defaults)
CANDIDATE_TEST_STEPS: Final = 1_000_000
CANDIDATE_TEST_SECONDS: Final = 2.0


def _candidate_limits() -> Any:
    from vox_lang.runtime.limits import RunConfig

    # std.log lines of a candidate being screened are dropped (they would reach the user's terminal)
    return RunConfig(max_steps=CANDIDATE_TEST_STEPS, timeout_s=CANDIDATE_TEST_SECONDS, tests_share_limits=True,
                     log=lambda line: None)


def pick(texts: Sequence[str], request: str, check: Callable[[str], Any] | None = None) -> Pick:
    """The first candidate that passes; else the first that compiles; else the one with the fewest
    errors (earliest on ties). A cut-off answer (a block without its closing fence) ranks after every
    complete one, whatever its count: the parser stops at the first unclosed bracket, so a cut block
    shows one or two errors for a program that has no end, and on a small context its repair prompt
    may not fit (``vox chat --model free`` on the user tasks: 22 of 23 failed turns repaired a cut
    candidate). Among complete ones, an answer whose syntax errors stopped name and type checking
    (:attr:`Verdict.typed` false) ranks after every one that was checked whole: its count hides
    those errors. Of as many errors, the one that declares more of the requested items ranks first
    (the chat's order: :meth:`serving.chat_repair.Attempt.better_than`). An answer without a ```vox
    block ranks last.

    Raises:
        ValueError: no candidates.
    """
    if not texts:
        raise ValueError("best-of-n needs at least one candidate")
    verdicts = tuple(check_candidate(t, request, check) for t in texts)
    first = next((i for i, v in enumerate(verdicts) if v.passed), None)
    if first is None:
        first = next((i for i, v in enumerate(verdicts) if v.errors == 0), None)
    if first is not None:
        return Pick(first, verdicts)
    return Pick(min(range(len(verdicts)),
                    key=lambda i: (not verdicts[i].has_code, verdicts[i].cut, not verdicts[i].typed,
                                   verdicts[i].errors, len(verdicts[i].missing), i)), verdicts)


def litellm_sampler(keys: Mapping[str, Any], *, timeout: float = 120.0, max_tokens: int | None = None,
                    temperature: float = CANDIDATE_TEMPERATURE, mock: Mapping[str, Any] | None = None) -> Sampler:
    """A :data:`Sampler` over LiteLLM: one non-streaming call with ``n``, or batches of the most a
    server said it gives (remembered per model and endpoint); missing candidates (a server that
    ignores or refuses ``n``) come from one call each.

    Args:
        keys: provider -> resolved key (hosted candidates); local ones use :data:`LOCAL_API_KEY`.
        timeout: seconds per call.
        max_tokens: answer cap per candidate (the lower of this and the candidate's own cap).
        temperature: sampling temperature.
        mock: candidate id -> LiteLLM ``mock_response`` (tests and benchmarks).
    """

    limits: dict[tuple[str, str | None], int] = {}  # (model, api_base) -> most choices it gives per request

    def sample(candidate: Any, messages: Sequence[Mapping[str, str]], n: int) -> Samples:
        litellm = import_litellm()
        params: dict[str, Any] = {"model": candidate.litellm_model, "messages": [dict(m) for m in messages],
                                  "temperature": temperature, "timeout": timeout, "stream": False}
        caps = [c for c in (getattr(candidate, "max_tokens", None), max_tokens) if c]
        if caps:
            params["max_tokens"] = min(caps)
        if candidate.api_base:
            # a local model served by several endpoints: spread best-of-n requests over them (a
            # deployment that is down fails this request, and the ordinary cascade answers instead)
            bases = tuple(getattr(candidate, "deployments", ()) or ()) or (candidate.api_base,)
            params.update(api_base=random.choice(bases), api_key=LOCAL_API_KEY)
        elif candidate.provider in keys:
            params["api_key"] = keys[candidate.provider].secret.reveal()
        if mock and candidate.id in mock:
            params["mock_response"] = mock[candidate.id]
        texts: list[str] = []
        pt = ct = 0
        estimated = False
        server = (candidate.litellm_model, params.get("api_base"))
        calls: list[Any] = []
        while len(texts) < n:  # batches of what the server gives at once (all n, unless it said less)
            batch = min(n - len(texts), limits.get(server, n))
            if batch < 2:
                break
            try:
                calls.append(litellm.completion(n=batch, **params))
            except litellm.BadRequestError as exc:  # e.g. "only n=1 is supported": one call per candidate
                if not _REFUSES_N.search(str(exc)):  # another 400 (e.g. max_tokens): asking n times fails too
                    raise
                limits[server] = min(batch - 1, n_limit(str(exc)) or 1)
                continue
            got = [c.message.content or "" for c in calls[-1].choices[:batch]]
            texts.extend(got)
            if len(got) < batch:  # it ignores n: the rest one call each
                break
        while len(texts) < n:  # each call adds at least one text, or raises
            response = litellm.completion(**params)
            calls.append(response)
            if not response.choices:
                raise EmptyAnswer("the model returned no choices")
            texts.extend(c.message.content or "" for c in response.choices[: n - len(texts)])
        if not any(t.strip() for t in texts):
            raise EmptyAnswer(f"the model returned {n} empty answers")
        for response in calls:
            usage = getattr(response, "usage", None)
            p, c = getattr(usage, "prompt_tokens", None), getattr(usage, "completion_tokens", None)
            if isinstance(p, int) and isinstance(c, int):
                pt, ct = pt + p, ct + c
            else:
                estimated = True
        return Samples(tuple(texts[:n]), pt, ct, estimated)

    return sample


def best_of_n_events(candidate: Any, messages: Sequence[Mapping[str, str]], n: int, request: str, *,
                     sample: Sampler, fallback: Callable[[], Iterable[ChatEvent]],
                     explain: Callable[[str], None] | None = None,
                     check: Callable[[str], Any] | None = None) -> Iterator[ChatEvent]:
    """Chat events of one best-of-``n`` answer from ``candidate``: the chosen text as one
    :class:`TextDelta` and a :class:`Completed` (cost 0 for a local model, else from its prices).

    When sampling fails, an :class:`AttemptFailed` is reported and ``fallback()`` (the ordinary
    cascade) answers instead.
    """
    try:
        got = sample(candidate, messages, n)
    except Exception as exc:  # noqa: BLE001 - provider boundary: any failure falls back to the cascade
        several = len(tuple(getattr(candidate, "deployments", ()) or ())) > 1  # which one failed: the exception says
        endpoint = (called_endpoint(exc) or (None if several else candidate.api_base)) if candidate.api_base else None
        failure = classify(exc, endpoint=endpoint)  # the cascade's own wording (redacted, one line)
        yield AttemptFailed(candidate.id, f"best-of-{n}: {failure.line()}", failure=failure)
        yield from fallback()
        return
    chosen = pick(got.texts, request, check)
    if explain is not None:
        explain(chosen.summary() + "\n")
    text = got.texts[chosen.index]
    cost: float | None = 0.0
    if not candidate.api_base:
        pin, pout = candidate.input_usd_per_mtok, candidate.output_usd_per_mtok
        cost = None if pin is None or pout is None else (got.prompt_tokens * pin + got.completion_tokens * pout) / 1e6
    yield TextDelta(text, candidate.id)
    yield Completed(candidate.id, text, got.prompt_tokens, got.completion_tokens, cost, got.estimated, ())
