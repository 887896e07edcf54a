"""Types and values are separate namespaces: which one an identifier use stands in, for the name
mask (:mod:`pipeline.decoding_names`).

Spec §2 and §3: a type position (a parameter's, field's or ``let``'s annotation after ``:``, a
return type after ``to``, the right side of ``type T =``, a type argument inside ``[...]`` of a
type, a function type's ``fn(...)``) takes a type name; everything else a :data:`USE` of
:mod:`pipeline.decoding_position` stands in is an expression, which takes a value. A type name
in an expression is E0410 (``for v in bool``; a type name is never a value in Vox: a record
literal has no type prefix, an actor is named only in ``spawn(A)``), a value in a type E0403
(``type Shape = range``), and ``spawn`` takes an actor (E0408). In the completed blocks of one
constrained eval run of the default export (273 answers), these were the first error of 37 of
the 199 that failed: ``type Shape = range`` (14), ``"/about" to Element`` in ``routes`` (6),
``spawn(TopNav)`` (5), ``Some(bool)``, ``List[Error]``.

:func:`namespace` reads the logical line being written (:attr:`pipeline.decoding_scan.Scan.stmt_start`)
token by token, with a small stack for brackets, and says :data:`TYPE`, :data:`VALUE`,
:data:`ACTOR` (inside ``spawn(``), or ``None`` where it cannot tell. :func:`refused_names` turns
that into the words the mask refuses there:

- in a type: the prelude's values that are no types (``range``, ``print``, ``Some``, view
  elements), the expression words ``not if match true false spawn`` and the program's functions
  (``fn``/``workflow``/``activity``) and variants, unless the program also declares a type of
  that name;
- in a value: the prelude's types that are no functions (``bool List Map Set Option Result Unit
  Element FileRecord ProcessOutput Regex Match``; ``int``/``float``/``str`` are also conversions)
  and the program's types and actors, unless the program also declares a value of that name;
- in ``spawn(``: every name but the program's actors and the actors the request names; and
  where there is none of either, ``spawn`` itself in an expression.

The classification is lexical and errs towards ``None`` (nothing refused); the never-blocks tests
(every example, every pool program, layout-continued lines) hold it to valid programs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from pipeline.decoding_routes import route_refusals
from pipeline.decoding_scan import L1_FRAMES, TOKENS, scan
from vox_lang.prelude import BUILTIN_TYPES, BUILTINS, CONSTRUCTORS, VIEW_ELEMENTS

TYPE: Final = "type"
VALUE: Final = "value"
ACTOR: Final = "actor"

#: prelude types that are not also functions (``int``/``float``/``str`` convert, spec §5)
TYPE_ONLY: Final = frozenset(BUILTIN_TYPES) - frozenset(BUILTINS)
#: prelude values that are not types, and the reserved words that start only expressions
VALUE_ONLY: Final = (frozenset(BUILTINS) | frozenset(VIEW_ELEMENTS) | frozenset(CONSTRUCTORS)) \
    - frozenset(BUILTIN_TYPES) | frozenset({"not", "if", "match", "true", "false", "spawn"})
_HEADER_WORDS: Final = frozenset({"fn", "workflow", "activity", "on"})
_SKIP_FIRST: Final = frozenset({"pub", "async"})
_NAME: Final = re.compile(r"[A-Za-z_]\w*\Z")
_TYPE_LINE: Final = re.compile(r"[ \t]*(?:pub[ \t]+)?type\b")


@dataclass(frozen=True)
class Declared:
    """What a block declares so far, by namespace: ``types`` (``type T``), ``actors``
    (``actor A``) and ``values`` (functions, workflows, activities and variants); ``functions``
    are the values that are functions (a variant without fields is not)."""

    types: frozenset[str] = frozenset()
    actors: frozenset[str] = frozenset()
    values: frozenset[str] = frozenset()
    functions: frozenset[str] = frozenset()


#: the words after which a name is declared (:func:`_declared_from`)
_DECLARING_WORDS: Final = frozenset({"type", "actor", "fn", "workflow", "activity", "|"})


def _declared_from(code: str, start: int, base: Declared, prev: str) -> tuple[Declared, str]:
    """:class:`Declared` of ``code`` given ``base``, what ``code[:start]`` declares, and ``prev``,
    its last significant token (``start`` a line start); returns the last token too."""
    types: list[str] = []
    actors: list[str] = []
    values: list[str] = []
    functions: list[str] = []
    for tok in TOKENS.findall(code, start):
        if tok == "\n" or tok.startswith(("//", '"')):
            continue
        if prev in _DECLARING_WORDS and _NAME.match(tok):
            if prev == "type":
                types.append(tok)
            elif prev == "actor":
                actors.append(tok)
            else:  # `|` before a name starts a variant only
                values.append(tok)
                if prev != "|":
                    functions.append(tok)
        prev = tok
    if not (types or actors or values):
        return base, prev  # most lines declare nothing: no new sets
    return Declared(base.types.union(types), base.actors.union(actors), base.values.union(values),
                    base.functions.union(functions)), prev


@lru_cache(maxsize=512)
def _declared_lines(prefix: str) -> tuple[Declared, str]:
    """:func:`_declared_from` of ``prefix`` (whole lines: ``""`` or ending in a newline), line by
    line, each line's result cached: while a block is decoded, only its last line is re-read."""
    if not prefix:
        return Declared(), ""
    cut = prefix.rfind("\n", 0, len(prefix) - 1) + 1
    return _declared_from(prefix, cut, *_declared_lines(prefix[:cut]))


