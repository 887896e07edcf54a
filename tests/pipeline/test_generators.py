"""Generators: nine organic families plus script/web pairs, deterministic, every program passes
the gate, and every preflight break kind fails with its code while the fix passes."""

from __future__ import annotations

import random

import pytest

from pipeline.errors import RecipeError
from pipeline.gate import gate_pair
from pipeline.generators import FAMILIES, REPAIR_FAMILY, generate_pairs, generate_program, plan
from pipeline.generators.preflight import BREAKS, BreakKind, break_program
from pipeline.generators.themes import THEMES, vocabulary, words
from pipeline.prompt import vox_blocks

ORGANIC = ["functions", "types_match", "actors", "workflows", "mcp", "tests", "views", "modules", "automation",
           "adherence"]


def test_family_registry() -> None:
    assert [f.name for f in FAMILIES if f.source == "organic"] == ORGANIC
    assert {f.source for f in FAMILIES} == {"organic", "synthetic_script", "synthetic_web"}
    assert len(BREAKS) >= 12 and len({b.name for b in BREAKS}) == len(BREAKS)


def test_programs_are_deterministic() -> None:
    assert generate_program("views", 3, 17) == generate_program("views", 3, 17)
    assert generate_program("views", 3, 17) != generate_program("views", 4, 17)


@pytest.mark.parametrize("family", [f.name for f in FAMILIES])
def test_every_family_passes_the_gate(family: str) -> None:
    small = plan(80, {"organic": 1.0, "synthetic_script": 0.1, "synthetic_web": 0.1, "preflight": 0.5}, seed=7)
    small = type(small)(small.seed, {family: 30}, repair_rate=0.5, paraphrase_rate=0.5)
    rows = generate_pairs(small)
    assert len({r.response for r in rows if r.family == family}) >= 10  # varied programs
    for row in rows:
        assert gate_pair(row) is None, (row.id, row.response)
        assert len(vox_blocks(row.response)) == 1
        assert [m["role"] for m in row.messages("S")] == ["system", "user", "assistant"]
    assert any(r.family == REPAIR_FAMILY for r in rows)


def test_most_programs_are_short() -> None:
    sizes = [generate_program(f.name, 5, i)[2].code.count("\n") + 1 for f in FAMILIES for i in range(20)]
    assert sum(3 <= n <= 40 for n in sizes) / len(sizes) >= 0.95


@pytest.mark.parametrize("kind", BREAKS, ids=lambda k: k.name)
def test_break_kind_fails_with_its_code_and_fix_passes(kind: BreakKind) -> None:
    from vox_lang import check

    for family in [f.name for f in FAMILIES]:
        for i in range(40):
            _, _, prog = generate_program(family, 1, i)
            broken = break_program(prog.code, kind, random.Random(i))
            if broken is None:
                continue
            assert kind.code in check(broken, strict=True).codes, (kind.name, broken)
            assert check(prog.code, strict=True).ok
            return
    pytest.fail(f"no template gives break kind {kind.name} a place to apply")


def test_parallel_generation_equals_serial() -> None:
    p = plan(240, {"organic": 0.5, "synthetic_script": 0.2, "synthetic_web": 0.1, "preflight": 0.2}, seed=3)
    assert generate_pairs(p, workers=1, chunk_size=5) == generate_pairs(p, workers=2, chunk_size=5)
    rows = generate_pairs(p)
    assert {r.source for r in rows} == {"organic", "synthetic_script", "synthetic_web", "preflight"}
    assert len({r.id for r in rows}) == len(rows)
    for r in rows:  # repair variants and paraphrases share their program's instance and theme
        assert r.instance_id == r.id.split("-")[0]


def test_plan_rejects_bad_weights() -> None:
    with pytest.raises(RecipeError, match="unknown source"):
        plan(10, {"organic": 1.0, "blogs": 1.0}, seed=1)
    with pytest.raises(RecipeError):
        plan(10, {"preflight": 1.0}, seed=1)


def test_theme_vocabularies_are_disjoint() -> None:
    for t in THEMES:
        for u in THEMES:
            if t is not u:
                assert not vocabulary(t) & vocabulary(u)
    assert words("BookStatus total_fee") >= {"bookstatus", "book", "status", "total", "fee", "total_fee"}
