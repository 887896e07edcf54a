"""Rules between recipe values: checks no single field's type or bound can say, run with the rest of
the recipe's validation (:func:`pipeline.recipes.validate_recipe`, every
:func:`pipeline.recipes.stage_config`) instead of when a late stage starts.

Each rule reads the frozen section configs (``{section: config}``) and says what is wrong in one
line, or nothing. A rule between sections runs only where both values come from the recipe: e.g.
``train.max_length`` is held to ``base_model.max_positions`` only when the recipe builds its own base
model (``base_model.model: bootstrap``) and trains on it (``train.base_model`` empty). The stages keep
their own checks as a second line of defence.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any, NamedTuple

#: a recipe value's name in messages: ``"eval.k"`` -> ``"eval.k"``, or ``"--k"`` for a flag over it
Namer = Callable[[str], str]
Rule = Callable[[Mapping[str, Any], Namer], str | None]


class Violation(NamedTuple):
    """One broken rule: the message, and whether an override (not the recipe file) set a value it names."""

    text: str
    overridden: bool


def _bootstrap(configs: Mapping[str, Any]) -> Any | None:
    """The ``base_model`` config when the recipe builds its own base model, else ``None``."""
    base = configs.get("base_model")
    return base if base is not None and base.model == "bootstrap" else None


def k_within_samples(configs: Mapping[str, Any], name: Namer) -> str | None:
    """pass@k draws ``k`` of the ``n_samples`` completions of a task: ``eval.k <= eval.n_samples``."""
    ev = configs.get("eval")
    if ev is None or ev.k <= ev.n_samples:
        return None
    return f"{name('eval.k')}={ev.k} must not exceed {name('eval.n_samples')}={ev.n_samples} (pass@k needs k samples)"


def verify_within_samples(configs: Mapping[str, Any], name: Namer) -> str | None:
    """The verified policy picks among the first ``verify_n`` samples: ``eval.verify_n <= eval.n_samples``."""
    ev = configs.get("eval")
    if ev is None or ev.verify_n <= ev.n_samples:
        return None
    return (f"{name('eval.verify_n')}={ev.verify_n} must not exceed {name('eval.n_samples')}={ev.n_samples} "
            f"(best-of-n picks among the samples; set eval.verify_n to at most {ev.n_samples})")


def _divisible(configs: Mapping[str, Any], name: Namer, whole: str, part: str, why: str) -> str | None:
    """A bootstrap model's ``base_model.<whole>`` must be a multiple of ``base_model.<part>``."""
    base = _bootstrap(configs)
    if base is None or getattr(base, whole) % getattr(base, part) == 0:
        return None
    return (f"{name('base_model.' + whole)}={getattr(base, whole)} must be divisible by "
            f"{name('base_model.' + part)}={getattr(base, part)} ({why})")


def heads_divide_width(configs: Mapping[str, Any], name: Namer) -> str | None:
    """A bootstrap model's attention heads split the residual width evenly: ``hidden_size % num_heads == 0``."""
    return _divisible(configs, name, "hidden_size", "num_heads", "head_dim = hidden_size / num_heads")


def kv_heads_divide_heads(configs: Mapping[str, Any], name: Namer) -> str | None:
    """Grouped-query attention shares each key/value head among whole query heads:
    ``num_heads % num_kv_heads == 0``."""
    return _divisible(configs, name, "num_heads", "num_kv_heads", "grouped-query attention")


def block_within_context(configs: Mapping[str, Any], name: Namer) -> str | None:
    """A bootstrap model is pretrained on blocks that fit its context: ``pretrain_block_size <= max_positions``."""
    base = _bootstrap(configs)
    if base is None or base.pretrain_block_size <= base.max_positions:
        return None
    return (f"{name('base_model.pretrain_block_size')}={base.pretrain_block_size} must not exceed "
            f"{name('base_model.max_positions')}={base.max_positions} (the model's context)")


def length_within_context(configs: Mapping[str, Any], name: Namer) -> str | None:
    """Training rows fit the context of the bootstrap model they train: ``train.max_length <=
    base_model.max_positions`` (only when ``train.base_model`` is empty, i.e. the base_model stage's model)."""
    base, train = _bootstrap(configs), configs.get("train")
    if base is None or train is None or train.base_model or train.max_length <= base.max_positions:
        return None
    return (f"{name('train.max_length')}={train.max_length} must not exceed "
            f"{name('base_model.max_positions')}={base.max_positions} (the context of the bootstrap base model)")


def sources_known(configs: Mapping[str, Any], name: Namer) -> str | None:
    """``train.sources`` names corpus sources (a typo would silently leave that source out)."""
    from pipeline.generators.base import SOURCES

    train = configs.get("train")
    unknown = [s for s in train.sources if s not in SOURCES] if train is not None else []
    if not unknown:
        return None
    return f"{name('train.sources')}: unknown source(s) {', '.join(unknown)}; valid: {', '.join(SOURCES)}"


def sources_weighted(configs: Mapping[str, Any], name: Namer) -> str | None:
    """``train.sources`` selects at least one source the corpus mixes in (a positive ``corpus.weights`` share),
    else the training stage finds no train row."""
    from pipeline.generators.base import SOURCES

    train, corpus = configs.get("train"), configs.get("corpus")
    if train is None or corpus is None or not train.sources or not isinstance(corpus.weights, Mapping):
        return None
    if any(s not in SOURCES for s in train.sources):
        return None  # sources_known reports it
    every = list(corpus.weights.values())
    if not all(isinstance(w, (int, float)) for w in every) or not any(w > 0 for w in every):
        return None  # a weight that is not a number, or none positive: the corpus range check reports it
    if any(corpus.weights.get(s, 0) > 0 for s in train.sources):
        return None
    return (f"{name('train.sources')} {list(train.sources)} selects no train rows: none of them has a positive "
            f"share in {name('corpus.weights')}")


#: every rule, in the order problems are reported
RULES: tuple[Rule, ...] = (k_within_samples, verify_within_samples, heads_divide_width, kv_heads_divide_heads,
                           block_within_context, length_within_context, sources_known, sources_weighted)


def rule_violations(configs: Mapping[str, Any], names: Mapping[str, str] | None = None) -> list[Violation]:
    """Every rule of :data:`RULES` that ``configs`` break.

    Args:
        configs: ``{section: frozen config}``; a rule whose sections are missing is skipped.
        names: ``{"train.max_length": "--max-length"}``: values set by an override, and how to call
            them; a violation naming one of them is ``overridden``.
    """
    found: list[Violation] = []
    for rule in RULES:
        used: list[str] = []
        text = rule(configs, partial(_name, names or {}, used))
        if text is not None:
            found.append(Violation(text, bool(used)))
    return found


def _name(names: Mapping[str, str], used: list[str], dotted: str) -> str:
    """``names[dotted]`` (noting in ``used`` that an override was named), else ``dotted``."""
    if dotted in names:
        used.append(dotted)
        return names[dotted]
    return dotted
