"""Flat operator chains of any length are checked whole and run (newuser fault A), and a pass
that stops for lack of stack never yields a clean result silently (:func:`vox_lang.depth.out_of_budget`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import vox_lang
from serving.cli import app
from vox_lang import deep
from vox_lang.api import check_here

DEEP = "fn f(c: bool) to int {\n" + "if c {\n" * 150 + "ret 1\n" + "}\n" * 150 + "ret 0\n}\n"


@pytest.mark.parametrize("terms", [3_000, 10_000])
def test_undefined_name_at_the_head_of_a_long_chain_is_e0401(terms: int) -> None:
    result = vox_lang.check("let n = nope" + " + 1" * terms + "\n")
    assert result.codes == ("E0401",)
    assert (result.errors[0].line, result.errors[0].col) == (1, 9)


def test_a_valid_10000_term_chain_checks_clean_in_process_and_runs(tmp_path: Path) -> None:
    text = "let x = 1" + " + 1" * 10_000 + "\nprint(x)\n"
    here = check_here(text)  # one nesting level: no child process needed
    assert here.complete and here.ok and here.codes == ()
    path = tmp_path / "sum.vox"
    path.write_text(text)
    result = CliRunner().invoke(app, ["run", str(path)])
    assert result.exit_code == 0 and result.stdout == "10001\n"


def test_long_mixed_chain_keeps_precedence_and_types() -> None:
    from vox_lang.runtime.runner import run_source

    text = "let x = 2" + " * 3 - 5 + 1" * 100 + "\nlet y: float = 1" + " + 1" * 100 + "\nprint(x)\nprint(y)\n"
    result = run_source(text)
    assert result.output == f"{2 * 3 - 5 + sum(1 * 3 - 5 for _ in range(99)) + 1}\n101.0\n"


def test_a_deep_part_left_unchecked_is_never_silent_in_this_thread() -> None:
    result = check_here(DEEP + "let y: str = f(true)\n")
    assert not result.complete and not result.ok


def test_a_failing_child_gives_e0206_not_a_clean_result(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_: object) -> vox_lang.CheckResult:
        raise deep.DeepCheckError("no child")

    monkeypatch.setattr(deep, "check_in_child", broken)
    result = vox_lang.check(DEEP)
    assert "E0206" in result.codes and not result.ok


def test_a_chain_deeper_than_the_child_budget_is_e0206() -> None:
    result = vox_lang.check('let m = " a "' + ".trim()" * 3_000 + "\n")  # one call per level
    assert result.codes == ("E0206",)
