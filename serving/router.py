"""Route a chat request to models: :func:`decide` ranks (pure), :func:`complete` executes.

``decide(request, mode, catalog=..., keys=...)`` resolves ``mode`` (a mode, an alias or a
concrete model id; :func:`resolve_model`), infers the task category, scores every catalog
model under the mode's profile (the rule is in :mod:`serving.scoring`'s docstring and in
:meth:`Decision.explain`), drops models that fail a filter (no key for the provider, local
endpoint unreachable, not free in ``free`` mode, ``--local-only``, over the ``--max-cost``
budget, prompt larger than the context window) and returns the top K (default 4) as the
cascade, each with its reasons. It performs no I/O.

``complete(decision, messages, keys=...)`` runs the cascade through one ``litellm.Router``
whose fallbacks are the cascade order: rate limits (429), out of credit (402), timeouts and
5xx move on to the next model; a stream that dies mid-way is abandoned and the next model
answers afresh. Every failed attempt is reported as an event; when all fail,
:class:`AllProvidersFailed` lists them. LiteLLM is imported here, lazily, and nowhere else.
"""

from __future__ import annotations

import difflib
import heapq
import os
import threading
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from serving.catalog import Catalog, CatalogEntry
from serving.errors import AllProvidersFailed, NoCandidates, UnknownModel
from serving.keys import PROVIDER_ENV, ResolvedKey, install_log_redaction, redact
from serving.scoring import ALIASES, MODES, Profile, infer_category, is_vox_request, rule_text, score

DEFAULT_K: Final = 4
MAX_REJECTED_SHOWN: Final = 8
LOCAL_API_KEY: Final = "vox-local"  # local servers need no key; the OpenAI client wants one


@dataclass(frozen=True)
class RouteRequest:
    """What the router needs to know about one request.

    Attributes:
        text: the user's request (category and Vox detection read it).
        est_input_tokens: prompt size estimate (context-window and cost filters).
        max_output_tokens: answer budget assumed by the cost filter.
        category: force ``codegen``/``chat``/``reasoning`` (else inferred).
        vox: force Vox-code handling on/off (else inferred).
        local_only: only local models.
        budget_usd: remaining ``--max-cost`` budget for this call, ``None`` = unlimited.
    """

    text: str
    est_input_tokens: int = 0
    max_output_tokens: int = 2048
    category: str | None = None
    vox: bool | None = None
    local_only: bool = False
    budget_usd: float | None = None


@dataclass(frozen=True)
class Candidate:
    """A model in the cascade (or a rejected one, with ``rejected`` set)."""

    id: str
    litellm_model: str
    provider: str
    score: float
    reasons: str
    api_base: str | None = None
    input_usd_per_mtok: float | None = None
    output_usd_per_mtok: float | None = None
    rejected: str | None = None


@dataclass(frozen=True)
class Decision:
    """The router's answer: ``candidates[0]`` is the primary, the rest the fallbacks in order."""

    mode: str
    category: str
    vox: bool
    rule: str
    candidates: tuple[Candidate, ...]
    rejected: tuple[Candidate, ...] = ()
    skipped_no_key: int = 0

    @property
    def primary(self) -> Candidate:
        return self.candidates[0]

    def explain(self) -> str:
        """Human-readable routing report (mode, category, rule, cascade, notable rejections)."""
        lines = [f"routing: mode={self.mode} category={self.category}{' (Vox code)' if self.vox else ''}",
                 f"  rule: {self.rule}"]
        for i, c in enumerate(self.candidates):
            tag = "primary " if i == 0 else f"fallback{i}"
            lines.append(f"  {tag} {c.id}  score={c.score:+.3f}  {c.reasons}")
        for c in self.rejected:
            lines.append(f"  rejected {c.id}  score={c.score:+.3f}  ({c.rejected})")
        if self.skipped_no_key:
            lines.append(f"  skipped {self.skipped_no_key} models of providers without a key")
        return "\n".join(lines)


