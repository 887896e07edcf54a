"""std.yaml and std.toml through the charged PyYAML dumper and loader
(:mod:`vox_lang.runtime.stdlib_config`): the same text and values as PyYAML's ``safe_dump`` and
``safe_load``, with every phase charged to the run's budget, and a read bounded by the size of
its value with aliases expanded, not by the length of the document."""

from __future__ import annotations

import json
import time
from typing import Any, cast

import pytest
import yaml

from vox_lang.runtime import run_source, stdlib_config
from vox_lang.runtime.errors import VoxFault
from vox_lang.runtime.limits import Budget, RunConfig
from vox_lang.runtime.values import Err, Ok, Variant
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


def _bomb(levels: int, width: int = 9, merge: bool = False) -> str:
    """An "alias bomb": each line a list (or, with ``merge``, a ``<<`` merge) of ``width``
    aliases of the line before: ``width ** levels`` values in ``levels`` short lines."""
    names = "abcdefghijklmnop"
    lines = ["a: &a {x: 1, y: 2}" if merge else "a: &a [" + ",".join(["1"] * width) + "]"]
    for i in range(1, levels):
        refs = ",".join([f"*{names[i - 1]}"] * width)
        lines.append(f"{names[i]}: &{names[i]} " + (f"{{<<: [{refs}]}}" if merge else f"[{refs}]"))
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("doc", [
    _bomb(9), _bomb(9, merge=True), "a: &a " + "x" * 1_000_000 + "\nb: [" + ", ".join(["*a"] * 12) + "]\n",
], ids=["aliases", "merges", "long string"])
def test_an_alias_bomb_is_an_error_at_once(doc: str) -> None:
    """User trial: nine lines of nine aliases each ran 55 s and took 3 GB in one uninterruptible
    ``json.dumps``, past a 10 s limit; the value is now sized before it is built."""
    start = time.perf_counter()
    out = _call("parse", _Run(), doc)
    assert out == Err("YAML text too large: its value, aliases expanded, is more than 10,000,000 characters")
    assert time.perf_counter() - start < 5


def test_aliases_under_the_cap_still_read() -> None:
    out = _call("parse", _Run(), _bomb(4, width=3))
    assert isinstance(out, Ok) and json.loads(out.value["d"]) == [[[[1, 1, 1]] * 3] * 3] * 3


@pytest.mark.parametrize(("doc", "message"), [
    ("a: &a [1, *a]\n", "invalid YAML: an alias refers to the node that contains it"),
    ("a: {2020-01-01: x}\n",
     "YAML value cannot be written as text: keys must be str, int, float, bool or None, not date"),
])
def test_values_with_no_text_are_errors(doc: str, message: str) -> None:
    assert _call("parse", _Run(), doc) == Err(message)


def test_a_big_expansion_stops_at_the_time_limit_at_the_call() -> None:
    """Under the size cap (~6,400,000 characters), but more than a 0.2 s limit can write."""
    doc = _bomb(6) + "g: [*f, *f, *f]\n"
    program = f"import std.yaml\nlet doc = {json.dumps(doc)}\nlet r = yaml.parse(doc)\nprint(len(r.unwrap_or({{}})))\n"
    start = time.perf_counter()
    result = run_source(program, config=RunConfig(timeout_s=0.2))
    assert result.fault is not None and result.fault.code == "R0010", (result.status, result.output)
    assert (result.fault.diagnostic.line, result.fault.diagnostic.col) == (3, 9)
    assert time.perf_counter() - start < 0.2 + 1.5


def test_render_writes_shared_values_in_full_and_caps_their_count() -> None:
    point = Variant(1, "Pt", (1, 2))
    out = _call("render", _Run(), [point, point])
    assert out == Ok("- Pt:\n  - 1\n  - 2\n- Pt:\n  - 1\n  - 2\n")  # no &id001 / *id001
    bomb: Any = Variant(0, "Leaf", ())
    for _ in range(60):
        bomb = Variant(1, "Pair", (bomb, bomb))
    with pytest.raises(VoxFault) as fault:
        _call("render", _Run(), bomb)
    assert fault.value.code == "R0006"


def test_render_of_a_value_too_deep_for_pyyaml_is_an_error() -> None:
    deep: Any = Variant(0, "Nil", ())
    for i in range(5000):  # deeper than PyYAML's recursion goes in this thread
        deep = Variant(1, "Cons", (i, deep))
    assert _call("render", _Run(), deep) == Err("value nested too deeply to be written as YAML")


def test_toml_render_measures_before_writing() -> None:
    long = "x" * 1_000_000
    with pytest.raises(VoxFault) as fault:
        stdlib_config.TOML["render"](cast(Any, _Run()), [{f"k{i}": long for i in range(20)}], SPAN)
    assert fault.value.code == "R0006"
