"""The SSOT system prompt: one accessor, and its audit (strict ```vox blocks, retired forms only
in the never-write list, the VoxLang Automation section)."""

from __future__ import annotations

from pipeline import prompt
from pipeline.prompt import AUTOMATION_HEADING, audit_prompt, fenced_blocks, system_prompt, vox_blocks


def test_accessor_reads_the_one_file() -> None:
    assert system_prompt() == prompt.SYSTEM_PROMPT_PATH.read_text(encoding="utf-8").strip()
    assert system_prompt() is system_prompt()  # cached


def test_ssot_prompt_passes_its_audit() -> None:
    audit = audit_prompt()
    assert audit.ok, audit.problems()
    assert audit.vox_blocks >= 2
    assert AUTOMATION_HEADING in system_prompt()


def test_planted_legacy_prompt_fails() -> None:
    legacy = system_prompt().replace(
        "## Example module",
        "## Example module\nactor Counter:\n  state count: int = 0\n@server fn save() { }\nUse # for notes.",
    )
    audit = audit_prompt(legacy)
    assert not audit.ok
    assert {f.code for f in audit.retired_outside} >= {"E0301", "E0302", "E0303", "E0304"}


def test_retired_form_inside_a_vox_block_fails() -> None:
    bad = system_prompt().replace("fn area(s: Shape) to float {", "fn area(s: Shape) -> float {", 1)
    audit = audit_prompt(bad)
    assert [f.code for f in audit.block_errors] == ["E0308"]


def test_structure_rules() -> None:
    no_auto = system_prompt().replace(AUTOMATION_HEADING, "## Scripts")
    assert "missing section" in " ".join(audit_prompt(no_auto).problems())
    two_lists = system_prompt() + "\n\n## Forms never to write again\n- `let a = 1; let b = 2`"
    assert audit_prompt(two_lists).never_lists == 2
    fake_item = system_prompt() + "\n- `let ok = true` is fine"
    assert audit_prompt(fake_item).undetected_items


def test_fenced_block_extraction() -> None:
    text = "intro\n```vox\nlet a = 1\n```\n```text\nLine 1\n```\n```vox\nlet b = 2\n"
    assert [b.lang for b in fenced_blocks(text)] == ["vox", "text", "vox"]
    assert vox_blocks(text) == ["let a = 1", "let b = 2"]
    assert fenced_blocks(text)[0].line == 3
