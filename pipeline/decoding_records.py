"""Record types a block declares and the names typed by them, for the member rule
(:mod:`pipeline.decoding_members`).

:func:`declared_records` reads ``type N = { f: T, ... }`` (spec §2 ``rec_ty``; ``type N { ... }``,
W0003, too) once its brace closes, every field a ``WORD: type`` (``,`` or line breaks between).
:func:`record_types` is :func:`pipeline.decoding_typed.typed_names` where a binding's type may
also name those records (``u: User``, ``xs: List[User]``): a name is typed only where every one
of its bindings agrees, as there. A record the text declares twice, or that is spelled like a
built-in type, is left out; aliases (``type Stock = Map[str, int]``) and sum types are not read.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Final

from pipeline.decoding_scan import scan
from pipeline.decoding_typed import _BINDS, _STRIP, UNKNOWN, _Bindings, _blank, _read, closing_bracket
from vox_lang.prelude import BUILTIN_TYPES
from vox_lang.signatures import top_level_split

_BUILTIN_TYPES: Final = frozenset(BUILTIN_TYPES)
_RECORD: Final = re.compile(r"\btype\s+([A-Za-z_]\w*)\s*=?\s*\{")
_FIELD: Final = re.compile(r"([A-Za-z_]\w*)\s*:\s*(\S.*)\Z", re.S)
_TYPE_WORDS: Final = re.compile(r"[A-Za-z_]\w*")
_SIMPLE: Final = re.compile(r"[A-Za-z_]\w*(?:\[[^\[\]]*(?:\[[^\[\]]*\][^\[\]]*)*\])?\Z")


@lru_cache(maxsize=64)
def declared_records(lines: str) -> Mapping[str, Mapping[str, str]]:
    """Record types ``lines`` (an open block's text) declares, ``name -> field -> type text``:
    ``type N = { f: T, ... }`` (or ``type N { ... }``), closed, every field read; a name declared
    twice or spelled like a built-in type is left out (its reading would not be reliable)."""
    text = _STRIP.sub(_blank, lines)
    found: dict[str, dict[str, str] | None] = {}
    for m in _RECORD.finditer(text):
        close = closing_bracket(text, m.end() - 1)
        fields: dict[str, str] | None = {} if close > 0 else None
        for part in top_level_split(text[m.end():close].replace("\n", ","), ",") if close > 0 else []:
            f = _FIELD.match(part)
            if f is None or fields is None or f.group(1) in fields:
                fields = None
                break
            fields[f.group(1)] = " ".join(f.group(2).split())
        name = m.group(1)
        found[name] = None if name in found or name in _BUILTIN_TYPES else fields
    twice = {n for n in found if len(re.findall(rf"\btype\s+{n}\b", text)) > 1}
    return {n: f for n, f in found.items() if f is not None and n not in twice}


def known_type(text: str, records: frozenset[str]) -> bool:
    """Whether every name of ``text`` is a built-in type or one of ``records``."""
    words = _TYPE_WORDS.findall(text)
    return bool(_SIMPLE.match(text)) and all(w in _BUILTIN_TYPES or w in records for w in words)


class _RecordBindings(_Bindings):
    """:class:`pipeline.decoding_typed._Bindings` that also keeps types naming declared records."""

    records: frozenset[str] = frozenset()

    def copy(self) -> _RecordBindings:
        out = _RecordBindings({n: set(t) for n, t in self.types.items()}, {n: set(t) for n, t in self.returns.items()})
        out.records = self.records
        return out

    def bind(self, name: str, type_text: str | None) -> None:
        text = " ".join(type_text.split()) if type_text else UNKNOWN
        self.types.setdefault(name, set()).add(text if text == "fn" or known_type(text, self.records) else UNKNOWN)


@lru_cache(maxsize=64)
def _record_lines(text: str, records: frozenset[str]) -> _RecordBindings:
    b = _RecordBindings()
    b.records = records
    _read(_STRIP.sub(_blank, text), b)
    return b


def record_types(code: str, records: frozenset[str]) -> tuple[Mapping[str, str], Mapping[str, str]]:
    """:func:`pipeline.decoding_typed.typed_names` where a name may also be typed by a record
    of ``records`` (``u: User``, ``xs: List[User]``), read the same way (every binding agrees)."""
    state = scan(code)
    cut = code.rfind("\n", 0, state.stmt_start) + 1
    lines = _record_lines(code[:cut], records)
    rest = code[cut:]
    b = _read(_STRIP.sub(_blank, rest), lines.copy()) if _BINDS.search(rest) else lines
    types = b.agreed()
    bound = frozenset().union(*(f.names for f in state.stack if f.kind == "match"))
    return {n: t for n, t in types.items() if n not in bound}, b.function_returns()
