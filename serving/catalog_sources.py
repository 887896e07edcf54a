"""Where catalog entries come from, and :func:`build_catalog`, which gathers them.

Sources (each may fail; a failure is recorded in ``sources`` and the rest still build):
LiteLLM's bundled cost map (read from the installed package, offline, never fetched),
OpenRouter's public model list (skipped fast when unreachable), local OpenAI-compatible
endpoints from ``VOX_LOCAL_ENDPOINTS`` plus Ollama's default port, and family priors
(:mod:`serving.priors`). Prices are normalised to USD per million tokens: LiteLLM and
OpenRouter both quote USD per token (×1e6); a converted price outside [0, 1000] is treated as
a unit error and dropped (the model's price becomes unknown). Local exported models carry the
Vox pass@1 from their ``vox_mens.json`` (or model card).
"""

from __future__ import annotations

import json
import os
import re
import time
import urllib.request
from collections.abc import Callable
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from serving.catalog_entry import Catalog, CatalogEntry
from serving.errors import CatalogError
from serving.priors import price_prior, prior_for

if TYPE_CHECKING:
    from serving.probe import ProbeResult

OPENROUTER_URL: Final = "https://openrouter.ai/api/v1"  # VOX_OPENROUTER_URL overrides
OLLAMA_URL: Final = "http://127.0.0.1:11434/v1"
MAX_SANE_USD_PER_MTOK: Final = 1000.0  # above this a source almost surely used another unit
LOCAL_SPEED_TPS: Final = 30.0  # prior for local models (CPU/GPU unknown)


# ---------------------------------------------------------------------------- units and priors

def per_token_to_per_mtok(value: object, where: str) -> float | None:
    """USD per token (number or numeric string) → USD per million tokens; None if unusable.

    Negative values (OpenRouter's "variable price" marker), non-numbers and results above
    :data:`MAX_SANE_USD_PER_MTOK` (a unit mix-up at the source) give ``None``.
    """
    if not isinstance(value, int | float | str):  # JSON gives numbers or numeric strings
        return None
    try:
        per_token = float(value)
    except ValueError:
        return None
    per_mtok = round(per_token * 1_000_000, 6)
    if per_token < 0 or per_mtok > MAX_SANE_USD_PER_MTOK or per_mtok != per_mtok:
        return None
    return per_mtok


def _with_priors(**kw: Any) -> CatalogEntry:
    """Build an entry, filling priors from the family table or, failing that, from price."""
    inp, out = kw.get("input_usd_per_mtok"), kw.get("output_usd_per_mtok")
    blended = None if inp is None or out is None else (3 * inp + out) / 4
    prior = prior_for(kw["id"]) or price_prior(blended)
    caps = set(kw.pop("capabilities", ()))
    if prior.reasoning:
        caps.add("reasoning")
    kw.setdefault("intelligence_prior", prior.intelligence)
    kw.setdefault("coding_prior", prior.coding)
    kw.setdefault("speed_prior_tps", prior.speed_tps)
    kw.setdefault("prior_source", prior.source)
    return CatalogEntry(capabilities=tuple(sorted(caps)), **kw)


# ---------------------------------------------------------------------------- sources

@lru_cache(maxsize=1)
def litellm_cost_map() -> dict[str, Any]:
    """LiteLLM's bundled cost map, read offline from the installed package.

    Reads ``model_prices_and_context_window_backup.json`` next to LiteLLM's ``__init__`` without
    importing LiteLLM (≈5 s), once per process (treat the result as read-only); falls back to
    ``litellm.model_cost`` with ``LITELLM_LOCAL_MODEL_COST_MAP=True`` set first so the import never fetches.
    """
    import importlib.util

    spec = importlib.util.find_spec("litellm")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        path = Path(folder) / "model_prices_and_context_window_backup.json"
        if path.is_file():
            return dict(json.loads(path.read_text(encoding="utf-8")))
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    import litellm

    return dict(litellm.model_cost)


def entries_from_litellm(cost_map: dict[str, Any], today: str | None = None) -> list[CatalogEntry]:
    """Chat models of LiteLLM's cost map (per-token prices → per million; deprecated dropped)."""
    today = today or datetime.now(UTC).date().isoformat()
    out: list[CatalogEntry] = []
    for key, info in cost_map.items():
        if not isinstance(info, dict) or info.get("mode") != "chat" or "*" in key or key.startswith("ft:"):
            continue
        provider = str(info.get("litellm_provider") or "")
        if not provider or str(info.get("deprecation_date") or "9999") < today:
            continue
        model = key if key.startswith(provider + "/") else f"{provider}/{key}"
        inp = per_token_to_per_mtok(info.get("input_cost_per_token"), key)
        outp = per_token_to_per_mtok(info.get("output_cost_per_token"), key)
        caps = {"chat", "stream"}
        for flag, cap in (("supports_vision", "vision"), ("supports_function_calling", "tools"),
                          ("supports_reasoning", "reasoning")):
            if info.get(flag):
                caps.add(cap)
        ctx = info.get("max_input_tokens") or info.get("max_tokens")
        out.append(_with_priors(
            id=model, provider=provider, litellm_model=model, input_usd_per_mtok=inp,
            output_usd_per_mtok=outp, context_window=int(ctx) if isinstance(ctx, (int, float)) else None,
            is_free=False, capabilities=caps, source="litellm"))
    return out


