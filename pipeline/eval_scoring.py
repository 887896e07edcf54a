"""Scoring one completion for the eval: what compiles, what was asked, and why a sample failed.

The **headline** criterion (release gate, model card, ``vox_mens.json``, the router's Vox pass@1):
a completion passes when its ```vox blocks, checked together as one module, have no error and
no warning (strict mode, as the corpus gate checks), the module is not empty or comment-only,
and it declares every item the task names (:func:`vox_lang.requests.missing_items`, with the
exact signature when the task gives one). The **raw** compile rate (no error, warnings allowed,
names not checked) is kept as a secondary figure. Failures are classed by their first reason
(:func:`failure_class`): ``syntax`` (E01xx/E02xx), ``retired`` (E03xx), ``names`` (E04xx),
``types`` (E05xx), ``warning`` (strict-only), ``undeclared`` (compiles but misses what was
asked), ``no_code``, ``empty``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from pipeline.decoding_fence import vox_blocks

NO_CODE: Final = "NO_CODE"  # failure code for a completion without a ```vox block
EMPTY: Final = "EMPTY"  # failure code for a block holding nothing but comments and blank lines
UNDECLARED: Final = "UNDECLARED"  # compiles, but misses an item the task names
_COMMENT = re.compile(r"//[^\n]*")

#: failure classes, in report order
CLASSES: Final = ("syntax", "retired", "names", "types", "warning", "undeclared", "no_code", "empty", "other")


@dataclass(frozen=True)
class CheckOutcome:
    """Front-end codes of one module: ``errors`` and ``warnings`` (diagnostic codes, in order)."""

    errors: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()


#: ``check(code) -> CheckOutcome``; a legacy ``(passed, first code)`` tuple is also accepted
Checker = Callable[[str], Any]


def vox_checker(strict: bool = False) -> Checker:
    """A :data:`Checker` backed by ``vox_lang.check`` (non-strict: warnings stay warnings, so
    the raw and the strict verdict both come from one check)."""
    import vox_lang

    def check(code: str) -> CheckOutcome:
        result = vox_lang.check(code, path="<completion>", strict=strict)
        return CheckOutcome(tuple(d.code for d in result.errors), tuple(d.code for d in result.warnings))

    return check


def as_outcome(value: Any) -> CheckOutcome:
    """Normalise a checker's answer: a :class:`CheckOutcome` or a legacy ``(ok, code)`` tuple."""
    if isinstance(value, CheckOutcome):
        return value
    ok, code = value
    return CheckOutcome() if ok else CheckOutcome((code or "UNKNOWN",))


def extract_vox(text: str) -> str | None:
    """The ```vox blocks of ``text`` (:func:`pipeline.decoding_fence.vox_blocks`) joined as one module, or ``None`` if
    there is none.

    An unterminated final block (generation cut off) counts up to the end of the text.
    """
    blocks, _ = vox_blocks(text)
    return "\n\n".join(b.rstrip() for b in blocks) if blocks else None


def truncated(text: str) -> bool:
    """True when the completion's last ```vox block was never closed (cut by the token limit)."""
    return vox_blocks(text)[1]


def is_empty(code: str) -> bool:
    """True for a module of only comments and whitespace (it never passes)."""
    return not _COMMENT.sub("", code).strip()


@dataclass(frozen=True)
class SampleScore:
    """The verdicts on one completion.

    Attributes:
        has_code: a ```vox block was found.
        compiled: no error (warnings allowed): the raw compile rate, and what ``vox chat`` calls PASS.
        strict: no error and no warning, and not empty.
        missing: names the task asked for that the program does not declare.
        named: the task names at least one item.
        codes: every diagnostic code (errors, then warnings).
        n_errors: error count (``NO_CODE``/``EMPTY`` count as one).
        truncated: the last block was cut off by the token limit.
    """

    has_code: bool
    compiled: bool
    strict: bool
    missing: tuple[str, ...]
    named: bool
    codes: tuple[str, ...]
    n_errors: int
    truncated: bool = False

    @property
    def passed(self) -> bool:
        """The headline criterion: strict, non-empty, and declares what was asked."""
        return self.strict and not self.missing

    @property
    def declared(self) -> bool:
        """Declares every item the task names (vacuously true when it names none)."""
        return self.has_code and not self.missing

    @property
    def failure(self) -> str | None:
        """The first reason the sample fails the headline criterion (a code), or ``None``."""
        if not self.has_code:
            return NO_CODE
        if self.passed:
            return None
        if self.codes:
            return self.codes[0]
        return EMPTY if not self.missing else UNDECLARED


def score_completion(text: str, prompt: str, checker: Checker) -> SampleScore:
    """Score ``text`` (a model's answer) for the task ``prompt`` with ``checker``."""
    from vox_lang.requests import extract_request, missing_items

    spec = extract_request(prompt)
    code = extract_vox(text)
    if code is None:
        return SampleScore(False, False, False, tuple(i.name for i in spec.items), bool(spec), (), 1)
    cut = truncated(text)
    if is_empty(code):
        return SampleScore(True, False, False, tuple(i.name for i in spec.items), bool(spec), (EMPTY,), 1, cut)
    out = as_outcome(checker(code))
    missing = tuple(missing_items(spec, code)) if spec else ()
    compiled = not out.errors
    return SampleScore(True, compiled, compiled and not out.warnings, missing, bool(spec),
                       out.errors + out.warnings, len(out.errors), cut)


def failure_class(code: str) -> str:
    """The class of a failure code (see the module docstring)."""
    if code == NO_CODE:
        return "no_code"
    if code == EMPTY:
        return "empty"
    if code == UNDECLARED:
        return "undeclared"
    if code.startswith("W"):
        return "warning"
    prefix = code[:3]
    return {"E01": "syntax", "E02": "syntax", "E03": "retired", "E04": "names", "E05": "types"}.get(prefix, "other")


def verified_choice(scores: Sequence[SampleScore]) -> int:
    """Index of the candidate compiler-verified best-of-n answers with (as ``vox chat`` does):
    the first that compiles and declares what was asked, else the first that compiles, else
    the one with the fewest errors (earliest on ties).

    Raises:
        ValueError: no candidates.
    """
    if not scores:
        raise ValueError("verified_choice needs at least one candidate")
    for i, s in enumerate(scores):
        if s.compiled and not s.missing:
            return i
    for i, s in enumerate(scores):
        if s.compiled:
            return i
    return min(range(len(scores)), key=lambda i: (scores[i].n_errors, i))
