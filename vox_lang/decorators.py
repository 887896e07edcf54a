"""The decorator vocabulary, defined once: retired decorators (E0303, spec §2), the ones whose
arguments are parsed (``@test``, ``@mcp.tool``, ``@mcp.resource``; ``@endpoint`` of §10 U3)
and the ``@endpoint(kind: K)`` kinds. Every other decorator's arguments are an opaque token
run (§10 U9) and the decorator itself is W0102. :func:`is_test` says which declarations are tests
(spec §11), for the runtime's test discovery and for every check of whether a program has tests."""

from __future__ import annotations

from typing import Final

from vox_lang import hir, syntax

#: decorators retired in 2026 (E0303) -> hint
RETIRED_DECORATORS: Final[dict[str, str]] = {
    "component": "write `fn Name() to Element`",
    "server": "use `pub fn`",
    "query": "use `pub fn`",
    "mutation": "use `pub fn`",
    "action": "use `pub fn`",
    "agent_def": "use `fn` or `@mcp.tool`",
    "llm": "use `fn` or `@mcp.tool`",
    "traced": "remove it",
    "mobile.native": "remove it",
}

#: the decorator that makes a function a test (spec §11: ``vox test`` runs it)
TEST: Final = "test"

#: decorators the checker gives meaning to on a function (others: W0102)
KNOWN_DECORATORS: Final = frozenset({TEST, "mcp.tool", "mcp.resource"})

#: the compat decorator of §10 U3 (``@endpoint(kind: K)`` before a ``fn``: W0008)
ENDPOINT: Final = "endpoint"

#: ``K`` in ``@endpoint(kind: K)``
ENDPOINT_KINDS: Final = frozenset({"query", "mutation", "server"})

#: decorators whose parenthesised arguments are parsed (as ``args``, or ``kind: K`` for
#: ``@endpoint``); any other decorator's arguments are opaque (§10 U9)
ARG_DECORATORS: Final = KNOWN_DECORATORS | {ENDPOINT}

#: E0523 reason for a misused ``@endpoint``
ENDPOINT_REASON: Final = "`@endpoint` takes `(kind: query|mutation|server)` before a `fn`"


def is_test(decl: object) -> bool:
    """Whether a top-level declaration, of the syntax tree or of the HIR, is a test: a function
    (``fn``, ``workflow`` or ``activity``) decorated ``@test``. The one definition behind
    :func:`vox_lang.runtime.test_functions` and :func:`vox_lang.script_requests.declares_tests`."""
    return isinstance(decl, (syntax.FnDecl, hir.FnDecl)) and any(d.name == TEST for d in decl.decorators)