def fetch_json(url: str, timeout: float) -> Any:
    """GET ``url`` and parse JSON (no proxies for loopback); raises OSError/ValueError."""
    req = urllib.request.Request(url, headers={"Accept": "application/json", "User-Agent": "vox-mens"})
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return json.loads(resp.read(50_000_000))


def entries_from_openrouter(payload: Any) -> list[CatalogEntry]:
    """Entries from OpenRouter's ``GET /models`` body (``pricing`` is USD per token, as strings).

    Raises:
        CatalogError: the body is not ``{"data": [...]}``.
    """
    if not isinstance(payload, dict) or not isinstance(payload.get("data"), list):
        raise CatalogError("OpenRouter /models: expected {\"data\": [...]}")
    out: list[CatalogEntry] = []
    for item in payload["data"]:
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            continue
        pricing = item.get("pricing") or {}
        inp = per_token_to_per_mtok(pricing.get("prompt"), item["id"])
        outp = per_token_to_per_mtok(pricing.get("completion"), item["id"])
        free = item["id"].endswith(":free") or (inp == 0.0 and outp == 0.0)
        params = set(item.get("supported_parameters") or ())
        caps = {"chat", "stream"} | ({"reasoning"} if "reasoning" in params else set()) | (
            {"tools"} if "tools" in params else set())
        ctx = item.get("context_length")
        out.append(_with_priors(
            id=f"openrouter/{item['id']}", provider="openrouter", litellm_model=f"openrouter/{item['id']}",
            input_usd_per_mtok=inp, output_usd_per_mtok=outp,
            context_window=int(ctx) if isinstance(ctx, (int, float)) else None,
            is_free=free, capabilities=caps, source="openrouter"))
    return out


def local_endpoint_urls() -> list[str]:
    """``VOX_LOCAL_ENDPOINTS`` (default ``vox serve``'s address) plus Ollama's default port.

    Raises:
        CatalogError: an entry of ``VOX_LOCAL_ENDPOINTS`` is not a usable URL (the message names it).
    """
    from serving.probe import local_endpoints

    try:
        urls = local_endpoints()
    except ValueError as exc:
        raise CatalogError(str(exc)) from None
    if os.environ.get("VOX_OLLAMA", "1") != "0" and OLLAMA_URL not in urls:
        urls.append(OLLAMA_URL)
    return urls


def export_pass_at_1() -> dict[str, float]:
    """``model_name → pass@1`` for the pipeline's exports (``vox_mens.json``, else the model card)."""
    from pipeline import paths

    found: dict[str, float] = {}
    exports = paths.exports_dir(create=False)  # pipeline.paths is the one place resolving the state dir
    dirs = [d for d in exports.iterdir() if d.is_dir()] if exports.is_dir() else []
    latest = paths.latest_export(require_passed=True)  # what `vox serve` serves by default
    if latest is not None:
        dirs.append(latest)  # newest last: wins for a repeated model name
    for d in dirs:
        name, value = _read_pass_at_1(d)
        if name and value is not None:
            found[name] = value
    return found


