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

#: "script", as a word, wherever it stands (:func:`_asked_here` reads the words before it)
_SCRIPT_WORD: Final = re.compile(r"\bscripts?\b", re.IGNORECASE)
#: the clause that holds a word ends at punctuation other than a word's own apostrophe or hyphen
_CLAUSE_BREAK: Final = re.compile(r"[^\w\s'\u2019-]")
_WORDS: Final = re.compile(r"[\w'\u2019-]+")
#: words that make the "script" after them the program asked for ("a pricing script", "two scripts")
_DETERMINERS: Final = frozenset({"a", "an", "the", "this", "one", "two", "three"})
#: plain words that ask for a script on their own ("Write simple script")
_ADJECTIVES: Final = frozenset({"vox", "simple", "small", "short", "quick", "tiny", "little"})
#: words that make the "script" after them some other script ("a module my build script can import")
#: or not a modifier of it ("a function scripts can call": a kind of item, not a kind of script)
_NOT_MODIFIERS: Final = frozenset({"my", "your", "our", "their", "his", "her", "its", "whose", "that", "which",
                                   "function", "functions", "fn", "module", "modules", "library", "package", "type",
                                   "types", "record", "enum", "actor", "actors", "workflow", "class", "method"})
#: at most this many plain words between the determiner and "script" ("a nightly backup script")
_MAX_MODIFIERS: Final = 2
#: characters before a "script" read for its words: enough for a determiner and two modifiers, so a
#: request with thousands of "script"s is still read in linear time
_LOOK_BACK: Final = 200
#: a negated script, anywhere in the request: "not a script", "no script", "do not write a script",
#: "don't write a script", "no need for a script", "without a script", "instead of a script"; the
#: negation and "script" in one clause, at most four words apart and no "and" / "but" between ("no
#: arguments and a script that calls it" asks for one)
_NOT_SCRIPT: Final = re.compile(r"\b(?:not|no|never|without|don['\u2019]?t|doesn['\u2019]?t|instead\s+of|rather\s+than)"
                                r"(?:\s+(?!(?:and|but|or|then|also|plus)\b)[\w'\u2019-]+){0,4}?\s+scripts?\b",
                                re.IGNORECASE)
#: a program (or code, a snippet) asked to print something when run: "a vox program that reads ... and
#: prints the total", "Vox code that prints the total", "a snippet to print the date"; in one sentence,
#: whose end is a full stop before a space, not one inside a file name ("reads todo.txt and prints")
_SAME_SENTENCE: Final = r"(?:[^.?!\n]|[.?!](?=\w)){0,80}?"
_PROGRAM_PRINTS: Final = re.compile(rf"\b(?:(?:program|app)\b|(?:code|snippet)\s+(?:that|which|to)\b){_SAME_SENTENCE}"
                                    r"\b(?:prints?|outputs?|displays?)\b", re.IGNORECASE)


def asks_for_script(text: str) -> bool:
    """Whether a request asks for a *script*: a program whose top-level statements (or ``fn
    main()``) do the work when it is run (``vox run``).

    The word "script" counts at a clause start ("Script please:"), after a determiner with at most
    two plain words between ("Write a Vox script", "a pricing script", "two nightly backup
    scripts"), or after plain adjectives alone ("Write simple script"); not after a possessive or
    another word ("a module my build script can import": some other script), and never when a
    script is negated anywhere ("not a script", "don't write a script", "without a script"). A
    program, code or snippet asked to print something counts too ("a program that reads a list of
    prices and prints the total": a new-user trial got a UI page that prints nothing, and PASS).
    Never raises.

    Args:
        text: the request.

    Returns:
        Whether the answer must run something when it is run.
    """
    if _NOT_SCRIPT.search(text) is not None:
        return False
    return (any(_asked_here(text[max(0, m.start() - _LOOK_BACK):m.start()], m.start() <= _LOOK_BACK)
                for m in _SCRIPT_WORD.finditer(text))
            or _PROGRAM_PRINTS.search(text) is not None)


def _asked_here(before: str, whole: bool) -> bool:
    """Whether the "script" that follows the text ``before`` is the program asked for, read from
    the words of its clause right before it (see :func:`asks_for_script`); ``whole``: ``before``
    is all the request's text before it (else its first word may be cut, and is not read)."""
    breaks = list(_CLAUSE_BREAK.finditer(before))
    clause = before[breaks[-1].end():] if breaks else before
    words = [w.lower() for w in _WORDS.findall(clause)]
    if not breaks and not whole:
        words = words[1:]
    modifiers: list[str] = []
    for word in reversed(words):
        if word in _DETERMINERS:
            return True
        if word in _NOT_MODIFIERS or word.endswith(("'s", "\u2019s")) or len(modifiers) == _MAX_MODIFIERS:
            # some other script ("my build script", "John's script"), or too far from a determiner:
            # plain adjectives alone still ask ("Write simple script")
            return bool(modifiers) and word not in _NOT_MODIFIERS and all(m in _ADJECTIVES for m in modifiers)
        modifiers.append(word)
    # the clause starts with it ("Script please:", "Backup script, please"), unless the clause goes
    # on before the text read: then a word too long to be a modifier came first
    return bool(breaks) or whole


def runs_nothing(text: str, source: str | syntax.Module) -> bool:
    """Whether the program ``source`` answers a request ``text`` that asks for a script
    (:func:`asks_for_script`) with nothing ``vox run`` would do: no top-level statement that
    calls anything (a function, a method, a builtin such as ``print``), and, in a module without
    top-level statements, no ``fn main()`` without parameters whose body calls anything (spec
    §11: only such a module runs ``main``; beside top-level statements it never runs). A
    statement without a call has no effect a user can see: a new-user trial's answer to "a
    script that prints the total of a list of prices" was one function and a bare string
    literal at top level, and got ``PASS``. ``False`` when the request asks for no script."""
    return asks_for_script(text) and not runs_something(source)


def runs_something(source: str | syntax.Module) -> bool:
    """Whether running the program ``source`` (``vox run``, spec §11) calls anything: a top-level
    statement that holds a call, or, in a module without top-level statements, a ``fn main()``
    without parameters whose body holds one. Program text is parsed, not checked (an item with a
    syntax error counts as absent). Never raises."""
    if isinstance(source, str):
        from vox_lang.parser import parse_module

        src = SourceFile(source, "<program>")
        source = parse_module(src, DiagnosticSink(src))
    statements = [item.stmt for item in source.items if isinstance(item, syntax.StmtItem)]
    if statements:  # spec §11: top-level statements run, and then `fn main()` does not
        return any(_calls(stmt) for stmt in statements)
    return any(isinstance(item, syntax.FnDecl) and item.name == "main" and not item.params
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
