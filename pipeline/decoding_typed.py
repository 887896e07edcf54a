"""Types of names and of whole expressions in an open ```vox block, read from its text, for the
type rules of the name mask (:mod:`pipeline.decoding_types`, :mod:`pipeline.decoding_operators`).

**Names.** :func:`name_types` reads every binding form the program has written so far: parameters
of ``fn``/``on``/``workflow``/``activity`` headers and of lambdas (``name: Type``), ``let``s (their
annotation, else the type of their value as :func:`expr_type` reads it), a ``for``'s variable
(``int`` over ``range(...)``, ``T`` over a name typed ``List[T]``), items (``fn`` names are
functions; ``type``, ``actor``, variants and imports are not read). A name gets a type only when
*every* binding of it in the whole text agrees, so a name that one function binds as ``int`` and
another as ``str`` (or a ``let`` whose value is not read) has none: whichever binding a use
resolves to, the type is right. Match-arm bindings are not read here; the caller drops the names
an open ``match`` binds (:func:`typed_names`). A mistake only ever loses a rule: a name without a
type restricts nothing.

**Expressions.** :func:`expr_type` types a flat expression (operands joined by binary operators)
from spec §4–§5 alone: literals, typed names, calls of prelude builtins, constructors and the
program's own functions (their declared return type), methods of the prelude
(:data:`vox_lang.prelude.METHODS`) and indexing (``List[T][i]`` is ``T``, ``str[i]`` a ``str``,
spec §11); a comparison or ``and``/``or`` anywhere at top level makes a ``bool``; ``+ - * / %``
keep the operands' type (``int`` with ``float`` gives ``float``). Anything else (``?``, a pipe,
``if``/``match``, a lambda, a record, an unknown name or method) types as ``None``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Final

from pipeline.decoding_scan import TOKENS, scan
from vox_lang.lexer import KEYWORDS
from vox_lang.prelude import BUILTIN_TYPES, BUILTINS, CONSTRUCTORS, METHODS
from vox_lang.signatures import top_level_split
from vox_lang.types import TCon, Type

#: a name whose bindings disagree or cannot be read
UNKNOWN: Final = "?"
#: binary operators by class (spec §2 precedence: ``or`` < ``and`` < comparisons < ``+ -`` < ``* / %``)
LOGIC: Final = frozenset({"and", "or"})
COMPARE: Final = frozenset({"==", "!=", "<", ">", "<=", ">="})
ARITH: Final = frozenset({"+", "-", "*", "/", "%"})
_OPEN: Final = {"(": ")", "[": "]", "{": "}"}
_HEADER: Final = re.compile(r"\b(?:fn|on|workflow|activity)\b\s*(?P<name>[A-Za-z_]\w*)?\s*(?:<[^<>{}()]*>)?\s*\(")
#: a header's return type: it may go on past a line break inside `[` (L1)
_RET: Final = re.compile(r"\s*to\s+(?P<ret>[^{}]*?)\s*(?:\{|\Z)")
_PARAM: Final = re.compile(r"\s*(?:mut\s+)?(?P<name>[A-Za-z_]\w*)\s*:\s*(?P<type>.+?)\s*(?:=.*)?\Z", re.S)
_LET: Final = re.compile(r"\blet\s+(?:mut\s+)?(?P<name>[A-Za-z_]\w*)\s*(?::\s*(?P<type>[^=\n]+?)\s*)?=(?!=)"
                         r"(?P<value>[^\n]*)")
_FOR: Final = re.compile(r"\bfor\s+(?P<a>[A-Za-z_]\w*)\s*(?:,\s*(?P<b>[A-Za-z_]\w*)\s*)?\bin\b(?P<iter>[^{\n]*)")
_OTHER: Final = re.compile(r"\b(?:type|actor)\s+(?P<name>[A-Za-z_]\w*)|\|\s*(?P<variant>[A-Z]\w*)"
                           r"|\bimport\s+(?P<imp>[\w.]+)(?:\s+as\s+(?P<alias>\w+))?")
_STRIP: Final = re.compile(r'"(?:[^"\\\n]|\\.)*"?|//[^\n]*')
_SIMPLE_TYPE: Final = re.compile(r"[A-Za-z_]\w*(?:\[[^\[\]]*(?:\[[^\[\]]*\][^\[\]]*)*\])?\Z")


def show(t: Type) -> str | None:
    """Source text of a concrete built-in type (``List[int]``); ``None`` when any part of it is
    not a :class:`~vox_lang.types.TCon` (a type parameter, a function, a record)."""
    if not isinstance(t, TCon):
        return None
    if not t.args:
        return t.name
    args = [show(a) for a in t.args]
    return None if any(a is None for a in args) else f"{t.name}[{', '.join(a for a in args if a)}]"


def type_args(type_text: str) -> list[str]:
    """The type arguments of ``T[...]`` (source text, each stripped); ``[]`` for a type without."""
    if "[" not in type_text or not type_text.endswith("]"):
        return []
    return top_level_split(type_text[type_text.index("[") + 1:-1], ",")


def closing_bracket(text: str, at: int) -> int:
    """Offset of the bracket closing the one at ``text[at]``; ``-1`` when it does not close."""
    depth = 0
    for i in range(at, len(text)):
        ch = text[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                return i
    return -1


def _element(type_text: str | None) -> str | None:
    """``T`` of ``List[T]`` / ``Set[T]`` (source text); ``None`` for anything else."""
    if type_text and type_text.startswith(("List[", "Set[")):
        parts = type_args(type_text)
        return parts[0] if len(parts) == 1 else None
    return None


class _Bindings:
    """Every binding read so far: ``name -> set of type texts`` (:data:`UNKNOWN` for unread),
    and each function's declared return types."""

    def __init__(self, types: dict[str, set[str]] | None = None, returns: dict[str, set[str]] | None = None) -> None:
        self.types: dict[str, set[str]] = types or {}
        self.returns: dict[str, set[str]] = returns or {}

    def copy(self) -> _Bindings:
        return _Bindings({n: set(t) for n, t in self.types.items()}, {n: set(t) for n, t in self.returns.items()})

    def bind(self, name: str, type_text: str | None) -> None:
        text = _type_text(type_text) if type_text else UNKNOWN
        self.types.setdefault(name, set()).add(text if text == "fn" or built_in(text) else UNKNOWN)

    def agreed(self) -> dict[str, str]:
        return {n: next(iter(ts)) for n, ts in self.types.items() if len(ts) == 1 and UNKNOWN not in ts}

    def function_returns(self) -> dict[str, str]:
        return {n: next(iter(ts)) for n, ts in self.returns.items() if len(ts) == 1 and UNKNOWN not in ts}