def _read_pass_at_1(model_dir: Path) -> tuple[str | None, float | None]:
    try:
        meta = json.loads((model_dir / "vox_mens.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None, None
    name, value = meta.get("model_name"), meta.get("pass_at_1")
    if value is None and (model_dir / "README.md").is_file():
        m = re.search(r"pass@1[^0-9]{0,20}([01](?:\.\d+)?)", (model_dir / "README.md").read_text("utf-8"))
        value = float(m.group(1)) if m else None
    ok = isinstance(value, (int, float)) and 0 <= value <= 1
    return (name if isinstance(name, str) else None), (float(value) if ok else None)


def probe_local(urls: list[str], timeout: float | None = None) -> tuple[list[CatalogEntry], dict[str, Any]]:
    """Probe local endpoints (in parallel, ≤ ``timeout`` s, default ``VOX_PROBE_TIMEOUT`` or 0.2)
    and build one entry per served model (context window, system-prompt mode and Vox pass@1 from
    the server's model card when it gives them; else pass@1 from the exports in the state dir).

    Endpoints that serve the same model id with the same system-prompt mode are one model with
    several deployments (``CatalogEntry.deployments``, in ``urls`` order; the router
    load-balances over them); its context window is the smallest one they report, so a prompt
    that fits fits every deployment. The same id served with another system-prompt mode is
    another model (``local/<id>@<base url>``): its prompts are presented differently.

    Raises:
        CatalogError: ``VOX_PROBE_TIMEOUT`` is malformed.
    """
    from serving.probe import probe_all, probe_timeout_s

    if timeout is None:
        try:
            timeout = probe_timeout_s()
        except ValueError as exc:
            raise CatalogError(str(exc)) from None
    results = probe_all(urls, timeout=timeout)
    passes = export_pass_at_1() if any(r.up for r in results) else {}
    groups: dict[tuple[str, str | None], list[tuple[str, int | None]]] = {}
    served_scores: dict[str, float] = {}  # pass@1 a server reports in its model card (vox serve)
    for r in results:
        for card in r.served:
            groups.setdefault((card.id, card.system_prompt_mode), []).append((r.base_url, card.context_window))
            if card.vox_pass_at_1 is not None:
                served_scores.setdefault(card.id, card.vox_pass_at_1)
    entries: list[CatalogEntry] = []
    seen: set[str] = set()
    for (name, mode), served in groups.items():
        bases = tuple(dict.fromkeys(base for base, _ in served))
        windows = [w for _, w in served if w is not None]
        ident = f"local/{name}" if f"local/{name}" not in seen else f"local/{name}@{bases[0]}"
        seen.add(ident)
        entries.append(_with_priors(
            id=ident, provider="local", litellm_model=f"openai/{name}", input_usd_per_mtok=0.0,
            output_usd_per_mtok=0.0, context_window=min(windows) if windows else None, is_free=True,
            capabilities={"chat", "stream"}, speed_prior_tps=LOCAL_SPEED_TPS,
            source="ollama" if bases[0] == OLLAMA_URL else "local", api_base=bases[0],
            vox_pass_at_1=served_scores.get(name, passes.get(name)), reachable=True, system_prompt_mode=mode,
            deployments=bases))
    return entries, local_status(results, len(entries))


def local_status(results: list[ProbeResult], entries: int) -> dict[str, Any]:
    """The catalog's record of the ``local`` source: every endpoint probed (``up`` or ``down:
    <why>``) and the entries found.

    Its ``status`` is ``ok`` only when at least one endpoint answered; ``unreachable`` when none
    did (so ``vox model discover`` no longer says ``local: ok`` with every endpoint down), and
    ``skipped`` when none is configured; either way ``error`` says so.
    """
    endpoints = {r.base_url: ("up" if r.up else f"down: {r.error}") for r in results}
    if any(r.up for r in results):
        return {"status": "ok", "endpoints": endpoints, "entries": entries}
    if results:
        error = (f"no local endpoint answered ({len(results)} probed, see endpoints); start one with `vox serve`"
                 " or set VOX_LOCAL_ENDPOINTS")
        return {"status": "unreachable", "error": error, "endpoints": endpoints, "entries": entries}
    return {"status": "skipped", "error": "no local endpoint is configured (VOX_LOCAL_ENDPOINTS is empty and"
            " VOX_OLLAMA=0)", "endpoints": endpoints, "entries": entries}


# ---------------------------------------------------------------------------- build

def build_catalog(
    *,
    openrouter_fetch: Callable[[str, float], Any] | None = None,
    local_urls: list[str] | None = None,
    openrouter_timeout: float | None = None,
) -> Catalog:
    """Gather every source; a failing source is skipped and recorded, never fatal.

    Args:
        openrouter_fetch: ``(url, timeout) -> parsed JSON`` (tests pass a fake); default HTTP GET.
        local_urls: local base URLs (default :func:`local_endpoint_urls`).
        openrouter_timeout: seconds (default ``VOX_OPENROUTER_TIMEOUT`` or 3).
    """
    sources: dict[str, dict[str, Any]] = {}
    entries: list[CatalogEntry] = []
    started = time.perf_counter()
    try:
        got = entries_from_litellm(litellm_cost_map())
        sources["litellm"] = {"status": "ok", "entries": len(got)}
        entries += got
    except (OSError, ValueError, ImportError) as exc:
        sources["litellm"] = {"status": "failed", "error": f"{type(exc).__name__}: {exc}"}
    t0 = time.perf_counter()
    if os.environ.get("VOX_OFFLINE", "0") not in ("", "0"):
        sources["openrouter"] = {"status": "skipped", "error": "VOX_OFFLINE is set"}
    else:
        url = os.environ.get("VOX_OPENROUTER_URL", OPENROUTER_URL).rstrip("/") + "/models"
        timeout = openrouter_timeout or float(os.environ.get("VOX_OPENROUTER_TIMEOUT", "3"))
        try:
            got = entries_from_openrouter((openrouter_fetch or fetch_json)(url, timeout))
            sources["openrouter"] = {"status": "ok", "entries": len(got)}
            entries += got
        except (OSError, ValueError, CatalogError) as exc:
            sources["openrouter"] = {"status": "unreachable", "error": f"{type(exc).__name__}: {exc}"[:200]}
        sources["openrouter"]["seconds"] = round(time.perf_counter() - t0, 3)
    local, sources["local"] = probe_local(local_urls if local_urls is not None else local_endpoint_urls())
    entries += local
    unique = {e.id: e for e in reversed(entries)}  # first source wins on a repeated id
    sources["build"] = {"seconds": round(time.perf_counter() - started, 3)}
    return Catalog(tuple(sorted(unique.values(), key=lambda e: e.id)), time.time(), sources)