@lru_cache(maxsize=64)  # one text is read several times per step (both namespaces, the suffix rule)
def declared(code: str) -> Declared:
    """The items and variants ``code`` declares, strings and comments skipped (a name after
    ``type``/``actor``/``fn``/``workflow``/``activity`` or after a variant's ``|``; ``|>`` is a
    token of its own). Finished lines come from a line cache; the last line is re-read."""
    cut = code.rfind("\n") + 1
    return _declared_from(code, cut, *_declared_lines(code[:cut]))[0]


class _Ctx:
    """One bracket of the logical line: ``kind`` is ``line`` (the line itself), ``params`` (a
    declaration's parentheses), ``fields`` (a record type's braces), ``type`` (a type's ``[...]``
    or ``fn(...)``) or ``expr``; ``in_type``: the word here would be a type."""

    __slots__ = ("after_params", "in_type", "kind")

    def __init__(self, kind: str, in_type: bool = False) -> None:
        self.kind, self.in_type, self.after_params = kind, in_type, False


def _line_kind(tokens: list[str]) -> str:
    words = [t for t in tokens if t not in _SKIP_FIRST][:2]
    first = words[0] if words else ""
    if first in _HEADER_WORDS and len(words) > 1 and _NAME.match(words[1]) or first == "extern":
        return "header"
    if first in ("type", "let"):
        return first
    return "route" if first.startswith('"') else "stmt"


def namespace(code: str) -> str | None:
    """:data:`TYPE`, :data:`VALUE` or :data:`ACTOR` for an identifier starting at the end of
    ``code`` (an open block, the word being written already cut off), or ``None`` when this lexical
    reading cannot tell. Only meaningful where :func:`pipeline.decoding_position.position` says the
    word is a use."""
    state = scan(code)
    start = state.stmt_start
    # the bracket the logical line stands in (a `(` or `[` whose line breaks L1 drops is part of the line)
    inner = next((f for f in reversed(state.stack) if f.kind not in L1_FRAMES), None)
    tokens = [t for t in TOKENS.findall(code, start) if t != "\n" and not t.startswith(("//", "@"))]
    stack = [_Ctx("line")]
    kind = _line_kind(tokens)
    if inner is not None and inner.kind in ("record", "brace") and start >= inner.arm \
            and _TYPE_LINE.match(code, code.rfind("\n", 0, inner.arm) + 1):
        stack, kind = [_Ctx("fields")], "fields"  # a field line of a record type (`type P = {` above)
    prev = before = ""
    for tok in tokens:
        ctx = stack[-1]
        if tok == "(":
            if ctx.in_type:
                stack.append(_Ctx("type" if prev == "fn" else "expr", prev == "fn"))
            elif prev == "spawn":
                stack.append(_Ctx("actor"))
            elif prev == "fn" or kind == "header" and (before in _HEADER_WORDS or prev == ">") and ctx.kind == "line" \
                    or kind == "type" and before == "|":
                stack.append(_Ctx("params"))
            else:
                stack.append(_Ctx("expr"))
        elif tok == "[":
            stack.append(_Ctx("type", True) if ctx.in_type else _Ctx("expr"))
        elif tok == "{":
            fields = kind == "type" and ctx.kind == "line" and (prev == "=" or before == "type")
            stack.append(_Ctx("fields") if fields else _Ctx("expr"))
        elif tok in (")", "]", "}"):
            if len(stack) > 1:
                done = stack.pop()
                stack[-1].after_params = done.kind == "params"
                continue
        elif tok == ":":
            if ctx.kind in ("params", "fields") or ctx.kind == "line" and kind == "let":
                ctx.in_type = True
        elif tok == ",":
            if ctx.kind in ("params", "fields"):
                ctx.in_type = False
        elif tok == "=":
            ctx.in_type = ctx.kind == "line" and kind == "type"
        elif tok == "to":
            if ctx.in_type or ctx.after_params or ctx.kind == "line" and kind == "header":
                ctx.in_type = True
            elif ctx.kind == "line" and kind == "route":
                ctx.in_type = False
            else:
                return None  # a `to` this reading does not place
        elif tok in ("|", "->"):
            ctx.in_type = False
        ctx.after_params = False
        before, prev = prev, tok
    ctx = stack[-1]
    if ctx.kind == "actor":
        return ACTOR
    if ctx.in_type:
        return TYPE
    if ctx.kind in ("params", "fields") or ctx.kind == "line" and kind in ("type", "header"):
        return None  # a parameter, field or variant being declared, or a header's tail
    return VALUE


