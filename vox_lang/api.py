"""The front end's entry points: :func:`check` runs lex → parse → lower → type check and
returns every diagnostic; :func:`compile_source` is the raising variant for pipelines."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from vox_lang import codes
from vox_lang.diagnostics import Diagnostic, DiagnosticSink, render_human, render_json, render_repair
from vox_lang.errors import CompileError
from vox_lang.source import BOM, SourceFile, Span

if TYPE_CHECKING:
    from vox_lang import hir, syntax

#: codes that stop name/type checking (spec §6: "Names and types are checked only if there
#: is no E01xx/E02xx, E0301 or E0305").
_BLOCKING_PREFIXES = ("E01", "E02", "E0301", "E0305")


def decode_source(data: str | bytes) -> tuple[str, list[tuple[int, int]]]:
    """Decode ``data`` as UTF-8, keeping going past bad bytes, without a leading byte-order mark.

    The spec says only that a file is UTF-8; a byte-order mark (U+FEFF) that some editors write
    at the very start is dropped, as Python, Rust and Go source readers do, from bytes and from
    text alike (text read with ``encoding="utf-8"`` keeps it), so the first character after it
    is at column 1. A U+FEFF anywhere else stays, and the lexer reports it (E0101).

    Returns:
        ``(text, bad)``: text with each invalid byte replaced by U+FFFD, and for each such
        byte its code-point offset in ``text`` and its value (for E0106).
    """
    if isinstance(data, str):
        return data.removeprefix(BOM), []
    raw = data.decode("utf-8", errors="surrogateescape").removeprefix(BOM)
    bad: list[tuple[int, int]] = []
    if any("\udc80" <= ch <= "\udcff" for ch in raw):
        chars = list(raw)
        for i, ch in enumerate(chars):
            if "\udc80" <= ch <= "\udcff":
                bad.append((i, ord(ch) - 0xDC00))
                chars[i] = "\ufffd"
        raw = "".join(chars)
    return raw, bad


@dataclass(frozen=True)
class CheckResult:
    """Outcome of :func:`check`.

    Attributes:
        source: the decoded file (for rendering).
        diagnostics: every diagnostic, sorted by position then code (strict mode applied).
        module: the AST (items with syntax errors dropped).
        hir: the lowered module, or ``None`` when syntax errors stopped name/type checking.
        complete: False only from :func:`check_here` when part of the module was left
            unchecked for lack of stack (such a result is never :attr:`ok`).
    """

    source: SourceFile
    diagnostics: tuple[Diagnostic, ...]
    module: syntax.Module
    hir: hir.Module | None
    complete: bool = True

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        """Diagnostics with severity error."""
        return tuple(d for d in self.diagnostics if d.is_error)

    @property
    def warnings(self) -> tuple[Diagnostic, ...]:
        """Diagnostics with severity warning (empty in strict mode)."""
        return tuple(d for d in self.diagnostics if not d.is_error)

    @property
    def typed(self) -> bool:
        """True when names and types were checked: no E01xx/E02xx, E0301 or E0305 stopped them
        (spec §6). Only then does :attr:`errors` count every fault; an untyped result's count
        hides its name and type errors, so it is no measure of how close a program is."""
        return self.hir is not None

    @property
    def ok(self) -> bool:
        """True when there is no error (warnings allowed) and the whole module was checked."""
        return self.complete and not self.errors

    @property
    def codes(self) -> tuple[str, ...]:
        """The codes of all diagnostics, in order."""
        return tuple(d.code for d in self.diagnostics)

    def render(self, fmt: str = "human") -> str:
        """Render as ``"human"``, ``"repair"`` or ``"json"`` (spec §6).

        Raises:
            ValueError: unknown ``fmt``.
        """
        if fmt == "human":
            return render_human(self.diagnostics, self.source)
        if fmt == "repair":
            return render_repair(self.diagnostics)
        if fmt == "json":
            return render_json(self.diagnostics)
        raise ValueError(f"unknown format {fmt!r}: use human, repair or json")


def check(source: str | bytes, path: str = "<input>", strict: bool = False) -> CheckResult:
    """Run the whole front end on one module and collect every diagnostic.

    Never raises for any input (text or bytes of any size); invalid UTF-8 is E0106. Changes no
    process-wide setting: a module nested deeper than the calling thread's stack allows is
    checked again, whole, in a child process (:mod:`vox_lang.deep`), so the result does not
    depend on the caller's stack.

    Args:
        source: the module text, or raw bytes (decoded as UTF-8).
        path: display name for renderings.
        strict: promote every warning to an error (same code).
    """
    result, sink = _check(source, path, strict, give_up=True)
    if not sink.incomplete:
        return result
    from vox_lang.deep import DeepCheckError, check_in_child

    try:
        return check_in_child(source, path, strict)
    except DeepCheckError:
        # never expected (a broken install): the unchecked part is reported, not passed over,
        # after the whole check this thread can do (the first one gave up early)
        result, sink = _check(source, path, strict)
        sink.report(codes.E0206, sink.incomplete_at or Span(0, 0))
        return CheckResult(result.source, sink.sorted(strict=strict), result.module, result.hir)


def check_here(source: str | bytes, path: str = "<input>", strict: bool = False) -> CheckResult:
    """:func:`check` in this thread only: parts deeper than its stack are left unchecked, and
    then the result says so (``complete`` is False, so it is not :attr:`~CheckResult.ok`)."""
    return _check(source, path, strict)[0]


def _check(source: str | bytes, path: str, strict: bool, give_up: bool = False) -> tuple[CheckResult, DiagnosticSink]:
    """The whole front end in this thread. ``give_up``: stop at the first pass that runs out
    of stack (the sink is then incomplete, and :func:`check` checks again in a child process,
    so the rest would be wasted); the result is then partial."""
    from vox_lang.checker import check_module
    from vox_lang.lower import lower_module
    from vox_lang.parser import parse_module

    text, bad = decode_source(source)
    src = SourceFile(text, path)
    sink = DiagnosticSink(src)
    for offset, byte in bad:
        sink.report(codes.E0106, Span(offset, offset + 1), hex=f"{byte:02X}")
    module = parse_module(src, sink, give_up=give_up)
    lowered = None
    if not (give_up and sink.incomplete) and not sink.has_code_prefix(*_BLOCKING_PREFIXES):
        lowered = lower_module(module, sink)
        if not (give_up and sink.incomplete):
            check_module(lowered, sink)
    result = CheckResult(src, sink.sorted(strict=strict), module, lowered, complete=not sink.incomplete)
    return result, sink


def is_empty_program(source: str | bytes) -> bool:
    """True when ``source`` holds no program: nothing but spaces, tabs, line ends and ``//``
    comments (no token besides ``NL``, no lexical diagnostic).

    :func:`check` accepts such a module with zero diagnostics; a caller verifying a model's
    answer (``vox chat``, evaluation) treats it as a failure of its own kind, since nothing was
    written. Never raises.
    """
    from vox_lang.lexer import TokenKind, scan

    text, bad = decode_source(source)
    if bad:
        return False
    sink = DiagnosticSink(SourceFile(text, "<input>"))
    tokens = scan(text, sink).tokens
    return len(sink) == 0 and all(t.kind is TokenKind.NL for t in tokens)


def compile_source(source: str | bytes, path: str = "<input>", strict: bool = False) -> hir.Module:
    """Like :func:`check` but return the HIR of a valid program.

    Raises:
        CompileError: the program has errors (all diagnostics attached).
    """
    result = check(source, path=path, strict=strict)
    if not result.ok or result.hir is None:
        raise CompileError(result.diagnostics, path)
    return result.hir
