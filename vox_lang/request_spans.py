"""One backticked span of a request read as what it declares: a type declaration, a signature
or a bare name (the rules of :mod:`vox_lang.requests`).

Every item-declaring form of the spec is read (§2, §10): ``type NAME = ...``, and the retired
``type NAME { ... }`` (W0003) as the record it means; functions, workflows and activities, with
``pub``/``async``/``extern`` before them and generics written ``<T>`` (§2) or, a common slip,
``[T]``; ``component NAME(params)`` (U6) as the function it lowers to, ``on NAME(params)``
handlers, and a declaration's keyword with its name alone (``actor Clerk``, ``type Shape``,
``fn greet``), which asks for the item by name. This module imports only from vox_lang.
"""

from __future__ import annotations

import re
from typing import Final

from vox_lang import syntax
from vox_lang.signatures import fn_signature, parse_item, type_signature

#: a span read: (kind, name, canonical signature or ``None`` when only the name was given)
SpanItem = tuple[str, str, str | None]

_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
#: a name and the generics after it: ``first<T, U>`` (§2) or ``first[T]`` (what users write)
_GENERIC_NAME: Final = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*(?:<([^<>()]*)>|\[([^\[\]()]*)\])\s*(?=\()")
#: the body of an ``extern fn`` (U13): the implementing module, not part of the signature
_EXTERN_BODY: Final = re.compile(r"\s*=\s*\"[^\"]*\"\s*\Z")
#: a type declared without ``=`` (W0003): ``type NAME {`` means ``type NAME = {``
_TYPE_WITHOUT_EQ: Final = re.compile(r"type\s+([A-Za-z_][A-Za-z0-9_]*)\s*\{")
#: keywords that open a declaration, and the kind of item each declares (``fn``: ``None``, the
#: kind the words around the span give, else ``function``)
_DECL_WORDS: Final[dict[str, str | None]] = {"fn": None, "workflow": "workflow", "activity": "activity",
                                             "on": "handler", "component": "function"}
_MODIFIERS: Final = frozenset({"pub", "async", "extern"})


def _type_span(code: str, not_names: frozenset[str]) -> SpanItem | None:
    """``type NAME = ...``, ``type NAME { ... }`` (W0003), ``NAME = ...`` after the word "type",
    or ``type NAME`` alone."""
    bare = code.removeprefix("type ").strip()
    if code.startswith("type ") and _NAME.match(bare):
        return ("type", bare, None) if bare not in not_names else None
    if _TYPE_WITHOUT_EQ.match(code):
        code = _TYPE_WITHOUT_EQ.sub(lambda m: f"type {m.group(1)} = {{", code, count=1)
    item = parse_item(code if code.startswith("type ") else "type " + code)
    if isinstance(item, syntax.TypeDecl) and item.has_eq:
        return ("type", item.name, type_signature(item))
    return None


def read_span(code: str, kind: str | None, not_names: frozenset[str]) -> SpanItem | None:
    """Read one backticked span (see the module docstring).

    Args:
        code: the span's text, without its backticks.
        kind: the kind of item the words around the span give (``function``, ``type``...), or ``None``.
        not_names: names no program can declare (reserved words, prelude names): never an item.

    Returns:
        ``(kind, name, signature)``, or ``None`` when the span names no item.
    """
    code = code.strip()
    head = code.split("(", 1)[0].split("=", 1)[0].split("<", 1)[0].strip()
    if code.startswith("type ") or (kind == "type" and "=" in code and _NAME.match(head)):
        return _type_span(code, not_names)
    words = code.split()
    declared = False
    while words and words[0] in _MODIFIERS:
        words = words[1:]
    if words and words[0] in _DECL_WORDS:
        declared = True
        kind = _DECL_WORDS[words[0]] or kind
        words = words[1:]
    elif words[:1] == ["actor"] and len(words) >= 2:
        name = words[1].split("{", 1)[0]
        return ("actor", name, None) if _NAME.match(name) and name not in not_names else None
    code = " ".join(words)
    generic = _GENERIC_NAME.match(code)
    generics = ""
    if generic is not None:  # `first[T](...)` / `first<T>(...)`: parsed as `fn first<T>(...)`
        generics = "<" + (generic.group(2) if generic.group(2) is not None else generic.group(3)) + ">"
        code = generic.group(1) + code[generic.end():]
    if "(" in code:
        name = code.split("(", 1)[0].strip()
        if not _NAME.match(name) or name in not_names:
            return None
        rest = _EXTERN_BODY.sub("", code[len(name):].strip())
        has_ret = bool(re.search(r"\)\s*(to|->)\s*\S", rest))
        item = parse_item(f"fn {name}{generics}{rest} {{ }}" if has_ret or rest.endswith(")") else "")
        if not isinstance(item, syntax.FnDecl) or len({p.name for p in item.params}) < len(item.params):
            return None  # a parameter named twice can never compile (E0402): no program could declare it
        fkind = kind if kind in ("workflow", "activity", "handler") else "function"
        return (fkind, name, fn_signature(item.params, item.ret, has_ret, item.generics))
    if declared and kind is None and _NAME.match(code) and code not in not_names:
        kind = "function"  # `fn greet`: the keyword says what it is
    if kind is not None and _NAME.match(code) and code not in not_names:
        return (kind, code, None)
    return None
