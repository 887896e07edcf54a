"""`vox check FILE... [--strict] [--format human|repair|json] [--fix [--diff]]`.

Checks Vox files with the front end (``-`` reads standard input; a directory: every ``*.vox``
file under it, :func:`serving.commands.inputs.vox_files`). Exit status: 0 no errors,
1 errors (warnings count in ``--strict``), 2 usage error (bad option, unreadable or binary
file, worded by :mod:`serving.commands.inputs` as for ``vox run`` and ``vox test``: a message on
stderr, never a traceback). ``--format json`` prints one list of every diagnostic, each naming
its ``file``, whatever the number of files; the human and repair formats show at most
:data:`MAX_SHOWN` diagnostics per file, then how many more there are. ``--fix`` rewrites each
file in place (atomically) with :func:`vox_lang.fix`, says on stderr which files it rewrote and
then reports what is left; ``--fix --diff`` prints the change as a unified diff and writes
nothing (what would be left is one line per file on stderr, as for ``--fix`` on standard
input; ``--format json``/``repair`` do not go with either, a usage error). Only typer, the
standard library and the small :mod:`serving.commands.inputs` are imported at load time
(``vox_lang`` inside the command), so the command starts fast.
"""

from __future__ import annotations

import difflib
import json
import os
import stat
from collections.abc import Iterable
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from serving.commands.inputs import STDIN, Input, read_some

if TYPE_CHECKING:
    from vox_lang import CheckResult, Diagnostic
    from vox_lang.runtime import RuntimeFault

#: diagnostics printed per file in the human and repair formats; the rest are counted in one
#: final line (JSON lists every one). 2 KB of an ELF file gave 756 errors, 5 MB of random
#: bytes 2.6 million (1 GB of output): past the first screenful nobody reads them.
MAX_SHOWN = 50


class Format(str, Enum):
    """Renderings of spec §6."""

    human = "human"
    repair = "repair"
    json = "json"


def _fail(message: str) -> typer.Exit:
    typer.echo(f"vox check: {message}", err=True)
    return typer.Exit(2)


def render_capped(result: CheckResult, fmt: str) -> str:
    """One file's diagnostics as ``fmt``; ``human`` and ``repair`` show the first
    :data:`MAX_SHOWN` (sorted by position) and then ``… N more … not shown``."""
    from vox_lang import render_human, render_repair

    diags = result.diagnostics
    if fmt == "json" or len(diags) <= MAX_SHOWN:
        return result.render(fmt)
    shown = diags[:MAX_SHOWN]
    text = render_human(shown, result.source) if fmt == "human" else render_repair(shown)
    rest = len(diags) - MAX_SHOWN
    return text + f"\n… {rest} more diagnostic{'s' if rest != 1 else ''} not shown (--format json lists all)"


def with_file(label: str, diagnostics: Iterable[Diagnostic | RuntimeFault]) -> list[dict[str, Any]]:
    """Diagnostics (or runtime faults) as spec §6 JSON objects, each with a leading ``"file"``: the
    one shape `vox check`, `vox run` and `vox test` print."""
    return [{"file": label, **d.to_json()} for d in diagnostics]


def _fixed(item: Input) -> tuple[str, str] | None:
    """``(text, fixed text)`` of one input (:func:`vox_lang.fix`), ``None`` when it is not UTF-8
    (then it is never fixed)."""
    import vox_lang

    try:
        text = item.data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text, vox_lang.fix(text)


