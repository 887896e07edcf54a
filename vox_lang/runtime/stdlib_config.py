"""``std.toml`` and ``std.yaml`` at run time (spec §5, §10 U5): configuration text read into a
map of member texts, and values written as such text; no capability needed.

Every phase of a YAML read or write is charged to the run's budget (:meth:`Budget.charge`), so
``yaml.parse`` and ``yaml.render`` of a big value stop at the time limit in their middle by an
ordinary R0010, raised where the work is, not only by the runner's watchdog interrupt. CI's test
worker saw that interrupt swallowed by garbage-collector callbacks ("Exception ignored in
gc_callback") while PyYAML built the node graph of a 100,000-element list, which it does before
it writes a character: a render loop ran 2.0-2.4 s past a 0.2 s limit.

A YAML read is bounded by what its value would be as text, not by the length of the document:
aliases let 9 lines of 9 aliases each (an "alias bomb") stand for 9**9 values, which PyYAML
builds cheaply (an alias is the same object again) but which writing as member text, or merging
with ``<<``, would expand in full (55 s and 3 GB, past any time limit, in one uninterruptible
``json.dumps``). So before anything is built, :func:`_expanded_size` sizes the value with each
alias counted as the copy it stands for, and a value over the run's size cap (``max_len``
characters) is ``Error``, as is a document whose alias names itself; member texts are then
written piece by piece, charged and capped the same way.
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

from vox_lang.runtime.jsontext import expanded_size, to_json
from vox_lang.runtime.limits import RunState
from vox_lang.runtime.stdlib_pure import Impl
from vox_lang.runtime.text import TextTooLong
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


def _data(rt: RunState, value: Any, span: Span, what: str) -> Any:
    """``value`` as JSON data (:func:`~vox_lang.runtime.jsontext.to_json`); R0006 when it holds
    more than ``max_len`` values, its shared parts counted at every place they appear (that many
    could never be written within the size cap)."""
    limit = rt.budget.cfg.max_len
    if expanded_size(value, limit) > limit:
        rt.budget.too_long(limit + 1, what, span)
    try:
        return to_json(value, limit, lambda n: rt.budget.charge(n, span))
    except TextTooLong:
        rt.budget.too_long(limit + 1, what, span)
        raise


def _toml_render(rt: RunState, a: list[Any], span: Span) -> Any:
    data = _data(rt, a[0], span, "TOML text")
    if not isinstance(data, dict):
        return Err("only a map or record can be written as TOML")
    lines = []
    size = 0
    for k, v in data.items():
        if isinstance(v, (dict, list)):
            return Err(f"nested value under {json.dumps(k)} cannot be written as TOML here")
        size += len(k) + (len(v) if isinstance(v, str) else 0)  # a map may hold one long string many times
        rt.budget.too_long(size, "TOML text", span)
        lines.append(f"{json.dumps(k)} = {json.dumps(v)}")
    return Ok("\n".join(lines) + ("\n" if lines else ""))


class _ChargedStream:
    """A text stream PyYAML writes to piece by piece, each piece charged to the run's budget;
    past ``max_len`` characters in all it raises :class:`TextTooLong`."""

    def __init__(self, rt: RunState, span: Span) -> None:
        self.rt, self.span = rt, span
        self.parts: list[str] = []
        self.size = 0
        self.limit = rt.budget.cfg.max_len

    def write(self, piece: str) -> None:
        self.rt.budget.charge(len(piece), self.span)
        self.size += len(piece)
        if self.size > self.limit:
            raise TextTooLong(self.limit)
        self.parts.append(piece)


class _ChargedDumper(yaml.SafeDumper):
    """PyYAML's ``SafeDumper`` charging :data:`NODE_WORK` per value it represents (the node
    graph is built before anything is written), writing no aliases."""

    def __init__(self, stream: Any, *, rt: RunState, span: Span, **options: Any) -> None:
        super().__init__(stream, **options)
        self.vox_rt, self.vox_span = rt, span

    def ignore_aliases(self, data: Any) -> bool:
        """Always: a value shared between places (:func:`to_json` shares variants) is written
        out in full at each, never as an ``&id001`` anchor and ``*id001`` alias."""
        return True

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


#: the tag PyYAML resolves a plain string scalar to
_STR_TAG: Final = "tag:yaml.org,2002:str"


class _RecursiveAlias(Exception):
    """A YAML node that contains itself through an alias (``a: &a [*a]``)."""


def _expanded_size(rt: RunState, span: Span, root: yaml.Node, cap: int) -> int:
    """About how many characters the value of ``root`` takes as JSON text, each alias counted as
    a copy of the node it names (each node is sized once: a bomb costs its written size); stops
    counting past ``cap``. Walked with an explicit stack, each node charged.

    Raises:
        _RecursiveAlias: a node contains itself.
    """
    sizes: dict[int, int] = {}
    started: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, ready = stack.pop()
        key = id(node)
        kids: list[yaml.Node] = []
        if isinstance(node, yaml.SequenceNode):
            kids = node.value
        elif isinstance(node, yaml.MappingNode):
            kids = [n for pair in node.value for n in pair]
        if ready:  # `[a, b]`, `{"k": v}`: brackets, and `, ` or `: ` after every item
            sizes[key] = min(cap + 1, sum(sizes[id(k)] + 2 for k in kids) + (0 if kids else 2))
            continue
        if key in sizes:
            continue
        if key in started:
            raise _RecursiveAlias()
        rt.budget.charge(NODE_WORK, span)
        if isinstance(node, yaml.ScalarNode):  # a string is quoted; `1`, `true` are not
            sizes[key] = len(node.value) + (2 if node.tag == _STR_TAG else 0)
            continue
        started.add(key)
        stack.append((node, True))
        stack.extend((k, False) for k in kids if id(k) not in sizes)
    return sizes[id(root)]


def _member_text(rt: RunState, span: Span, value: Any, room: int) -> str:
    """A member's value as its text: a string as itself, anything else as JSON (what
    ``json.dumps(value, default=str)`` writes), written in pieces that are charged; past
    ``room`` characters :class:`TextTooLong`."""
    if isinstance(value, str):
        if len(value) > room:
            raise TextTooLong(room)
        return value
    parts: list[str] = []
    size = 0
    for piece in json.JSONEncoder(default=str).iterencode(value):  # pure Python: piece by piece
        size += len(piece)
        if size > room:
            raise TextTooLong(room)
        parts.append(piece)
        rt.budget.charge(len(piece), span)
    return "".join(parts)


def _yaml_parse(rt: RunState, a: list[Any], span: Span) -> Any:
    rt.budget.charge(len(a[0]), span)
    cap = rt.budget.cfg.max_len
    too_large = Err(f"YAML text too large: its value, aliases expanded, is more than {cap:,} characters")
    loader = _ChargedLoader(a[0], rt=rt, span=span)  # a string, not a stream: error messages quote the line
    try:
        node = loader.get_single_node()  # what yaml.safe_load does, charged, in two steps
        if node is None:
            data = None
        elif _expanded_size(rt, span, node, cap) > cap:
            return too_large
        else:
            data = loader.construct_document(node)
    except (yaml.YAMLError, RecursionError) as exc:
        return Err(f"invalid YAML: {exc}")
    except _RecursiveAlias:
        return Err("invalid YAML: an alias refers to the node that contains it")
    finally:
        loader.dispose()
    if not isinstance(data, dict):
        return Err("YAML text is not a mapping")
    members: dict[str, str] = {}
    room = cap
    try:
        for k, v in data.items():
            members[str(k)] = text = _member_text(rt, span, v, room)
            room -= len(text)
    except TextTooLong:
        return too_large
    except (TypeError, ValueError) as exc:  # a key JSON cannot write (a date), a float it refuses
        return Err(f"YAML value cannot be written as text: {exc}")
    return Ok(members)


def _yaml_render(rt: RunState, a: list[Any], span: Span) -> Any:
    out = _ChargedStream(rt, span)
    dumper = functools.partial(_ChargedDumper, rt=rt, span=span)
    data = _data(rt, a[0], span, "YAML text")
    try:
        yaml.dump(data, out, Dumper=dumper, sort_keys=False)  # what safe_dump does, charged
    except TextTooLong:
        rt.budget.too_long(out.limit + 1, "YAML text", span)
        raise
    except RecursionError:  # PyYAML writes nested values by recursion
        return Err("value nested too deeply to be written as YAML")
    return Ok("".join(out.parts))


TOML: Final[dict[str, Impl]] = {"parse": _toml_parse, "render": _toml_render}
YAML: Final[dict[str, Impl]] = {"parse": _yaml_parse, "render": _yaml_render}