def resolve_model(spec: str, catalog: Catalog) -> Profile | CatalogEntry:
    """``--model`` value → a routing profile (mode or alias) or one catalog entry.

    A model id may be exact (``openai/gpt-5``), lack the provider (``gpt-5``: first-party
    providers first) or name a local model (``vox-mens-tiny``).

    Raises:
        UnknownModel: nothing matches (the message suggests close names).
    """
    name = spec.strip()
    lowered = name.lower()
    if lowered in MODES or lowered in ALIASES:
        return MODES[ALIASES.get(lowered, lowered)]
    by_id = catalog.by_id()
    if name in by_id:
        return by_id[name]
    suffix = [e for e in catalog.entries if e.id.endswith("/" + name)]
    if suffix:
        order = {p: i for i, p in enumerate(("local", *PROVIDER_ENV))}
        return min(suffix, key=lambda e: (order.get(e.provider, len(order)), len(e.id)))
    choices = [*MODES, *ALIASES, *by_id]
    close = difflib.get_close_matches(name, choices, n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise UnknownModel(f"unknown model or mode {spec!r}: use one of {', '.join(MODES)} "
                       f"(aliases {', '.join(ALIASES)}) or a catalog model id{hint}")


def _filter(e: CatalogEntry, req: RouteRequest, profile: Profile | None, keys: Collection[str]) -> str | None:
    """Why ``e`` cannot serve ``req`` (``None`` when it can)."""
    if e.local:
        if not e.reachable:
            return f"local endpoint {e.api_base} unreachable"
    elif req.local_only:
        return "not local (--local-only)"
    elif e.provider not in keys:
        envs = " or ".join(PROVIDER_ENV.get(e.provider, ())) or "no supported key variable"
        return f"no API key for {e.provider} ({envs})"
    if profile is not None and profile.free_only and not (e.is_free or e.local):
        return "not free (free mode)"
    if e.context_window and req.est_input_tokens > e.context_window:
        return f"prompt ~{req.est_input_tokens} tokens exceeds context window {e.context_window}"
    if req.budget_usd is not None and not (e.is_free or e.local):
        if e.input_usd_per_mtok is None or e.output_usd_per_mtok is None:
            return "price unknown: cannot honour --max-cost"
        est = (req.est_input_tokens * e.input_usd_per_mtok + req.max_output_tokens * e.output_usd_per_mtok) / 1e6
        if est > req.budget_usd:
            return f"estimated ${est:.4f} exceeds remaining budget ${req.budget_usd:.4f}"
    return None


def _candidate(e: CatalogEntry, total: float, parts: str, rejected: str | None = None) -> Candidate:
    return Candidate(e.id, e.litellm_model, e.provider, total, parts, e.api_base,
                     e.input_usd_per_mtok, e.output_usd_per_mtok, rejected)


def _ranking(catalog: Catalog, profile: Profile, category: str, vox: bool) -> dict[str, list[tuple[float, int]]]:
    """Per provider, ``(-score, index)`` sorted best first; memoised on the catalog.

    Free-only modes leave paid models out here, so a decision never walks past them.
    """
    key = ("rank", profile.name, category, vox)
    memo = catalog.rank_cache.get(key)
    if memo is None:
        memo = {}
        for i, e in enumerate(catalog.entries):
            if profile.free_only and not (e.is_free or e.local):
                continue  # static filter: never a candidate in this mode
            memo.setdefault("local" if e.local else e.provider, []).append((-score(e, profile, category, vox)[0], i))
        for items in memo.values():
            items.sort()
        catalog.rank_cache[key] = memo
    return memo


def decide(request: RouteRequest, mode: str, *, catalog: Catalog, keys: Collection[str],
           k: int = DEFAULT_K) -> Decision:
    """Rank the catalog for ``request`` under ``mode`` (pure: no I/O).

    Args:
        request: the request and its constraints.
        mode: a mode (free, auto, efficient, balanced, genius), an alias, or a model id.
        catalog: the models, with local reachability already probed.
        keys: providers that have a usable key.
        k: cascade depth.

    Returns:
        The decision: primary + up to ``k - 1`` fallbacks (+ a provider-side router fallback
        when the mode has one and OpenRouter has a key), and why others were rejected.

    Raises:
        UnknownModel: ``mode`` is neither a mode nor a catalog model.
        NoCandidates: no model passes the filters (message says why the best ones failed).
    """
    target = resolve_model(mode, catalog)
    category = request.category or infer_category(request.text)
    vox = request.vox if request.vox is not None else is_vox_request(request.text)
    if isinstance(target, CatalogEntry):
        reason = _filter(target, request, None, keys)
        if reason:
            raise NoCandidates(f"model {target.id} cannot be used: {reason}")
        total, parts = score(target, MODES["auto"], category, vox)
        return Decision(target.id, category, vox, "explicit model (no ranking)", (_candidate(target, total, parts),))
    profile = target
    if category != "codegen" and profile.analysis_category:
        category = profile.analysis_category
    ranking = _ranking(catalog, profile, category, vox)
    usable = set(keys) | {"local"}
    streams = [ranking[p] for p in ranking if p in usable]
    chosen: list[Candidate] = []
    rejected: list[Candidate] = []
    entries = catalog.entries
    for neg, i in heapq.merge(*streams):
        e = entries[i]
        reason = _filter(e, request, profile, keys)
        if reason is None or len(rejected) < MAX_REJECTED_SHOWN:
            total, parts = score(e, profile, category, vox)
            (chosen if reason is None else rejected).append(_candidate(e, total, parts, reason))
        if len(chosen) >= k:
            break
    skipped = sum(len(v) for p, v in ranking.items() if p not in usable)
    if not chosen:
        why = "; ".join(f"{c.id}: {c.rejected}" for c in rejected[:3]) or "no local model reachable"
        keyless = f"; {skipped} models skipped for lack of an API key" if skipped else ""
        raise NoCandidates(f"no model can serve this request in mode {profile.name!r} ({why}{keyless}): "
                           "set a provider key (e.g. OPENAI_API_KEY) or start a local model with `vox serve`")
    full = len(chosen) >= k  # when the cascade is short, every rejection cost it a place
    floor = chosen[-1].score
    shown = tuple(c for c in rejected if not full or c.score >= floor)
    if profile.router_fallback and "openrouter" in keys and not request.local_only:
        chosen.append(Candidate(profile.router_fallback, profile.router_fallback, "openrouter", 0.0,
                                "provider-side router fallback (free)" if profile.free_only
                                else "provider-side router fallback"))
    return Decision(profile.name, category, vox, rule_text(profile, category), tuple(chosen), shown, skipped)


# ---------------------------------------------------------------------------- execution

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


def _router(cands: Sequence[Candidate], keys: Mapping[str, ResolvedKey], timeout: float,
            mock: Mapping[str, Any] | None) -> Any:
    """One ``litellm.Router`` per cascade (cached): deployment per candidate, fallbacks in order."""
    cache_key = (tuple((c.id, c.litellm_model, c.api_base) for c in cands), timeout,
                 tuple(sorted((p, id(k.secret)) for p, k in keys.items())),  # identity only, never the value
                 tuple(sorted((mock or {}).items(), key=str)))
    with _ROUTERS_LOCK:
        if cache_key in _ROUTERS:
            return _ROUTERS[cache_key]
    litellm = import_litellm()
    model_list = []
    for c in cands:
        params: dict[str, Any] = {"model": c.litellm_model, "timeout": timeout, "stream_timeout": timeout}
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
        max_tokens: answer limit passed to the provider.
        mock: candidate id → LiteLLM ``mock_response`` (tests and benchmarks).

    Raises:
        AllProvidersFailed: every candidate failed (``attempts`` has each model and reason).
    """
    litellm = import_litellm()
    cands = decision.candidates
    router = _router(cands, keys, timeout, mock)
    index = {c.id: i for i, c in enumerate(cands)}
    attempts: list[tuple[str, str]] = []
    extra: dict[str, Any] = {"max_tokens": max_tokens} if max_tokens else {}
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
