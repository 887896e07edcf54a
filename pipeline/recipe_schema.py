"""Recipe schema: one strict pydantic model per recipe section, derived from the stage's config dataclass.

The frozen dataclasses (``TrainConfig``, ``ExportConfig`` ...) stay the typed result that stage code
uses; this module turns each into a pydantic model with ``extra="forbid"`` and strict types, so an
unknown key, a wrong type, a value outside a ``Literal`` or a bound (``Annotated`` with
``annotated_types``, e.g. :mod:`pipeline.recipe_types`; every integer at most :data:`INT64_MAX`), or a
non-finite number (``.inf``, ``.nan``: in every float field and every number of a mapping field) is
reported with its file, section and key before any stage runs, with the field's
:class:`pipeline.recipe_types.Reason` where it has one. Rules
between fields are in :mod:`pipeline.recipe_rules`. :data:`SECTIONS` is the one list of recipe sections.
"""

from __future__ import annotations

import dataclasses
import difflib
import importlib
import math
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Final

from annotated_types import Le
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, create_model
from pydantic_core import PydanticCustomError

from pipeline.errors import RecipeError

#: recipe section -> ``module:ConfigClass`` (imported lazily: loading a stage module stays cheap).
SECTIONS: Final[dict[str, str]] = {
    "corpus": "pipeline.corpus:CorpusConfig",
    "base_model": "pipeline.base_model:BaseModelConfig",
    "train": "pipeline.train:TrainConfig",
    "eval": "pipeline.evaluate:EvalConfig",
    "export": "pipeline.export:ExportConfig",
    "distributed": "pipeline.distributed:DistributedConfig",
}

#: the largest integer any recipe field takes: torch and numpy hold counts, sizes and seeds as int64,
#: and a larger one (``--batch-size 99999999999999999999``) passed validation, then overflowed there
INT64_MAX: Final = 2**63 - 1
#: what a message adds to an integer above :data:`INT64_MAX`
INT64_REASON: Final = "a larger integer overflows the int64 of torch and numpy"

#: errors listed in one message before "... and N more"
MAX_LISTED: Final = 3
#: pydantic errors of a value out of a field's bounds or allowed values: these get the field's reason
_BOUND_ERRORS: Final = frozenset({"greater_than", "greater_than_equal", "less_than", "less_than_equal",
                                  "multiple_of", "literal_error"})


def config_class(section: str) -> type[Any]:
    """The config dataclass of recipe section ``section``.

    Raises:
        KeyError: ``section`` is not in :data:`SECTIONS`.
    """
    module, _, name = SECTIONS[section].partition(":")
    cls: type[Any] = getattr(importlib.import_module(module), name)
    return cls


def _finite_entries(value: Any) -> Any:
    """Refuse a mapping holding a non-finite number (``corpus.weights: {organic: .inf}``)."""
    for key, entry in value.items() if isinstance(value, Mapping) else ():
        if isinstance(entry, float) and not math.isfinite(entry):
            raise PydanticCustomError("finite_number", "entry {key} should be a finite number",
                                      {"key": repr(key)})
    return value


def _schema_type(hint: Any) -> Any:
    """The pydantic type for a dataclass annotation.

    Mappings are checked here only for non-finite numbers: their entries are checked by the stage's
    own range check, which names the offending entry (e.g. ``corpus.weights: unknown source``).
    Float fields need nothing here: the model refuses ``inf``/``nan`` in all of them (``allow_inf_nan``).
    Integer fields without an upper bound of their own get :data:`INT64_MAX`.
    """
    origin = typing.get_origin(hint)
    if origin is dict or origin is Mapping:
        return Annotated[Any, AfterValidator(_finite_entries)]
    base, *notes = typing.get_args(hint) if origin is Annotated else (hint,)
    if base is int and not any(isinstance(note, Le) for note in notes):  # a field's own bound is lower
        return Annotated[hint, Le(INT64_MAX)]
    return hint


_MODELS: dict[type[Any], type[BaseModel]] = {}


