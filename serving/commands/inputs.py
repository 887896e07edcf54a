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
from pathlib import Path

import typer

from serving.errors import UsageError

STDIN = "-"


@dataclass(frozen=True)
class Input:
    """One file argument: as given, its display name (``<stdin>`` for ``-``) and its raw bytes."""

    arg: str
    label: str
    data: bytes


def binary_reason(data: bytes) -> str | None:
    """Why ``data`` is not Vox source at all (a NUL byte: no text file holds one), else ``None``.

    Such a file is refused once instead of checked: every byte of it would be an E0101 or
    E0106 of its own (a minute of checking and a gigabyte of output for 5 MB).
    """
    at = data.find(b"\x00")
    if at < 0:
        return None
    if _utf16(data):
        return "UTF-16 text, not UTF-8: Vox source is UTF-8 (save the file as UTF-8)"
    return f"binary file (NUL byte at offset {at}), not Vox source"


def _utf16(data: bytes) -> bool:
    """Whether ``data`` reads as UTF-16 text: a UTF-16 byte order mark, or (no mark) NUL in every
    other byte of its start, as ASCII text saved as UTF-16 has (Windows editors' "Unicode")."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return True
    head = data[:256]
    if len(head) < 4 or len(head) % 2:
        head = head[: len(head) - len(head) % 2]
    evens, odds = head[0::2], head[1::2]
    return len(head) >= 4 and (evens.count(0) == len(evens) and odds.count(0) == 0
                               or odds.count(0) == len(odds) and evens.count(0) == 0)


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
            item = Input(arg, "<stdin>", sys.stdin.buffer.read())
        except (AttributeError, OSError, ValueError):  # stdin closed (None) or unreadable
            raise UsageError("cannot read `-`: standard input is closed") from None
    else:
        try:
            kind = _not_regular(os.stat(arg).st_mode)
            if kind is not None:
                raise UsageError(f"cannot read {arg}: {kind}")
            item = Input(arg, arg, Path(arg).read_bytes())
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
    if files.count(STDIN) > 1:
        typer.echo(f"vox {cmd}: `-` (standard input) may be given only once", err=True)
        raise typer.Exit(2)
    inputs: list[Input] = []
    problems: list[str] = []
    seen: set[str] = set()
    for arg in files:
        try:
            paths = vox_files(arg) if walk and arg != STDIN and os.path.isdir(arg) else [arg]
        except UsageError as exc:
            problems.append(str(exc))
            continue
        for path in paths:
            key = path if path == STDIN else os.path.realpath(path)
            if key in seen:
                continue
            seen.add(key)
            try:
                inputs.append(read_input(path))
            except UsageError as exc:
                problems.append(str(exc))
    for problem in problems:
        typer.echo(f"vox {cmd}: {problem}", err=True)
    if problems:
        raise typer.Exit(2)
    return inputs
