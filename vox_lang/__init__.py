"""Vox front end: lexer, PEG parser, AST, HIR, type checker and diagnostics.

Public API::

    from vox_lang import check, fix
    result = check(source, path="shop.vox", strict=True)
    result.ok, result.diagnostics, result.render("repair")

This package imports nothing from the rest of the project.
"""

from vox_lang.api import CheckResult, check, compile_source, decode_source, is_empty_program
from vox_lang.codes import REGISTRY, ErrorCode
from vox_lang.diagnostics import Diagnostic, Severity, render_human, render_json, render_repair
from vox_lang.errors import CompileError, VoxError
from vox_lang.source import SourceFile, Span


def fix(source: str) -> str:
    """Apply compat autofixes and mechanical retired-form migrations (see :mod:`vox_lang.fixer`)."""
    from vox_lang.fixer import fix as _fix

    return _fix(source)


def find_retired(source: str, path: str = "<input>") -> list[Diagnostic]:
    """Every retired-syntax (E03xx) diagnostic in ``source``, from the lexer's and parser's
    retired-form detection (used to audit prompts and corpora for legacy syntax)."""
    return [d for d in check(source, path=path).diagnostics if d.code.startswith("E03")]


def find_legacy(source: str, path: str = "<input>") -> list[Diagnostic]:
    """Every retired-syntax (E03xx) or compat-spelling (:data:`~vox_lang.codes.COMPAT_CODES`,
    W0001–W0009) diagnostic in ``source``: the forms a "never write" list may show."""
    from vox_lang.codes import COMPAT_CODES

    return [d for d in check(source, path=path).diagnostics if d.code.startswith("E03") or d.code in COMPAT_CODES]


__all__ = [
    "CheckResult", "CompileError", "Diagnostic", "ErrorCode", "REGISTRY", "Severity", "SourceFile",
    "Span", "VoxError", "check", "compile_source", "decode_source", "find_legacy", "find_retired", "fix",
    "is_empty_program",
    "render_human", "render_json", "render_repair",
]
