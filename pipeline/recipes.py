"""Recipes: frozen per-stage config dataclasses, overridden by a YAML recipe, overridden by flags.

A recipe is ``pipeline/recipes/<name>.yaml`` (or any path) with one mapping per stage, e.g.
``corpus:``, ``base_model:``, ``train:``, ``eval:``. Precedence: dataclass defaults < recipe <
explicit overrides (CLI flags / Dagster config). :func:`validate_recipe` checks a whole recipe
(encoding, sections, keys, types; :mod:`pipeline.recipe_schema`) before the main job starts, and
every :func:`stage_config` call checks it again, so no stage runs on a mistyped recipe.
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
    """Load a whole recipe as ``{section: mapping}`` (not yet validated: see :func:`validate_recipe`).

    Raises:
        RecipeError: missing file, not UTF-8, invalid YAML, or a top level that is not a mapping;
            one line naming the file (and the line for YAML errors).
    """
    path = recipe_path(recipe)
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise RecipeError(f"{path}:{line}: not UTF-8 text (byte 0x{raw[exc.start]:02x}); save the recipe as UTF-8") \
            from None
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise RecipeError(f"{path}{where}: invalid YAML: {problem}") from None
    if not isinstance(data, dict):
        raise RecipeError(f"{path}: top level must be a mapping of stage sections")
    return data


def _problems(data: dict[str, Any], skip: str = "") -> list[str]:
    """Unknown sections, non-mapping sections and invalid keys/values of every section except ``skip``."""
    from pipeline.recipe_schema import SECTIONS, config_class, section_problems, unknown_sections

    problems = unknown_sections(data)
    for section in SECTIONS:
        body = data.get(section) or {}
        if not isinstance(body, dict):
            problems.append(f"section {section!r} must be a mapping, got {body!r}")
        elif section != skip:
            problems.extend(section_problems(config_class(section), section, body)[1])
    return problems


def validate_recipe(recipe: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """Validate a whole recipe before any stage runs: encoding, YAML, sections, keys, types, ranges.

    Args:
        recipe: a recipe name, a YAML path, or ``None`` (``$VOX_RECIPE`` or ``cpu-tiny``).

    Returns:
        ``{section: frozen config}`` for every section of :data:`pipeline.recipe_schema.SECTIONS`
        (defaults where the recipe leaves a section out).

    Raises:
        RecipeError: one line, ``<file>: <section>.<key>: problem`` (the first few problems,
            then "... and N more").
    """
    from pipeline.corpus import corpus_config
    from pipeline.recipe_schema import SECTIONS, build_section, config_class, joined

    path = recipe_path(recipe)
    data = load_recipe(path)
    problems = _problems(data)
    if problems:
        raise RecipeError(f"{path}: {joined(problems)}")
    configs = {s: build_section(config_class(s), s, data.get(s) or {}, path) for s in SECTIONS}
    configs["corpus"] = corpus_config(str(path))  # adds the corpus stage's range checks
    return configs


def stage_config(
    cls: type[T],
    section: str,
    recipe: str | os.PathLike[str] | None = None,
    overrides: dict[str, Any] | None = None,
) -> T:
    """Build the frozen dataclass ``cls`` from defaults < ``recipe[section]`` < ``overrides``.

    ``None`` values in ``overrides`` are ignored (unset flags). The whole recipe is checked too,
    so a typo in another section stops every stage, not only the one that reads it.

    Raises:
        RecipeError: an unknown section or key, or a value of the wrong type, named with the file,
            section and key (see :func:`validate_recipe`).
    """
    from pipeline.recipe_schema import build_section, joined

    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"{cls!r} is not a dataclass")
    path = recipe_path(recipe)
    data = load_recipe(path)
    problems = _problems(data, skip=section)
    if problems:
        raise RecipeError(f"{path}: {joined(problems)}")
    section_data = data.get(section) or {}
    if not isinstance(section_data, dict):
        raise RecipeError(f"{path}: section {section!r} must be a mapping, got {section_data!r}")
    merged = {**section_data, **{k: v for k, v in (overrides or {}).items() if v is not None}}
    config: T = build_section(cls, section, merged, path)
    return config
