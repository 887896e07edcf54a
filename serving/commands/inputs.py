"""The FILE arguments of `vox check`, `vox run` and `vox test`: one place decides what cannot be
read and words it, so the three commands say the same (``vox CMD: cannot read PATH: why``, exit 2).

Every argument is read before anything is checked; ``-`` is standard input (once). A file that is
not a regular file is never opened (a FIFO or ``/dev/zero`` would block or never end), and a
file holding a NUL byte is refused once as binary instead of checked byte by byte. `vox check`
and `vox test` take directories too (:func:`vox_files`): every ``*.vox`` file under one, as
linters and test runners walk a source tree; `vox run` runs one file.
"""

from __future__ import annotations

import os
import stat
import sys
from dataclasses import dataclass
from typing import BinaryIO, Final

import typer

from serving.errors import UsageError

STDIN = "-"


@dataclass(frozen=True)
class Input:
    """One file argument: as given, its display name (``<stdin>`` for ``-``) and its raw bytes."""

    arg: str
    label: str
    data: bytes


@dataclass(frozen=True)
class Unreadable:
    """An argument (or a file under a directory argument) that could not be read, as
    ``--format json`` reports it: the path and why (``no such file``); ``message`` is the whole
    ``cannot read PATH: why`` for the stderr line."""

    file: str
    error: str
    message: str

    def to_json(self) -> dict[str, str]:
        return {"file": self.file, "error": self.error}


def _unreadable(path: str, exc: UsageError) -> Unreadable:
    """Split ``cannot read PATH: why`` back into the path and why (a directory's error may name
    a file under it, or say there is no ``.vox`` file: then the path is the argument)."""
    text = str(exc)
    if text.startswith(f"cannot read {path}: "):
        return Unreadable(path, text.removeprefix(f"cannot read {path}: "), text)
    if text.startswith("cannot read ") and ": " in text:
        where, _, why = text.removeprefix("cannot read ").partition(": ")
        return Unreadable(where, why, text)
    return Unreadable(path, text, text)


def binary_reason(data: bytes) -> str | None:
    """Why ``data`` is not Vox source at all (a NUL byte: no text file holds one), else ``None``.

    Such a file is refused once instead of checked: every byte of it would be an E0101 or
    E0106 of its own (a minute of checking and a gigabyte of output for 5 MB). Text saved as
    UTF-16 or UTF-32 (:func:`wide_encoding`) is named as such, byte order and mark included
    (``UTF-16 LE text (byte order mark FF FE), not UTF-8: ...``), with what to do about it.
    """
    at = data.find(b"\x00")
    if at < 0:
        return None
    wide = wide_encoding(data)
    if wide is not None:
        return f"{wide.describe()}, not UTF-8: Vox source is UTF-8 (save the file as UTF-8)"
    return f"binary file (NUL byte at offset {at}), not Vox source"


@dataclass(frozen=True, slots=True)
class WideEncoding:
    """A wide Unicode encoding a file is saved in.

    Attributes:
        family: ``UTF-16`` or ``UTF-32``.
        order: ``LE`` (little-endian: Windows' "Unicode") or ``BE``.
        bom: the bytes of the byte order mark the file starts with; ``b""`` when it has none.
    """

    family: str
    order: str
    bom: bytes

    @property
    def name(self) -> str:
        """``UTF-16 LE``, ``UTF-32 BE``..."""
        return f"{self.family} {self.order}"

    def describe(self) -> str:
        """``UTF-16 LE text (byte order mark FF FE)`` or ``UTF-16 BE text (no byte order mark)``."""
        mark = f"byte order mark {self.bom.hex(' ').upper()}" if self.bom else "no byte order mark"
        return f"{self.name} text ({mark})"


#: (family, byte order, codec, byte order mark); the UTF-32 rows first: UTF-32 LE's mark starts
#: with UTF-16 LE's (``FF FE 00 00`` is UTF-32 LE, or UTF-16 LE whose first character is NUL:
#: never source)
_WIDE: Final = (("UTF-32", "LE", "utf-32-le", b"\xff\xfe\x00\x00"), ("UTF-32", "BE", "utf-32-be", b"\x00\x00\xfe\xff"),
                ("UTF-16", "LE", "utf-16-le", b"\xff\xfe"), ("UTF-16", "BE", "utf-16-be", b"\xfe\xff"))

#: bytes of a file's start read to tell its encoding
_HEAD: Final = 4096


