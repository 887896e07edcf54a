"""Route targets, for the name mask (:mod:`pipeline.decoding_names`).

Spec §2 and the checker (:meth:`vox_lang.checker.Checker.routes`): the target of ``"PATH" to
NAME`` in a ``routes`` block is a function that returns ``Element`` and takes exactly the path's
``:name`` segments, each a ``str`` (E0521). In the failing completed blocks of one constrained
eval run of the default export, E0521 was the only fault of 10 answers: a page function taking
``slug: str`` routed from ``"/"``, a component with ``title`` and ``children`` routed from
``"/helpdesks/:id"``, a view element (``button``) as a target.

:func:`route_refusals` refuses, at a route's target, every prelude value (a builtin, constructor
or view element is no route target), the reserved words that start expressions, and each
function the program has declared whose header does not fit the path, as long as one fits: where
none does, refusing them all left the tiny model past the mask writing undefined names
(``"/teams/:team" to notStats``: 8 answers of one eval run), so the unfit ones stay allowed
there (E0521 instead of E0401; the answer fails either way). A function the program declares
twice, with one fitting header, and a generic one, are left to the checker; a function the
request names but the program has not declared yet stays free (the mask admits such forward
references).
"""

from __future__ import annotations

import re
from typing import Final

from pipeline.decoding_scan import scan
from vox_lang.prelude import BUILTINS, CONSTRUCTORS, VIEW_ELEMENTS

#: the end of a route up to its target: ``"PATH" to `` (a target being written cut off); the
#: target may stand on a later line (L2 drops the line break after ``to``) and a route may follow
#: another on its line (the grammar's ``routes`` block separates them by nothing)
_TARGET: Final = re.compile(r'"(?P<path>[^"\n]*)"\s+to\s+\Z')
#: the ``routes`` header before the innermost open brace
_ROUTES: Final = re.compile(r"\broutes\s*\Z")
_FN: Final = re.compile(r"(?:\A|\n)[ \t]*(?:pub\s+)?fn\s+(?P<name>[A-Za-z_]\w*)\s*\((?P<params>[^()]*)\)"
                        r"\s*(?:to\s+(?P<ret>[^{}\n]*?))?\s*\{")
#: reserved words that start expressions: never a route target (``not`` glued on to ``notStats``)
_WORDS: Final = frozenset({"not", "true", "false", "if", "match", "spawn", "fn"})
#: prelude values: never a route target
_PRELUDE: Final = frozenset(BUILTINS) | frozenset(CONSTRUCTORS) | frozenset(VIEW_ELEMENTS)


def _fits(params: str, ret: str | None, wanted: list[str]) -> bool:
    """Whether a header with these parameters (source text) and return type serves a path whose
    ``:name`` segments are ``wanted`` (sorted)."""
    if (ret or "").strip() != "Element":
        return False
    pairs = [p.split(":", 1) for p in params.split(",") if p.strip()]
    if any(len(p) != 2 or p[1].split("=", 1)[0].strip() != "str" for p in pairs):
        return False
    return sorted(p[0].strip() for p in pairs) == wanted


def route_refusals(head: str) -> frozenset[str]:
    """The words a route's target may not be when ``head`` (an open ```vox block) ends right
    before it (after ``"PATH" to``); nothing elsewhere (see the module docstring)."""
    m = _TARGET.search(head)
    if m is None:
        return frozenset()
    stack = scan(head).stack
    if not stack or not _ROUTES.search(head, 0, stack[-1].arm - 1):
        return frozenset()  # not in a `routes` block
    wanted = sorted(seg[1:] for seg in m.group("path").split("/") if seg.startswith(":"))
    fitting: set[str] = set()
    unfit: set[str] = set()
    for f in _FN.finditer(head):
        (fitting if _fits(f.group("params"), f.group("ret"), wanted) else unfit).add(f.group("name"))
    if not fitting - unfit:
        unfit = set()  # nothing fits: an unfit function (E0521) rather than a dead end the model writes past
    return frozenset(_PRELUDE | _WORDS | unfit) - fitting
