"""Run-time values of Vox (spec §11) and their text.

``int``, ``float``, ``bool`` and ``str`` are the Python types; ``Unit`` is ``None``; lists are
Python lists and maps Python dicts (insertion order); sets are :class:`VSet` (a dict of keys, so
they keep insertion order). Options, results, records, variants, functions, actor handles and
view elements have small classes here. :func:`show` gives the text of a value (``str(x)``,
``print``); :func:`vcopy` gives an independent copy (records and lists are values, §11).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

#: the largest and smallest 64-bit signed ints (spec §11: overflow is R0001)
INT_MAX: Final = 2**63 - 1
INT_MIN: Final = -(2**63)

#: nesting past which :func:`show` writes ``…`` (a value can be built deeper than Python recursion)
SHOW_DEPTH: Final = 400


class _NoneValue:
    """The ``None`` of ``Option`` (one instance, :data:`NONE`)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "None"


NONE: Final = _NoneValue()


class Some:
    """``Some(value)``."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return type(other) is Some and self.value == other.value

    def __hash__(self) -> int:
        return hash(("Some", freeze(self.value)))


class Ok:
    """``Ok(value)``."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return type(other) is Ok and self.value == other.value

    def __hash__(self) -> int:
        return hash(("Ok", freeze(self.value)))


class Err:
    """``Error(value)``."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return type(other) is Err and self.value == other.value

    def __hash__(self) -> int:
        return hash(("Error", freeze(self.value)))


class Record:
    """A record value: ``fields`` in print order (declared order, or literal order for a literal type)."""

    __slots__ = ("fields",)

    def __init__(self, fields: dict[str, Any]) -> None:
        self.fields = fields

    def __eq__(self, other: object) -> bool:
        return type(other) is Record and self.fields == other.fields

    def __hash__(self) -> int:
        return hash(tuple((k, freeze(v)) for k, v in self.fields.items()))


class Variant:
    """A value of a sum type: the variant's definition id (``tag``), name and field values."""

    __slots__ = ("name", "tag", "values")

    def __init__(self, tag: int, name: str, values: tuple[Any, ...]) -> None:
        self.tag = tag
        self.name = name
        self.values = values

    def __eq__(self, other: object) -> bool:
        return type(other) is Variant and self.tag == other.tag and self.values == other.values

    def __hash__(self) -> int:
        return hash((self.tag, tuple(freeze(v) for v in self.values)))


class VSet(dict[Any, None]):
    """A ``Set``: the keys of a dict (values unused), so iteration keeps insertion order."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return type(other) is VSet and self.keys() == other.keys()

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None


class KeyList(list[Any]):
    """A ``List`` stored as a map key or set element: hashable by value (:func:`freeze`).

    Lists are values (spec §11), so ``Set[List[int]]`` and ``Map[List[str], V]`` work by
    content. A key is a private copy (:func:`as_key`) that nothing mutates; reads hand out
    copies through :func:`vcopy`, which turns it back into a plain list.
    """

    __slots__ = ()

    def __hash__(self) -> int:  # type: ignore[override]  # list sets __hash__ = None; a key is never mutated
        return hash(freeze(self))


def as_key(k: Any, copy: bool = False) -> Any:
    """``k`` as a dict key: a list becomes a :class:`KeyList` (a private deep copy when ``copy``,
    for storing; a shallow one is enough for a lookup); every other value is returned as is."""
    if type(k) is list:
        return KeyList(vcopy(k) if copy else k)
    return k


class FnVal:
    """A function as a value: ``call`` takes the positional arguments as a list."""

    __slots__ = ("call", "name")

    def __init__(self, name: str, call: Callable[[list[Any]], Any]) -> None:
        self.name = name
        self.call = call

    def __repr__(self) -> str:
        return f"<fn {self.name}>"


class ActorVal:
    """An actor handle (``spawn(A)``): handler name → ``call(args)``."""

    __slots__ = ("handlers", "name")

    def __init__(self, name: str, handlers: dict[str, Callable[[list[Any]], Any]]) -> None:
        self.name = name
        self.handlers = handlers


class Element:
    """A view element: ``kind`` (``column``…, or ``"#text"`` for a text child), named
    properties in call order, and children."""

    __slots__ = ("children", "kind", "props")

    def __init__(self, kind: str, props: tuple[tuple[str, Any], ...], children: tuple[Element, ...]) -> None:
        self.kind = kind
        self.props = props
        self.children = children

    def __eq__(self, other: object) -> bool:
        return (type(other) is Element and self.kind == other.kind and self.props == other.props
                and self.children == other.children)

    def __hash__(self) -> int:
        return hash((self.kind, len(self.children)))


def text_element(text: str) -> Element:
    """A ``str`` child of a view call (spec §3: a text element)."""
    return Element("#text", (("text", text),), ())


_CONTAINERS: Final = (list, dict, VSet, Record)


def vcopy(v: Any) -> Any:
    """An independent copy of ``v``: lists, maps, sets and records are copied all the way down;
    immutable values (options, results, variants, scalars) are shared."""
    t = type(v)
    if t is list or t is KeyList:
        if not v or type(v[0]) in (int, str, float, bool):
            return v.copy()
        return [vcopy(x) for x in v]
    if t is dict:
        return {k: vcopy(x) for k, x in v.items()}
    if t is VSet:
        return VSet(v)
    if t is Record:
        return Record({k: vcopy(x) for k, x in v.fields.items()})
    # options, results and variants are immutable (no place reaches inside them), and their
    # contents were copied when they were built from a mutable binding: share them
    return v


def freeze(v: Any) -> Any:
    """A hashable stand-in for ``v`` (lists and maps as tuples), for hashing set elements and keys."""
    t = type(v)
    if t is list or t is KeyList:
        return ("#list", tuple(freeze(x) for x in v))
    if t is dict:
        return ("#map", tuple((freeze(k), freeze(x)) for k, x in v.items()))
    if t is VSet:
        return ("#set", tuple(freeze(k) for k in v))
    return v


# --------------------------------------------------------------------------- text


def quote(s: str) -> str:
    """A ``str`` inside a collection: double-quoted, with ``\\" \\\\ \\n \\t`` escapes."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t") + '"'


