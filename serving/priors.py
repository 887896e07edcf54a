"""Quality and speed priors per model family (``serving/data/model_priors.json``).

A prior is matched to a model id by family pattern: ids and patterns are lower-cased with ``_``
read as ``-``; a pattern matches when it occurs between word boundaries (start, end, ``-``,
``/``, ``:``, ``@``; not ``.``, so ``gpt-5`` does not claim ``gpt-5.6``); the longest matching
pattern wins, so ``gpt-5-mini`` beats ``gpt-5``.
Models matching no family get a prior estimated from their price (see :func:`price_prior`).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Final

from serving.errors import CatalogError

PRIORS_PATH: Final = Path(__file__).resolve().parent / "data" / "model_priors.json"


@dataclass(frozen=True, slots=True)
class Prior:
    """One family's priors.

    Attributes:
        family: family name (e.g. ``"gpt-5-mini"``).
        intelligence: 0-100, general quality (intelligence-index scale).
        coding: 0-100, code-generation quality on the same scale.
        speed_tps: median output tokens per second.
        reasoning: the family thinks before answering.
        source: where the numbers come from, with its date (``"aa-v3 2025-10"``).
    """

    family: str
    intelligence: float
    coding: float
    speed_tps: float
    reasoning: bool
    source: str


def _norm(text: str) -> str:
    return text.lower().replace("_", "-")


@lru_cache(maxsize=1)
def _table() -> tuple[re.Pattern[str], dict[str, Prior]]:
    """One alternation regex over all patterns (longest first) and pattern → prior.

    Raises:
        CatalogError: the data file is missing or malformed (names the file and the entry).
    """
    try:
        data = json.loads(PRIORS_PATH.read_text(encoding="utf-8"))
        sources = data["sources"]
        by_pattern: dict[str, Prior] = {}
        for i, fam in enumerate(data["families"]):
            src = sources[fam["source"]]
            prior = Prior(fam["family"], float(fam["intelligence"]), float(fam["coding"]),
                          float(fam["speed"]), bool(fam["reasoning"]), f"{fam['source']} {src['date']}")
            if not 0 <= prior.intelligence <= 100 or not 0 <= prior.coding <= 100 or prior.speed_tps <= 0:
                raise ValueError(f"family #{i} {fam['family']!r}: value out of range")
            for pattern in fam["match"]:
                by_pattern[_norm(pattern)] = prior
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CatalogError(f"{PRIORS_PATH}: malformed priors file ({exc})") from None
    alternatives = "|".join(re.escape(p) for p in sorted(by_pattern, key=len, reverse=True))
    regex = re.compile(r"(?:^|(?<=[-/:@]))(?:" + alternatives + r")(?=$|[-/:@])")
    return regex, by_pattern


def prior_for(model_id: str) -> Prior | None:
    """The prior of the family ``model_id`` belongs to, or ``None``."""
    regex, by_pattern = _table()
    text = _norm(model_id)
    best: str | None = None
    pos = 0
    while (m := regex.search(text, pos)) is not None:
        if best is None or len(m.group(0)) > len(best):
            best = m.group(0)
        pos = m.start() + 1
    return by_pattern[best] if best else None


def price_prior(blended_usd_per_mtok: float | None) -> Prior:
    """A weak prior for an unknown family, from its price: dearer models tend to be stronger.

    ``intelligence = 20 + 12 * log10(1 + price)`` clamped to [10, 55] (a $3/M model → 27); speed
    60 tokens/s. Unknown price → 25. Marked ``source="heuristic:price"``.
    """
    if blended_usd_per_mtok is None:
        value = 25.0
    else:
        value = min(55.0, max(10.0, 20.0 + 12.0 * math.log10(1.0 + blended_usd_per_mtok)))
    return Prior("unknown", value, value, 60.0, False, "heuristic:price")
