"""Checker types (spec §4): representation, printing in source syntax, and unification.

Types are frozen values; inference variables are bound in a :class:`Unifier`'s substitution,
never by mutating a type. Unknowns (opaque ``?`` and unbound variables) print as ``?``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TCon:
    """A built-in type constructor: ``int float str bool Unit Element List Option Set Map Result``."""

    name: str
    args: tuple[Type, ...] = ()


@dataclass(frozen=True, slots=True)
class TFn:
    """``fn(A, B) to C``."""

    params: tuple[Type, ...]
    ret: Type


@dataclass(frozen=True, slots=True)
class TRecord:
    """An anonymous structural record (a record literal's own type)."""

    fields: tuple[tuple[str, Type], ...]


@dataclass(frozen=True, slots=True)
class TNamedRec:
    """A declared record type ``type Item = {...}``: structural, fields looked up by ``def_id``."""

    name: str
    def_id: int


@dataclass(frozen=True, slots=True)
class TSum:
    """A declared sum type (nominal)."""

    name: str
    def_id: int


@dataclass(frozen=True, slots=True)
class TActor:
    """An actor handle type (``spawn(A)`` has type ``A``)."""

    name: str
    def_id: int


@dataclass(frozen=True, slots=True)
class TParam:
    """A generic parameter, rigid inside its function; ``key`` is unique per declaration."""

    name: str
    key: int


@dataclass(frozen=True, slots=True)
class TVar:
    """An inference variable, bound in :attr:`Unifier.subst`."""

    id: int


@dataclass(frozen=True, slots=True)
class TUnknown:
    """The opaque type ``?``: unifies with anything, unchecked."""


@dataclass(frozen=True, slots=True)
class TNever:
    """The type of an expression that always returns (``ret``, ``break``...): fits any type."""


@dataclass(frozen=True, slots=True)
class TAny:
    """Prelude-only parameter type ``any`` (``print``, ``str``): accepts every type."""


@dataclass(frozen=True, slots=True)
class TOneOf:
    """Prelude-only parameter type accepting a few type heads (``len``: ``str|List|Map|Set``)."""

    heads: tuple[str, ...]


Type = TCon | TFn | TRecord | TNamedRec | TSum | TActor | TParam | TVar | TUnknown | TNever | TAny | TOneOf

INT = TCon("int")
FLOAT = TCon("float")
STR = TCon("str")
BOOL = TCon("bool")
UNIT = TCon("Unit")
ELEMENT = TCon("Element")
UNKNOWN = TUnknown()
NEVER = TNever()
ANY = TAny()

#: built-in type names -> (min, max) type-argument counts (``Result[T]`` = ``Result[T, str]``)
BUILTIN_ARITY: dict[str, tuple[int, int]] = {
    "int": (0, 0), "float": (0, 0), "str": (0, 0), "bool": (0, 0), "Unit": (0, 0),
    "Element": (0, 0), "List": (1, 1), "Option": (1, 1), "Set": (1, 1), "Map": (2, 2),
    "Result": (1, 2), "FileRecord": (0, 0), "ProcessOutput": (0, 0), "Regex": (0, 0), "Match": (0, 0),
}


def list_of(t: Type) -> TCon:
    """``List[t]``."""
    return TCon("List", (t,))


def option_of(t: Type) -> TCon:
    """``Option[t]``."""
    return TCon("Option", (t,))


def result_of(t: Type, e: Type = STR) -> TCon:
    """``Result[t, e]``."""
    return TCon("Result", (t, e))


#: record fields by declaration id (declared records are looked up lazily: they may recurse)
RecordFields = Callable[[int], "tuple[tuple[str, Type], ...]"]


class Unifier:
    """A substitution for inference variables plus structural/nominal unification.

    Attributes:
        subst: variable id -> bound type.
        record_fields: field lookup for :class:`TNamedRec` (declared records).
    """

    def __init__(self, record_fields: RecordFields) -> None:
        self.subst: dict[int, Type] = {}
        self.record_fields = record_fields
        self._next = 0
        self._trail: list[int] = []

    def fresh(self) -> TVar:
        """A new unbound variable."""
        self._next += 1
        return TVar(self._next)

    def resolve(self, t: Type) -> Type:
        """Follow variable bindings at the top of ``t`` (not inside it)."""
        while isinstance(t, TVar):
            bound = self.subst.get(t.id)
            if bound is None:
                return t
            t = bound
        return t

    def fields(self, t: Type) -> tuple[tuple[str, Type], ...] | None:
        """The fields of a record type (declared or anonymous), else ``None``."""
        t = self.resolve(t)
        if isinstance(t, TRecord):
            return t.fields
        if isinstance(t, TNamedRec):
            return self.record_fields(t.def_id)
        return None

    def unify(self, a: Type, b: Type) -> bool:
        """Make ``a`` and ``b`` equal, binding variables; on failure nothing stays bound.

        ``?``, ``any`` and *never* unify with anything; records compare field names and types.
        """
        mark = len(self._trail)
        if self._unify(a, b, set(), 0):
            return True
        for var in self._trail[mark:]:
            self.subst.pop(var, None)
        del self._trail[mark:]
        return False

    def _bind(self, v: TVar, t: Type) -> bool:
        if isinstance(t, TVar) and t.id == v.id:
            return True
        if self._occurs(v.id, t, 0):
            return False
        self.subst[v.id] = t
        self._trail.append(v.id)
        return True

    def _occurs(self, vid: int, t: Type, depth: int) -> bool:
        t = self.resolve(t)
        if depth > 200:
            return True
        if isinstance(t, TVar):
            return t.id == vid
        if isinstance(t, TCon):
            return any(self._occurs(vid, x, depth + 1) for x in t.args)
        if isinstance(t, TFn):
            return any(self._occurs(vid, x, depth + 1) for x in (*t.params, t.ret))
        if isinstance(t, TRecord):
            return any(self._occurs(vid, x, depth + 1) for _, x in t.fields)
        return False

    def _unify(self, a: Type, b: Type, seen: set[tuple[int, int]], depth: int) -> bool:
        a, b = self.resolve(a), self.resolve(b)
        if a is b or a == b:
            return True
        if depth > 200:
            return False
        if isinstance(a, TNever) or isinstance(b, TNever):
            return True  # never fits any type and leaves variables unbound
        if isinstance(a, TVar):
            return self._bind(a, b)
        if isinstance(b, TVar):
            return self._bind(b, a)
        if isinstance(a, (TUnknown, TAny)) or isinstance(b, (TUnknown, TAny)):
            return True
        if isinstance(a, TOneOf) or isinstance(b, TOneOf):
            one, other = (a, b) if isinstance(a, TOneOf) else (b, a)
            assert isinstance(one, TOneOf)
            return isinstance(other, TCon) and other.name in one.heads
        if isinstance(a, TCon) and isinstance(b, TCon):
            return (
                a.name == b.name
                and len(a.args) == len(b.args)
                and all(self._unify(x, y, seen, depth + 1) for x, y in zip(a.args, b.args))
            )
        if isinstance(a, TFn) and isinstance(b, TFn):
            return (
                len(a.params) == len(b.params)
                and all(self._unify(x, y, seen, depth + 1) for x, y in zip(a.params, b.params))
                and self._unify(a.ret, b.ret, seen, depth + 1)
            )
        if isinstance(a, (TRecord, TNamedRec)) and isinstance(b, (TRecord, TNamedRec)):
            if isinstance(a, TNamedRec) and isinstance(b, TNamedRec):
                key = (a.def_id, b.def_id)
                if key in seen:  # coinductive: assume equal while comparing recursive records
                    return True
                seen = seen | {key}
            fa, fb = self.fields(a) or (), self.fields(b) or ()
            if len(fa) != len(fb):
                return False
            db = dict(fb)
            return all(n in db and self._unify(t, db[n], seen, depth + 1) for n, t in fa)
        return False

    def contains_unknown(self, t: Type, depth: int = 0) -> bool:
        """True if ``t`` holds ``?`` anywhere (values derived from opaque imports)."""
        t = self.resolve(t)
        if isinstance(t, TUnknown):
            return True
        if depth > 50:
            return False
        if isinstance(t, TCon):
            return any(self.contains_unknown(x, depth + 1) for x in t.args)
        if isinstance(t, TFn):
            return any(self.contains_unknown(x, depth + 1) for x in (*t.params, t.ret))
        return False

    def show(self, t: Type) -> str:
        """Print ``t`` in source syntax; unknowns and unbound variables print as ``?``."""
        return self._show(t, 0)

    def _show(self, t: Type, depth: int) -> str:
        t = self.resolve(t)
        if depth > 30:
            return "…"
        if isinstance(t, TCon):
            if not t.args:
                return t.name
            return f"{t.name}[{', '.join(self._show(x, depth + 1) for x in t.args)}]"
        if isinstance(t, TFn):
            params = ", ".join(self._show(x, depth + 1) for x in t.params)
            ret = self.resolve(t.ret)
            tail = "" if ret == UNIT else f" to {self._show(ret, depth + 1)}"
            return f"fn({params}){tail}"
        if isinstance(t, TRecord):
            inner = ", ".join(f"{n}: {self._show(x, depth + 1)}" for n, x in t.fields)
            return "{ " + inner + " }" if inner else "{}"
        if isinstance(t, (TNamedRec, TSum, TActor, TParam)):
            return t.name
        if isinstance(t, TNever):
            return "never"
        if isinstance(t, TAny):
            return "any"
        if isinstance(t, TOneOf):
            return "|".join(t.heads)
        return "?"

    def substitute(self, t: Type, mapping: dict[int, Type], depth: int = 0) -> Type:
        """Replace generic parameters (by key) in ``t``; used to instantiate a signature."""
        if not mapping or depth > 100:
            return t
        if isinstance(t, TParam):
            return mapping.get(t.key, t)
        if isinstance(t, TCon) and t.args:
            return TCon(t.name, tuple(self.substitute(x, mapping, depth + 1) for x in t.args))
        if isinstance(t, TFn):
            return TFn(
                tuple(self.substitute(x, mapping, depth + 1) for x in t.params),
                self.substitute(t.ret, mapping, depth + 1),
            )
        if isinstance(t, TRecord):
            return TRecord(tuple((n, self.substitute(x, mapping, depth + 1)) for n, x in t.fields))
        return t


def is_con(u: Unifier, t: Type, name: str) -> bool:
    """True if ``t`` resolves to the built-in constructor ``name``."""
    t = u.resolve(t)
    return isinstance(t, TCon) and t.name == name


def is_loose(u: Unifier, t: Type) -> bool:
    """True for types that check anything: ``?``, *never* and unbound variables."""
    return isinstance(u.resolve(t), (TUnknown, TNever, TVar))
