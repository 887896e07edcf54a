"""The std members that act on the host (spec §5, §10 U2): ``std.fs``, ``std.process``,
``std.http`` and ``std.env``. They run only when the capability was granted; the check lives in
:func:`vox_lang.runtime.stdlib.std_function`. Host errors become ``Error(message)``; reads are
capped, and child processes and HTTP requests get the run's remaining time as their timeout.
Child processes never outlive the run (:mod:`vox_lang.runtime.children`).
"""

from __future__ import annotations

import glob as globmod
import os
import selectors
import shutil
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any, Final

from vox_lang.runtime.children import kill_group
from vox_lang.runtime.errors import ExitRequest
from vox_lang.runtime.limits import RunState
from vox_lang.runtime.stdlib_pure import Impl, io_result, json_object
from vox_lang.runtime.values import NONE, Ok, Record, Some
from vox_lang.source import Span

#: bytes read from a file or an HTTP response at most (larger reads give Error)
MAX_READ: Final = 10_000_000


# --------------------------------------------------------------------------- fs


def _read(path: str) -> str:
    """A file's text; ``ValueError`` (so ``Error(…)``) when it is not UTF-8, never a lossy read."""
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read(MAX_READ + 1)
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not UTF-8 text (byte 0x{exc.object[exc.start]:02X} at {exc.start})") from None
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
    "read": lambda rt, a, sp: io_result(lambda: _read(a[0])),
    "read_bytes": lambda rt, a, sp: io_result(lambda: _read(a[0])),
    "write": lambda rt, a, sp: io_result(_unit(lambda: _write(a[0], a[1]))),
    "exists": lambda rt, a, sp: os.path.exists(a[0]),
    "is_file": lambda rt, a, sp: os.path.isfile(a[0]),
    "is_dir": lambda rt, a, sp: os.path.isdir(a[0]),
    "list": lambda rt, a, sp: io_result(lambda: sorted(os.listdir(a[0]))),
    "list_dir": lambda rt, a, sp: io_result(lambda: sorted(os.listdir(a[0]))),
    "list_dir_detailed": lambda rt, a, sp: io_result(
        lambda: [_file_record(os.path.join(a[0], n)) for n in sorted(os.listdir(a[0]))]),
    "stat": lambda rt, a, sp: io_result(lambda: _file_record(a[0])),
    "remove": lambda rt, a, sp: io_result(lambda: _then(os.remove, a[0])),
    "mkdir": lambda rt, a, sp: io_result(lambda: _then(lambda p: os.makedirs(p, exist_ok=True), a[0])),
    "canonicalize": lambda rt, a, sp: io_result(lambda: os.path.realpath(a[0], strict=True)),
    "glob": lambda rt, a, sp: io_result(lambda: sorted(globmod.glob(a[0]))),
    "remove_dir_all": lambda rt, a, sp: io_result(_unit(lambda: shutil.rmtree(a[0]))),
    "copy": lambda rt, a, sp: io_result(_unit(lambda: shutil.copyfile(a[0], a[1]))),
}

# --------------------------------------------------------------------------- process


def _run(rt: RunState, cmd: str, args: list[str], cwd: str | None = None,
         env: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run a child to completion within the run's remaining time, reading at most ``MAX_READ``
    bytes of its stdout + stderr (like file and HTTP reads): past either limit the child is
    killed and the call raises (``Error`` in the program), so a chatty child cannot exhaust memory.

    The child leads a process group of its own (:class:`~vox_lang.runtime.children.Children`):
    a kill reaches what it started too (``sh -c 'sleep 100 & sleep 100'``), and whatever it
    leaves running in the background when it exits is killed as the call returns.
    """
    environ = None
    if env is not None:
        environ = dict(os.environ)
        environ.update(dict(e.split("=", 1) for e in env if "=" in e))
    argv = [cmd, *args]
    timeout = max(rt.budget.time_left(), 0.01)
    deadline = time.monotonic() + timeout
    proc = _start(rt, argv, cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environ)
    assert proc.stdout is not None and proc.stderr is not None
    out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
    chunks: dict[int, list[bytes]] = {out_fd: [], err_fd: []}
    size = 0
    try:
        with selectors.DefaultSelector() as sel:
            for fd in chunks:
                sel.register(fd, selectors.EVENT_READ)
            while sel.get_map():
                left = deadline - time.monotonic()
                if left <= 0:
                    raise subprocess.TimeoutExpired(argv, timeout)
                for key, _ in sel.select(left):
                    data = os.read(key.fd, 65536)
                    if not data:
                        sel.unregister(key.fd)
                        continue
                    size += len(data)
                    if size > MAX_READ:
                        raise ValueError(f"{cmd}: output larger than {MAX_READ} bytes")
                    chunks[key.fd].append(data)
        code = proc.wait(timeout=max(deadline - time.monotonic(), 0.01))
    except BaseException:
        kill_group(proc)
        proc.wait()
        raise
    finally:
        proc.stdout.close()
        proc.stderr.close()
        rt.children.finish(proc)
    out, err = (_decode(cmd, b"".join(chunks[fd]), name) for fd, name in ((out_fd, "output"), (err_fd, "error output")))
    return subprocess.CompletedProcess(argv, code, out, err)


def _start(rt: RunState, argv: list[str], cwd: str | None = None, **options: Any) -> subprocess.Popen[bytes]:
    """Start a child (:meth:`Children.popen`); a child that cannot be started raises an
    ``OSError`` whose message names the command (and the directory, when that is what failed):
    ``cannot run nosuchcmd: No such file or directory``."""
    try:
        return rt.children.popen(argv, cwd=cwd or None, **options)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        if cwd and exc.filename == cwd:
            raise OSError(f"cannot run {argv[0]} in {cwd}: {reason}") from None
        raise OSError(f"cannot run {argv[0]}: {reason}") from None


def _decode(cmd: str, data: bytes, what: str) -> str:
    """A child's output as ``text=True`` read it (UTF-8, universal newlines); ``ValueError``
    (so ``Error``) naming the command when it is not UTF-8."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{cmd}: {what} is not UTF-8 text (byte 0x{data[exc.start]:02X} at {exc.start})") from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _run_text(rt: RunState, a: list[Any]) -> Any:
    def go() -> str:
        done = _run(rt, a[0], a[1])
        if done.returncode != 0:
            said = done.stderr.strip()
            raise ValueError(f"{a[0]} exited with status {done.returncode}" + (f": {said}" if said else ""))
        return done.stdout
    return io_result(go)


