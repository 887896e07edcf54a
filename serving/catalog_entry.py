"""The catalog's data model: :class:`CatalogEntry` (one routable model) and :class:`Catalog`.

Prices are USD per million tokens (units in the field names); see :mod:`serving.catalog` for
the cache file and :mod:`serving.catalog_sources` for where entries come from.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, Final


@dataclass(frozen=True, slots=True)
class CatalogEntry:
    """One routable model.

    Attributes:
        id: unique id, also the LiteLLM model string for hosted models (``openai/gpt-5``);
            ``local/<name>`` for local ones.
        provider: LiteLLM provider (``openai``, ``openrouter``...), or ``local``.
        litellm_model: what LiteLLM is called with (``openai/<name>`` plus ``api_base`` for local).
        input_usd_per_mtok, output_usd_per_mtok: USD per million tokens, ``None`` if unknown.
        context_window: max input tokens, ``None`` if unknown; for local models the server's
            ``max_model_len`` (prompt + answer tokens).
        is_free: verified zero price (``:free`` OpenRouter models, local models).
        capabilities: e.g. ``("chat", "stream", "reasoning", "vision", "tools")``.
        intelligence_prior, coding_prior: 0-100 quality priors; speed_prior_tps: tokens/s.
        prior_source: where the priors come from (``aa-v3 2025-10``, ``heuristic:price``...).
        source: which catalog source produced it (``litellm``, ``openrouter``, ``local``).
        api_base: base URL for local endpoints, else ``None``.
        vox_pass_at_1: Vox pass@1 measured by the pipeline (local exports), else ``None``.
        reachable: for local entries, whether the endpoint answered when last probed.
        system_prompt_mode: local ``vox serve`` models: ``"ssot"`` (system messages kept) or
            ``"none"`` (the server drops them); ``None`` if unknown or hosted.
        deployments: local models: the base URLs of every endpoint that serves this model id
            (``api_base`` first), one deployment each for the router's load balancing; empty for
            hosted models (one deployment: the provider's).
    """

    id: str
    provider: str
    litellm_model: str
    input_usd_per_mtok: float | None
    output_usd_per_mtok: float | None
    context_window: int | None
    is_free: bool
    capabilities: tuple[str, ...]
    intelligence_prior: float
    coding_prior: float
    speed_prior_tps: float
    prior_source: str
    source: str
    api_base: str | None = None
    vox_pass_at_1: float | None = None
    reachable: bool | None = None
    system_prompt_mode: str | None = None
    deployments: tuple[str, ...] = ()

    @property
    def local(self) -> bool:
        return self.api_base is not None

    @property
    def deployment_count(self) -> int:
        """How many deployments serve this model (endpoints for a local model; 1 for hosted)."""
        return max(1, len(self.deployments))

    @property
    def blended_usd_per_mtok(self) -> float | None:
        """(3 × input + output) / 4: a typical 3:1 prompt-to-answer token mix; None if unknown."""
        if self.input_usd_per_mtok is None or self.output_usd_per_mtok is None:
            return None
        return (3 * self.input_usd_per_mtok + self.output_usd_per_mtok) / 4


ENTRY_FIELDS: Final = tuple(f.name for f in fields(CatalogEntry))
REQUIRED_FIELDS: Final = tuple(f.name for f in fields(CatalogEntry) if f.default is MISSING)


@dataclass(frozen=True)
class Catalog:
    """The entries plus where they came from; ``rank_cache`` is the router's memo (not saved)."""

    entries: tuple[CatalogEntry, ...]
    created_unix: float
    sources: dict[str, dict[str, Any]]
    rank_cache: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)

    def by_id(self) -> dict[str, CatalogEntry]:
        memo = self.rank_cache.get("__by_id__")
        if memo is None:
            memo = self.rank_cache["__by_id__"] = {e.id: e for e in self.entries}
        return memo

    def with_entries(self, entries: Iterable[CatalogEntry], **sources: dict[str, Any]) -> Catalog:
        return Catalog(tuple(entries), self.created_unix, {**self.sources, **sources})

