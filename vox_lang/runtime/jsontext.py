"""Vox values as JSON: the text ``json.dump`` writes (:func:`json_text`) and the data
``yaml.render`` and ``toml.render`` write (:func:`to_json`), both built with an explicit stack,
never by recursion, so a value nested 200,000 deep is written whole (the old recursive
conversion wrote ``null`` past 200 levels and carried on).

The text is bounded like the text of values (:class:`~vox_lang.runtime.text.Writer`): past its
``limit`` in characters it raises :class:`~vox_lang.runtime.text.TextTooLong`, and it reports
its progress to ``charge`` (the time limit holds in the middle of it).
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable
from typing import Any, Final

from vox_lang.runtime.text import (
    CHARGE_EVERY,
    CLOSE_LIST,
    CLOSE_MAP,
    Charge,
    Lit,
    TextTooLong,
    Writer,
    push_items,
    push_members,
    show,
)
from vox_lang.runtime.values import NONE, SCALARS, Err, KeyList, Ok, Record, Some, Variant, VSet

_LISTS: Final = (list, KeyList)
_ALL_SCALARS: Final = SCALARS.issuperset
_CLOSE_VARIANT: Final = Lit("]}")


def json_key(k: Any) -> str:
    """A map key as a JSON member name: a ``str`` as itself, any other key as its JSON text
    (``1`` → ``"1"``, ``[1, 2]`` → ``"[1, 2]"``), written as Python's ``json.dumps`` writes it."""
    if type(k) is str:
        return k
    return json_text(k, ascii_only=True)


def _scalar_writer(enc: Callable[[str], str]) -> Callable[[Any], str | None]:
    """The one-piece JSON text of a value (a scalar, or a record or variant holding only
    scalars), strings written by ``enc``; ``None`` for any other value."""

    def scalar(x: Any) -> str:
        t = type(x)
        if t is str:
            return enc(x)
        if t is bool:
            return "true" if x else "false"
        if t is float:
            return float.__repr__(x) if math.isfinite(x) else enc(str(x))
        return int.__repr__(x)

    def flat(x: Any) -> str | None:
        t = type(x)
        while t is Some or t is Ok:
            x = x.value
            t = type(x)
        if t in SCALARS:
            return scalar(x)
        if x is None or x is NONE:
            return "null"
        if t is Record:
            fields = x.fields
            if not _ALL_SCALARS(map(type, fields.values())):
                return None
            return "{" + ", ".join(f"{enc(k)}: {scalar(v)}" for k, v in fields.items()) + "}"
        if t is Variant:
            if not x.values:
                return enc(x.name)
            if not _ALL_SCALARS(map(type, x.values)):
                return None
            return "{" + enc(x.name) + ": [" + ", ".join(map(scalar, x.values)) + "]}"
        return None

    return flat


_FLAT: Final = _scalar_writer(json.encoder.encode_basestring)
_FLAT_ASCII: Final = _scalar_writer(json.encoder.encode_basestring_ascii)


def json_text(v: Any, limit: int | None = None, charge: Charge | None = None, ascii_only: bool = False) -> str:
    """A Vox value as JSON text (``json.dump``), exactly as ``json.dumps`` writes :func:`to_json`
    of it: options and ``Ok`` as their content, ``Error(e)`` as ``{"error": e}``, a variant as its
    name or ``{"Name": [fields]}``, records and maps as objects, sets as arrays, a non-finite float
    as the string ``"inf"``, other values as the string of their text; non-ASCII characters as
    themselves (``\\uXXXX`` escapes with ``ascii_only``).

    Raises:
        TextTooLong: the text is longer than ``limit`` characters.
    """
    enc = json.encoder.encode_basestring_ascii if ascii_only else json.encoder.encode_basestring
    flat = _FLAT_ASCII if ascii_only else _FLAT

    def expand(x: Any, stack: list[Any], out: Writer) -> None:
        t = type(x)
        if t is Some or t is Ok:
            stack.append(x.value)
        elif t in _LISTS or t is VSet:
            if not x:
                out.add("[]")
            elif not out.items("[", x, flat, "]"):
                out.add("[")
                stack.append(CLOSE_LIST)
                push_items(stack, list(x))
        elif t is dict or t is Record or t is Err:
            items = x.items() if t is dict else x.fields.items() if t is Record else (("error", x.value),)
            out.add("{")
            stack.append(CLOSE_MAP)
            push_members(stack, [(Lit(enc(json_key(k)) + ": "), val) for k, val in items])
        elif t is Variant:
            out.add("{" + enc(x.name) + ": [")
            stack.append(_CLOSE_VARIANT)
            push_items(stack, x.values)
        else:
            out.add(enc(show(x)))

    return Writer(limit, charge).run(v, flat, expand)


