"""Which names resolve inside a ```vox block being decoded, for the name mask
(:mod:`pipeline.decoding_names`): the prelude's names, the reserved words each position allows,
and :func:`declared_names`, every name a text declares anywhere, whatever its scope (what the
request check reads: is a requested item declared?). The names *in scope* at the end of an open
block come from the scan (:func:`pipeline.decoding_scan.visible_names`).
"""

from __future__ import annotations

import re
from typing import Final

from vox_lang.lexer import KEYWORDS
from vox_lang.prelude import BUILTIN_TYPES, BUILTINS, CONSTRUCTORS, STD, VIEW_ELEMENTS

#: names every program may use: prelude values, constructors, view elements, types, reserved words
#: (not ``children``: a user function takes children through a parameter of that name, spec §4;
#: not ``_``: it binds or matches, where words are free, and is never a value)
PRELUDE_NAMES: Final = frozenset(BUILTINS) | frozenset(CONSTRUCTORS) | frozenset(VIEW_ELEMENTS) \
    | frozenset(BUILTIN_TYPES) | frozenset(KEYWORDS) | frozenset({"is", "extern"})
#: reserved words that may start an expression (spec §2: unary ``not``, ``if``/``match``
#: expressions, literals, ``spawn(A)``, a lambda ``fn(...)``)
EXPRESSION_WORDS: Final = frozenset({"not", "if", "match", "true", "false", "spawn", "fn"})
#: ... and a statement inside a block (``else`` after a ``}`` line, L3); an actor's body holds
#: only ``on`` handlers (:data:`HANDLER_WORDS`)
BLOCK_WORDS: Final = EXPRESSION_WORDS | frozenset({"let", "ret", "while", "for", "break", "continue", "else"})
#: ... and an item or statement at top level, where ``ret`` (E0406: outside a function; 6 answers of
#: one constrained eval run wrote a ``ret`` after closing their function), ``break`` and
#: ``continue`` (outside a loop) never stand
TOP_WORDS: Final = (BLOCK_WORDS - {"ret", "break", "continue"}) \
    | frozenset({"type", "actor", "workflow", "activity", "pub", "async", "import", "routes", "extern"})
#: what starts a line in an actor's body (spec §2: ``actor = "actor" NAME "{" (NL / handler)* "}"``)
HANDLER_WORDS: Final = frozenset({"on"})
#: reserved words kept out of every use: where a word is a use, only the start words of its
#: position may be written, so ``activ`` cannot head for ``activity`` after ``and`` (the grammar
#: then allows only a longer NAME, and the mask would have no token left)
NOT_STARTERS: Final = frozenset(KEYWORDS) - EXPRESSION_WORDS
_DECLS: Final = (
    re.compile(r"\b(?:fn|workflow|activity|type|actor|on|let(?:\s+mut)?|for|as)\s+([A-Za-z_]\w*)"),
    re.compile(r"\bfor\s+[A-Za-z_]\w*\s*,\s*([A-Za-z_]\w*)"),
    re.compile(r"([A-Za-z_]\w*)\s*:(?!:)"),  # parameters and fields (fields over-approximate)
    re.compile(r"\|\s*([A-Za-z_]\w*)"),  # variants
    re.compile(r"\bimport\s+(?:[A-Za-z_]\w*\.)*([A-Za-z_]\w*)"),
    re.compile(r"([A-Za-z_]\w*)\s*->"),  # a binding arm
)
_GENERICS: Final = re.compile(r"\bfn\s+[A-Za-z_]\w*\s*<([^>]*)>")
_PATTERN_ARGS: Final = re.compile(r"\(([^()]*)\)\s*->")


def declared_names(code: str) -> set[str]:
    """Every name ``code`` declares (lexically, anywhere): items, variants, params, lets, loop
    variables, generics, pattern bindings, imports. Over-approximates real scopes."""
    names: set[str] = set()
    for pattern in _DECLS:
        names.update(pattern.findall(code))
    for group in _GENERICS.findall(code) + _PATTERN_ARGS.findall(code):
        names.update(re.findall(r"[A-Za-z_]\w*", group))
    return names


_STD_IMPORT: Final = re.compile(r"\bimport\s+std\b(?:\.(\w+))?")


def imported_std(code: str) -> set[str]:
    """``std`` members made visible by ``import std.fs`` (as ``fs``) or ``import std``."""
    return {member if member in STD else "std" for member in _STD_IMPORT.findall(code) if not member or member in STD}
