"""``std.toml`` and ``std.yaml`` at run time (spec §5, §10 U5): configuration text read into a
map of member texts, and values written as such text; no capability needed.

Every phase of a YAML read or write is charged to the run's budget (:meth:`Budget.charge`), so
``yaml.parse`` and ``yaml.render`` of a big value stop at the time limit in their middle by an
ordinary R0010, raised where the work is, not only by the runner's watchdog interrupt. CI's test
worker saw that interrupt swallowed by garbage-collector callbacks ("Exception ignored in
gc_callback") while PyYAML built the node graph of a 100,000-element list, which it does before
it writes a character: a render loop ran 2.0-2.4 s past a 0.2 s limit.
"""

from __future__ import annotations

import functools
import json
import tomllib
from typing import Any, Final

# PyYAML is imported with this module, never inside a run: the runner's watchdog raises R0010
# into a run that outlasts its deadline, and one landing in a first import can leave Python's
# import lock for that module held (the next run importing it then hangs).
import yaml

from vox_lang.runtime.limits import RunState
from vox_lang.runtime.stdlib_pure import Impl, to_json
from vox_lang.runtime.values import Err, Ok
from vox_lang.source import Span

#: budget work charged per YAML token or node: PyYAML's pure-Python phases spend ~5-20 µs on
#: one, about what C-speed builtins spend on this many characters (``WORK_SLICE`` is sized for
#: those), so the clock is read every ~1,000 nodes
NODE_WORK: Final = 64


def _toml_parse(rt: RunState, a: list[Any], span: Span) -> Any:
    rt.budget.charge(len(a[0]), span)
    try:
        data = tomllib.loads(a[0])
    except (tomllib.TOMLDecodeError, RecursionError) as exc:
        return Err(f"invalid TOML: {exc}")
    return Ok({str(k): v if isinstance(v, str) else json.dumps(v, default=str) for k, v in data.items()})


def _toml_render(rt: RunState, a: list[Any], span: Span) -> Any:
    data = to_json(a[0])
    if not isinstance(data, dict):
        return Err("only a map or record can be written as TOML")
    lines = []
    for k, v in data.items():
        if isinstance(v, (dict, list)):
            return Err(f"nested value under {json.dumps(k)} cannot be written as TOML here")
        lines.append(f"{json.dumps(k)} = {json.dumps(v)}")
    return Ok("\n".join(lines) + ("\n" if lines else ""))


class _ChargedStream:
    """A text stream PyYAML writes to piece by piece, each piece charged to the run's budget."""

    def __init__(self, rt: RunState, span: Span) -> None:
        self.rt, self.span = rt, span
        self.parts: list[str] = []

    def write(self, piece: str) -> None:
        self.rt.budget.charge(len(piece), self.span)
        self.parts.append(piece)


class _ChargedDumper(yaml.SafeDumper):
    """PyYAML's ``SafeDumper`` charging :data:`NODE_WORK` per value it represents (the node
    graph is built before anything is written)."""

    def __init__(self, stream: Any, *, rt: RunState, span: Span, **options: Any) -> None:
        super().__init__(stream, **options)
        self.vox_rt, self.vox_span = rt, span

    def represent_data(self, data: Any) -> Any:
        self.vox_rt.budget.charge(NODE_WORK, self.vox_span)
        return super().represent_data(data)


class _ChargedLoader(yaml.SafeLoader):
    """PyYAML's ``SafeLoader`` charging :data:`NODE_WORK` per token it scans and per node it
    composes and constructs."""

    def __init__(self, stream: Any, *, rt: RunState, span: Span) -> None:
        super().__init__(stream)
        self.vox_rt, self.vox_span = rt, span

    def fetch_more_tokens(self) -> None:
        self.vox_rt.budget.charge(NODE_WORK, self.vox_span)
        super().fetch_more_tokens()

    def compose_node(self, parent: Any, index: Any) -> Any:
        self.vox_rt.budget.charge(NODE_WORK, self.vox_span)
        return super().compose_node(parent, index)

    def construct_object(self, node: Any, deep: bool = False) -> Any:
        self.vox_rt.budget.charge(NODE_WORK, self.vox_span)
        return super().construct_object(node, deep)


def _yaml_parse(rt: RunState, a: list[Any], span: Span) -> Any:
    rt.budget.charge(len(a[0]), span)
    loader = _ChargedLoader(a[0], rt=rt, span=span)  # a string, not a stream: error messages quote the line
    try:
        data = loader.get_single_data()  # what yaml.safe_load does, charged
    except (yaml.YAMLError, RecursionError) as exc:
        return Err(f"invalid YAML: {exc}")
    finally:
        loader.dispose()
    if not isinstance(data, dict):
        return Err("YAML text is not a mapping")
    return Ok({str(k): v if isinstance(v, str) else json.dumps(v, default=str) for k, v in data.items()})


def _yaml_render(rt: RunState, a: list[Any], span: Span) -> Any:
    out = _ChargedStream(rt, span)
    dumper = functools.partial(_ChargedDumper, rt=rt, span=span)
    yaml.dump(to_json(a[0]), out, Dumper=dumper, sort_keys=False)  # what safe_dump does, charged
    return Ok("".join(out.parts))


TOML: Final[dict[str, Impl]] = {"parse": _toml_parse, "render": _toml_render}
YAML: Final[dict[str, Impl]] = {"parse": _yaml_parse, "render": _yaml_render}
