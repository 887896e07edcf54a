"""Frames and control flow of compiled code.

A frame is a Python list: slot 0 holds the enclosing frame (for lambdas), slot 1 the return
value, parameters follow, then every other local. Top-level ``let``s live in one globals list.
Statements return ``None`` or a signal (:data:`BRK`, :data:`CNT`, :data:`RET`); inside an
expression (a block used as a value) control flow travels as the exceptions below instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

BRK: Final = 1
CNT: Final = 2
RET: Final = 3

RET_SLOT: Final = 1
FIRST_SLOT: Final = 2


class _Missing:
    """An omitted defaulted argument (the callee evaluates the default)."""

    __slots__ = ()


MISSING: Final = _Missing()


class Internal(Exception):
    """A HIR shape the executor does not handle (a bug here, reported as an internal error)."""


class RetExc(Exception):
    """``ret`` (or ``?``) inside an expression: caught by the function being returned from."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


class BrkExc(Exception):
    """``break`` inside an expression: caught by the innermost loop."""


class CntExc(Exception):
    """``continue`` inside an expression: caught by the innermost loop."""


@dataclass(eq=False)
class FnScope:
    """Slots of one function-like body while it is compiled.

    Attributes:
        level: lambda nesting (a declaration's body is 1, the script 0).
        slots: definition id → slot index.
        size: slots used so far.
        parent: the enclosing body (lambdas only).
    """

    level: int
    parent: FnScope | None = None
    slots: dict[int, int] = field(default_factory=dict)
    size: int = FIRST_SLOT

    def bind(self, def_id: int) -> int:
        """The slot of ``def_id`` in this body (allocated on first use)."""
        slot = self.slots.get(def_id)
        if slot is None:
            slot = self.size
            self.slots[def_id] = slot
            self.size += 1
        return slot

    def temp(self) -> int:
        """A fresh slot bound to no variable (scratch space of one expression)."""
        self.size += 1
        return self.size - 1

    def locate(self, def_id: int) -> tuple[int, int] | None:
        """``(hops, slot)`` of ``def_id`` seen from this body, or ``None`` if it is unbound."""
        scope: FnScope | None = self
        hops = 0
        while scope is not None:
            if def_id in scope.slots:
                return hops, scope.slots[def_id]
            scope = scope.parent
            hops += 1
        return None