def _type_text(text: str) -> str:
    """A type's source text on one line as it is written on one: whitespace collapsed, none
    inside brackets (``Result[\n  str]`` is ``Result[str]``)."""
    flat = " ".join(text.split())
    if "\n" not in text:
        return flat
    return re.sub(r"\s*,\s*", ", ", re.sub(r"\[\s+", "[", re.sub(r"\s+\]", "]", flat)))


def _read(text: str, b: _Bindings) -> _Bindings:
    """``b`` with the bindings of ``text`` (strings and comments blanked) added."""
    events: list[tuple[int, str, re.Match[str]]] = []
    for kind, pattern in (("header", _HEADER), ("let", _LET), ("for", _FOR), ("other", _OTHER)):
        events += [(m.start(), kind, m) for m in pattern.finditer(text)]
    for _, kind, m in sorted(events, key=lambda e: e[0]):
        if kind == "header":
            close = closing_bracket(text, m.end() - 1)
            if close < 0:
                continue  # parameters still being written: bound once the list closes
            ret = _RET.match(text, close + 1)
            if m.group("name"):
                b.bind(m.group("name"), "fn")
                b.returns.setdefault(m.group("name"), set()).add(_type_text(ret.group("ret")) if ret else "Unit")
            for part in top_level_split(text[m.end():close], ","):
                p = _PARAM.match(part)
                b.bind(p.group("name"), p.group("type")) if p else None
        elif kind == "let":
            declared = m.group("type")
            value = None if declared or _continued(text, m.end()) else \
                expr_type(_tokens(m.group("value")), b.agreed(), b.function_returns())
            b.bind(m.group("name"), declared or value)
        elif kind == "for":
            a, second, it = m.group("a"), m.group("b"), _tokens(m.group("iter"))
            if second:
                b.bind(a, None)
                b.bind(second, None)
            elif it[:2] == ["range", "("] and "range" not in b.types:
                b.bind(a, "int")
            else:
                b.bind(a, _element(expr_type(it, b.agreed(), b.function_returns())))
        else:
            for g in ("name", "variant", "alias"):
                if m.group(g):
                    b.bind(m.group(g), None)
            if m.group("imp") and not m.group("alias"):
                b.bind(m.group("imp").rsplit(".", 1)[-1], None)
    return b


