"""Items declared by Vox code pasted into a request that asks for it to be fixed.

"Fix this Vox code: fn double(x: int) -> int { return x * 2 }" names no item in backticks
(:func:`vox_lang.requests.extract_request` finds nothing), yet an answer that declares no
``double`` does not answer it: a new-user trial got an unrelated function and
``vox-script-verify: PASS``. :func:`asked_items` adds, to what the backticks name, the items the
pasted code declares when the request asks for a fix (:data:`FIX_WORDS`: fix, repair, debug, correct, "does not
compile", a compile error or an error code; not "an error" alone, which a function may return).
Names in the pasted code's strings and comments, reserved words and prelude names never count.
A request to rename or restructure the code ("rename `double` to
`twice`") is left to its backticks.

The pasted code is read lexically (it may hold retired forms or syntax errors, which is why the
user asks), one row of :data:`FORMS` per item-declaring form of the spec, whatever modifiers
(``pub``, ``async``, ``extern``) or decorators come before it: functions, workflows and activities
(§2; generics written ``<T>`` or, a common slip, ``[T]``), ``component`` declarations (§10 U6),
``type`` declarations with ``=`` (records, sum types, aliases), without it (``type T { ... }``,
W0003) or as a retired colon block (``type T:``, E0301), and actors (``actor A {`` or ``actor A:``).
Backticked spans count like the rest of the text.

A pasted function, workflow or activity keeps its **parameters and return type** as its required
signature (:func:`pasted_signature`; a retired ``->`` reads as ``to``) where they are plain Vox:
each part written with builtin types and types the pasted code itself declares. A second trial
got ``fn total(name: str, value: str) to Element`` as the "fix" of ``fn total(xs: List[int]) ->
int`` and PASS. Parameter names may change (:attr:`RequestedItem.renamable`). A part the fix
may have to change stays open: a parameter list or a return type
that names an unknown type (``Int``, ``list[int]``), does not parse, or is absent (no ``to T``:
the parameters alone are fixed, as for a backticked signature without one). Generic items
(``<T>``) and types and actors stay by name. :func:`asked_items` is cached by text, since
one request reads its text several times (the constraint mode, the request the masks read, each
name mask built). This module imports only from vox_lang.
"""

from __future__ import annotations

import functools
import re
from typing import Final

from vox_lang import syntax
from vox_lang.prelude import BUILTIN_TYPES
from vox_lang.requests import NOT_NAMES, RequestedItem, RequestSpec, extract_request
from vox_lang.signatures import fn_signature, parse_item

#: words that ask for pasted code to be fixed
FIX_WORDS: Final = re.compile(
    r"\b(?:fix(?:es|ed|ing)?|repair|debug|correct|broken|failing|compile errors?|error\s*\[?E\d{4}|"
    r"(?:does\s*n[o'’]?t|won[’']?t|will\s+not|can[’']?t|cannot)\s+compile)\b", re.IGNORECASE)
#: string literals and ``//`` comments of the pasted code: the names in them declare nothing
_TEXT: Final = re.compile(r'"(?:[^"\\\n]|\\.)*"?|//[^\n]*')
#: generics after a declared name: ``<T, U>`` (§2) or ``[T]`` (not Vox, but what users paste)
_GENERICS: Final = r"(?:<[^<>=\n]*>|\[[^\[\]=\n]*\])\s*"
#: a colon ending the line: the retired colon block (E0301, §2), still a declaration to keep
_COLON_BLOCK: Final = r":[ \t]*$"
#: one row per item-declaring form (spec §2, §10): the kind of item it declares, then the pattern
#: after the keyword and the name (``NAME``) that makes it a declaration rather than a use
FORMS: Final[tuple[tuple[str, str, str], ...]] = (
    ("function", "fn", r"[(<\[]"),  # fn f(, fn f<T>(, fn f[T](; pub/async/extern fn, decorated
    ("workflow", "workflow", r"[(<\[]"),
    ("activity", "activity", r"[(<\[]"),
    ("function", "component", r"[({]"),  # §10 U6, lowers to a fn; `{`: an upstream one with state
    ("type", "type", f"(?:{_GENERICS})?(?:=|\\{{|{_COLON_BLOCK})"),  # `=`: record/sum/alias; `{`: W0003
    ("actor", "actor", f"(?:\\{{|{_COLON_BLOCK})"),
)
#: the rows as one pattern, one named group per row: the keyword must start a word (not ``x.fn``,
#: ``my_fn`` or the retired decorator ``@component``)
_DECLARED: Final = re.compile(
    "|".join(rf"(?<![\w.@]){kw}\s+(?P<n{i}>[A-Za-z_]\w*)\s*{after}" for i, (_, kw, after) in enumerate(FORMS)),
    re.MULTILINE)


