"""Recipes: frozen per-stage config dataclasses, overridden by a YAML recipe, overridden by flags.

A recipe is ``pipeline/recipes/<name>.yaml`` (or any path) with one mapping per stage, e.g.
``corpus:``, ``base_model:``, ``train:``, ``eval:``. Precedence: dataclass defaults < recipe <
explicit overrides (CLI flags / Dagster config). :func:`validate_recipe` checks a whole recipe
(encoding, sections, keys, types, ranges, finite numbers: :mod:`pipeline.recipe_schema`; rules between
values: :mod:`pipeline.recipe_rules`) before the main job starts, and every :func:`stage_config` call
checks it again, so no stage runs on a mistyped recipe.

A recipe sets only what it names: every other value is the dataclass default, not ``cpu-tiny``'s
(start a recipe from a copy of ``cpu-tiny.yaml`` to change a few of its values). A recipe with no
settings at all (an empty file, only comments, or empty sections) is valid and runs every stage on
the defaults; :func:`load_recipe` logs a warning saying so, once per file and process.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar, cast

import yaml

from pipeline.errors import RecipeError
from pipeline.yaml_input import load_yaml

RECIPES_DIR = Path(__file__).resolve().parent / "recipes"
DEFAULT_RECIPE = "cpu-tiny"

T = TypeVar("T")

_WARNED_EMPTY: set[Path] = set()  # recipes with no settings already warned about in this process


def recipe_path(recipe: str | os.PathLike[str] | None = None) -> Path:
    """Resolve a recipe name (``cpu-tiny``) or path to a YAML file.

    ``None`` means ``$VOX_RECIPE`` or ``cpu-tiny``.

    Raises:
        RecipeError: for a name, no such recipe (the message lists the available names); for a path (a
            ``/`` in it or a ``.yaml``/``.yml`` suffix), ``recipe file <path>: no such file`` (or ``is a
            directory``, ``not a .yaml or .yml file``).
    """
    name = str(recipe) if recipe is not None else os.environ.get("VOX_RECIPE", DEFAULT_RECIPE)
    path = Path(name)
    if path.suffix in (".yaml", ".yml") and path.is_file():
        return path
    candidate = RECIPES_DIR / f"{name}.yaml"
    if candidate.is_file():
        return candidate
    if "/" in name or os.sep in name or path.suffix in (".yaml", ".yml"):
        problem = "is a directory" if path.is_dir() else "not a .yaml or .yml file" if path.exists() else "no such file"
        raise RecipeError(f"recipe file {name}: {problem}")
    available = ", ".join(sorted(p.stem for p in RECIPES_DIR.glob("*.yaml")))
    raise RecipeError(f"unknown recipe {name!r}: expected a YAML path or one of: {available}")


def load_recipe(recipe: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """Load a whole recipe as ``{section: mapping}`` (not yet validated: see :func:`validate_recipe`).

    Raises:
        RecipeError: missing file, not UTF-8, invalid YAML (a mapping key given twice included:
            :func:`pipeline.yaml_input.load_yaml`), or a top level that is not a mapping; one line
            naming the file (and the line for YAML errors). A recipe with no settings is not an
            error: it is logged as a warning (module docstring).
    """
    path = recipe_path(recipe)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise RecipeError(f"recipe file {path}: cannot read it: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise RecipeError(f"{path}:{line}: not UTF-8 text (byte 0x{raw[exc.start]:02x}); save the recipe as UTF-8") \
            from None
    try:
        data = load_yaml(text) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise RecipeError(f"{path}{where}: invalid YAML: {problem}") from None
    if not isinstance(data, dict):
        raise RecipeError(f"{path}: top level must be a mapping of stage sections")
    if not any(data.values()) and path not in _WARNED_EMPTY:
        _WARNED_EMPTY.add(path)
        logging.getLogger(__name__).warning(
            "recipe %s holds no settings: every stage runs on its built-in defaults, not on %s's (copy "
            "pipeline/recipes/%s.yaml to change a few of its values)", path, DEFAULT_RECIPE, DEFAULT_RECIPE)
    return data


def _configs(data: dict[str, Any], skip: str = "") -> tuple[dict[str, Any], list[str]]:
    """The frozen config of every section except ``skip``, and the problems found: unknown sections,
    non-mapping sections (``skip`` included) and invalid keys/values."""
    from pipeline.recipe_schema import SECTIONS, config_class, section_problems, unknown_sections

    problems = unknown_sections(data)
    configs: dict[str, Any] = {}
    for section in SECTIONS:
        body = data.get(section) or {}
        if not isinstance(body, dict):
            problems.append(f"section {section!r} must be a mapping, got {body!r}")
        elif section != skip:
            config, found = section_problems(config_class(section), section, body)
            problems.extend(found)
            if config is not None:
                configs[section] = config
    return configs, problems


def validate_recipe(recipe: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """Validate a whole recipe before any stage runs: encoding, YAML, sections, keys, types, ranges,
    finite numbers and the rules between values (:mod:`pipeline.recipe_rules`).

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
    from pipeline.recipe_rules import rule_violations
    from pipeline.recipe_schema import joined

    path = recipe_path(recipe)
    data = load_recipe(path)
    configs, problems = _configs(data)
    problems = problems or [v.text for v in rule_violations(configs)]
    if problems:
        raise RecipeError(f"{path}: {joined(problems)}")
    configs["corpus"] = corpus_config(str(path))  # adds the corpus stage's range checks
    return configs


