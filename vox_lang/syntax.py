"""Frozen AST nodes built by the parser's visitor (the parse tree itself is never kept).

Every node carries ``span`` (code-point offsets); names that diagnostics point at carry a
separate ``*_span``. Shapes follow the grammar of ``vox-language.md`` §2; nothing here is
desugared (that is lowering's job, see :mod:`vox_lang.lower`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from vox_lang.source import Span

# --------------------------------------------------------------------------- types


@dataclass(frozen=True, slots=True)
class NamedType:
    """``NAME`` or ``NAME[T, ...]`` (e.g. ``int``, ``List[str]``, ``Result[T, E]``)."""

    name: str
    args: tuple[TypeExpr, ...]
    span: Span
    name_span: Span


@dataclass(frozen=True, slots=True)
class FnType:
    """``fn(A, B) to C``; ``ret`` is ``None`` when omitted (Unit)."""

    params: tuple[TypeExpr, ...]
    ret: TypeExpr | None
    span: Span


@dataclass(frozen=True, slots=True)
class FieldDecl:
    """``WORD: type`` inside a record type or a variant's parentheses."""

    name: str
    type: TypeExpr
    span: Span
    name_span: Span


@dataclass(frozen=True, slots=True)
class RecordType:
    """``{ a: int, b: str }`` used as a type."""

    fields: tuple[FieldDecl, ...]
    span: Span


TypeExpr = NamedType | FnType | RecordType

# --------------------------------------------------------------------------- patterns


@dataclass(frozen=True, slots=True)
class WildcardPat:
    """``_``."""

    span: Span


@dataclass(frozen=True, slots=True)
class LiteralPat:
    """Literal pattern: ``kind`` is ``"int" | "float" | "str" | "bool"``; ``value`` already negated."""

    value: int | float | str | bool
    kind: str
    span: Span


@dataclass(frozen=True, slots=True)
class BindPat:
    """Lowercase ``NAME``: binds the matched value."""

    name: str
    span: Span


@dataclass(frozen=True, slots=True)
class CtorPat:
    """Capitalised ``NAME`` or ``NAME(p, ...)``: constructor pattern (``None``, ``Some(x)``, user variants)."""

    name: str
    args: tuple[Pattern, ...]
    has_parens: bool
    span: Span
    name_span: Span


Pattern = WildcardPat | LiteralPat | BindPat | CtorPat

# --------------------------------------------------------------------------- expressions


@dataclass(frozen=True, slots=True)
class IntLit:
    value: int
    span: Span


@dataclass(frozen=True, slots=True)
class FloatLit:
    value: float
    text: str
    span: Span


@dataclass(frozen=True, slots=True)
class StrLit:
    """String literal; ``value`` has escapes decoded."""

    value: str
    span: Span


@dataclass(frozen=True, slots=True)
class BoolLit:
    value: bool
    span: Span


@dataclass(frozen=True, slots=True)
class UnitLit:
    """``()``, the Unit value (spec §9)."""

    span: Span


@dataclass(frozen=True, slots=True)
class Name:
    """A value name use (``x``, ``print``, ``Some``, ``fs``)."""

    name: str
    span: Span


