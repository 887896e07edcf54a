"""Running checked programs (spec §11): the entry point (script body, else ``fn main()``),
``@test`` functions (each in a fresh module state), and the results the CLI, the corpus gate,
the evaluation and ``vox chat`` consume.

A run happens in a worker thread with a large stack and a raised recursion limit, so deep Vox
recursion ends as R0007 and never crashes the host; every fault becomes a
:class:`~vox_lang.runtime.errors.RuntimeFault` (never a Python traceback). An exception that is
not a Vox fault is a bug in the executor and is reported as ``internal``. The executor reads the
clock only every few hundred steps, so the calling thread is a watchdog: a run still going just
past its deadline (one long step) gets R0010 raised into it (:func:`_in_big_thread`).
"""

from __future__ import annotations

import ctypes
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from vox_lang import hir
from vox_lang.api import CheckResult, check
from vox_lang.decorators import is_test
from vox_lang.messages import MEMORY_HINT, MEMORY_MESSAGE
from vox_lang.runtime.compiler import Compiler
from vox_lang.runtime.errors import ExitRequest, Overtime, RuntimeFault, VoxFault, to_fault
from vox_lang.runtime.frames import FnScope
from vox_lang.runtime.limits import Budget, RunConfig, RunState, SharedLimits
from vox_lang.runtime.typed import TypeInfo
from vox_lang.source import Span

#: status → exit code of ``vox run`` (spec §11)
EXIT_CODES: Final = {"ok": 0, "compile_error": 1, "usage": 2, "runtime_error": 3, "internal": 3}
#: stack of the thread a run executes on (Python frames of deep Vox recursion, C frames of ``==``)
THREAD_STACK: Final = 512 * 1024 * 1024
#: limits of spec §11 (no capabilities)
DEFAULT_CONFIG: Final = RunConfig()
#: Python frames allowed per Vox call level (a call nests a few closures per expression level)
FRAMES_PER_CALL: Final = 80
#: seconds past the deadline before the watchdog interrupts a run: the executor's own checks,
#: which know the position, get the first chance
WATCHDOG_GRACE_S: Final = 0.05
#: seconds the watchdog then waits for the run to stop: an interrupt lands between Python
#: operations, after the C operation under way (at most ``max_len`` elements: ~0.3 s) or a host
#: operation (which stops at the deadline itself); a run still going is left as a daemon thread
STRAGGLER_S: Final = 5.0


@dataclass(frozen=True)
class RunResult:
    """Outcome of one run.

    Attributes:
        status: ``ok``, ``compile_error``, ``usage``, ``runtime_error`` or ``internal``.
        exit_code: what ``vox run`` exits with (0, 1, 2, 3; ``process.exit(n)`` gives ``n``,
            or 1 when ``n`` is outside 0..255).
        output: everything ``print`` wrote.
        fault: the runtime error, if any.
        check: the front end's result (diagnostics, source).
        message: the usage or internal error, or why ``process.exit`` changed its status; one line.
        steps: steps used (calls + loop iterations).
        seconds: wall time of the run itself.
    """

    status: str
    exit_code: int
    output: str
    check: CheckResult
    fault: RuntimeFault | None = None
    message: str = ""
    steps: int = 0
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """True when the program ran to the end (or exited with status 0)."""
        return self.status == "ok" and self.exit_code == 0


@dataclass(frozen=True)
class TestOutcome:
    """One ``@test`` function's result (``fault`` is ``None`` when it passed)."""

    __test__ = False  # not a pytest test class

    name: str
    passed: bool
    fault: RuntimeFault | None = None
    output: str = ""
    message: str = ""

    def line(self) -> str:
        """``PASS name`` or ``FAIL name: Line 4, Col 3: runtime error[R0002] assertion failed``."""
        if self.passed:
            return f"PASS {self.name}"
        if self.fault is not None:
            return f"FAIL {self.name}: {self.fault.render_repair().splitlines()[0]}"
        return f"FAIL {self.name}: {self.message}"


