"""Run-time values of Vox (spec §11): equality, hashing and copies.

``int``, ``float``, ``bool`` and ``str`` are the Python types; ``Unit`` is ``None``; lists are
Python lists and maps Python dicts (insertion order); sets are :class:`VSet` (a dict of keys, so
they keep insertion order). Options, results, records, variants, functions, actor handles and
view elements have small classes here. :func:`vcopy` gives an independent copy (records and
lists are values, §11); the text of a value (``str(x)``, ``print``) is :mod:`vox_lang.runtime.text`.

A value can nest far deeper than Python recursion allows (a linked list of 200,000 variants
built in a loop), so :func:`deep_hash` (set elements, map keys) and :func:`vcopy` walk values
with an explicit stack, never by recursion. ``==`` is Python's (fast, recursive) until it nests
past Python's recursion limit; there the ``__eq__`` that meets the ``RecursionError`` compares
the rest with :func:`equal`, which walks with a stack (same answers), so ``in``, dict lookups
and ``==`` work at any depth.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

#: the largest and smallest 64-bit signed ints (spec §11: overflow is R0001)
INT_MAX: Final = 2**63 - 1
INT_MIN: Final = -(2**63)

#: the scalar types (compared and hashed by Python, no walk needed)
SCALARS: Final = frozenset({int, float, str, bool})


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
        try:
            return type(other) is Some and (self.value is other.value or self.value == other.value)
        except RecursionError:  # nested past Python's recursion: walk the rest with a stack
            return equal(self, other)

    def __hash__(self) -> int:
        return deep_hash(self)


class Ok:
    """``Ok(value)``."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        try:
            return type(other) is Ok and (self.value is other.value or self.value == other.value)
        except RecursionError:  # nested past Python's recursion: walk the rest with a stack
            return equal(self, other)

    def __hash__(self) -> int:
        return deep_hash(self)


class Err:
    """``Error(value)``."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        try:
            return type(other) is Err and (self.value is other.value or self.value == other.value)
        except RecursionError:  # nested past Python's recursion: walk the rest with a stack
            return equal(self, other)

    def __hash__(self) -> int:
        return deep_hash(self)


class Record:
    """A record value: ``fields`` in print order (declared order, or literal order for a literal type)."""

    __slots__ = ("fields",)

    def __init__(self, fields: dict[str, Any]) -> None:
        self.fields = fields

    def __eq__(self, other: object) -> bool:
        try:
            return type(other) is Record and self.fields == other.fields
        except RecursionError:
            return equal(self, other)

    def __hash__(self) -> int:
        return deep_hash(self)


class Variant:
    """A value of a sum type: the variant's definition id (``tag``), name and field values."""

    __slots__ = ("name", "tag", "values")

    def __init__(self, tag: int, name: str, values: tuple[Any, ...]) -> None:
        self.tag = tag
        self.name = name
        self.values = values

    def __eq__(self, other: object) -> bool:
        try:
            return type(other) is Variant and self.tag == other.tag and self.values == other.values
        except RecursionError:
            return equal(self, other)

    def __hash__(self) -> int:
        return deep_hash(self)


