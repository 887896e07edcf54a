"""Frozen HIR nodes (spec §3): names resolved to definition ids, sugar removed.

Lowering (:mod:`vox_lang.lower`) builds these: compat spellings are gone (``is`` is ``==``,
``return`` is ``ret``, ``list[T]`` is ``List[T]``, an arm ``-> ret e`` is ``-> { ret e }``,
``component`` is a ``fn``; spec §10), ``x op= e`` is
``x = x op e``, pipes are calls, a missing ``else`` is an empty block, a view call's child block
is the named argument ``children`` (a :class:`Children` node) and top-level statements are
:attr:`Module.script`. Every use of a name carries the id of its :class:`Def` in
:attr:`Module.defs`; a name that could not be resolved (already reported) becomes
:class:`ErrorExpr` / :class:`ErrType`, which the checker types as ``?``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from vox_lang.source import Span
from vox_lang.syntax import Decorator

# --------------------------------------------------------------------------- definitions

#: Def.kind values. Value namespace: builtin ctor view fn workflow activity variant let param
#: loopvar armvar import std_module std_fn; type namespace: prim record sum alias actor generic.
VALUE_KINDS = frozenset({
    "builtin", "ctor", "view", "fn", "workflow", "activity", "variant", "let", "param", "loopvar",
    "armvar", "import", "std_module", "std_fn",
})
TYPE_KINDS = frozenset({"prim", "record", "sum", "alias", "actor", "generic"})


@dataclass(frozen=True, slots=True)
class Def:
    """One definition.

    Attributes:
        id: index in :attr:`Module.defs`.
        kind: see :data:`VALUE_KINDS` / :data:`TYPE_KINDS`.
        name: the bound name.
        span: where it is defined (``None`` for the prelude).
        mutable: a ``let mut`` binding (assignable, spec §4).
        key: prelude/std lookup key (``"print"``, ``"std.fs.read"``, ``"List"``), else ``""``.
        top_level: a top-level ``let`` (module scope).
    """

    id: int
    kind: str
    name: str
    span: Span | None = None
    mutable: bool = False
    key: str = ""
    top_level: bool = False


# --------------------------------------------------------------------------- types


@dataclass(frozen=True, slots=True)
class NamedType:
    """A resolved type name with arguments (``List[int]``, ``Item``, ``T``)."""

    def_id: int
    name: str
    args: tuple[TypeRef, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class FnType:
    params: tuple[TypeRef, ...]
    ret: TypeRef | None
    span: Span


@dataclass(frozen=True, slots=True)
class FieldDecl:
    name: str
    type: TypeRef
    span: Span
    name_span: Span


@dataclass(frozen=True, slots=True)
class RecordType:
    fields: tuple[FieldDecl, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class ErrType:
    """A type that failed to resolve (E0403/E0409 already reported): checks as ``?``."""

    span: Span


TypeRef = NamedType | FnType | RecordType | ErrType

# --------------------------------------------------------------------------- patterns


@dataclass(frozen=True, slots=True)
class WildcardPat:
    span: Span


@dataclass(frozen=True, slots=True)
class LiteralPat:
    """``kind``: ``"int" | "float" | "str" | "bool"``."""

    value: int | float | str | bool
    kind: str
    span: Span


@dataclass(frozen=True, slots=True)
class BindPat:
    def_id: int
    name: str
    span: Span


@dataclass(frozen=True, slots=True)
class CtorPat:
    """A constructor pattern; ``def_id`` is ``None`` when unknown (E0407 reported)."""

    def_id: int | None
    name: str
    args: tuple[Pattern, ...]
    has_parens: bool
    span: Span
    name_span: Span


Pattern = WildcardPat | LiteralPat | BindPat | CtorPat

# --------------------------------------------------------------------------- expressions


@dataclass(frozen=True, slots=True)
class Lit:
    """A literal; ``kind`` is ``"int" | "float" | "str" | "bool" | "unit"``."""

    value: int | float | str | bool | None
    kind: str
    span: Span


@dataclass(frozen=True, slots=True)
class Ref:
    """A resolved value name (``name`` as written, or ``fs.read`` for std members)."""

    def_id: int
    name: str
    span: Span


@dataclass(frozen=True, slots=True)
class ErrorExpr:
    """An expression whose name failed to resolve (already reported); checks as ``?``."""

    span: Span


@dataclass(frozen=True, slots=True)
class ListLit:
    elems: tuple[Expr, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class RecordField:
    name: str
    value: Expr
    quoted: bool
    span: Span
    name_span: Span


@dataclass(frozen=True, slots=True)
class RecordLit:
    """A record literal, or the empty map ``{}`` when ``fields`` is empty."""

    fields: tuple[RecordField, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class Unary:
    op: str
    operand: Expr
    span: Span
    op_span: Span


@dataclass(frozen=True, slots=True)
class Binary:
    """A binary operator (never ``|>``: pipes are lowered to calls)."""

    op: str
    left: Expr
    right: Expr
    span: Span
    op_span: Span


@dataclass(frozen=True, slots=True)
class Arg:
    name: str | None
    value: Expr
    span: Span
    name_span: Span | None = None


@dataclass(frozen=True, slots=True)
class Children:
    """A view call's child block as the value of argument ``children`` (``List[Element]``).

    Each item is an ``Element``, a ``str`` (a text element) or a ``List[Element]`` (spliced).
    """

    items: tuple[Expr, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class Call:
    callee: Expr
    args: tuple[Arg, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class Member:
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
    operand: Expr
    span: Span
    q_span: Span


@dataclass(frozen=True, slots=True)
class If:
    """``else_`` is always present: a Block (empty when the source had none) or an If."""

    cond: Expr
    then: Block
    else_: Block | If
    span: Span


@dataclass(frozen=True, slots=True)
class Arm:
    pattern: Pattern
    body: Expr
    span: Span


@dataclass(frozen=True, slots=True)
class Match:
    scrutinee: Expr
    arms: tuple[Arm, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class Param:
    def_id: int
    name: str
    type: TypeRef
    default: Expr | None
    span: Span
    name_span: Span


@dataclass(frozen=True, slots=True)
class Lambda:
    params: tuple[Param, ...]
    ret: TypeRef | None
    body: Block
    span: Span


@dataclass(frozen=True, slots=True)
class Spawn:
    """``spawn(A)``; ``def_id`` is ``None`` when ``A`` is not an actor (E0408 reported)."""

    def_id: int | None
    actor: str
    span: Span
    name_span: Span


Expr = Union[  # Union, not `|`: "Block" is a forward reference, which `|` cannot take at run time
    Lit, Ref, ErrorExpr, ListLit, RecordLit, Unary, Binary, Call, Children, Member, Index, Try,
    If, Match, Lambda, Spawn, "Block",
]

# --------------------------------------------------------------------------- statements


@dataclass(frozen=True, slots=True)
class Let:
    """``def_id`` is ``None`` for ``let _ = e``."""

    def_id: int | None
    name: str
    mutable: bool
    type: TypeRef | None
    value: Expr
    span: Span
    name_span: Span


@dataclass(frozen=True, slots=True)
class Ret:
    value: Expr | None
    span: Span


@dataclass(frozen=True, slots=True)
class While:
    cond: Expr
    body: Block
    span: Span


@dataclass(frozen=True, slots=True)
class For:
    var_id: int | None
    index_id: int | None
    iterable: Expr
    body: Block
    span: Span
    var_span: Span


@dataclass(frozen=True, slots=True)
class Break:
    span: Span


@dataclass(frozen=True, slots=True)
class Continue:
    span: Span


@dataclass(frozen=True, slots=True)
class Assign:
    """``target = value`` (compound assignments already expanded)."""

    target: Expr
    value: Expr
    span: Span


@dataclass(frozen=True, slots=True)
class ExprStmt:
    expr: Expr
    span: Span


Stmt = Let | Ret | While | For | Break | Continue | Assign | ExprStmt


@dataclass(frozen=True, slots=True)
class Block:
    stmts: tuple[Stmt, ...]
    span: Span


# --------------------------------------------------------------------------- declarations


@dataclass(frozen=True, slots=True)
class Generic:
    def_id: int
    name: str


@dataclass(frozen=True, slots=True)
class FnDecl:
    """A ``fn``, ``workflow`` or ``activity`` (``kind``).

    Compat forms of spec §10 arrive here already canonical: a ``component`` is a ``fn``
    returning ``Element`` whose body ends in ``ret <view expr>``; ``@endpoint(kind: K)`` is
    gone (the function is simply public). ``extern`` is set for ``extern fn … = "module"``
    (U13): the module string; ``body`` is then empty and must not be run — an executor
    supplies the implementation or reports it as unavailable.
    """

    def_id: int
    kind: str
    name: str
    generics: tuple[Generic, ...]
    params: tuple[Param, ...]
    ret: TypeRef | None
    body: Block
    decorators: tuple[Decorator, ...]
    span: Span
    name_span: Span
    extern: str | None = None


@dataclass(frozen=True, slots=True)
class Variant:
    def_id: int
    name: str
    fields: tuple[FieldDecl, ...]
    span: Span
    name_span: Span


@dataclass(frozen=True, slots=True)
class TypeDecl:
    """``kind`` is ``"sum"`` (``variants``), ``"record"`` (``record``) or ``"alias"`` (``alias``)."""

    def_id: int
    name: str
    kind: str
    variants: tuple[Variant, ...]
    record: RecordType | None
    alias: TypeRef | None
    decorators: tuple[Decorator, ...]
    span: Span
    name_span: Span


@dataclass(frozen=True, slots=True)
class Handler:
    name: str
    params: tuple[Param, ...]
    ret: TypeRef | None
    body: Block
    span: Span
    name_span: Span


@dataclass(frozen=True, slots=True)
class ActorDecl:
    def_id: int
    name: str
    handlers: tuple[Handler, ...]
    decorators: tuple[Decorator, ...]
    span: Span
    name_span: Span


@dataclass(frozen=True, slots=True)
class Route:
    """``target_id`` is ``None`` when the target is undefined (E0401 reported)."""

    path: str
    target_id: int | None
    target: str
    span: Span
    target_span: Span


@dataclass(frozen=True, slots=True)
class RoutesDecl:
    routes: tuple[Route, ...]
    decorators: tuple[Decorator, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class ImportDecl:
    """``def_id`` binds the last segment or alias (``None`` if it could not be bound)."""

    def_id: int | None
    path: tuple[str, ...]
    decorators: tuple[Decorator, ...]
    span: Span


Decl = FnDecl | TypeDecl | ActorDecl | RoutesDecl | ImportDecl


@dataclass(frozen=True, slots=True)
class Module:
    """One lowered module.

    Attributes:
        decls: declarations in source order.
        script: top-level statements in order (the script body; empty for a library module).
        script_decorators: decorators written before top-level statements (E0523), with the
            statement's span.
        defs: every definition, indexed by id (prelude first).
    """

    decls: tuple[Decl, ...]
    script: tuple[Stmt, ...]
    script_decorators: tuple[Decorator, ...]
    defs: tuple[Def, ...]
    span: Span
