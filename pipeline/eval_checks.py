"""Hidden behaviour checks for the eval (issue 11): does a completion that compiles also *work*?

Every ``pipeline/data/eval_checks*.yaml`` maps task ids to a few check entries (format in
``eval_checks.yaml``). :func:`exec_verdict` appends a task's statements to the completion as
``@test workflow eval_hidden_check() { … }`` and runs every ``@test`` of the result with the
executor (:mod:`vox_lang.runtime`) and **no capabilities**; ``run``/``output:`` entries run the
completion as a script. A sample *exec-passes* when it compiles (no error) and its checks pass.
:func:`with_exec` adds exec pass@1/pass@k, overall and per family, to a
:class:`pipeline.evaluate.ModelEval`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from pipeline.errors import DataError

if TYPE_CHECKING:
    from pipeline.eval_scoring import SampleScore
    from pipeline.eval_tasks import Task
    from pipeline.evaluate import ModelEval

DATA_DIR: Final = Path(__file__).resolve().parent / "data"
HIDDEN_TEST: Final = "eval_hidden_check"
#: limits of a completion's runs (no capabilities, ever: model-written code, spec §11): one for its
#: script, one shared by its own ``@test`` functions and the hidden check (a completion whose tests
#: each sleep to the limit costs one limit, not one per test)
MAX_STEPS: Final = 1_000_000
TIMEOUT_S: Final = 2.0
_FN = re.compile(r"^\s*(?:pub\s+)?(?:async\s+)?fn\s+([A-Za-z_][A-Za-z0-9_]*)", re.M)
_TEST_FN = re.compile(r"@test\s*\n\s*(?:pub\s+)?fn\s+([A-Za-z_][A-Za-z0-9_]*)")


@dataclass(frozen=True)
class TaskChecks:
    """One task's checks: statements for the hidden test, texts the script must print, and
    whether the script must run."""

    statements: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    run: bool = False


@dataclass(frozen=True)
class ExecVerdict:
    """Whether one completion exec-passes, and why not (a diagnostic code or a reason)."""

    passed: bool
    code: str | None = None


def check_files(data_dir: Path = DATA_DIR) -> list[Path]:
    """Every ``eval_checks*.yaml`` (``eval_checks.yaml`` first, then the others by name)."""
    return sorted(data_dir.glob("eval_checks*.yaml"), key=lambda p: (p.name != "eval_checks.yaml", p.name))


def load_checks(paths: Sequence[Path] | None = None) -> dict[str, TaskChecks]:
    """Load and merge check files (default: :func:`check_files`).

    Raises:
        DataError: an unreadable file, no ``checks:`` mapping, an entry that is not a list of
            strings, or a task id defined twice (each names the file and task).
    """
    import yaml

    from pipeline.yaml_input import load_yaml

    out: dict[str, TaskChecks] = {}
    for path in check_files() if paths is None else paths:
        try:
            data = load_yaml(path.read_text())
        except (OSError, yaml.YAMLError) as exc:
            raise DataError(f"{path}: cannot read eval checks: {exc}") from exc
        raw = data.get("checks") if isinstance(data, dict) else None
        if not isinstance(raw, dict):
            raise DataError(f"{path}: expected a `checks:` mapping of task id -> list of checks")
        for task_id, entries in raw.items():
            if task_id in out:
                raise DataError(f"{path}: task {task_id!r} has checks in two files")
            if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
                raise DataError(f"{path}: task {task_id!r}: checks must be a list of strings")
            out[str(task_id)] = TaskChecks(
                statements=tuple(e for e in entries if e != "run" and not e.startswith("output:")),
                outputs=tuple(e.split(":", 1)[1].strip() for e in entries if e.startswith("output:")),
                run=any(e == "run" or e.startswith("output:") for e in entries),
            )
    return out


@lru_cache(maxsize=1)
def default_checks() -> dict[str, TaskChecks]:
    """The checks of :func:`check_files`, loaded once per process."""
    return load_checks()


def first_function(code: str) -> str | None:
    """The first function a program declares that is not a ``@test`` (for ``{fn}``)."""
    tests = set(_TEST_FN.findall(code))
    return next((n for n in _FN.findall(code) if n not in tests and n != "main"), None)


def with_hidden_test(code: str, statements: Sequence[str]) -> str | None:
    """``code`` plus the hidden test holding ``statements``; ``None`` when a statement needs
    ``{fn}`` and the program declares no function."""
    body = list(statements)
    if any("{fn}" in s for s in body):
        name = first_function(code)
        if name is None:
            return None
        body = [s.replace("{fn}", name) for s in body]
    inner = "\n".join(f"  {s}" for s in body) or "  assert(true)"
    return f"{code.rstrip()}\n\n@test\nworkflow {HIDDEN_TEST}() {{\n{inner}\n}}\n"


@lru_cache(maxsize=4096)
def exec_verdict(code: str, task_id: str) -> ExecVerdict:
    """Run ``task_id``'s hidden checks on one completion's program (which already compiles).

    Returns:
        ``passed``; else ``code`` is the failing runtime code (``R0002``…), the compile code
        of the program with checks appended, ``NO_FN`` or ``NO_SCRIPT``.
    """
    from vox_lang import check
    from vox_lang.runtime import RunConfig, run_checked, run_tests_checked

    cfg = RunConfig(max_steps=MAX_STEPS, timeout_s=TIMEOUT_S, tests_share_limits=True)
    checks = default_checks().get(task_id, TaskChecks())
    if checks.run:
        result = run_checked(check(code), cfg)
        if result.status == "usage":
            return ExecVerdict(False, "NO_SCRIPT")
        if result.status == "runtime_error" and result.fault is not None and result.fault.code != "R0008":
            return ExecVerdict(False, result.fault.code)
        if result.status == "internal":
            return ExecVerdict(False, "INTERNAL")
        if checks.outputs and (result.status != "ok" or not all(t in result.output for t in checks.outputs)):
            return ExecVerdict(False, "OUTPUT")
    program = with_hidden_test(code, checks.statements)
    if program is None:
        return ExecVerdict(False, "NO_FN")
    res = check(program, path="<checked completion>")
    if not res.ok:
        return ExecVerdict(False, res.errors[0].code)
    report = run_tests_checked(res, cfg)
    bad = report.first_failure()
    if bad is None:
        return ExecVerdict(True)
    return ExecVerdict(False, bad.fault.code if bad.fault is not None else "INTERNAL")


def exec_scores(tasks: Sequence[Task], scores: Sequence[Sequence[SampleScore]],
                texts: Sequence[Sequence[str]]) -> list[list[bool]]:
    """Per task, per sample: compiles (no error) and passes the hidden checks."""
    from pipeline.eval_scoring import extract_vox

    out = []
    for task, ss, ts in zip(tasks, scores, texts):
        row = []
        for s, text in zip(ss, ts):
            code = extract_vox(text) if s.compiled else None
            row.append(code is not None and exec_verdict(code, task.id).passed)
        out.append(row)
    return out


def with_exec(me: ModelEval, tasks: Sequence[Task], scores: Sequence[Sequence[SampleScore]],
              texts: Sequence[Sequence[str]], k: int) -> ModelEval:
    """``me`` with exec pass@1/pass@k overall and in every ``per_family`` row
    (``exec_pass@1``, ``exec_pass@k``), beside the compile figures."""
    from pipeline.evaluate import pass_at_k

    if not tasks:
        return me
    passes = exec_scores(tasks, scores, texts)
    per_task = [(pass_at_k(len(p), sum(p), 1), pass_at_k(len(p), sum(p), min(k, len(p)))) for p in passes]
    fams: dict[str, list[tuple[float, float]]] = {}
    for task, pk in zip(tasks, per_task):
        fams.setdefault(task.family, []).append(pk)
    per_family: dict[str, dict[str, Any]] = {}
    for fam, row in me.per_family.items():
        vals = fams.get(fam, [])
        per_family[fam] = {**row, "exec_pass@1": sum(a for a, _ in vals) / len(vals) if vals else 0.0,
                           "exec_pass@k": sum(b for _, b in vals) / len(vals) if vals else 0.0}
    return replace(me, per_family=per_family, exec_pass_at_1=sum(a for a, _ in per_task) / len(per_task),
                   exec_pass_at_k=sum(b for _, b in per_task) / len(per_task))


def exec_gate(base: ModelEval, adapter: ModelEval, threshold: float) -> tuple[bool, str]:
    """The release gate on exec pass@1: adapter >= threshold and > base. Returns ``(ok, why)``."""
    a, b = adapter.exec_pass_at_1, base.exec_pass_at_1
    if a < threshold:
        return False, f"adapter exec pass@1 {a:.3f} < threshold {threshold:.3f}"
    if a <= b:
        return False, f"adapter exec pass@1 {a:.3f} not above base {b:.3f}"
    return True, f"adapter exec pass@1 {a:.3f} >= {threshold:.3f} and > base {b:.3f}"