def _output(done: subprocess.CompletedProcess[str]) -> Record:
    return Record({"exit": done.returncode, "stdout": done.stdout, "stderr": done.stderr})


def _exit(rt: RunState, a: list[Any], span: Span) -> None:
    """``process.exit(code)``: a status outside 0..255 (which the OS would wrap, 256 to a
    success) ends the run with status 1 and a note saying so."""
    code = int(a[0])
    if 0 <= code <= 255:
        raise ExitRequest(code)
    raise ExitRequest(1, f"process.exit({code}): an exit status is 0 to 255; exiting with 1", span)


def _lines(rt: RunState, a: list[Any], span: Span) -> Any:
    r = _run_text(rt, a)
    return Ok(r.value.splitlines()) if type(r) is Ok else r


def _capture_json(rt: RunState, a: list[Any], span: Span) -> Any:
    r = _run_text(rt, a)
    return json_object(r.value) if type(r) is Ok else r


def _exec(rt: RunState, a: list[Any], span: Span) -> Any:
    r = _run_text(rt, a)
    return Ok(None) if type(r) is Ok else r


def _spawn(rt: RunState, a: list[Any], span: Span) -> Any:
    """``process.spawn_background(cmd, args)``: start ``cmd`` without waiting for it; ``Ok(pid)``,
    or ``Error(message)`` when it cannot be started. Its output is discarded.

    The process runs only as long as the run: it leads a process group of its own, and when
    the run ends (normally, by ``process.exit``, a fault or R0010) that whole group is killed
    with ``SIGKILL`` and the process reaped, so a program cannot leave processes behind
    (on Windows only the process itself is killed).
    """
    return io_result(lambda: _start(rt, [a[0], *a[1]], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).pid)


def _which(rt: RunState, a: list[Any], span: Span) -> Any:
    found = shutil.which(a[0])
    return Some(found) if found else NONE


PROCESS: Final[dict[str, Impl]] = {
    "run": lambda rt, a, sp: _run_text(rt, a),
    "run_capture_lines": _lines,
    "run_ex": lambda rt, a, sp: io_result(lambda: _run(rt, a[0], a[1], a[2], a[3]).returncode),
    "run_capture": lambda rt, a, sp: io_result(lambda: _output(_run(rt, a[0], a[1]))),
    "run_capture_ex": lambda rt, a, sp: io_result(lambda: _output(_run(rt, a[0], a[1], a[2], a[3]))),
    "run_capture_json": _capture_json,
    "spawn_background": _spawn,
    "exec": _exec,
    "which": _which,
    "exit": _exit,
}

# --------------------------------------------------------------------------- http, env


def _http(rt: RunState, url: str, body: str | None, content_type: str = "text/plain") -> Any:
    """One request; ``Error`` naming the URL when it fails (``http://x/: HTTP Error 404: Not
    Found``, ``http://x/: Connection refused``)."""
    def go() -> str:
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"not an http(s) URL: {url}")
        data = body.encode("utf-8") if body is not None else None
        try:
            req = urllib.request.Request(url, data=data, headers={"Content-Type": content_type} if data else {})
            with urllib.request.urlopen(req, timeout=max(rt.budget.time_left(), 0.01)) as resp:
                raw = resp.read(MAX_READ + 1)
        except (OSError, ValueError) as exc:  # refused, timed out, reset, an HTTP error status, a bad URL
            raise OSError(f"{url}: {_net_reason(exc)}") from None
        if len(raw) > MAX_READ:
            raise ValueError(f"{url}: response larger than {MAX_READ} bytes")
        return str(raw.decode("utf-8", errors="replace"))
    return io_result(go)


def _net_reason(exc: BaseException) -> str:
    """Why a request failed, in words: ``HTTP Error 404: Not Found``, ``Connection refused``."""
    if isinstance(exc, urllib.error.HTTPError):
        return f"HTTP Error {exc.code}: {exc.reason}"
    if isinstance(exc, urllib.error.URLError):
        reason = exc.reason
        return _net_reason(reason) if isinstance(reason, BaseException) else str(reason)
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__


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
