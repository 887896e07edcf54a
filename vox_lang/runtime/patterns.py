"""``match`` patterns as closures: ``m(value, frame) -> bool``, binding names into frame slots
(spec §2 patterns: wildcard, literal, binding, constructor with sub-patterns)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from vox_lang import hir
from vox_lang.runtime.values import NONE, Err, Ok, Some, Variant

_FAMILY: dict[str, type] = {"Some": Some, "Ok": Ok, "Error": Err}

Matcher = Callable[[Any, list[Any]], bool]
#: ``store(def_id) -> setter(frame, value)`` for a binding pattern
Store = Callable[[int], Callable[[list[Any], Any], None]]


def compile_pattern(p: hir.Pattern, defs: tuple[hir.Def, ...], store: Store) -> Matcher:
    """A matcher for ``p``; constructors are told apart by definition (prelude key or variant id)."""
    if isinstance(p, hir.WildcardPat):
        return lambda v, f: True
    if isinstance(p, hir.BindPat):
        put = store(p.def_id)

        def bind(v: Any, f: list[Any]) -> bool:
            put(f, v)
            return True
        return bind
    if isinstance(p, hir.LiteralPat):
        lit = p.value
        if p.kind == "bool":
            return (lambda v, f: v is True) if lit else (lambda v, f: v is False)
        if p.kind == "str":
            return lambda v, f: v == lit
        return lambda v, f: type(v) is not bool and v == lit
    # constructor
    subs = [compile_pattern(a, defs, store) for a in p.args]
    d = defs[p.def_id] if p.def_id is not None else None
    if d is not None and d.kind == "ctor":
        if d.key == "None":
            return lambda v, f: v is NONE
        cls = _FAMILY[d.key]
        if not subs:
            return lambda v, f: type(v) is cls
        sub = subs[0]
        return lambda v, f: type(v) is cls and sub(getattr(v, "value", None), f)
    tag = p.def_id
    if not subs:
        return lambda v, f: type(v) is Variant and v.tag == tag
    if len(subs) == 1:
        only = subs[0]
        return lambda v, f: type(v) is Variant and v.tag == tag and only(v.values[0], f)

    def variant(v: Any, f: list[Any]) -> bool:
        if type(v) is not Variant or v.tag != tag:
            return False
        for sub, x in zip(subs, v.values):
            if not sub(x, f):
                return False
        return True
    return variant
