"""Property tests of the executor: int arithmetic agrees with Python's under Vox's rules (64-bit
overflow is R0001, ``/`` truncates toward zero, ``%`` takes the dividend's sign, zero divisors
are R0003), and generated corpus programs with top-level statements never hit an internal
error (only a clean exit or a runtime diagnostic)."""

from __future__ import annotations

import ast
from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

from vox_lang import check
from vox_lang.runtime import RunConfig, run_checked

INT_MIN, INT_MAX = -(2**63), 2**63 - 1
ints = st.one_of(st.integers(INT_MIN, INT_MAX), st.integers(-1000, 1000), st.sampled_from([0, 1, -1, INT_MAX, INT_MIN]))


def lit(n: int) -> str:
    """A Vox expression for ``n`` (``INT_MIN`` has no literal)."""
    if n == INT_MIN:
        return "(0 - 9223372036854775807 - 1)"
    return str(n) if n >= 0 else f"(0 - {-n})"


def vox_semantics(op: str, a: int, b: int) -> int | str:
    """Python's result under spec §11, or the R-code."""
    if op in "/%" and b == 0:
        return "R0003"
    if op == "+":
        r = a + b
    elif op == "-":
        r = a - b
    elif op == "*":
        r = a * b
    elif op == "/":
        r = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
    else:
        r = abs(a) % abs(b) * (1 if a >= 0 else -1)
    return r if INT_MIN <= r <= INT_MAX else "R0001"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(a=ints, b=ints, op=st.sampled_from(["+", "-", "*", "/", "%"]))
def test_int_arithmetic_matches_python(a: int, b: int, op: str) -> None:
    src = f"let a = {lit(a)}\nlet b = {lit(b)}\nprint(a {op} b)\n"
    result = run_checked(check(src), RunConfig(timeout_s=5))
    want = vox_semantics(op, a, b)
    if isinstance(want, str):
        assert result.fault is not None and result.fault.code == want
    else:
        assert result.status == "ok", result.fault and result.fault.render_repair()
        assert result.output == f"{want}\n"


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(x=st.floats(min_value=0.0, max_value=1e15, allow_nan=False))
def test_float_text_reads_back(x: float) -> None:
    """``str`` of a float reads back to the same double and always has a `.` or an exponent."""
    literal = f"{x:.17f}".rstrip("0")  # Vox float literals have no exponent
    literal += "0" if literal.endswith(".") else ""
    result = run_checked(check(f"print({literal})\n"), RunConfig(timeout_s=5))
    assert result.status == "ok", result.fault and result.fault.render_repair()
    text = result.output.strip()
    assert float(text) == float(literal)
    assert "." in text or "e" in text


def _programs() -> list[str]:
    from pipeline.generators import FAMILIES, generate_program

    out = []
    for fam in FAMILIES:
        for i in range(6):
            code = generate_program(fam.name, 11, i)[2].code
            res = check(code)
            if res.ok and res.hir is not None and res.hir.script:
                out.append(code)
    return out


PROGRAMS = _programs()


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(PROGRAMS))
def test_corpus_scripts_run_without_internal_error(code: str) -> None:
    result = run_checked(check(code), RunConfig(max_steps=200_000, timeout_s=0.5))
    assert result.status in ("ok", "runtime_error"), result.message
    if result.fault is not None:
        assert result.fault.diagnostic.line >= 1 and result.fault.stack


def test_runtime_imports_only_vox_lang_and_stdlib() -> None:
    """Layering: ``vox_lang.runtime`` imports nothing from the rest of the project."""
    for path in (Path(__file__).resolve().parents[3] / "vox_lang" / "runtime").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                root = node.module.split(".")[0]
                assert root not in ("pipeline", "serving", "assets"), (path.name, node.module)
