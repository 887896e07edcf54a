"""Execute a routing decision: :func:`complete` runs the cascade, one model at a time.

One ``litellm.Router`` per cascade holds the deployments (parameters, timeouts, per-model answer
caps, mock responses); each attempt is one ``router.completion`` of one model, without
LiteLLM's retries and fallbacks, because whether the next model may try depends on the kind of
failure (:mod:`serving.failures`), which LiteLLM's fixed fallback lists cannot express:

- rate limits (429), out of credit (402), timeouts, 5xx, connection errors, auth (401/403) and
  a missing model (404) move on to the next model;
- a context-window overflow moves on to the next model with a larger (or unknown) window;
- after an out-of-credit answer the provider's other paid models are skipped too, and the
  provider is reported to ``health`` (remembered for the session and cached);
- a request error (a plain 400, 422: an invalid parameter, a refused prompt) ends the cascade
  with the provider's message (:class:`RequestRejected`): it would fail on every model.

A model served by several local endpoints (``Candidate.deployments``: the same model id at
several ``VOX_LOCAL_ENDPOINTS``) is one model group of the Router with one deployment per
endpoint: LiteLLM picks the deployment (``VOX_ROUTING_STRATEGY``, default ``simple-shuffle``)
and cools a failed one down for :data:`DEPLOYMENT_COOLDOWN_S` seconds, so later requests avoid
it. A deployment that fails for a reason of its own (:data:`RETRY_ON_DEPLOYMENT`: connection
refused, timeout, 5xx, a stream that dies, 429) is retried on another deployment of the same
model (named by its deployment id, each at most once, never one that is cooling down) before the
cascade moves to the next model; when every deployment is cooling down, LiteLLM's pick fails at
once (``RouterRateLimitError``, a 429) and the cascade moves on without calling any of them. Any
other failure goes to the model policy above at once.

A stream that dies mid-way is abandoned and the next deployment or model answers afresh. Every
failed attempt is reported as an :class:`AttemptFailed` event with its own model (and
deployment) and error; when no model is left, :class:`AllProvidersFailed` lists them. Each call
keeps its state in local variables (no callbacks, no class-level sinks), so concurrent calls
never see each other's attempts; the Router's cooldowns are shared on purpose.
"""

from __future__ import annotations

import os
import random
import re
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from serving.decision import Candidate, Decision
from serving.errors import AllProvidersFailed, RequestRejected, UsageError
from serving.failures import EmptyAnswer, Failure, classify, stream_body_fault
from serving.keys import ResolvedKey
from serving.llm import import_litellm
from serving.provider_status import ProviderHealth
from serving.tokens import count_text, estimate

__all__ = ["LOCAL_API_KEY", "AttemptFailed", "ChatEvent", "Completed", "TextDelta", "complete", "import_litellm"]

LOCAL_API_KEY: Final = "vox-local"  # local servers need no key; the OpenAI client wants one
#: failure kinds retried on another deployment of the same model: faults of one endpoint
RETRY_ON_DEPLOYMENT: Final = frozenset({"server", "timeout", "rate_limit"})
#: a local ``vox serve`` refusing ``max_tokens`` states the room it has (serving.service); the
#: router's prompt estimate for local models (chars x a factor) can undercount unusual text
_ROOM: Final = re.compile(r"max_tokens=\d+ is too large\b.*?\bat most (\d+) new tokens", re.S)
#: seconds a failed deployment of a several-deployment model is left out of LiteLLM's picks
DEPLOYMENT_COOLDOWN_S: Final = 10.0
#: LiteLLM routing strategies offered through ``VOX_ROUTING_STRATEGY`` (the first is the default)
ROUTING_STRATEGIES: Final = ("simple-shuffle", "least-busy", "latency-based-routing")


@dataclass(frozen=True)
class TextDelta:
    """A piece of the answer from ``model``."""

    text: str
    model: str


