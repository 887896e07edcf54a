"""How prompts are presented to the model — one function shared by training and inference.

``system_prompt_mode`` is recorded with every adapter and export: ``"ssot"`` puts the current
SSOT system prompt (:func:`pipeline.prompt.system_prompt`) first; ``"none"`` drops system
messages (tiny models with short context). Serving applies the same rule from
``vox_mens.json``.
"""

from __future__ import annotations

from typing import Any, Final

from pipeline.errors import RecipeError

MODES: Final = ("ssot", "none")


def check_mode(mode: str) -> str:
    """Return ``mode`` if valid.

    Raises:
        RecipeError: not one of ``ssot``/``none``.
    """
    if mode not in MODES:
        raise RecipeError(f"system_prompt_mode must be one of {', '.join(MODES)}, got {mode!r}")
    return mode


def present(messages: list[dict[str, Any]], mode: str) -> list[dict[str, str]]:
    """The messages as the model sees them under ``mode`` (input is not modified).

    ``ssot`` replaces any system message by the SSOT prompt (or inserts it first);
    ``none`` removes system messages.
    """
    from pipeline.prompt import system_prompt

    check_mode(mode)
    rest = [{"role": m["role"], "content": m["content"]} for m in messages if m["role"] != "system"]
    if mode == "ssot":
        return [{"role": "system", "content": system_prompt()}, *rest]
    return rest


def user_turn(prompt: str, mode: str) -> list[dict[str, str]]:
    """A one-turn conversation asking ``prompt``, presented under ``mode``."""
    return present([{"role": "user", "content": prompt}], mode)
