"""Compiling names, calls, members, indexing and assignment (the part of
:mod:`vox_lang.runtime.compiler` that binds arguments and dispatches on what is called).

Declared functions are called through :mod:`vox_lang.runtime.functions`. Builtins,
constructors, view elements, std members, methods and actor handlers are resolved at compile
time when the checker's types say what is called, and by the run-time value otherwise.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from vox_lang import hir
from vox_lang.runtime import builtins as bi, functions, ops
from vox_lang.runtime.errors import VoxFault
from vox_lang.runtime.frames import MISSING
from vox_lang.runtime.stdlib import std_function, std_value
from vox_lang.runtime.text import show_cut
from vox_lang.runtime.values import (
    NONE,
    ActorVal,
    Element,
    Err,
    FnVal,
    Ok,
    Record,
    Some,
    Variant,
    as_key,
    vcopy,
)
from vox_lang.source import Span

if TYPE_CHECKING:
    from vox_lang.runtime.compiler import Compiler

Ev = Callable[[list[Any]], Any]




# --------------------------------------------------------------------------- names


def ref(c: Compiler, e: hir.Ref) -> Ev:
    """A name used as a value."""
    d = c.defs[e.def_id]
    kind = d.kind
    if kind in ("let", "param", "loopvar", "armvar"):
        return c.load(e.def_id)
    value: Any
    if kind in ("fn", "workflow", "activity"):
        code = c.fns.get(d.id)
        if code is None:
            return _unavailable(e.span, f"`{d.name}`")
        value = FnVal(d.name, lambda args: code.invoke(args))
    elif kind == "builtin":
        value = bi.builtin_value(d.key, c.rt, e.span)
    elif kind == "ctor":
        value = {"None": NONE, "Some": FnVal("Some", lambda a: Some(vcopy(a[0]))),
                 "Ok": FnVal("Ok", lambda a: Ok(vcopy(a[0]))),
                 "Error": FnVal("Error", lambda a: Err(vcopy(a[0])))}[d.key]
    elif kind == "variant":
        value = bi.variant_value(d.id, d.name, _variant_arity(c, d.id))
    elif kind == "std_fn":
        value = std_value(d.key, c.rt, e.span)
    elif kind == "view":
        value = FnVal(d.name, lambda args: Element(d.name, (), ()))
    else:
        return _unavailable(e.span, f"module `{d.key or d.name}`")
    return lambda f: value


def _unavailable(span: Span, what: str) -> Ev:
    def fail(f: list[Any]) -> Any:
        raise VoxFault("R0008", span, detail=f"{what} is not available at run time")
    return fail


def _variant_arity(c: Compiler, vid: int) -> int:
    for decl in c.type_decls.values():
        for v in decl.variants:
            if v.def_id == vid:
                return len(v.fields)
    return 0


def _variant_fields(c: Compiler, vid: int) -> tuple[str, ...]:
    for decl in c.type_decls.values():
        for v in decl.variants:
            if v.def_id == vid:
                return tuple(fl.name for fl in v.fields)
    return ()


# --------------------------------------------------------------------------- calls


def bind_args(c: Compiler, args: tuple[hir.Arg, ...], names: tuple[str, ...],
              defaulted: tuple[bool, ...], copy: bool = False) -> Ev:
    """``f -> [values in parameter order]``: positional first, then by name; an omitted
    defaulted parameter is :data:`MISSING`. Arguments are evaluated in written order."""
    evs = tuple(c.owned(a.value) if copy else c.expr(a.value) for a in args)
    if all(a.name is None for a in args) and len(args) == len(names):
        if len(evs) == 0:
            return lambda f: []
        if len(evs) == 1:
            a0 = evs[0]
            return lambda f: [a0(f)]
        if len(evs) == 2:
            a0, a1 = evs
            return lambda f: [a0(f), a1(f)]
        return lambda f: [a(f) for a in evs]
    place: list[int] = []
    pos = 0
    for a in args:
        if a.name is None:
            place.append(pos)
            pos += 1
        else:
            place.append(names.index(a.name) if a.name in names else len(names))
    n = len(names)
    where = tuple(place)

    def bound(f: list[Any]) -> list[Any]:
        out: list[Any] = [MISSING] * (n + 1)
        for slot, a in zip(where, evs):
            out[slot] = a(f)
        return out[:n]
    return bound


def _guard(ev: Ev, span: Span) -> Ev:
    """Record ``span`` as the caller's position when a fault passes through this call."""
    def guarded(f: list[Any]) -> Any:
        try:
            return ev(f)
        except VoxFault as e:
            if e.span is None:
                e.span = e.pending = span
            e.at_call(span)
            raise
    return guarded