@dataclass(frozen=True)
class AttemptFailed:
    """``model`` failed.

    Attributes:
        model: the candidate id that failed.
        reason: its own error, one line (``PaymentRequiredError (HTTP 402): ...``).
        partial: what it had streamed before dying (abandoned).
        failure: the classified failure (``None`` when built by hand, e.g. in tests).
        next_model: the model that tries next, ``None`` when the cascade ends here; the same
            model when another of its deployments tries next.
        deployment: the base URL of the deployment that failed, for a model with several
            (``None`` otherwise, or when LiteLLM did not say which).
    """

    model: str
    reason: str
    partial: str = ""
    failure: Failure | None = None
    next_model: str | None = None
    deployment: str | None = None


@dataclass(frozen=True)
class Completed:
    """The answer is complete. Costs in USD; ``cost_usd`` is None when the price is unknown.

    ``finish_reason`` is the provider's (``"stop"``, ``"length"`` when the answer hit the token
    limit), ``None`` when it sent none. ``deployment`` is the base URL of the local endpoint that
    answered (``None`` for a hosted model).
    """

    model: str
    text: str
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None
    estimated_usage: bool
    attempts: tuple[tuple[str, str], ...]
    finish_reason: str | None = None
    deployment: str | None = None


ChatEvent = TextDelta | AttemptFailed | Completed

_ROUTERS: dict[tuple[Any, ...], Any] = {}
_ROUTERS_LOCK = threading.Lock()
MAX_CACHED_ROUTERS: Final = 32  # answer caps vary with the prompt, so the cache must be bounded


def routing_strategy() -> str:
    """``VOX_ROUTING_STRATEGY``: how LiteLLM picks among a model's deployments (default
    ``simple-shuffle``, a random pick; ``least-busy`` takes the one with the fewest requests in
    flight from this process).

    Raises:
        UsageError: the value is not one of :data:`ROUTING_STRATEGIES` (the message names them).
    """
    value = os.environ.get("VOX_ROUTING_STRATEGY", "").strip() or ROUTING_STRATEGIES[0]
    if value not in ROUTING_STRATEGIES:
        raise UsageError(f"VOX_ROUTING_STRATEGY must be one of {', '.join(ROUTING_STRATEGIES)}, got {value!r}")
    return value


def deployment_id(model: str, base_url: str) -> str:
    """The Router's id for the deployment of ``model`` at ``base_url`` (``local/m@http://...``)."""
    return f"{model}@{base_url}"


def _limit(c: Candidate, max_tokens: int | None) -> int | None:
    """The answer limit for ``c``: the lower of its own cap and ``max_tokens`` (None: none)."""
    limits = [n for n in (c.max_tokens, max_tokens) if n]
    return min(limits) if limits else None


def _router(cands: Sequence[Candidate], keys: Mapping[str, ResolvedKey], timeout: float,
            max_tokens: int | None = None, strategy: str = ROUTING_STRATEGIES[0]) -> Any:
    """One ``litellm.Router`` per cascade (cached): one model group per candidate, no retries.

    A candidate with several deployments gets one deployment per base URL (model info id
    :func:`deployment_id`); any other candidate one deployment whose id is the candidate's.
    LiteLLM never cools down a group's only deployment, so cooldowns touch only the
    several-deployment groups. The answer limit is a per-deployment parameter: the lower of the
    candidate's own cap (``Candidate.max_tokens``) and ``max_tokens``.
    """
    cache_key = (tuple((c.id, c.litellm_model, c.api_base, c.deployments, _limit(c, max_tokens)) for c in cands),
                 timeout, strategy,
                 tuple(sorted((p, id(k.secret)) for p, k in keys.items())))  # key identity only, never the value
    with _ROUTERS_LOCK:
        if cache_key in _ROUTERS:
            return _ROUTERS[cache_key]
    litellm = import_litellm()
    model_list = []
    for c in cands:
        params: dict[str, Any] = {"model": c.litellm_model, "timeout": timeout, "stream_timeout": timeout}
        if _limit(c, max_tokens):
            params["max_tokens"] = _limit(c, max_tokens)
        if len(c.deployments) > 1:
            for base in c.deployments:
                model_list.append({"model_name": c.id, "model_info": {"id": deployment_id(c.id, base)},
                                   "litellm_params": {**params, "api_base": base, "api_key": LOCAL_API_KEY}})
            continue
        if c.api_base:
            params.update(api_base=c.api_base, api_key=LOCAL_API_KEY)
        elif c.provider in keys:
            params["api_key"] = keys[c.provider].secret.reveal()
        model_list.append({"model_name": c.id, "litellm_params": params, "model_info": {"id": c.id}})
    router = litellm.Router(model_list=model_list, num_retries=0, timeout=timeout, stream_timeout=timeout,
                            routing_strategy=strategy, allowed_fails=0, cooldown_time=DEPLOYMENT_COOLDOWN_S)
    with _ROUTERS_LOCK:
        while len(_ROUTERS) >= MAX_CACHED_ROUTERS:
            del _ROUTERS[next(iter(_ROUTERS))]  # oldest first
        _ROUTERS[cache_key] = router
    return router