def expanded_size(v: Any, cap: int) -> int:
    """How many values the JSON data of ``v`` holds, a part shared between places (``Pair(l, l)``)
    counted once per place; each part is counted once, so this costs what ``v`` takes in memory,
    however much it stands for. Counting stops past ``cap`` (the result is then ``cap + 1``)."""
    sizes: dict[int, int] = {}
    stack: list[tuple[Any, bool]] = [(v, False)]
    while stack:
        x, ready = stack.pop()
        kids = _parts(x)
        if ready:
            sizes[id(x)] = min(cap + 1, 1 + sum(1 if type(k) in SCALARS else sizes[id(k)] for k in kids))
        elif id(x) not in sizes:
            stack.append((x, True))
            stack.extend((k, False) for k in kids if type(k) not in SCALARS and id(k) not in sizes)
    return sizes[id(v)]


def _parts(x: Any) -> Any:
    """The values directly inside ``x`` (none for a scalar or an opaque value)."""
    t = type(x)
    if t in _LISTS or t is VSet:
        return x
    if t is Variant:
        return x.values
    if t is dict or t is Record:
        return (x if t is dict else x.fields).values()
    if t is Some or t is Ok or t is Err:
        return (x.value,)
    return ()


def to_json(v: Any, limit: int | None = None, charge: Charge | None = None) -> Any:
    """A Vox value as JSON data (``yaml.render``, ``toml.render``), mapped as :func:`json_text`
    writes it; built with an explicit stack. A variant or ``Error`` shared between places
    (``[p, p]``, ``Pair(l, l)``) gives one shared object, so the data costs what ``v`` takes in
    memory (a writer should write shared objects out in full, not as YAML aliases).

    Raises:
        TextTooLong: the data would hold more than ``limit`` values.
    """
    todo: list[tuple[Any, Any]] = []
    count = [0, sys.maxsize if limit is None else limit]
    done: dict[int, Any] = {}
    root = _json_node(v, todo, count, done)
    charged = 0
    while todo:
        if charge is not None and count[0] - charged >= CHARGE_EVERY:
            charge(count[0] - charged)
            charged = count[0]
        src, dst = todo.pop()
        if type(dst) is list:
            dst.extend(_json_node(x, todo, count, done) for x in src)
        else:
            for k, x in src:
                dst[k] = _json_node(x, todo, count, done)
    return root


def _json_node(x: Any, todo: list[tuple[Any, Any]], count: list[int], done: dict[int, Any]) -> Any:
    """One value of :func:`to_json`: a scalar at once, or an empty container queued on ``todo``
    with the items that fill it; ``count`` is [values made, the most allowed]; ``done`` maps a
    shared variant or ``Error`` already made (by ``id``) to what it became."""
    while type(x) is Some or type(x) is Ok:
        x = x.value
    t = type(x)
    if t is int or t is str or t is bool:
        return x
    if t is float:
        return x if math.isfinite(x) else str(x)
    if x is None or x is NONE:
        return None
    if (t is Variant or t is Err) and id(x) in done:
        return done[id(x)]
    count[0] += 1
    if count[0] > count[1]:
        raise TextTooLong(count[1])
    out: Any
    if t in _LISTS or t is VSet:
        out = []
        todo.append((x, out))
    elif t is dict:
        out = {}
        todo.append(([(json_key(k), val) for k, val in x.items()], out))
    elif t is Record:
        out = {}
        todo.append((list(x.fields.items()), out))
    elif t is Err:
        out = done[id(x)] = {}
        todo.append(((("error", x.value),), out))
    elif t is Variant:
        if not x.values:
            return x.name
        out = done[id(x)] = {x.name: []}
        todo.append((x.values, out[x.name]))
    else:
        return show(x)
    return out