#: the start of a line that layout joins to the one before (spec §1 L3)
_L3_LINE: Final = re.compile(r"\n[ \t]*(?:\.|\|>|else\b|\|)")


def _continued(text: str, at: int) -> bool:
    """Whether the line ending at or after ``at`` goes on on the next line (an L3 token starts
    it), or ``text`` ends there (it may yet): then a ``let``'s value on it is not read."""
    end = text.find("\n", at)
    return end < 0 or bool(_L3_LINE.match(text, end))


@lru_cache(maxsize=256)
def _read_lines(text: str) -> tuple[_Bindings, dict[str, str], dict[str, str]]:
    """:func:`_read` of complete logical lines, with its agreed types and returns (cached: while
    a block is decoded, the lines before the one being written do not change)."""
    b = _read(_STRIP.sub(_blank, text), _Bindings())
    return b, b.agreed(), b.function_returns()


#: a line that may bind something: a header, ``let``, loop, item or import
_BINDS: Final = re.compile(r"\b(?:fn|on|workflow|activity|let|for|type|actor|import)\b|\|(?!>)")


def _blank(m: re.Match[str]) -> str:
    """A string literal or comment as spaces of the same length (a string keeps its quotes), so
    offsets still match the source."""
    t = m.group(0)
    if t.startswith("//"):
        return " " * len(t)
    return '"' + " " * (len(t) - 2) + '"' if len(t) > 1 and t.endswith('"') else '"' + " " * (len(t) - 1)


def _tokens(text: str) -> list[str]:
    return [t for t in TOKENS.findall(text) if t != "\n" and not t.startswith("//")]


def name_types(code: str) -> tuple[Mapping[str, str], Mapping[str, str]]:
    """``(types, returns)`` read from ``code`` (an open ```vox block): each name's type (source
    text) where all its bindings agree, and each function's declared return type (see the module
    docstring). Whole logical lines before the one being written are read once and cached; in
    that one, headers, ``let``s and loops count once they are complete."""
    cut = code.rfind("\n", 0, scan(code).stmt_start) + 1
    lines, types, returns = _read_lines(code[:cut])
    rest = code[cut:]
    if not _BINDS.search(rest):
        return types, returns
    b = _read(_STRIP.sub(_blank, rest), lines.copy())
    return b.agreed(), b.function_returns()


#: recent :func:`typed_names` results by text (the head rule and the operator rule ask for the same
#: text at each step; cleared when full)
_TYPED: dict[str, tuple[Mapping[str, str], Mapping[str, str]]] = {}


def typed_names(code: str) -> tuple[Mapping[str, str], Mapping[str, str]]:
    """:func:`name_types` less the names an open ``match`` binds at the end of ``code`` (an arm's
    pattern may rebind a typed name: ``Some(n) -> n``). Cached by text."""
    hit = _TYPED.get(code)
    if hit is not None:
        return hit
    types, returns = name_types(code)
    bound = frozenset().union(*(f.names for f in scan(code).stack if f.kind == "match"))
    if bound & types.keys():
        types = {n: t for n, t in types.items() if n not in bound}
    if len(_TYPED) >= 64:
        _TYPED.clear()
    _TYPED[code] = (types, returns)
    return types, returns


#: a named function, workflow or activity header up to its ``(`` (no generics: their parameter
#: types may be type parameters)
_CALLABLE: Final = re.compile(r"\b(?:fn|workflow|activity)\s+(?P<name>[A-Za-z_]\w*)\s*\(")


