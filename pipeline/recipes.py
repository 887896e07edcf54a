"""Recipes: frozen per-stage config dataclasses, overridden by a YAML recipe, overridden by flags.

A recipe is ``pipeline/recipes/<name>.yaml`` (or any path) with one mapping per stage, e.g.
``corpus:``, ``base_model:``, ``train:``, ``eval:``. Precedence: dataclass defaults < recipe <
explicit overrides (CLI flags / Dagster config).
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any, TypeVar

import yaml

from pipeline.errors import RecipeError

RECIPES_DIR = Path(__file__).resolve().parent / "recipes"
DEFAULT_RECIPE = "cpu-tiny"

T = TypeVar("T")


def recipe_path(recipe: str | os.PathLike[str] | None = None) -> Path:
    """Resolve a recipe name (``cpu-tiny``) or path to a YAML file.

    ``None`` means ``$VOX_RECIPE`` or ``cpu-tiny``.

    Raises:
        RecipeError: no such recipe; the message lists the available names.
    """
    name = str(recipe) if recipe is not None else os.environ.get("VOX_RECIPE", DEFAULT_RECIPE)
    path = Path(name)
    if path.suffix in (".yaml", ".yml") and path.is_file():
        return path
    candidate = RECIPES_DIR / f"{name}.yaml"
    if candidate.is_file():
        return candidate
    available = ", ".join(sorted(p.stem for p in RECIPES_DIR.glob("*.yaml")))
    raise RecipeError(f"unknown recipe {name!r}: expected a YAML path or one of: {available}")


def load_recipe(recipe: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """Load a whole recipe as ``{section: mapping}``.

    Raises:
        RecipeError: missing file, invalid YAML, or a top level that is not a mapping.
    """
    path = recipe_path(recipe)
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as exc:
        raise RecipeError(f"{path}: invalid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise RecipeError(f"{path}: top level must be a mapping of stage sections")
    return data


def stage_config(
    cls: type[T],
    section: str,
    recipe: str | os.PathLike[str] | None = None,
    overrides: dict[str, Any] | None = None,
) -> T:
    """Build the frozen dataclass ``cls`` from defaults < ``recipe[section]`` < ``overrides``.

    ``None`` values in ``overrides`` are ignored (unset flags).

    Raises:
        RecipeError: an unknown key (named with the file and section) or a value of the wrong
            type for a field with a plain type annotation.
    """
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"{cls!r} is not a dataclass")
    path = recipe_path(recipe)
    section_data = load_recipe(path).get(section) or {}
    if not isinstance(section_data, dict):
        raise RecipeError(f"{path}: section {section!r} must be a mapping")
    merged = dict(section_data)
    merged.update({k: v for k, v in (overrides or {}).items() if v is not None})
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(merged) - set(fields))
    if unknown:
        raise RecipeError(
            f"{path}: unknown key(s) {', '.join(unknown)} in section {section!r}; "
            f"valid keys: {', '.join(sorted(fields))}"
        )
    for key, value in merged.items():
        expected = type(fields[key].default) if fields[key].default is not dataclasses.MISSING else None
        if expected in (int, float, str, bool) and value is not None:
            if expected is float and isinstance(value, int) and not isinstance(value, bool):
                merged[key] = float(value)
            elif not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
                raise RecipeError(
                    f"{path}: {section}.{key} must be {expected.__name__}, got {value!r}"
                )
        if isinstance(value, list):
            merged[key] = tuple(value)
    return cls(**merged)  # type: ignore[call-arg]
