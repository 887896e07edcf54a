"""YAML that users write (pipeline.yaml_input): a mapping key given twice, at any depth, is an error
naming the key's path and both lines, in recipes (test_recipe_checks.py) and eval task and check files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from pipeline.errors import DataError
from pipeline.yaml_input import DuplicateKeyError, load_yaml


@pytest.mark.parametrize("text, key, lines", [
    ("lr: 1\nlr: 2\n", "lr", (1, 2)),
    ("sft:\n  lr: 1\n  epochs: 2\n  lr: 3\n", "sft.lr", (2, 4)),
    ("a:\n  b:\n    c: 1\n    c: 1\n", "a.b.c", (3, 4)),  # the same value twice too
    ("tasks:\n  - id: a\n  - id: b\n    prompt: x\n    prompt: y\n", "tasks[1].prompt", (4, 5)),
    ("x: 1\n'x': 2\n", "x", (1, 2)),  # keys compare as constructed: quoting makes no other key
    ("{a: 1, b: 2, a: 3}\n", "a", (1, 1)),  # flow style
    ("s: {n: 1}\nt: [{m: 1, m: 2}]\n", "t[0].m", (2, 2)),
])
def test_a_key_given_twice_names_its_path_and_both_lines(text: str, key: str, lines: tuple[int, int]) -> None:
    with pytest.raises(DuplicateKeyError) as info:
        load_yaml(text)
    err = info.value
    assert (err.key_path, err.first_line, err.line) == (key, *lines)
    assert f"duplicate key {key} (lines {lines[0]} and {lines[1]})" in str(err) and "\n" not in str(err)
    assert isinstance(err, yaml.YAMLError)  # callers that catch YAML errors report it


@pytest.mark.parametrize("text", [
    "a: 1\nb: {a: 2}\nc: [{a: 3}, {a: 4}]\n",  # one name in different mappings
    "base: &b {lr: 1, wd: 0}\nsft:\n  <<: *b\n  lr: 2\n",  # a merged key overridden, as YAML allows
    "",
])
def test_what_safe_load_reads_once_per_key_loads_the_same(text: str) -> None:
    assert load_yaml(text) == yaml.safe_load(text)


def test_a_recursive_alias_loads() -> None:
    data = load_yaml("a: &x [*x]\n")
    assert data["a"][0] is data["a"]


def test_an_unhashable_key_is_still_safe_load_s_own_error() -> None:
    with pytest.raises(yaml.constructor.ConstructorError, match="unhashable key"):
        load_yaml("? [1]\n: 2\n")


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "f.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("load, text, message", [
    ("tasks", "tasks:\n  - id: a\n    family: script\n    prompt: one\n    prompt: two\n",
     r"cannot read task suite: line 5, column 5: duplicate key tasks\[0\]\.prompt \(lines 4 and 5\)"),
    ("checks", "checks:\n  t1: [run]\n  t2: [run]\n  t1: ['output: 5']\n",
     r"cannot read eval checks: line 4, column 3: duplicate key checks\.t1 \(lines 2 and 4\)"),
])
def test_eval_task_and_check_files_refuse_a_key_given_twice(tmp_path: Path, load: str, text: str,
                                                           message: str) -> None:
    """A user's task file (``eval.tasks_path``) or check file: a second ``prompt:`` or a task's checks
    given twice in one file replaced the first silently."""
    from pipeline.eval_checks import load_checks
    from pipeline.eval_tasks import load_tasks

    path = _write(tmp_path, text)
    loaders: dict[str, Any] = {"tasks": load_tasks, "checks": lambda p: load_checks([p])}
    with pytest.raises(DataError, match=message):
        loaders[load](path)