def parameter_types(code: str) -> Mapping[str, tuple[str, ...]]:
    """Each named function, workflow and activity of ``code`` (an open ```vox block) with its
    parameters' types (source text, whitespace collapsed) once its parameter list has closed;
    a name declared twice with different lists, or with a parameter whose type is not written,
    is left out (so a call's argument is never held to a type it does not have)."""
    text = _STRIP.sub(_blank, code)
    found: dict[str, set[tuple[str, ...]]] = {}
    for m in _CALLABLE.finditer(text):
        close = closing_bracket(text, m.end() - 1)
        if close < 0:
            continue
        types: list[str] = []
        for part in top_level_split(text[m.end():close], ","):
            p = _PARAM.match(part)
            types.append(_type_text(p.group("type")) if p else UNKNOWN)
        found.setdefault(m.group("name"), set()).add(tuple(types))
    return {n: next(iter(ts)) for n, ts in found.items() if len(ts) == 1 and UNKNOWN not in next(iter(ts))}


def operand_end(tok: str) -> bool:
    """Whether ``tok`` may end an operand: a name, number, closed string, ``)`` or ``]`` (a
    reserved word only as the literal ``true``/``false``/``None``)."""
    if tok in (")", "]"):
        return True
    if tok.startswith('"'):
        return len(tok) > 1 and tok.endswith('"') and not tok.endswith('\\"')
    return (tok[:1].isalnum() or tok[:1] == "_") and (tok not in KEYWORDS or tok in ("true", "false", "None"))


def built_in(type_text: str) -> bool:
    """Whether ``type_text`` is a type the prelude defines, all of it (``List[int]``, not
    ``List[Money]``: an alias is transparent, spec §4, so a user type's name says nothing)."""
    if not _SIMPLE_TYPE.match(type_text):
        return False
    return all(w in _BUILT_IN for w in re.findall(r"[A-Za-z_]\w*", type_text))


_BUILT_IN: Final = frozenset(BUILTIN_TYPES)


def base(type_text: str | None) -> str | None:
    """The head of a type's source text (``List`` of ``List[int]``); ``None`` for none."""
    if not type_text:
        return None
    return type_text.split("[", 1)[0].strip() or None


def method_type(receiver: str, name: str) -> str | None:
    """The return type of ``receiver.name(...)`` when the prelude gives it concretely (``str``
    ``split`` is ``List[str]``; ``List[int]`` ``get`` is ``Option[int]``)."""
    sig = METHODS.get(base(receiver) or "", {}).get(name)
    if sig is None:
        return None
    concrete = show(sig.ret)
    if concrete is not None:
        return concrete
    ret = sig.ret  # a type parameter of the receiver: T of List[T] / Option[T] / Result[T, E]
    parts = type_args(receiver)
    if isinstance(ret, TCon) and ret.name == "Option" and parts and base(receiver) == "List":
        return f"Option[{parts[0]}]"
    if not isinstance(ret, TCon) and parts and base(receiver) in ("Option", "Result") and name == "unwrap_or":
        return parts[0]
    return None


def _index(receiver: str) -> str | None:
    """The type of ``receiver[i]`` (spec §11: ``List[T][int]`` is ``T``, ``Map[K, V][K]`` is ``V``,
    ``str[int]`` a ``str``)."""
    if receiver == "str":
        return "str"
    parts = type_args(receiver)
    if base(receiver) == "List" and len(parts) == 1:
        return parts[0]
    if base(receiver) == "Map" and len(parts) == 2:
        return parts[1]
    return None


def _call(name: str, types: Mapping[str, str], returns: Mapping[str, str]) -> str | None:
    """The type of a call ``name(...)``: a prelude builtin's or constructor's (unless a binding
    shadows it) or a function of the program's, by its declared return type."""
    if name in types:
        return returns.get(name) if types[name] == "fn" else None
    if name in BUILTINS:
        return show(BUILTINS[name].ret)
    if name in CONSTRUCTORS:
        return CONSTRUCTORS[name][0]
    return returns.get(name)