def stage_config(
    cls: type[T],
    section: str,
    recipe: str | os.PathLike[str] | None = None,
    overrides: dict[str, Any] | None = None,
    names: Mapping[str, str] | None = None,
) -> T:
    """Build the frozen dataclass ``cls`` from defaults < ``recipe[section]`` < ``overrides``.

    ``None`` values in ``overrides`` are ignored (unset flags). The whole recipe is checked too,
    rules between values included (:mod:`pipeline.recipe_rules`), so a typo in another section stops
    every stage, not only the one that reads it.

    Args:
        names: how to call an override in messages, e.g. ``{"max_steps": "--max-steps"}`` (default
            ``override <section>.<key>``).

    Raises:
        RecipeError: an unknown section or key, a value of the wrong type or out of range, or a broken
            rule. A problem of the recipe file is ``<file>: <section>.<key>: problem`` (see
            :func:`validate_recipe`); one an override brings names the override instead
            (``--max-steps: input should be ..., got -7``).
    """
    from pipeline.recipe_rules import rule_violations
    from pipeline.recipe_schema import SECTIONS, config_class, joined, section_problems

    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"{cls!r} is not a dataclass")
    path = recipe_path(recipe)
    data = load_recipe(path)
    configs, problems = _configs(data, skip=section)
    section_data = data.get(section) or {}
    given = {k: v for k, v in (overrides or {}).items() if v is not None}
    if not isinstance(section_data, dict):
        problems = problems or [f"section {section!r} must be a mapping, got {section_data!r}"]
    elif not problems:  # the recipe's own values first: what is wrong there is the file's problem
        problems = section_problems(cls, section, {k: v for k, v in section_data.items() if k not in given})[1]
    if problems:
        raise RecipeError(f"{path}: {joined(problems)}")
    labels = {k: (names or {}).get(k, f"override {section}.{k}") for k in given}
    config, problems = section_problems(cls, section, {**section_data, **given}, labels)
    if problems:
        raise RecipeError(joined(problems))
    if section in SECTIONS and isinstance(config, config_class(section)):
        configs[section] = config
    violations = rule_violations(configs, {f"{section}.{k}": label for k, label in labels.items()})
    if any(not v.overridden for v in violations):
        raise RecipeError(f"{path}: {joined([v.text for v in violations if not v.overridden])}")
    if violations:
        raise RecipeError(joined([v.text for v in violations]))
    return cast(T, config)
