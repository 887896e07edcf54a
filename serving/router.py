"""Route a chat request to models: :func:`decide` ranks (pure), :func:`complete` executes.

``decide(request, mode, catalog=..., keys=...)`` resolves ``mode`` (a mode, an alias or a
concrete model id; :func:`resolve_model`), infers the task category, scores every catalog
model under the mode's profile (the rule is in :mod:`serving.scoring`'s docstring and in
:meth:`Decision.explain`), drops models that fail a filter (no key for the provider, local
endpoint unreachable, not free in ``free`` mode, ``--local-only``, over the ``--max-cost``
budget, prompt larger than the context window or leaving it no room for an answer) and
returns the top K (default 4) as the cascade, each with its reasons. It performs no I/O.

Each candidate with a known context window gets its own answer cap (``Candidate.max_tokens``):
the requested ``max_output_tokens`` lowered to what fits after the prompt (:func:`answer_room`),
so a 512-token local model is asked for what it can give instead of rejecting the call.

A local model served by several endpoints (the same model id at several ``VOX_LOCAL_ENDPOINTS``)
is one catalog entry and one candidate with several deployments (``Candidate.deployments``);
:meth:`Decision.explain` lists them.

``complete(decision, messages, keys=...)`` runs the cascade through one ``litellm.Router``, which
load-balances a candidate's deployments; it lives in :mod:`serving.cascade` with the chat events
and is re-exported here.
"""

from __future__ import annotations

import difflib
import heapq
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from serving.cascade import (  # re-exported (`X as X`): the execution half of the router's API
    LOCAL_API_KEY as LOCAL_API_KEY,
    AttemptFailed as AttemptFailed,
    ChatEvent as ChatEvent,
    Completed as Completed,
    TextDelta as TextDelta,
    complete as complete,
    import_litellm as import_litellm,
)
from serving.catalog import Catalog, CatalogEntry
from serving.decision import Candidate as Candidate, Decision as Decision  # re-exported: the router's answer types
from serving.errors import NoCandidates, PromptTooLong, UnknownModel
from serving.intent import is_vox_request
from serving.keys import PROVIDER_ENV
from serving.provider_status import Exclusion
from serving.scoring import ALIASES, MODES, Profile, infer_category, rule_text, score
from serving.tokens import estimate

DEFAULT_K: Final = 4
MAX_REJECTED_SHOWN: Final = 8
MIN_ANSWER_TOKENS: Final = 16  # a model whose window leaves fewer answer tokens is skipped
# The prompt estimate counts with a large hosted vocabulary (serving.tokens: cl100k_base). Local
# models have small vocabularies (cpu-tiny: a 2048-token BPE, ~2-3 characters per token) and a chat
# template around each message, so their answer room is computed from a deliberately high estimate:
# an overestimate only shortens the answer, an underestimate gets the call rejected (HTTP 400).
LOCAL_PROMPT_FACTOR: Final = 2
LOCAL_TEMPLATE_TOKENS: Final = 32
#: answer cap (tokens) of a `vox chat` that sets no ``--max-tokens``
DEFAULT_MAX_TOKENS: Final = 1024


@dataclass(frozen=True)
class RouteRequest:
    """What the router needs to know about one request.

    Attributes:
        text: the user's request (category and Vox detection read it).
        est_input_tokens: prompt size estimate, system messages included (context-window and
            cost filters).
        est_system_tokens: the part of ``est_input_tokens`` in system messages.
        presented_tokens: prompt size as a local server with each ``system_prompt_mode``
            presents it (:func:`pipeline.chat_format.present`: ``"none"`` drops system messages,
            ``"ssot"`` puts the SSOT prompt in their place); a local model of a mode not given
            here is taken to see ``est_input_tokens``. Built by :func:`route_request`.
        max_output_tokens: requested answer limit (tokens); lowered per candidate to fit its
            context window (``Candidate.max_tokens``); the cost filter assumes it.
        max_tokens_given: the user asked for ``max_output_tokens`` (``--max-tokens``); when not,
            it is the default and ``--explain`` says so.
        category: force ``codegen``/``chat``/``reasoning`` (else inferred).
        vox: force Vox-code handling on/off (else inferred).
        local_only: only local models.
        budget_usd: remaining ``--max-cost`` budget for this call, ``None`` = unlimited.
    """

    text: str
    est_input_tokens: int = 0
    est_system_tokens: int = 0
    presented_tokens: Mapping[str, int] = field(default_factory=dict)
    max_output_tokens: int = 2048
    max_tokens_given: bool = True
    category: str | None = None
    vox: bool | None = None
    local_only: bool = False
    budget_usd: float | None = None


