"""Print :mod:`vox_lang.syntax` nodes back as canonical one-line Vox source.

Canonical spelling: 2026 forms (``ret``, ``->`` arms, ``to`` arrows, ``type X = {``), single
spaces, ``, `` separators, parentheses only where precedence needs them. Blocks print on one
line, so a block (or actor, children block) with several statements has no one-line form
and raises ``ValueError``. Used by the round-trip fixture test and by generators that build
ASTs.
"""

from __future__ import annotations

from collections.abc import Iterable

from vox_lang import syntax as s
from vox_lang.parser_exprs import PRECEDENCE

_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t"}


def _str(value: str) -> str:
    return '"' + "".join(_ESCAPES.get(c, c) for c in value) + '"'


def _join(items: Iterable[object]) -> str:
    return ", ".join(unparse(i) for i in items)


def _block(stmts: tuple[object, ...]) -> str:
    if not stmts:
        return "{ }"
    if len(stmts) > 1:
        raise ValueError("a block of several statements has no one-line form")
    return "{ " + unparse(stmts[0]) + " }"


def _operand(e: s.Expr, parent: int, right: bool) -> str:
    text = unparse(e)
    if isinstance(e, s.Binary):
        prec = PRECEDENCE[e.op]
        if prec < parent or (right and prec == parent):
            return f"({text})"
    return text


def _ret(ret: s.TypeExpr | None) -> str:
    return f" to {unparse(ret)}" if ret is not None else ""


def _params(params: tuple[s.Param, ...]) -> str:
    return ", ".join(
        f"{p.name}: {unparse(p.type)}" + (f" = {unparse(p.default)}" if p.default is not None else "")
        for p in params
    )


def _decorators(decos: tuple[s.Decorator, ...]) -> str:
    out = []
    for d in decos:
        if d.string is not None:
            out.append(f"@{d.name} {unparse(d.string)} ")
        elif d.args is not None:
            out.append(f"@{d.name}({_join(d.args)}) ")
        elif d.opaque is not None:
            out.append(f"@{d.name}{d.opaque} ")
        elif d.kind is not None:
            out.append(f"@{d.name}(kind: {d.kind}) ")
        else:
            out.append(f"@{d.name} ")
    return "".join(out)


def _pattern(p: s.Pattern) -> str:
    if isinstance(p, s.WildcardPat):
        return "_"
    if isinstance(p, s.BindPat):
        return p.name
    if isinstance(p, s.LiteralPat):
        if p.kind == "str":
            return _str(str(p.value))
        if p.kind == "bool":
            return "true" if p.value else "false"
        return str(p.value)
    return p.name + (f"({', '.join(_pattern(a) for a in p.args)})" if p.has_parens else "")


def unparse(node: object) -> str:  # noqa: C901 - one branch per node kind
    """Canonical source of ``node`` (a module prints one item per line)."""
    n = node
    if isinstance(n, s.Module):
        return "\n".join(unparse(i) for i in n.items)
    if isinstance(n, s.StmtItem):
        return _decorators(n.decorators) + unparse(n.stmt)
    if isinstance(n, s.IntLit):
        return str(n.value)
    if isinstance(n, s.FloatLit):
        return n.text
    if isinstance(n, s.StrLit):
        return _str(n.value)
    if isinstance(n, s.BoolLit):
        return "true" if n.value else "false"
    if isinstance(n, s.UnitLit):
        return "()"
    if isinstance(n, s.Name):
        return n.name
    if isinstance(n, s.ListLit):
        return f"[{_join(n.elems)}]"
    if isinstance(n, s.RecordLit):
        if not n.fields:
            return "{}"
        fields = ", ".join(f"{_str(f.name) if f.quoted else f.name}: {unparse(f.value)}" for f in n.fields)
        return "{ " + fields + " }"
    if isinstance(n, s.Unary):
        operand = unparse(n.operand)
        if isinstance(n.operand, s.Binary):
            operand = f"({operand})"
        return f"not {operand}" if n.op == "not" else f"-{operand}"
    if isinstance(n, s.Binary):
        prec = PRECEDENCE[n.op]
        return f"{_operand(n.left, prec, False)} {n.op} {_operand(n.right, prec, True)}"
    if isinstance(n, s.Arg):
        return (f"{n.name}=" if n.name else "") + unparse(n.value)
    if isinstance(n, s.Call):
        kids = ""
        if n.children is not None:
            kids = " " + _block(n.children.items)
        return f"{_callee(n.callee)}({_join(n.args)}){kids}"
    if isinstance(n, s.Member):
        return f"{_callee(n.obj)}.{n.name}"
    if isinstance(n, s.Index):
        return f"{_callee(n.obj)}[{unparse(n.index)}]"
    if isinstance(n, s.Try):
        return f"{_callee(n.operand)}?"
    if isinstance(n, s.If):
        text = f"if {unparse(n.cond)} {unparse(n.then)}"
        return text + (f" else {unparse(n.else_)}" if n.else_ is not None else "")
    if isinstance(n, s.Match):
        arms = ", ".join(f"{_pattern(a.pattern)} -> {unparse(a.body)}" for a in n.arms)
        return f"match {unparse(n.scrutinee)} {{ {arms} }}"
    if isinstance(n, s.Lambda):
        return f"fn({_params(n.params)}){_ret(n.ret)} {unparse(n.body)}"
    if isinstance(n, s.Spawn):
        return f"spawn({n.actor})"
    if isinstance(n, s.Block):
        return _block(n.stmts)
    return _unparse_stmt_or_decl(n)


