"""The front end's small error hierarchy. Diagnostics are collected, not thrown; only APIs
that need a valid program raise :class:`CompileError`."""

from __future__ import annotations

from collections.abc import Sequence

from vox_lang.diagnostics import Diagnostic


class VoxError(Exception):
    """Root of every error raised by ``vox_lang``."""


class CompileError(VoxError):
    """Raised by APIs that need a valid program; carries every diagnostic.

    The message shows the first error in repair format and ends ``... and N more``.
    """

    def __init__(self, diagnostics: Sequence[Diagnostic], path: str = "<input>") -> None:
        self.diagnostics = tuple(diagnostics)
        errors = [d for d in self.diagnostics if d.is_error] or list(self.diagnostics)
        first = errors[0] if errors else None
        head = (
            f"{path}:{first.line}:{first.col}: {first.severity.value}[{first.code}]: {first.message}"
            if first
            else f"{path}: compile error"
        )
        more = len(errors) - 1
        super().__init__(head + (f" ... and {more} more" if more > 0 else ""))
