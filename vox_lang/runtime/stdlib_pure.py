"""The pure std modules at run time (spec §5, §10 U2/U5): ``json path crypto log regex csv
agentos`` and the clock (``time``); no capability needed (``toml`` and ``yaml``:
:mod:`vox_lang.runtime.stdlib_config`). Also the opaque ``Regex`` and ``Match`` values and their
methods.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import re
import subprocess
import time
import uuid
from collections.abc import Callable
from typing import Any, Final

import regex

from vox_lang.runtime.errors import VoxFault
from vox_lang.runtime.jsontext import json_text
from vox_lang.runtime.limits import RunState
from vox_lang.runtime.text import TextTooLong
from vox_lang.runtime.values import NONE, Err, Ok, Some
from vox_lang.source import Span

Impl = Callable[[RunState, list[Any], Span], Any]


def io_result(fn: Callable[[], Any]) -> Any:
    """Run an operation that may fail on bad input or on the host, giving ``Ok(value)`` or
    ``Error(message)``; an OS error names what it failed on (:func:`os_error_text`)."""
    try:
        return Ok(fn())
    except OSError as exc:
        return Err(os_error_text(exc))
    except (ValueError, subprocess.SubprocessError) as exc:
        return Err(str(exc))


def os_error_text(exc: OSError) -> str:
    """An OS error as a message naming the file it failed on: ``/tmp/d: Is a directory``,
    ``a.txt -> /tmp/d: Is a directory`` (two paths, as ``copy`` reports them); just the reason
    when the error names no file."""
    reason = exc.strerror or str(exc)
    names = [str(n) for n in (exc.filename, exc.filename2) if n is not None]
    return f"{' -> '.join(names)}: {reason}" if names and exc.strerror else reason


# --------------------------------------------------------------------------- json


def json_object(text: str) -> Any:
    """``json.parse``: one entry per member of the top-level object, valued by its text (§10 U5)."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        return Err(f"invalid JSON: {exc}")
    if not isinstance(data, dict):
        return Err("JSON text is not an object")
    return Ok(_member_texts(text))


_DECODER: Final = json.JSONDecoder()


