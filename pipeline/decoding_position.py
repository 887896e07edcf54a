"""Where the end of an open ```vox block stands, for the name mask (:mod:`pipeline.decoding_names`).

:func:`position` reads the text of the block so far and says, for the identifier being written
(``partial``) and for one the next token may start after whitespace, which **kind** of word it is:

- :data:`USE` — an expression or type: it must stay a prefix of a name that resolves. After an
  operator, ``=``, ``ret``, ``if``, ``while``, ``in``, ``to``, ``:``, ``->``, ``|>``, ``match``
  (:data:`USE_AFTER`); inside ``[...]`` (list elements, indexes, type arguments); in a
  parenthesized expression or a call's arguments.
- :data:`STMT` / :data:`TOP` — a statement start inside a block / an item or statement start
  at top level: every one starts with a reserved word or uses a name (a call, an assignment, an
  expression), so it must resolve too; which reserved words may stand there differs
  (:mod:`pipeline.decoding_scope`).
- :data:`FOLLOW` — a word right after an operand (a name, number, string, ``)``, ``]``, ``}``,
  ``?``, a reserved word after ``.``) on its line, or on a later line inside ``(``/``[`` (L1 drops
  the newline there): in Vox only ``and``, ``or``, ``to``, ``in``, ``as`` or ``else`` can
  stand there (:data:`FOLLOWERS`). Without this the grammar mask lets ``ret a > 1 andx`` through:
  llguidance's lexer only tries the lexemes the parser allows, and where no NAME is allowed it
  reads ``andx`` as ``and x``, while the front end reads one (undefined) name. The default run's
  constrained eval had such glued words in many cut blocks (``andidateHome and actoring``).
- :data:`NUMBER` — a number literal's digits: only digits may be glued on (``1or`` is E0104, a
  malformed number, where llguidance reads ``1`` ``or``).
- :data:`MODIFIED` — a word after ``pub``/``async``: only ``async``, ``fn``, ``workflow`` or
  ``activity`` (:data:`AFTER_MODIFIER`). The grammar's lexer reads ``async activitype (`` as
  ``activity pe(``, the front end as one name (E0201; seen in a completed block of the eval).
- :data:`HANDLER` — a line start in an actor's body: only ``on``
  (:data:`~pipeline.decoding_scope.HANDLER_WORDS`); ``ones`` there is a name to the front end.
- :data:`FREE` — a declaration or anything the left context cannot decide: parameters, fields,
  named arguments, variables being bound, generics, match patterns, decorators, strings, comments.

**Parentheses.** After ``(`` or ``,`` a word is a use in a call (``f(x)``; a named argument of a
function declared in the block is one of its parameters, which are declared names), in a
parenthesized expression and in ``[...]``; it is free in a declaration's parentheses
(``fn f(``, ``on h(``, ``| Circle(``, ``fn(``: parameters and fields) and in a view element's
call (spec §3: view elements take named arguments of any name). An earlier version let a word
in a call end only with ``=``/``:`` when it did not resolve: the tiny model then extended such
words for hundreds of tokens (cut blocks 137 -> 255 of 408 on the default eval), so a word is
never given a rule whose only exits the model does not take.

Which bracket a word stands in, and which names are in scope there, come from the scan of
:mod:`pipeline.decoding_scan`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from pipeline.decoding_namespace import VALUE, declared as declared_items, namespace
from pipeline.decoding_scan import (
    GENERIC_DECL,
    IDENT_CHARS,
    L1_FRAMES,
    TOKENS,
    Frame,
    Scan,
    in_pattern,
    named_only,
    scan,
)
from pipeline.decoding_types import argument_want, expected_base
from vox_lang.layout import L2_AFTER
from vox_lang.lexer import KEYWORDS
from vox_lang.prelude import BUILTIN_TYPES, BUILTINS, CONSTRUCTORS, VIEW_ELEMENTS

USE: Final = "use"
STMT: Final = "stmt"
TOP: Final = "top"
FOLLOW: Final = "follow"
NUMBER: Final = "number"
MODIFIED: Final = "modified"
HANDLER: Final = "handler"
FREE: Final = ""

#: tokens after which an identifier is a use (expression or type) and must resolve
USE_AFTER: Final = frozenset({
    "=", "+=", "-=", "*=", "/=", "+", "-", "*", "/", "%", "==", "!=", "<", ">", "<=", ">=", "and", "or",
    "not", "ret", "return", "if", "while", "in", "to", ":", "[", "->", "|>", "match",
})
#: reserved words that may follow an operand on its line (spec §2: binary ``and``/``or``, ``to``
#: of a signature or route, ``in`` of a ``for``, ``as`` of an import, ``else`` after a block)
FOLLOWERS: Final = frozenset({"and", "or", "to", "in", "as", "else"})
#: what may follow ``pub`` or ``async`` (spec §2: ``fn = "pub"? "async"? ("fn" / "workflow" /
#: "activity") NAME ...``)
MODIFIERS: Final = frozenset({"pub", "async"})
AFTER_MODIFIER: Final = frozenset({"async", "fn", "workflow", "activity"})
_OPERAND_WORDS: Final = frozenset({"true", "false"})
_DECO_TAIL: Final = re.compile(r"@[\w.]*\Z")
#: prelude values that are functions, so have no fields or methods (spec §4), unless shadowed
_FUNCTIONS: Final = frozenset(BUILTINS) | frozenset(VIEW_ELEMENTS)
#: callees whose result is never a function, so cannot be called: every prelude function and constructor
_NO_FUNCTION_RESULT: Final = _FUNCTIONS | frozenset(CONSTRUCTORS)
#: prelude functions that are also type names
_CONVERSIONS: Final = _FUNCTIONS & frozenset(BUILTIN_TYPES)


@dataclass(frozen=True)
class Position:
    """Where the end of a partial block stands, for the name mask.

    Attributes:
        partial: identifier characters already written at the end (``""`` if none).
        cont: kind (:data:`USE`, :data:`FOLLOW`, :data:`FREE`) of the identifier ``partial``
            belongs to, or of one glued on (no whitespace) when ``partial`` is empty.
        fresh: kind of an identifier the next token starts after whitespace.
    """

    partial: str
    cont: str
    fresh: str

    @property
    def continues_use(self) -> bool:
        """The identifier ``partial`` belongs to must resolve."""
        return self.cont in (USE, STMT, TOP)

    @property
    def fresh_use(self) -> bool:
        """An identifier started after whitespace must resolve."""
        return self.fresh == USE


def _operand_end(tok: str, before: str = "") -> bool:
    """Whether ``tok`` ends an operand (so only a :data:`FOLLOWERS` word may come after it);
    ``before``: the token before it (a reserved word after ``.`` is a member name, an operand)."""
    if not tok or tok == "\n":
        return False
    if tok in (")", "]", "}", "?"):
        return True
    if tok.startswith("\""):
        return len(tok) > 1 and tok.endswith("\"") and not tok.endswith("\\\"")
    if tok[0].isdigit():
        return True
    if tok[0].isalpha() or tok[0] == "_":
        return tok not in KEYWORDS or tok in _OPERAND_WORDS or before == "."
    return False


def _after_open(frame: Frame | None) -> str:
    """The kind of a word right after ``(``, ``,`` or a line start inside ``frame``."""
    if frame is None or frame.kind == "block":
        return STMT if frame is not None else TOP
    if frame.kind in ("decl", "record", "brace", "match"):
        return FREE
    if frame.kind == "call":
        return FREE if frame.callee in VIEW_ELEMENTS else USE
    return USE  # paren, index


def _word_kind(code: str, line_tokens: list[str], state: Scan) -> str:
    """The kind of a word starting at the end of ``code`` (``line_tokens``: the significant
    tokens of its line; ``state``: the :func:`scan` of ``code``)."""
    last = state.prev
    if line_tokens and line_tokens[-1] in MODIFIERS:
        return MODIFIED
    if line_tokens and _operand_end(line_tokens[-1], line_tokens[-2] if len(line_tokens) > 1 else state.before):
        return FOLLOW
    stack = list(state.stack)
    inner = stack[-1] if stack else None
    if not line_tokens and inner is not None and inner.kind in L1_FRAMES \
            and _operand_end(last, state.before):
        return FOLLOW  # L1: inside ( [ a newline is dropped, so this word stands right after an operand
    if last == ".":
        return FREE  # a member name, also on the line after the `.` (L2)
    generic_decl = bool(GENERIC_DECL.search(code, state.stmt_start))
    if last in USE_AFTER and not (last == "<" and generic_decl):
        return USE
    if line_tokens and line_tokens[0] == "for" and "in" not in line_tokens:
        return FREE  # `for k, v`: loop variables being bound
    if generic_decl:
        return FREE
    if in_pattern(code, stack):
        return FREE
    statement_start = not line_tokens or line_tokens[-1] == "{"
    bracketed = inner is not None and inner.kind in L1_FRAMES
    if last in ("(", ",") or (statement_start and bracketed):
        return _after_open(inner)
    if statement_start:
        if inner is None:
            return TOP
        if inner.kind == "children":
            return USE  # a child is an expression
        if inner.kind == "actor":
            return HANDLER
        return STMT if inner.kind == "block" else FREE
    return FREE


@dataclass(frozen=True)
class Suffix:
    """What may not follow the operand ending an open block, whatever the types (see
    :func:`no_suffix`). ``member``: no ``.``; ``call``: no ``(``; ``operator``: no binary
    operator; ``must_call``: only a ``(`` (or the word going on)."""

    member: bool = False
    call: bool = False
    operator: bool = False
    must_call: bool = False
    newline: bool = False  # with must_call: inside ``(``/``[`` whitespace and newlines may come first (L1)
    must_assign: bool = False  # only ``=`` (or the word going on): a named argument's name (scan.named_only)


#: tokens after which an operand is an operator's operand (binary or ``not``/``-``; ``in`` of a ``for``)
_OPERATORS: Final = frozenset({"+", "-", "*", "/", "%", "==", "!=", "<", ">", "<=", ">=", "and", "or", "not", "in"})
_NONE: Final = Suffix()


def _builtin_call(code: str, declared: frozenset[str]) -> bool:
    """Whether the end of ``code`` stands in the arguments of a prelude builtin's call (none of
    which takes a function: spec §4), or in an argument of a declared function whose parameter
    there has a built-in type that is not a function's
    (:func:`pipeline.decoding_types.argument_want`)."""
    stack = scan(code).stack
    if not stack or stack[-1].kind != "call":
        return False
    if stack[-1].callee in BUILTINS and stack[-1].callee not in declared:
        return True
    word = len(code) - len(code.rstrip(IDENT_CHARS))
    return argument_want(code[:len(code) - word], declared) is not None


#: tokens after which a word is a member or the name being declared, not a use
_DECLARING: Final = frozenset({".", "fn", "workflow", "activity", "on", "type", "actor", "|"})


def _module_function(code: str, word: str, before: str, requested: frozenset[str] = frozenset()) -> bool:
    """Whether ``word``, ending ``code`` after ``before``, names a function the program declares
    at top level (``fn``/``workflow``/``activity``, not a variant) or a function the request names
    (``requested``: it may be used before it is declared) that no parameter, ``let`` or loop
    variable shadows there, and is not a member (after ``.``)."""
    if before in _DECLARING or not word or word[0].isdigit():
        return False  # a member, or the name being declared
    if word not in requested and word not in declared_items(code).functions:
        return False
    state = scan(code[:len(code) - len(word)])
    return not any(word in frame.names for frame in state.stack) and word not in state.pending


def no_suffix(code: str, declared: frozenset[str], requested: frozenset[str] = frozenset()) -> Suffix:
    """What cannot follow the operand ending ``code`` (an open block), by what it is, whatever
    its types (``declared``: names in scope besides the prelude, which may shadow it;
    ``requested``: the functions, workflows and activities the request names, which are functions
    before the program declares them, :attr:`vox_lang.requests.RequestSpec.functions`). These were
    most of the E0512s, E0502s and a quarter of the E0510s in the completed blocks of the eval.

    - no member after ``true``/``false`` or a prelude function or view element named bare
      (E0512: ``grid.push``, ``set.get``, ``false.add``);
    - no call after a string, number, ``true``/``false`` or a call of a prelude function or
      constructor (E0502: ``"a"(``, ``str(x)(``);
    - a prelude builtin (a type's conversion, ``int``, ``float``, ``str``, only where
      :func:`pipeline.decoding_namespace.namespace` reads an expression: they are also types) or
      a function the program declares at top level (not shadowed) is called when it is an
      operator's operand (E0510: ``"n: " + set``, ``not len``, ``for v in range``, ``greet + 1``),
      a builtin's argument (E0504: ``float(set)``, ``len(str)``, ``len(word_count)``) or the value
      of ``ret`` or of an annotated ``let`` whose type is known and not a function's (E0507:
      ``ret range`` in a function returning ``int``; :func:`pipeline.decoding_types.expected_base`),
      and no function takes an operator after it where it stands bare (``ret len + 1``; it may be
      a user function's argument, a list element or a pipe stage, or a named argument's name).

    - a parameter of a function declared so far that is no value here, written as a call's
      argument, is a named argument's name: only ``=`` follows it
      (:func:`pipeline.decoding_scan.named_only`; E0401: ``print(backup_name(path))``).

    A view element's argument names (spec §2: a view call's arguments are all named) are left
    free, though ``input(disu, pehut)`` was most of the undefined names left: holding such a word
    to ``=`` made the tiny model extend it instead (36 of 1,224 answers wrote a 25+ character
    word into a view call, against 1 without the rule; cut blocks 114 -> 123 per 408).
    """
    cut = code.rfind("\n") + 1
    line = TOKENS.findall(code, cut)
    if not line and cut:
        return _across_newline(code, declared, requested)
    last = line[-1] if line else ""
    if not last or last.startswith("//"):
        return _NONE
    before = line[-2] if len(line) > 1 else _ended_with(code[:cut])
    if last.startswith('"'):
        return Suffix(call=len(last) > 1 and last.endswith('"') and not last.endswith('\\"'))
    if last[0].isdigit():
        return Suffix(call=True)
    if before == ".":
        return _NONE  # a member: its type is not known here
    if before in ("(", ",") and named_only(code, last):
        return Suffix(must_assign=True)
    if last in ("true", "false"):
        return Suffix(member=True, call=True)
    head = code[:len(code) - len(last)]
    if last in _FUNCTIONS and last not in declared or _module_function(code, last, before, requested):
        if last in _CONVERSIONS and namespace(head) != VALUE:
            return Suffix(member=True)  # also a type name (`x: int`) where the reading cannot tell
        typed = before in ("ret", "=") and expected_base(head) not in (None, "fn")
        if (last in BUILTINS or last not in _FUNCTIONS) \
                and (before in _OPERATORS or before in ("(", ",") and _builtin_call(code, declared) or typed):
            # not a view element: in its call every word is free (named arguments), and the tiny
            # model, held to `input(` after `not input`, filled it with undefined names
            stack = scan(code).stack
            return Suffix(member=True, must_call=True, newline=bool(stack) and stack[-1].kind in L1_FRAMES)
        return Suffix(member=True, operator=True)
    if last == ")":
        callee = scan(code).closed_callee
        return Suffix(call=callee in _NO_FUNCTION_RESULT and callee not in declared)
    return _NONE


def _ended_with(head: str) -> str:
    """The last token of the lines ``head`` holds when layout drops the line break after it (spec
    §1 L2: an operator, ``not``, ``=``, ``,``...), so the word starting the next line stands after
    it (``ret not`` + newline + ``range``); ``""`` otherwise."""
    prev = head.rstrip()
    tokens = [t for t in TOKENS.findall(prev, prev.rfind("\n") + 1) if not t.startswith("//")]
    return tokens[-1] if tokens and tokens[-1] in L2_AFTER else ""


def _across_newline(code: str, declared: frozenset[str], requested: frozenset[str] = frozenset()) -> Suffix:
    """:func:`no_suffix` on a line with nothing written yet: the operand before the line break
    may go on across it. Inside ``(``/``[`` the newline is dropped (spec §1 L1), so its whole
    rule holds (``len(set`` + newline + ``)`` was E0504, ``"a: " + ship_order`` + newline E0510:
    about a third of the function-valued operands in the failing blocks of one constrained eval
    run); elsewhere the newline ends the statement unless an L3 token follows (``else | |> .``),
    so only the refusal of a member (``.``) holds (``match set`` + newline + ``.get()``, E0512)."""
    head = code.rstrip()
    if not head or head.endswith("\n"):
        return _NONE
    rule = no_suffix(head, declared, requested)
    if rule == _NONE:
        return _NONE
    stack = scan(code).stack
    if stack and stack[-1].kind in L1_FRAMES:
        return rule
    return Suffix(member=True) if rule.member else _NONE


def position(code: str) -> Position:
    """Classify the end of ``code`` (the text of an open ```vox block) for the name mask."""
    partial = code[len(code.rstrip(IDENT_CHARS)):]
    head = code[: len(code) - len(partial)]
    physical = TOKENS.findall(head, head.rfind("\n") + 1)
    last = physical[-1] if physical else ""
    in_comment = last.startswith("//")
    in_string = last.startswith('"') and (len(last) == 1 or not last.endswith('"') or last.endswith('\\"'))
    if in_comment or in_string or _DECO_TAIL.search(head):
        return Position(partial, FREE, FREE)
    if partial[:1].isdigit():
        return Position(partial, NUMBER if partial.isdigit() else FREE, FOLLOW)
    state = scan(head)
    # the logical line: layout (L1-L3) may have dropped newlines inside it
    line_tokens = [t for t in TOKENS.findall(head, state.stmt_start) if t != "\n" and not t.startswith("//")]
    kind = _word_kind(head, line_tokens, state)
    if not partial:
        return Position("", kind, kind)
    if partial in MODIFIERS and state.prev != ".":
        fresh = MODIFIED
    elif partial in KEYWORDS and partial not in _OPERAND_WORDS and state.prev != ".":
        fresh = USE if partial in USE_AFTER else FREE
    else:
        fresh = FOLLOW
    return Position(partial, kind, fresh)
