"""Operators as closures (spec §4, §11): each factory returns ``ev(frame) -> value`` for one
operator node, specialised by the checker's operand types and by operand shape (a local slot
or a constant), because operators are the executor's hottest code.

Ints are 64-bit (R0001 on overflow), ``/`` on ints truncates toward zero and ``%`` takes the
dividend's sign (R0003 on zero); float division follows IEEE (``1.0 / 0.0`` is ``inf``).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any, Final

from vox_lang.messages import DEEP_VALUE_HINT, DEEP_VALUE_MESSAGE
from vox_lang.runtime.errors import VoxFault
from vox_lang.runtime.limits import Budget
from vox_lang.runtime.values import INT_MAX, INT_MIN, equal
from vox_lang.source import Span

Ev = Callable[[list[Any]], Any]

_CMP: Final[dict[str, Callable[[Any, Any], Any]]] = {
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "==": operator.eq, "!=": operator.ne,
}


class Operand:
    """How an operand is read: from a local slot (``slot``), a constant (``const``), or ``ev``."""

    __slots__ = ("const", "ev", "is_const", "slot")

    def __init__(self, ev: Ev, slot: int | None = None, const: Any = None, is_const: bool = False) -> None:
        self.ev = ev
        self.slot = slot
        self.const = const
        self.is_const = is_const


def overflow(span: Span, op: str) -> VoxFault:
    """R0001 for operator ``op``."""
    return VoxFault("R0001", span, detail=f"`{op}` result does not fit 64 bits")


def float_div(a: float, b: float) -> float:
    """IEEE division (Python raises on zero)."""
    try:
        return a / b
    except ZeroDivisionError:
        if a == 0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)


def int_div(a: int, b: int, span: Span) -> int:
    """``/`` on ints: truncate toward zero; R0003 on zero, R0001 on ``INT_MIN / -1``."""
    if b == 0:
        raise VoxFault("R0003", span)
    q = abs(a) // abs(b)
    q = q if (a < 0) == (b < 0) else -q
    if q > INT_MAX:
        raise overflow(span, "/")
    return q


def int_mod(a: int, b: int, span: Span) -> int:
    """``%`` on ints: the dividend's sign; R0003 on zero."""
    if b == 0:
        raise VoxFault("R0003", span)
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def compare(op: str, left: Operand, right: Operand) -> Ev:
    """A comparison (any operand types; ``==`` is structural)."""
    fn = _CMP[op]
    if left.slot is not None and right.is_const:
        i, c = left.slot, right.const
        if op == "<":
            return lambda f: f[i] < c
        if op == "<=":
            return lambda f: f[i] <= c
        if op == ">":
            return lambda f: f[i] > c
        if op == ">=":
            return lambda f: f[i] >= c
        if op == "==":
            return lambda f: f[i] == c
        return lambda f: f[i] != c
    if left.slot is not None and right.slot is not None:
        i, j = left.slot, right.slot
        if op == "<":
            return lambda f: f[i] < f[j]
        if op == "<=":
            return lambda f: f[i] <= f[j]
        return lambda f: fn(f[i], f[j])
    a, b = left.ev, right.ev
    if op == "==":
        return lambda f: a(f) == b(f)
    if op == "<":
        return lambda f: a(f) < b(f)
    return lambda f: fn(a(f), b(f))


def fused_update(c: Any, target: int, e: Any) -> Ev | None:
    """``x = a + b`` / ``x = a - b`` on ints whose operands are local slots or constants, as
    one closure (the statement of most counting loops); ``None`` when the shape differs."""
    if e.op not in ("+", "-") or c.types.head(e) != "int":
        return None
    left, right = c.operand(e.left), c.operand(e.right)
    if left.slot is None or not (right.is_const or right.slot is not None):
        return None
    i, span, op = left.slot, e.span, e.op
    lo, hi = INT_MIN, INT_MAX
    if right.is_const:
        k = right.const if op == "+" else -right.const

        def bump(f: list[Any]) -> None:
            x = f[i] + k
            if lo <= x <= hi:
                f[target] = x
                return
            raise overflow(span, op)
        return bump
    j = right.slot
    if op == "+":
        def add_to(f: list[Any]) -> None:
            x = f[i] + f[j]
            if lo <= x <= hi:
                f[target] = x
                return
            raise overflow(span, op)
        return add_to

    def sub_to(f: list[Any]) -> None:
        x = f[i] - f[j]
        if lo <= x <= hi:
            f[target] = x
            return
        raise overflow(span, op)
    return sub_to


def structural(op: str, left: Operand, right: Operand) -> Ev:
    """``==`` or ``!=`` on values that are not scalars: Python's ``==``, and where that nests past
    Python's recursion limit, :func:`~vox_lang.runtime.values.equal`, which walks the values with
    a stack of its own (a linked list 200,000 deep compares like a flat one)."""
    a, b = left.ev, right.ev
    same = op == "=="

    def eq(f: list[Any]) -> bool:
        x, y = a(f), b(f)
        try:
            return (x == y) is same
        except RecursionError:
            return equal(x, y) is same
    return eq


