"""What a request asks of a program's shape besides its items: a request for a *script* (a file
whose top-level statements run when it is run, spec §11) is not answered by a program whose
top-level statements call nothing (declarations only, or a bare literal), and one for tests not
by a program without a ``@test`` function."""

from __future__ import annotations

import dataclasses
import re
from typing import Final

from vox_lang import syntax
from vox_lang.decorators import is_test
from vox_lang.diagnostics import DiagnosticSink
from vox_lang.source import SourceFile

#: a request for a script: a file with top-level statements, which run when it is run (spec §11);
#: not "not a script" / "no script", nor a script that is not the program asked for ("a module my
#: build script can import": a word right before it other than an article or "Vox")
_SCRIPT: Final = re.compile(r"(?:^|[^\w\s]\s*|\b(?:a|an|the|this|that|my|your|vox|one|two|three|simple|small|short"
                            r"|quick)\s+)scripts?\b", re.IGNORECASE)
_NOT_SCRIPT: Final = re.compile(r"\b(?:not|no)\s+(?:a\s+)?scripts?\b", re.IGNORECASE)


#: a program asked to print something when run: "a vox program that reads ... and prints the total"
_PROGRAM_PRINTS: Final = re.compile(r"\b(?:program|app)\b[^.?!\n]{0,80}?\b(?:prints?|outputs?|displays?)\b",
                                    re.IGNORECASE)


def asks_for_script(text: str) -> bool:
    """Whether a request asks for a *script*: a program whose top-level statements (or ``fn
    main()``) do the work when it is run (``vox run``). The word "script" counts at a sentence
    start, after punctuation, or after an article or a plain adjective ("Write a Vox script",
    "Script please:", "a small script"), unless negated ("not a script"); so does a program asked
    to print something ("a program that reads a list of prices and prints the total": a
    new-user trial got a UI page that prints nothing, and PASS). Never raises."""
    if _NOT_SCRIPT.search(text) is not None:
        return False
    return _SCRIPT.search(text) is not None or _PROGRAM_PRINTS.search(text) is not None


def runs_nothing(text: str, source: str | syntax.Module) -> bool:
    """Whether the program ``source`` answers a request ``text`` that asks for a script
    (:func:`asks_for_script`) with nothing ``vox run`` would do: no top-level statement that
    calls anything (a function, a method, a builtin such as ``print``), and, in a module without
    top-level statements, no ``fn main()`` without parameters whose body calls anything (spec
    §11: only such a module runs ``main``; beside top-level statements it never runs). A
    statement without a call has no effect a user can see: a new-user trial's answer to "a
    script that prints the total of a list of prices" was one function and a bare string
    literal at top level, and got ``PASS``. ``False`` when the request asks for no script."""
    if not asks_for_script(text):
        return False
    if isinstance(source, str):
        from vox_lang.parser import parse_module

        src = SourceFile(source, "<program>")
        source = parse_module(src, DiagnosticSink(src))
    statements = [item.stmt for item in source.items if isinstance(item, syntax.StmtItem)]
    if statements:  # spec §11: top-level statements run, and then `fn main()` does not
        return not any(_calls(stmt) for stmt in statements)
    return not any(isinstance(item, syntax.FnDecl) and item.name == "main" and not item.params
                   and item.kind == "fn" and _calls(item) for item in source.items)


def _calls(node: object) -> bool:
    """Whether the syntax tree ``node`` holds a call (:class:`vox_lang.syntax.Call`) anywhere
    (iterative: trees as deep as the parser allows)."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, syntax.Call):
            return True
        if isinstance(current, tuple):
            stack.extend(current)
        elif dataclasses.is_dataclass(current) and not isinstance(current, type):
            stack.extend(getattr(current, f.name) for f in dataclasses.fields(current) if f.name != "span")
    return False


#: a request for tests: "@test", "a test function", "with (a / some / unit) tests", "add a test",
#: "and tests"; not "no tests" / "without tests" (:data:`_NO_TESTS`)
_TESTS: Final = re.compile(r"@test\b|\btest\s+(?:functions?|fns?)\b|\b(?:with|add|write|include|plus|and|also)\s+"
                           r"(?:an?\s+|some\s+|\w+\s+)?(?:unit\s+)?tests?\b", re.IGNORECASE)
_NO_TESTS: Final = re.compile(r"\b(?:no|without|skip(?:ping)?|don['\u2019]?t\s+(?:add|write|need))\s+(?:any\s+)?"
                              r"(?:unit\s+)?(?:@?tests?)\b", re.IGNORECASE)


def asks_for_tests(text: str) -> bool:
    """Whether a request asks for ``@test`` functions ("... with a test", "now also add a @test
    function for it", "write unit tests"), unless it says not to ("no tests"). Never raises."""
    return _TESTS.search(text) is not None and _NO_TESTS.search(text) is None


def declares_tests(source: str | syntax.Module) -> bool:
    """Whether the program ``source`` declares a test: a top-level function decorated ``@test``
    (:func:`vox_lang.decorators.is_test`, as :func:`vox_lang.runtime.test_functions` finds them),
    so ``@test`` in a string, a comment or another decorator's name (``@test.slow``) does not count.
    Program text is parsed, not checked: an item with a syntax error declares nothing. Never raises."""
    if isinstance(source, str):
        if "@test" not in source:  # a decorator is `@` glued to its name (spec §1): no such text, no test
            return False
        from vox_lang.parser import parse_module

        src = SourceFile(source, "<program>")
        source = parse_module(src, DiagnosticSink(src))
    return any(is_test(item) for item in source.items)


def unmet_shape(text: str, source: str | syntax.Module) -> str | None:
    """What the request ``text`` asks of the program's shape that ``source`` lacks: ``"script"``
    (a script was asked and running it does nothing: :func:`runs_nothing`), ``"tests"`` (tests
    were asked and it declares no ``@test`` function: :func:`declares_tests`), else ``None``. A
    new-user trial's "now also add a @test function" got an answer without one and
    ``vox-script-verify: PASS``."""
    if runs_nothing(text, source):
        return "script"
    if asks_for_tests(text) and not declares_tests(source):
        return "tests"
    return None
