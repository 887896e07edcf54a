"""The text of values (spec §11 "Text of values": ``str(x)``, ``print``), written with an explicit
stack of what is still to write, never by recursion: a value nested 200,000 deep (a linked list
built in a loop) gets its whole text, never a cut one. Their JSON text (``json.dump``) is
:mod:`vox_lang.runtime.jsontext`, written the same way with :class:`Writer`.

Text is also bounded: a value whose parts are shared (``Pair(l, l)`` built 60 times over) is
small in memory but has a text of 2**60 parts, so every writer here takes a ``limit`` in
characters and raises :class:`TextTooLong` as soon as the text passes it, and a ``charge``
callback it reports its progress to (:meth:`~vox_lang.runtime.limits.Budget.charge`: the time
limit holds in the middle of a long text). Callers turn :class:`TextTooLong` into the run's
size-cap error (R0006).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, Final

from vox_lang.runtime.values import (
    NONE,
    SCALARS,
    ActorVal,
    Element,
    Err,
    FnVal,
    KeyList,
    Ok,
    Record,
    Some,
    Variant,
    VSet,
)

Charge = Callable[[int], None]

#: characters written between two reports to ``charge``
CHARGE_EVERY: Final = 65_536
_LISTS: Final = (list, KeyList)
#: true when every type of an iterable of types is a scalar one
_ALL_SCALARS: Final = SCALARS.issuperset
#: characters of a value a runtime error message shows at most (:func:`show_cut`)
SHOWN_IN_MESSAGES: Final = 200


class TextTooLong(Exception):
    """The text being written passed its ``limit`` (characters); nothing more was written.

    Attributes:
        limit: the limit passed.
        start: the text's first ``limit`` characters, as far as they were written.
    """

    def __init__(self, limit: int, start: str = "") -> None:
        super().__init__(f"text longer than {limit:,} characters")
        self.limit = limit
        self.start = start


class Lit(str):
    """A piece of literal text on a writer's stack (a plain ``str`` there is a value to write)."""

    __slots__ = ()


SEP, _COLON, _SPACE = Lit(", "), Lit(": "), Lit(" ")
CLOSE_LIST, CLOSE_MAP, _CLOSE_CALL = Lit("]"), Lit("}"), Lit(")")
_CLOSE_SET, _CLOSE_RECORD, _CLOSE_KIDS = Lit("])"), Lit(" }"), Lit(" }")


def quote(s: str) -> str:
    """A ``str`` inside a collection: double-quoted, with ``\\" \\\\ \\n \\t`` escapes."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t") + '"'


def show_float(x: float) -> str:
    """The shortest text that reads back to ``x``, always with a ``.`` or an exponent."""
    return repr(x)  # Python's repr is the shortest round-trip form: 1.0 0.1 2.5e-07 1e+20 inf nan


def _scalar(x: Any) -> str:
    """The text of a scalar inside a collection."""
    t = type(x)
    if t is str:
        return quote(x)
    if t is bool:
        return "true" if x else "false"
    if t is float:
        return repr(x)
    return str(x)


class Writer:
    """Pieces of text with their running length, checked against ``limit`` and reported to
    ``charge`` every :data:`CHARGE_EVERY` characters (one comparison a piece until then)."""

    __slots__ = ("charge", "charged", "limit", "mark", "parts", "size")

    def __init__(self, limit: int | None, charge: Charge | None) -> None:
        self.parts: list[str] = []
        self.size = 0
        self.limit = sys.maxsize if limit is None else limit
        self.charge = charge
        self.charged = 0
        self.mark = min(self.limit, CHARGE_EVERY)  # the size at which :meth:`check` runs next

    def add(self, piece: str) -> None:
        """Write one piece."""
        self.parts.append(piece)
        self.size += len(piece)
        if self.size > self.mark:
            self.check()

    def check(self) -> None:
        """Past the limit: :class:`TextTooLong`; else report what was written since the last report."""
        if self.size > self.limit:
            raise TextTooLong(self.limit, self.text()[:self.limit])
        if self.charge is not None:
            self.charge(self.size - self.charged)
        self.charged = self.size
        self.mark = min(self.limit, self.size + CHARGE_EVERY)

    def items(self, opening: str, items: Any, flat: Callable[[Any], str | None], closing: str) -> bool:
        """Write a collection whose items all have a one-piece text (``flat`` gives it, or
        ``None``) in one piece and return True; return False, writing nothing, at the first
        item without one. A list of scalars is written by ``map``, its strings measured first,
        so a list holding one long string many times is refused (past the limit) before it is
        joined."""
        first = next(iter(items))
        room = self.limit - self.size
        types = set(map(type, items)) if type(first) in SCALARS else None
        if types is not None and types <= SCALARS:
            if str in types:
                size = sum(map(len, items)) if len(types) == 1 else sum(len(x) for x in items if type(x) is str)
                if size > room:
                    raise TextTooLong(self.limit, self.text())
            texts: Any = map(flat, items)
        elif flat(first) is None:
            return False
        else:
            texts = []
            size = 0
            for x in items:
                text = flat(x)
                if text is None:
                    return False
                size += len(text) + 2
                if size > room:
                    raise TextTooLong(self.limit, self.text())
                texts.append(text)
        self.add(opening + ", ".join(texts) + closing)
        return True

    def text(self) -> str:
        """All written so far."""
        return "".join(self.parts)

    def run(self, v: Any, flat: Callable[[Any], str | None], expand: Expand) -> str:
        """Write ``v`` with an explicit stack and return all written: a :class:`Lit` on the stack
        is written as it is, a value whose text is one piece (``flat``) is written whole, any
        other value is handed to ``expand``, which writes its head and queues the rest."""
        add = self.add
        stack: list[Any] = [v]
        pop = stack.pop
        while stack:
            x = pop()
            if type(x) is Lit:
                add(x)
                continue
            piece = flat(x)
            if piece is not None:
                add(piece)
            else:
                expand(x, stack, self)
        return self.text()


#: ``expand(value, stack, writer)``: write the head of a value with no one-piece text, queue the rest
Expand = Callable[[Any, list[Any], Writer], None]


def push_items(stack: list[Any], items: Any, sep: str = SEP) -> None:
    """Queue ``items`` (values) on a writer's stack to be written in order, ``sep`` between them."""
    first = True
    for x in reversed(items):
        if not first:
            stack.append(sep)
        stack.append(x)
        first = False


