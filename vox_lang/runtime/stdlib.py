"""The standard library at run time (spec §5, §10 U2/U5) and its capabilities (§11).

``std.fs``, ``std.process``, ``std.http`` and ``std.env`` act on the host only when the run was
granted ``fs``, ``process``, ``net`` or ``env``; without the grant a member returning ``Result``
gives ``Error("capability fs not granted")`` and any other member is R0008. The other modules
are pure (``json path crypto regex csv``) or read the clock (``time``). Members are looked up by
their key (``std.fs.read``); whether one returns ``Result`` is read from the prelude signature.
"""

from __future__ import annotations

import glob as globmod
import hashlib
import json
import math
import os
import re
import shutil
import subprocess
import time
import urllib.request
import uuid
from collections.abc import Callable
from typing import Any, Final

from vox_lang.runtime.errors import ExitRequest, VoxFault
from vox_lang.runtime.limits import RunState
from vox_lang.runtime.values import NONE, Err, FnVal, Ok, Record, Some, Variant, VSet
from vox_lang.source import Span

Impl = Callable[[RunState, list[Any], Span], Any]

#: std module → the capability that unlocks it
MODULE_CAPABILITY: Final = {"fs": "fs", "process": "process", "http": "net", "env": "env"}

#: bytes read from a file or an HTTP response at most (larger reads give Error)
MAX_READ: Final = 10_000_000


def _io(fn: Callable[[], Any]) -> Any:
    """Run a host operation, turning OS errors into ``Error(message)``."""
    try:
        return Ok(fn())
    except (OSError, ValueError, subprocess.SubprocessError) as exc:
        return Err(str(exc.strerror if isinstance(exc, OSError) and exc.strerror else exc))


# --------------------------------------------------------------------------- fs


def _read(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as fh:
        text = fh.read(MAX_READ + 1)
    if len(text) > MAX_READ:
        raise ValueError(f"{path} is larger than {MAX_READ} characters")
    return text


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)


def _file_record(path: str) -> Record:
    st = os.lstat(path)
    return Record({
        "name": os.path.basename(path), "path": path, "size": st.st_size,
        "modified_ms": int(st.st_mtime * 1000), "is_dir": os.path.isdir(path),
        "is_file": os.path.isfile(path), "is_symlink": os.path.islink(path),
    })


def _then(action: Callable[[str], None], path: str) -> str:
    action(path)
    return path


def _unit(fn: Callable[[], Any]) -> Callable[[], None]:
    def run() -> None:
        fn()
    return run


FS: Final[dict[str, Impl]] = {
    "read": lambda rt, a, sp: _io(lambda: _read(a[0])),
    "read_bytes": lambda rt, a, sp: _io(lambda: _read(a[0])),
    "write": lambda rt, a, sp: _io(_unit(lambda: _write(a[0], a[1]))),
    "exists": lambda rt, a, sp: os.path.exists(a[0]),
    "is_file": lambda rt, a, sp: os.path.isfile(a[0]),
    "is_dir": lambda rt, a, sp: os.path.isdir(a[0]),
    "list": lambda rt, a, sp: _io(lambda: sorted(os.listdir(a[0]))),
    "list_dir": lambda rt, a, sp: _io(lambda: sorted(os.listdir(a[0]))),
    "list_dir_detailed": lambda rt, a, sp: _io(
        lambda: [_file_record(os.path.join(a[0], n)) for n in sorted(os.listdir(a[0]))]),
    "stat": lambda rt, a, sp: _io(lambda: _file_record(a[0])),
    "remove": lambda rt, a, sp: _io(lambda: _then(os.remove, a[0])),
    "mkdir": lambda rt, a, sp: _io(lambda: _then(lambda p: os.makedirs(p, exist_ok=True), a[0])),
    "canonicalize": lambda rt, a, sp: _io(lambda: os.path.realpath(a[0], strict=True)),
    "glob": lambda rt, a, sp: _io(lambda: sorted(globmod.glob(a[0]))),
    "remove_dir_all": lambda rt, a, sp: _io(_unit(lambda: shutil.rmtree(a[0]))),
    "copy": lambda rt, a, sp: _io(_unit(lambda: shutil.copyfile(a[0], a[1]))),
}

