"""Type-argument counts in type positions, for the name mask (:mod:`pipeline.decoding_names`).

E0409 ("`T` takes n type argument(s), found m"). Spec §4: ``List[T] Option[T] Set[T]`` take one
type argument, ``Map[K, V]`` two, ``Result[T]``/``Result[T, E]`` one or two
(:data:`vox_lang.types.BUILTIN_ARITY`); every other type takes none (``int float str bool Unit
Element``, the prelude's ``FileRecord ProcessOutput Regex Match``, and the program's records, sum
types, aliases and actors: only functions are generic). Spec §2: ``type = NAME ("[" type (","
type)* "]")?``, so no empty ``[]`` and no trailing ``,``. The tiny model wrote ``Map[str]``,
``ProcessOutput[int]``, ``List[int, str]`` and a bare ``Map`` in completed blocks.

Where :func:`pipeline.decoding_namespace.namespace` reads a type position (a parameter's,
field's or ``let``'s annotation, a return type after ``to``, the right side of ``type T =``, a
type argument), :func:`arity_rule` says what the next token may not write:

- ``[`` after a type name that takes none (``int[``, ``ProcessOutput[``, ``User[``);
- anything but ``[`` or blanks right after ``List Option Set Map Result`` (``Map]``,
  ``x: List =``, ``to Map {``, ``Map,``, a line break);
- ``]`` before the fewest arguments (``Map[str]``, ``List[]``) and ``,`` after the most
  (``List[int,``, ``Map[str, int,``, ``Result[int, str,``) of the innermost ``[`` of a built-in;
  in one token that closes the innermost ``[`` (``],``, ``]]``), the same for the ``[`` around
  it (``List[Set[str],`` is ``List`` with two arguments).

A line break counts as a blank inside ``(``/``[`` only (spec §1 L1), where ``Map`` + newline +
``[str, int]`` is valid. A token is judged where its type name ends in it (``p]`` after ``Ma``
ends ``Map`` with ``]``). A program that declares a type of a built-in's name turns the rule off.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from pipeline.decoding_namespace import TYPE, declared, namespace
from pipeline.decoding_scan import IDENT_CHARS, L1_FRAMES, TOKENS, scan
from pipeline.decoding_tokens import TokenTable
from vox_lang.prelude import BUILTIN_TYPES
from vox_lang.types import BUILTIN_ARITY

#: the built-in types that take type arguments: name -> (fewest, most)
GENERIC: Final = {name: span for name, span in BUILTIN_ARITY.items() if span[1] > 0}
_BUILTIN_TYPES: Final = frozenset(BUILTIN_TYPES)
#: what a logical line holds before a type position (an annotation's ``:``, a return type's
#: ``to``, a ``type`` item): :func:`pipeline.decoding_namespace.namespace` reads none without
_TYPE_HINT: Final = re.compile(r":|\bto\b|\btype\b")
#: what stands right before a type name (spec §2 ``param``, ``field``, ``let``, ``ret_ty``,
#: ``typedecl``, ``type``), besides the word ``to``
_BEFORE_TYPE: Final = frozenset(":=[,(")
#: what stands right before a return type's `to` (`) to`, `)to`)
_BEFORE_TO: Final = frozenset(" \t\n)")
_SHAPE: Final = re.compile(r"([ \t\r\n]*)([A-Za-z0-9_]*)(.*)\Z", re.S)
#: what comes first after blanks (:func:`_shapes`): nothing, ``[``, ``]``, ``,``, anything else
_END, _OPEN, _CLOSE, _COMMA, _OTHER = range(5)


@dataclass(frozen=True)
class ArityRule:
    """What the next token may not write in a type position (see the module docstring).

    ``mode``: ``word`` (a word is glued at the end: ``word`` is it when it is a prefix of a
    :data:`GENERIC` type, else ``*``), ``after`` (blanks after a type name: ``word`` is ``G``
    for a :data:`GENERIC` one, else ``*``) or ``arg`` (a type argument starts after ``[``/``,``).
    ``l1``: newlines are blanks (inside ``(``/``[``). ``close``: no ``]`` right after the
    current argument (too few); ``close_empty``: none while it is empty; ``comma``: no ``,``
    after it (too many); ``outer_close``/``outer_comma``: the same for the built-in's ``[``
    around the innermost one, after a ``]`` that closes the innermost (``],`` ``]]``)."""

    mode: str
    word: str
    l1: bool
    close: bool = False
    close_empty: bool = False
    comma: bool = False
    outer_close: bool = False
    outer_comma: bool = False


def _bracket(code: str, start: int) -> tuple[str, int, tuple[str, int] | None] | None:
    """The innermost open bracket of the logical line ``code[start:]`` when it is a ``[``: the
    word before it, its commas at depth 0, and the same of the bracket around it when that is a
    ``[`` too (else ``None``)."""
    stack: list[list[Any]] = []
    prev = ""
    for tok in TOKENS.findall(code, start):
        if tok == "\n" or tok.startswith("//"):
            continue
        if tok in ("(", "[", "{"):
            stack.append([tok, 0, prev])
        elif tok in (")", "]", "}"):
            if stack:
                stack.pop()
        elif stack and tok == ",":
            stack[-1][1] += 1
        prev = tok
    if not stack or stack[-1][0] != "[":
        return None
    outer = (stack[-2][2], stack[-2][1]) if len(stack) > 1 and stack[-2][0] == "[" else None
    return stack[-1][2], stack[-1][1], outer


def arity_rule(code: str, partial: str) -> ArityRule | None:
    """The :class:`ArityRule` for the end of ``code`` (an open block outside strings and
    comments; ``partial``: the identifier characters ending it), or ``None`` outside a type
    position (most steps: a look at the logical line)."""
    state = scan(code[:len(code) - len(partial)])  # the scan the position of the word already made (cached)
    if not _TYPE_HINT.search(code, state.stmt_start):
        return None  # namespace() reads a type only after one of these on the logical line
    l1 = bool(state.stack) and state.stack[-1].kind in L1_FRAMES
    if partial:
        if partial[0].isdigit():
            return None
        where, mode = code[:len(code) - len(partial)], "word"
        word = partial if any(g.startswith(partial) for g in GENERIC) else "*"
    else:
        bare = code.rstrip(" \t\r\n" if l1 else " \t")
        if "//" in bare[bare.rfind("\n") + 1:]:
            return None
        if bare[-1:] in ("[", ","):
            where, mode, word = code, "arg", ""
        elif bare[-1:] and bare[-1] in IDENT_CHARS and bare != code:
            name = bare[len(bare.rstrip(IDENT_CHARS)):]
            if name[0].isdigit():
                return None
            where, mode, word = bare[:len(bare) - len(name)], "after", "G" if name in GENERIC else "*"
        else:
            return None
    before = where.rstrip(" \t\r\n")
    if before[-1:] not in _BEFORE_TYPE and not (before.endswith("to") and before[-3:-2] in _BEFORE_TO):
        return None  # no type starts here (spec §2: after `:` `to` `=` `[` `,` `(`): no need to read it
    if namespace(where) != TYPE or _BUILTIN_TYPES & declared(code).types:
        return None
    inner = _bracket(code, state.stmt_start)
    if inner is None or inner[0] not in GENERIC:
        return ArityRule(mode, word, l1)
    lo, hi = GENERIC[inner[0]]
    commas = inner[1]
    outer_close = outer_comma = False
    if inner[2] is not None and inner[2][0] in GENERIC:  # the `[` around it: `List[Set[str]` + `],`
        (outer_lo, outer_hi), outer_commas = GENERIC[inner[2][0]], inner[2][1]
        outer_close, outer_comma = outer_commas + 1 < outer_lo, outer_commas + 1 >= outer_hi
    return ArityRule(mode, word, l1, close=commas + 1 < lo, close_empty=commas < lo, comma=commas + 1 >= hi,
                     outer_close=outer_close, outer_comma=outer_comma)


def _first(text: str, l1: bool) -> int:
    rest = text.lstrip(" \t\r\n" if l1 else " \t")
    return _END if not rest else {"[": _OPEN, "]": _CLOSE, ",": _COMMA}.get(rest[0], _OTHER)


def _then(text: str) -> int:
    """What comes first (newlines as blanks: inside ``[``) after a ``]`` that starts ``text``
    after blanks; :data:`_END` when ``text`` starts otherwise."""
    rest = text.lstrip(" \t\r\n")
    return _first(rest[1:], True) if rest.startswith("]") else _END


def _shapes(table: TokenTable) -> dict[str, Any]:
    """Per token (numpy arrays, once per table): ``blank`` (whitespace first), ``ident``
    (identifier characters after it), ``alpha`` (they start with no digit), and what comes
    first after blanks in the whole text (``text0``/``text1``: without/with newlines as blanks)
    and in the rest after the identifier (``rest0``/``rest1``); what comes after a ``]`` that
    starts the text or the rest (``then``/``rthen``, :func:`_then`)."""

    def build() -> dict[str, Any]:
        rows = []
        for text in table.texts:
            m = _SHAPE.match(text)
            blank, ident, rest = (m.group(1), m.group(2), m.group(3)) if m else ("", "", text)
            rows.append((bool(blank), bool(ident), ident[:1].isalpha() or ident[:1] == "_",
                         _first(text, False), _first(text, True), _first(rest, False), _first(rest, True),
                         _then(text), _then(rest)))
        cols = list(zip(*rows)) if rows else [()] * 9
        names = ("blank", "ident", "alpha", "text0", "text1", "rest0", "rest1", "then", "rthen")
        return {n: np.asarray(c, dtype=np.bool_ if i < 3 else np.int8) for i, (n, c) in enumerate(zip(names, cols))}

    return table.cached(("arity", "shapes"), build)


def _ok(rule: ArityRule, generic: bool, first: Any, then: Any) -> Any:
    """Bool array: may a type name (a :data:`GENERIC` one: ``generic``) be followed by what
    starts with ``first`` and, after a ``]`` there, ``then`` (codes of :func:`_shapes`)?"""
    if generic:
        return (first == _END) | (first == _OPEN)
    bad = first == _OPEN
    if rule.close:
        bad |= first == _CLOSE
    if rule.comma:
        bad |= first == _COMMA
    if rule.outer_close:
        bad |= (first == _CLOSE) & (then == _CLOSE)
    if rule.outer_comma:
        bad |= (first == _CLOSE) & (then == _COMMA)
    return ~bad


def arity_mask(table: TokenTable, rule: ArityRule, width: int) -> Any:
    """Bool mask ``[width]`` of the tokens :func:`arity_rule`'s ``rule`` allows (cached in the
    table per rule and width)."""

    def build() -> Any:
        s = _shapes(table)
        text, rest = (s["text1"], s["rest1"]) if rule.l1 else (s["text0"], s["rest0"])
        size = len(table.texts)
        if rule.mode == "word":
            glued = ~s["blank"] & s["ident"]  # the word goes on: judged where it ends in the token
            ok = np.where(glued, _ok(rule, False, rest, s["rthen"]), _ok(rule, rule.word in GENERIC, text, s["then"]))
            if rule.word != "*":  # the tokens that end the word as a built-in generic type
                ends = [i for g in GENERIC if g.startswith(rule.word) and g != rule.word
                        for i in table.lead_ends.get(g[len(rule.word):], ())]
                ok[ends] = _ok(rule, True, rest[ends], None)
        elif rule.mode == "after":
            ok = _ok(rule, rule.word == "G", text, s["then"])
        else:  # a type argument begins: judged where its name ends in the token
            named = s["ident"] & s["alpha"]
            ok = np.where(named, _ok(rule, False, rest, s["rthen"]),
                          s["ident"] | (text != _CLOSE) | (not rule.close_empty))
            ends = [i for g in GENERIC for i in (*table.lead_ends.get(g, ()), *table.ws_lead_ends.get(g, ()))]
            ok[ends] = _ok(rule, True, rest[ends], None)
        mask = np.ones(max(width, size), dtype=np.bool_)
        mask[:size] = ok
        return mask[:width]

    key = (f"{rule.mode}:{rule.word}:{rule.l1:d}{rule.close:d}{rule.close_empty:d}{rule.comma:d}"
           f"{rule.outer_close:d}{rule.outer_comma:d}:{width}")
    return table.cached(("arity", key), build)
