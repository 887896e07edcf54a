"""`vox run FILE [--allow fs,process,net,env] [--max-steps N] [--timeout S] [--format …]` and
`vox test FILE… [--show-output] [--format …]` (spec §11).

``vox run`` checks the file and, if it has no errors, runs its top-level statements (else
``fn main()``); the program's ``print`` output goes to stdout, diagnostics to stderr. Exit
status: 0 ran, 1 compile errors (nothing ran), 2 usage error (unreadable file, bad option,
nothing to run), 3 runtime error (shown with its Vox call stack). ``vox test`` runs every
``@test`` function of each file, prints one line per test (with what a failing test printed under
it, and with ``--show-output`` what a passing one printed too) and ``N passed, M failed`` (naming
the files it could not run and those without a ``@test`` function), and exits 0 only when every test
passed (a file without tests fails nothing; 1 otherwise, 2 on usage errors: an unreadable file is
named on stderr and the others still run, as in ``vox check``). Only typer and the standard
library are imported at load time.
"""

from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

# the same renderings (spec §6/§11) and diagnostic cap as vox check, and the same reading of FILE
# arguments ("-", unreadable and binary files)
from serving.commands.check import Format, render_capped, with_file
from serving.commands.inputs import read_inputs, read_some

if TYPE_CHECKING:
    from vox_lang.runtime import RunConfig


def _fail(cmd: str, message: str) -> typer.Exit:
    typer.echo(f"vox {cmd}: {message}", err=True)
    return typer.Exit(2)


_MAX_TIMEOUT_S = 1_000_000.0
"""The largest --timeout accepted, seconds (about 11.6 days; threading.TIMEOUT_MAX is far above it)."""


def _config(cmd: str, allow: str, max_steps: int, timeout: float, write: Any = None) -> RunConfig:
    from vox_lang.runtime import RunConfig, parse_capabilities

    try:
        caps = parse_capabilities(allow)
    except ValueError as exc:
        raise _fail(cmd, f"--allow: {exc}") from None
    if max_steps < 1:
        raise _fail(cmd, "--max-steps must be at least 1")
    if not 0 < timeout <= _MAX_TIMEOUT_S:  # also refuses nan and inf (the thread join cannot wait that long)
        raise _fail(cmd, f"--timeout must be a positive number of seconds, at most {_MAX_TIMEOUT_S:g}")
    return RunConfig(max_steps=max_steps, timeout_s=timeout, capabilities=caps, write=write)


_SIGPIPE_EXIT = 141
"""Exit status when the reader of standard output has gone (128 + SIGPIPE, as a shell reports it)."""