@dataclass(frozen=True)
class TestReport:
    """All ``@test`` results of one module (empty when it does not compile)."""

    __test__ = False  # not a pytest test class

    check: CheckResult
    outcomes: tuple[TestOutcome, ...] = field(default_factory=tuple)

    @property
    def compiled(self) -> bool:
        """True when the module has no compile errors."""
        return self.check.ok

    @property
    def passed(self) -> int:
        return sum(o.passed for o in self.outcomes)

    @property
    def failed(self) -> int:
        return len(self.outcomes) - self.passed

    @property
    def ok(self) -> bool:
        """Compiled and every test passed."""
        return self.compiled and self.failed == 0

    def summary(self) -> str:
        """``N passed, M failed``."""
        return f"{self.passed} passed, {self.failed} failed"

    def verify_note(self) -> str:
        """What was checked, for a verify line: ``compiled; 3/3 tests passed``."""
        return f"compiled; {self.passed}/{len(self.outcomes)} tests passed"

    def first_failure(self) -> TestOutcome | None:
        """The first failing test, if any."""
        return next((o for o in self.outcomes if not o.passed), None)

    def render_repair(self) -> str:
        """Failures as repair feedback: per failing test, its name, the runtime error and stack."""
        parts = []
        for o in self.outcomes:
            if o.passed:
                continue
            body = o.fault.render_repair() if o.fault is not None else o.message
            parts.append(f"test {o.name} failed:\n{body}")
        return "\n".join(parts)


def _interrupt(thread: threading.Thread) -> None:
    """Raise :class:`Overtime` in ``thread`` at its next Python operation (CPython's
    ``PyThreadState_SetAsyncExc``: the only way to stop a step that never reaches a check)."""
    ident = thread.ident
    if ident is not None:
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), ctypes.py_object(Overtime))


def _step_span(exc: BaseException) -> Span | None:
    """The position of the innermost compiled step ``exc`` unwound through: a builtin's, a
    method's or a std call's code keeps its call's ``span`` (:mod:`vox_lang.runtime.calls`).
    Read from the traceback, only when the watchdog interrupted a run, so the hot path pays nothing."""
    found: Span | None = None
    tb = exc.__traceback__
    while tb is not None:
        span = tb.tb_frame.f_locals.get("span")
        if isinstance(span, Span):
            found = span
        tb = tb.tb_next
    return found


def _live_span(thread: threading.Thread) -> Span | None:
    """The position of the innermost compiled step ``thread`` is running now (as
    :func:`_step_span`), for the R0010 of a run the watchdog gives up on: it points at that step,
    not at line 1."""
    frame = sys._current_frames().get(thread.ident or 0)
    while frame is not None and not isinstance(frame.f_locals.get("span"), Span):
        frame = frame.f_back
    return None if frame is None else frame.f_locals["span"]


def _in_big_thread(fn: Callable[[], Any], budget: Budget, max_depth: int) -> Any:
    """Run ``fn`` on a thread with a large stack and recursion headroom; returns its result.

    The calling thread watches ``budget``'s deadline: when the run is still going
    :data:`WATCHDOG_GRACE_S` past it (one long step: ``str`` of a huge list, a library call),
    :class:`Overtime` (R0010) is raised into the run, every :data:`WATCHDOG_GRACE_S` until it
    stops, unless a host operation is under way (:attr:`Budget.shielded`: it stops at the
    deadline itself).

    Raises:
        VoxFault: R0010 when the thread still runs :data:`STRAGGLER_S` after that (it is left to
            finish as a daemon).
    """
    box: dict[str, Any] = {}
    lock = threading.Lock()
    running = [True]  # cleared under ``lock`` once ``fn`` is over: no interrupt lands after it

    def target() -> None:
        try:
            try:
                box["value"] = fn()
            finally:
                with lock:
                    running[0] = False
                # an interrupt issued just before the run ended must not land after it (outside
                # this handler it would end the thread with a traceback on stderr)
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(threading.get_ident()), None)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            box["error"] = exc

    old_limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old_limit, max_depth * FRAMES_PER_CALL + 5_000))
    old_size = threading.stack_size()
    try:
        threading.stack_size(THREAD_STACK)
        worker = threading.Thread(target=target, name="vox-run", daemon=True)
        worker.start()
    finally:
        threading.stack_size(old_size)
    try:
        worker.join(budget.time_left() + WATCHDOG_GRACE_S)
        while worker.is_alive() and budget.shielded:  # a host operation: it ends at the deadline
            worker.join(0.05)
            if budget.time_left() + STRAGGLER_S <= 0:
                break
        # the interrupt is repeated until the run stops: one that lands in a weakref callback or
        # a ``__del__`` run by the garbage collector is swallowed there ("Exception ignored in")
        # and the run goes on (CI's test worker lost a single interrupt that way)
        give_up = time.monotonic() + STRAGGLER_S
        while worker.is_alive() and time.monotonic() < give_up:
            with lock, budget.guard:  # ``guard``: no host operation starts while this decides
                if running[0] and not budget.shielded:
                    _interrupt(worker)
            worker.join(WATCHDOG_GRACE_S)
    finally:
        # restored even when a straggler still runs: the limit is the process's, and a runaway
        # run may stop on a RecursionError (a test run left it raised for every later check)
        sys.setrecursionlimit(old_limit)
    if worker.is_alive():
        raise VoxFault("R0010", _live_span(worker), detail=budget.overtime())
    error = box.pop("error", None)
    if error is None and "value" not in box:
        # an interrupt landed in the thread's own epilogue: the run was past its deadline
        raise Overtime()
    if error is not None:
        # no reference cycle (exception -> traceback -> this frame -> exception) may keep the
        # run's frames, and the values in them, alive until a garbage collection in a later run
        try:
            raise error
        finally:
            del error
    return box.get("value")