# --------------------------------------------------------------------------- process


def _run(rt: RunState, cmd: str, args: list[str], cwd: str | None = None,
         env: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    environ = None
    if env is not None:
        environ = dict(os.environ)
        environ.update(dict(e.split("=", 1) for e in env if "=" in e))
    return subprocess.run([cmd, *args], capture_output=True, text=True, cwd=cwd or None, env=environ,
                          timeout=max(rt.budget.time_left(), 0.01), check=False)


def _run_text(rt: RunState, a: list[Any]) -> Any:
    def go() -> str:
        done = _run(rt, a[0], a[1])
        if done.returncode != 0:
            raise ValueError(done.stderr.strip() or f"{a[0]} exited with status {done.returncode}")
        return done.stdout
    return _io(go)


def _output(done: subprocess.CompletedProcess[str]) -> Record:
    return Record({"exit": done.returncode, "stdout": done.stdout, "stderr": done.stderr})


def _exit(rt: RunState, a: list[Any], span: Span) -> None:
    raise ExitRequest(int(a[0]))


def _lines(rt: RunState, a: list[Any], span: Span) -> Any:
    r = _run_text(rt, a)
    return Ok(r.value.splitlines()) if type(r) is Ok else r


def _capture_json(rt: RunState, a: list[Any], span: Span) -> Any:
    r = _run_text(rt, a)
    return json_object(r.value) if type(r) is Ok else r


def _exec(rt: RunState, a: list[Any], span: Span) -> Any:
    r = _run_text(rt, a)
    return Ok(None) if type(r) is Ok else r


def _which(rt: RunState, a: list[Any], span: Span) -> Any:
    found = shutil.which(a[0])
    return Some(found) if found else NONE


PROCESS: Final[dict[str, Impl]] = {
    "run": lambda rt, a, sp: _run_text(rt, a),
    "run_capture_lines": _lines,
    "run_ex": lambda rt, a, sp: _io(lambda: _run(rt, a[0], a[1], a[2], a[3]).returncode),
    "run_capture": lambda rt, a, sp: _io(lambda: _output(_run(rt, a[0], a[1]))),
    "run_capture_ex": lambda rt, a, sp: _io(lambda: _output(_run(rt, a[0], a[1], a[2], a[3]))),
    "run_capture_json": _capture_json,
    "spawn_background": lambda rt, a, sp: _io(lambda: subprocess.Popen(
        [a[0], *a[1]], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).pid),
    "exec": _exec,
    "which": _which,
    "exit": _exit,
}

# --------------------------------------------------------------------------- http, env


def _http(rt: RunState, url: str, body: str | None, content_type: str = "text/plain") -> Any:
    def go() -> str:
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"not an http(s) URL: {url}")
        data = body.encode("utf-8") if body is not None else None
        req = urllib.request.Request(url, data=data, headers={"Content-Type": content_type} if data else {})
        with urllib.request.urlopen(req, timeout=max(rt.budget.time_left(), 0.01)) as resp:
            raw = resp.read(MAX_READ + 1)
        if len(raw) > MAX_READ:
            raise ValueError(f"response larger than {MAX_READ} bytes")
        return str(raw.decode("utf-8", errors="replace"))
    return _io(go)


HTTP: Final[dict[str, Impl]] = {
    "get": lambda rt, a, sp: _http(rt, a[0], None),
    "get_text": lambda rt, a, sp: _http(rt, a[0], None),
    "post": lambda rt, a, sp: _http(rt, a[0], a[1]),
    "post_json": lambda rt, a, sp: _http(rt, a[0], a[1], "application/json"),
}

def _env_get(rt: RunState, a: list[Any], span: Span) -> Any:
    value = os.environ.get(a[0])
    return NONE if value is None else Some(value)


ENV: Final[dict[str, Impl]] = {"get": _env_get}