def wide_encoding(data: bytes) -> WideEncoding | None:
    """The UTF-16 or UTF-32 encoding (byte order, mark) in which ``data`` (holding a NUL byte)
    reads as text, else ``None`` (binary).

    With a byte order mark, the text after it must read as text in the marked encoding (a mark
    followed by binary data is binary). Without one, the first of UTF-32 LE/BE and UTF-16 LE/BE
    in which the file's start reads as source text wins: any script, not only ASCII (Windows
    editors save "Unicode" as UTF-16 LE). Text means: decodes, holds no NUL character, and at
    most 1 in 20 characters is neither printable nor a tab or line break; source text, without a
    mark, also has a quarter of it ASCII or lines of source length (:func:`_source_like`).
    """
    head = data[:_HEAD]
    for family, order, codec, bom in _WIDE:
        if head.startswith(bom):
            return WideEncoding(family, order, bom) if _reads_as_text(head[len(bom):], codec) else None
    for family, order, codec, _ in _WIDE:
        if _reads_as_text(head, codec, source=True):
            return WideEncoding(family, order, b"")
    return None


#: the longest average line (characters) of a file read as source text without a byte order mark
_LINE_CHARS: Final = 400


def _source_like(text: str) -> bool:
    """Whether ``text``, read from a file without a byte order mark, looks like source code: a
    quarter of it ASCII (keywords, braces, line breaks in any script), or, for a file whose
    comments or strings are mostly in another script, at least two line breaks and one per
    :data:`_LINE_CHARS` characters. UTF-8 text with a stray NUL read two bytes at a time is
    neither: its ASCII bytes pair into CJK ideographs (``let x`` as UTF-16 reads ``整⁴``) and a
    line break survives only where one stands right before a NUL."""
    if sum(1 for ch in text if ch < "\x80") * 4 >= len(text):
        return True
    breaks = text.count("\n")
    return breaks >= 2 and breaks * _LINE_CHARS >= len(text)


def _reads_as_text(data: bytes, codec: str, source: bool = False) -> bool:
    """Whether ``data`` decodes in ``codec`` to text (see :func:`wide_encoding`), and, with
    ``source`` (no byte order mark), to text like source code (:func:`_source_like`)."""
    unit = 4 if "32" in codec else 2
    if len(data) < unit or (source and len(data) < _HEAD and len(data) % unit):
        return False  # without a mark, a whole file of this encoding is a whole number of units
    body = data[: len(data) - len(data) % unit]
    try:
        text = body.decode(codec)
    except UnicodeDecodeError as exc:
        if exc.start < len(body) - unit:  # only a surrogate pair cut by the read may be left over
            return False
        text = body[: exc.start].decode(codec)
    if not text or "\x00" in text:
        return False
    odd = sum(1 for ch in text if not ch.isprintable() and ch not in "\t\n\r")
    return odd * 20 <= len(text) and (not source or _source_like(text))


