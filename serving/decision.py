"""What the router decides: :class:`Candidate` (one model of the cascade) and :class:`Decision`.

Plain data shared by :mod:`serving.router` (which builds decisions) and :mod:`serving.cascade`
(which executes them); neither imports the other, so there is no import cycle.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Candidate:
    """A model in the cascade (or a rejected one, with ``rejected`` set).

    Attributes:
        id: catalog id (``openai/gpt-5``, ``local/vox-mens-tiny``).
        litellm_model: what LiteLLM is called with.
        provider: catalog provider (``openai``, ``openrouter``, ``local``...).
        score: routing score (see :mod:`serving.scoring`).
        reasons: the score's one-line breakdown.
        api_base: base URL of a local endpoint, else ``None``.
        input_usd_per_mtok, output_usd_per_mtok: catalog prices, USD per million tokens
            (``None`` when unknown); the cost of an answer is computed from them.
        rejected: why the model cannot serve the request (``None`` for a cascade member).
        max_tokens: this model's answer cap when its context window cannot hold the requested
            ``max_output_tokens`` after the prompt (``None``: the request's limit applies).
        max_tokens_note: why ``max_tokens`` was capped, for ``--explain``.
        context_window: the catalog's context window in tokens (``None`` if unknown); after a
            context-overflow error the cascade only moves on to models with a larger one.
        is_free: verified $0 model (a provider out of credit may still serve it).
        deployments: base URLs of every local endpoint serving this model (``api_base`` first):
            with two or more, the cascade load-balances over them and retries a deployment that
            fails for a per-deployment reason on another one (:mod:`serving.cascade`); empty for
            hosted models.
    """

    id: str
    litellm_model: str
    provider: str
    score: float
    reasons: str
    api_base: str | None = None
    input_usd_per_mtok: float | None = None
    output_usd_per_mtok: float | None = None
    rejected: str | None = None
    max_tokens: int | None = None
    max_tokens_note: str = ""
    context_window: int | None = None
    is_free: bool = False
    deployments: tuple[str, ...] = ()


@dataclass(frozen=True)
class Decision:
    """The router's answer: ``candidates[0]`` is the primary, the rest the fallbacks in order.

    Attributes:
        mode: the mode (or ``explicit model``) that was resolved.
        category: ``codegen``, ``chat`` or ``reasoning``.
        vox: the request asks for Vox code.
        rule: the scoring rule with this mode's numbers.
        candidates: primary first.
        rejected: notable models that failed a filter, with the reason.
        skipped_no_key: models skipped because their provider has no key.
        excluded: one line per provider left out for this session (e.g. out of credit), shown
            by :meth:`explain`.
    """

    mode: str
    category: str
    vox: bool
    rule: str
    candidates: tuple[Candidate, ...]
    rejected: tuple[Candidate, ...] = ()
    skipped_no_key: int = 0
    excluded: tuple[str, ...] = ()

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
            if len(c.deployments) > 1:
                lines.append(f"           {len(c.deployments)} deployments, load-balanced: {', '.join(c.deployments)}")
            if c.max_tokens is not None:
                lines.append(f"           max_tokens capped to {c.max_tokens}: {c.max_tokens_note}")
        for c in self.rejected:
            lines.append(f"  rejected {c.id}  score={c.score:+.3f}  ({c.rejected})")
        for line in self.excluded:
            lines.append(f"  excluded {line}")
        if self.skipped_no_key:
            lines.append(f"  skipped {self.skipped_no_key} models of providers without a key")
        return "\n".join(lines)