# --------------------------------------------------------------------------- json


def json_object(text: str) -> Any:
    """``json.parse``: one entry per member of the top-level object, valued by its text (§10 U5)."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        return Err(f"invalid JSON: {exc}")
    if not isinstance(data, dict):
        return Err("JSON text is not an object")
    return Ok({str(k): v if isinstance(v, str) else json.dumps(v) for k, v in data.items()})


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


def to_json(v: Any, depth: int = 0) -> Any:
    """A Vox value as JSON data (``json.dump``)."""
    if depth > 200:
        return None
    t = type(v)
    if t in (int, str, bool):
        return v
    if t is float:
        return v if math.isfinite(v) else str(v)
    if v is None or v is NONE:
        return None
    if t is list or t is VSet:
        return [to_json(x, depth + 1) for x in v]
    if t is dict:
        return {k if isinstance(k, str) else json.dumps(to_json(k, depth + 1)): to_json(x, depth + 1)
                for k, x in v.items()}
    if t is Record:
        return {k: to_json(x, depth + 1) for k, x in v.fields.items()}
    if t is Some or t is Ok:
        return to_json(v.value, depth + 1)
    if t is Err:
        return {"error": to_json(v.value, depth + 1)}
    if t is Variant:
        return v.name if not v.values else {v.name: [to_json(x, depth + 1) for x in v.values]}
    from vox_lang.runtime.values import show

    return show(v)


def _read_key(text: str, key: str, kind: str) -> Any:
    obj = json_object(text)
    if type(obj) is Err:
        return obj
    if key not in obj.value:
        return Err(f"missing key {json.dumps(key)}")
    return Ok(obj.value[key]) if kind == "str" else json_scalar(obj.value[key], kind)


JSON: Final[dict[str, Impl]] = {
    "parse": lambda rt, a, sp: json_object(a[0]),
    "dump": lambda rt, a, sp: json.dumps(to_json(a[0]), ensure_ascii=False),
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
        raise VoxFault("R0010", span, detail=f"sleep({a[0]}) runs past the time limit")


TIME: Final[dict[str, Impl]] = {
    "now": lambda rt, a, sp: int(time.time()),
    "now_ms": lambda rt, a, sp: int(time.time() * 1000),
    "sleep": _sleep,
}

PATH: Final[dict[str, Impl]] = {
    "join": lambda rt, a, sp: os.path.join(a[0], a[1]),
    "join_many": lambda rt, a, sp: os.path.join(*a[0]) if a[0] else "",
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
    return lambda rt, a, sp: rt.print(f"[{level}] {a[0]}", sp)


LOG: Final[dict[str, Impl]] = {name: _log(name) for name in ("debug", "info", "warn", "error")}

# --------------------------------------------------------------------------- regex, csv


class RegexVal:
    """An opaque ``Regex`` (``std.regex.compile``)."""

    __slots__ = ("pattern",)

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern = pattern


class MatchVal:
    """An opaque ``Match``: the groups of one match."""

    __slots__ = ("groups",)

    def __init__(self, m: re.Match[str]) -> None:
        self.groups = (m.group(0), *m.groups())


def _compile(rt: RunState, a: list[Any], span: Span) -> Any:
    try:
        return Ok(RegexVal(re.compile(a[0])))
    except (re.error, RecursionError, OverflowError) as exc:
        return Err(f"invalid pattern: {exc}")


def _find(r: RegexVal, text: str) -> Any:
    m = r.pattern.search(text)
    return Some(MatchVal(m)) if m else NONE


def _csv_rows(text: str) -> list[list[str]]:
    import csv
    import io

    return [list(r) for r in csv.reader(io.StringIO(text))]


def _csv_records(text: str) -> list[dict[str, str]]:
    rows = _csv_rows(text)
    if not rows:
        return []
    head = rows[0]
    return [dict(zip(head, r)) for r in rows[1:]]


def _csv_render(rows: list[list[str]]) -> str:
    import csv
    import io

    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return buf.getvalue()


REGEX: Final[dict[str, Impl]] = {"compile": _compile}
CSV: Final[dict[str, Impl]] = {
    "parse": lambda rt, a, sp: _io(lambda: _csv_rows(a[0])),
    "parse_records": lambda rt, a, sp: _io(lambda: _csv_records(a[0])),
    "render": lambda rt, a, sp: _io(lambda: _csv_render(a[0])),
}
AGENTOS: Final[dict[str, Impl]] = {
    "mutation_kind_for_tool": lambda rt, a, sp: "write" if any(
        w in a[0].lower() for w in ("write", "delete", "remove", "create", "update", "run", "exec")) else "read",
}

def _toml_parse(rt: RunState, a: list[Any], span: Span) -> Any:
    import tomllib

    try:
        data = tomllib.loads(a[0])
    except (tomllib.TOMLDecodeError, RecursionError) as exc:
        return Err(f"invalid TOML: {exc}")
    return Ok({str(k): v if isinstance(v, str) else json.dumps(v, default=str) for k, v in data.items()})


def _yaml_parse(rt: RunState, a: list[Any], span: Span) -> Any:
    try:
        import yaml  # optional: only when a program uses std.yaml
    except ImportError:
        return Err("std.yaml is not available on this host")
    try:
        data = yaml.safe_load(a[0])
    except (yaml.YAMLError, RecursionError) as exc:
        return Err(f"invalid YAML: {exc}")
    if not isinstance(data, dict):
        return Err("YAML text is not a mapping")
    return Ok({str(k): v if isinstance(v, str) else json.dumps(v, default=str) for k, v in data.items()})


def _yaml_render(rt: RunState, a: list[Any], span: Span) -> Any:
    try:
        import yaml
    except ImportError:
        return Err("std.yaml is not available on this host")
    return Ok(yaml.safe_dump(to_json(a[0]), sort_keys=False))


def _toml_render(rt: RunState, a: list[Any], span: Span) -> Any:
    data = to_json(a[0])
    if not isinstance(data, dict):
        return Err("only a map or record can be written as TOML")
    lines = []
    for k, v in data.items():
        if isinstance(v, (dict, list)):
            return Err(f"nested value under {json.dumps(k)} cannot be written as TOML here")
        lines.append(f"{json.dumps(k)} = {json.dumps(v)}")
    return Ok("\n".join(lines) + ("\n" if lines else ""))


TOML: Final[dict[str, Impl]] = {"parse": _toml_parse, "render": _toml_render}
YAML: Final[dict[str, Impl]] = {"parse": _yaml_parse, "render": _yaml_render}

#: ``std.<module>`` → member → implementation
STD_IMPLS: Final[dict[str, dict[str, Impl]]] = {
    "fs": FS, "process": PROCESS, "http": HTTP, "env": ENV, "json": JSON, "time": TIME, "path": PATH,
    "crypto": CRYPTO, "log": LOG, "regex": REGEX, "csv": CSV, "agentos": AGENTOS, "toml": TOML, "yaml": YAML,
}

#: methods of the opaque prelude types: head → (value class, methods)
OPAQUE_METHODS: Final[dict[str, tuple[type, dict[str, Any]]]] = {
    "Regex": (RegexVal, {
        "matches": lambda rt, r, a, sp: r.pattern.search(a[0]) is not None,
        "find": lambda rt, r, a, sp: _find(r, a[0]),
        "find_all": lambda rt, r, a, sp: [MatchVal(m) for m in r.pattern.finditer(a[0])],
    }),
    "Match": (MatchVal, {
        "group": lambda rt, m, a, sp: Some(m.groups[a[0]]) if 0 <= a[0] < len(m.groups) and m.groups[a[0]] is not None
        else NONE,
    }),
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
    return lambda args, span: found(rt, args, span)


def std_value(key: str, rt: RunState, span: Span) -> FnVal:
    """A std member used as a value."""
    fn = std_function(key, rt)
    return FnVal(key.split(".")[-1], lambda args: fn(args, span))