def route_request(text: str, messages: Sequence[Mapping[str, str]], **constraints: Any) -> RouteRequest:
    """The :class:`RouteRequest` for sending ``messages``: token estimates as sent (hosted models)
    and as each local ``system_prompt_mode`` presents them (:func:`pipeline.chat_format.present`,
    the one presenter training, evaluation and the server use).

    Args:
        text: the user's request.
        messages: the conversation as it will be sent.
        constraints: the other :class:`RouteRequest` fields (``max_output_tokens``, ``vox``...).
    """
    from pipeline.chat_format import MODES as PROMPT_MODES, present

    sent = estimate(messages)
    plain = [{"role": m["role"], "content": m.get("content") or ""} for m in messages]
    presented = {mode: estimate(present(plain, mode)).total for mode in PROMPT_MODES}
    return RouteRequest(text, est_input_tokens=sent.total, est_system_tokens=sent.system,
                        presented_tokens=presented, **constraints)


def resolve_model(spec: str, catalog: Catalog) -> Profile | CatalogEntry:
    """``--model`` value → a routing profile (mode or alias) or one catalog entry.

    A bare name (``gpt-5``, ``vox-mens-tiny``) may match any id ending in ``/<name>``: local
    models first, then first-party providers. A provider-qualified id (``anthropic/claude-x``)
    resolves, in order, to the exact id, an entry of the provider named by its first segment,
    or OpenRouter's entry of that id (``openrouter/<id>``: OpenRouter ids are ``vendor/model``).
    Any other entry ending in ``/<id>`` (e.g. a gateway's ``vercel_ai_gateway/anthropic/...``)
    is taken only when it is the one such entry and the first segment names no provider: a
    user who names a provider never silently gets another one.

    Raises:
        UnknownModel: nothing matches, or the match is ambiguous (the message lists close ids).
    """
    name = spec.strip()
    lowered = name.lower()
    if lowered in MODES or lowered in ALIASES:
        return MODES[ALIASES.get(lowered, lowered)]
    by_id = catalog.by_id()
    if name in by_id:
        return by_id[name]
    suffix = [e for e in catalog.entries if e.id.endswith("/" + name)]
    first, slash, _ = name.partition("/")
    if not slash:
        if suffix:
            order = {p: i for i, p in enumerate(("local", *PROVIDER_ENV))}
            return min(suffix, key=lambda e: (order.get(e.provider, len(order)), len(e.id)))
        raise _unknown(spec, name, [*MODES, *ALIASES, *by_id], [])
    same_provider = [e for e in suffix if e.provider == first]
    if same_provider:
        return min(same_provider, key=lambda e: len(e.id))
    if "openrouter/" + name in by_id:
        return by_id["openrouter/" + name]
    providers = {e.provider for e in catalog.entries} | set(PROVIDER_ENV) | {"local"}
    if len(suffix) == 1 and first not in providers:
        return suffix[0]
    own = [i for i in by_id if i.startswith(first + "/")]
    raise _unknown(spec, name, own or list(by_id), [e.id for e in suffix])


