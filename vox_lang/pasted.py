"""Items declared by Vox code pasted into a request that asks for it to be fixed.

"Fix this Vox code: fn double(x: int) -> int { return x * 2 }" names no item in backticks
(:func:`vox_lang.requests.extract_request` finds nothing), yet an answer that declares no
``double`` does not answer it: a new-user trial got an unrelated function and
``vox-script-verify: PASS``. :func:`asked_items` adds, to what the backticks name, the items the
pasted code declares, **by name only** (the fix may change a signature: ``->`` becomes ``to``),
when the request asks for a fix (:data:`FIX_WORDS`: fix, repair, debug, correct, "does not
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
Backticked spans count like the rest of the text. :func:`asked_items` is cached by text, since
one request reads its text several times (the constraint mode, the request the masks read, each
name mask built). This module imports only from vox_lang.
"""

from __future__ import annotations

import functools
import re
from typing import Final

from vox_lang.requests import NOT_NAMES, RequestedItem, RequestSpec, extract_request

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


def pasted_items(text: str) -> tuple[RequestedItem, ...]:
    """The items the code in ``text`` declares (see the module docstring), in order, by name
    only; empty when ``text`` asks for no fix. Never raises."""
    if not FIX_WORDS.search(text):
        return ()
    out: list[RequestedItem] = []
    seen: set[str] = set(NOT_NAMES)  # reserved words and prelude names: no program declares them
    for m in _DECLARED.finditer(_TEXT.sub(" ", text)):
        row = next(i for i in range(len(FORMS)) if m.group(f"n{i}") is not None)
        kind, name = FORMS[row][0], m.group(f"n{row}")
        if name not in seen:
            seen.add(name)
            out.append(RequestedItem(kind, name))
    return tuple(out)


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