def _callee(e: s.Expr) -> str:
    text = unparse(e)
    return f"({text})" if isinstance(e, (s.Binary, s.Unary)) else text


def _unparse_stmt_or_decl(n: object) -> str:  # noqa: C901
    if isinstance(n, s.Let):
        ty = f": {unparse(n.type)}" if n.type is not None else ""
        return f"let {'mut ' if n.mutable else ''}{n.name}{ty} = {unparse(n.value)}"
    if isinstance(n, s.Ret):
        return "ret" + (f" {unparse(n.value)}" if n.value is not None else "")
    if isinstance(n, s.While):
        return f"while {unparse(n.cond)} {unparse(n.body)}"
    if isinstance(n, s.For):
        index = f", {n.index}" if n.index else ""
        return f"for {n.var}{index} in {unparse(n.iterable)} {unparse(n.body)}"
    if isinstance(n, s.Break):
        return "break"
    if isinstance(n, s.Continue):
        return "continue"
    if isinstance(n, s.Assign):
        return f"{unparse(n.target)} {n.op} {unparse(n.value)}"
    if isinstance(n, s.ExprStmt):
        return unparse(n.expr)
    if isinstance(n, s.NamedType):
        return n.name + (f"[{_join(n.args)}]" if n.args else "")
    if isinstance(n, s.FnType):
        return f"fn({_join(n.params)}){_ret(n.ret)}"
    if isinstance(n, s.RecordType):
        return "{ " + ", ".join(f"{f.name}: {unparse(f.type)}" for f in n.fields) + " }"
    if isinstance(n, s.FnDecl):
        mods = ("pub " if n.is_pub else "") + ("async " if n.is_async else "")
        gens = f"<{', '.join(n.generics)}>" if n.generics else ""
        head = f"{mods}{n.kind} {n.name}{gens}({_params(n.params)}){_ret(n.ret)}"
        if n.extern is not None:
            return f"{_decorators(n.decorators)}extern {head} = {_str(n.extern)}"
        return f"{_decorators(n.decorators)}{head} {unparse(n.body)}"
    if isinstance(n, s.TypeDecl):
        if isinstance(n.body, tuple):
            body = " ".join(
                f"| {v.name}" + (f"({', '.join(f'{f.name}: {unparse(f.type)}' for f in v.fields)})" if v.fields else "")
                for v in n.body
            )
        else:
            body = unparse(n.body)
        return f"{_decorators(n.decorators)}type {n.name} = {body}"
    if isinstance(n, s.ActorDecl):
        if len(n.handlers) > 1:
            raise ValueError("an actor with several handlers has no one-line form")
        inner = " ".join(
            f"on {h.name}({_params(h.params)}){_ret(h.ret)} {unparse(h.body)}" for h in n.handlers
        )
        return f"{_decorators(n.decorators)}actor {n.name} {{ {inner} }}" if inner else f"actor {n.name} {{ }}"
    if isinstance(n, s.RoutesDecl):
        routes = ", ".join(f"{_str(r.path)} to {r.target}" for r in n.routes)
        return f"{_decorators(n.decorators)}routes {{ {routes} }}"
    if isinstance(n, s.ComponentDecl):  # compat form (spec §10 U6); printed as written
        if n.stmts:
            raise ValueError("a component with statements has no one-line form")
        return f"{_decorators(n.decorators)}component {n.name}({_params(n.params)}) {{ view: {unparse(n.view)} }}"
    if isinstance(n, s.ImportDecl):
        alias = f" as {n.alias}" if n.alias else ""
        return f"{_decorators(n.decorators)}import {'.'.join(n.path)}{alias}"
    raise TypeError(f"cannot print {type(n).__name__}")
