"""The model catalog: every model ``vox chat`` could route to, cached in
``$VOX_HOME/cache/model-catalog.v1.json``.

This module owns the cache file (age, ``--force``, corruption, atomic writes) and is the
public face of the catalog: the data model (:mod:`serving.catalog_entry`) and the sources and
builder (:mod:`serving.catalog_sources`: LiteLLM's bundled cost map, OpenRouter, local
endpoints, priors; prices normalised to USD per million tokens) are re-exported here.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import asdict, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from pipeline import atomic
from serving.catalog_entry import (  # Catalog, CatalogEntry re-exported
    ENTRY_FIELDS,
    REQUIRED_FIELDS,
    Catalog as Catalog,
    CatalogEntry as CatalogEntry,
)
from serving.catalog_sources import (  # re-exported (`X as X`): the catalog's public API
    LOCAL_SPEED_TPS as LOCAL_SPEED_TPS,
    MAX_SANE_USD_PER_MTOK as MAX_SANE_USD_PER_MTOK,
    OLLAMA_URL as OLLAMA_URL,
    OPENROUTER_URL as OPENROUTER_URL,
    _read_pass_at_1 as _read_pass_at_1,
    build_catalog as build_catalog,
    entries_from_litellm as entries_from_litellm,
    entries_from_openrouter as entries_from_openrouter,
    export_pass_at_1 as export_pass_at_1,
    fetch_json as fetch_json,
    litellm_cost_map as litellm_cost_map,
    local_endpoint_urls as local_endpoint_urls,
    per_token_to_per_mtok as per_token_to_per_mtok,
    probe_local as probe_local,
)
from serving.errors import CatalogError
from serving.keys import vox_home
from serving.provider_status import forget_all

SCHEMA_VERSION: Final = 1
DEFAULT_MAX_AGE_S: Final = 24 * 3600  # reuse a cache younger than a day (VOX_CATALOG_MAX_AGE)

Warn = Callable[[str], None]


def cache_path() -> Path:
    """``$VOX_HOME/cache/model-catalog.v1.json``."""
    return vox_home() / "cache" / f"model-catalog.v{SCHEMA_VERSION}.json"


def save_catalog(catalog: Catalog, path: Path | None = None) -> Path:
    """Write atomically (:mod:`pipeline.atomic`); returns the path. No keys are stored."""
    path = path or cache_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {
        "schema_version": SCHEMA_VERSION,
        "created": datetime.fromtimestamp(catalog.created_unix, UTC).isoformat(),
        "created_unix": catalog.created_unix,
        "units": {"prices": "USD per million tokens", "speed": "output tokens per second",
                  "priors": "0-100 intelligence-index scale"},
        "sources": catalog.sources,
        "entries": [{k: v for k, v in asdict(e).items()} for e in catalog.entries],
    }
    return atomic.write_json(path, doc, compact=True)


def load_catalog(path: Path | None = None) -> Catalog:
    """Read a cache file.

    Raises:
        CatalogError: missing, unreadable, wrong schema or malformed entries (message names the
            file and what is wrong).
    """
    path = path or cache_path()
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(doc, dict) or doc.get("schema_version") != SCHEMA_VERSION:
            raise ValueError(f"schema_version is not {SCHEMA_VERSION}")
        entries = []
        for i, raw in enumerate(doc["entries"]):
            # fields added later (with defaults) may be missing from an older cache
            if not isinstance(raw, dict) or not set(REQUIRED_FIELDS) <= set(raw) <= set(ENTRY_FIELDS):
                raise ValueError(f"entry #{i} does not have the catalog entry fields")
            entries.append(CatalogEntry(**{**raw, "capabilities": tuple(raw["capabilities"]),
                                            "deployments": tuple(raw.get("deployments") or ())}))
        return Catalog(tuple(entries), float(doc["created_unix"]), dict(doc.get("sources") or {}))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CatalogError(f"{path}: {type(exc).__name__}: {exc}") from None


def max_age_s() -> float:
    """``VOX_CATALOG_MAX_AGE`` seconds (default one day)."""
    raw = os.environ.get("VOX_CATALOG_MAX_AGE")
    if raw is None:
        return float(DEFAULT_MAX_AGE_S)
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not value >= 0:  # NaN too
        raise CatalogError(f"VOX_CATALOG_MAX_AGE must be a number of seconds >= 0, got {raw!r}")
    return value


def load_or_build(force: bool = False, max_age: float | None = None, warn: Warn | None = None,
                  require_saved: bool = False, **build_kwargs: Any) -> tuple[Catalog, bool]:
    """The cached catalog if younger than ``max_age`` s, else a fresh one (saved).

    ``force`` also forgets the providers remembered as out of credit
    (:mod:`serving.provider_status`, a file next to the cache). A corrupt cache is reported
    through ``warn`` and rebuilt, never used. A cache that cannot be
    written (``$VOX_HOME`` read-only, a file, on a missing mount) is reported through ``warn``
    and the fresh catalog is used anyway, unless ``require_saved``.

    Returns:
        ``(catalog, rebuilt)``.

    Raises:
        CatalogError: ``require_saved`` and the cache file cannot be written (names the path), or
            ``VOX_CATALOG_MAX_AGE`` is not a number of seconds >= 0.
    """
    path = cache_path()
    limit = max_age_s() if max_age is None else max_age  # a bad setting is the user's to fix, not a corrupt cache
    if force:
        forget_all()
    if not force and path.exists():
        try:
            cached = load_catalog(path)
            if time.time() - cached.created_unix <= limit:
                return cached, False
        except CatalogError as exc:
            if warn:
                warn(f"model catalog cache is corrupt ({exc}); rebuilding it")
    catalog = build_catalog(**build_kwargs)
    try:
        save_catalog(catalog, path)
    except OSError as exc:
        message = (f"cannot write the model catalog cache {path}: {exc.strerror or exc} "
                   "(set VOX_HOME to a writable folder)")
        if require_saved:
            raise CatalogError(message) from None
        if warn:
            warn(f"{message}; continuing without a cache")
    return catalog, True


def with_live_local(catalog: Catalog, urls: list[str] | None = None, timeout: float | None = None) -> Catalog:
    """Replace the catalog's local entries by a fresh probe; stale ones stay, marked unreachable."""
    live, status = probe_local(urls if urls is not None else local_endpoint_urls(), timeout)
    live_ids = {e.id for e in live}
    stale = [replace(e, reachable=False) for e in catalog.entries if e.local and e.id not in live_ids]
    hosted = [e for e in catalog.entries if not e.local]
    return catalog.with_entries(hosted + live + stale, local=status)
