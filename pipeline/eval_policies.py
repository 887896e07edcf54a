"""The eval stage's generators, one per decoding policy, all through the one decoder (:mod:`pipeline.decoding`).

``unconstrained`` samples plainly; ``constrained`` adds the Vox grammar, name and request masks of
:mod:`pipeline.decoding_constraint` / :mod:`pipeline.decoding_names` (``vox serve``'s default for
local models) when llguidance can use the tokenizer; otherwise the policy is reported as pending
by :func:`pipeline.evaluate.run_eval`. Each model is loaded once and shared by its generators.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)


def eval_generators(adapter: Any, config: Any, device: str, *,
                    lazy_base: bool = False) -> tuple[Any, Any, tuple[Any, Any] | None]:
    """``(base, adapter, (constrained base, constrained adapter) | None)`` generators for the eval.

    The constrained pair is ``vox serve``'s default decoding (grammar + name- and request-aware
    masks, :class:`pipeline.decoding_batch.HFGenerator` ``constrained=True``, with ``config.retries``
    rounds of compiler-checked retries, :mod:`pipeline.decoding_retry`); it is ``None`` (policy
    pending) when the constraint cannot be used with this tokenizer (the decoder warns why).

    Args:
        adapter: the ``qlora_adapter`` stage result (indexable: ``base_model``, ``adapter_dir``).
        config: the eval recipe section (:class:`pipeline.evaluate.EvalConfig`).
        device: resolved device.
        lazy_base: load the base model only when one of its generators is first used (or asked
            for an attribute): with ``eval.workers: 2`` a second process samples the base
            (:mod:`pipeline.eval_workers`) and this one needs it only if that process fails. The
            adapter shares the base's tokenizer, so whether the constrained pair exists is read
            from the adapter's.

    Raises:
        DataError: ``config.retries`` is negative.
    """
    from pipeline.errors import DataError

    if config.retries < 0:
        raise DataError(f"eval.retries={config.retries} must be 0 or more")
    if lazy_base:
        tuned, tuned_c = model_generators(adapter["base_model"], adapter["adapter_dir"], config, device)
        pair = _LazyPair(lambda: model_generators(adapter["base_model"], None, config, device))
        return pair.side(0), tuned, ((pair.side(1), tuned_c) if tuned_c is not None else None)
    base, base_c = model_generators(adapter["base_model"], None, config, device)
    tuned, tuned_c = model_generators(adapter["base_model"], adapter["adapter_dir"], config, device)
    return base, tuned, ((base_c, tuned_c) if base_c is not None and tuned_c is not None else None)


class _LazyPair:
    """The ``(unconstrained, constrained)`` pair :func:`model_generators` returns, built on first use."""

    def __init__(self, build: Callable[[], tuple[Any, Any | None]]) -> None:
        self._build = build
        self._pair: tuple[Any, Any | None] | None = None

    def get(self, index: int) -> Any:
        """Generator ``index`` of the pair, building both on the first call.

        Raises:
            PipelineError: the constrained generator was asked for and the constraint cannot
                be used with the base's tokenizer (its adapter's could: a mismatch).
        """
        from pipeline.errors import PipelineError

        if self._pair is None:
            self._pair = self._build()
        found = self._pair[index]
        if found is None:
            raise PipelineError("the base model's tokenizer cannot be constrained though its adapter's can")
        return found

    def side(self, index: int) -> _LazyGenerator:
        """A stand-in for generator ``index`` that builds the pair when first called or read."""
        return _LazyGenerator(self, index)


class _LazyGenerator:
    """Calls and attribute reads go to generator ``index`` of a :class:`_LazyPair`, built then."""

    def __init__(self, pair: _LazyPair, index: int) -> None:
        self._lazy_pair, self._lazy_index = pair, index

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._lazy_pair.get(self._lazy_index)(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._lazy_pair.get(self._lazy_index), name)


def model_generators(base_model: str, adapter_dir: str | None, config: Any, device: str) -> tuple[Any, Any | None]:
    """``(unconstrained, constrained | None)`` generators over one model (``base_model`` plus
    ``adapter_dir`` when given, loaded once and shared); the constrained one is ``None`` (with a
    warning) when the constraint cannot be used with the tokenizer. Arguments as
    :func:`eval_generators`."""
    from pipeline.decoding import load_model
    from pipeline.decoding_batch import HFGenerator

    model, tok = load_model(base_model, adapter_dir, device)
    common = (model, tok, config.max_new_tokens, config.temperature, config.top_p, config.batch_size, config.seed)
    plain = HFGenerator(*common, constrained=False)
    constrained = HFGenerator(*common, constrained=True, retries=config.retries,
                              retry_temperature=config.retry_temperature)
    if constrained.constraint is None:
        log.warning("eval: constrained policy pending (%s)", constrained.constraint_note)
        return plain, None
    return plain, constrained