def _not_regular(mode: int) -> str | None:
    """Why a file that is not a regular one cannot be read (``"is a named pipe (FIFO), not a
    regular file (use `-` ...)"``), ``None`` for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "is a directory, not a regular file"
    for test, what in ((stat.S_ISFIFO, "is a named pipe (FIFO)"), (stat.S_ISCHR, "is a character device"),
                       (stat.S_ISBLK, "is a block device"), (stat.S_ISSOCK, "is a socket")):
        if test(mode):
            return f"{what}, not a regular file (use `-` for standard input)"
    return "is a special file, not a regular file"


#: the largest source file (bytes) read: checking takes ~6 s and ~650 MB per MB of source, so a
#: larger one is refused at once instead of taking minutes and gigabytes (``/dev/zero`` piped to
#: ``vox check -`` grew to 23 GB before the kernel killed it)
MAX_SOURCE_BYTES: Final = 16 * 1024 * 1024

#: bytes read at a time from a file or standard input
_CHUNK: Final = 1024 * 1024


def _too_big(size: int) -> str:
    return (f"{size / 1024 / 1024:.1f} MB, larger than the {MAX_SOURCE_BYTES // 1024 // 1024} MB a Vox "
            "source file may have")


def _read_bounded(stream: BinaryIO, label: str) -> bytes:
    """Read ``stream`` to its end, but stop after the chunk holding its first NUL byte (binary:
    :func:`binary_reason` says so from what was read) or once it passes :data:`MAX_SOURCE_BYTES`.

    Raises:
        UsageError: the stream holds more than :data:`MAX_SOURCE_BYTES` bytes of text.
    """
    parts: list[bytes] = []
    size = 0
    while chunk := stream.read(_CHUNK):
        parts.append(chunk)
        size += len(chunk)
        if b"\x00" in chunk:
            break
        if size > MAX_SOURCE_BYTES:
            raise UsageError(f"cannot read {label}: more than {MAX_SOURCE_BYTES // 1024 // 1024} MB, the most a "
                             "Vox source file may have")
    return b"".join(parts)


def read_input(arg: str) -> Input:
    """Read one argument (``-``: standard input).

    Raises:
        UsageError: ``cannot read ARG: why`` (no such file, a broken symbolic link, not a regular
            file, permission denied, standard input closed, binary).
    """
    if not arg:
        raise UsageError("cannot read '': an empty path names no file")
    if arg == STDIN:
        try:
            item = Input(arg, "<stdin>", _read_bounded(sys.stdin.buffer, "<stdin>"))
        except (AttributeError, OSError, ValueError):  # stdin closed (None) or unreadable
            raise UsageError("cannot read `-`: standard input is closed") from None
    else:
        try:
            st = os.stat(arg)
            kind = _not_regular(st.st_mode)
            if kind is not None:
                raise UsageError(f"cannot read {arg}: {kind}")
            if st.st_size > MAX_SOURCE_BYTES:
                raise UsageError(f"cannot read {arg}: {_too_big(st.st_size)}")
            with open(arg, "rb") as stream:
                item = Input(arg, arg, _read_bounded(stream, arg))
        except FileNotFoundError:
            if os.path.islink(arg):  # the link exists, what it points to does not
                raise UsageError(f"cannot read {arg}: broken symbolic link (to {os.readlink(arg)}, which does "
                                 "not exist)") from None
            raise UsageError(f"cannot read {arg}: no such file") from None
        except IsADirectoryError:  # turned into one between the stat and the read
            raise UsageError(f"cannot read {arg}: is a directory, not a regular file") from None
        except OSError as exc:
            raise UsageError(f"cannot read {arg}: {exc.strerror or exc}") from None
    if (why := binary_reason(item.data)) is not None:
        raise UsageError(f"cannot read {item.label}: {why}")
    return item


def vox_files(directory: str) -> list[str]:
    """The ``*.vox`` files under ``directory``, recursively, sorted by path; hidden entries, files
    and directories whose name starts with ``.`` (``.git``, ``.venv``, an editor's ``.#a.vox``
    lock link or ``.a.vox.swp``-style scratch copy), are skipped and symbolic links to
    directories are not followed (a link cycle would never end), as ``pytest`` walks a tree. A
    hidden file named on the command line is checked like any other.

    Raises:
        UsageError: ``cannot read DIR: ...`` when a directory of the tree cannot be listed (a
            file under it would go unchecked: as for an unreadable file, nothing passes), or
            ``no .vox files in DIR`` (a typo in the path should not pass as "no errors").
    """
    found: list[str] = []
    problems: list[OSError] = []
    for root, dirs, names in os.walk(directory, onerror=problems.append):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found += [os.path.join(root, n) for n in names if n.endswith(".vox") and not n.startswith(".")]
    if problems:
        first = problems[0]
        raise UsageError(f"cannot read {first.filename or directory}: {first.strerror or first}")
    if not found:
        raise UsageError(f"no .vox files in {directory} (hidden files and directories and symlinked "
                         "directories are skipped)")
    return sorted(found)


def read_inputs(cmd: str, files: list[str], walk: bool = False) -> list[Input]:
    """Read every argument of ``vox CMD`` before anything is checked; with ``walk``, a directory
    stands for its ``*.vox`` files (:func:`vox_files`). Each file is read once however often it is
    named (twice, or by itself and inside a directory given too): by its resolved path.

    Raises:
        typer.Exit: code 2 after printing ``vox CMD: cannot read ...`` for every argument that
            cannot be read (and once if ``-`` is given twice).
    """
    inputs, unreadable = read_some(cmd, files, walk)
    if unreadable:
        raise typer.Exit(2)
    return inputs


def read_some(cmd: str, files: list[str], walk: bool = False) -> tuple[list[Input], list[Unreadable]]:
    """:func:`read_inputs`, but going on past what cannot be read, as linters do: each such
    argument gets its ``vox CMD: cannot read ...`` line on stderr and is listed.

    Returns:
        ``(inputs, unreadable)``: what could be read, in argument order, and the arguments (or
        files under a directory) that could not be, in the same order.

    Raises:
        typer.Exit: code 2 when ``-`` is given twice.
    """
    if files.count(STDIN) > 1:
        typer.echo(f"vox {cmd}: `-` (standard input) may be given only once", err=True)
        raise typer.Exit(2)
    inputs: list[Input] = []
    problems: list[Unreadable] = []
    seen: set[str] = set()
    for arg in files:
        try:
            paths = vox_files(arg) if walk and arg != STDIN and os.path.isdir(arg) else [arg]
        except UsageError as exc:
            problems.append(_unreadable(arg, exc))
            continue
        for path in paths:
            key = path if path == STDIN else os.path.realpath(path)
            if key in seen:
                continue
            seen.add(key)
            try:
                inputs.append(read_input(path))
            except UsageError as exc:
                problems.append(_unreadable(path, exc))
    for problem in problems:
        typer.echo(f"vox {cmd}: {problem.message}", err=True)
    return inputs, problems