def _unknown(spec: str, name: str, choices: list[str], elsewhere: list[str]) -> UnknownModel:
    """The :class:`UnknownModel` for ``spec``: close names from ``choices``, then ``elsewhere``
    (ids that end in ``/<spec>`` under another provider, named but not chosen)."""
    close = difflib.get_close_matches(name, choices, n=3, cutoff=0.6)
    close += [i for i in sorted(elsewhere, key=len)[:5] if i not in close]
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    return UnknownModel(f"unknown model or mode {spec!r}: use one of {', '.join(MODES)} "
                       f"(aliases {', '.join(ALIASES)}) or a catalog model id (`vox model list`){hint}")


def _filter(e: CatalogEntry, req: RouteRequest, profile: Profile | None, keys: Collection[str],
            excluded: Mapping[str, Exclusion] | None = None) -> str | None:
    """Why ``e`` cannot serve ``req`` (``None`` when it can)."""
    if req.local_only and not e.local:
        return "not local (--local-only)"
    reason = unavailable(e, keys, excluded)
    if reason:
        return reason
    if profile is not None and profile.free_only and not (e.is_free or e.local):
        return "not free (free mode)"
    reason = _fit(e, req)
    if reason:
        return reason
    room = answer_room(e, req)
    if req.budget_usd is not None and not (e.is_free or e.local):
        if e.input_usd_per_mtok is None or e.output_usd_per_mtok is None:
            return "price unknown: cannot honour --max-cost"
        answer = req.max_output_tokens if room is None else min(room, req.max_output_tokens)
        est = (req.est_input_tokens * e.input_usd_per_mtok + answer * e.output_usd_per_mtok) / 1e6
        if est > req.budget_usd:
            return f"estimated ${est:.4f} exceeds remaining budget ${req.budget_usd:.4f}"
    return None


def unavailable(e: CatalogEntry, keys: Collection[str], excluded: Mapping[str, Exclusion] | None = None) -> str | None:
    """Why ``e`` cannot be called now, whatever the request (``None`` when it can): a local
    endpoint that did not answer its last probe, a hosted provider without a key in ``keys``, or
    one out of credit in ``excluded`` (its free models excepted). ``vox model list`` marks usable
    models with the same rule.
    """
    if e.local:
        return None if e.reachable else f"local endpoint {e.api_base} unreachable"
    if e.provider not in keys:
        envs = " or ".join(PROVIDER_ENV.get(e.provider, ())) or "no supported key variable"
        return f"no API key for {e.provider} ({envs})"
    if excluded and e.provider in excluded and not e.is_free:
        return f"{e.provider} is out of credit ({excluded[e.provider].when()})"
    return None


def _fit(e: CatalogEntry, req: RouteRequest) -> str | None:
    """Why the prompt of ``req`` leaves no room for an answer in ``e``'s context window (``None``
    when it fits or the window is unknown)."""
    room = answer_room(e, req)
    if room is None:
        return None
    reason = _context_overflow(e, req)
    if reason:
        return reason
    need = min(MIN_ANSWER_TOKENS, req.max_output_tokens)
    if room < need:
        return (f"prompt ~{_prompt_tokens(e, req, for_room=True)} tokens (estimated high) leaves "
                f"{max(room, 0)} answer tokens in context window {e.context_window} (need at least {need})")
    return None


def _context_overflow(e: CatalogEntry, req: RouteRequest) -> str | None:
    """Why the prompt of ``req`` does not fit ``e.context_window`` (``None`` when it fits).

    A local model with ``system_prompt_mode == "none"`` gets no system messages (its server
    drops them), so they do not count against its window.
    """
    assert e.context_window
    prompt = _prompt_tokens(e, req)
    if prompt <= e.context_window:
        return None
    without = req.presented_tokens.get("none") if e.local and e.system_prompt_mode is not None else None
    system = prompt - without if without is not None else req.est_system_tokens
    note = f" (~{system} of them the system prompt, which this model keeps)" if system > 0 else ""
    return f"prompt ~{prompt} tokens{note} exceeds context window {e.context_window}"


