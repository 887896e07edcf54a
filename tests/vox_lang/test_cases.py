"""The one data-driven front-end test: every ``cases/*.vox`` file is checked and its
diagnostics compared with the expectations written in the file.

Expectation syntax (``//``, since ``#`` is itself a retired form):

* On the offending line, a trailing comment listing codes, each optionally with its column:
  ``let x = 3 $ 4 // E0101 @11`` or ``f(a=1, 2) // E0208 @12 W0001``. The comment is found
  as the line's last ``//`` followed only by codes, so it also works after a ``#`` comment
  or markup that the lexer swallows up to the line end.
* For a diagnostic on a line that cannot carry a comment (an unterminated string, E0202 at the
  end of the file, a line inside an unclosed bracket), a header line anywhere in the file:
  ``// expect: E0202 @12:1`` (code, ``@line:col``; several per header allowed).

A diagnostic matches an expectation with the same code and line (and column, when given).
Every diagnostic must be expected and every expectation met, so a file with no expectations
must check clean in strict mode (a passing case). Files are read as bytes (E0106 cases).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

import vox_lang

CASES = Path(__file__).parent / "cases"
_CODE = r"[EW]\d{4}"
_INLINE = re.compile(rf"//\s*((?:{_CODE}(?:\s*@\d+)?\s*)+)$")
_INLINE_ITEM = re.compile(rf"({_CODE})(?:\s*@(\d+))?")
_HEADER = re.compile(rf"^\s*//\s*expect:\s*((?:{_CODE}\s*@\d+:\d+\s*)+)$")
_HEADER_ITEM = re.compile(rf"({_CODE})\s*@(\d+):(\d+)")


@dataclass(frozen=True)
class Expectation:
    """One expected diagnostic; ``col`` is ``None`` when the case does not pin it."""

    code: str
    line: int
    col: int | None

    def __str__(self) -> str:
        return f"{self.code} @{self.line}:{self.col if self.col is not None else '*'}"


def parse_expectations(text: str) -> list[Expectation]:
    """Read the inline and header expectations of one case file."""
    out: list[Expectation] = []
    for number, line in enumerate(text.splitlines(), start=1):
        header = _HEADER.match(line)
        if header:
            for code, ln, col in _HEADER_ITEM.findall(header.group(1)):
                out.append(Expectation(code, int(ln), int(col)))
            continue
        cut = line.rfind("//")
        inline = _INLINE.match(line, cut) if cut >= 0 else None
        if inline:
            for code, col in _INLINE_ITEM.findall(inline.group(1)):
                out.append(Expectation(code, number, int(col) if col else None))
    return out


def unmatched(expected: list[Expectation], actual: list[Expectation]) -> tuple[list[Expectation], list[Expectation]]:
    """Pair expectations with diagnostics (pinned columns first); return what is left of each."""
    left = list(actual)
    missing: list[Expectation] = []
    for exp in sorted(expected, key=lambda e: e.col is None):
        hit = next(
            (a for a in left if a.code == exp.code and a.line == exp.line and exp.col in (None, a.col)),
            None,
        )
        if hit is None:
            missing.append(exp)
        else:
            left.remove(hit)
    return missing, left


def case_files() -> list[Path]:
    return sorted(CASES.glob("*.vox"))


@pytest.mark.parametrize("path", case_files(), ids=lambda p: p.name)
def test_case(path: Path) -> None:
    data = path.read_bytes()
    expected = parse_expectations(data.decode("utf-8", errors="replace"))
    result = vox_lang.check(data, path=path.name, strict=not expected)
    actual = [Expectation(d.code, d.line, d.col) for d in result.diagnostics]
    missing, extra = unmatched(expected, actual)
    if missing or extra:
        pytest.fail(
            f"{path.name}: missing {[str(m) for m in missing]}, unexpected {[str(e) for e in extra]}\n"
            + result.render("human")
        )


def test_expectation_syntax() -> None:
    text = "let x = 3 $ 4 // E0101 @11\n// expect: E0202 @3:1 E0203 @2:9\nlet n = 1  # c // E0304\n"
    assert parse_expectations(text) == [
        Expectation("E0101", 1, 11),
        Expectation("E0202", 3, 1),
        Expectation("E0203", 2, 9),
        Expectation("E0304", 3, None),
    ]
    assert parse_expectations('let s = "a // b"\n') == []


def test_pairing_reports_both_sides() -> None:
    exp = [Expectation("E0401", 2, None), Expectation("E0501", 3, 4)]
    act = [Expectation("E0401", 2, 7), Expectation("E0501", 3, 5)]
    missing, extra = unmatched(exp, act)
    assert missing == [Expectation("E0501", 3, 4)]
    assert extra == [Expectation("E0501", 3, 5)]