@dataclass
class _Skips:
    """What the failures so far rule out for the rest of this cascade."""

    no_credit: set[str]  # providers that answered out of credit (their paid models are skipped)
    min_window: int | None = None  # after a context overflow: only larger (or unknown) windows

    def reason(self, c: Candidate) -> str | None:
        """Why ``c`` is not tried (``None``: it may be)."""
        if c.provider in self.no_credit and not (c.is_free or c.api_base):
            return f"{c.provider} is out of credit"
        if self.min_window is not None and c.context_window is not None and c.context_window <= self.min_window:
            return f"context window {c.context_window} is not larger than {self.min_window}"
        return None


def _next(cands: Sequence[Candidate], after: int, skips: _Skips, skipped: list[str]) -> int | None:
    """Index of the next candidate after ``after`` that may try; notes the ones passed over."""
    for j in range(after + 1, len(cands)):
        why = skips.reason(cands[j])
        if why is None:
            return j
        note = f"{cands[j].id} ({why})"
        if note not in skipped:
            skipped.append(note)
    return None


@dataclass
class _Attempt:
    """One call's answer so far: streamed pieces, usage, finish reason and the deployment used."""

    pieces: list[str] = field(default_factory=list)
    usage: Any = None
    finish: str | None = None
    deployment: str | None = None  # base URL, for a candidate with several deployments


def _deployment_of(c: Candidate, model_id: object) -> str | None:
    """The base URL of ``c``'s deployment whose Router id is ``model_id`` (``None``: not one of them)."""
    for base in c.deployments:
        if model_id == deployment_id(c.id, base):
            return base
    return None


def _cool_down(router: Any, c: Candidate, base: str, exc: Exception) -> None:
    """Leave ``c``'s deployment at ``base`` out of the Router's picks for :data:`DEPLOYMENT_COOLDOWN_S`:
    for a stream that died after the call returned, a failure LiteLLM's own cooldowns never see
    (``Router.health().cooldowns``, LiteLLM's cooldown store; a LiteLLM without it is left as is)."""
    try:
        router.health().cooldowns.add_deployment_to_cooldown(deployment_id(c.id, base), exc, 500,
                                                                DEPLOYMENT_COOLDOWN_S)
    except AttributeError:
        pass


def _cooling(router: Any, c: Candidate) -> set[str]:
    """Base URLs of ``c``'s deployments that LiteLLM has cooled down (failed within the last
    :data:`DEPLOYMENT_COOLDOWN_S` s); empty when this LiteLLM cannot say."""
    try:
        store = router.health().cooldowns
        active = store.get_active_cooldowns([deployment_id(c.id, b) for b in c.deployments], None)
    except AttributeError:
        return set()
    cooled = {model_id for model_id, _ in active}
    return {b for b in c.deployments if deployment_id(c.id, b) in cooled}