def show_float(x: float) -> str:
    """The shortest text that reads back to ``x``, always with a ``.`` or an exponent."""
    text = repr(x)  # Python's repr is the shortest round-trip form: 1.0 0.1 2.5e-07 1e+20 inf nan
    return text


def show(v: Any, top: bool = True, depth: int = 0) -> str:
    """The text of a value (spec §11 "Text of values"); ``top`` is False inside collections
    (strings are then quoted)."""
    t = type(v)
    if t is str:
        return v if top else quote(v)
    if t is int:
        return str(v)
    if t is bool:
        return "true" if v else "false"
    if t is float:
        return show_float(v)
    if v is None:
        return "()"
    if depth > SHOW_DEPTH:
        return "…"
    d = depth + 1
    if t is list or t is KeyList:
        return "[" + ", ".join(show(x, False, d) for x in v) + "]"
    if t is dict:
        return "{" + ", ".join(f"{show(k, False, d)}: {show(x, False, d)}" for k, x in v.items()) + "}"
    if t is VSet:
        return "set([" + ", ".join(show(x, False, d) for x in v) + "])"
    if v is NONE:
        return "None"
    if t is Some:
        return f"Some({show(v.value, False, d)})"
    if t is Ok:
        return f"Ok({show(v.value, False, d)})"
    if t is Err:
        return f"Error({show(v.value, False, d)})"
    if t is Record:
        if not v.fields:
            return "{}"
        return "{ " + ", ".join(f"{k}: {show(x, False, d)}" for k, x in v.fields.items()) + " }"
    if t is Variant:
        if not v.values:
            return str(v.name)
        return f"{v.name}(" + ", ".join(show(x, False, d) for x in v.values) + ")"
    if t is FnVal:
        return f"<fn {v.name}>"
    if t is ActorVal:
        return f"<actor {v.name}>"
    if t is Element:
        return show_element(v, d)
    return f"<{t.__name__}>"


def show_element(e: Element, depth: int = 0) -> str:
    """``column(gap=2) { heading(text="x") "in stock" }`` on one line; a text child is its quoted text."""
    if e.kind == "#text":
        return quote(str(e.props[0][1]))
    args = ", ".join(f"{k}={show(x, False, depth + 1)}" for k, x in e.props)
    head = f"{e.kind}({args})"
    if not e.children:
        return head
    return head + " { " + " ".join(show_element(c, depth + 1) for c in e.children) + " }"
