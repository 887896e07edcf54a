"""The prelude and standard library (spec §5, §9): builtins, constructors, methods, view
elements and ``std.*`` members, written as Vox signatures and parsed once at import.

Generic letters ``T U K V E`` in these signatures are instantiated afresh per use.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from vox_lang.types import ANY, BOOL, INT, NEVER, STR, TCon, TFn, TNamedRec, TOneOf, TParam, Type


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

#: prelude record types (spec §10 U2): name -> (negative def id for :class:`TNamedRec`, fields)
PRELUDE_RECORDS: Final[dict[str, tuple[int, tuple[tuple[str, Type], ...]]]] = {
    "FileRecord": (-101, (
        ("name", STR), ("path", STR), ("size", INT), ("modified_ms", INT),
        ("is_dir", BOOL), ("is_file", BOOL), ("is_symlink", BOOL),
    )),
    "ProcessOutput": (-102, (("exit", INT), ("stdout", STR), ("stderr", STR))),
}

#: fields of a prelude record by its :class:`TNamedRec` def id
PRELUDE_RECORD_FIELDS: Final = {rid: fields for rid, fields in PRELUDE_RECORDS.values()}


def prelude_type(name: str) -> Type:
    """The type of a prelude type name without arguments: a prelude record
    (:class:`TNamedRec`), else the constructor ``TCon(name)`` (``Regex``, ``Match``...)."""
    if name in PRELUDE_RECORDS:
        return TNamedRec(name, PRELUDE_RECORDS[name][0])
    return TCon(name)
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
        if name == "never":
            return NEVER
        if name in PRELUDE_RECORDS:
            return prelude_type(name)
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
BUILTIN_TYPES: Final = (
    "int", "float", "str", "bool", "Unit", "Element", "List", "Option", "Set", "Map", "Result",
    "FileRecord", "ProcessOutput", "Regex", "Match",
)

#: methods by receiver head; the receiver's type arguments bind ``T`` (``K``, ``V`` for maps)
METHODS: Final[dict[str, dict[str, Sig]]] = {
    "str": _table({
        "split": "fn(sep: str) to List[str]",
        "contains": "fn(s: str) to bool",
        # spec §10 U8
        "trim": "fn() to str",
        "to_upper": "fn() to str",
        "to_lower": "fn() to str",
        "replace": "fn(from: str, to: str) to str",
        "starts_with": "fn(s: str) to bool",
        "ends_with": "fn(s: str) to bool",
        "slice": "fn(start: int, end: int) to str",
        "char_at": "fn(i: int) to Option[str]",
        "index_of": "fn(s: str) to Option[int]",
    }),
    "List": _table({
        "push": "fn(x: T) to Unit",
        "map": "fn(f: fn(T) to U) to List[U]",
        "join": "fn(sep: str) to str",
        "get": "fn(i: int) to Option[T]",  # §10 U8
    }),
    "Map": _table({
        "get": "fn(k: K) to Option[V]",
        # spec §10 U5: JSON readers, on Map[str, str] only (METHOD_REQUIRES)
        "get_str": "fn(key: str) to Result[str]",
        "get_int": "fn(key: str) to Result[int]",
        "get_float": "fn(key: str) to Result[float]",
        "get_bool": "fn(key: str) to Result[bool]",
        "get_object": "fn(key: str) to Result[Map[str, str]]",
    }),
    "Option": _table({"unwrap_or": "fn(d: T) to T"}),
    "Result": _table({"unwrap_or": "fn(d: T) to T"}),
    # spec §10 U2: opaque prelude types
    "Regex": _table({
        "matches": "fn(s: str) to bool",
        "find": "fn(s: str) to Option[Match]",
        "find_all": "fn(s: str) to List[Match]",
    }),
    "Match": _table({"group": "fn(i: int) to Option[str]"}),
}

#: which generic keys a receiver's type arguments bind, by head
RECEIVER_KEYS: Final[dict[str, tuple[int, ...]]] = {
    "List": (_LETTERS["T"],), "Set": (_LETTERS["T"],), "Option": (_LETTERS["T"],),
    "Result": (_LETTERS["T"], _LETTERS["E"]), "Map": (_LETTERS["K"], _LETTERS["V"]),
}

#: methods that need particular type arguments: (head, method) -> the receiver's required
#: leading type arguments (``join`` on ``List[str]``, the JSON readers on ``Map[str, str]``)
METHOD_REQUIRES: Final[dict[tuple[str, str], tuple[Type, ...]]] = {
    ("List", "join"): (STR,),
    **{("Map", m): (STR, STR) for m in ("get_str", "get_int", "get_float", "get_bool", "get_object")},
}

#: methods that mutate their receiver (need a ``let mut`` root, E0509)
MUTATING_METHODS: Final = frozenset({"push"})

#: the standard library: ``std.<module>.<member>``
#: the standard library: ``std.<module>.<member>`` (spec §5 and §10 U2)
STD: Final[dict[str, dict[str, Sig]]] = {
    "fs": _table({
        "read": "fn(path: str) to Result[str]",
        "write": "fn(path: str, text: str) to Result[Unit]",
        "exists": "fn(path: str) to bool",
        "list": "fn(dir: str) to Result[List[str]]",
        "read_bytes": "fn(path: str) to Result[str]",
        "remove": "fn(path: str) to Result[str]",
        "mkdir": "fn(path: str) to Result[str]",
        "is_file": "fn(path: str) to bool",
        "is_dir": "fn(path: str) to bool",
        "canonicalize": "fn(path: str) to Result[str]",
        "list_dir": "fn(dir: str) to Result[List[str]]",
        "glob": "fn(pattern: str) to Result[List[str]]",
        "list_dir_detailed": "fn(dir: str) to Result[List[FileRecord]]",
        "stat": "fn(path: str) to Result[FileRecord]",
        "remove_dir_all": "fn(path: str) to Result[Unit]",
        "copy": "fn(from: str, to: str) to Result[Unit]",
    }),
    "path": _table({
        "join": "fn(a: str, b: str) to str",
        "join_many": "fn(parts: List[str]) to str",
        "basename": "fn(p: str) to str",
        "dirname": "fn(p: str) to str",
        "extension": "fn(p: str) to str",
    }),
    "process": _table({
        "run": "fn(cmd: str, args: List[str]) to Result[str]",
        "which": "fn(name: str) to Option[str]",
        "run_capture_lines": "fn(cmd: str, args: List[str]) to Result[List[str]]",
        "run_ex": "fn(cmd: str, args: List[str], cwd: str, env: List[str]) to Result[int]",
        "run_capture": "fn(cmd: str, args: List[str]) to Result[ProcessOutput]",
        "run_capture_ex": "fn(cmd: str, args: List[str], cwd: str, env: List[str]) to Result[ProcessOutput]",
        "run_capture_json": "fn(cmd: str, args: List[str]) to Result[Map[str, str]]",
        "spawn_background": "fn(cmd: str, args: List[str]) to Result[int]",
        "exec": "fn(cmd: str, args: List[str]) to Result[Unit]",
        "exit": "fn(code: int) to never",
    }),
    "env": _table({"get": "fn(name: str) to Option[str]"}),
    "json": _table({
        "parse": "fn(text: str) to Result[Map[str, str]]",
        "dump": "fn(value: any) to str",
        "read_str": "fn(text: str, key: str) to Result[str]",
        "read_f64": "fn(text: str, key: str) to Result[float]",
        "quote": "fn(s: str) to str",
    }),
    "http": _table({
        "get": "fn(url: str) to Result[str]",
        "post": "fn(url: str, body: str) to Result[str]",
        "get_text": "fn(url: str) to Result[str]",
        "post_json": "fn(url: str, body: str) to Result[str]",
    }),
    "time": _table({"now": "fn() to int", "sleep": "fn(ms: int) to Unit", "now_ms": "fn() to int"}),
    "crypto": _table({
        "hash_fast": "fn(s: str) to str",
        "hash_secure": "fn(s: str) to str",
        "uuid": "fn() to str",
    }),
    "log": _table({
        "debug": "fn(msg: str) to Unit",
        "info": "fn(msg: str) to Unit",
        "warn": "fn(msg: str) to Unit",
        "error": "fn(msg: str) to Unit",
    }),
    "regex": _table({"compile": "fn(pattern: str) to Result[Regex]"}),
    "csv": _table({
        "parse": "fn(text: str) to Result[List[List[str]]]",
        "parse_records": "fn(text: str) to Result[List[Map[str, str]]]",
        "render": "fn(rows: List[List[str]]) to Result[str]",
    }),
    "toml": _table({
        "parse": "fn(text: str) to Result[Map[str, str]]",
        "render": "fn(value: any) to Result[str]",
    }),
    "yaml": _table({
        "parse": "fn(text: str) to Result[Map[str, str]]",
        "render": "fn(value: any) to Result[str]",
    }),
    "agentos": _table({"mutation_kind_for_tool": "fn(tool: str) to str"}),
}


def std_member(path: tuple[str, ...]) -> Sig | dict[str, Sig] | dict[str, dict[str, Sig]] | None:
    """Look up ``std.a.b`` by its segments after ``std``: a module table, a function, or ``None``."""
    if not path:
        return STD
    module = STD.get(path[0])
    if module is None or len(path) == 1:
        return module
    return module.get(path[1]) if len(path) == 2 else None