def _call(router: Any, target: str, c: Candidate, messages: Sequence[Mapping[str, str]], stream: bool,
          extra: Mapping[str, Any], fake: Mapping[str, Any], att: _Attempt) -> Iterator[TextDelta]:
    """One ``router.completion`` of ``target`` (``c.id`` or one of its deployment ids): yields the
    answer's pieces and fills ``att``; raises whatever the provider raised."""
    response = router.completion(model=target, messages=list(messages), stream=stream, **extra, **fake)
    hidden = getattr(response, "_hidden_params", None)
    att.deployment = _deployment_of(c, hidden.get("model_id") if isinstance(hidden, dict) else None)
    if stream:
        for chunk in response:
            choice = chunk.choices[0] if chunk.choices else None
            delta = choice.delta.content if choice is not None else None
            if delta:
                att.pieces.append(delta)
                yield TextDelta(delta, c.id)
            att.finish = (getattr(choice, "finish_reason", None) if choice is not None else None) or att.finish
            att.usage = getattr(chunk, "usage", None) or att.usage
        if not "".join(att.pieces).strip():  # an HTML page or nothing streams no chunk: say what came
            raise stream_body_fault(hidden) or EmptyAnswer("the model streamed no text (an empty answer)")
    else:
        if not response.choices:
            raise EmptyAnswer("the model returned no choices")
        choice = response.choices[0]
        if not (choice.message.content or "").strip():
            raise EmptyAnswer("the model returned an empty answer")
        att.pieces.append(choice.message.content)
        att.finish = getattr(choice, "finish_reason", None)
        att.usage = getattr(response, "usage", None)
        yield TextDelta(att.pieces[0], c.id)


