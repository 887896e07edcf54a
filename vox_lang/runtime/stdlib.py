"""The standard library at run time (spec §5, §10 U2/U5) and its capabilities (§11).

``std.fs``, ``std.process``, ``std.http`` and ``std.env`` act on the host only when the run was
granted ``fs``, ``process``, ``net`` or ``env``; without the grant a member returning ``Result``
gives ``Error("capability fs not granted")`` and any other member is R0008. The other modules
are pure (``json path crypto regex csv``) or read the clock (``time``). Members are looked up by
their key (``std.fs.read``); whether one returns ``Result`` is read from the prelude signature.
A host member that returns past the run's deadline (its child killed, its read given up there)
ends the run with R0010.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from vox_lang.runtime.errors import VoxFault
from vox_lang.runtime.limits import RunState
from vox_lang.runtime.stdlib_config import TOML, YAML
from vox_lang.runtime.stdlib_host import ENV, FS, HTTP, PROCESS
from vox_lang.runtime.stdlib_pure import (
    AGENTOS,
    CRYPTO,
    CSV,
    JSON,
    LOG,
    OPAQUE_METHODS,
    PATH,
    REGEX,
    TIME,
    Impl,
    json_object,
    json_scalar,
)
from vox_lang.runtime.values import Err, FnVal
from vox_lang.source import Span

__all__ = ["MODULE_CAPABILITY", "OPAQUE_METHODS", "STD_IMPLS", "json_object", "json_scalar", "returns_result",
           "std_function", "std_value"]

#: std module → the capability that unlocks it
MODULE_CAPABILITY: Final = {"fs": "fs", "process": "process", "http": "net", "env": "env"}

#: ``std.<module>`` → member → implementation
STD_IMPLS: Final[dict[str, dict[str, Impl]]] = {
    "fs": FS, "process": PROCESS, "http": HTTP, "env": ENV, "json": JSON, "time": TIME, "path": PATH,
    "crypto": CRYPTO, "log": LOG, "regex": REGEX, "csv": CSV, "agentos": AGENTOS, "toml": TOML, "yaml": YAML,
}


def returns_result(key: str) -> bool:
    """True when the prelude signature of ``std.m.f`` returns ``Result``."""
    from vox_lang.prelude import Sig, std_member
    from vox_lang.types import TCon

    sig = std_member(tuple(key.split(".")[1:]))
    return isinstance(sig, Sig) and isinstance(sig.ret, TCon) and sig.ret.name == "Result"


def std_function(key: str, rt: RunState) -> Callable[[list[Any], Span], Any]:
    """The run-time implementation of ``std.m.f`` with its capability check applied.

    A member without an implementation (a future prelude entry) is R0008 when called.
    """
    parts = key.split(".")
    module, member = (parts[1], parts[2]) if len(parts) == 3 else ("", key)
    impl = STD_IMPLS.get(module, {}).get(member)
    cap = MODULE_CAPABILITY.get(module)
    if impl is None:
        def missing(args: list[Any], span: Span) -> Any:
            raise VoxFault("R0008", span, detail=f"`{key}` is not available at run time")
        return missing
    if cap is not None and not rt.granted(cap):
        if returns_result(key):
            refused = Err(f"capability {cap} not granted")
            return lambda args, span: refused
        name = f"std.{module}.{member}"

        def refuse(args: list[Any], span: Span) -> Any:
            raise VoxFault("R0008", span, detail=f"`{name}` needs the {cap} capability", cap=cap)
        return refuse
    found = impl
    if cap is None:
        return lambda args, span: found(rt, args, span)

    def host(args: list[Any], span: Span) -> Any:
        # a host operation is cut off at the run's deadline (the child killed, the read given up);
        # that is the wall-clock limit ending the run (R0010), not an ``Error`` the program could
        # carry on past, even when the call is the program's last statement
        entered = False
        try:
            with rt.budget.guard:  # the watchdog decides under it: an interrupt comes before this, or never
                rt.budget.shielded += 1  # it stops at the deadline itself: no watchdog in the middle of it
                entered = True
            out = found(rt, args, span)
        finally:
            if entered:
                rt.budget.shielded -= 1
        rt.budget.check_time(span)
        return out
    return host


def std_value(key: str, rt: RunState, span: Span) -> FnVal:
    """A std member used as a value."""
    fn = std_function(key, rt)
    return FnVal(key.split(".")[-1], lambda args: fn(args, span))
