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
_VOX = re.compile(r"\bvox\b|\.vox\b|```vox", re.IGNORECASE)
_VOX_ACTION = re.compile(
    r"\b(write|create|generate|make|build|implement|fix|repair|port|convert|translate|rewrite|"
    r"code|script|program|function|fn|actor|workflow|routes?|type)\b", re.IGNORECASE)
#: a backticked signature in Vox's own syntax, its return type after ``to`` (spec §2: ``fn f(x: int)
#: to int``; Python, Rust and TypeScript write ``->`` or ``:``): `is_adult(u: User) to bool`
_VOX_SIGNATURE = re.compile(r"`(?:fn\s+)?[A-Za-z_]\w*\s*\([^`()]*(?:\([^`()]*\)[^`()]*)*\)\s+to\s+[^`\s][^`]*`")


def infer_category(text: str) -> str:
    """``codegen`` for code requests, ``reasoning`` for analysis, else ``chat``."""
    if _CODE.search(text):
        return "codegen"
    if _REASONING.search(text):
        return "reasoning"
    return "chat"


#: a question word, with or without a contraction's apostrophe and in common misspellings ("what's",
#: "Whats", "hows", "wheres", "wat", "doesnt", "cant"); not "don't", which mostly opens an instruction
_QWORD: Final = (r"(?:(?:what|wat|waht|whta|how|where|why|who|when)(?:['\u2019]?(?:s|re|d))?|which|whose"
                 r"|(?:is|are|was|were|does|did|could|should|would)(?:n['\u2019]?t)?|do|can(?:['\u2019]?t|not)?)")
#: a question about the language rather than a request for code: it opens with a question word
#: and asks for nothing to be written (:data:`_WRITE`), e.g. "what is an actor in Vox?"
_QUESTION = re.compile(rf"^\W*(?:{_QWORD}|explain|describe|tell me)\b", re.IGNORECASE)
#: a question word after a greeting or an opening phrase ("Hi! What is...", "In Vox, what is..."),
#: counted only when the text ends with a question mark
_QUESTION_LATER = re.compile(rf"[.!:,;\u2014-]\s*{_QWORD}\b", re.IGNORECASE)
_WRITE = re.compile(
    r"```|\b(?:write|create|generate|make|build|implement|fix|repair|port|convert|translate|rewrite|code|"
    r"refactor|update|complete|add|extend|need|want|show me|give me|examples?|look like|(?:can|could|may) i "
    r"(?:have|get|see)|compiles?|compiling)\b|\bfn\s+\w+\s*\(", re.IGNORECASE)
#: an explicit refusal of code: "no code (please)", "without (any) code", "don't write any code",
#: "do not give me a function", "not asking for code", "just explain". "no code" and "without code"
#: count only at the end of a phrase, so "no code comments" or "without code duplication" (how the
#: code should be) refuse nothing
_NO_CODE = re.compile(
    r"\b(?:no|without(?:\s+any)?(?:\s+writing)?)\s+(?:vox\s+)?code(?:\s+(?:examples?|snippets?|samples?))?"
    r"(?:\s+(?:please|pls|needed|required|necessary|thanks))?(?=\s*(?:$|[.,;:!?)\u2014]))"
    r"|\b(?:do\s+not|don['\u2019]?t|no\s+need\s+to)\s+(?:write|give|show|generate|send|include|provide|produce"
    r"|need|want)(?:\s+(?:me|us))?(?:\s+(?:any|a|the|some))?\s+(?:vox\s+)?"
    r"(?:code|programs?|functions?|snippets?|examples?|implementations?)\b"
    r"|\bno\s+need\s+for\s+(?:any\s+)?code\b|\bnot\s+(?:asking|looking)\s+for\s+(?:any\s+)?code\b"
    r"|\b(?:just|only)\s+(?:explain|describe|tell\s+me)\b|\b(?:just|only)\s+an\s+explanation\b"
    r"|\bexplanation\s+only\b", re.IGNORECASE)


def refuses_code(text: str) -> bool:
    """True when ``text`` explicitly asks for no code (:data:`_NO_CODE`: "no code please", "don't
    write any code", "just explain") and, that refusal left out, asks for nothing to be written
    (:data:`_WRITE`): "What is an actor in Vox? Don't write any code." A request that also asks
    for something ("I have no code yet. Write a Vox function...") refuses nothing. Never raises."""
    plain = _NO_CODE.sub(" ", text)
    return plain != text and not _WRITE.search(plain)


def is_vox_request(text: str) -> bool:
    """True when the request asks for Vox code: it mentions Vox and a code action, or it gives a
    backticked signature in Vox syntax (`` `is_adult(u: User) to bool` ``, :data:`_VOX_SIGNATURE`;
    a new-user trial's request that named no language went unchecked). A question about the
    language that asks for nothing to be written ("what is an actor in Vox?", "Whats a workflow in
    Vox?", :data:`_QUESTION`) is not one: a new-user trial got a made-up function and
    ``vox-script-verify: PASS`` for it; nor is a request that refuses code (:func:`refuses_code`:
    "Explain workflows in Vox, no code please"), whose refusal's words ("code", "write") are no
    code action."""
    if refuses_code(text):
        return False
    if _VOX_SIGNATURE.search(text):
        return True
    plain = _NO_CODE.sub(" ", text)
    if not (_VOX.search(plain) and _VOX_ACTION.search(plain)):
        return False
    return not _asks_nothing_written(plain)


#: follow-ups that ask for the code to change, though they open with a question word
_CHANGE: Final = re.compile(r"^\W*(?:what\s+if|what\s+about|how\s+about|and\s+if|now\s+)\b", re.IGNORECASE)


def _asks_nothing_written(plain: str) -> bool:
    question = bool(_QUESTION.search(plain)) or (plain.rstrip().endswith(("?", "\uff1f"))
                                                  and bool(_QUESTION_LATER.search(plain)))
    return question and not _WRITE.search(plain)


def is_question(text: str) -> bool:
    """True when ``text`` is a question that asks for nothing to be written ("whats a workflow?",
    "why does it return 0?"): in a Vox conversation such a follow-up is answered as prose, not
    checked as code. A follow-up that asks for a change ("what if it took a list?", "how about
    negative numbers?", "can you make it generic?") is not one. Never raises."""
    plain = _NO_CODE.sub(" ", text)
    return not _CHANGE.search(plain) and _asks_nothing_written(plain)


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
