"""The adherence family: every prompt names what to write, and the answer declares exactly that."""

from __future__ import annotations

from pipeline.generators import generate_program
from vox_lang.requests import declared_items, extract_request, missing_items


def test_every_prompt_names_items_and_the_program_declares_exactly_them() -> None:
    from vox_lang.diagnostics import DiagnosticSink
    from vox_lang.parser import parse_module
    from vox_lang.source import SourceFile

    names = set()
    for i in range(120):
        _, _, prog = generate_program("adherence", 11, i)
        src = SourceFile(prog.code, "<adherence>")
        declared = {d.name for d in declared_items(parse_module(src, DiagnosticSink(src)))}
        for prompt in prog.prompts:
            spec = extract_request(prompt)
            assert spec, prompt
            assert missing_items(spec, prog.code) == [], (prompt, prog.code)
            assert {item.name for item in spec.items} == declared, (prompt, prog.code)
        names |= declared
    assert len(names) >= 150  # names are drawn afresh, not a handful of templates