def call(c: Compiler, e: hir.Call) -> Ev:
    callee, span = e.callee, e.span
    if isinstance(callee, hir.Ref):
        d = c.defs[callee.def_id]
        kind = d.kind
        if kind in ("fn", "workflow", "activity") and d.id in c.fns:
            code = c.fns[d.id]
            decl = code.decl
            params = decl.params if decl is not None else ()
            if all(a.name is None for a in e.args) and len(e.args) == len(params) and not any(
                    p.default is not None for p in params) and decl is not None and decl.extern is None:
                return functions.direct_call(c, code, tuple(c.owned(a.value) for a in e.args), span)
            args = bind_args(c, e.args, tuple(p.name for p in params), tuple(p.default is not None for p in params),
                             copy=True)
            return functions.user_call(code, args, span)
        if kind == "builtin":
            return _builtin_call(c, d.key, e)
        if kind == "ctor":
            args = bind_args(c, e.args, ("error",) if d.key == "Error" else ("value",), (False,), copy=True)
            cls = {"Some": Some, "Ok": Ok, "Error": Err}.get(d.key)
            if cls is None:
                return lambda f: NONE
            return lambda f: cls(args(f)[0])
        if kind == "variant":
            names = _variant_fields(c, d.id)
            args = bind_args(c, e.args, names, (False,) * len(names), copy=True)
            tag, vname = d.id, d.name
            return lambda f: Variant(tag, vname, tuple(args(f)))
        if kind == "view":
            return _view_call(c, d.name, e)
        if kind == "std_fn":
            fn = std_function(d.key, c.rt)
            args = bind_args(c, e.args, _std_param_names(d.key), ())
            return lambda f: fn(args(f), span)
        if kind in ("import", "std_module"):
            return _unavailable(callee.span, f"module `{d.key or d.name}`")
    if isinstance(callee, hir.Member):
        return _member_call(c, callee, e)
    fn_ev = c.expr(callee)
    evs = tuple(c.expr(a.value) for a in e.args)
    return _guard(lambda f: fn_ev(f).call([a(f) for a in evs]), span)


def _std_param_names(key: str) -> tuple[str, ...]:
    from vox_lang.prelude import Sig, std_member

    sig = std_member(tuple(key.split(".")[1:]))
    return tuple(p.name for p in sig.params) if isinstance(sig, Sig) else ()


def _builtin_call(c: Compiler, name: str, e: hir.Call) -> Ev:
    impl = bi.BUILTINS[name]
    rt, span = c.rt, e.span
    if any(a.name is not None for a in e.args):  # `range(b=3, a=1)`: bind by the prelude's names
        from vox_lang.prelude import BUILTINS as SIGS

        names = tuple(p.name for p in SIGS[name].params)
        bound = bind_args(c, e.args, names, (False,) * len(names), copy=name == "set")
        return lambda f: impl(rt, bound(f), span)
    evs = tuple(c.owned(a.value) if name == "set" else c.expr(a.value) for a in e.args)
    if name == "len" and len(evs) == 1:
        a0 = evs[0]

        def length(f: list[Any]) -> Any:
            v = a0(f)
            return len(v.fields) if type(v) is Record else len(v)
        return length
    if len(evs) == 1:
        a0 = evs[0]
        return lambda f: impl(rt, [a0(f)], span)
    return lambda f: impl(rt, [a(f) for a in evs], span)


def _view_call(c: Compiler, name: str, e: hir.Call) -> Ev:
    named = tuple((a.name or f"#{i + 1}", c.owned(a.value)) for i, a in enumerate(e.args) if a.name != "children")
    kids = next((c.expr(a.value) for a in e.args if a.name == "children"), None)

    def element(f: list[Any]) -> Any:
        props = tuple((k, v(f)) for k, v in named)
        children = tuple(kids(f)) if kids is not None else ()
        return Element(name, props, children)
    return element


def _member_call(c: Compiler, m: hir.Member, e: hir.Call) -> Ev:
    """``obj.name(args)``: actor handler, record field holding a function, or a method."""
    obj = c.expr(m.obj)
    head = c.types.head(m.obj)
    rt, span, name = c.rt, e.span, m.name
    if isinstance(m.obj, hir.Ref) and c.defs[m.obj.def_id].kind in ("import", "std_module"):
        return _unavailable(m.obj.span, f"module `{c.defs[m.obj.def_id].key}`")
    if head not in ("actor", "record", "") and name == "push" and not c.types.is_container(e.args[0].value):
        a0 = c.expr(e.args[0].value)
        cap, budget = rt.cfg.max_len, rt.budget

        def push(f: list[Any]) -> Any:
            xs = obj(f)
            if len(xs) >= cap:
                budget.too_long(len(xs) + 1, "list", span)
            xs.append(a0(f))
        return push
    if head == "actor":
        handler = _handler_decl(c, m.obj, name)
        if handler is not None:
            params = handler.params
            bound = bind_args(c, e.args, tuple(p.name for p in params), tuple(p.default is not None for p in params),
                              copy=True)
            return _guard(lambda f: obj(f).handlers[name](bound(f)), span)
    evs = tuple(c.expr(a.value) for a in e.args)
    method = bi.find_method(head, name) if head not in ("actor", "record", "") else None
    if method is not None:
        found = method
        if len(evs) == 1:
            a0 = evs[0]
            return lambda f: found(rt, obj(f), [a0(f)], span)
        return lambda f: found(rt, obj(f), [a(f) for a in evs], span)

    def dynamic(f: list[Any]) -> Any:
        target = obj(f)
        args = [a(f) for a in evs]
        t = type(target)
        if t is ActorVal:
            return target.handlers[name](args)
        if t is Record:
            return target.fields[name].call(args)
        impl = bi.find_method(bi.head_of(target), name)
        if impl is None:
            raise VoxFault("R0008", span, detail=f"method `{name}` is not available at run time")
        return impl(rt, target, args, span)
    return _guard(dynamic, span)


