"""std.yaml and std.toml through the charged PyYAML dumper and loader
(:mod:`vox_lang.runtime.stdlib_config`): the same text and values as PyYAML's ``safe_dump`` and
``safe_load``, with every phase charged to the run's budget."""

from __future__ import annotations

from typing import Any, cast

import pytest
import yaml

from vox_lang.runtime import stdlib_config
from vox_lang.runtime.limits import Budget, RunConfig
from vox_lang.runtime.values import Err, Ok
from vox_lang.source import Span

SPAN = Span(0, 0)


class _Run:
    """The part of a run's state the std functions read: its budget, counting what is charged."""

    def __init__(self) -> None:
        self.budget = Budget(RunConfig(timeout_s=30))
        self.charged = 0
        charge = self.budget.charge

        def counted(n: int, span: Span | None) -> None:
            self.charged += n
            charge(n, span)

        self.budget.charge = counted  # type: ignore[method-assign]


def _call(fn: str, run: _Run, arg: Any) -> Any:
    return stdlib_config.YAML[fn](cast(Any, run), [arg], SPAN)


@pytest.mark.parametrize("value", [
    {"a": [1, 2, {"b": "x y"}], "c": None, "d": True, "e": 1.5, "f": "two\nlines", "g": []},
    [1, [2, [3]]],
    "plain",
    {"k": "ü ∑", "quoted": "a: b", "empty": ""},
])
def test_render_writes_what_safe_dump_writes(value: Any) -> None:
    out = _call("render", _Run(), value)
    assert isinstance(out, Ok) and out.value == yaml.safe_dump(value, sort_keys=False)


def test_parse_reads_members_and_aliases() -> None:
    out = _call("parse", _Run(), "a: &x [1, 2]\nb: *x\nc: text\n")
    assert isinstance(out, Ok) and out.value == {"a": "[1, 2]", "b": "[1, 2]", "c": "text"}


def test_parse_errors_quote_the_line() -> None:
    out = _call("parse", _Run(), "a: [1\nb: 2\n")
    assert isinstance(out, Err)
    assert "invalid YAML" in out.value and "line 2, column 2" in out.value and "b: 2" in out.value


def test_nodes_are_charged_beside_the_text() -> None:
    """A render charges each represented value as well as each written piece; a parse charges
    each token and node as well as the text's length."""
    items = list(range(1000))
    run = _Run()
    text = _call("render", run, items).value
    assert run.charged >= len(text) + 1000 * stdlib_config.NODE_WORK
    run = _Run()
    _call("parse", run, "k:\n" + text)
    assert run.charged >= len(text) + 2000 * stdlib_config.NODE_WORK
