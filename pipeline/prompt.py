"""The system prompt, single source of truth: ``pipeline/prompts/system_prompt.txt``.

Every consumer (generators, training chat templates, evaluation, ``vox chat``) reads it
through :func:`system_prompt`; nothing else holds a copy. :func:`audit_prompt` is the
prompt's quality gate (every ```vox block compiles in strict mode; retired syntax appears only
in the one list labelled as forms never to write). ``vox_lang`` is imported lazily so that
``serving`` can import this module cheaply.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vox_lang import Diagnostic

SYSTEM_PROMPT_PATH = Path(__file__).resolve().parent / "prompts" / "system_prompt.txt"

#: the heading text that opens the one list allowed to show retired forms
NEVER_LIST_LABEL = "Forms never to write"
#: the heading the script-mode guidance must have
AUTOMATION_HEADING = "## VoxLang Automation"

_FENCE = re.compile(r"^```([A-Za-z0-9_-]*)\s*$")
_CODE_SPAN = re.compile(r"`([^`]+)`")


@lru_cache(maxsize=1)
def system_prompt() -> str:
    """Return the canonical Vox script-writer system prompt (UTF-8 text, stripped)."""
    return SYSTEM_PROMPT_PATH.read_text(encoding="utf-8").strip()


@dataclass(frozen=True)
class FencedBlock:
    """One fenced code block: its info-string language, code, and 1-based first code line."""

    lang: str
    code: str
    line: int


def fenced_blocks(text: str) -> list[FencedBlock]:
    """All fenced blocks of a markdown text, in order (an unclosed fence runs to the end)."""
    blocks: list[FencedBlock] = []
    lang: str | None = None
    start = 0
    body: list[str] = []
    for no, line in enumerate(text.splitlines(), start=1):
        m = _FENCE.match(line.strip())
        if lang is None:
            if m:
                lang, start, body = m.group(1).lower(), no + 1, []
        elif line.strip() == "```":
            blocks.append(FencedBlock(lang, "\n".join(body), start))
            lang = None
        else:
            body.append(line)
    if lang is not None:
        blocks.append(FencedBlock(lang, "\n".join(body), start))
    return blocks


def vox_blocks(text: str) -> list[str]:
    """The code of every ```vox block in ``text`` (the unit the compiler gate checks)."""
    return [b.code for b in fenced_blocks(text) if b.lang == "vox"]


@dataclass(frozen=True)
class Finding:
    """One audit problem: 1-based prompt line, the diagnostic code and a readable message."""

    line: int
    code: str
    message: str


@dataclass(frozen=True)
class PromptAudit:
    """Outcome of :func:`audit_prompt`.

    Attributes:
        vox_blocks: number of ```vox blocks checked.
        block_errors: strict-mode errors inside ```vox blocks (line = prompt line).
        retired_outside: retired forms found outside the never-write list.
        never_lists: how many never-write lists the prompt has (exactly one is required).
        undetected_items: never-write list lines whose code shows no retired form.
        has_automation_section: the ``## VoxLang Automation`` heading is present.
    """

    vox_blocks: int
    block_errors: tuple[Finding, ...] = field(default_factory=tuple)
    retired_outside: tuple[Finding, ...] = field(default_factory=tuple)
    never_lists: int = 0
    undetected_items: tuple[int, ...] = field(default_factory=tuple)
    has_automation_section: bool = False

    @property
    def ok(self) -> bool:
        """True when the prompt passes every rule."""
        return (
            self.vox_blocks > 0
            and not self.block_errors
            and not self.retired_outside
            and self.never_lists == 1
            and not self.undetected_items
            and self.has_automation_section
        )

    def problems(self) -> list[str]:
        """Human-readable problems, one per line item (empty when :attr:`ok`)."""
        out = [f"line {f.line}: ```vox block: {f.code} {f.message}" for f in self.block_errors]
        out += [f"line {f.line}: retired form outside the never-write list: {f.code} {f.message}"
                for f in self.retired_outside]
        if self.vox_blocks == 0:
            out.append("no ```vox block")
        if self.never_lists != 1:
            out.append(f"expected exactly one list headed {NEVER_LIST_LABEL!r}, found {self.never_lists}")
        out += [f"line {n}: never-write item shows no retired form" for n in self.undetected_items]
        if not self.has_automation_section:
            out.append(f"missing section {AUTOMATION_HEADING!r}")
        return out


def _prose(line: str) -> str:
    """Markdown decoration removed so the line can be scanned as code: heading marks,
    bullets and backticks (they are markdown, not Vox)."""
    s = re.sub(r"^\s*#{1,6}\s+", "", line)
    s = re.sub(r"^\s*[-*]\s+", "", s)
    return s.replace("`", " ")


def _retired(text: str) -> list[Diagnostic]:
    from vox_lang import find_retired

    return find_retired(text) if text.strip() else []


def _legacy(text: str) -> list[Diagnostic]:
    """Retired forms and compat spellings (W0001–W0009): what a never-write item may show."""
    from vox_lang import find_legacy

    return find_legacy(text) if text.strip() else []


def audit_prompt(text: str | None = None) -> PromptAudit:
    """Audit a system prompt (default: the SSOT prompt).

    Rules: every ```vox block passes ``vox_lang.check(strict=True)``; outside fenced blocks,
    each line (markdown marks removed) shows no retired form per ``vox_lang.find_retired``,
    except inside the single list under a heading containing ``Forms never to write``, where
    every item's code spans must show at least one retired form or compat spelling
    (``vox_lang.find_legacy``); the prompt has a
    ``## VoxLang Automation`` section.
    """
    from vox_lang import check

    text = system_prompt() if text is None else text
    lines = text.splitlines()
    blocks = fenced_blocks(text)
    block_errors: list[Finding] = []
    for b in (b for b in blocks if b.lang == "vox"):
        for d in check(b.code, strict=True).errors:
            block_errors.append(Finding(b.line + d.line - 1, d.code, d.message))
    in_fence = {n for b in blocks for n in range(b.line - 1, b.line + b.code.count("\n") + 2)}
    retired_outside: list[Finding] = []
    undetected: list[int] = []
    never_lists = 0
    in_list = False
    for no, line in enumerate(lines, start=1):
        if no in in_fence:
            continue
        if line.lstrip().startswith("#"):
            in_list = NEVER_LIST_LABEL.lower() in line.lower()
            never_lists += in_list
            if in_list:
                continue
        elif not line.strip():
            in_list = False
            continue
        if in_list:
            spans = _CODE_SPAN.findall(line)
            if not any(_legacy(s) for s in spans):
                undetected.append(no)
            continue
        for d in _retired(_prose(line)):
            retired_outside.append(Finding(no, d.code, d.message))
    has_auto = any(ln.strip() == AUTOMATION_HEADING for ln in lines)
    return PromptAudit(
        vox_blocks=sum(b.lang == "vox" for b in blocks),
        block_errors=tuple(block_errors),
        retired_outside=tuple(retired_outside),
        never_lists=never_lists,
        undetected_items=tuple(undetected),
        has_automation_section=has_auto,
    )
