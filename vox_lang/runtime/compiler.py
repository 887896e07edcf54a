"""HIR → Python closures (spec §11): every expression becomes ``ev(frame) -> value`` and every
statement ``run(frame) -> signal``; nothing is ever ``eval``/``exec``-ed, and the closures call
only the executor's own runtime (values, builtins, stdlib).

Calls, members and indexing live in :mod:`vox_lang.runtime.calls`; statements in
:mod:`vox_lang.runtime.statements`; binary operator chains in :mod:`vox_lang.runtime.binary`, the
operators' closures in :mod:`vox_lang.runtime.ops`; patterns in :mod:`vox_lang.runtime.patterns`.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import itemgetter
from typing import Any

from vox_lang import hir
from vox_lang.runtime import calls, functions, ops, statements
from vox_lang.runtime.binary import compile_binary
from vox_lang.runtime.errors import VoxFault
from vox_lang.runtime.frames import (
    BRK,
    RET,
    RET_SLOT,
    BrkExc,
    CntExc,
    FnScope,
    Internal,
    RetExc,
)
from vox_lang.runtime.limits import RunState
from vox_lang.runtime.patterns import compile_pattern
from vox_lang.runtime.typed import TypeInfo
from vox_lang.runtime.values import (
    NONE,
    Element,
    Err,
    Ok,
    Record,
    Some,
    text_element,
    vcopy,
)

Ev = Callable[[list[Any]], Any]
Run = Callable[[list[Any]], Any]


class Compiler:
    """Compiles one checked module for one run.

    Attributes:
        rt: the run's state (budget, output, capabilities) the closures use.
        types: the checker's expression types.
        globals: storage of top-level ``let``s.
        scope: the body being compiled.
    """

    def __init__(self, module: hir.Module, types: TypeInfo, rt: RunState) -> None:
        self.module = module
        self.defs = module.defs
        self.types = types
        self.rt = rt
        self.globals: list[Any] = []
        self.global_slots: dict[int, int] = {}
        self.scope = FnScope(0)
        self.fns: dict[int, functions.FnCode] = {}
        self.actors: dict[int, hir.ActorDecl] = {}
        self.type_decls: dict[int, hir.TypeDecl] = {}
        for decl in module.decls:
            if isinstance(decl, hir.FnDecl):
                self.fns.setdefault(decl.def_id, functions.FnCode(decl.name, decl, decl.span))
            elif isinstance(decl, hir.ActorDecl):
                self.actors[decl.def_id] = decl
            elif isinstance(decl, hir.TypeDecl):
                self.type_decls[decl.def_id] = decl
        for code in self.fns.values():
            functions.make_invoke(self, code)
        self.shared = _refs_in_bodies(module)  # top-level lets some function reads or writes

    def is_global(self, def_id: int) -> bool:
        """A top-level ``let`` used inside a declaration lives in the globals list; one used
        only by the script body (and its lambdas) is a slot of the script frame (faster)."""
        return self.defs[def_id].top_level and def_id in self.shared

    # ------------------------------------------------------------------ bodies

    def compile_functions(self) -> None:
        """Compile every function body (invokes exist already, so calls may come first)."""
        for code in self.fns.values():
            if code.decl is not None and code.decl.extern is None:
                self.body(code, code.decl.params, code.decl.body)
            elif code.decl is not None:  # extern fn: no body (spec §10 U13)
                code.run = functions.extern_body(code)
                code.nparams = len(code.decl.params)

    def body(self, code: functions.FnCode, params: tuple[hir.Param, ...], block: hir.Block,
             parent: FnScope | None = None) -> None:
        """Compile a function-like body into ``code`` (slots, defaults, statements)."""
        saved = self.scope
        self.scope = FnScope(parent.level + 1 if parent else 1, parent)
        try:
            for p in params:
                self.scope.bind(p.def_id)
            code.defaults = tuple(
                (self.scope.slots[p.def_id], self.expr(p.default)) for p in params if p.default is not None
            )
            code.run = self.block(block)
            code.nparams = len(params)
            code.pad = (None,) * (self.scope.size - 2 - len(params))
        finally:
            self.scope = saved

    # ------------------------------------------------------------------ variables

    def global_slot(self, def_id: int) -> int:
        slot = self.global_slots.get(def_id)
        if slot is None:
            slot = len(self.globals)
            self.global_slots[def_id] = slot
            self.globals.append(None)
        return slot

    def load(self, def_id: int) -> Ev:
        """Read a variable."""
        if self.is_global(def_id):
            g, i = self.globals, self.global_slot(def_id)
            return lambda f: g[i]
        where = self.scope.locate(def_id)
        hops, i = where if where is not None else (0, self.scope.bind(def_id))
        if hops == 0:
            return itemgetter(i)
        if hops == 1:
            return lambda f: f[0][i]

        def far(f: list[Any]) -> Any:
            for _ in range(hops):
                f = f[0]
            return f[i]
        return far

    def local_slot(self, e: hir.Expr) -> int | None:
        """The slot of ``e`` when it is a variable of the current frame (operator fast paths)."""
        if isinstance(e, hir.Ref):
            d = self.defs[e.def_id]
            if d.kind in ("let", "param", "loopvar", "armvar") and not self.is_global(d.id):
                return self.scope.slots.get(e.def_id)
        return None

    def store(self, def_id: int) -> Callable[[list[Any], Any], None]:
        """A setter ``(frame, value)`` for a variable (binding it in this body if new)."""
        if self.is_global(def_id):
            g, gi = self.globals, self.global_slot(def_id)

            def set_global(f: list[Any], v: Any) -> None:
                g[gi] = v
            return set_global
        where = self.scope.locate(def_id)
        hops, i = where if where is not None else (0, self.scope.bind(def_id))

        def set_local(f: list[Any], v: Any) -> None:
            for _ in range(hops):
                f = f[0]
            f[i] = v

        if hops == 0:
            def set_here(f: list[Any], v: Any) -> None:
                f[i] = v
            return set_here
        return set_local

    def mutable_root(self, e: hir.Expr, top_only: bool = False) -> bool:
        """True when ``e`` is a place (name, field, index) rooted at a ``let mut`` binding."""
        while isinstance(e, (hir.Member, hir.Index)):
            e = e.obj
        if not isinstance(e, hir.Ref):
            return False
        d = self.defs[e.def_id]
        return d.kind == "let" and d.mutable and (d.top_level or not top_only)

    def owned(self, e: hir.Expr, always: bool = False, top_only: bool = False) -> Ev:
        """``e`` compiled so that storing its value cannot alias another binding's container."""
        ev = self.expr(e)
        if not self.types.is_container(e):
            return ev
        if always or self.mutable_root(e, top_only):
            return lambda f: vcopy(ev(f))
        return ev

    # ------------------------------------------------------------------ statements

    def block(self, b: hir.Block) -> Run:
        """A block in statement position (:func:`vox_lang.runtime.statements.block`)."""
        return statements.block(self, b)

    def expr_stmt(self, e: hir.Expr) -> Run:
        """An expression whose value is dropped (:func:`vox_lang.runtime.statements.expr_stmt`)."""
        return statements.expr_stmt(self, e)

    # ------------------------------------------------------------------ match

    def pattern(self, p: hir.Pattern) -> Callable[[Any, list[Any]], bool]:
        return compile_pattern(p, self.defs, self.store)

    def matcher(self, scrut: Ev, arms: tuple[tuple[Callable[[Any, list[Any]], bool], Ev], ...],
                e: hir.Match, statement: bool) -> Ev:
        span = e.span

        def match(f: list[Any]) -> Any:
            v = scrut(f)
            for test, body in arms:
                if test(v, f):
                    return body(f)
            if statement:
                return None
            raise VoxFault("R0002", span)  # unreachable in a checked program (matches are exhaustive)
        return match

    # ------------------------------------------------------------------ expressions

    def expr(self, e: hir.Expr) -> Ev:
        if isinstance(e, hir.Lit):
            value: Any = e.value
            if e.kind == "int" and self.types.is_float(e):
                value = float(value)  # an INT literal checked as float (spec §4)
            elif e.kind == "unit":
                value = None
            return lambda f: value
        if isinstance(e, hir.Ref):
            return calls.ref(self, e)
        if isinstance(e, hir.Call):
            return calls.call(self, e)
        if isinstance(e, hir.Member):
            return calls.member(self, e)
        if isinstance(e, hir.Index):
            return calls.index(self, e)
        if isinstance(e, hir.Binary):
            return compile_binary(self, e)
        if isinstance(e, hir.Unary):
            operand = self.expr(e.operand)
            if e.op == "not":
                return lambda f: not operand(f)
            return ops.negate("float" if self.types.is_float(e) else "int", operand, e.span)
        if isinstance(e, hir.ListLit):
            elems = tuple(self.owned(x) for x in e.elems)
            if not elems:
                return lambda f: []
            return lambda f: [x(f) for x in elems]
        if isinstance(e, hir.RecordLit):
            return self.record(e)
        if isinstance(e, hir.If):
            cond, then = self.expr(e.cond), self.block_value(e.then)
            other = self.expr(e.else_) if isinstance(e.else_, hir.If) else self.block_value(e.else_)
            return lambda f: then(f) if cond(f) else other(f)
        if isinstance(e, hir.Match):
            scrut = self.expr(e.scrutinee)
            arms = tuple((self.pattern(a.pattern), self.expr(a.body)) for a in e.arms)
            return self.matcher(scrut, arms, e, statement=False)
        if isinstance(e, hir.Block):
            return self.block_value(e)
        if isinstance(e, hir.Try):
            return self.try_(e)
        if isinstance(e, hir.Lambda):
            return functions.lambda_(self, e)
        if isinstance(e, hir.Spawn):
            return functions.spawn(self, e)
        if isinstance(e, hir.Children):
            return self.children(e)
        raise Internal(f"expression {type(e).__name__} at offset {e.span.start}")

    def block_value(self, b: hir.Block) -> Ev:
        """A block used as a value: its final expression (else Unit); control flow as exceptions."""
        stmts = b.stmts
        last: Ev | None = None
        if stmts and isinstance(stmts[-1], hir.ExprStmt):
            last = self.expr(stmts[-1].expr)
            stmts = stmts[:-1]
        if not stmts:
            return last if last is not None else (lambda f: None)
        run = self.block(hir.Block(stmts, b.span))
        final = last

        def value(f: list[Any]) -> Any:
            sig = run(f)
            if sig is not None:
                if sig == RET:
                    raise RetExc(f[RET_SLOT])
                raise BrkExc() if sig == BRK else CntExc()
            return final(f) if final is not None else None
        return value

    def operand(self, e: hir.Expr) -> ops.Operand:
        """``e`` compiled with how it is read: a constant, a local slot, or its closure (the shapes
        the operator closures of :mod:`vox_lang.runtime.ops` specialise on)."""
        ev = self.expr(e)
        if isinstance(e, hir.Lit):
            return ops.Operand(ev, const=ev([]), is_const=True)
        return ops.Operand(ev, slot=self.local_slot(e))

    def record(self, e: hir.RecordLit) -> Ev:
        order = self.types.record_order(e)
        names = tuple(fl.name for fl in e.fields)
        vals = tuple(self.owned(fl.value) for fl in e.fields)
        if order is None:  # a map literal
            return lambda f: {n: v(f) for n, v in zip(names, vals)}
        if order == names:
            return lambda f: Record({n: v(f) for n, v in zip(names, vals)})

        def reordered(f: list[Any]) -> Any:
            got = {n: v(f) for n, v in zip(names, vals)}  # evaluated left to right as written
            return Record({n: got[n] for n in order})
        return reordered

    def try_(self, e: hir.Try) -> Ev:
        operand = self.expr(e.operand)

        def q(f: list[Any]) -> Any:
            v = operand(f)
            t = type(v)
            if t is Ok or t is Some:
                return v.value
            if t is Err or v is NONE:
                raise RetExc(v)
            return v
        return q

    def children(self, e: hir.Children) -> Ev:
        items = tuple(self.expr(x) for x in e.items)

        def kids(f: list[Any]) -> Any:
            out: list[Any] = []
            for item in items:
                v = item(f)
                if type(v) is str:
                    out.append(text_element(v))
                elif type(v) is list:
                    out.extend(v)
                elif type(v) is Element:
                    out.append(v)
            return out
        return kids


def _refs_in_bodies(module: hir.Module) -> frozenset[int]:
    """Definition ids named inside any function, workflow, activity or handler (parameter
    defaults included): the top-level ``let``s that must live in the globals list."""
    from dataclasses import fields, is_dataclass

    stack: list[object] = []
    for decl in module.decls:
        if isinstance(decl, hir.FnDecl):
            stack.append(decl.body)
            stack.extend(decl.params)
        elif isinstance(decl, hir.ActorDecl):
            for h in decl.handlers:
                stack.append(h.body)
                stack.extend(h.params)
    found: set[int] = set()
    while stack:
        node = stack.pop()
        if isinstance(node, hir.Ref):
            found.add(node.def_id)
            continue
        if not is_dataclass(node) or isinstance(node, type):  # every HIR node is a dataclass instance
            continue
        for fl in fields(node):
            value = getattr(node, fl.name)
            if isinstance(value, tuple):
                stack.extend(v for v in value if is_dataclass(v))
            elif is_dataclass(value):
                stack.append(value)
    return frozenset(found)
