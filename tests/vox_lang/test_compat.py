"""Spec §10 upstream compatibility: every compat case is accepted with its W-code, rejected in
strict mode with the same code, and ``fix`` turns it into the text in ``cases/fixed/`` (a
fixed point that passes strict mode). Hints and HIR shapes that case files cannot show are
checked here."""

from __future__ import annotations

from pathlib import Path

import pytest

import vox_lang
from vox_lang import hir

HERE = Path(__file__).parent
CASES = HERE / "cases"
FIXED = sorted((CASES / "fixed").glob("*.vox"))
ALL = HERE / "fixtures" / "compat_all.vox"


@pytest.mark.parametrize("fixed", FIXED, ids=lambda p: p.name)
def test_compat_case_strict_rejects_fix_migrates(fixed: Path) -> None:
    src = (CASES / fixed.name).read_text(encoding="utf-8")
    loose = vox_lang.check(src, path=fixed.name)
    strict = vox_lang.check(src, path=fixed.name, strict=True)
    assert loose.ok and loose.warnings, loose.render("human")
    assert not strict.ok
    assert strict.codes == loose.codes  # same code, promoted to an error
    assert {c[0] for c in loose.codes} == {"W"}
    out = vox_lang.fix(src)
    assert out == fixed.read_text(encoding="utf-8")
    assert vox_lang.fix(out) == out
    assert vox_lang.check(out, path=fixed.name, strict=True).diagnostics == ()


def test_every_compat_spelling_in_one_module() -> None:
    src = ALL.read_text(encoding="utf-8")
    codes = set(vox_lang.check(src).codes)
    assert codes == {f"W000{i}" for i in range(1, 10)}
    once = vox_lang.fix(src)
    assert vox_lang.fix(once) == once
    assert vox_lang.check(once, strict=True).diagnostics == (), vox_lang.check(once).render("human")


def test_w0005_is_an_empty_span_at_the_first_item_with_an_insert_fix() -> None:
    src = "// notes\n\nfn f() to str {\n  ret std.path.join(\"a\", \"b\")\n}\nprint(std.time.now())\n"
    (d,) = vox_lang.check(src).diagnostics
    assert (d.code, d.line, d.col, d.end_line, d.end_col) == ("W0005", 3, 1, 3, 1)
    assert d.fix == "import std\n"
    assert vox_lang.fix(src) == src.replace("fn f()", "import std\nfn f()")


def test_import_std_or_a_local_std_silences_w0005() -> None:
    assert vox_lang.check("import std\nprint(std.time.now())\n").diagnostics == ()
    assert vox_lang.check("let std = 1\nprint(std)\n").diagnostics == ()


@pytest.mark.parametrize("name", ["fs", "time", "path", "regex"])
def test_undefined_std_module_name_hints_the_import(name: str) -> None:
    (d,) = vox_lang.check(f"let x = {name}\n").diagnostics
    assert d.code == "E0401"
    assert d.hint == f"add `import std.{name}`"


def test_unit_as_a_value_hints_the_unit_value() -> None:
    (d,) = vox_lang.check("let u = Unit\n").diagnostics
    assert (d.code, d.hint) == ("E0410", "the Unit value is `()`")


def test_endpoint_fix_keeps_a_comment_and_other_decorators() -> None:
    src = '@endpoint(kind: query) // read only\n@mcp.tool "Ping"\nfn ping() to str { ret "p" }\n'
    assert vox_lang.fix(src) == '// read only\n@mcp.tool "Ping"\npub fn ping() to str { ret "p" }\n'


def test_hir_shapes_for_the_executor() -> None:
    src = (
        'extern fn h(s: str) to str = "native/h"\n'
        'component C(t: str) {\n  let u = t\n  view: text(value=u)\n}\n'
        "@endpoint(kind: query)\nfn q(n: int) to bool { ret n is 1 }\n"
    )
    module = vox_lang.check(src).hir
    assert module is not None
    fns = {d.name: d for d in module.decls if isinstance(d, hir.FnDecl)}
    assert fns["h"].extern == "native/h" and fns["h"].body.stmts == ()
    comp = fns["C"]
    assert comp.kind == "fn" and comp.extern is None
    assert isinstance(comp.ret, hir.NamedType) and comp.ret.name == "Element"
    assert isinstance(comp.body.stmts[-1], hir.Ret)
    assert fns["q"].decorators == ()
    (ret,) = fns["q"].body.stmts
    assert isinstance(ret, hir.Ret) and isinstance(ret.value, hir.Binary) and ret.value.op == "=="


def test_arm_statement_has_type_never() -> None:
    src = "fn f(n: int) to int {\n  let k = match n {\n    0 -> ret 5\n    _ -> n\n  }\n  ret k\n}\n"
    assert vox_lang.check(src).codes == ("W0007",)


def test_process_exit_ends_a_path() -> None:
    src = "import std.process\nfn f(n: int) to int {\n  if n > 0 { ret n }\n  process.exit(1)\n}\n"
    assert vox_lang.check(src, strict=True).diagnostics == ()


def test_contextual_words_stay_names() -> None:
    src = "let view = 1\nlet component = view\nfn component2(view: int) to int { ret view }\nprint(component)\n"
    assert vox_lang.check(src, strict=True).diagnostics == ()
    assert vox_lang.check("let x = { view: 1 }\nprint(x.view)\n", strict=True).diagnostics == ()