def section_model(cls: type[Any]) -> type[BaseModel]:
    """A strict pydantic model with ``cls``'s fields, defaults and types (unknown keys and non-finite
    floats forbidden; cached)."""
    if cls in _MODELS:
        return _MODELS[cls]
    hints = typing.get_type_hints(cls, include_extras=True)
    fields: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            fields[f.name] = (_schema_type(hints[f.name]), Field(default=f.default))
        elif f.default_factory is not dataclasses.MISSING:
            fields[f.name] = (_schema_type(hints[f.name]), Field(default_factory=f.default_factory))
        else:
            fields[f.name] = (_schema_type(hints[f.name]), ...)
    config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)
    model: type[BaseModel] = create_model(f"{cls.__name__}Schema", __config__=config, **fields)
    _MODELS[cls] = model
    return model


def _tuples(value: Any) -> Any:
    """YAML lists become tuples (the dataclasses hold immutable tuples)."""
    return tuple(value) if isinstance(value, list) else value


def _suggest(word: str, options: list[str]) -> str:
    close = difflib.get_close_matches(word, options, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def field_reasons(cls: type[Any]) -> dict[str, str]:
    """The :class:`pipeline.recipe_types.Reason` of each field of the config dataclass ``cls`` that has one.

    Args:
        cls: a recipe section's config dataclass.

    Returns:
        ``{field name: reason text}``.
    """
    from pipeline.recipe_types import Reason

    hints = typing.get_type_hints(cls, include_extras=True)
    return {f.name: note.text for f in dataclasses.fields(cls)
            for note in getattr(hints[f.name], "__metadata__", ()) if isinstance(note, Reason)}


def _describe(error: Any, section: str, valid: list[str], names: Mapping[str, str],
              reasons: Mapping[str, str]) -> str:
    """One pydantic error as ``section.key: problem`` (``names[key]`` instead of ``section.key`` when
    given), with the field's reason when the value is out of its bounds (:func:`field_reasons`)."""
    loc = ".".join(str(p) for p in error["loc"])
    key = str(error["loc"][0]) if error["loc"] else ""
    where = names[key] + loc[len(key):] if key in names else f"{section}.{loc}"
    if error["type"] == "extra_forbidden":
        hint = _suggest(key, valid)
        return f"unknown key {where}" + (hint or f"; valid keys: {', '.join(valid)}")
    if error["type"] == "missing":
        return f"{where} is required"
    reason = f": {reasons[key]}" if key in reasons and error["type"] in _BOUND_ERRORS else ""
    if error["type"] == "less_than_equal" and (error.get("ctx") or {}).get("le") == INT64_MAX:
        reason = f": {INT64_REASON}"
    return f"{where}: {error['msg'].lower()}, got {error['input']!r}{reason}"


def joined(problems: list[str]) -> str:
    """Problems on one line: the first :data:`MAX_LISTED`, then ``... and N more``."""
    shown = "; ".join(problems[:MAX_LISTED])
    more = len(problems) - MAX_LISTED
    return shown + (f" ... and {more} more" if more > 0 else "")


def section_problems(cls: type[Any], section: str, data: Mapping[str, Any],
                     names: Mapping[str, str] | None = None) -> tuple[Any | None, list[str]]:
    """Validate ``data`` against ``cls``'s schema.

    Args:
        names: how to call a key in the messages instead of ``<section>.<key>``, e.g.
            ``{"max_steps": "--max-steps"}`` for a command-line flag over the recipe.

    Returns:
        ``(config, [])`` with the frozen ``cls`` instance, or ``(None, problems)``.
    """
    model = section_model(cls)
    try:
        checked = model.model_validate({k: _tuples(v) for k, v in data.items()})
    except ValidationError as exc:
        valid = sorted(model.model_fields)
        reasons = field_reasons(cls)
        return None, [_describe(e, section, valid, names or {}, reasons) for e in exc.errors()]
    return cls(**{name: getattr(checked, name) for name in model.model_fields}), []


def build_section(cls: type[Any], section: str, data: Mapping[str, Any], path: Path) -> Any:
    """The frozen ``cls`` from ``data`` (defaults fill the rest).

    Raises:
        RecipeError: ``"<path>: <section>.<key>: problem"`` for every problem found, on one line.
    """
    config, problems = section_problems(cls, section, data)
    if problems:
        raise RecipeError(f"{path}: {joined(problems)}")
    return config


def unknown_sections(recipe: Mapping[str, Any]) -> list[str]:
    """``unknown section 'trian' (did you mean 'train'?)`` for each section not in :data:`SECTIONS`."""
    names = sorted(SECTIONS)
    return [f"unknown section {str(s)!r}{_suggest(str(s), names)}; sections: {', '.join(names)}"
            for s in recipe if s not in SECTIONS]
