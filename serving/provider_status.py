"""Providers out of credit: remembered for the chat session and, with an expiry, next to the
catalog cache (``$VOX_HOME/cache/provider-status.v1.json``).

A provider that answered HTTP 402 (or "insufficient credits", "usage limit"...: kind ``credit``
in :mod:`serving.failures`) will answer the same on the next turn, so its paid models are left out
of routing until the entry expires (``VOX_CREDIT_RETRY_S`` seconds, default one hour) or the
catalog is rebuilt with ``vox model discover --force``. Its free models (OpenRouter's ``:free``)
stay usable: they need no credit. The file holds no keys, only provider names, statuses and the
provider's message (redacted).
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from pipeline import atomic
from serving.errors import CatalogError
from serving.failures import Failure
from serving.keys import vox_home

SCHEMA_VERSION: Final = 1
DEFAULT_RETRY_S: Final = 3600.0  # an hour: long enough to stop paying a 402 round trip per turn


@dataclass(frozen=True, slots=True)
class Exclusion:
    """One provider left out of routing.

    Attributes:
        provider: catalog provider name (``openrouter``).
        status: the HTTP status it answered (``None`` when it said so only in words).
        message: the provider's message (redacted, one line).
        since_unix, until_unix: when it was seen and when it expires (Unix seconds).
    """

    provider: str
    status: int | None
    message: str
    since_unix: float
    until_unix: float

    def when(self) -> str:
        """``HTTP 402 at 16:40 UTC; skipped until 17:40 UTC``."""
        status = f"HTTP {self.status} " if self.status else ""
        return f"{status}at {_hhmm(self.since_unix)}; skipped until {_hhmm(self.until_unix)}"

    def describe(self) -> str:
        """One ``--explain`` line: the provider, its status and message, until when, how to undo."""
        return (f"{self.provider}: out of credit ({self.when()}): {self.message} -- its paid models are left out; "
                "`vox model discover --force` forgets this")


def _hhmm(unix: float) -> str:
    return datetime.fromtimestamp(unix, UTC).strftime("%H:%M UTC")


def status_path() -> Path:
    """``$VOX_HOME/cache/provider-status.v1.json`` (next to the model catalog cache)."""
    return vox_home() / "cache" / f"provider-status.v{SCHEMA_VERSION}.json"


def retry_after_s() -> float:
    """``VOX_CREDIT_RETRY_S`` seconds (default :data:`DEFAULT_RETRY_S`).

    Raises:
        CatalogError: the variable is not a number.
    """
    try:
        return float(os.environ.get("VOX_CREDIT_RETRY_S", DEFAULT_RETRY_S))
    except ValueError:
        raise CatalogError("VOX_CREDIT_RETRY_S must be a number of seconds") from None


def load_exclusions(path: Path | None = None, now: float | None = None) -> dict[str, Exclusion]:
    """The unexpired exclusions of the status file (provider → exclusion).

    A missing file is no exclusion; an unreadable or malformed one is ignored (it is a cache: it
    is rewritten on the next out-of-credit answer).
    """
    path = path or status_path()
    now = time.time() if now is None else now
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        rows = doc["providers"] if isinstance(doc, dict) and doc.get("schema_version") == SCHEMA_VERSION else []
        found = [Exclusion(**row) for row in rows]
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    return {e.provider: e for e in found if e.until_unix > now}


def save_exclusions(exclusions: Mapping[str, Exclusion], path: Path | None = None) -> Path:
    """Write the status file atomically (:mod:`pipeline.atomic`).

    Raises:
        OSError: the cache folder cannot be written.
    """
    path = path or status_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {"schema_version": SCHEMA_VERSION, "providers": [asdict(e) for e in exclusions.values()]}
    return atomic.write_json(path, doc)


def forget_all(path: Path | None = None) -> None:
    """Delete the status file (``vox model discover --force``)."""
    (path or status_path()).unlink(missing_ok=True)


class ProviderHealth:
    """The session's memory of providers out of credit (thread-safe; one per chat session).

    Args:
        known: exclusions loaded at the start (:func:`load_exclusions`).
        path: the status file to update when a provider runs out of credit (``None``: the
            session only, nothing written).
    """

    def __init__(self, known: Mapping[str, Exclusion] | None = None, path: Path | None = None) -> None:
        self._excluded = dict(known or {})
        self._path = path
        self._lock = threading.Lock()
        self.write_error: str | None = None  # why the status file could not be written, if it failed

    def excluded(self) -> dict[str, Exclusion]:
        """A snapshot: provider → exclusion (what :func:`serving.router.decide` takes)."""
        with self._lock:
            return dict(self._excluded)

    def note(self, provider: str, failure: Failure) -> Exclusion | None:
        """Record ``failure`` of ``provider``; returns the new exclusion for a ``credit`` failure
        of a hosted provider, else ``None``."""
        if failure.kind != "credit" or provider in ("", "local"):
            return None
        now = time.time()
        exclusion = Exclusion(provider, failure.status, failure.message, now, now + retry_after_s())
        with self._lock:
            self._excluded[provider] = exclusion
            if self._path is not None:
                try:
                    on_disk = load_exclusions(self._path, now)
                    save_exclusions({**on_disk, provider: exclusion}, self._path)
                except OSError as exc:  # a cache: the session still remembers it
                    self.write_error = f"{self._path}: {exc.strerror or exc}"
        return exclusion