def _skip_ws(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\n\r":
        i += 1
    return i


def _member_texts(text: str) -> dict[str, str]:
    """The members of a valid JSON object text, each valued by a string's contents or else its
    JSON text exactly as written (``[1,2]`` stays ``[1,2]``); a repeated key keeps its first
    position and last value, as ``json.loads`` does."""
    out: dict[str, str] = {}
    i = _skip_ws(text, _skip_ws(text, 0) + 1)  # past `{`
    while text[i] != "}":
        key, i = _DECODER.raw_decode(text, i)
        i = _skip_ws(text, _skip_ws(text, i) + 1)  # past `:`
        value, end = _DECODER.raw_decode(text, i)
        out[key] = value if isinstance(value, str) else text[i:end]
        i = _skip_ws(text, end)
        if text[i] == ",":
            i = _skip_ws(text, i + 1)
    return out


def json_scalar(text: str, kind: str) -> Any:
    """A member's text read as ``int``, ``float`` or ``bool`` (``Error`` when it is not one)."""
    try:
        value = json.loads(text)
    except ValueError:
        return Err(f"not {kind}: {text}")
    if kind == "int" and type(value) is int:
        return Ok(value)
    if kind == "float" and type(value) in (int, float):
        return Ok(float(value))
    if kind == "bool" and type(value) is bool:
        return Ok(value)
    return Err(f"not {kind}: {text}")


def _dump(rt: RunState, a: list[Any], span: Span) -> str:
    """``json.dump(value)``: the whole JSON text (:func:`~vox_lang.runtime.jsontext.json_text`),
    however deep the value; R0006 past ``max_len`` characters (a value whose parts are shared can stand
    for far more text than it takes in memory)."""
    budget = rt.budget
    try:
        return json_text(a[0], limit=budget.cfg.max_len, charge=lambda n: budget.charge(n, span))
    except TextTooLong as exc:
        budget.too_long(exc.limit + 1, "str", span)
        raise


def _charged(rt: RunState, n: int, span: Span, value: Any) -> Any:
    """``value``, made by working through ``n`` elements or characters (:meth:`Budget.charge`)."""
    rt.budget.charge(n, span)
    return value


def _read_key(text: str, key: str, kind: str) -> Any:
    obj = json_object(text)
    if type(obj) is Err:
        return obj
    if key not in obj.value:
        return Err(f"missing key {json.dumps(key)}")
    return Ok(obj.value[key]) if kind == "str" else json_scalar(obj.value[key], kind)


JSON: Final[dict[str, Impl]] = {
    "parse": lambda rt, a, sp: _charged(rt, len(a[0]), sp, json_object(a[0])),
    "dump": _dump,
    "read_str": lambda rt, a, sp: _read_key(a[0], a[1], "str"),
    "read_f64": lambda rt, a, sp: _read_key(a[0], a[1], "float"),
    "quote": lambda rt, a, sp: json.dumps(a[0], ensure_ascii=False),
}

# --------------------------------------------------------------------------- time, path, crypto, log


def _sleep(rt: RunState, a: list[Any], span: Span) -> None:
    seconds = max(a[0], 0) / 1000
    left = rt.budget.time_left()
    time.sleep(min(seconds, left))
    if seconds > left:
        rt.budget.check_time(span)
        raise VoxFault("R0010", span, detail=f"{rt.budget.overtime()} (sleep({a[0]}) would end past it)")


TIME: Final[dict[str, Impl]] = {
    "now": lambda rt, a, sp: int(time.time()),
    "now_ms": lambda rt, a, sp: int(time.time() * 1000),
    "sleep": _sleep,
}


def _join_many(rt: RunState, parts: list[str], span: Span) -> str:
    """``path.join_many(parts)``; R0006 past ``max_len`` characters (measured before joining)."""
    size = sum(map(len, parts)) + len(parts)
    rt.budget.too_long(size, "str", span)
    rt.budget.charge(size, span)
    return os.path.join(*parts) if parts else ""


PATH: Final[dict[str, Impl]] = {
    "join": lambda rt, a, sp: os.path.join(a[0], a[1]),
    "join_many": lambda rt, a, sp: _join_many(rt, a[0], sp),
    "basename": lambda rt, a, sp: os.path.basename(a[0]),
    "dirname": lambda rt, a, sp: os.path.dirname(a[0]),
    "extension": lambda rt, a, sp: os.path.splitext(a[0])[1].lstrip("."),
}

CRYPTO: Final[dict[str, Impl]] = {
    "hash_fast": lambda rt, a, sp: hashlib.blake2b(a[0].encode(), digest_size=8).hexdigest(),
    "hash_secure": lambda rt, a, sp: hashlib.sha256(a[0].encode()).hexdigest(),
    "uuid": lambda rt, a, sp: str(uuid.uuid4()),
}


def _log(level: str) -> Impl:
    """``log.<level>(msg)``: one ``[level] msg`` line on the run's log stream (stderr), never
    in the program's output."""
    return lambda rt, a, sp: rt.log(f"[{level}] {a[0]}", sp)


LOG: Final[dict[str, Impl]] = {name: _log(name) for name in ("debug", "info", "warn", "error")}

# --------------------------------------------------------------------------- regex, csv


class RegexVal:
    """An opaque ``Regex`` (``std.regex.compile``).

    ``pattern`` is compiled by the ``regex`` package, whose matching takes a ``timeout``: a
    backtracking blow-up (``^(a|aa)+$`` on ``"a"*40 + "b"``) holds the GIL inside ``re``, so
    neither the executor's deadline checks nor the runner's thread join could stop it
    (spec §11: the wall-clock limit must end every run with R0010).
    """

    __slots__ = ("pattern",)

    def __init__(self, pattern: Any) -> None:
        self.pattern = pattern


class MatchVal:
    """An opaque ``Match``: the groups of one match."""

    __slots__ = ("groups",)

    def __init__(self, m: Any) -> None:
        self.groups = (m.group(0), *m.groups())


def _compile(rt: RunState, a: list[Any], span: Span) -> Any:
    """``regex.compile``: the patterns Python's ``re`` accepts (validated by ``re``, so which
    patterns are ``Error`` and their messages are unchanged; ``regex`` alone would also accept
    ``\\p{L}``, ``(?|…)``, ``\\K``…), matched by ``regex`` (same results for those patterns)."""
    try:
        re.compile(a[0])
    except (re.error, RecursionError, OverflowError) as exc:
        return Err(f"invalid pattern: {exc}")
    try:
        return Ok(RegexVal(regex.compile(a[0])))
    except (regex.error, RecursionError, OverflowError, ValueError) as exc:
        return Err(f"invalid pattern: {exc}")


def _timed(rt: RunState, span: Span, run: Callable[[float], Any]) -> Any:
    """Run one match operation under what is left of the run's time limit: R0010 past it."""
    rt.budget.check_time(span)
    try:
        return run(max(rt.budget.time_left(), 0.001))
    except TimeoutError:
        raise VoxFault("R0010", span, detail=f"{rt.budget.overtime()} (in a regular-expression match)") from None


def _matches(rt: RunState, r: RegexVal, text: str, span: Span) -> bool:
    return _timed(rt, span, lambda t: r.pattern.search(text, timeout=t)) is not None


def _find(rt: RunState, r: RegexVal, text: str, span: Span) -> Any:
    m = _timed(rt, span, lambda t: r.pattern.search(text, timeout=t))
    return Some(MatchVal(m)) if m else NONE


def _find_all(rt: RunState, r: RegexVal, text: str, span: Span) -> list[MatchVal]:
    """Every match, R0006 once their groups hold more than ``max_len`` characters in all (a
    lookahead group, ``(?=(.*))``, captures the rest of the text at every position: n**2 / 2)."""
    cap = rt.budget.cfg.max_len

    def scan(timeout: float) -> list[MatchVal]:
        found: list[MatchVal] = []
        size = 0
        for m in r.pattern.finditer(text, timeout=timeout):
            held = sum(m.end(i) - m.start(i) for i in range(len(m.groups()) + 1) if m.start(i) >= 0)
            size += held
            if size > cap:
                rt.budget.too_long(size, "list of matches", span)
            found.append(MatchVal(m))
            rt.budget.charge(held + 1, span)
        return found
    # one timeout for the whole iteration (``regex`` times the scanner, not each match)
    result: list[MatchVal] = _timed(rt, span, scan)
    return result


def _csv_rows(text: str) -> list[list[str]]:
    try:
        return [list(r) for r in csv.reader(io.StringIO(text))]
    except csv.Error as exc:  # e.g. a field over the csv module's size limit: bad input, not a crash
        raise ValueError(str(exc)) from None


def _csv_records(text: str) -> list[dict[str, str]]:
    rows = _csv_rows(text)
    if not rows:
        return []
    head = rows[0]
    return [dict(zip(head, r)) for r in rows[1:]]


def _csv_render(rt: RunState, rows: list[list[str]], span: Span) -> str:
    """``rows`` as CSV text; R0006 when the fields alone hold more than ``max_len`` characters
    (measured before writing: a list may hold one long string many times)."""
    size = 0
    for row in rows:
        size += sum(map(len, row)) + len(row)
        rt.budget.too_long(size, "str", span)
    rt.budget.charge(size, span)
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return buf.getvalue()


REGEX: Final[dict[str, Impl]] = {"compile": _compile}
CSV: Final[dict[str, Impl]] = {
    "parse": lambda rt, a, sp: _charged(rt, len(a[0]), sp, io_result(lambda: _csv_rows(a[0]))),
    "parse_records": lambda rt, a, sp: _charged(rt, len(a[0]), sp, io_result(lambda: _csv_records(a[0]))),
    "render": lambda rt, a, sp: io_result(lambda: _csv_render(rt, a[0], sp)),
}
AGENTOS: Final[dict[str, Impl]] = {
    "mutation_kind_for_tool": lambda rt, a, sp: "write" if any(
        w in a[0].lower() for w in ("write", "delete", "remove", "create", "update", "run", "exec")) else "read",
}



#: methods of the opaque prelude types: head → (value class, methods)
OPAQUE_METHODS: Final[dict[str, tuple[type, dict[str, Any]]]] = {
    "Regex": (RegexVal, {
        "matches": lambda rt, r, a, sp: _matches(rt, r, a[0], sp),
        "find": lambda rt, r, a, sp: _find(rt, r, a[0], sp),
        "find_all": lambda rt, r, a, sp: _find_all(rt, r, a[0], sp),
    }),
    "Match": (MatchVal, {
        "group": lambda rt, m, a, sp: Some(m.groups[a[0]]) if 0 <= a[0] < len(m.groups) and m.groups[a[0]] is not None
        else NONE,
    }),
}