def _compile(res: CheckResult, types: TypeInfo, rt: RunState, script: tuple[hir.Stmt, ...]) -> tuple[Compiler, Any]:
    module = res.hir
    assert module is not None, "only a checked program without errors is compiled"
    c = Compiler(module, types, rt)
    c.compile_functions()
    c.scope = FnScope(0)
    body = c.block(hir.Block(script, module.span))
    size = c.scope.size
    return c, (body, size)


def _main_fn(module: hir.Module) -> hir.FnDecl | None:
    return next((d for d in module.decls if isinstance(d, hir.FnDecl) and d.name == "main" and not d.params), None)


def _nothing_to_run(module: hir.Module) -> str:
    """Why a module without top-level statements cannot be run: no ``fn main`` at all, or one that
    takes parameters (nothing could pass them)."""
    mains = [d for d in module.decls if isinstance(d, hir.FnDecl) and d.name == "main"]
    if not mains:
        return "nothing to run: no top-level statements and no `fn main()`"
    names = ", ".join(f"`{p.name}`" for p in mains[0].params)
    return f"nothing to run: `fn main` must take no parameters to be run (it takes {names})"


def _execute(res: CheckResult, types: TypeInfo, cfg: RunConfig, entry: str,
             budget: Budget | None = None) -> tuple[str, RunState, Any]:
    """Compile and run one entry (``script``, ``main`` or ``test NAME``) under ``budget`` (default:
    a fresh one from ``cfg``); returns (status, state, detail).

    When it returns, every process the run started has been killed (:meth:`RunState.end`).
    """
    rt = RunState(cfg, budget)
    module = res.hir
    assert module is not None
    outer = "script"
    try:
        def go() -> None:
            # compiled on the big thread too: compiling a long operator chain (`1 + 1 + … + 1`)
            # recurses once per operand, beyond the default recursion limit
            rt.budget.check_time(None)  # a shared deadline may have passed before this run began
            if entry.startswith("test "):
                lets = tuple(s for s in module.script if isinstance(s, hir.Let))
                c, (body, size) = _compile(res, types, rt, lets)
            else:
                c, (body, size) = _compile(res, types, rt, module.script if entry == "script" else ())
            frame: list[Any] = [None] * size
            body(frame)
            if entry != "script":
                name = entry.split(" ", 1)[1] if entry.startswith("test ") else "main"
                decl = next(d for d in module.decls if isinstance(d, hir.FnDecl) and d.name == name)
                code = c.fns[decl.def_id]
                code.invoke([])

        if entry == "main":
            outer = "script"
        elif entry.startswith("test "):
            outer = entry
        _in_big_thread(go, rt.budget, cfg.max_depth)
        return "ok", rt, None
    except VoxFault as exc:
        if isinstance(exc, Overtime):
            exc.fields["detail"] = rt.budget.overtime()
            if exc.span is None:  # interrupted inside a step: point at the step, else the innermost known call
                exc.span = _step_span(exc) or exc.pending or next(
                    (where for _, where in exc.stack if where is not None), None)
        return "runtime_error", rt, to_fault(exc, res.source, outer)
    except ExitRequest as exc:
        rt.exit_note = exc.note
        if exc.note and exc.span is not None:
            line, col = res.source.line_col(exc.span.start)
            rt.exit_note = f"{line}:{col}: {exc.note}"
        return "exit", rt, exc.code
    except RecursionError:
        return "runtime_error", rt, to_fault(VoxFault("R0007", None, n=cfg.max_depth), res.source, outer)
    except MemoryError:
        fault = VoxFault("R0006", None, message=MEMORY_MESSAGE, hint=MEMORY_HINT)
        return "runtime_error", rt, to_fault(fault, res.source, outer)
    except Exception as exc:  # noqa: BLE001 - an executor bug, reported, never a traceback
        return "internal", rt, f"internal error in the executor: {type(exc).__name__}: {exc}"
    finally:
        rt.end()  # however the run ended, no process it started keeps running


