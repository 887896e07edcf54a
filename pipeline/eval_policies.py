"""The eval stage's generators, one per decoding policy, all through the one decoder (:mod:`pipeline.decoding`).

``unconstrained`` samples plainly; ``constrained`` adds the Vox grammar/scope/request constraint of
:mod:`pipeline.decoding_constraint` (``vox serve``'s default for local models) when that module is
present and accepts the tokenizer; otherwise the policy is reported as pending by
:func:`pipeline.evaluate.run_eval`. Each model is loaded once and shared by its generators.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)


def constraint_for(tokenizer: Any) -> Callable[..., Any] | None:
    """The constrained-decoding factory for ``tokenizer`` (``HFGenerator(constraint=...)``), or
    ``None`` when no constraint module is available or it cannot map this tokenizer (warned)."""
    try:
        from pipeline import decoding_constraint  # type: ignore[attr-defined,unused-ignore]
    except ImportError:
        log.warning("eval: pipeline.decoding_constraint is not available; the constrained policy is pending")
        return None
    make = getattr(decoding_constraint, "constraint_factory", None)
    if make is None:
        log.warning("eval: pipeline.decoding_constraint has no constraint_factory(tokenizer); constrained pending")
        return None
    try:
        factory = make(tokenizer)
    except Exception as exc:  # noqa: BLE001 - a tokenizer the grammar cannot map: unconstrained, as vox serve does
        log.warning("eval: constrained decoding unavailable for this tokenizer (%s); constrained pending", exc)
        return None
    return factory if callable(factory) else None


def eval_generators(adapter: Any, config: Any, device: str) -> tuple[Any, Any, tuple[Any, Any] | None]:
    """``(base, adapter, (constrained base, constrained adapter) | None)`` generators for the eval.

    Args:
        adapter: the ``qlora_adapter`` stage result (indexable: ``base_model``, ``adapter_dir``).
        config: the eval recipe section (:class:`pipeline.evaluate.EvalConfig`).
        device: resolved device.
    """
    from pipeline.decoding import HFGenerator, load_model

    def pair(adapter_dir: str | None) -> tuple[Any, Any]:
        model, tok = load_model(adapter["base_model"], adapter_dir, device)
        common = (model, tok, config.max_new_tokens, config.temperature, config.top_p, config.batch_size, config.seed)
        constraint = constraint_for(tok)
        return HFGenerator(*common), (HFGenerator(*common, constraint=constraint) if constraint else None)

    base, base_c = pair(None)
    tuned, tuned_c = pair(adapter["adapter_dir"])
    return base, tuned, ((base_c, tuned_c) if base_c is not None and tuned_c is not None else None)
