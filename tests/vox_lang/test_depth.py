"""The front end changes no process-wide setting (recursion limit, garbage collector): deep
programs are checked in a child process (:mod:`vox_lang.deep`) instead (issue 12)."""

from __future__ import annotations

import gc
import sys

import pytest

import vox_lang
from vox_lang import deep
from vox_lang.api import check_here

DEEP = "fn f(c: bool) to int {\n" + "if c {\n" * 150 + "ret 1\n" + "}\n" * 150 + "ret 0\n}\nlet y: str = f(true)\n"
SHALLOW = "fn f(c: bool) to int {\n" + "if c {\n" * 8 + "ret 1\n" + "}\n" * 8 + "ret 0\n}\nlet y: str = f(true)\n"


@pytest.fixture()
def frozen_globals(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if anything in this process touches the recursion limit or the GC."""

    def refuse(*_: object) -> None:
        raise AssertionError("the front end changed a process-wide setting")

    monkeypatch.setattr(sys, "setrecursionlimit", refuse)
    monkeypatch.setattr(gc, "disable", refuse)
    monkeypatch.setattr(gc, "enable", refuse)
    monkeypatch.setattr(gc, "freeze", refuse)


@pytest.mark.usefixtures("frozen_globals")
@pytest.mark.parametrize("text", [SHALLOW, DEEP, "let n = " + " + ".join(["1"] * 3000) + "\n"])
def test_check_touches_no_process_wide_setting(text: str) -> None:
    result = vox_lang.check(text)
    assert all(c in ("E0506",) for c in result.codes), result.codes


def test_deep_programs_are_checked_whole_in_a_child(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = deep.check_in_child

    def spy(source: str | bytes, path: str, strict: bool) -> vox_lang.CheckResult:
        calls.append(1)
        return real(source, path, strict)

    monkeypatch.setattr(deep, "check_in_child", spy)
    assert vox_lang.check(SHALLOW).codes == ("E0506",) and not calls
    result = vox_lang.check(DEEP, path="deep.vox", strict=True)
    assert calls == [1]
    assert result.codes == ("E0506",) and result.hir is not None and result.source.path == "deep.vox"


def test_in_this_thread_a_deep_program_is_cut_short_not_crashed() -> None:
    result = check_here(DEEP)  # no child: the deep item is left out, nothing raises
    assert "E0506" not in result.codes
    assert not [c for c in result.codes if c.startswith(("E01", "E02"))]


def test_when_no_child_answers_the_whole_module_is_checked_here(monkeypatch: pytest.MonkeyPatch) -> None:
    # check() stops its own pass at the first item too deep for this thread (the child
    # checks the module again); if the child cannot answer, it checks here after all: every
    # diagnostic the thread can find, and E0206 where it stopped
    def broken(source: str | bytes, path: str, strict: bool) -> vox_lang.CheckResult:
        raise deep.DeepCheckError("no child")

    monkeypatch.setattr(deep, "check_in_child", broken)
    text = SHALLOW.replace("f(", "g(") + DEEP + "let z: int = true\n"
    here = check_here(text)
    result = vox_lang.check(text)
    assert [d for d in result.diagnostics if d.code != "E0206"] == list(here.diagnostics)
    assert result.codes.count("E0206") == 1 and "E0506" in result.codes and result.hir is not None