def run_checked(res: CheckResult, config: RunConfig = DEFAULT_CONFIG, types: TypeInfo | None = None) -> RunResult:
    """Run a checked module: its top-level statements, else ``fn main()``.

    Returns:
        A :class:`RunResult`; ``compile_error`` when ``res`` has errors (nothing runs),
        ``usage`` when there is nothing to run.
    """
    if not res.ok or res.hir is None:
        return RunResult("compile_error", 1, "", res)
    module = res.hir
    if module.script:
        entry = "script"
    elif _main_fn(module) is not None:
        entry = "main"
    else:
        return RunResult("usage", 2, "", res, message=_nothing_to_run(module))
    types = types or TypeInfo(module, res.source)
    start = time.perf_counter()
    status, rt, detail = _execute(res, types, config, entry)
    seconds = time.perf_counter() - start
    output = "".join(line + "\n" for line in rt.output)
    steps = rt.budget.steps_used()
    if status == "ok":
        return RunResult("ok", 0, output, res, steps=steps, seconds=seconds)
    if status == "exit":
        return RunResult("ok", int(detail), output, res, message=rt.exit_note, steps=steps, seconds=seconds)
    if status == "runtime_error":
        return RunResult("runtime_error", 3, output, res, fault=detail, steps=steps, seconds=seconds)
    return RunResult("internal", 3, output, res, message=str(detail), steps=steps, seconds=seconds)


def run_source(source: str | bytes, path: str = "<input>", config: RunConfig = DEFAULT_CONFIG) -> RunResult:
    """Check ``source`` (non-strict) and run it; see :func:`run_checked`."""
    return run_checked(check(source, path=path), config)


def test_functions(module: hir.Module) -> list[hir.FnDecl]:
    """The ``@test`` functions of a module, in file order (:func:`vox_lang.decorators.is_test`)."""
    return [d for d in module.decls if isinstance(d, hir.FnDecl) and is_test(d)]


def run_tests_checked(res: CheckResult, config: RunConfig = DEFAULT_CONFIG) -> TestReport:
    """Run every ``@test`` function of a checked module, each in a fresh module state (its
    top-level ``let``s evaluated again, other top-level statements not run).

    Each test gets ``config``'s step and time limits afresh, or, with
    :attr:`RunConfig.tests_share_limits`, all of them share one budget and one deadline (a test
    begun past it fails with R0010, one begun with no steps left with R0006)."""
    if not res.ok or res.hir is None:
        return TestReport(res)
    types = TypeInfo(res.hir, res.source)
    shared = SharedLimits(config) if config.tests_share_limits else None
    outcomes = []
    for fn in test_functions(res.hir):
        budget = shared.budget() if shared is not None else None
        status, rt, detail = _execute(res, types, config, f"test {fn.name}", budget)
        if shared is not None:
            shared.spend(rt.budget)
        output = "".join(line + "\n" for line in rt.output)
        if status == "ok" or (status == "exit" and detail == 0):
            outcomes.append(TestOutcome(fn.name, True, output=output))
        elif status == "runtime_error":
            outcomes.append(TestOutcome(fn.name, False, fault=detail, output=output))
        elif status == "exit":
            outcomes.append(TestOutcome(fn.name, False, output=output, message=f"exited with status {detail}"))
        else:
            outcomes.append(TestOutcome(fn.name, False, output=output, message=str(detail)))
    return TestReport(res, tuple(outcomes))


def run_tests(source: str | bytes, path: str = "<input>", config: RunConfig = DEFAULT_CONFIG) -> TestReport:
    """Check ``source`` and run its ``@test`` functions (see :func:`run_tests_checked`)."""
    return run_tests_checked(check(source, path=path), config)
