"""Check the Vox program of a model's answer honestly: :func:`verify_answer`.

The ```vox blocks are checked together as one module (:func:`serving.extract.join_program`).
Three cases get their own outcome instead of a plain PASS/FAIL:

- **no program**: blocks that hold nothing but blanks and ``//`` comments are a FAIL of their own
  (:func:`vox_lang.is_empty_program`); the compiler would accept them with zero diagnostics.
- **a draft, then the corrected program**: when the joined blocks fail but the last complete
  block passes alone, that block is the program, and a note says so.
- **a cut-off answer**: a block without its closing fence, or an answer that stopped at the token
  limit, can still pass, but the verdict says it may be truncated.

Nothing here executes anything.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from serving.extract import VoxBlock, extract_vox_blocks, join_program

#: the repair request for an answer whose blocks hold no program
EMPTY_PROGRAM_MESSAGE: Final = (
    "Your ```vox block holds no program (it is empty or only comments), so nothing could be checked. "
    "Reply with the complete program in one ```vox block.")
EMPTY_PROGRAM_SUMMARY: Final = "the ```vox block holds no program (empty or only comments)"


@dataclass(frozen=True)
class Verification:
    """What :func:`verify_answer` found.

    Attributes:
        blocks: every ```vox block of the answer, in order.
        program: the checked program (``None`` when the answer has no block).
        result: ``check(program)`` (``None`` when nothing was checked: no block, or no program).
        empty: the blocks hold no program (only blanks and comments).
        notes: one line each, for the transcript (``[check] ...``): which block was used, which
            block is unterminated, that the answer hit the token limit.
        caveat: appended to a PASS verdict when the answer may be cut off (``""`` otherwise).
        hit_limit: the provider said the answer stopped at the token limit (``finish_reason``
            ``"length"``).
    """

    blocks: tuple[VoxBlock, ...]
    program: str | None
    result: Any | None
    empty: bool = False
    notes: tuple[str, ...] = ()
    caveat: str = ""
    hit_limit: bool = False

    @property
    def passed(self) -> bool:
        """True when a non-empty program was checked with zero errors."""
        return self.result is not None and not self.result.errors

    @property
    def cut_off(self) -> bool:
        """True when a block of the answer has no closing fence (the answer hit its token limit)."""
        return any(not b.terminated for b in self.blocks)


def _is_empty(source: str) -> bool:
    from vox_lang import is_empty_program

    return bool(is_empty_program(source))


def verify_answer(answer: str, check: Callable[[str], Any], *, finish_reason: str | None = None) -> Verification:
    """Extract and check the Vox program of ``answer``.

    Args:
        answer: the model's whole reply (reasoning sections are ignored).
        check: ``source -> CheckResult`` (``errors``/``warnings``/``diagnostics``), e.g. :func:`vox_lang.check`.
        finish_reason: the provider's finish reason; ``"length"`` means the answer hit the token limit.

    Returns:
        The :class:`Verification` (never raises for any answer).
    """
    blocks = tuple(extract_vox_blocks(answer))
    hit_limit = finish_reason == "length"
    if not blocks:
        return Verification(blocks, None, None, hit_limit=hit_limit)
    program = join_program(list(blocks))
    if _is_empty(program):
        return Verification(blocks, program, None, empty=True, hit_limit=hit_limit)
    result = check(program)
    used: tuple[VoxBlock, ...] = blocks
    notes: list[str] = []
    if result.errors and len(blocks) > 1:
        complete = [b for b in blocks if b.terminated and not _is_empty(b.code)]
        last = complete[-1] if complete else None
        if last is not None and len([b for b in blocks if not _is_empty(b.code)]) > 1:
            alone = check(last.code + "\n")
            if not alone.errors:
                notes.append(f"the {len(blocks)} ```vox blocks fail together ({len(result.errors)} error(s)); the "
                             f"last complete block (line {last.line}) passes alone and is used as the program")
                program, result, used = last.code + "\n", alone, (last,)
    caveats = []
    dropped = [b for b in blocks if not b.terminated and b not in used]
    if dropped:
        notes.append(f"the unterminated ```vox block at line {dropped[0].line} was left out")
    open_blocks = [b for b in used if not b.terminated]
    if open_blocks:
        notes.append(f"the ```vox block at line {open_blocks[0].line} has no closing fence: the answer may be cut off; "
                     "what arrived was checked")
        caveats.append("unterminated ```vox block: the answer may be cut off")
    if hit_limit:
        notes.append("the answer stopped at the token limit (finish_reason=length)")
        caveats.append("the answer hit the token limit")
    caveat = f" ({'; '.join(caveats)})" if caveats else ""
    return Verification(blocks, program, result, notes=tuple(notes), caveat=caveat, hit_limit=hit_limit)


def example_notes(answer: str, check: Callable[[str], Any]) -> list[str]:
    """One line per ```vox block of a prose answer (a question's, not a Vox request's), each
    block checked on its own: ``example 1 of 2 compiles`` or ``example 2 of 2 does not compile:
    E0401 at 3:7 undefined name `foo` (+1 more)``. An answer to a question gets no verdict and no
    repair, but an example the compiler refuses is never shown as if it were Vox. Blocks of only
    blanks and comments are skipped; no blocks: no lines. Nothing here executes anything.

    Args:
        answer: the model's whole reply.
        check: the front end's check (``source -> CheckResult``).
    """
    blocks = [b for b in extract_vox_blocks(answer) if not _is_empty(b.code)]
    notes: list[str] = []
    for i, block in enumerate(blocks, 1):
        errors = check(block.code).errors
        where = f"example {i} of {len(blocks)}" + ("" if block.terminated else " (cut off)")
        if not errors:
            notes.append(f"{where} compiles")
            continue
        first = errors[0]
        more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
        notes.append(f"{where} does not compile: {first.code} at {first.line}:{first.col} {first.message}{more}")
    return notes