def _fix_one(item: Input, fix: tuple[str, str] | None, diff: bool) -> bytes:
    """Apply one input's :func:`_fixed` result (print the diff, the fixed source of standard
    input, or rewrite the file); return the bytes to check afterwards."""
    from pipeline import atomic

    if fix is None:
        typer.echo(f"vox check: {item.label}: not valid UTF-8, not fixed", err=True)
        return item.data
    text, fixed = fix
    if diff:
        lines = difflib.unified_diff(
            text.splitlines(keepends=True), fixed.splitlines(keepends=True),
            fromfile=_diff_name("a", item.label), tofile=_diff_name("b", item.label),
        )
        for line in lines:
            typer.echo(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n", nl=False)
    elif item.arg == STDIN:
        typer.echo(fixed, nl=False)
    elif fixed != text:
        try:
            # the file keeps its permission bits; a symbolic link stays a link (its target is rewritten)
            target = Path(item.arg).resolve()
            atomic.write_text(target, fixed, mode=stat.S_IMODE(target.stat().st_mode))
        except OSError as exc:
            raise _fail(f"cannot write {item.arg}: {exc.strerror or exc}") from None
        changed = sum(1 for line in difflib.ndiff(text.splitlines(), fixed.splitlines()) if line.startswith("- "))
        typer.echo(f"vox check: fixed {item.label} ({changed} line{'s' if changed != 1 else ''} rewritten)", err=True)
    return fixed.encode("utf-8")


def _refuse_unwritable(inputs: list[Input], fixes: list[tuple[str, str] | None]) -> None:
    """Before ``--fix`` writes anything: every file it would rewrite (``fixes``: :func:`_fixed`
    per input) must be writable (the file, and its directory for the atomic replace), else a
    usage error naming them and nothing is written (a read-only file late in the list used to
    leave the earlier ones rewritten)."""
    blocked = []
    for item, fix in zip(inputs, fixes):
        if item.arg == STDIN or fix is None or fix[0] == fix[1]:
            continue
        target = Path(item.arg).resolve()
        if not (os.access(target, os.W_OK) and os.access(target.parent, os.W_OK | os.X_OK)):
            blocked.append(item.arg)
    if blocked:
        raise _fail(f"cannot write {', '.join(blocked)}: permission denied; nothing was fixed")


def _diff_name(side: str, label: str) -> str:
    """``a/rel/path`` as git writes it; absolute paths and ``<stdin>`` stay as they are."""
    return label if label.startswith(("/", "<")) else f"{side}/{label}"


def render(results: list[tuple[Input, CheckResult]], fmt: Format) -> str:
    """All results in one rendering. JSON is one shape for any number of files: the spec's list of
    diagnostics (§6), each with a leading ``"file"`` (the path as given, ``<stdin>`` for ``-``), in
    file order; ``[]`` when no file has any."""
    if fmt is Format.json:
        return json.dumps([d for item, r in results for d in with_file(item.label, r.diagnostics)],
                          ensure_ascii=False)
    if fmt is Format.repair:
        if len(results) == 1:
            return render_capped(results[0][1], "repair")
        return "\n".join(f"{item.label}:\n{render_capped(r, 'repair')}" for item, r in results if r.diagnostics)
    parts = [render_capped(r, "human") for _, r in results if r.diagnostics]
    errors = sum(len(r.errors) for _, r in results)
    warnings = sum(len(r.warnings) for _, r in results)
    n = len(results)
    summary = f"checked {n} file{'s' if n != 1 else ''}: "
    summary += "no problems" if not errors and not warnings else (
        f"{errors} error{'s' if errors != 1 else ''}, {warnings} warning{'s' if warnings != 1 else ''}"
    )
    return "\n".join(parts + [summary])


def check(
    files: Annotated[list[str], typer.Argument(
        help="Vox files, or directories holding them (every *.vox under one; hidden files and directories "
             "and symlinked directories are skipped), to check (- reads standard input).",
        metavar="FILE",
    )],
    strict: Annotated[bool, typer.Option("--strict", help="Treat every warning as an error.")] = False,
    fmt: Annotated[Format, typer.Option("--format", "-f", help="Output: human, repair or json.")] = Format.human,
    fix: Annotated[bool, typer.Option("--fix", help="Rewrite compat and mechanical retired forms in place.")] = False,
    diff: Annotated[
        bool, typer.Option("--diff", help="With --fix: print the changes as a diff, write nothing.")
    ] = False,
) -> None:
    """Check Vox programs: exit 0 if there are no errors, 1 if there are, 2 on usage errors."""
    if diff and not fix:
        raise _fail("--diff only goes with --fix (use --fix --diff)")
    if fix and fmt is not Format.human and (diff or STDIN in files):
        # stdout holds the diff or the fixed source: a report there would corrupt both
        what = "--fix --diff (standard output holds the diff)" if diff else \
            "--fix on standard input (standard output holds the fixed source)"
        raise _fail(f"--format {fmt.value} does not go with {what}; run vox check without --fix for the report")
    # an unreadable argument is reported and the rest still checked (exit 2 at the end), except
    # with --fix, whose writes are all-or-nothing
    inputs, unreadable = read_some("check", files, walk=True)
    if fix and unreadable:  # say why the readable files were left as they are
        n = len(unreadable)
        typer.echo(f"vox check: --fix wrote nothing: {n} file{'s' if n != 1 else ''} could not be read", err=True)
        raise typer.Exit(2)
    if not inputs:
        raise typer.Exit(2)
    import vox_lang

    fixes: list[tuple[str, str] | None] = [_fixed(item) if fix else None for item in inputs]
    if fix and not diff:
        _refuse_unwritable(inputs, fixes)
    results = []
    fixed_any: list[bool] = []  # per input: did --fix change it
    for item, one in zip(inputs, fixes):
        data = _fix_one(item, one, diff) if fix else item.data
        fixed_any.append(data != item.data)
        results.append((item, vox_lang.check(data, path=item.label, strict=strict)))
    quiet = fix and (diff or any(i.arg == STDIN for i in inputs))
    if fix and not any(fixed_any) and all(one is not None for one in fixes) \
            and not (quiet and any(not r.ok for _, r in results)):  # (those get "no mechanical fix applies")
        # --fix --diff would print nothing at all: say so rather than leave an empty screen
        typer.echo("vox check: nothing to fix", err=True)
    if not quiet:
        out = render(results, fmt)
        if out:
            typer.echo(out)
    else:  # stdout holds the diff or the fixed text: say on stderr why the exit status is 1
        for (item, result), changed, one in zip(results, fixed_any, fixes):
            if not result.ok:
                how = "after the fix" if changed else "not fixed (not valid UTF-8)" if one is None \
                    else "no mechanical fix applies"
                typer.echo(f"vox check: {item.label}: {how}, {len(result.errors)} error(s) remain (vox check "
                           "without --fix lists them)", err=True)
    if unreadable:
        typer.echo(f"vox check: {len(unreadable)} could not be read (see above); {len(inputs)} file(s) checked",
                   err=True)
        raise typer.Exit(2)
    if any(not r.ok for _, r in results):
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Attach ``vox check`` to the `vox` app."""
    app.command("check")(check)
