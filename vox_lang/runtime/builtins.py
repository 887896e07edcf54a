"""The prelude at run time (spec §5, §9, §10 U5/U8): builtin functions and the methods of
``str``, ``List``, ``Map``, ``Set``, ``Option`` and ``Result``.

Each implementation is ``impl(rt, args, span)`` (builtins) or ``impl(rt, recv, args, span)``
(methods) and raises :class:`VoxFault` for runtime errors (R0001, R0004, R0006, R0009). One that
works through a whole value reports its size to :meth:`~vox_lang.runtime.limits.Budget.charge`,
which reads the clock after enough work (R0010 at this call's position).
Methods are found by the receiver's run-time kind, so they work on values of opaque type too.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any, Final

from vox_lang.messages import NUMBER_SPACE_HINT, NUMBER_WORD_HINT
from vox_lang.runtime.errors import VoxFault
from vox_lang.runtime.limits import RunState
from vox_lang.runtime.text import TextTooLong, show
from vox_lang.runtime.values import (
    INT_MAX,
    INT_MIN,
    NONE,
    Err,
    FnVal,
    KeyList,
    Ok,
    Record,
    Some,
    Variant,
    VSet,
    as_key,
    vcopy,
)
from vox_lang.source import Span

Builtin = Callable[[RunState, list[Any], Span], Any]
Method = Callable[[RunState, Any, list[Any], Span], Any]

#: number text (spec §11, R0009 otherwise): decimal digits with an optional sign, fraction (`1.5`,
#: `1.`, `.5`) and exponent (`2.5e-07`), and for floats the words `str` writes (`inf`, `-inf`,
#: `nan`), so `float(str(x))` and `int(str(n))` read back every value; nothing else: no
#: surrounding whitespace, no `_`, no other spelling of infinity (Python's `float()` would take
#: " 12 ", "1_0", "Infinity" and "NaN")
INT_TEXT: Final = re.compile(r"[+-]?[0-9]+", re.ASCII)
FLOAT_TEXT: Final = re.compile(r"[+-]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf|nan)", re.ASCII)
_FLOAT_WORDS: Final = re.compile(r"[+-]?(?:inf(?:inity)?|nan)", re.IGNORECASE)


def not_a_number(x: str, kind: str, span: Span | None) -> VoxFault:
    """R0009 for ``int(x)``/``float(x)`` (``kind``), hinting at the near misses."""
    s = x.strip()
    pattern = INT_TEXT if kind == "int" else FLOAT_TEXT
    hint = None
    if s != x and pattern.fullmatch(s):
        hint = NUMBER_SPACE_HINT.format(f=kind)
    elif kind == "float" and _FLOAT_WORDS.fullmatch(s):
        hint = NUMBER_WORD_HINT
    return VoxFault("R0009", span, hint=hint, text=show(x, False))


def check_int(x: int, span: Span | None, what: str) -> int:
    """``x`` if it fits 64 bits, else R0001."""
    if INT_MIN <= x <= INT_MAX:
        return x
    raise VoxFault("R0001", span, detail=what)


def to_int(rt: RunState, args: list[Any], span: Span) -> int:
    """``int(x)``: ints unchanged, floats truncated toward zero, text parsed (else R0009)."""
    x = args[0]
    t = type(x)
    if t is int:
        return int(x)
    if t is float:
        if math.isnan(x):
            raise VoxFault("R0009", span, text="nan cannot become an int")
        if math.isinf(x):
            raise VoxFault("R0001", span, detail=f"{show(x)} does not fit an int")
        return check_int(int(x), span, f"{show(x)} does not fit an int")
    if t is str:
        if not INT_TEXT.fullmatch(x):
            raise not_a_number(x, "int", span)
        return check_int(int(x), span, f"{show(x, False)} does not fit an int")
    raise VoxFault("R0009", span, text=show(x, False))


def to_float(rt: RunState, args: list[Any], span: Span) -> float:
    """``float(x)``: ints converted, text parsed (else R0009)."""
    x = args[0]
    t = type(x)
    if t is float:
        return float(x)
    if t is int:
        return float(x)
    if t is str:
        if not FLOAT_TEXT.fullmatch(x):
            raise not_a_number(x, "float", span)
        return float(x)
    raise VoxFault("R0009", span, text=show(x, False))


def b_len(rt: RunState, args: list[Any], span: Span) -> int:
    """``len(x)``: code points of a str, elements of a collection."""
    x = args[0]
    if type(x) is Record:
        return len(x.fields)
    return len(x)


def b_range(rt: RunState, args: list[Any], span: Span) -> list[int]:
    """``range(a, b)``: ``[a, b)`` (capped by ``max_len``)."""
    a, b = args
    rt.budget.too_long(b - a, "list", span)
    rt.budget.charge(b - a, span)
    return list(range(a, b))


def b_set(rt: RunState, args: list[Any], span: Span) -> VSet:
    """``set(xs)``: the distinct elements in first-seen order."""
    out = VSet()
    charge = rt.budget.charge
    for i, x in enumerate(args[0]):
        out[as_key(x, copy=True) if type(x) is list else vcopy(x)] = None
        if not i & 4095:
            charge(4096, span)
    return out


def b_str(rt: RunState, args: list[Any], span: Span) -> str:
    """``str(x)``: the whole text of a value, however deep; R0006 past ``max_len`` characters
    (written piece by piece, so a value whose parts are shared, small in memory, is stopped
    there instead of exhausting it)."""
    x = args[0]
    if type(x) is int:  # the usual case, in loops
        return str(x)
    budget = rt.budget
    try:
        text = show(x, limit=budget.cfg.max_len, charge=lambda n: budget.charge(n, span))
    except TextTooLong as exc:
        budget.too_long(exc.limit + 1, "str", span)
        raise
    budget.charge(len(text), span)
    return text


def b_print(rt: RunState, args: list[Any], span: Span) -> None:
    """``print(x)``: the text of ``x`` and a newline; R0006 (the output cap) as soon as the text
    would pass what is left of ``max_output``."""
    budget = rt.budget
    room = max(rt.cfg.max_output - budget.output - 1, 0)
    try:
        text = show(args[0], limit=room, charge=lambda n: budget.charge(n, span))
    except TextTooLong:
        raise rt.output_cap(span) from None
    budget.charge(len(text), span)
    rt.print(text, span)


def b_assert(rt: RunState, args: list[Any], span: Span) -> None:
    """``assert(cond)``: R0002 when false."""
    if args[0] is not True:
        raise VoxFault("R0002", span)


BUILTINS: Final[dict[str, Builtin]] = {
    "print": b_print, "assert": b_assert, "len": b_len, "str": b_str, "int": to_int, "float": to_float,
    "range": b_range, "set": b_set,
}

# --------------------------------------------------------------------------- methods


def _index_fault(i: int, n: int, span: Span) -> VoxFault:
    return VoxFault("R0004", span, i=i, n=n)


def m_split(rt: RunState, s: str, args: list[Any], span: Span) -> list[str]:
    sep = args[0]
    rt.budget.charge(len(s), span)
    return list(s) if sep == "" else s.split(sep)


def m_slice(rt: RunState, s: str, args: list[Any], span: Span) -> str:
    a, b = args
    n = len(s)
    if not 0 <= a <= n:
        raise _index_fault(a, n, span)
    if b < a:  # in range, but before the start: say so (the plain message would call it out of range)
        raise VoxFault("R0004", span, i=b, n=n, hint=f"slice end {b} is before its start {a}: end >= start")
    if b > n:
        raise _index_fault(b, n, span)
    return s[a:b]


def m_replace(rt: RunState, s: str, args: list[Any], span: Span) -> str:
    old, new = args
    if old == "":
        return s
    count = s.count(old)
    size = len(s) + count * (len(new) - len(old))
    rt.budget.too_long(size, "str", span)
    rt.budget.charge(size, span)
    return s.replace(old, new)


def m_char_at(rt: RunState, s: str, args: list[Any], span: Span) -> Any:
    i = args[0]
    return Some(s[i]) if 0 <= i < len(s) else NONE


def m_index_of(rt: RunState, s: str, args: list[Any], span: Span) -> Any:
    rt.budget.charge(len(s), span)
    i = s.find(args[0])
    return NONE if i < 0 else Some(i)


def _whole(op: Callable[[str, list[Any]], Any]) -> Method:
    """A str method that reads the whole receiver (charged by its length)."""
    def method(rt: RunState, s: str, args: list[Any], span: Span) -> Any:
        rt.budget.charge(len(s), span)
        return op(s, args)
    return method


STR_METHODS: Final[dict[str, Method]] = {
    "split": m_split,
    "contains": _whole(lambda s, a: a[0] in s),
    "trim": _whole(lambda s, a: s.strip()),
    "to_upper": _whole(lambda s, a: s.upper()),
    "to_lower": _whole(lambda s, a: s.lower()),
    "replace": m_replace,
    "starts_with": lambda rt, s, a, sp: s.startswith(a[0]),
    "ends_with": lambda rt, s, a, sp: s.endswith(a[0]),
    "slice": m_slice,
    "char_at": m_char_at,
    "index_of": m_index_of,
    "len": lambda rt, s, a, sp: len(s),
}


def m_push(rt: RunState, xs: list[Any], args: list[Any], span: Span) -> None:
    if len(xs) >= rt.cfg.max_len:
        rt.budget.too_long(len(xs) + 1, "list", span)
    x = args[0]
    if type(x) in (list, dict, VSet):  # a container is copied in: work in proportion to its length
        rt.budget.charge(len(x), span)
    xs.append(vcopy(x))


def m_map(rt: RunState, xs: list[Any], args: list[Any], span: Span) -> list[Any]:
    f = args[0]
    return [f.call([x]) for x in tuple(xs)]


def m_join(rt: RunState, xs: list[Any], args: list[Any], span: Span) -> str:
    sep = args[0]
    size = sum(len(x) for x in xs) + len(sep) * max(len(xs) - 1, 0)
    rt.budget.too_long(size, "str", span)
    rt.budget.charge(size, span)
    return str(sep.join(xs))


def m_list_get(rt: RunState, xs: list[Any], args: list[Any], span: Span) -> Any:
    i = args[0]
    return Some(xs[i]) if 0 <= i < len(xs) else NONE


def _charged_in(rt: RunState, xs: list[Any], x: Any, span: Span) -> bool:
    rt.budget.charge(len(xs), span)
    return x in xs


LIST_METHODS: Final[dict[str, Method]] = {
    "push": m_push,
    "map": m_map,
    "join": m_join,
    "get": m_list_get,
    "filter": lambda rt, xs, a, sp: [x for x in tuple(xs) if a[0].call([x]) is True],
    "contains": lambda rt, xs, a, sp: _charged_in(rt, xs, a[0], sp),
    "len": lambda rt, xs, a, sp: len(xs),
}


def m_map_get(rt: RunState, m: dict[Any, Any], args: list[Any], span: Span) -> Any:
    k = as_key(args[0])
    return Some(m[k]) if k in m else NONE


def _json_field(kind: str) -> Method:
    """``Map[str, str]`` readers of spec §10 U5 (``get_str``, ``get_int``…)."""

    def get(rt: RunState, m: dict[Any, Any], args: list[Any], span: Span) -> Any:
        from vox_lang.runtime.stdlib import json_object, json_scalar

        key = args[0]
        if key not in m:
            return Err(f"missing key {show(key, False)}")
        text = m[key]
        if kind == "str":
            return Ok(text)
        if kind == "object":
            return json_object(text)
        return json_scalar(text, kind)

    return get


MAP_METHODS: Final[dict[str, Method]] = {
    "get": m_map_get,
    "contains": lambda rt, m, a, sp: as_key(a[0]) in m,
    "contains_key": lambda rt, m, a, sp: as_key(a[0]) in m,
    "keys": lambda rt, m, a, sp: list(m.keys()),
    "values": lambda rt, m, a, sp: list(m.values()),
    "len": lambda rt, m, a, sp: len(m),
    "get_str": _json_field("str"),
    "get_int": _json_field("int"),
    "get_float": _json_field("float"),
    "get_bool": _json_field("bool"),
    "get_object": _json_field("object"),
}

SET_METHODS: Final[dict[str, Method]] = {
    "contains": lambda rt, s, a, sp: as_key(a[0]) in s,
    "len": lambda rt, s, a, sp: len(s),
}


def m_unwrap_or(rt: RunState, v: Any, args: list[Any], span: Span) -> Any:
    t = type(v)
    return v.value if t is Some or t is Ok else args[0]


OPTION_METHODS: Final[dict[str, Method]] = {
    "unwrap_or": m_unwrap_or,
    "is_some": lambda rt, v, a, sp: type(v) is Some,
    "is_none": lambda rt, v, a, sp: v is NONE,
}
RESULT_METHODS: Final[dict[str, Method]] = {
    "unwrap_or": m_unwrap_or,
    "is_ok": lambda rt, v, a, sp: type(v) is Ok,
    "is_error": lambda rt, v, a, sp: type(v) is Err,
}

#: method tables by type head (the checker's names)
METHODS_BY_HEAD: Final[dict[str, dict[str, Method]]] = {
    "str": STR_METHODS, "List": LIST_METHODS, "Map": MAP_METHODS, "Set": SET_METHODS,
    "Option": OPTION_METHODS, "Result": RESULT_METHODS,
}


def head_of(v: Any) -> str:
    """The type head of a run-time value, for method lookup."""
    t = type(v)
    if t is str:
        return "str"
    if t is list or t is KeyList:
        return "List"
    if t is dict:
        return "Map"
    if t is VSet:
        return "Set"
    if t is Some or v is NONE:
        return "Option"
    if t is Ok or t is Err:
        return "Result"
    from vox_lang.runtime.stdlib import OPAQUE_METHODS

    for head, (cls, _table) in OPAQUE_METHODS.items():
        if t is cls:
            return head
    return ""


def find_method(head: str, name: str) -> Method | None:
    """The implementation of method ``name`` on values of type head ``head``."""
    table = METHODS_BY_HEAD.get(head)
    if table is None:
        from vox_lang.runtime.stdlib import OPAQUE_METHODS

        entry = OPAQUE_METHODS.get(head)
        table = entry[1] if entry else None
    return table.get(name) if table else None


def builtin_value(name: str, rt: RunState, span: Span) -> FnVal:
    """A builtin used as a value (``xs.map(str)``)."""
    impl = BUILTINS[name]
    return FnVal(name, lambda args: impl(rt, args, span))


def variant_value(tag: int, name: str, arity: int) -> Any:
    """A variant constructor as a value: nullary variants are values, others functions."""
    if arity == 0:
        return Variant(tag, name, ())
    return FnVal(name, lambda args: Variant(tag, name, tuple(vcopy(a) for a in args)))
