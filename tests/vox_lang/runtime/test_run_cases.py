"""Case-file suite for the executor (spec §11): ``cases/NAME.vox`` runs with the limits in its
header and must exit with the expected code, print ``NAME.stdout`` (empty when absent) and, for
runtime errors, fault with the expected R-code at the expected line and column.

Header lines (``//`` comments before the code)::

    // exit: 3            expected exit code of `vox run` (or of `vox test` with mode: test)
    // error: R0003 4:7   expected runtime error code and position
    // allow: fs,env      capabilities granted
    // max-steps: 1000    step budget        // timeout: 0.3   seconds
    // mode: test         run the @test functions (stdout = the test report)
    // hint: capped at    the fault's hint contains this   // not-hint: --max-steps   ... and not this
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from vox_lang import check
from vox_lang.runtime import (
    RunConfig,
    TestReport,
    parse_capabilities,
    run_checked,
    run_tests_checked,
)

CASES = Path(__file__).parent / "cases"
_HEADER = re.compile(r"//\s*([a-z-]+):\s*(.*)")


def header(text: str) -> dict[str, str]:
    """The ``// key: value`` lines at the top of a case."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        if not line.startswith("//"):
            break
        m = _HEADER.match(line)
        if m:
            out[m.group(1)] = m.group(2).strip()
    return out


def report_text(report: TestReport) -> tuple[str, int]:
    """What `vox test` prints for one file (human format), and its exit code."""
    lines = []
    for o in report.outcomes:
        lines.append(o.line())
        if o.fault is not None:
            lines += o.fault.stack_lines()
    lines.append(report.summary())
    return "\n".join(lines) + "\n", 0 if report.ok else 1


@pytest.mark.parametrize("case", sorted(CASES.glob("*.vox")), ids=lambda p: p.stem)
def test_case(case: Path) -> None:
    text = case.read_text()
    h = header(text)
    cfg = RunConfig(
        max_steps=int(h.get("max-steps", "10000000")),
        timeout_s=float(h.get("timeout", "10")),
        capabilities=parse_capabilities(h.get("allow", "")),
    )
    res = check(text, path=case.name)
    expected_out = case.with_suffix(".stdout")
    want = expected_out.read_text() if expected_out.exists() else ""
    if h.get("mode") == "test":
        out, code = report_text(run_tests_checked(res, cfg))
        assert (out, code) == (want, int(h["exit"]))
        return
    result = run_checked(res, cfg)
    assert result.status != "internal", result.message
    assert result.exit_code == int(h["exit"]), (result.status, result.fault)
    assert result.output == want
    if "error" in h:
        want_code, pos = h["error"].split()
        line, col = (int(x) for x in pos.split(":"))
        assert result.fault is not None
        d = result.fault.diagnostic
        assert (d.code, d.line, d.col) == (want_code, line, col), result.fault.render_repair()
        assert d.severity.value == "runtime"
        assert len(result.fault.stack) >= 1, "a runtime error carries its Vox call stack"
        if "hint" in h:
            assert h["hint"] in (d.hint or ""), d.hint
        if "not-hint" in h:
            assert h["not-hint"] not in (d.hint or ""), d.hint
    else:
        assert result.fault is None, result.fault


def test_every_runtime_code_has_a_case() -> None:
    """R0001–R0010 each appear in some case's `// error:` header."""
    seen = {header(p.read_text()).get("error", "-").split()[0] for p in CASES.glob("*.vox")}
    assert {f"R{n:04d}" for n in range(1, 11)} <= seen


@pytest.mark.parametrize(("source", "message"), [
    ("fn f() to int {\n  ret 1\n}\n", "nothing to run: no top-level statements and no `fn main()`"),
    # was the same message as above, though there is a fn main (Found by a new-user helper)
    ("fn main(x: int) {\n  print(x)\n}\n",
     "nothing to run: `fn main` must take no parameters to be run (it takes `x`)"),
])
def test_nothing_to_run_says_why(source: str, message: str) -> None:
    result = run_checked(check(source))
    assert (result.status, result.exit_code, result.message) == ("usage", 2, message)