def push_members(stack: list[Any], members: Any, sep: str = SEP) -> None:
    """Queue ``members`` on a writer's stack to be written in order, ``sep`` between them; each
    member is a tuple of stack entries in write order (its key's pieces, then its value)."""
    first = True
    for m in reversed(members):
        if not first:
            stack.append(sep)
        stack.extend(reversed(m))
        first = False


def _flat(x: Any) -> str | None:
    """The text of ``x`` inside a collection when it is one piece (a scalar, or an option,
    record or variant holding only scalars: the usual shapes), else ``None``."""
    t = type(x)
    if t is str:
        return quote(x)
    if t is int:
        return str(x)
    if t is Record:
        fields = x.fields
        if not _ALL_SCALARS(map(type, fields.values())):
            return None
        return "{ " + ", ".join(f"{k}: {_scalar(v)}" for k, v in fields.items()) + " }" if fields else "{}"
    if t is Variant:
        if not x.values:
            return str(x.name)
        return f"{x.name}(" + ", ".join(map(_scalar, x.values)) + ")" if _ALL_SCALARS(map(type, x.values)) else None
    if t is Some or t is Ok or t is Err:
        if type(x.value) not in SCALARS:
            return None
        return ("Some(" if t is Some else "Ok(" if t is Ok else "Error(") + _scalar(x.value) + ")"
    if t in SCALARS:
        return _scalar(x)
    if x is None:
        return "()"
    if x is NONE:
        return "None"
    if t is FnVal:
        return f"<fn {x.name}>"
    if t is ActorVal:
        return f"<actor {x.name}>"
    if t in _LISTS or t is VSet or t is dict or t is Element:
        return None
    return f"<{t.__name__}>"


def show(v: Any, top: bool = True, limit: int | None = None, charge: Charge | None = None) -> str:
    """The text of a value (spec §11 "Text of values"); ``top`` is False inside collections
    (strings are then quoted).

    Raises:
        TextTooLong: the text is longer than ``limit`` characters (``None``: no limit).
    """
    text = v if top and type(v) is str else _flat(v)  # a scalar, or a flat option, record or variant
    if text is not None:
        if limit is not None and len(text) > limit:
            raise TextTooLong(limit, text[:limit])
        return text
    return Writer(limit, charge).run(v, _flat, _expand)


def _expand(x: Any, stack: list[Any], out: Writer) -> None:
    """:data:`Expand` for the text of values: a collection, option, record, variant or element
    whose text is more than one piece."""
    t = type(x)
    if t in _LISTS or t is VSet:
        opening, closing = ("[", CLOSE_LIST) if t is not VSet else ("set([", _CLOSE_SET)
        if not x:
            out.add(opening + closing)
        elif not out.items(opening, x, _flat, closing):
            out.add(opening)
            stack.append(closing)
            push_items(stack, list(x))
    elif t is dict:
        out.add("{")
        stack.append(CLOSE_MAP)
        push_members(stack, [(k, _COLON, val) for k, val in x.items()])
    elif t is Some or t is Ok or t is Err:
        out.add("Some(" if t is Some else "Ok(" if t is Ok else "Error(")
        stack.append(_CLOSE_CALL)
        stack.append(x.value)
    elif t is Record:
        out.add("{ ")
        stack.append(_CLOSE_RECORD)
        push_members(stack, [(Lit(f"{k}: "), val) for k, val in x.fields.items()])
    elif t is Variant:
        out.add(f"{x.name}(")
        stack.append(_CLOSE_CALL)
        push_items(stack, x.values)
    else:
        _push_element(stack, out.add, x)


def _push_element(stack: list[Any], add: Callable[[str], None], e: Element) -> None:
    """Write the head of ``column(gap=2) { heading(text="x") "in stock" }`` and queue the rest:
    one line; a text child is its quoted text."""
    if e.kind == "#text":
        add(quote(str(e.props[0][1])))
        return
    add(f"{e.kind}(")
    if e.children:
        stack.append(_CLOSE_KIDS)
        push_items(stack, e.children, _SPACE)
        stack.append(Lit(") { "))
    else:
        stack.append(_CLOSE_CALL)
    push_members(stack, [(Lit(f"{k}="), val) for k, val in e.props])


def show_cut(v: Any, n: int = SHOWN_IN_MESSAGES) -> str:
    """The text of ``v`` inside a collection for a message (R0005's missing key): its first ``n``
    characters and ``…`` when it is longer."""
    try:
        return show(v, False, limit=n)
    except TextTooLong as exc:
        return exc.start + "…"
