"""Item names a request gives without backticks: "a function count_above that ...", "an actor
named Greeter", "a record Point with x and y".

Backticks are how requests name things (:mod:`vox_lang.requests`); a user who leaves them out
still means the name, and a program that declares another one answers another request (a
new-user trial: "a vox function count_above that ..." got `fn pick_above` and a PASS). A plain
word right after a kind word (function, fn, type, record, struct, enum, actor, workflow, ...;
"named"/"called" may stand between) is a name when it cannot be English:

1. it has an underscore or a capital letter after its first character (``count_above``,
   ``countAbove``, ``PricingPage``), or is followed by ``(`` (``add(a, b)``);
2. or it follows "named"/"called" ("a function named total");
3. or, for a type or an actor, it starts with a capital letter ("a struct Point", "an actor
   Greeter"), as Vox type and actor names do.

Anything else ("a function that ...", "a type of ...", "a function To compute") is prose. Names
no program can declare (:data:`vox_lang.requests.NOT_NAMES`) never count. Code is not prose:
text in backticks is left to :mod:`vox_lang.requests`, fenced blocks and declarations pasted
without fences (``fn f(...)``, ``type T = ...``, ``actor A {``) to :mod:`vox_lang.pasted`.
This module imports nothing outside the standard library.
"""

from __future__ import annotations

import re
from typing import Final

#: kind words (lower-case) -> item kind, as in :mod:`vox_lang.requests` (singular: a plural names no one item)
KIND_WORDS: Final[dict[str, str]] = {
    **{w: "function" for w in ("function", "tool", "helper", "procedure")},  # not `fn`: prose says function
    "workflow": "workflow", "activity": "activity",
    **{w: "type" for w in ("type", "record", "struct", "enum")},
    "actor": "actor", "handler": "handler",
}
#: words that introduce a name whatever it looks like
_NAMING: Final = frozenset({"named", "called"})
#: a kind word, optionally "named"/"called", then an identifier (group 3) and what follows it
_PLAIN: Final = re.compile(r"\b(?i:(" + "|".join(KIND_WORDS) + r"))\s+(?:(named|called)\s+)?"
                           r"([A-Za-z_][A-Za-z0-9_]*)\b(\s*\()?(?!\s*[={<\[])")
#: a fenced block: code pasted into the request (:mod:`vox_lang.pasted` reads it), not prose
_FENCE: Final = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_CODE_LIKE: Final = re.compile(r"[A-Za-z0-9]*(?:_|[A-Za-z0-9][A-Z])")


def plain_items(text: str, not_names: frozenset[str]) -> list[tuple[str, str]]:
    """``(kind, name)`` of each item ``text`` names without backticks, in order (module docstring).

    Args:
        text: the request.
        not_names: names that are never requirements (reserved words, prelude names).
    """
    prose = re.sub(r"`[^`\n]*`", " # ", _FENCE.sub(" # ", text))  # code is not prose, nor a name to read past
    found: list[tuple[str, str]] = []
    for m in _PLAIN.finditer(prose):
        kind = KIND_WORDS.get(m.group(1).lower())
        name = m.group(3)
        if kind is None or name in not_names or name.lower() in KIND_WORDS:
            continue
        code_like = bool(_CODE_LIKE.match(name)) or m.group(4) is not None
        capital = kind in ("type", "actor") and name[0].isupper()
        if (code_like or m.group(2) is not None or capital) and (kind, name) not in found:
            found.append((kind, name))
    return found
