"""The prelude and standard library (spec §5, §9): builtins, constructors, methods, view
elements and ``std.*`` members, written as Vox signatures and parsed once at import.

Generic letters ``T U K V E`` in these signatures are instantiated afresh per use.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from vox_lang.types import ANY, STR, TCon, TFn, TOneOf, TParam, Type


@dataclass(frozen=True, slots=True)
class ParamSig:
    """One parameter: ``name``, ``type`` and whether it has a default (optional)."""

    name: str
    type: Type
    has_default: bool = False


@dataclass(frozen=True, slots=True)
class Sig:
    """A callable's signature; ``generics`` are the :class:`TParam` keys to instantiate."""

    params: tuple[ParamSig, ...]
    ret: Type
    generics: tuple[int, ...] = ()

    @property
    def fn_type(self) -> TFn:
        """The signature as a function type."""
        return TFn(tuple(p.type for p in self.params), self.ret)


#: the prelude's generic letters and their (negative, never clashing with def ids) keys
_LETTERS: Final = {"T": -1, "U": -2, "K": -3, "V": -4, "E": -5}
_TOKEN = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*|[\[\](),:|])")


class _SigParser:
    """Parses the small signature notation used in this module (``fn(x: T) to List[T]``)."""

    def __init__(self, text: str) -> None:
        self.toks = _TOKEN.findall(text)
        self.i = 0
        self.used: set[int] = set()

    def peek(self) -> str:
        return self.toks[self.i] if self.i < len(self.toks) else ""

    def take(self, want: str | None = None) -> str:
        tok = self.peek()
        if want is not None and tok != want:
            raise ValueError(f"prelude signature: expected {want!r}, found {tok!r} in {self.toks}")
        self.i += 1
        return tok

    def sig(self) -> Sig:
        self.take("fn")
        self.take("(")
        params: list[ParamSig] = []
        while self.peek() != ")":
            name = self.take()
            self.take(":")
            params.append(ParamSig(name, self.type()))
            if self.peek() == ",":
                self.take()
        self.take(")")
        ret = self.type() if self.peek() == "to" and self.take() else TCon("Unit")
        return Sig(tuple(params), ret, tuple(sorted(self.used)))

    def type(self) -> Type:
        name = self.take()
        if name == "fn":
            self.take("(")
            params: list[Type] = []
            while self.peek() != ")":
                params.append(self.type())
                if self.peek() == ",":
                    self.take()
            self.take(")")
            ret = self.type() if self.peek() == "to" and self.take() else TCon("Unit")
            return TFn(tuple(params), ret)
        if name == "any":
            return ANY
        if self.peek() == "|":
            heads = [name]
            while self.peek() == "|":
                self.take()
                heads.append(self.take())
            return TOneOf(tuple(heads))
        if name in _LETTERS:
            self.used.add(_LETTERS[name])
            return TParam(name, _LETTERS[name])
        args: list[Type] = []
        if self.peek() == "[":
            self.take()
            while self.peek() != "]":
                args.append(self.type())
                if self.peek() == ",":
                    self.take()
            self.take("]")
        if name == "Result" and len(args) == 1:
            args.append(STR)
        return TCon(name, tuple(args))


def parse_sig(text: str) -> Sig:
    """Parse one prelude signature (a bug here is ours: raises ``ValueError``)."""
    return _SigParser(text).sig()


def _table(entries: dict[str, str]) -> dict[str, Sig]:
    return {name: parse_sig(text) for name, text in entries.items()}


#: builtin functions (value namespace)
BUILTINS: Final[dict[str, Sig]] = _table({
    "print": "fn(x: any) to Unit",
    "assert": "fn(cond: bool) to Unit",
    "len": "fn(x: str|List|Map|Set) to int",
    "str": "fn(x: any) to str",
    "int": "fn(x: int|float|str) to int",
    "float": "fn(x: int|float|str) to float",
    "range": "fn(a: int, b: int) to List[int]",
    "set": "fn(xs: List[T]) to Set[T]",
})

#: prelude constructors: name -> (family, signature); nullary ones are values of ``ret``
CONSTRUCTORS: Final[dict[str, tuple[str, Sig]]] = {
    "Some": ("Option", parse_sig("fn(value: T) to Option[T]")),
    "None": ("Option", parse_sig("fn() to Option[T]")),
    "Ok": ("Result", parse_sig("fn(value: T) to Result[T, E]")),
    "Error": ("Result", parse_sig("fn(error: E) to Result[T, E]")),
}

#: view elements: named arguments of any type, optional children, result ``Element``
VIEW_ELEMENTS: Final = (
    "column", "row", "stack", "grid", "text", "heading", "button", "link", "image", "input",
    "list", "card",
)

#: built-in type names (type namespace)
BUILTIN_TYPES: Final = ("int", "float", "str", "bool", "Unit", "Element", "List", "Option", "Set", "Map", "Result")

#: methods by receiver head; the receiver's type arguments bind ``T`` (``K``, ``V`` for maps)
METHODS: Final[dict[str, dict[str, Sig]]] = {
    "str": _table({"split": "fn(sep: str) to List[str]", "contains": "fn(s: str) to bool"}),
    "List": _table({
        "push": "fn(x: T) to Unit",
        "map": "fn(f: fn(T) to U) to List[U]",
        "join": "fn(sep: str) to str",
    }),
    "Map": _table({"get": "fn(k: K) to Option[V]"}),
    "Option": _table({"unwrap_or": "fn(d: T) to T"}),
    "Result": _table({"unwrap_or": "fn(d: T) to T"}),
}

#: which generic keys a receiver's type arguments bind, by head
RECEIVER_KEYS: Final[dict[str, tuple[int, ...]]] = {
    "List": (_LETTERS["T"],), "Set": (_LETTERS["T"],), "Option": (_LETTERS["T"],),
    "Result": (_LETTERS["T"], _LETTERS["E"]), "Map": (_LETTERS["K"], _LETTERS["V"]),
}

#: methods that need a particular element type: (head, method) -> required first type argument
METHOD_REQUIRES: Final[dict[tuple[str, str], Type]] = {("List", "join"): STR}

#: methods that mutate their receiver (need a ``let mut`` root, E0509)
MUTATING_METHODS: Final = frozenset({"push"})

#: the standard library: ``std.<module>.<member>``
STD: Final[dict[str, dict[str, Sig]]] = {
    "fs": _table({
        "read": "fn(path: str) to Result[str]",
        "write": "fn(path: str, text: str) to Result[Unit]",
        "exists": "fn(path: str) to bool",
        "list": "fn(dir: str) to Result[List[str]]",
    }),
    "process": _table({"run": "fn(cmd: str, args: List[str]) to Result[str]"}),
    "env": _table({"get": "fn(name: str) to Option[str]"}),
    "json": _table({
        "parse": "fn(text: str) to Result[Map[str, str]]",
        "dump": "fn(value: any) to str",
    }),
    "http": _table({
        "get": "fn(url: str) to Result[str]",
        "post": "fn(url: str, body: str) to Result[str]",
    }),
    "time": _table({"now": "fn() to int", "sleep": "fn(ms: int) to Unit"}),
}


def std_member(path: tuple[str, ...]) -> Sig | dict[str, Sig] | dict[str, dict[str, Sig]] | None:
    """Look up ``std.a.b`` by its segments after ``std``: a module table, a function, or ``None``."""
    node: object = STD
    for seg in path:
        if not isinstance(node, dict) or seg not in node:
            return None
        node = node[seg]
    return node  # type: ignore[return-value]
