"""Execute a routing decision: :func:`complete` runs the cascade through one ``litellm.Router``.

The fallbacks are the cascade order: rate limits (429), out of credit (402), timeouts and 5xx
move on to the next model; a stream that dies mid-way is abandoned and the next model answers
afresh. Every failed attempt is reported as an :class:`AttemptFailed` event; when all fail,
:class:`AllProvidersFailed` lists them. LiteLLM is imported here, lazily, and nowhere else.
(:mod:`serving.router` re-exports this module's public names.)
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from serving.errors import AllProvidersFailed
from serving.keys import ResolvedKey, install_log_redaction, redact

if TYPE_CHECKING:  # annotations only: serving.router imports this module
    from serving.router import Candidate, Decision

LOCAL_API_KEY: Final = "vox-local"  # local servers need no key; the OpenAI client wants one


@dataclass(frozen=True)
class TextDelta:
    """A piece of the answer from ``model``."""

    text: str
    model: str


@dataclass(frozen=True)
class AttemptFailed:
    """``model`` failed; ``partial`` is what it had streamed before dying (abandoned)."""

    model: str
    reason: str
    partial: str = ""


@dataclass(frozen=True)
class Completed:
    """The answer is complete. Costs in USD; ``cost_usd`` is None when the price is unknown."""

    model: str
    text: str
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None
    estimated_usage: bool
    attempts: tuple[tuple[str, str], ...]


ChatEvent = TextDelta | AttemptFailed | Completed

_ROUTERS: dict[tuple[Any, ...], Any] = {}
_ROUTERS_LOCK = threading.Lock()
MAX_CACHED_ROUTERS: Final = 32  # answer caps vary with the prompt, so the cache must be bounded


def import_litellm() -> Any:
    """Import LiteLLM offline (bundled cost map, no telemetry, quiet, secrets redacted)."""
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    os.environ.setdefault("LITELLM_TELEMETRY", "False")
    import logging

    import litellm

    litellm.suppress_debug_info = True
    litellm.drop_params = True
    for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    install_log_redaction()
    return litellm


def _failure_reason(exc: BaseException) -> str:
    status = getattr(exc, "status_code", None)
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    text = f"{type(exc).__name__}{f' (HTTP {status})' if status else ''}: {first}"
    return redact(text)[:200]


def _limit(c: Candidate, max_tokens: int | None) -> int | None:
    """The answer limit for ``c``: the lower of its own cap and ``max_tokens`` (None: none)."""
    limits = [n for n in (c.max_tokens, max_tokens) if n]
    return min(limits) if limits else None


def _router(cands: Sequence[Candidate], keys: Mapping[str, ResolvedKey], timeout: float,
            mock: Mapping[str, Any] | None, max_tokens: int | None = None) -> Any:
    """One ``litellm.Router`` per cascade (cached): deployment per candidate, fallbacks in order.

    The answer limit is a per-deployment parameter (a call keyword would override it for every
    deployment): the lower of the candidate's own cap (``Candidate.max_tokens``) and ``max_tokens``.
    """
    cache_key = (tuple((c.id, c.litellm_model, c.api_base, _limit(c, max_tokens)) for c in cands), timeout,
                 tuple(sorted((p, id(k.secret)) for p, k in keys.items())),  # identity only, never the value
                 tuple(sorted((mock or {}).items(), key=str)))
    with _ROUTERS_LOCK:
        if cache_key in _ROUTERS:
            return _ROUTERS[cache_key]
    litellm = import_litellm()
    model_list = []
    for c in cands:
        params: dict[str, Any] = {"model": c.litellm_model, "timeout": timeout, "stream_timeout": timeout}
        if _limit(c, max_tokens):
            params["max_tokens"] = _limit(c, max_tokens)
        if c.api_base:
            params.update(api_base=c.api_base, api_key=LOCAL_API_KEY)
        elif c.provider in keys:
            params["api_key"] = keys[c.provider].secret.reveal()
        if mock and c.id in mock:
            params["mock_response"] = mock[c.id]
        model_list.append({"model_name": c.id, "litellm_params": params, "model_info": {"id": c.id}})
    ids = [c.id for c in cands]
    fallbacks = [{ids[i]: ids[i + 1:]} for i in range(len(ids) - 1)]
    router = litellm.Router(model_list=model_list, fallbacks=fallbacks, num_retries=0, timeout=timeout,
                            stream_timeout=timeout, disable_cooldowns=True, max_fallbacks=len(ids))
    with _ROUTERS_LOCK:
        while len(_ROUTERS) >= MAX_CACHED_ROUTERS:
            del _ROUTERS[next(iter(_ROUTERS))]  # oldest first
        _ROUTERS[cache_key] = router
    return router


class _Tap:
    """Records LiteLLM's pre-call parameters of every deployment attempt, in order.

    LiteLLM's Router passes ``metadata.previous_models`` (deployment id, exception type and
    text of each earlier failed attempt) to the pre-call hook of the next attempt; that is how
    fallbacks inside one ``router.completion`` are reported. One instance is registered once.
    """

    sink: list[dict[str, Any]] | None = None
    lock = threading.Lock()
    installed = False

    @classmethod
    def install(cls, litellm: Any) -> None:
        from litellm.integrations.custom_logger import CustomLogger

        class _Logger(CustomLogger):  # type: ignore[misc]
            def log_pre_api_call(self, model: Any, messages: Any, kwargs: Any) -> None:
                sink = cls.sink
                if sink is not None:
                    sink.append(dict(kwargs.get("litellm_params") or {}))

        with cls.lock:
            if not cls.installed:
                litellm.callbacks.append(_Logger())
                cls.installed = True


def _previous_failures(calls: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """``(deployment id, reason)`` of the failed attempts before the last recorded call."""
    if not calls:
        return []
    previous = ((calls[-1].get("metadata") or {}).get("previous_models")) or ()
    out = []
    for p in previous:
        text = str(p.get("exception_string") or "").strip().splitlines()
        out.append((str(p.get("deployment_id") or p.get("model_group")),
                    redact(f"{p.get('exception_type') or 'Error'}: {text[0] if text else ''}")[:200]))
    return out


def _last_failure(calls: list[dict[str, Any]], exc: BaseException) -> tuple[str, str]:
    """The final attempt of a cascade that failed entirely, with its own reason."""
    last = str(((calls[-1].get("model_info") or {}).get("id")) if calls else "?")
    text = str(exc)
    if "also failed: " in text:  # LiteLLM appends each fallback's error to the first one's message
        return last, redact(text.rsplit("also failed: ", 1)[1].strip().splitlines()[0])[:200]
    return last, _failure_reason(exc)


def complete(decision: Decision, messages: Sequence[Mapping[str, str]], *, keys: Mapping[str, ResolvedKey],
             stream: bool = True, timeout: float = 120.0, max_tokens: int | None = None,
             mock: Mapping[str, Any] | None = None) -> Iterator[ChatEvent]:
    """Run the cascade; yield :class:`TextDelta` pieces, :class:`AttemptFailed` and one :class:`Completed`.

    Args:
        decision: from :func:`decide`.
        messages: OpenAI-style ``[{"role": ..., "content": ...}]``.
        keys: provider → resolved key (revealed only into LiteLLM's parameters).
        stream: stream the answer.
        timeout: seconds per attempt (connect, first byte and between chunks): never a hang.
        max_tokens: answer limit passed to the provider, unless the candidate has a lower cap
            of its own (``Candidate.max_tokens``: what its context window leaves after the prompt).
        mock: candidate id → LiteLLM ``mock_response`` (tests and benchmarks).

    Raises:
        AllProvidersFailed: every candidate failed (``attempts`` has each model and reason).
    """
    litellm = import_litellm()
    cands = decision.candidates
    router = _router(cands, keys, timeout, mock, max_tokens)
    index = {c.id: i for i, c in enumerate(cands)}
    attempts: list[tuple[str, str]] = []
    extra: dict[str, Any] = {}  # max_tokens is per deployment (see _router)
    if stream:
        extra["stream_options"] = {"include_usage": True}
    _Tap.install(litellm)
    start = 0
    while start < len(cands):
        calls: list[dict[str, Any]] = []
        _Tap.sink = calls
        try:
            response = router.completion(model=cands[start].id, messages=list(messages), stream=stream, **extra)
        except Exception as exc:  # provider boundary: any failure means "this cascade is exhausted"
            failed = _previous_failures(calls) + [_last_failure(calls, exc)]
            for model, reason in failed:
                yield AttemptFailed(model, reason)
            attempts += failed
            break
        finally:
            _Tap.sink = None
        failed = _previous_failures(calls)
        for model, reason in failed:
            yield AttemptFailed(model, reason)
        attempts += failed
        answered = str((getattr(response, "_hidden_params", None) or {}).get("model_id") or cands[start].id)
        pieces: list[str] = []
        usage: Any = None
        try:
            if stream:
                for chunk in response:
                    delta = chunk.choices[0].delta.content if chunk.choices else None
                    if delta:
                        pieces.append(delta)
                        yield TextDelta(delta, answered)
                    usage = getattr(chunk, "usage", None) or usage
            else:
                pieces.append(response.choices[0].message.content or "")
                usage = getattr(response, "usage", None)
                yield TextDelta(pieces[0], answered)
        except Exception as exc:  # died mid-stream: abandon the partial answer, next model afresh
            reason = _failure_reason(exc)
            attempts.append((answered, reason))
            yield AttemptFailed(answered, reason, "".join(pieces))
            start = index.get(answered, start) + 1
            continue
        yield _completed(cands[index.get(answered, start)], "".join(pieces), messages, usage, attempts)
        return
    raise AllProvidersFailed(
        "all models failed: " + "; ".join(f"{m}: {r}" for m, r in attempts), attempts)


def _completed(c: Candidate, text: str, messages: Sequence[Mapping[str, str]], usage: Any,
               attempts: list[tuple[str, str]]) -> Completed:
    """Token counts (provider usage, else ~4 characters per token) and cost from catalog prices."""
    pt = getattr(usage, "prompt_tokens", None) if usage is not None else None
    ct = getattr(usage, "completion_tokens", None) if usage is not None else None
    estimated = not isinstance(pt, int) or not isinstance(ct, int)
    if estimated:
        pt = sum(len(m.get("content") or "") for m in messages) // 4 + 1
        ct = len(text) // 4 + 1
    assert isinstance(pt, int) and isinstance(ct, int)
    if c.api_base is not None:
        cost: float | None = 0.0
    elif c.input_usd_per_mtok is None or c.output_usd_per_mtok is None:
        cost = None
    else:
        cost = (pt * c.input_usd_per_mtok + ct * c.output_usd_per_mtok) / 1e6
    return Completed(c.id, text, pt, ct, cost, estimated, tuple(attempts))
