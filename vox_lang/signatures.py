"""Canonical text of item signatures, shared by what a request names (:mod:`vox_lang.requests`)
and what a program declares: ``(a: int, b: str) to int`` for functions and handlers
(``<T>(xs: List[T]) to T`` for a generic function),
``= | A | B(x: int)`` / ``= { a: int }`` / ``= T`` for types, and a one-item parser for request
snippets. This module imports only from vox_lang.
"""

from __future__ import annotations

from vox_lang import syntax
from vox_lang.diagnostics import DiagnosticSink
from vox_lang.printer import unparse
from vox_lang.source import SourceFile


def parse_item(text: str) -> syntax.Item | None:
    """Parse ``text`` as one item; ``None`` when it has any diagnostic or is not exactly one item."""
    src = SourceFile(text, "<request>")
    sink = DiagnosticSink(src)
    from vox_lang.parser import parse_module

    module = parse_module(src, sink)
    if len(module.items) != 1 or any(d.is_error for d in sink.sorted(strict=True)):
        return None
    return module.items[0]


def params_text(params: tuple[syntax.Param, ...]) -> str:
    """``(a: int, b: str)``: the parameters' names and types, defaults dropped."""
    return "(" + ", ".join(f"{p.name}: {unparse(p.type)}" for p in params) + ")"


def fn_signature(params: tuple[syntax.Param, ...], ret: syntax.TypeExpr | None, ret_given: bool = True,
                 generics: tuple[str, ...] = ()) -> str:
    """Canonical signature text of a function or handler (defaults dropped; ``to T`` only when
    given; a generic function's type parameters first: ``<T>(xs: List[T]) to T``)."""
    out = ("<" + ", ".join(generics) + ">" if generics else "") + params_text(params)
    if ret_given and ret is not None:
        out += " to " + unparse(ret)
    return out


def type_signature(decl: syntax.TypeDecl) -> str:
    """Canonical body text of a type declaration: ``= | A | B(x: int)`` or ``= T``."""
    body = decl.body
    if isinstance(body, tuple):
        parts = []
        for v in body:
            fields = ", ".join(f"{f.name}: {unparse(f.type)}" for f in v.fields)
            parts.append(f"| {v.name}" + (f"({fields})" if v.fields else ""))
        return "= " + " ".join(parts)
    return "= " + unparse(body)


def top_level_split(text: str, sep: str) -> list[str]:
    """The non-empty parts of ``text`` between the separators ``sep`` at bracket depth 0
    (``()[]{}``), each stripped: ``"a, Map[str, int]"`` on ``","`` is ``["a", "Map[str, int]"]``."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif depth == 0 and text.startswith(sep, i):
            parts.append(text[start:i].strip())
            start = i + len(sep)
    parts.append(text[start:].strip())
    return [p for p in parts if p]


def same_shape(want: str, have: str) -> bool:
    """Whether two canonical type bodies (:func:`type_signature`) declare the same
    type: the same variants (``= | A | B(x: int)``) or fields (``= { a: int, b: str }``) in any
    order (a request's list gives no order a program must keep); other bodies exactly equal."""
    if want == have:
        return True
    if want.startswith("= |") and have.startswith("= |"):
        return sorted(top_level_split(want[2:], "|")) == sorted(top_level_split(have[2:], "|"))
    if want.startswith("= {") and have.startswith("= {") and want.endswith("}") and have.endswith("}"):
        return sorted(top_level_split(want[3:-1], ",")) == sorted(top_level_split(have[3:-1], ","))
    return False
