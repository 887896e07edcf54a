"""The gate runs a row's @test functions: passing tests keep the row, a failing test rejects it
as ``tests_fail`` with the runtime code and position, and the result counts such rows."""

from __future__ import annotations

from pipeline.gate import TESTS_FAIL, gate_pair, gate_pairs
from pipeline.generators.base import Pair


def _pair(code: str, pid: str = "t") -> Pair:
    return Pair(id=pid, instance_id="i", source="organic", family="tests", construct="c", difficulty=1, seed=1,
                theme="library", prompt="q", response=f"```vox\n{code}\n```")


PASSING = "fn add(a: int, b: int) to int {\n  ret a + b\n}\n@test\nfn t_add() {\n  assert(add(2, 3) == 5)\n}"
FAILING = "fn add(a: int, b: int) to int {\n  ret a - b\n}\n@test\nfn t_add() {\n  assert(add(2, 3) == 5)\n}"
HANGS = "@test\nfn t_loop() {\n  let mut n = 0\n  while true {\n    n += 1\n  }\n}"


def test_passing_tests_keep_the_row() -> None:
    assert gate_pair(_pair(PASSING)) is None


def test_failing_test_rejects_with_runtime_code() -> None:
    rej = gate_pair(_pair(FAILING))
    assert rej is not None and rej.reason == TESTS_FAIL
    assert (rej.code, rej.line, rej.col) == ("R0002", 6, 3)
    assert "t_add" in rej.message


def test_endless_test_is_stopped_by_the_step_budget() -> None:
    rej = gate_pair(_pair(HANGS))
    assert rej is not None and rej.reason == TESTS_FAIL and rej.code == "R0006"


def test_gate_result_counts_rows_rejected_by_tests() -> None:
    result = gate_pairs([_pair(PASSING, "a"), _pair(FAILING, "b"), _pair(FAILING, "c")])
    assert result.tests_rejected == 2
    assert result.test_runs == 2  # each distinct program's tests run once