def _operand(toks: Sequence[str], i: int, types: Mapping[str, str],
             returns: Mapping[str, str]) -> tuple[str | None, int]:
    """The type of the operand starting at ``toks[i]`` and the index after it; ``None`` as the
    type when it cannot be read (the index then is where reading stopped)."""
    prefix = []
    while i < len(toks) and toks[i] in ("not", "-"):
        prefix.append(toks[i])
        i += 1
    if i >= len(toks):
        return None, i
    t = toks[i]
    ty: str | None
    if t.startswith('"'):
        ty = "str" if len(t) > 1 and t.endswith('"') and not t.endswith('\\"') else None
        i += 1
    elif t[0].isdigit():
        ty, i = ("float" if "." in t else "int"), i + 1
    elif t in ("true", "false"):
        ty, i = "bool", i + 1
    elif t in _OPEN:
        close = closing_index(toks, i)
        if close < 0:
            return None, len(toks)
        ty = ("List" if t == "[" else expr_type(toks[i + 1:close], types, returns) if t == "(" else None)
        i = close + 1
    elif (t[0].isalpha() or t[0] == "_") and (t not in KEYWORDS or t == "None"):
        if i + 1 < len(toks) and toks[i + 1] == "(":
            close = closing_index(toks, i + 1)
            if close < 0:
                return None, len(toks)
            ty, i = _call(t, types, returns), close + 1
        else:
            ty = "Option" if t == "None" and t not in types else types.get(t)
            ty = None if ty == UNKNOWN else ty
            i += 1
    else:
        return None, i
    while ty is not None and i < len(toks) and toks[i] in (".", "["):
        if toks[i] == ".":
            if i + 2 < len(toks) and toks[i + 2] == "(":
                close = closing_index(toks, i + 2)
                ty = method_type(ty, toks[i + 1]) if close > 0 else None
                i = close + 1 if close > 0 else len(toks)
            else:
                return None, i
        else:
            close = closing_index(toks, i)
            ty = _index(ty) if close > 0 else None
            i = close + 1 if close > 0 else len(toks)
    if i < len(toks) and toks[i] in ("?", "(", "|>"):
        return None, i
    if ty is not None and not built_in(ty):
        return None, i
    if ty is not None and "not" in prefix:
        ty = "bool" if ty == "bool" else None
    if ty is not None and "-" in prefix:
        ty = ty if ty in ("int", "float") else None
    return ty, i


def closing_index(toks: Sequence[str], at: int) -> int:
    """Index of the token closing the bracket ``toks[at]``; ``-1`` when it does not close."""
    depth = 0
    for j in range(at, len(toks)):
        if toks[j] in _OPEN:
            depth += 1
        elif toks[j] in (")", "]", "}"):
            depth -= 1
            if depth == 0:
                return j
    return -1


def expr_type(toks: Sequence[str], types: Mapping[str, str], returns: Mapping[str, str] = {}) -> str | None:
    """The type (source text) of the flat expression ``toks`` (tokens of
    :data:`pipeline.decoding_scan.TOKENS`, no newlines or comments), or ``None`` where it cannot
    be read (see the module docstring). ``types``/``returns``: :func:`name_types`."""
    if not toks:
        return None
    operands: list[str] = []
    ops: list[str] = []
    i = 0
    while True:
        ty, i = _operand(toks, i, types, returns)
        if ty is None:
            return None
        operands.append(ty)
        if i >= len(toks):
            break
        if toks[i] not in LOGIC | COMPARE | ARITH or i + 1 >= len(toks):
            return None
        ops.append(toks[i])
        i += 1
    if any(o in LOGIC or o in COMPARE for o in ops):
        return "bool"
    return arithmetic(operands)


def arithmetic(operands: Sequence[str]) -> str | None:
    """The type of ``+ - * / %`` over operands of these types (spec §4: ``int`` with ``float``
    gives ``float``, ``str + str`` a ``str``); ``None`` when they do not combine."""
    kinds = set(operands)
    if len(kinds) == 1:
        return operands[0]
    if kinds <= {"int", "float"}:
        return "float"
    return None
