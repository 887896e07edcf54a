"""Runtime faults (spec §11): the exception the executor raises while running, and the
diagnostic with a Vox call stack it becomes, in the human, repair and JSON renderings.

Codes and wording come from the one registry (:mod:`vox_lang.codes`, :mod:`vox_lang.messages`);
a fault is a :class:`vox_lang.Diagnostic` with severity ``runtime`` plus its stack.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from vox_lang.diagnostics import Diagnostic, Severity, caret_line, format_message, source_excerpt
from vox_lang.errors import VoxError
from vox_lang.source import SourceFile, Span

#: stack entries shown at most (deep recursion is summarised as "… N more")
MAX_STACK_SHOWN = 12


class VoxFault(VoxError):
    """A runtime error raised inside the executor; carries the Vox call stack as it unwinds.

    Attributes:
        code: ``R0001`` … ``R0010``.
        fields: template fields for the code's message.
        span: where the fault happened.
        stack: ``(function name, span)`` pairs, innermost first, filled in while unwinding.
        pending: the position inside the function being left (set by each call site).
        hint: replaces the code's hint from :data:`vox_lang.messages` (``None``: that one), for a
            fault whose cause the code's usual hint would misname.
        message: replaces the code's message likewise (an R0006 from the output cap is not a
            spent step budget).
    """

    def __init__(self, code: str, span: Span | None, *, hint: str | None = None, message: str | None = None,
                 **fields: object) -> None:
        self.code = code
        self.hint = hint
        self.message = message
        self.fields = fields
        self.span = span
        self.pending: Span | None = span
        self.stack: list[tuple[str, Span | None]] = []
        super().__init__(f"{code} {fields}")

    def leave(self, name: str) -> None:
        """Record that the fault propagated out of function ``name``."""
        self.stack.append((name, self.pending))
        self.pending = None

    def at_call(self, span: Span) -> None:
        """Record the call site in the caller (the caller's current position)."""
        if self.pending is None:
            self.pending = span


class Overtime(VoxFault):
    """R0010 raised into a run's thread by the runner's watchdog when one step (a builtin, a
    library call) outlasts the deadline; the runner fills in the detail and, when the step had
    no position of its own, the innermost call site it unwound through."""

    def __init__(self) -> None:
        super().__init__("R0010", None, detail="")


class ExitRequest(VoxError):
    """``std.process.exit(code)`` with the process capability: end the run with ``code``.

    Attributes:
        code: the exit status, 0 to 255.
        note: why ``code`` differs from the one asked for ("" when it does not).
        span: the call (for the note's position).
    """

    def __init__(self, code: int, note: str = "", span: Span | None = None) -> None:
        self.code = code
        self.note = note
        self.span = span
        super().__init__(f"exit {code}")


@dataclass(frozen=True)
class StackFrame:
    """One Vox call-stack entry: function name and the position inside it (1-based)."""

    name: str
    line: int
    col: int

    def to_json(self) -> dict[str, Any]:
        """``{"fn": name, "line": …, "col": …}``."""
        return {"fn": self.name, "line": self.line, "col": self.col}


@dataclass(frozen=True)
class RuntimeFault:
    """A runtime error as reported: the diagnostic and the call stack, innermost first."""

    diagnostic: Diagnostic
    stack: tuple[StackFrame, ...]
    hidden_frames: int = 0

    @property
    def code(self) -> str:
        """The R-code."""
        return self.diagnostic.code

    def to_json(self) -> dict[str, Any]:
        """Spec §6 JSON object with ``severity: "runtime"`` and a ``stack`` list."""
        out = self.diagnostic.to_json()
        out["stack"] = [f.to_json() for f in self.stack]
        return out

    def stack_lines(self) -> list[str]:
        """``  in fn ratio (Line 3, Col 10)`` lines."""
        lines = [f"  in {_frame_label(f.name)}" + (f" (Line {f.line}, Col {f.col})" if f.line else "")
                 for f in self.stack]
        if self.hidden_frames:
            lines.insert(MAX_STACK_SHOWN // 2, f"  … {self.hidden_frames} more call(s)")
        return lines

    def render_repair(self) -> str:
        """``Line X, Col Y: runtime error[R0003] division by zero`` then the stack lines."""
        d = self.diagnostic
        tail = f" (hint: {d.hint})" if d.hint else ""
        head = f"Line {d.line}, Col {d.col}: runtime error[{d.code}] {d.message}{tail}"
        return "\n".join([head, *self.stack_lines()])

    def render_human(self, source: SourceFile) -> str:
        """``path:line:col: runtime error[R…]: message``, the source line with carets (a window of
        a long line, :func:`~vox_lang.diagnostics.source_excerpt`), hint, stack."""
        d = self.diagnostic
        out = [f"{source.path}:{d.line}:{d.col}: runtime error[{d.code}]: {d.message}"]
        start, end = source.line_bounds(d.line)
        if end > start:
            # a long line is cut to a window around the carets, as for compile diagnostics
            shown, col, width = source_excerpt(source, d.line, d.col, d.end_line, d.end_col)
            text = "".join(ch if ch == "\t" or ch >= " " else "\ufffd" for ch in shown)
            gutter = str(d.line)
            out += [f"{gutter} | {text}", f"{' ' * len(gutter)} | {caret_line(text, col, width)}"]
        if d.hint:
            out.append(f"hint: {d.hint}")
        out += self.stack_lines()
        return "\n".join(out)

    def render(self, fmt: str, source: SourceFile) -> str:
        """``human``, ``repair`` or ``json`` (a one-element JSON list, as §6)."""
        if fmt == "json":
            return json.dumps([self.to_json()], ensure_ascii=False)
        if fmt == "repair":
            return self.render_repair()
        return self.render_human(source)


def _frame_label(name: str) -> str:
    return name if name.startswith(("script", "test ")) else f"fn {name}"


def to_fault(exc: VoxFault, source: SourceFile, outer: str) -> RuntimeFault:
    """Turn a raised :class:`VoxFault` into a reported fault; ``outer`` names the entry frame
    (``script``, ``fn main``, ``test t_add``)."""
    if exc.pending is not None or not exc.stack:
        exc.stack.append((outer, exc.pending))
        exc.pending = None
    span = exc.span or Span(0, 0)
    if exc.message is not None:
        message, hint = exc.message, exc.hint
    else:
        message, hint = format_message(exc.code, **exc.fields)
        hint = exc.hint if exc.hint is not None else hint
    line, col = source.line_col(span.start)
    end_line, end_col = source.line_col(max(span.end, span.start))
    diag = Diagnostic(exc.code, Severity.RUNTIME, message, line, col, end_line, end_col, hint, None, span)
    frames = []
    for name, where in exc.stack:
        fl, fc = source.line_col(where.start) if where is not None else (0, 0)
        frames.append(StackFrame(name, fl, fc))
    hidden = 0
    if len(frames) > MAX_STACK_SHOWN:
        half = MAX_STACK_SHOWN // 2
        hidden = len(frames) - MAX_STACK_SHOWN
        frames = frames[:half] + frames[-half:]
    return RuntimeFault(diag, tuple(frames), hidden)