def refused_names(space: str | None, code: str, names: frozenset[str], actors: frozenset[str]) -> frozenset[str]:
    """The words a use in namespace ``space`` (:func:`namespace`) may not be, for the block
    ``code`` (see the module docstring); ``names``: every name the mask would otherwise allow
    there (needed for :data:`ACTOR`, where all but actors are refused); ``actors``: the actors
    the request names (one may be spawned before it is declared). Where no actor is declared or
    requested, ``spawn`` itself is refused in an expression (it could take nothing: E0408)."""
    if space is None:
        return frozenset()
    have = declared(code)
    if space == TYPE:
        return (VALUE_ONLY | have.values) - have.types - have.actors
    if space == VALUE:
        idle = frozenset() if have.actors or actors else frozenset({"spawn"})
        return (TYPE_ONLY | have.types | have.actors | idle) - have.values
    return names - have.actors - actors


def parameters_so_far(head: str) -> frozenset[str]:
    """The parameters already written in the declaration parentheses (``fn f(``, ``on h(``, a
    variant's ``| V(``, a lambda's ``fn(``) that the end of ``head`` stands in, when a parameter's
    name starts there (right after the ``(`` or a ``,``); else nothing. A second parameter of
    the same name is E0402 (``fn greet(n: str, n: int)``: the first error of 9 of the 199 completed
    blocks that failed in one constrained eval run of the default export)."""
    state = scan(head)
    if not state.stack or state.stack[-1].kind != "decl" or state.prev not in ("(", ","):
        return frozenset()
    tokens = [t for t in TOKENS.findall(head, state.stack[-1].arm) if t != "\n" and not t.startswith("//")]
    names: set[str] = set()
    depth = 0
    for i, tok in enumerate(tokens[:-1]):
        if tok in ("(", "[", "{"):
            depth += 1
        elif tok in (")", "]", "}"):
            depth -= 1
        elif depth == 0 and tokens[i + 1] == ":" and _NAME.match(tok):
            names.add(tok)
    return frozenset(names)


def namespace_refusals(code: str, partial: str, cont_use: bool, fresh_use: bool, names: frozenset[str],
                       actors: frozenset[str]) -> tuple[frozenset[str], frozenset[str]]:
    """``(refused, fresh_refused)``: the words :func:`refused_names` refuses for the word being
    written at the end of ``code`` (``partial`` so far) and for one started after whitespace,
    where :func:`pipeline.decoding_position.position` says each is a use (``cont_use``,
    ``fresh_use``); ``actors``: the actors the request names. A route's target refuses what
    :func:`pipeline.decoding_routes.route_refusals` does too."""
    none: frozenset[str] = frozenset()
    head = code[:len(code) - len(partial)]
    cont = refused_names(namespace(head), code, names, actors) | route_refusals(head) if cont_use else none
    if not fresh_use:
        return cont, none
    if not partial and code[-1:] in (" ", "\t"):
        return cont, cont if cont_use else refused_names(namespace(code), code, names, actors) | route_refusals(code)
    return cont, refused_names(namespace(code + " "), code, names, actors) | route_refusals(code + " ")