def _handler_decl(c: Compiler, obj: hir.Expr, name: str) -> hir.Handler | None:
    """The handler ``name`` of the actor type of ``obj`` (from the checker's types)."""
    from vox_lang.types import TActor

    t = c.types.type_of(obj)
    actor = c.actors.get(t.def_id) if isinstance(t, TActor) else None
    return next((h for h in actor.handlers if h.name == name), None) if actor is not None else None


# --------------------------------------------------------------------------- members, index


def member(c: Compiler, m: hir.Member) -> Ev:
    """``obj.name`` as a value: a record field, a handler or a bound method."""
    if isinstance(m.obj, hir.Ref) and c.defs[m.obj.def_id].kind in ("import", "std_module"):
        return _unavailable(m.obj.span, f"module `{c.defs[m.obj.def_id].key}`")
    obj = c.expr(m.obj)
    name, rt, span = m.name, c.rt, m.span
    if c.types.head(m.obj) == "record":
        return lambda f: obj(f).fields[name]

    def get(f: list[Any]) -> Any:
        target = obj(f)
        t = type(target)
        if t is Record:
            return target.fields[name]
        if t is ActorVal:
            return FnVal(name, target.handlers[name])
        impl = bi.find_method(bi.head_of(target), name)
        if impl is None:
            raise VoxFault("R0008", span, detail=f"member `{name}` is not available at run time")
        bound = impl
        return FnVal(name, lambda args: bound(rt, target, args, span))
    return get


def index(c: Compiler, e: hir.Index) -> Ev:
    """``xs[i]`` (R0004 outside ``0..len-1``), ``m[k]`` (R0005 when missing), ``s[i]``."""
    obj, key, span = c.expr(e.obj), c.expr(e.index), e.span
    head = c.types.head(e.obj)
    if head == "List" or head == "str":
        def at(f: list[Any]) -> Any:
            xs = obj(f)
            i = key(f)
            if 0 <= i < len(xs):
                return xs[i]
            raise VoxFault("R0004", span, i=i, n=len(xs))
        return at

    def lookup(f: list[Any]) -> Any:
        xs = obj(f)
        k = key(f)
        if type(xs) is dict:
            try:
                return xs[as_key(k)]
            except KeyError:
                raise VoxFault("R0005", span, k=show_cut(k)) from None
        if 0 <= k < len(xs):
            return xs[k]
        raise VoxFault("R0004", span, i=k, n=len(xs))
    return lookup


def assign(c: Compiler, s: hir.Assign) -> Callable[[list[Any]], Any]:
    """``x = v``, ``r.f = v``, ``xs[i] = v`` (R0004), ``m[k] = v`` (insert or replace)."""
    target, val = s.target, c.owned(s.value, always=True)
    if isinstance(target, hir.Ref):
        slot = c.scope.slots.get(target.def_id) if not c.is_global(target.def_id) else None
        if slot is not None:
            fused = ops.fused_update(c, slot, s.value) if isinstance(s.value, hir.Binary) else None
            if fused is not None:
                return fused
            i = slot

            def set_slot(f: list[Any]) -> Any:
                f[i] = val(f)
            return set_slot
        put = c.store(target.def_id)

        def set_var(f: list[Any]) -> Any:
            put(f, val(f))
        return set_var
    if isinstance(target, hir.Member):
        obj, name = c.expr(target.obj), target.name

        def set_field(f: list[Any]) -> Any:
            r = obj(f)
            v = val(f)
            r.fields[name] = v
        return set_field
    if isinstance(target, hir.Index):
        obj, key, span = c.expr(target.obj), c.expr(target.index), target.span
        cap, budget = c.rt.cfg.max_len, c.rt.budget

        def set_item(f: list[Any]) -> Any:
            xs = obj(f)
            k = key(f)
            v = val(f)
            if type(xs) is dict:
                k = as_key(k, copy=True)
                if k not in xs and len(xs) >= cap:
                    budget.too_long(len(xs) + 1, "map", span)
                xs[k] = v
            elif 0 <= k < len(xs):
                xs[k] = v
            else:
                raise VoxFault("R0004", span, i=k, n=len(xs))
        return set_item
    ev = c.expr(target)
    return lambda f: (ev(f), None)[1]


# --------------------------------------------------------------------------- lambdas, actors


