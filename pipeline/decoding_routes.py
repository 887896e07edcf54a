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

**Route paths the request quotes** (``route "/users/:user" to it``, ``routed at `/dash/:name```):
:func:`requested_paths` reads them, and at a fresh line of a ``routes`` block
(:func:`route_start`) the request hold (:mod:`pipeline.decoding_hold`) forces the first one the
block has not written yet (:func:`written_paths`) as ``  "PATH" to``, so the route is the one
asked for and its target is then held to a function serving it (above). In one constrained eval
run of the default export, 11 failing answers held an E0521 that was the path's fault: a
``Profile(user: str)`` routed from ``"/id/edit"`` where the request said ``"/users/:user"``.
"""

from __future__ import annotations

import re
from typing import Final

from pipeline.decoding_declare import fresh_line
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


#: a path a request gives: quoted (``"/users/:user"``, `` `/` ``) or bare after whitespace
#: (``route /fleet.``); a bare one must hold more than the ``/`` (``a / b`` is arithmetic)
_REQUESTED: Final = re.compile(r'(?P<q>["`])(?P<quoted>/[\w\-.:/]*)(?P=q)|(?<![^\s(])(?P<bare>/[\w\-.:/]+)')
#: a route written in a ``routes`` block: its path
_WRITTEN: Final = re.compile(r'"(?P<path>[^"\n]*)"\s+to\b')
#: a request that speaks of routes (the same words as :func:`pipeline.decoding_done.request_extras`)
_SPEAKS: Final = re.compile(r"\brout(?:e|es|ed|ing)\b", re.IGNORECASE)
#: the last line of a complete route: ``"PATH" to NAME``
_ROUTE_LINE: Final = re.compile(r'"[^"\n]*"\s+to\s+[A-Za-z_]\w*\s*\Z')


def requested_paths(request: str) -> tuple[str, ...]:
    """The route paths ``request`` gives, in order and without repeats; none when it does not
    speak of routes (a path in a script request is a file's). A bare path loses the sentence's
    punctuation after it (``route /fleet.`` gives ``/fleet``). Never raises."""
    if not _SPEAKS.search(request):
        return ()
    out: list[str] = []
    for m in _REQUESTED.finditer(request):
        path = m.group("quoted") if m.group("quoted") is not None else m.group("bare").rstrip(".:")
        if path and path not in out:
            out.append(path)
    return tuple(out)


def written_paths(code: str) -> frozenset[str]:
    """The paths of the routes ``code`` (an open ```vox block) has written so far."""
    return frozenset(m.group("path") for m in _WRITTEN.finditer(code))


def route_start(code: str) -> bool:
    """Whether the end of ``code`` (an open ```vox block) is a fresh line of a top-level
    ``routes`` block where a route may begin: right after its ``{`` or after a complete route
    (not after ``"PATH" to``, whose target may stand on the next line, spec §1 L2). The fresh line
    may hold its indentation already (:func:`pipeline.decoding_declare.fresh_line`)."""
    if not fresh_line(code):
        return False
    stack = scan(code).stack
    if len(stack) != 1 or not _ROUTES.search(code, 0, stack[0].arm - 1):
        return False
    last = code.rstrip()
    line = last[last.rfind("\n") + 1:]
    return line.rstrip().endswith("{") or bool(_ROUTE_LINE.search(line))
