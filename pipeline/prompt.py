"""The system prompt, single source of truth: ``pipeline/prompts/system_prompt.txt``.

Every consumer (generators, training chat templates, evaluation, ``vox chat``) reads it
through :func:`system_prompt`; nothing else holds a copy.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

SYSTEM_PROMPT_PATH = Path(__file__).resolve().parent / "prompts" / "system_prompt.txt"


@lru_cache(maxsize=1)
def system_prompt() -> str:
    """Return the canonical Vox script-writer system prompt (UTF-8 text, stripped)."""
    return SYSTEM_PROMPT_PATH.read_text(encoding="utf-8").strip()
