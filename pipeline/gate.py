"""The compiler gate: nothing invalid reaches the corpus.

Every response's ```vox blocks are joined into one module and run through the whole front end
in strict mode (``vox_lang.check(strict=True)``: lex, parse, lower, type check). Repair pairs
are checked both ways: the broken program shown in the prompt must fail with the kind's
expected code, and the fixed program in the response must pass. A response whose program
declares ``@test`` functions must also pass them when run by the executor
(:func:`vox_lang.runtime.run_tests_checked`, no capabilities, small limits); a failing test
rejects the row with its runtime code (R0002 for a failed assertion). The gate runs across
processes; results do not depend on the worker count.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from pipeline.generators.base import Pair
from pipeline.prompt import vox_blocks

if TYPE_CHECKING:
    from vox_lang import CheckResult

#: rejection reasons
NO_BLOCK: Final = "no_vox_block"
RESPONSE_FAILS: Final = "response_fails"
BROKEN_MISSING: Final = "broken_missing"
BROKEN_PASSES: Final = "broken_passes"
WRONG_CODE: Final = "broken_wrong_code"
TESTS_FAIL: Final = "tests_fail"

#: limits for running a row's @test functions (generated tests are tiny; a hang must not stall the gate)
TEST_MAX_STEPS: Final = 200_000
TEST_TIMEOUT_S: Final = 2.0


@dataclass(frozen=True)
class Rejection:
    """Why one pair was rejected: the reason and the first relevant diagnostic (if any)."""

    id: str
    source: str
    family: str
    construct: str
    reason: str
    code: str = ""
    line: int = 0
    col: int = 0
    message: str = ""

    def as_row(self) -> dict[str, object]:
        """A row of the rejection table."""
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


@dataclass(frozen=True)
class GateResult:
    """Gate outcome: kept pairs (input order), rejections (input order), checks run, cache hits."""

    passed: tuple[Pair, ...]
    rejections: tuple[Rejection, ...]
    checks: int = 0
    cache_hits: int = 0
    per_family: dict[str, tuple[int, int]] = field(default_factory=dict)
    test_runs: int = 0  # distinct programs whose @test functions were run

    @property
    def tests_rejected(self) -> int:
        """Rows rejected because their @test functions failed when run."""
        return sum(r.reason == TESTS_FAIL for r in self.rejections)

    @property
    def total(self) -> int:
        """Pairs examined."""
        return len(self.passed) + len(self.rejections)

    @property
    def pass_rate(self) -> float:
        """Kept / examined (1.0 for no input)."""
        return len(self.passed) / self.total if self.total else 1.0

    def family_pass_rates(self) -> dict[str, float]:
        """``family -> kept/examined``."""
        return {f: (k / n if n else 1.0) for f, (k, n) in sorted(self.per_family.items())}

    def top_codes(self, n: int = 10) -> list[tuple[str, int]]:
        """Most frequent first-diagnostic codes among rejections (``reason`` when no code)."""
        return Counter(r.code or r.reason for r in self.rejections).most_common(n)


def program_of(response: str) -> str | None:
    """The module the gate checks for a response: its ```vox blocks joined, or ``None``."""
    blocks = vox_blocks(response)
    return "\n\n".join(blocks) if blocks else None


class _Checker:
    """``vox_lang.check(strict=True)`` with a per-process cache keyed by program text."""

    def __init__(self) -> None:
        self.cache: dict[str, tuple[tuple[str, int, int, str], ...]] = {}
        self.checks = 0
        self.hits = 0
        self.results: dict[str, CheckResult] = {}  # kept for programs with @test
        self.test_cache: dict[str, tuple[str, int, int, str] | None] = {}
        self.test_runs = 0

    def errors(self, code: str) -> tuple[tuple[str, int, int, str], ...]:
        """``(code, line, col, message)`` of every strict-mode error of ``code``."""
        hit = self.cache.get(code)
        if hit is not None:
            self.hits += 1
            return hit
        from vox_lang import check

        self.checks += 1
        res = check(code, strict=True)
        out = tuple((d.code, d.line, d.col, d.message) for d in res.errors)
        self.cache[code] = out
        if not out and "@test" in code:
            self.results[code] = res
        return out

    def test_failure(self, code: str) -> tuple[str, int, int, str] | None:
        """Run the @test functions of a program that passed :meth:`errors`; the first failure as
        ``(R-code, line, col, "test NAME: message")``, or ``None`` when all pass (or there are none)."""
        if code in self.test_cache:
            return self.test_cache[code]
        res = self.results.pop(code, None)
        found: tuple[str, int, int, str] | None = None
        if res is not None:
            from vox_lang.runtime import RunConfig, run_tests_checked

            self.test_runs += 1
            report = run_tests_checked(res, RunConfig(max_steps=TEST_MAX_STEPS, timeout_s=TEST_TIMEOUT_S))
            bad = report.first_failure()
            if bad is not None and bad.fault is not None:
                d = bad.fault.diagnostic
                found = (d.code, d.line, d.col, f"test {bad.name}: {d.message}")
            elif bad is not None:
                found = ("", 0, 0, f"test {bad.name}: {bad.message}")
        self.test_cache[code] = found
        return found


def gate_pair(pair: Pair, checker: _Checker | None = None) -> Rejection | None:
    """Check one pair; ``None`` when it passes, else the :class:`Rejection`."""
    checker = checker or _Checker()

    def reject(reason: str, diag: tuple[str, int, int, str] | None = None) -> Rejection:
        code, line, col, msg = diag or ("", 0, 0, "")
        return Rejection(pair.id, pair.source, pair.family, pair.construct, reason, code, line, col, msg)

    program = program_of(pair.response)
    if program is None:
        return reject(NO_BLOCK)
    errs = checker.errors(program)
    if errs:
        return reject(RESPONSE_FAILS, errs[0])
    failed = checker.test_failure(program)
    if failed is not None:
        return reject(TESTS_FAIL, failed)
    if pair.expect_code:
        shown = vox_blocks(pair.prompt)
        if not shown:
            return reject(BROKEN_MISSING)
        broken_errs = checker.errors(shown[0])
        if not broken_errs:
            return reject(BROKEN_PASSES)
        if pair.expect_code not in {e[0] for e in broken_errs}:
            return reject(WRONG_CODE, broken_errs[0])
    return None


def _gate_chunk(pairs: Sequence[Pair]) -> tuple[list[Rejection | None], int, int, int]:
    checker = _Checker()
    return [gate_pair(p, checker) for p in pairs], checker.checks, checker.hits, checker.test_runs


def gate_pairs(pairs: Sequence[Pair], workers: int = 1, chunk_size: int = 500) -> GateResult:
    """Run the gate over ``pairs``.

    Args:
        pairs: generated pairs, in a fixed order.
        workers: processes (1 = in this process).
        chunk_size: pairs per work unit; pairs of one instance usually share a chunk, so the
            per-process cache catches repeated programs (paraphrases, repair fixes).

    Returns:
        A :class:`GateResult`; ``passed`` keeps input order.
    """
    chunks = [pairs[i: i + chunk_size] for i in range(0, len(pairs), chunk_size)]
    if workers <= 1 or len(chunks) <= 1:
        results = [_gate_chunk(c) for c in chunks]
    else:
        from pipeline.parallel import pool_context, warm_front_end

        warm_front_end()
        with ProcessPoolExecutor(max_workers=workers, mp_context=pool_context()) as pool:
            results = list(pool.map(_gate_chunk, chunks))
    verdicts = [v for r in results for v in r[0]]
    passed = tuple(p for p, v in zip(pairs, verdicts) if v is None)
    rejections = tuple(v for v in verdicts if v is not None)
    per_family: dict[str, list[int]] = {}
    for p, v in zip(pairs, verdicts):
        kept_total = per_family.setdefault(p.family, [0, 0])
        kept_total[0] += v is None
        kept_total[1] += 1
    return GateResult(passed, rejections, sum(r[1] for r in results), sum(r[2] for r in results),
                      {f: (k, n) for f, (k, n) in per_family.items()}, sum(r[3] for r in results))