#: a parameter list's end and what may follow it before the body: ``to T`` or ``-> T`` (retired)
_RETURN: Final = re.compile(r"\s*(?:(?:to|->)\s+(?P<ret>[^{}\n]+?))?\s*(?:\{|$)", re.MULTILINE)
_TYPE_WORD: Final = re.compile(r"[A-Za-z_]\w*")
#: the item keywords whose pasted parameters and return type are kept
_SIGNED: Final = frozenset({"fn", "workflow", "activity"})


def pasted_items(text: str) -> tuple[RequestedItem, ...]:
    """The items the code in ``text`` declares (see the module docstring), in order, functions
    with the signature :func:`pasted_signature` reads; empty when ``text`` asks for no fix.
    Never raises."""
    if not FIX_WORDS.search(text):
        return ()
    code = _TEXT.sub(" ", text)
    found: list[tuple[str, str, int]] = []  # (kind, name, offset after the name's match)
    seen: set[str] = set(NOT_NAMES)  # reserved words and prelude names: no program declares them
    for m in _DECLARED.finditer(code):
        row = next(i for i in range(len(FORMS)) if m.group(f"n{i}") is not None)
        kind, name = FORMS[row][0], m.group(f"n{row}")
        if name not in seen:
            seen.add(name)
            found.append((kind, name, m.end(f"n{row}") if FORMS[row][1] in _SIGNED else -1))
    types = frozenset(BUILTIN_TYPES) | {name for kind, name, _ in found if kind == "type"}
    out = []
    for kind, name, at in found:
        signature = pasted_signature(code, at, types) if at >= 0 else None
        out.append(RequestedItem(kind, name, signature, renamable=signature is not None))
    return tuple(out)


def pasted_signature(code: str, at: int, types: frozenset[str]) -> str | None:
    """The canonical signature (:func:`vox_lang.signatures.fn_signature`) of the function whose
    name ends at offset ``at`` of ``code`` (pasted code, strings and comments blanked), as far as
    it is plain Vox with the type names ``types``: the parameters and, when given and plain, the
    return type; ``None`` when the parameters are not (or the item is generic). Never raises."""
    rest = code[at:].lstrip()
    if not rest.startswith("("):
        return None  # generics (`<T>`, `[T]`) or a component: by name
    depth, end = 0, -1
    for i, ch in enumerate(rest):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0:
            end = i
            break
    if end < 0:
        return None  # unclosed
    params = rest[:end + 1]
    tail = _RETURN.match(rest, end + 1)
    ret = tail.group("ret").strip() if tail is not None and tail.group("ret") else None
    item = parse_item(f"fn pasted{params} {{ }}")
    if not isinstance(item, syntax.FnDecl) or not _plain(params, item, types):
        return None
    if ret is not None:
        typed = parse_item(f"fn pasted{params} to {ret} {{ }}")
        if isinstance(typed, syntax.FnDecl) and set(_TYPE_WORD.findall(ret)) <= types:
            return fn_signature(typed.params, typed.ret)
    return fn_signature(item.params, None, ret_given=False)


def _plain(params: str, item: syntax.FnDecl, types: frozenset[str]) -> bool:
    """Whether every word of the parameters' types is a known type (parameter names aside)."""
    names = {p.name for p in item.params}
    words = set(_TYPE_WORD.findall(params)) - names - {"fn", "to"}
    return words <= types


#: request texts whose :func:`asked_items` are kept (least recently used dropped first): enough
#: for every user message of a long ``vox chat`` conversation, which each request scans from the
#: last, while a long-running server holds at most this many texts
ASKED_CACHE_SIZE: Final = 64


def asked_items(text: str) -> RequestSpec:
    """What an answer to ``text`` must declare: :func:`vox_lang.requests.extract_request`'s items,
    then those of :func:`pasted_items` not named already. Computed once per text while it stays
    among the last :data:`ASKED_CACHE_SIZE` texts asked about (a :class:`RequestSpec` is frozen, so
    every caller may share it). Never raises."""
    return _asked_items(text)


@functools.lru_cache(maxsize=ASKED_CACHE_SIZE)
def _asked_items(text: str) -> RequestSpec:
    spec = extract_request(text)
    named = {i.name for i in spec.items}
    extra = tuple(i for i in pasted_items(text) if i.name not in named)
    return RequestSpec(spec.items + extra) if extra else spec
