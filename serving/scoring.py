"""The five routing modes and how a model is scored for a request (no I/O, no state).

Scoring rule (shown by ``vox chat --explain``)::

    q  quality in [0, 1]   codegen: coding prior / 100; chat: intelligence prior / 100;
                           reasoning: intelligence prior / 100 + 0.05 if the model reasons.
                           Vox code request + local model with a measured Vox pass@1: q = pass@1.
    c  cost in [0, 1]      log10(1 + P) / log10(101), P = blended USD per million tokens
                           = (3 x input + output) / 4; free = 0; unknown price: P = $20/M.
    s  speed in [0, 1]     log10(tokens per second) / 3, clamped (1000 tok/s = 1).
    need                   0.07 x complexity (complexity 3 -> 0.21, 6 -> 0.42, 9 -> 0.63)
    score = wq*q + ws*s - wc*c - 2*max(0, need - q)
    weights (wq, ws, wc)   performance (1.0, 0.1, 0.1), balanced (1.0, 0.2, 0.5),
                           efficiency (0.6, 0.6, 1.0)

Candidates are the best-scoring models that pass the filters (key or reachable local endpoint,
free-only, --local-only, --max-cost, context window); the top K form the cascade.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Final, TypeVar

from serving.catalog_entry import CatalogEntry

_T = TypeVar("_T")

CATEGORIES: Final = ("codegen", "chat", "reasoning")
UNKNOWN_PRICE_USD_PER_MTOK: Final = 20.0  # pessimistic stand-in: unknown price ranks as dear
_LOG_COST_CAP: Final = math.log10(101.0)

WEIGHTS: Final[dict[str, tuple[float, float, float]]] = {
    # preference: (quality, speed, cost)
    "performance": (1.0, 0.1, 0.1),
    "balanced": (1.0, 0.2, 0.5),
    "efficiency": (0.6, 0.6, 1.0),
}


@dataclass(frozen=True, slots=True)
class Profile:
    """A routing mode (design doc table).

    Attributes:
        name: canonical mode name.
        preference: key of :data:`WEIGHTS`, per category (``codegen``/``chat``/``reasoning``).
        complexity: 1-10 per category; sets the quality ``need``.
        free_only: only verified $0 models (and local ones).
        analysis_category: category used for non-code requests (genius → reasoning).
        router_fallback: provider-side router appended after the cascade when its key exists.
    """

    name: str
    preference: dict[str, str]
    complexity: dict[str, int]
    free_only: bool = False
    analysis_category: str | None = None
    router_fallback: str | None = None


def _same(value: _T) -> dict[str, _T]:
    return {c: value for c in CATEGORIES}


MODES: Final[dict[str, Profile]] = {
    "free": Profile("free", _same("efficiency"), _same(5), free_only=True,
                    router_fallback="openrouter/openrouter/free"),
    "auto": Profile("auto", {"codegen": "performance", "chat": "balanced", "reasoning": "balanced"},
                    {"codegen": 7, "chat": 5, "reasoning": 6}, router_fallback="openrouter/openrouter/auto"),
    "efficient": Profile("efficient", _same("efficiency"), _same(3)),
    "balanced": Profile("balanced", _same("balanced"), _same(6)),
    "genius": Profile("genius", _same("performance"), _same(9), analysis_category="reasoning"),
}

ALIASES: Final[dict[str, str]] = {
    "auto-free": "free", "zero-cost": "free",
    "fast": "efficient", "efficiency": "efficient",
    "standard": "balanced",
    "sota": "genius", "frontier": "genius", "max": "genius",
}

_CODE = re.compile(
    r"```|\b(code|coding|function|func|fn|script|program|implement|refactor|debug|bug|compile[rs]?|"
    r"class|method|regex|sql|python|rust|javascript|typescript|golang|java|vox|snippet|api|"
    r"algorithm|unit tests?|syntax)\b", re.IGNORECASE)
_REASONING = re.compile(
    r"\b(why|prove|proof|analy[sz]e|analysis|reason(ing)?|derive|compare|trade-?offs?|"
    r"step[- ]by[- ]step|calculate|estimate|evaluate|math|theorem|explain)\b", re.IGNORECASE)


def infer_category(text: str) -> str:
    """``codegen`` for code requests, ``reasoning`` for analysis, else ``chat``."""
    if _CODE.search(text):
        return "codegen"
    if _REASONING.search(text):
        return "reasoning"
    return "chat"


def quality(entry: CatalogEntry, category: str, vox: bool) -> tuple[float, str]:
    """``q`` and a short explanation of where it came from."""
    if vox and entry.vox_pass_at_1 is not None:
        return entry.vox_pass_at_1, f"Vox pass@1 {entry.vox_pass_at_1:.2f}"
    if category == "codegen":
        return entry.coding_prior / 100, f"coding prior {entry.coding_prior:g} ({entry.prior_source})"
    bonus = 0.05 if category == "reasoning" and "reasoning" in entry.capabilities else 0.0
    note = " +0.05 reasoning" if bonus else ""
    why = f"intelligence prior {entry.intelligence_prior:g}{note} ({entry.prior_source})"
    return entry.intelligence_prior / 100 + bonus, why


def cost_term(entry: CatalogEntry) -> tuple[float, str]:
    """``c`` and its explanation."""
    if entry.is_free or entry.local:
        return 0.0, "free"
    price = entry.blended_usd_per_mtok
    if price is None:
        return math.log10(1 + UNKNOWN_PRICE_USD_PER_MTOK) / _LOG_COST_CAP, (
            f"price unknown (assumed ${UNKNOWN_PRICE_USD_PER_MTOK:g}/M)")
    return min(1.0, math.log10(1 + price) / _LOG_COST_CAP), f"${price:.3g}/M blended"


def speed_term(entry: CatalogEntry) -> float:
    """``s``: log-scaled speed prior in [0, 1]."""
    return min(1.0, max(0.0, math.log10(max(entry.speed_prior_tps, 1.0)) / 3))


def score(entry: CatalogEntry, profile: Profile, category: str, vox: bool) -> tuple[float, str]:
    """The score of ``entry`` under ``profile`` for ``category`` and its one-line breakdown."""
    wq, ws, wc = WEIGHTS[profile.preference[category]]
    need = 0.07 * profile.complexity[category]
    q, q_note = quality(entry, category, vox)
    c, c_note = cost_term(entry)
    s = speed_term(entry)
    shortfall = max(0.0, need - q)
    total = wq * q + ws * s - wc * c - 2 * shortfall
    parts = (f"q={q:.2f} [{q_note}] s={s:.2f} [{entry.speed_prior_tps:g} tok/s] c={c:.2f} [{c_note}]"
             + (f" shortfall={shortfall:.2f}" if shortfall else ""))
    return total, parts


def rule_text(profile: Profile, category: str) -> str:
    """The scoring rule with this mode's numbers filled in (for ``--explain``)."""
    wq, ws, wc = WEIGHTS[profile.preference[category]]
    need = 0.07 * profile.complexity[category]
    return (f"score = {wq:g}*q + {ws:g}*s - {wc:g}*c - 2*max(0, {need:.2f} - q)   "
            f"[{profile.name}: {profile.preference[category]}, complexity {profile.complexity[category]}"
            f"{', free only' if profile.free_only else ''}]")
