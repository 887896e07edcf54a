"""The Vox executor (spec §11): runs checked programs by compiling their HIR to Python closures.

Public API::

    from vox_lang.runtime import RunConfig, run_source, run_tests
    result = run_source(text, path="shop.vox", config=RunConfig(capabilities=frozenset({"fs"})))
    result.exit_code, result.output, result.fault  # fault.render("repair", result.check.source)
    report = run_tests(text)                       # every @test function, fresh state each
    report.summary()                               # "3 passed, 0 failed"

Modules: :mod:`.values` (values, ``==``, copies), :mod:`.text` (their text, JSON text),
:mod:`.limits` (configuration, budget), :mod:`.builtins`, :mod:`.stdlib` (+ :mod:`.stdlib_host`,
:mod:`.stdlib_pure`: std with capabilities), :mod:`.typed` (the checker's expression types), :mod:`.compiler`,
:mod:`.statements`, :mod:`.calls`, :mod:`.functions`, :mod:`.binary`, :mod:`.ops`, :mod:`.patterns`,
:mod:`.frames` (HIR → closures), :mod:`.errors` (R-code faults with the Vox call stack),
:mod:`.runner` (entry points and tests). Imports only ``vox_lang``.
"""

from vox_lang.runtime.errors import RuntimeFault, StackFrame
from vox_lang.runtime.limits import CAPABILITIES, RunConfig, parse_capabilities
from vox_lang.runtime.runner import (
    RunResult,
    TestOutcome,
    TestReport,
    run_checked,
    run_source,
    run_tests,
    run_tests_checked,
    test_functions,
)
from vox_lang.runtime.text import show

__all__ = [
    "CAPABILITIES", "RunConfig", "RunResult", "RuntimeFault", "StackFrame", "TestOutcome", "TestReport",
    "parse_capabilities", "run_checked", "run_source", "run_tests", "run_tests_checked", "show", "test_functions",
]