def _write_out(text: str) -> None:
    """Write program output; when the reader closed the pipe (`vox run f.vox | head -1`) the
    program stops quietly with exit 141 instead of an executor 'internal error'."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        from vox_lang.runtime.errors import ExitRequest

        try:  # later flushes (interpreter exit included) must not fail again
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        raise ExitRequest(_SIGPIPE_EXIT) from None


def run(
    file: Annotated[str, typer.Argument(help="The Vox program to run (- reads standard input).", metavar="FILE")],
    allow: Annotated[str, typer.Option("--allow", help="Grant capabilities: any of fs,process,net,env.")] = "",
    max_steps: Annotated[int, typer.Option("--max-steps", help="Step budget: calls + loop iterations.")] = 10_000_000,
    timeout: Annotated[float, typer.Option("--timeout", help="Wall-clock limit, seconds.")] = 10.0,
    fmt: Annotated[Format, typer.Option("--format", "-f", help="Errors as human, repair or json.")] = Format.human,
) -> None:
    """Run a Vox program: exit 0 ran, 1 compile errors, 2 usage error, 3 runtime error."""
    cfg = _config("run", allow, max_steps, timeout, write=_write_out)
    [item] = read_inputs("run", [file])
    label, data = item.label, item.data
    from vox_lang import check
    from vox_lang.runtime import run_checked

    res = check(data, path=label)
    if not res.ok:
        typer.echo(json.dumps(with_file(label, res.diagnostics), ensure_ascii=False) if fmt is Format.json
                   else render_capped(res, fmt.value), err=True)
        raise typer.Exit(1)
    try:
        result = run_checked(res, cfg)
    except KeyboardInterrupt:
        typer.echo("vox run: interrupted", err=True)
        raise typer.Exit(130) from None
    if result.status == "usage":
        raise _fail("run", f"{label}: {result.message}")
    if result.fault is not None:
        typer.echo(json.dumps(with_file(label, [result.fault]), ensure_ascii=False) if fmt is Format.json
                   else result.fault.render(fmt.value, res.source), err=True)
    elif result.status == "internal" or result.message:  # internal error, or process.exit's note
        typer.echo(f"vox run: {label}: {result.message}", err=True)
    raise typer.Exit(result.exit_code)


def test(
    files: Annotated[list[str], typer.Argument(
        help="Vox files, or directories holding them (every *.vox under one; hidden files and directories "
             "and symlinked directories are skipped), whose @test functions to run.",
        metavar="FILE",
    )],
    allow: Annotated[str, typer.Option("--allow", help="Grant capabilities: any of fs,process,net,env.")] = "",
    max_steps: Annotated[int, typer.Option("--max-steps", help="Step budget per test.")] = 10_000_000,
    timeout: Annotated[float, typer.Option("--timeout", help="Wall-clock limit per test, seconds.")] = 10.0,
    fmt: Annotated[Format, typer.Option("--format", "-f", help="Output: human, repair or json.")] = Format.human,
    show_output: Annotated[bool, typer.Option(
        "--show-output", help="Also show what passing tests printed, under each one's line (JSON always has it).",
    )] = False,
) -> None:
    """Run every @test function: one line per test, then `N passed, M failed`; exit 0 only if all pass."""
    cfg = _config("test", allow, max_steps, timeout)
    # as `vox check`: an unreadable argument is named on stderr and the others still run (exit 2)
    readable, unreadable = read_some("test", files, walk=True)
    inputs = [(item.label, item.data) for item in readable]
    if not inputs and fmt is not Format.json:  # nothing ran: the "cannot read" lines say it all
        raise typer.Exit(2)
    from vox_lang import check
    from vox_lang.runtime import run_tests_checked

    passed = failed = 0
    broken: list[str] = []  # files not run: compile errors
    not_run: list[dict[str, Any]] = []  # --format json: each of them with its errors
    untested: list[str] = []  # files that compile but declare no @test function
    records: list[dict[str, Any]] = []
    many = len(inputs) > 1 or bool(unreadable)
    for label, data in inputs:
        res = check(data, path=label)
        if not res.ok:
            broken.append(label)
            if fmt is Format.json:  # not among "tests", which holds test results only
                not_run.append({"file": label, "compile_errors": with_file(label, res.errors)})
            else:
                typer.echo(render_capped(res, fmt.value))
            continue
        try:
            report = run_tests_checked(res, cfg)
        except KeyboardInterrupt:
            typer.echo("vox test: interrupted", err=True)
            raise typer.Exit(130) from None
        passed += report.passed
        failed += report.failed
        if not report.outcomes:
            untested.append(label)
        for o in report.outcomes:
            name = f"{label}::{o.name}" if many else o.name
            if fmt is Format.json:
                records.append({"file": label, "test": o.name, "passed": o.passed,
                                "error": o.fault.to_json() if o.fault else (o.message or None),
                                "output": o.output})
                continue
            typer.echo(o.line().replace(o.name, name, 1))
            if not o.passed and o.fault is not None and fmt is Format.human:
                for line in o.fault.stack_lines():
                    typer.echo(line)
            if o.output and (show_output or not o.passed):
                _echo_captured(o.output)
    summary = f"{passed} passed, {failed} failed"
    if broken:  # "0 passed, 0 failed" alone would read as a file without tests
        summary += f"; not run (compile errors): {', '.join(broken)}"
    if untested:  # ... or as if tests had been found and run
        summary += f"; no @test functions in: {', '.join(untested)}"
    if fmt is Format.json:
        typer.echo(json.dumps({"tests": records, "passed": passed, "failed": failed, "not_run": not_run,
                               "no_tests": untested, "unreadable": [u.to_json() for u in unreadable]},
                              ensure_ascii=False))
    else:
        typer.echo(summary)
    if unreadable and inputs:
        ran = len(inputs) - len(broken)  # a file with compile errors was read but not run
        typer.echo(f"vox test: {len(unreadable)} could not be read (see above); {ran} file(s) run"
                   + (f", {len(broken)} not run (compile errors)" if broken else ""), err=True)
    if unreadable:
        raise typer.Exit(2)
    if broken or failed:
        raise typer.Exit(1)


CAPTURED_LINES = 40
"""Most lines of a test's own output shown under its line (the rest are counted)."""


def _echo_captured(output: str) -> None:
    """Show what a test printed: a failing test's always (as pytest shows a failing test's captured
    stdout), a passing test's with ``--show-output`` (cargo test's flag)."""
    lines = output.splitlines()
    typer.echo("  output:")
    for line in lines[:CAPTURED_LINES]:
        typer.echo(f"  | {line}")
    if len(lines) > CAPTURED_LINES:
        typer.echo(f"  | … {len(lines) - CAPTURED_LINES} more line(s)")


def register(app: typer.Typer) -> None:
    """Attach ``vox run`` and ``vox test`` to the `vox` app."""
    app.command("run")(run)
    app.command("test")(test)
