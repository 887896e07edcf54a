"""Functions at run time: the compiled body of a declared function, handler or lambda
(:class:`FnCode`), its ``invoke(args)`` and the inlined call sites.

An invoke builds a frame, charges one step, checks the call depth (R0007, also when Python's own
recursion limit is reached first) and runs the body; a fault leaving it records the function in
the fault's Vox call stack, and each call site records where the call was made.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from vox_lang import hir
from vox_lang.runtime.errors import VoxFault
from vox_lang.runtime.frames import MISSING, RET_SLOT, RetExc
from vox_lang.runtime.values import ActorVal, FnVal
from vox_lang.source import Span

if TYPE_CHECKING:
    from vox_lang.runtime.compiler import Compiler

Ev = Callable[[list[Any]], Any]


def _not_compiled(frame: list[Any]) -> Any:
    """``FnCode.run`` until the compiler fills it in (bodies are compiled after every signature)."""
    raise RuntimeError("internal error: a function body ran before it was compiled")


@dataclass(eq=False)
class FnCode:
    """One compiled function-like body (declared function, handler or lambda)."""

    name: str
    decl: hir.FnDecl | None
    span: Span
    run: Callable[[list[Any]], Any] = _not_compiled
    nparams: int = 0
    pad: tuple[None, ...] = ()
    defaults: tuple[tuple[int, Ev], ...] = ()
    invoke: Callable[[list[Any]], Any] = field(default=lambda args: None)


def extern_body(code: FnCode) -> Callable[[list[Any]], Any]:
    """The body of an ``extern fn`` (spec §10 U13): its implementation lives outside Vox, so
    calling it is R0008."""
    where = code.decl.extern if code.decl is not None else ""
    detail = f"extern fn `{code.name}` (from {where!r}) is not available at run time"

    def unavailable(frame: list[Any]) -> Any:
        raise VoxFault("R0008", code.span, detail=detail)
    return unavailable


def make_invoke(c: Compiler, code: FnCode) -> None:
    """Create ``code.invoke(args)`` for calls through a value, named/defaulted arguments and
    handlers (the body is looked up at call time, so it may be compiled later)."""
    counter, budget = c.rt.counter, c.rt.budget
    max_depth = c.rt.cfg.max_depth
    name, span = code.name, code.span

    def enter() -> None:
        if counter[1] >= max_depth:
            raise VoxFault("R0007", None, n=max_depth)

    def finish(f: list[Any]) -> Any:
        for slot, default in code.defaults:
            if f[slot] is MISSING:
                f[slot] = default(f)
        run = code.run
        run(f)
        return f[RET_SLOT]

    def invoke(args: list[Any]) -> Any:
        if counter[1] >= max_depth:
            enter()
        counter[1] += 1
        counter[0] -= 1
        if counter[0] < 0:
            budget.checkpoint(span)
        try:
            if len(args) < code.nparams:  # omitted defaulted arguments (calls through a value)
                args = [*args, *([MISSING] * (code.nparams - len(args)))]
            f = [None, None, *args, *code.pad]
            run = code.run
            if code.defaults:
                return finish(f)
            run(f)
            return f[RET_SLOT]
        except RetExc as r:
            return r.value
        except VoxFault as e:
            e.leave(name)
            raise
        finally:
            counter[1] -= 1

    code.invoke = invoke


def direct_call(c: Compiler, code: FnCode, evs: tuple[Ev, ...], span: Span) -> Ev:
    """A call of a declared function with every argument positional: the invoke inlined into the
    call site (the hottest path of recursive programs)."""
    counter, budget, max_depth, name = c.rt.counter, c.rt.budget, c.rt.cfg.max_depth, code.name

    def enter_fault() -> VoxFault:
        return VoxFault("R0007", span, n=max_depth)

    def run_frame(nf: list[Any]) -> Any:
        if counter[1] >= max_depth:
            raise enter_fault()
        counter[1] += 1
        counter[0] -= 1
        if counter[0] < 0:
            budget.checkpoint(span)
        try:
            code.run(nf)
            return nf[RET_SLOT]
        except RetExc as r:
            return r.value
        except VoxFault as e:
            e.leave(name)
            e.at_call(span)
            raise
        except RecursionError:
            fault = enter_fault()
            fault.leave(name)
            raise fault from None
        finally:
            counter[1] -= 1

    if len(evs) == 1:
        a0 = evs[0]

        def call1(f: list[Any]) -> Any:
            x = a0(f)
            if counter[1] >= max_depth:
                raise enter_fault()
            counter[1] += 1
            counter[0] -= 1
            if counter[0] < 0:
                budget.checkpoint(span)
            nf = [None, None, x, *code.pad]
            try:
                code.run(nf)
                return nf[1]
            except RetExc as r:
                return r.value
            except VoxFault as e:
                e.leave(name)
                e.at_call(span)
                raise
            except RecursionError:
                fault = enter_fault()
                fault.leave(name)
                raise fault from None
            finally:
                counter[1] -= 1
        return call1
    if len(evs) == 0:
        return lambda f: run_frame([None, None, *code.pad])
    if len(evs) == 2:
        b0, b1 = evs
        return lambda f: run_frame([None, None, b0(f), b1(f), *code.pad])
    return lambda f: run_frame([None, None, *[a(f) for a in evs], *code.pad])


def user_call(code: FnCode, args: Ev, span: Span) -> Ev:
    def call_user(f: list[Any]) -> Any:
        try:
            return code.invoke(args(f))
        except VoxFault as e:
            if e.span is None:
                e.span = e.pending = span
            e.at_call(span)
            raise
    return call_user


def lambda_(c: Compiler, e: hir.Lambda) -> Ev:
    """A lambda value: a :class:`FnVal` over the defining frame."""
    code = FnCode("lambda", None, e.span)
    c.body(code, e.params, e.body, parent=c.scope)
    counter, budget, max_depth = c.rt.counter, c.rt.budget, c.rt.cfg.max_depth

    def make(pf: list[Any]) -> Any:
        def call_lambda(args: list[Any]) -> Any:
            if counter[1] >= max_depth:
                raise VoxFault("R0007", None, n=max_depth)
            counter[1] += 1
            counter[0] -= 1
            if counter[0] < 0:
                budget.checkpoint(e.span)
            try:
                if len(args) < code.nparams:
                    args = [*args, *([MISSING] * (code.nparams - len(args)))]
                f = [pf, None, *args, *code.pad]
                for slot, default in code.defaults:
                    if f[slot] is MISSING:
                        f[slot] = default(f)
                code.run(f)
                return f[RET_SLOT]
            except RetExc as r:
                return r.value
            except VoxFault as exc:
                exc.leave("lambda")
                raise
            finally:
                counter[1] -= 1
        return FnVal("lambda", call_lambda)
    return make


def spawn(c: Compiler, e: hir.Spawn) -> Ev:
    """``spawn(A)``: a fresh handle whose handlers run to completion when called."""
    actor = c.actors.get(e.def_id) if e.def_id is not None else None
    if actor is None:
        span, what = e.span, e.actor

        def missing(f: list[Any]) -> Any:
            raise VoxFault("R0008", span, detail=f"actor `{what}` is not available at run time")
        return missing
    handlers: dict[str, Callable[[list[Any]], Any]] = {}
    for h in actor.handlers:
        code = FnCode(f"{actor.name}.{h.name}", None, h.name_span)
        make_invoke(c, code)
        c.body(code, h.params, h.body)
        handlers[h.name] = code.invoke
    name = actor.name
    return lambda f: ActorVal(name, dict(handlers))
