"""``vox_lang.fix``: compat autofixes and mechanical retired-form migrations."""

from __future__ import annotations

from pathlib import Path

import pytest

import vox_lang
from vox_lang.fixer import apply_fixes, fixable

CASES = Path(__file__).parent / "cases"
COMPAT = sorted(CASES.glob("compat_*.vox"))
#: codes that fix() rewrites (spec §2/§6 and issue 2's list)
MECHANICAL = {
    "E0304", "E0306", "E0307", "E0308", "E0309", "E0310", "E0311", "E0312", "E0313", "E0314",
    "W0001", "W0002", "W0003", "W0004", "W0005", "W0006", "W0007", "W0008", "W0009",
}


@pytest.mark.parametrize("path", COMPAT + [CASES / "retired_tokens.vox"], ids=lambda p: p.name)
def test_fixed_compat_cases_pass_strict_mode(path: Path) -> None:
    fixed = vox_lang.fix(path.read_text(encoding="utf-8"))
    result = vox_lang.check(fixed, path=path.name, strict=True)
    assert result.diagnostics == (), result.render("human")


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("let n = 1  # note\n", "let n = 1  // note\n"),
        ("let d = 1 isnt 2\n", "let d = 1 != 2\n"),
        ('let r = Err("no")\n', 'let r = Error("no")\n'),
        ("fn one() -> int { ret 1 }\n", "fn one() to int { ret 1 }\n"),
        ("let f = fn(x: int) -> int { ret x }\n", "let f = fn(x: int) to int { ret x }\n"),
        ("let k = match 1 { 1 to 2, _ -> 3 }\n", "let k = match 1 { 1 -> 2, _ -> 3 }\n"),
        ("let b = true && false || true\n", "let b = true and false or true\n"),
        ("let t = !true\nlet u = ! false\nlet v = !!t\n", "let t = not true\nlet u = not false\nlet v = not not t\n"),
        ("let z = null\n", "let z = None\n"),
        ("let a = 1; let b = 2\n", "let a = 1\nlet b = 2\n"),
        ("fn f() {\n  let a = 1;   let b = 2;\n}\n", "fn f() {\n  let a = 1\n  let b = 2\n}\n"),
        ("fn f() to int { return 1 }\n", "fn f() to int { ret 1 }\n"),
        ("let k = match 1 { _ => 3 }\n", "let k = match 1 { _ -> 3 }\n"),
        ("type P { a: int }\n", "type P = { a: int }\n"),
    ],
)
def test_each_mechanical_fix(before: str, after: str) -> None:
    assert vox_lang.fix(before) == after


def test_fix_reaches_forms_hidden_behind_another_fix() -> None:
    # `isnt` inside an arm written with `to`: both are rewritten
    src = "let k = match 1 { 1 to 1 isnt 2, _ -> false }\n"
    assert vox_lang.fix(src) == "let k = match 1 { 1 -> 1 != 2, _ -> false }\n"


def test_non_mechanical_forms_are_left_with_their_diagnostics() -> None:
    src = "fn main():\n  print(1)\nstate n: int = 0\n@traced fn f() { }\nlet v = <p>x</p>\n"
    fixed = vox_lang.fix(src)
    assert fixed == src
    assert {"E0301", "E0302", "E0303", "E0305"} <= set(vox_lang.check(fixed).codes)


@pytest.mark.parametrize("path", sorted(CASES.glob("*.vox")), ids=lambda p: p.name)
def test_fix_is_complete_and_idempotent_on_every_case(path: Path) -> None:
    src = path.read_bytes().decode("utf-8", errors="replace")
    fixed = vox_lang.fix(src)
    assert vox_lang.fix(fixed) == fixed
    assert not fixable(fixed)
    before = {d.code for d in vox_lang.check(src).diagnostics} - MECHANICAL
    after = {d.code for d in vox_lang.check(fixed).diagnostics}
    assert not after & MECHANICAL
    # fixing never introduces a syntax error that was not there
    assert {c for c in after if c[:3] in ("E01", "E02")} <= before


def test_every_fix_is_one_of_the_mechanical_codes() -> None:
    src = "\n".join(
        p.read_bytes().decode("utf-8", errors="replace") for p in sorted(CASES.glob("*.vox"))
    )
    assert {d.code for d in fixable(src)} <= MECHANICAL


def test_overlapping_fixes_keep_the_first() -> None:
    diags = fixable("let a = 1 && 2\n")
    assert apply_fixes("let a = 1 && 2\n", diags + diags) == "let a = 1 and 2\n"


@pytest.mark.parametrize("bom", ["\ufeff", "\ufeff\ufeff"], ids=["one", "two"])
def test_fix_keeps_a_leading_byte_order_mark(bom: str) -> None:
    # check() skips one leading mark, so its spans start after it; a second one stays (E0101)
    assert vox_lang.fix(bom + "let b = true && false\n") == bom + "let b = true and false\n"
