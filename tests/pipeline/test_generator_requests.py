"""Each generated prompt asks for what its own program declares (vox_lang.requests reads it)."""

from __future__ import annotations

from vox_lang.requests import missing_items


def test_every_generated_prompt_is_answered_by_its_own_program() -> None:
    """The generators' prompts name what their programs declare: a requirement read from a
    prompt that its own program misses is a misread (157 of 1,108 prompts before the fix)."""
    from pipeline.generators import FAMILY_BY_NAME, generate_program
    from vox_lang.pasted import asked_items

    misread = []
    for family in FAMILY_BY_NAME:
        for index in range(12):
            _, _, program = generate_program(family, 1234, index)
            misread += [(family, p) for p in program.prompts if missing_items(asked_items(p), program.code)]
    assert misread == []