def deep(ev: Ev, span: Span) -> Ev:
    """An ordering (``<``…) on values of opaque type, which Python compares by recursion: one
    nested past Python's recursion limit is R0006 (value too deep) at this operator, not R0007
    (no Vox call nests) and not an internal error."""
    def guarded(f: list[Any]) -> Any:
        try:
            return ev(f)
        except RecursionError:
            raise VoxFault("R0006", span, message=DEEP_VALUE_MESSAGE, hint=DEEP_VALUE_HINT) from None
    return guarded


def int_arith(op: str, left: Operand, right: Operand, span: Span) -> Ev:
    """``+ - *`` on ints with the 64-bit check; ``/ %`` with truncation and R0003."""
    a, b = left.ev, right.ev
    lo, hi = INT_MIN, INT_MAX
    if op == "+":
        if left.slot is not None and right.is_const:
            i, c = left.slot, right.const

            def add_sc(f: list[Any]) -> Any:
                x = f[i] + c
                if lo <= x <= hi:
                    return x
                raise overflow(span, "+")
            return add_sc
        if left.slot is not None and right.slot is not None:
            i, j = left.slot, right.slot

            def add_ss(f: list[Any]) -> Any:
                x = f[i] + f[j]
                if lo <= x <= hi:
                    return x
                raise overflow(span, "+")
            return add_ss

        def add(f: list[Any]) -> Any:
            x = a(f) + b(f)
            if lo <= x <= hi:
                return x
            raise overflow(span, "+")
        return add
    if op == "-":
        if left.slot is not None and right.is_const:
            i, c = left.slot, right.const

            def sub_sc(f: list[Any]) -> Any:
                x = f[i] - c
                if lo <= x <= hi:
                    return x
                raise overflow(span, "-")
            return sub_sc

        def sub(f: list[Any]) -> Any:
            x = a(f) - b(f)
            if lo <= x <= hi:
                return x
            raise overflow(span, "-")
        return sub
    if op == "*":
        def mul(f: list[Any]) -> Any:
            x = a(f) * b(f)
            if lo <= x <= hi:
                return x
            raise overflow(span, "*")
        return mul
    if op == "/":
        return lambda f: int_div(a(f), b(f), span)
    return lambda f: int_mod(a(f), b(f), span)


def float_arith(op: str, left: Operand, right: Operand, span: Span) -> Ev:
    """Arithmetic with a float result (an int operand mixes in as Python does)."""
    a, b = left.ev, right.ev
    if op == "+":
        return lambda f: a(f) + b(f)
    if op == "-":
        return lambda f: a(f) - b(f)
    if op == "*":
        return lambda f: a(f) * b(f)
    if op == "/":
        return lambda f: float_div(a(f), b(f))
    return lambda f: dyn_arith("%", a(f), b(f), span, None)


def str_concat(left: Operand, right: Operand, span: Span, budget: Budget) -> Ev:
    """``str + str`` (capped by ``max_len``)."""
    a, b = left.ev, right.ev
    cap = budget.cfg.max_len

    def cat(f: list[Any]) -> Any:
        x = a(f)
        y = b(f)
        if len(x) + len(y) > cap:
            budget.too_long(len(x) + len(y), "str", span)
        return x + y
    return cat


def dyn_arith(op: str, x: Any, y: Any, span: Span, budget: Budget | None) -> Any:
    """Arithmetic decided by the operands' run-time types (operands of opaque type)."""
    if type(x) is int and type(y) is int:
        if op == "/":
            return int_div(x, y, span)
        if op == "%":
            return int_mod(x, y, span)
        r = x + y if op == "+" else x - y if op == "-" else x * y
        if INT_MIN <= r <= INT_MAX:
            return r
        raise overflow(span, op)
    if type(x) is str:
        if budget is not None:
            budget.too_long(len(x) + len(y), "str", span)
        return x + y
    if op == "/":
        return float_div(x, y)
    if op == "%":
        if y == 0:
            return math.nan
        return math.fmod(x, y)
    return x + y if op == "+" else x - y if op == "-" else x * y


def dynamic(op: str, left: Operand, right: Operand, span: Span, budget: Budget) -> Ev:
    """An arithmetic operator on operands of unknown static type."""
    a, b = left.ev, right.ev
    return lambda f: dyn_arith(op, a(f), b(f), span, budget)


def negate(kind: str, operand: Ev, span: Span) -> Ev:
    """Unary ``-`` (R0001 for ``-INT_MIN``)."""
    if kind == "float":
        return lambda f: -operand(f)

    def neg(f: list[Any]) -> Any:
        x = -operand(f)
        if type(x) is int and x > INT_MAX:
            raise overflow(span, "-")
        return x
    return neg