@dataclass(frozen=True, slots=True)
class ListLit:
    elems: tuple[Expr, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class RecordField:
    """``key: value`` in a record literal; ``quoted`` when the key was a STRING."""

    name: str
    value: Expr
    quoted: bool
    span: Span
    name_span: Span


@dataclass(frozen=True, slots=True)
class RecordLit:
    """``{ a: 1, b: 2 }``; with no fields it is the empty map ``{}``."""

    fields: tuple[RecordField, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class Unary:
    """``op`` is ``"not"`` or ``"-"``; ``spelling`` keeps a retired source form (``"!"``)."""

    op: str
    operand: Expr
    span: Span
    op_span: Span


@dataclass(frozen=True, slots=True)
class Binary:
    """Binary operator including ``|>``; ``op`` is the 2026 spelling (``!=`` for ``isnt``)."""

    op: str
    left: Expr
    right: Expr
    span: Span
    op_span: Span


@dataclass(frozen=True, slots=True)
class Arg:
    """Call argument; ``name`` is set for ``name=expr``."""

    name: str | None
    value: Expr
    span: Span
    name_span: Span | None = None


@dataclass(frozen=True, slots=True)
class Children:
    """A view call's child block ``{ expr NL expr ... }``; ``span`` starts at ``{``."""

    items: tuple[Expr, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class Call:
    callee: Expr
    args: tuple[Arg, ...]
    children: Children | None
    span: Span


@dataclass(frozen=True, slots=True)
class Member:
    """``obj.name`` (field, method, module member or handler)."""

    obj: Expr
    name: str
    span: Span
    name_span: Span


@dataclass(frozen=True, slots=True)
class Index:
    obj: Expr
    index: Expr
    span: Span


@dataclass(frozen=True, slots=True)
class Try:
    """Postfix ``?``; ``q_span`` is the ``?`` itself (where E0516/E0517 point)."""

    operand: Expr
    span: Span
    q_span: Span


@dataclass(frozen=True, slots=True)
class If:
    """``if cond { } else ...``; ``else_`` is a Block, a nested If, or None."""

    cond: Expr
    then: Block
    else_: Block | If | None
    span: Span


@dataclass(frozen=True, slots=True)
class Arm:
    """``pattern -> body``; ``arrow`` is the source spelling (``->``, ``=>``, ``to``)."""

    pattern: Pattern
    arrow: str
    body: Expr | Block
    span: Span
    arrow_span: Span


@dataclass(frozen=True, slots=True)
class Match:
    scrutinee: Expr
    arms: tuple[Arm, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class Lambda:
    params: tuple[Param, ...]
    ret: TypeExpr | None
    body: Block
    span: Span


@dataclass(frozen=True, slots=True)
class Spawn:
    """``spawn(Actor)``; ``name_span`` is the name inside the parentheses (E0408)."""

    actor: str
    span: Span
    name_span: Span


Expr = Union[  # Union, not `|`: "Block" is a forward reference, which `|` cannot take at run time
    IntLit, FloatLit, StrLit, BoolLit, UnitLit, Name, ListLit, RecordLit, Unary, Binary,
    Call, Member, Index, Try, If, Match, Lambda, Spawn, "Block",
]

# --------------------------------------------------------------------------- statements


@dataclass(frozen=True, slots=True)
class Let:
    name: str
    mutable: bool
    type: TypeExpr | None
    value: Expr
    span: Span
    name_span: Span


@dataclass(frozen=True, slots=True)
class Ret:
    """``ret e`` / ``return e``; ``spelling`` is the keyword as written (W0001 on ``return``)."""

    value: Expr | None
    spelling: str
    span: Span
    kw_span: Span


@dataclass(frozen=True, slots=True)
class While:
    cond: Expr
    body: Block
    span: Span


@dataclass(frozen=True, slots=True)
class For:
    """``for var, index in iterable { }``."""

    var: str
    index: str | None
    iterable: Expr
    body: Block
    span: Span
    var_span: Span
    index_span: Span | None = None


@dataclass(frozen=True, slots=True)
class Break:
    span: Span


@dataclass(frozen=True, slots=True)
class Continue:
    span: Span


@dataclass(frozen=True, slots=True)
class Assign:
    """``place op value``; ``op`` is ``=``, ``+=``, ``-=``, ``*=`` or ``/=``; target is Name/Member/Index."""

    target: Expr
    op: str
    value: Expr
    span: Span
    op_span: Span


@dataclass(frozen=True, slots=True)
class ExprStmt:
    expr: Expr
    span: Span


Stmt = Let | Ret | While | For | Break | Continue | Assign | ExprStmt


@dataclass(frozen=True, slots=True)
class Block:
    """``{ stmt NL stmt ... }``."""

    stmts: tuple[Stmt, ...]
    span: Span


# --------------------------------------------------------------------------- declarations


@dataclass(frozen=True, slots=True)
class Decorator:
    """``@name``, ``@name "text"`` or ``@name(args)``; ``name`` is dotted (``mcp.tool``).

    ``kind`` is ``K`` of the form ``@name(kind: K)`` (spec §10 U3, with ``args`` ``None``);
    ``opaque`` is the source text of an unparsed argument run ``( … )`` (§10 U9).
    """

    name: str
    args: tuple[Arg, ...] | None
    string: StrLit | None
    span: Span
    kind: str | None = None
    opaque: str | None = None


@dataclass(frozen=True, slots=True)
class Param:
    name: str
    type: TypeExpr
    default: Expr | None
    span: Span
    name_span: Span


@dataclass(frozen=True, slots=True)
class FnDecl:
    """``pub? async? (fn|workflow|activity) name<G>(params) to T { }``; ``arrow`` is the return-arrow spelling."""

    kind: str
    name: str
    generics: tuple[str, ...]
    params: tuple[Param, ...]
    ret: TypeExpr | None
    body: Block
    is_pub: bool
    is_async: bool
    decorators: tuple[Decorator, ...]
    span: Span
    name_span: Span
    arrow: str | None = None
    generic_spans: tuple[Span, ...] = ()  # parallel to ``generics`` (E0402 on a repeated one)
    #: ``extern fn … = "module"`` (spec §10 U13): the module string; the body is empty
    extern: str | None = None


@dataclass(frozen=True, slots=True)
class Variant:
    name: str
    fields: tuple[FieldDecl, ...]
    span: Span
    name_span: Span


@dataclass(frozen=True, slots=True)
class TypeDecl:
    """``type Name = ...``: ``body`` is a tuple of variants (sum type), a RecordType or an alias type.

    ``has_eq`` is False for the compat form ``type Name { ... }`` (W0003).
    """

    name: str
    body: tuple[Variant, ...] | TypeExpr
    has_eq: bool
    decorators: tuple[Decorator, ...]
    span: Span
    name_span: Span


@dataclass(frozen=True, slots=True)
class Handler:
    name: str
    params: tuple[Param, ...]
    ret: TypeExpr | None
    body: Block
    span: Span
    name_span: Span


@dataclass(frozen=True, slots=True)
class ActorDecl:
    name: str
    handlers: tuple[Handler, ...]
    decorators: tuple[Decorator, ...]
    span: Span
    name_span: Span


@dataclass(frozen=True, slots=True)
class Route:
    path: str
    target: str
    span: Span
    path_span: Span
    target_span: Span


@dataclass(frozen=True, slots=True)
class RoutesDecl:
    routes: tuple[Route, ...]
    decorators: tuple[Decorator, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class ImportDecl:
    """``import a.b.c as d``; ``segment_spans`` parallel to ``path``."""

    path: tuple[str, ...]
    alias: str | None
    decorators: tuple[Decorator, ...]
    span: Span
    segment_spans: tuple[Span, ...]
    alias_span: Span | None = None


@dataclass(frozen=True, slots=True)
class ComponentDecl:
    """``component Name(params) { stmts  view: expr }`` (spec §10 U6, compat W0009).

    Lowering turns it into ``fn Name(params) to Element { stmts  ret view }``.
    """

    name: str
    params: tuple[Param, ...]
    stmts: tuple[Stmt, ...]
    view: Expr
    decorators: tuple[Decorator, ...]
    span: Span
    name_span: Span


Decl = FnDecl | TypeDecl | ActorDecl | RoutesDecl | ImportDecl | ComponentDecl


@dataclass(frozen=True, slots=True)
class StmtItem:
    """A top-level statement (script mode), with any decorators written before it (E0205/E0523)."""

    stmt: Stmt
    decorators: tuple[Decorator, ...]
    span: Span


Item = FnDecl | TypeDecl | ActorDecl | RoutesDecl | ImportDecl | ComponentDecl | StmtItem


@dataclass(frozen=True, slots=True)
class Module:
    """One ``.vox`` file: the items that parsed, in source order (items with errors are dropped)."""

    items: tuple[Item, ...]
    span: Span

    @property
    def is_script(self) -> bool:
        """True when the file has top-level statements (spec: a script)."""
        return any(isinstance(i, StmtItem) for i in self.items)
