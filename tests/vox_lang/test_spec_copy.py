"""The spec shipped with the repository (``docs/vox-language.md``) is the one the front end follows:
its §6 lists every diagnostic template of :data:`vox_lang.messages.TEMPLATES` word for word, and,
where the team's shared spec sits beside the checkout, the copy is identical to it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from vox_lang.messages import TEMPLATES

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "docs" / "vox-language.md"
SHARED = ROOT.parent / "shared" / "vox-language.md"


def spec_lines() -> dict[str, str]:
    """``{code: "message — hint"}`` from the spec's code lists: §6's lines (``E0512 `{T}` has
    ...``) and §11's one line of runtime codes (``Codes: R0001 integer overflow · R0002 ...``)."""
    text = SPEC.read_text(encoding="utf-8")
    listed = {m[1]: m[2] for m in re.finditer(r"^([EW]\d{4}) (.+)$", text, re.M)}
    runtime = re.search(r"^Codes: (R\d{4} .+)$", text, re.M)
    assert runtime is not None, "§11's line of runtime codes"
    for entry in runtime[1].rstrip(".").split(" · "):
        code, name = entry.split(" ", 1)
        listed[code] = name
    return listed


def test_every_template_is_written_as_the_spec_writes_it() -> None:
    listed = spec_lines()
    missing = sorted(set(TEMPLATES) - set(listed))
    assert not missing, f"codes with a template that docs/vox-language.md does not list: {missing}"
    for code, (message, hint) in TEMPLATES.items():
        if code.startswith("R"):  # §11 names the fault; the message adds what failed (`index {i} ...`)
            words = iter(message.replace(":", " ").split())
            assert all(w in words for w in listed[code].split()), (code, listed[code], message)
            continue
        assert listed[code].startswith(message), (code, listed[code], message)
        if hint and "{" not in hint:
            assert hint in listed[code], (code, listed[code], hint)


@pytest.mark.skipif(not SHARED.is_file(), reason="no shared spec beside this checkout (a clone elsewhere)")
def test_the_copy_is_the_shared_spec() -> None:
    assert SPEC.read_bytes() == SHARED.read_bytes(), "copy ../shared/vox-language.md to docs/vox-language.md"
