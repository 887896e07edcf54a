"""Recipe schema: one strict pydantic model per recipe section, derived from the stage's config dataclass.

The frozen dataclasses (``TrainConfig``, ``ExportConfig`` ...) stay the typed result that stage code
uses; this module turns each into a pydantic model with ``extra="forbid"`` and strict types, so an
unknown key, a wrong type, or a value outside a ``Literal`` or a bound (``Annotated`` with
``annotated_types``, e.g. :mod:`pipeline.recipe_types`) is reported with its file, section and key
before any stage runs. :data:`SECTIONS` is the one list of recipe sections.
"""

from __future__ import annotations

import dataclasses
import difflib
import importlib
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

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

#: errors listed in one message before "... and N more"
MAX_LISTED: Final = 3


def config_class(section: str) -> type[Any]:
    """The config dataclass of recipe section ``section``.

    Raises:
        KeyError: ``section`` is not in :data:`SECTIONS`.
    """
    module, _, name = SECTIONS[section].partition(":")
    cls: type[Any] = getattr(importlib.import_module(module), name)
    return cls


def _schema_type(hint: Any) -> Any:
    """The pydantic type for a dataclass annotation.

    Mappings are checked only as present here (``Any``): their entries are checked by the stage's own
    range check, which names the offending entry (e.g. ``corpus.weights: unknown source``).
    """
    origin = typing.get_origin(hint)
    if origin is dict or origin is Mapping:
        return Any
    return hint


_MODELS: dict[type[Any], type[BaseModel]] = {}


def section_model(cls: type[Any]) -> type[BaseModel]:
    """A strict pydantic model with ``cls``'s fields, defaults and types (unknown keys forbidden; cached)."""
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
    config = ConfigDict(extra="forbid", strict=True)
    model: type[BaseModel] = create_model(f"{cls.__name__}Schema", __config__=config, **fields)
    _MODELS[cls] = model
    return model


def _tuples(value: Any) -> Any:
    """YAML lists become tuples (the dataclasses hold immutable tuples)."""
    return tuple(value) if isinstance(value, list) else value


def _suggest(word: str, options: list[str]) -> str:
    close = difflib.get_close_matches(word, options, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _describe(error: Any, section: str, valid: list[str]) -> str:
    """One pydantic error as ``section.key: problem``."""
    loc = ".".join(str(p) for p in error["loc"])
    key = str(error["loc"][0]) if error["loc"] else ""
    if error["type"] == "extra_forbidden":
        hint = _suggest(key, valid)
        return f"unknown key {section}.{loc}" + (hint or f"; valid keys: {', '.join(valid)}")
    if error["type"] == "missing":
        return f"{section}.{loc} is required"
    return f"{section}.{loc}: {error['msg'].lower()}, got {error['input']!r}"


def joined(problems: list[str]) -> str:
    """Problems on one line: the first :data:`MAX_LISTED`, then ``... and N more``."""
    shown = "; ".join(problems[:MAX_LISTED])
    more = len(problems) - MAX_LISTED
    return shown + (f" ... and {more} more" if more > 0 else "")


def section_problems(cls: type[Any], section: str, data: Mapping[str, Any]) -> tuple[Any | None, list[str]]:
    """Validate ``data`` against ``cls``'s schema.

    Returns:
        ``(config, [])`` with the frozen ``cls`` instance, or ``(None, problems)``.
    """
    model = section_model(cls)
    try:
        checked = model.model_validate({k: _tuples(v) for k, v in data.items()})
    except ValidationError as exc:
        valid = sorted(model.model_fields)
        return None, [_describe(e, section, valid) for e in exc.errors()]
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
