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
user asks): ``fn``/``workflow``/``activity`` NAME then ``(`` or ``<``; ``type`` NAME then ``=``
(or generics); ``actor`` NAME then ``{``. Backticked spans count like the rest of the text. This
module imports only from vox_lang.
"""

from __future__ import annotations

import re
from typing import Final

from vox_lang.requests import NOT_NAMES, RequestedItem, RequestSpec, extract_request

#: words that ask for pasted code to be fixed
FIX_WORDS: Final = re.compile(
    r"\b(?:fix(?:es|ed|ing)?|repair|debug|correct|broken|failing|compile errors?|error\s*\[?E\d{4}|"
    r"(?:does\s*n[o'’]?t|won[’']?t|will\s+not|can[’']?t|cannot)\s+compile)\b", re.IGNORECASE)
#: string literals and ``//`` comments of the pasted code: the names in them declare nothing
_TEXT: Final = re.compile(r'"(?:[^"\\\n]|\\.)*"?|//[^\n]*')
_DECLARED: Final = re.compile(
    r"(?<![\w.])(?:(fn|workflow|activity)\s+([A-Za-z_]\w*)\s*[(<]"
    r"|type\s+([A-Za-z_]\w*)\s*(?:<[^<>=\n]*>\s*)?="
    r"|actor\s+([A-Za-z_]\w*)\s*\{)")
_KIND: Final = {"fn": "function", "workflow": "workflow", "activity": "activity"}


def pasted_items(text: str) -> tuple[RequestedItem, ...]:
    """The items the code in ``text`` declares (see the module docstring), in order, by name
    only; empty when ``text`` asks for no fix. Never raises."""
    if not FIX_WORDS.search(text):
        return ()
    out: list[RequestedItem] = []
    seen: set[str] = set(NOT_NAMES)  # reserved words and prelude names: no program declares them
    for m in _DECLARED.finditer(_TEXT.sub(" ", text)):
        if m.group(2):
            kind, name = _KIND[m.group(1)], m.group(2)
        elif m.group(3):
            kind, name = "type", m.group(3)
        else:
            kind, name = "actor", m.group(4)
        if name not in seen:
            seen.add(name)
            out.append(RequestedItem(kind, name))
    return tuple(out)


def asked_items(text: str) -> RequestSpec:
    """What an answer to ``text`` must declare: :func:`vox_lang.requests.extract_request`'s items,
    then those of :func:`pasted_items` not named already. Never raises."""
    spec = extract_request(text)
    named = {i.name for i in spec.items}
    extra = tuple(i for i in pasted_items(text) if i.name not in named)
    return RequestSpec(spec.items + extra) if extra else spec
