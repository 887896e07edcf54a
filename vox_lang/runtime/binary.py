"""Binary operators as closures (spec §4, §11): a binary node and the left-nested operators under
it (``a + b + … + z``) are compiled along the chain's left spine in a loop, and each operator is
dispatched by the checker's operand types to a closure factory of :mod:`vox_lang.runtime.ops`.
Part of :mod:`vox_lang.runtime.compiler`, which calls :func:`compile_binary`.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Final

from vox_lang import hir
from vox_lang.runtime import ops

if TYPE_CHECKING:
    from vox_lang.runtime.compiler import Compiler

Ev = Callable[[list[Any]], Any]

#: operator chains with more operators than this run in a loop (see :func:`compile_binary`)
FLAT_CHAIN: Final = 32


def compile_binary(c: Compiler, e: hir.Binary) -> Ev:
    """A binary operator and the left-nested operators under it (``a + b + … + z``),
    compiled along the chain's left spine in a loop (never one Python call per operand).
    A chain longer than :data:`FLAT_CHAIN` also *runs* in a loop, its running value kept in
    a scratch slot of the frame; a shorter one nests one closure per operator (fastest)."""
    spine = [e]
    while isinstance(spine[-1].left, hir.Binary):
        spine.append(spine[-1].left)
    spine.reverse()  # innermost operator first
    if len(spine) <= FLAT_CHAIN:
        left = c.operand(spine[0].left)
        ev = operator(c, spine[0], left)
        for node in spine[1:]:
            ev = operator(c, node, ops.Operand(ev))
        return ev
    first = c.expr(spine[0].left)
    tmp = c.scope.temp()
    acc = ops.Operand(itemgetter(tmp), slot=tmp)
    steps = tuple(operator(c, node, acc) for node in spine)

    def chain(f: list[Any]) -> Any:
        f[tmp] = first(f)
        for step in steps:
            f[tmp] = step(f)
        value, f[tmp] = f[tmp], None
        return value
    return chain


def operator(c: Compiler, e: hir.Binary, left: ops.Operand) -> Ev:
    """One binary operator whose left operand is read as ``left``."""
    op = e.op
    if op in ("and", "or"):
        a, b = left.ev, c.expr(e.right)
        if op == "and":
            return lambda f: a(f) and b(f)
        return lambda f: a(f) or b(f)
    right = c.operand(e.right)
    if op in ("<", "<=", ">", ">=", "==", "!="):
        if c.types.head(e.left) in ("int", "float", "str", "bool"):
            return ops.compare(op, left, right)
        if op in ("==", "!="):
            return ops.structural(op, left, right)
        return ops.deep(ops.compare(op, left, right), e.span)
    head = c.types.head(e)
    if head == "int":
        return ops.int_arith(op, left, right, e.span)
    if head == "float":
        return ops.float_arith(op, left, right, e.span)
    if head == "str":
        return ops.str_concat(left, right, e.span, c.rt.budget)
    return ops.dynamic(op, left, right, e.span, c.rt.budget)