class VSet(dict[Any, None]):
    """A ``Set``: the keys of a dict (values unused), so iteration keeps insertion order."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        try:
            return type(other) is VSet and self.keys() == other.keys()
        except RecursionError:
            return equal(self, other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None


class KeyList(list[Any]):
    """A ``List`` stored as a map key or set element: hashable by value (:func:`deep_hash`).

    Lists are values (spec §11), so ``Set[List[int]]`` and ``Map[List[str], V]`` work by
    content. A key is a private copy (:func:`as_key`) that nothing mutates; reads hand out
    copies through :func:`vcopy`, which turns it back into a plain list.
    """

    __slots__ = ()

    def __hash__(self) -> int:  # type: ignore[override]  # list sets __hash__ = None; a key is never mutated
        return deep_hash(self)


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
        try:
            return (type(other) is Element and self.kind == other.kind and self.props == other.props
                    and self.children == other.children)
        except RecursionError:
            return equal(self, other)

    def __hash__(self) -> int:
        return hash((self.kind, len(self.children)))


def text_element(text: str) -> Element:
    """A ``str`` child of a view call (spec §3: a text element)."""
    return Element("#text", (("text", text),), ())


_LISTS: Final = (list, KeyList)
_ALL_SCALARS: Final = SCALARS.issuperset
#: immutable values a program can share between places (``Pair(l, l)``): a walk meets the same
#: pair of them again and again in a shared structure, so :func:`equal` compares each pair once
_SHARED: Final = frozenset({Some, Ok, Err, Variant})


def equal(a: Any, b: Any) -> bool:
    """Structural equality of two values (``==``, spec §11), by an explicit stack of pairs still
    to compare, so a value nested 200,000 deep compares like a flat one.

    The answers are Python's ``==`` on these values: scalars compare as Python does (``1 == 1.0``);
    the same object is equal to itself, even a float ``nan`` (Python's containers compare their
    items so); a list of scalars is compared by Python at once; maps and sets compare by their keys
    regardless of order, records by field name.
    """
    stack = [(a, b)]
    pop, push, extend = stack.pop, stack.append, stack.extend
    seen: set[tuple[int, int]] = set()
    while stack:
        x, y = pop()
        if x is y:
            continue
        tx, ty = type(x), type(y)
        if tx in SCALARS or ty in SCALARS:
            if x != y:
                return False
            continue
        if tx in _LISTS and ty in _LISTS:
            if len(x) != len(y):
                return False
            if x and type(x[0]) in SCALARS:
                if x != y:  # a list of scalars (lists are of one type): Python's own loop
                    return False
                continue
            extend(zip(x, y))
            continue
        if tx is not ty:
            return False
        if tx in _SHARED:
            key = (id(x), id(y))
            if key in seen:
                continue
            seen.add(key)
            if tx is Variant:
                if x.tag != y.tag or len(x.values) != len(y.values):
                    return False
                extend(zip(x.values, y.values))
            else:
                push((x.value, y.value))
        elif tx is dict or tx is Record:
            xd, yd = (x, y) if tx is dict else (x.fields, y.fields)
            if len(xd) != len(yd):
                return False
            for k, v in xd.items():
                if k not in yd:
                    return False
                push((v, yd[k]))
        elif tx is VSet:
            if len(x) != len(y) or any(k not in y for k in x):
                return False
        elif tx is Element:
            if (x.kind != y.kind or len(x.props) != len(y.props) or len(x.children) != len(y.children)
                    or any(p[0] != q[0] for p, q in zip(x.props, y.props))):
                return False
            extend((p[1], q[1]) for p, q in zip(x.props, y.props))
            extend(zip(x.children, y.children))
        elif x != y:  # functions, actor handles, opaque values: by identity (or their own ``==``)
            return False
    return True


def deep_hash(v: Any) -> int:
    """A hash of ``v`` consistent with :func:`equal` (set elements, map keys), by an explicit
    stack. Maps and sets hash by their keys only, records by field name, so values that are
    equal in a different order hash alike; an element by its kind and number of children."""
    t = type(v)  # the usual keys first: equal values take the same branch (scalars equal only scalars)
    if t is Variant and _ALL_SCALARS(map(type, v.values)):
        return hash((v.tag, v.values))
    if t is Record and _ALL_SCALARS(map(type, v.fields.values())):
        return hash(("#record", frozenset(v.fields.items())))
    h = 0
    stack = [v]
    pop, extend = stack.pop, stack.extend
    while stack:
        x = pop()
        t = type(x)
        if t in SCALARS:
            h = hash((h, x))
        elif t in _LISTS:
            if x and type(x[0]) in SCALARS:
                h = hash((h, "#list", tuple(x)))
            else:
                h = hash((h, "#list", len(x)))
                extend(x)
        elif t is Variant:
            h = hash((h, x.tag, len(x.values)))
            extend(x.values)
        elif t is Some or t is Ok or t is Err:
            h = hash((h, t.__name__))
            stack.append(x.value)
        elif t is Record:
            names = sorted(x.fields)
            h = hash((h, "#record", tuple(names)))
            extend(x.fields[k] for k in names)
        elif t is dict or t is VSet:
            h = hash((h, "#map" if t is dict else "#set", frozenset(x)))
        elif t is Element:
            h = hash((h, x.kind, len(x.children)))
        else:
            h = hash((h, x))
    return h


def vcopy(v: Any) -> Any:
    """An independent copy of ``v``: lists, maps, sets and records are copied all the way down
    (by an explicit stack of containers still to fill); immutable values (options, results,
    variants, scalars) are shared. A :class:`KeyList` comes back as a plain list."""
    todo: list[tuple[Any, Any]] = []
    root = _copy_child(v, todo)
    while todo:
        src, dst = todo.pop()
        if type(src) is Record:
            src, dst = src.fields, dst.fields
        if type(dst) is list:
            for x in src:
                dst.append(_copy_child(x, todo))
        else:
            for k, x in src.items():
                dst[k] = _copy_child(x, todo)
    return root


def _shell(v: Any) -> Any:
    """An empty container of ``v``'s kind (list, map or record), to be filled by :func:`vcopy`."""
    t = type(v)
    if t is dict:
        return {}
    if t is Record:
        return Record({})
    return []


def _copy_child(x: Any, todo: list[tuple[Any, Any]]) -> Any:
    """The copy of one value for :func:`vcopy`: done at once, or an empty container queued on
    ``todo`` to be filled."""
    t = type(x)
    if t in SCALARS:
        return x
    if t in _LISTS:
        if not x or type(x[0]) in SCALARS:
            return x.copy()
    elif t is VSet:
        return VSet(x)
    elif t is not dict and t is not Record:
        # options, results and variants are immutable (no place reaches inside them), and their
        # contents were copied when they were built from a mutable binding: share them
        return x
    out = _shell(x)
    todo.append((x, out))
    return out
