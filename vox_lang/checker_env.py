"""The checker's shared state: declaration tables, HIR type → :class:`Type` resolution,
signatures of everything callable, and the per-function context (spec §4)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from vox_lang import codes, hir
from vox_lang.depth import PASS_FRAMES_PER_LEVEL, level_budget, out_of_budget
from vox_lang.diagnostics import DiagnosticSink
from vox_lang.prelude import BUILTINS, CONSTRUCTORS, PRELUDE_RECORD_FIELDS, ParamSig, Sig, prelude_type, std_member
from vox_lang.source import Span
from vox_lang.suggest import IndexCache
from vox_lang.types import (
    ELEMENT,
    FLOAT,
    INT,
    NEVER,
    STR,
    UNIT,
    UNKNOWN,
    TActor,
    TCon,
    TFn,
    TNamedRec,
    TParam,
    TRecord,
    TSum,
    Type,
    Unifier,
)

_PRIMS = {"int": INT, "float": FLOAT, "str": STR, "bool": TCon("bool"), "Unit": UNIT, "Element": ELEMENT}

#: variable-like definitions (their types live in :attr:`CheckerEnv.var_types`)
VAR_KINDS = frozenset({"let", "param", "loopvar", "armvar"})


@dataclass(frozen=True, slots=True)
class FnCtx:
    """What the body being checked returns and where it sits.

    Attributes:
        name: shown in E0507/E0508 (``area``, ``bump``, ``lambda``, ``<script>``).
        ret: the declared return type (Unit when omitted).
        kind: ``fn workflow activity handler lambda script``.
        in_workflow: inside a workflow (activities may be called, E0522).
    """

    name: str
    ret: Type
    kind: str
    in_workflow: bool


class Walk(Protocol):
    """The entry points the checker's parts call on each other (implemented by
    :class:`vox_lang.checker.Checker`, which owns one of each part): the parts are composed,
    never mixed in, so none imports another or the checker."""

    def expr(self, e: hir.Expr, expected: Type | None = None, used: bool = True) -> Type: ...

    def join(self, branches: list[tuple[Type, hir.Expr]], used: bool) -> Type: ...

    def children(self, e: hir.Children) -> Type: ...

    def call(self, e: hir.Call, expected: Type | None) -> Type: ...

    def member(self, m: hir.Member) -> Type: ...

    def check_mutable_root(self, target: hir.Expr) -> None: ...

    def match(self, e: hir.Match, expected: Type | None, used: bool) -> Type: ...

    def block(self, b: hir.Block, expected: Type | None = None, used: bool = False) -> Type: ...

    def stmt(self, s: hir.Stmt) -> None: ...

    def condition(self, cond: hir.Expr) -> None: ...

    def body(
        self, ctx: FnCtx, params: tuple[hir.Param, ...], param_types: tuple[Type, ...], body: hir.Block,
        name_span: Span,
    ) -> None: ...


class CheckerPart:
    """One part of the checker (expressions, calls, patterns, statements): the shared
    :class:`CheckerEnv` and the :class:`Walk` to reach the other parts."""

    def __init__(self, env: CheckerEnv, walk: Walk) -> None:
        self.env = env
        self.walk = walk


class CheckerEnv:
    """One module's checking state: declaration tables, the unifier, variable types, the
    current function context and depth, type resolution and signatures."""

    def __init__(self, module: hir.Module, sink: DiagnosticSink) -> None:
        self.module = module
        self.sink = sink
        self.defs = module.defs
        self.u = Unifier(self.record_fields)
        self.var_types: dict[int, Type] = {}
        self.fns: dict[int, hir.FnDecl] = {}
        self.type_decls: dict[int, hir.TypeDecl] = {}
        self.variants: dict[int, tuple[hir.Variant, int]] = {}  # variant id -> (variant, sum id)
        self.actors: dict[int, hir.ActorDecl] = {}
        self._sigs: dict[int, Sig] = {}
        self._handler_sigs: dict[int, dict[str, Sig]] = {}
        self.hints = IndexCache()  # "did you mean" indexes of field tuples and member tables
        self._field_tables: dict[int, tuple[tuple[tuple[str, Type], ...], dict[str, Type]]] = {}
        self._fields: dict[int, tuple[tuple[str, Type], ...]] = {}
        self._aliases: dict[int, Type] = {}
        self._resolving: set[int] = set()
        self.exhaustive: set[int] = set()  # id() of matches found exhaustive (for E0508)
        self.ctx = FnCtx("<script>", UNIT, "script", False)
        self.depth = 0
        self.max_depth = level_budget(PASS_FRAMES_PER_LEVEL)  # see vox_lang.depth
        for decl in module.decls:
            if isinstance(decl, hir.FnDecl):
                self.fns.setdefault(decl.def_id, decl)
            elif isinstance(decl, hir.TypeDecl):
                self.type_decls[decl.def_id] = decl
                for var in decl.variants:
                    self.variants[var.def_id] = (var, decl.def_id)
            elif isinstance(decl, hir.ActorDecl):
                self.actors[decl.def_id] = decl

    # ------------------------------------------------------------------ helpers

    def show(self, t: Type) -> str:
        return self.u.show(t)

    def enter(self, span: Span) -> bool:
        """Count one level of nesting; False past the stack budget, which
        :func:`vox_lang.depth.out_of_budget` records at ``span`` (never silently)."""
        if self.depth >= self.max_depth:
            out_of_budget(self.sink, span)
            return False
        self.depth += 1
        return True

    # ------------------------------------------------------------------ types

    def resolve_type(self, tr: hir.TypeRef | None) -> Type:
        """The checker type of an annotation (``None``, an omitted return type, is Unit)."""
        if tr is None:
            return UNIT
        if isinstance(tr, hir.NamedType):
            d = self.defs[tr.def_id]
            if d.kind == "prim":
                if d.key in _PRIMS:
                    return _PRIMS[d.key]
                if not tr.args:
                    return prelude_type(d.key)
                args = [self.resolve_type(a) for a in tr.args]
                if d.key == "Result" and len(args) == 1:
                    args.append(STR)
                return TCon(d.key, tuple(args))
            if d.kind == "record":
                return TNamedRec(d.name, d.id)
            if d.kind == "sum":
                return TSum(d.name, d.id)
            if d.kind == "actor":
                return TActor(d.name, d.id)
            if d.kind == "generic":
                return TParam(d.name, d.id)
            if d.kind == "alias":
                return self.alias_type(d.id)
            return UNKNOWN
        if isinstance(tr, hir.FnType):
            return TFn(tuple(self.resolve_type(p) for p in tr.params), self.resolve_type(tr.ret))
        if isinstance(tr, hir.RecordType):
            return TRecord(tuple((f.name, self.resolve_type(f.type)) for f in tr.fields))
        return UNKNOWN

    def alias_type(self, def_id: int) -> Type:
        """An alias is transparent: its target type (a cyclic alias is ``?``)."""
        if def_id in self._aliases:
            return self._aliases[def_id]
        decl = self.type_decls.get(def_id)
        if decl is None or def_id in self._resolving:
            return UNKNOWN
        self._resolving.add(def_id)
        try:
            t = self.resolve_type(decl.alias)
        finally:
            self._resolving.discard(def_id)
        self._aliases[def_id] = t
        return t

    def field_table(self, t: Type) -> dict[str, Type]:
        """Field name → type of record type ``t`` (``{}`` for any other type): one dict per
        field tuple, made once and shared (so a member access does not copy every field), so
        callers must not change it."""
        fields = self.u.fields(t)
        if not fields:
            return {}
        hit = self._field_tables.get(id(fields))
        if hit is None:  # the entry holds the tuple, so its id is not reused meanwhile
            hit = self._field_tables[id(fields)] = (fields, dict(fields))
        return hit[1]

    def record_fields(self, def_id: int) -> tuple[tuple[str, Type], ...]:
        """Fields of a declared record type, resolved once."""
        if def_id in PRELUDE_RECORD_FIELDS:
            return PRELUDE_RECORD_FIELDS[def_id]
        if def_id not in self._fields:
            decl = self.type_decls.get(def_id)
            self._fields[def_id] = ()
            if decl is not None and decl.record is not None:
                self._fields[def_id] = tuple((f.name, self.resolve_type(f.type)) for f in decl.record.fields)
        return self._fields[def_id]

    # ------------------------------------------------------------------ signatures

    def params_sig(self, params: tuple[hir.Param, ...]) -> tuple[ParamSig, ...]:
        return tuple(ParamSig(p.name, self.resolve_type(p.type), p.default is not None) for p in params)

    def sig_of(self, def_id: int) -> Sig | None:
        """The signature of a callable definition (function, builtin, constructor, std member)."""
        if def_id in self._sigs:
            return self._sigs[def_id]
        d = self.defs[def_id]
        sig: Sig | None = None
        if d.kind in ("fn", "workflow", "activity") and def_id in self.fns:
            fn = self.fns[def_id]
            sig = Sig(self.params_sig(fn.params), self.resolve_type(fn.ret), tuple(g.def_id for g in fn.generics))
        elif d.kind == "builtin":
            sig = BUILTINS[d.key]
        elif d.kind == "ctor":
            sig = CONSTRUCTORS[d.key][1]
        elif d.kind == "std_fn":
            found = std_member(tuple(d.key.split(".")[1:]))
            sig = found if isinstance(found, Sig) else None
        elif d.kind == "variant" and def_id in self.variants:
            var, sum_id = self.variants[def_id]
            params = tuple(ParamSig(f.name, self.resolve_type(f.type)) for f in var.fields)
            sig = Sig(params, TSum(self.defs[sum_id].name, sum_id))
        if sig is not None:
            self._sigs[def_id] = sig
        return sig

    def handler_sigs(self, actor_id: int) -> dict[str, Sig]:
        """Handler name → signature for one actor."""
        if actor_id not in self._handler_sigs:
            actor = self.actors.get(actor_id)
            table: dict[str, Sig] = {}
            for h in actor.handlers if actor else ():
                table.setdefault(h.name, Sig(self.params_sig(h.params), self.resolve_type(h.ret)))
            self._handler_sigs[actor_id] = table
        return self._handler_sigs[actor_id]

    def instantiate(self, sig: Sig, mapping: dict[int, Type] | None = None) -> tuple[list[ParamSig], Type]:
        """Fresh variables for the signature's generics (``mapping`` pre-binds some keys)."""
        subst = dict(mapping or {})
        for key in sig.generics:
            subst.setdefault(key, self.u.fresh())
        params = [ParamSig(p.name, self.u.substitute(p.type, subst), p.has_default) for p in sig.params]
        return params, self.u.substitute(sig.ret, subst)

    def value_type(self, ref: hir.Ref) -> Type:
        """The type of a resolved value name (a name called directly is checked by the call).

        Every prelude kind has a real type here: builtins, constructors and ``std`` functions
        their signature's function type; a view element ``fn() to Element`` (spec §4: its
        arguments are named only, so the value takes no positional ones, and called bare it
        is the element itself, which is what the runtime's function value does). A ``std``
        module is not a value: E0410 (the name is bound in the value namespace only so that
        its members resolve). Only a non-``std`` import is opaque ``?`` (spec §5).
        """
        d = self.defs[ref.def_id]
        if d.kind in VAR_KINDS:
            t = self.var_types.get(d.id, UNKNOWN)
            return UNKNOWN if t is NEVER else t
        if d.kind == "view":
            return TFn((), ELEMENT)
        if d.kind == "std_module":
            self.sink.report(codes.E0410, ref.span, n=ref.name, hint=module_hint(ref.name, d.key))
            return UNKNOWN
        sig = self.sig_of(d.id)
        if sig is None:
            return UNKNOWN
        params, ret = self.instantiate(sig)
        if d.kind in ("ctor", "variant") and not params:
            return ret
        return TFn(tuple(p.type for p in params), ret)


def module_hint(name: str, key: str | None) -> str:
    """E0410's hint for a ``std`` module used as a value: use one of its members."""
    table = std_member(tuple((key or "std").split(".")[1:]))
    first = next(iter(table), None) if isinstance(table, dict) else None
    example = f", e.g. `{name}.{first}`" if first is not None else ""
    return f"`{name}` is a module, not a value: use one of its members{example}"