def complete(decision: Decision, messages: Sequence[Mapping[str, str]], *, keys: Mapping[str, ResolvedKey],
             stream: bool = True, timeout: float = 120.0, max_tokens: int | None = None,
             mock: Mapping[str, Any] | None = None, health: ProviderHealth | None = None) -> Iterator[ChatEvent]:
    """Run the cascade; yield :class:`TextDelta` pieces, :class:`AttemptFailed` and one :class:`Completed`.

    Args:
        decision: from :func:`serving.router.decide`.
        messages: OpenAI-style ``[{"role": ..., "content": ...}]``.
        keys: provider → resolved key (revealed only into LiteLLM's parameters).
        stream: stream the answer.
        timeout: seconds per attempt (connect, first byte and between chunks): never a hang.
        max_tokens: answer limit passed to the provider, unless the candidate has a lower cap
            of its own (``Candidate.max_tokens``: what its context window leaves after the prompt).
        mock: candidate id → LiteLLM ``mock_response`` (text, or an exception to raise; tests).
        health: the session's provider memory; told about every out-of-credit provider.

    Raises:
        RequestRejected: a model rejected the request itself (the cascade stops there).
        AllProvidersFailed: no model is left (``attempts`` has each model and its own reason).
        UsageError: ``VOX_ROUTING_STRATEGY`` is not a known strategy.
    """
    cands = decision.candidates
    router = _router(cands, keys, timeout, max_tokens, routing_strategy())
    extra: dict[str, Any] = {"stream_options": {"include_usage": True}} if stream else {}
    attempts: list[tuple[str, str]] = []
    skips = _Skips(set())
    skipped: list[str] = []
    i: int | None = 0
    while i is not None:
        c = cands[i]
        # a mock goes with the call: the Router deep-copies its deployments, and exceptions do not copy
        fake = {"mock_response": mock[c.id]} if mock and c.id in mock else {}
        tried: list[str] = []  # deployments of c that failed
        target = c.id  # first LiteLLM picks the deployment, then the untried ones are named
        call_extra: Mapping[str, Any] = extra
        while True:
            att = _Attempt()
            try:
                yield from _call(router, target, c, messages, stream, call_extra, fake, att)
            except Exception as exc:  # provider boundary: classified, then the policy decides
                failed = att.deployment or _deployment_of(c, getattr(exc, "failed_deployment_id", None))
                failed = failed or _deployment_of(c, target)
                endpoint = failed if len(c.deployments) > 1 else failed or c.api_base  # named in the reason
                failure = classify(exc, endpoint=endpoint, timeout_s=timeout)
                room = reported_room(exc) if c.api_base is not None and call_extra is extra and not att.pieces else None
                if room is not None:  # once per model: ask again within the room the server reported
                    attempts.append((c.id, f"{failure.line()}; asked again with max_tokens={room}"))
                    yield AttemptFailed(c.id, f"{failure.line()}; asking again with max_tokens={room}", "",
                                        failure, c.id, failed)
                    call_extra = {**extra, "max_tokens": room}
                    continue
                if failed is not None:
                    tried.append(failed)
                    if att.deployment is not None and failure.kind in RETRY_ON_DEPLOYMENT:
                        _cool_down(router, c, att.deployment, exc)  # died mid-stream
                attempts.append((c.id, failure.line()))
                # untried and not cooled down (a deployment that failed within the last seconds is
                # not paid for again; when all are cooling down LiteLLM's pick fails at once, as 429)
                spare = ([b for b in c.deployments if b not in tried and b not in _cooling(router, c)]
                         if len(c.deployments) > 1 else [])
                if failure.kind in RETRY_ON_DEPLOYMENT and spare:  # each retry names a deployment: it ends
                    yield AttemptFailed(c.id, failure.line(), "".join(att.pieces), failure, c.id, failed)
                    target = deployment_id(c.id, random.choice(spare))
                    continue
                if failure.kind == "credit":
                    skips.no_credit.add(c.provider)
                    if health is not None:
                        health.note(c.provider, failure)
                if failure.kind == "context" and c.context_window is not None:
                    skips.min_window = max(skips.min_window or 0, c.context_window)
                nxt = _next(cands, i, skips, skipped) if failure.moves_on else None
                yield AttemptFailed(c.id, failure.line(), "".join(att.pieces), failure,
                                    cands[nxt].id if nxt is not None else None, failed)
                if not failure.moves_on:
                    raise RequestRejected(
                        f"{c.id} rejected the request: {failure.line()} (not retried on other models: the "
                        "request itself is at fault)", attempts) from None
                i = nxt
                break
            yield _completed(c, "".join(att.pieces), messages, att.usage, attempts, att.finish, att.deployment)
            return
    passed = f"; not tried: {', '.join(skipped)}" if skipped else ""
    raise AllProvidersFailed(
        "all models failed: " + "; ".join(f"{m}: {r}" for m, r in attempts) + passed, attempts)


def _completed(c: Candidate, text: str, messages: Sequence[Mapping[str, str]], usage: Any,
               attempts: list[tuple[str, str]], finish: str | None, deployment: str | None = None) -> Completed:
    """Token counts (provider usage, else :func:`serving.tokens.estimate`) and the cost from the
    catalog prices of ``c`` (USD per million tokens; a local model costs 0, an unknown price None)."""
    pt = getattr(usage, "prompt_tokens", None) if usage is not None else None
    ct = getattr(usage, "completion_tokens", None) if usage is not None else None
    estimated = not isinstance(pt, int) or not isinstance(ct, int)
    if not isinstance(pt, int) or not isinstance(ct, int):
        pt, ct = estimate(messages).total, count_text(text)
    if c.api_base is not None:
        cost: float | None = 0.0
    elif c.input_usd_per_mtok is None or c.output_usd_per_mtok is None:
        cost = None
    else:
        cost = (pt * c.input_usd_per_mtok + ct * c.output_usd_per_mtok) / 1e6
    return Completed(c.id, text, pt, ct, cost, estimated, tuple(attempts), finish, deployment or c.api_base)


def reported_room(exc: BaseException) -> int | None:
    """The answer room (tokens, >= 1) a local ``vox serve`` stated when it refused ``max_tokens``
    ("max_tokens=N is too large: ... (at most M new tokens)"), else ``None``."""
    m = _ROOM.search(str(exc))
    return int(m.group(1)) if m and int(m.group(1)) > 0 else None