def _prompt_tokens(e: CatalogEntry, req: RouteRequest, *, for_room: bool = False) -> int:
    """The prompt of ``req`` in tokens as ``e``'s server will count it: for a local model with a
    known ``system_prompt_mode``, the prompt as that mode presents it (``req.presented_tokens``);
    with ``for_room``, a local model's count is estimated high (:data:`LOCAL_PROMPT_FACTOR`,
    :data:`LOCAL_TEMPLATE_TOKENS`)."""
    presented = req.presented_tokens.get(e.system_prompt_mode or "") if e.local else None
    prompt = max(req.est_input_tokens if presented is None else presented, 0)
    if for_room and e.local:
        prompt = prompt * LOCAL_PROMPT_FACTOR + LOCAL_TEMPLATE_TOKENS
    return prompt


def answer_room(e: CatalogEntry, req: RouteRequest) -> int | None:
    """Answer tokens left in ``e.context_window`` after the prompt of ``req`` (may be <= 0);
    ``None`` when the window is unknown. The window is taken to hold prompt + answer tokens."""
    if not e.context_window:
        return None
    return e.context_window - _prompt_tokens(e, req, for_room=True)


def _candidate(e: CatalogEntry, total: float, parts: str, rejected: str | None = None,
               req: RouteRequest | None = None) -> Candidate:
    """The candidate for ``e``; given ``req``, with its answer cap when the window is too small."""
    cap, note = None, ""
    room = answer_room(e, req) if req is not None and rejected is None else None
    if req is not None and room is not None and room < req.max_output_tokens:
        cap = max(room, 1)
        note = (f"context window {e.context_window} - prompt ~{_prompt_tokens(e, req, for_room=True)} "
                f"tokens (estimated high), below the {'requested' if req.max_tokens_given else 'default'} "
                f"{req.max_output_tokens}")
    return Candidate(e.id, e.litellm_model, e.provider, total, parts, e.api_base,
                     e.input_usd_per_mtok, e.output_usd_per_mtok, rejected, cap, note,
                     context_window=e.context_window, is_free=e.is_free or e.local, deployments=e.deployments)


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
           k: int = DEFAULT_K, excluded: Mapping[str, Exclusion] | None = None) -> Decision:
    """Rank the catalog for ``request`` under ``mode`` (pure: no I/O).

    Args:
        request: the request and its constraints.
        mode: a mode (free, auto, efficient, balanced, genius), an alias, or a model id.
        catalog: the models, with local reachability already probed.
        keys: providers that have a usable key.
        k: cascade depth.
        excluded: providers out of credit (:class:`serving.provider_status.ProviderHealth`):
            their paid models are left out, and :meth:`Decision.explain` says why.

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
        reason = _filter(target, request, None, keys, excluded)
        total, parts = score(target, MODES["auto"], category, vox)
        if reason:
            message = f"model {target.id} cannot be used: {reason}"
            window = target.context_window
            failure = (PromptTooLong(message, [(target.id, window)]) if window and reason == _fit(target, request)
                       else NoCandidates(message))
            failure.considered = Decision(target.id, category, vox, "explicit model (no ranking)", (),
                                          (_candidate(target, total, parts, reason),),
                                          excluded=_excluded_lines(excluded)).explain()
            raise failure
        return Decision(target.id, category, vox, "explicit model (no ranking)",
                        (_candidate(target, total, parts, req=request),), excluded=_excluded_lines(excluded))
    profile = target
    if category != "codegen" and profile.analysis_category:
        category = profile.analysis_category
    ranking = _ranking(catalog, profile, category, vox)
    usable = set(keys) | {"local"}
    streams = [ranking[p] for p in ranking if p in usable]
    chosen: list[Candidate] = []
    rejected: list[Candidate] = []
    too_long: list[tuple[str, int]] = []  # (id, context window) of models the prompt does not fit
    entries = catalog.entries
    for _neg, i in heapq.merge(*streams):
        e = entries[i]
        reason = _filter(e, request, profile, keys, excluded)
        if reason is not None and e.context_window and reason == _fit(e, request):
            too_long.append((e.id, e.context_window))
        if reason is None or len(rejected) < MAX_REJECTED_SHOWN:
            total, parts = score(e, profile, category, vox)
            (chosen if reason is None else rejected).append(_candidate(e, total, parts, reason, request))
        if len(chosen) >= k:
            break
    skipped = sum(len(v) for p, v in ranking.items() if p not in usable)
    if not chosen:
        why = ("; ".join(f"{c.id}: {c.rejected}" for c in rejected[:3])
               or f"no local model reachable; endpoints probed: {_probed_endpoints(catalog)}")
        if request.local_only:
            message = _no_local_model(catalog, why)
        else:
            keyless = f"; {skipped} models skipped for lack of an API key" if skipped else ""
            message = (f"no model can serve this request in mode {profile.name!r} ({why}{keyless}): "
                       + _what_would_help(catalog, profile))
        failure = PromptTooLong(message, too_long) if too_long else NoCandidates(message)
        failure.considered = Decision(profile.name, category, vox, rule_text(profile, category), (), tuple(rejected),
                                      skipped, _excluded_lines(excluded)).explain()
        raise failure
    full = len(chosen) >= k  # when the cascade is short, every rejection cost it a place
    floor = chosen[-1].score
    shown = tuple(c for c in rejected if not full or c.score >= floor)
    if (profile.router_fallback and "openrouter" in keys and not request.local_only
            and (profile.free_only or "openrouter" not in (excluded or {}))):
        chosen.append(Candidate(profile.router_fallback, profile.router_fallback, "openrouter", 0.0,
                                "provider-side router fallback (free)" if profile.free_only
                                else "provider-side router fallback", is_free=profile.free_only))
    return Decision(profile.name, category, vox, rule_text(profile, category), tuple(chosen), shown, skipped,
                    _excluded_lines(excluded))


def _excluded_lines(excluded: Mapping[str, Exclusion] | None) -> tuple[str, ...]:
    """One ``--explain`` line per provider left out (sorted)."""
    found = excluded or {}
    return tuple(found[p].describe() for p in sorted(found))


def _what_would_help(catalog: Catalog, profile: Profile) -> str:
    """The advice ending a mode's dead end. ``free`` serves only local and zero-cost models, so a
    paid provider's key (OPENAI_API_KEY) would not help there: name the providers whose free models
    the catalog lists, or say there are none."""
    if not profile.free_only:
        return "set a provider key (e.g. OPENAI_API_KEY) or start a local model with `vox serve`"
    local = ("start a local model with `vox serve` (or set VOX_LOCAL_ENDPOINTS to the base URLs of running "
             "OpenAI-compatible servers)")
    providers = {e.provider for e in catalog.entries if e.is_free and not e.local}
    names = [PROVIDER_ENV[p][0] if p in PROVIDER_ENV else f"a {p} key" for p in sorted(providers)]
    if names:
        return f"{local}, or set a key for a provider with free models ({', '.join(names)})"
    return f"{local}; the catalog lists no free hosted models (`vox model discover` refreshes it)"


def _probed_endpoints(catalog: Catalog) -> str:
    """The local endpoints the catalog probed, comma-separated, each down one with why (``http://127.0.0.1:9/v1
    (connection refused)``; ``... (answers, but not as an OpenAI-compatible server: GET /models gave HTTP 404)``),
    or ``none``."""
    endpoints = (catalog.sources.get("local") or {}).get("endpoints") or {}
    shown = [url if state == "up" or not isinstance(state, str) else f"{url} ({state.removeprefix('down: ')})"
             for url, state in endpoints.items()]
    return ", ".join(shown) or "none"


def _no_local_model(catalog: Catalog, why: str) -> str:
    """The ``--local-only`` dead end: which local models failed why, or how to start one."""
    if any(e.local and e.reachable for e in catalog.entries):
        return f"no local model can serve this request (--local-only): {why}"
    return ("no local model is reachable (--local-only; endpoints probed: " + _probed_endpoints(catalog)
            + "): start one with "
            "`vox serve` (it listens on http://127.0.0.1:8000/v1), or set VOX_LOCAL_ENDPOINTS to the "
            "comma-separated base URLs of running OpenAI-compatible servers")
