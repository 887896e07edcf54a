"""Statements as closures (spec §3, §4, §11): blocks, ``let``, ``ret``, loops and the
statement forms of ``if``/``match``. Each returns ``run(frame) -> signal`` (``None``, or
:data:`BRK`/:data:`CNT`/:data:`RET` with the value in the frame's return slot); loops charge one
step per iteration. Part of :mod:`vox_lang.runtime.compiler`, which calls :func:`block`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from vox_lang import hir
from vox_lang.runtime import calls
from vox_lang.runtime.frames import BRK, CNT, RET, RET_SLOT, BrkExc, CntExc, Internal
from vox_lang.runtime.values import Record

if TYPE_CHECKING:
    from vox_lang.runtime.compiler import Compiler

Run = Callable[[list[Any]], Any]


def block(c: Compiler, b: hir.Block) -> Run:
    """A block in statement position: returns a signal."""
    guarded = guard_then_ret(c, b)
    if guarded is not None:
        return guarded
    if len(b.stmts) > 1 and isinstance(b.stmts[-1], hir.Ret) and b.stmts[-1].value is not None:
        head = block(c, hir.Block(b.stmts[:-1], b.span))
        val = c.owned(b.stmts[-1].value, top_only=True)

        def then_ret(f: list[Any]) -> Any:
            sig = head(f)
            if sig is not None:
                return sig
            f[1] = val(f)
            return RET
        return then_ret
    runs = [stmt(c, s) for s in b.stmts]
    if not runs:
        return lambda f: None
    if len(runs) == 1:
        return runs[0]
    if len(runs) == 2:
        r0, r1 = runs

        def two(f: list[Any]) -> Any:
            sig = r0(f)
            if sig is not None:
                return sig
            return r1(f)
        return two
    if len(runs) == 3:
        s0, s1, s2 = runs

        def three(f: list[Any]) -> Any:
            sig = s0(f)
            if sig is not None:
                return sig
            sig = s1(f)
            if sig is not None:
                return sig
            return s2(f)
        return three
    seq = tuple(runs)

    def many(f: list[Any]) -> Any:
        for r in seq:
            sig = r(f)
            if sig is not None:
                return sig
        return None
    return many


def guard_then_ret(c: Compiler, b: hir.Block) -> Run | None:
    """``if c { ret a }`` then ``ret b`` (the shape of most recursive functions) as one
    closure, with a ``slot < const`` style condition inlined; ``None`` for other shapes."""
    if len(b.stmts) != 2:
        return None
    first, last = b.stmts
    if not (isinstance(first, hir.ExprStmt) and isinstance(first.expr, hir.If)
            and isinstance(last, hir.Ret) and last.value is not None):
        return None
    e = first.expr
    if not (isinstance(e.else_, hir.Block) and not e.else_.stmts and len(e.then.stmts) == 1):
        return None
    only = e.then.stmts[0]
    if not (isinstance(only, hir.Ret) and only.value is not None):
        return None
    v1, v2 = c.owned(only.value, top_only=True), c.owned(last.value, top_only=True)
    cond = e.cond
    if isinstance(cond, hir.Binary) and cond.op in ("<", "<=", "==") and isinstance(cond.right, hir.Lit):
        slot = c.local_slot(cond.left)
        if slot is not None and cond.right.kind in ("int", "float"):
            i, k = slot, c.expr(cond.right)([])
            if cond.op == "<":
                def lt_guard(f: list[Any]) -> Any:
                    f[1] = v1(f) if f[i] < k else v2(f)
                    return RET
                return lt_guard
            if cond.op == "<=":
                def le_guard(f: list[Any]) -> Any:
                    f[1] = v1(f) if f[i] <= k else v2(f)
                    return RET
                return le_guard

            def eq_guard(f: list[Any]) -> Any:
                f[1] = v1(f) if f[i] == k else v2(f)
                return RET
            return eq_guard
    test = c.expr(cond)

    def guard(f: list[Any]) -> Any:
        f[1] = v1(f) if test(f) else v2(f)
        return RET
    return guard


def stmt(c: Compiler, s: hir.Stmt) -> Run:
    if isinstance(s, hir.ExprStmt):
        return expr_stmt(c, s.expr)
    if isinstance(s, hir.Let):
        return let(c, s)
    if isinstance(s, hir.Assign):
        return calls.assign(c, s)
    if isinstance(s, hir.Ret):
        if s.value is None:
            def ret_unit(f: list[Any]) -> Any:
                f[RET_SLOT] = None
                return RET
            return ret_unit
        val = c.owned(s.value, top_only=True)

        def ret(f: list[Any]) -> Any:
            f[RET_SLOT] = val(f)
            return RET
        return ret
    if isinstance(s, hir.While):
        return while_(c, s)
    if isinstance(s, hir.For):
        return for_(c, s)
    if isinstance(s, hir.Break):
        return lambda f: BRK
    if isinstance(s, hir.Continue):
        return lambda f: CNT
    raise Internal(f"statement {type(s).__name__}")


def expr_stmt(c: Compiler, e: hir.Expr) -> Run:
    """An expression whose value is dropped; ``if``/``match``/blocks keep statement signals."""
    if isinstance(e, hir.If):
        cond, then = c.expr(e.cond), block(c, e.then)
        if isinstance(e.else_, hir.Block) and not e.else_.stmts:
            only = e.then.stmts[0] if len(e.then.stmts) == 1 else None
            if isinstance(only, hir.Ret) and only.value is not None:
                val = c.owned(only.value, top_only=True)

                def if_ret(f: list[Any]) -> Any:
                    if cond(f):
                        f[1] = val(f)
                        return RET
                    return None
                return if_ret

            def if_then(f: list[Any]) -> Any:
                if cond(f):
                    return then(f)
                return None
            return if_then
        other = expr_stmt(c, e.else_)

        def if_else(f: list[Any]) -> Any:
            if cond(f):
                return then(f)
            return other(f)
        return if_else
    if isinstance(e, hir.Block):
        return block(c, e)
    if isinstance(e, hir.Match):
        scrut = c.expr(e.scrutinee)
        arms = tuple((c.pattern(a.pattern), expr_stmt(c, a.body)) for a in e.arms)
        return c.matcher(scrut, arms, e, statement=True)
    ev = c.expr(e)

    def drop(f: list[Any]) -> Any:
        ev(f)
    return drop


def let(c: Compiler, s: hir.Let) -> Run:
    val = c.owned(s.value, always=s.mutable)
    if s.def_id is None:
        return expr_stmt(c, s.value)
    put = c.store(s.def_id)
    if not c.is_global(s.def_id) and c.scope.locate(s.def_id) == (0, c.scope.slots.get(s.def_id)):
        i = c.scope.slots[s.def_id]

        def let_here(f: list[Any]) -> Any:
            f[i] = val(f)
        return let_here

    def let_any(f: list[Any]) -> Any:
        put(f, val(f))
    return let_any


def while_(c: Compiler, s: hir.While) -> Run:
    cond, body = c.expr(s.cond), block(c, s.body)
    counter, budget, span = c.rt.counter, c.rt.budget, s.span

    def loop(f: list[Any]) -> Any:
        while cond(f):
            counter[0] -= 1
            if counter[0] < 0:
                budget.checkpoint(span)
            try:
                sig = body(f)
            except BrkExc:
                break
            except CntExc:
                continue
            if sig is not None:
                if sig == BRK:
                    break
                if sig == RET:
                    return sig
        return None
    return loop


def for_(c: Compiler, s: hir.For) -> Run:
    items = c.expr(s.iterable)
    # bind the loop variables before compiling the body, so a lambda in the body that reads them
    # finds their slots in this frame instead of allocating its own (empty) ones
    put = c.store(s.var_id) if s.var_id is not None else None
    put_i = c.store(s.index_id) if s.index_id is not None else None
    body = block(c, s.body)
    counter, budget, span = c.rt.counter, c.rt.budget, s.span

    def loop(f: list[Any]) -> Any:
        seq = items(f)
        seq = tuple(seq.fields) if type(seq) is Record else tuple(seq)
        for i, x in enumerate(seq):
            counter[0] -= 1
            if counter[0] < 0:
                budget.checkpoint(span)
            if put is not None:
                put(f, x)
            if put_i is not None:
                put_i(f, i)
            try:
                sig = body(f)
            except BrkExc:
                break
            except CntExc:
                continue
            if sig is not None:
                if sig == BRK:
                    break
                if sig == RET:
                    return sig
        return None
    return loop
