"""Declared types at an expression's head, for the name mask (:mod:`pipeline.decoding_names`).

Where the left context says what type an expression must have, and the word (or number) that
starts it can never give that type, the start is refused (:func:`head_rule`). These places:

- the value of ``ret`` in a function (or handler, workflow, activity, lambda) with a declared
  return type, of ``let x: T =``, and of an assignment to a typed name (``n += v`` with ``n:
  int``; spec §4: ``ret`` must give the return type, E0507; a ``let``'s value its annotation,
  E0501; an assignment the name's type);
- the operand of unary ``not`` (``and or not`` on bool, E0510) and of unary ``-`` (numbers);
- an argument of a prelude builtin (spec §5: ``len`` takes ``str|List|Map|Set``, ``range`` ints,
  ``float``/``int`` an int, float or str, ``assert`` a bool, ``set`` a list; E0504), the
  parameter types of :data:`vox_lang.prelude.BUILTINS`, and of a function the program declares
  with a built-in parameter type there (:func:`argument_want`);
- the right operand of a comparison whose left operand's type is known (an ``int`` name's only
  with ints: an ``INT`` literal alone checks as a ``float``, spec §4);
- the iterable of a ``for`` (the checker iterates a ``List``, ``Set``, ``Map`` or ``str``, E0501):
  in one constrained eval run's answers ``for v in print(...)`` stood 21 times, ``for v in
  assert(...)`` 11, and a ``vox chat`` answer failed on ``for s in column``.

A name of the program counts by the type its bindings give it
(:func:`pipeline.decoding_typed.typed_names`: parameters, ``let``s, loop variables; a function by
its return type) when that type has no methods and no indexing (``int float bool Unit Element
Set``): ``ret n`` with ``n: int`` in a function returning ``str`` is refused, as is ``cents`` in
``"left for " + cents``; and such a name, or a ``str``, on the left of a comparison makes its
right operand one that must reach the same type (``n > text`` with ``n: int``: a view element is
no number).

What a start can give (its *reach*) follows from spec §4 and §5 alone, for the starts whose type
has no methods and no indexing: a number (or unary ``-``) gives an ``int`` or ``float``, and a
comparison of it a ``bool``; ``not``/``true``/``false`` a ``bool``; a view element's call an
``Element`` (``==`` of two a ``bool``); ``len(``/``int(`` an ``int`` (then ``float`` by arithmetic
with a float, ``bool`` by comparison); ``float(`` a ``float``; ``print(``/``assert(`` ``Unit``
``set(`` a ``Set``, which has no methods and no indexing either (spec §5; in the completed
blocks of one constrained eval run ``"Total: " + set(n)`` was E0510) (a builtin's result is its
return type in :data:`vox_lang.prelude.BUILTINS`).
A ``not``'s operand is a unary expression (``not a == b`` is ``(not a) == b``), so there only
postfix can follow the start and the comparisons do not count. Every other start (a name, a
string, ``[``, ``(``, a constructor, ``str(``, ``range(``, ``if``, ``match``) may reach any type
through methods, indexing or ``?``, so it is never refused; nor is a prelude name the program
shadows. The return types read are the builtin ones only (an alias, a user type or a generic
is not resolved here, so it restricts nothing).

The operand of ``not`` may not start with a list literal's ``[`` (nor a string literal, which
reaches a ``bool`` only by a method on the literal: ``not "…"`` stood 44 times in the failing
answers of one constrained eval run's first pass, E0510) either: a list reaches a
``bool`` only by indexing or a method chain on the literal (``not [done][0]``), and the tiny model
wrote ``if not[int] { ret 0 }`` (a list of the conversion ``int``) in 43 of the 199 completed
blocks that failed in one constrained eval run of the default export (E0510).

**Trade-off.** A pipe ``a |> f`` is ``f(a)`` (spec §2), so any start can reach any type through
one: ``ret 0 |> str`` is valid in a function returning ``str``, and this rule refuses its ``0``;
so is ``not [done][0]`` refused.
Like the forward references of :mod:`pipeline.decoding_names`, this trades a rare spelling for
the wrong-typed starts the tiny model writes: in the completed blocks of one constrained eval
run (408 answers), 58 of the 100 ``ret`` type errors (E0507) started with such a word
(``ret float(...)`` in a function returning ``int``, ``ret len(names)`` returning ``str``,
``ret 0.0`` returning ``int``), and 45 of the 74 builtin argument errors (E0504) such as
``len(3)`` and ``float(false)``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from pipeline.decoding_scan import IDENT_CHARS, L1_FRAMES, TOKENS, scan, top_level_tokens
from pipeline.decoding_typed import COMPARE, UNKNOWN, base, operand_end, parameter_types, typed_names
from vox_lang.layout import L2_AFTER
from vox_lang.lexer import KEYWORDS
from vox_lang.prelude import BUILTINS, VIEW_ELEMENTS, Sig
from vox_lang.types import TCon, TOneOf

#: the start of a number: a digit or unary minus (``-`` not of ``->``)
NUMBER: Final = "<number>"
_NUMERIC: Final = frozenset({"int", "float", "bool"})
#: the builtin types with no methods and no indexing, so an expression of one reaches only the
#: types its operators give (every other result may reach any type)
_PLAIN: Final = frozenset({"int", "float", "bool", "Unit", "Element", "Set"})
#: each prelude builtin's return type's base name (``List`` for ``List[int]``)
_RETURNS: Final[dict[str, str]] = {n: s.ret.name for n, s in BUILTINS.items() if isinstance(s.ret, TCon)}


def _by_operators(base: str) -> frozenset[str]:
    """What an expression of type ``base`` can give with binary operators after it: itself, a
    ``bool`` by comparison and, from an ``int``, a ``float`` by arithmetic with one."""
    return frozenset({base, "bool"} | ({"float"} if base == "int" else set()))


def _arguments(sig: Sig) -> frozenset[str] | None:
    """The type heads the parameters of ``sig`` take (``TCon`` names, ``TOneOf`` heads); ``None``
    when one takes any type (``any``, a type parameter)."""
    heads: set[str] = set()
    for p in sig.params:
        if isinstance(p.type, TCon):
            heads.add(p.type.name)
        elif isinstance(p.type, TOneOf):
            heads.update(p.type.heads)
        else:
            return None
    return frozenset(heads) if heads else None


#: what an expression starting with each word can give, with binary operators after it (see module docstring)
_REACH: Final[dict[str, frozenset[str]]] = {
    NUMBER: _NUMERIC, "not": frozenset({"bool"}), "true": frozenset({"bool"}), "false": frozenset({"bool"}),
    **{n: _by_operators(r) for n, r in _RETURNS.items() if r in _PLAIN},
    **{v: frozenset({"Element", "bool"}) for v in VIEW_ELEMENTS},
}
#: ... and with only postfix after it (the operand of a unary operator)
_POSTFIX_REACH: Final[dict[str, frozenset[str]]] = {
    NUMBER: frozenset({"int", "float"}), "not": frozenset({"bool"}), "true": frozenset({"bool"}),
    "false": frozenset({"bool"}),
    **{n: frozenset({r}) for n, r in _RETURNS.items() if r in _PLAIN},
    **{v: frozenset({"Element"}) for v in VIEW_ELEMENTS},
}
#: what a name of each type with no methods and no indexing can give (a typed name's reach,
#: :func:`pipeline.decoding_typed.typed_names`): with binary operators after it, and with only postfix
_TYPED_REACH: Final[dict[str, frozenset[str]]] = {t: _by_operators(t) for t in _PLAIN}
_TYPED_POSTFIX: Final[dict[str, frozenset[str]]] = {t: frozenset({t}) for t in _PLAIN}
#: what each prelude builtin's arguments must be (spec §5): the heads its parameters take; a
#: builtin with a parameter of any type (``print``, ``str``) is absent
ARGUMENTS: Final[dict[str, frozenset[str]]] = {
    n: heads for n, heads in ((n, _arguments(s)) for n, s in BUILTINS.items()) if heads is not None
}
#: the type of a prelude builtin's call where it can be an arithmetic operand (``str(...)``, ``len(...)``)
_OPERANDS: Final[dict[str, str]] = {n: r for n, r in _RETURNS.items() if r in ("int", "float", "str")}
_SIMPLE: Final = frozenset({"int", "float", "bool", "str", "Element", "Unit"})
#: what a ``for`` iterates over (the checker's ``for_``: a List, Set or Map, or a str)
_ITERABLE: Final = frozenset({"List", "Set", "Map", "str"})
#: words that start an expression which is never iterable: a lambda gives a function, ``spawn``
#: an actor handle (spec §4). ``for v in fn(`` began 25 failing answers of one constrained eval
#: run of the default export (all E0501 or derailed past it); ``if``/``match`` may give a list
_NEVER_ITERABLE: Final = frozenset({"fn", "spawn"})
#: binary operators whose right operand is a ``mul_e``/``unary`` (spec §2), so only postfix and
#: arithmetic follow its start: its type is then the start's, or an error
_ARITHMETIC: Final = frozenset({"+", "-", "*", "/", "%"})
_GENERIC: Final = re.compile(r"(List|Set|Map|Option|Result)\b")
#: a function, handler, workflow, activity or lambda header right before its body's ``{``
_HEADER: Final = re.compile(
    r"(?:\b(?:fn|workflow|activity|on)\s+[A-Za-z_]\w*\s*(?:<[^<>{}]*>)?|\bfn)\s*"
    r"\([^(){}]*(?:\([^(){}]*\)[^(){}]*)*\)\s*"  # parameters (a function type's parentheses nest once)
    r"(?:to\s+(?P<ret>[^{}]*?))?\s*\Z")
_LET_TYPED: Final = re.compile(r"\blet\s+(?:mut\s+)?[A-Za-z_]\w*\s*:\s*(?P<type>[^=\n]+?)\s*=\s*\Z")
_HEADER_LOOKBACK: Final = 400  # characters before a `{` searched for its header


@dataclass(frozen=True)
class HeadRule:
    """What may not start the expression at the end of the text: the prelude ``words``; with
    ``numbers``, a number or unary ``-``; with ``lists``, a list literal's ``[``; with
    ``strings``, a string literal (both only as the operand of ``not`` or a pipe's stage: see
    the module docstring); with ``braces``/``parens``, a ``{`` / ``(`` (a pipe's stage)."""

    words: frozenset[str]
    numbers: bool
    lists: bool = False
    strings: bool = False
    braces: bool = False
    parens: bool = False


def type_base(text: str | None) -> str | None:
    """The builtin type a type's source text names: ``int float bool str Element Unit`` (``""``:
    no return type, so ``Unit``), ``List Set Map Option Result`` for their applications, ``fn``
    for a function type; ``None`` for anything else (aliases, user types, generics)."""
    if text is None:
        return None
    text = text.strip()
    if not text:
        return "Unit"
    if text in _SIMPLE:
        return text
    m = _GENERIC.match(text)
    if m:
        return m.group(1)
    return "fn" if text.startswith("fn") else None


def return_type(code: str) -> str | None:
    """The declared return type (source text, ``""`` when none) of the function, handler,
    workflow, activity or lambda whose body the end of ``code`` stands in; ``None`` when there is
    none or its header cannot be read."""
    for frame in reversed(scan(code).stack):
        if frame.kind not in ("block", "record", "brace", "match"):
            return None
        if frame.kind != "match":  # a lambda's body reads as a record when its return type ends in a name
            found = header_return(code, frame.arm - 1)
            if found is not None:
                return found
    return None


def header_return(code: str, brace: int) -> str | None:
    """The declared return type (source text, ``""`` when none) of the function, handler,
    workflow, activity or lambda whose body the ``{`` at offset ``brace`` of ``code`` opens;
    ``None`` when that brace opens no such body (an ``if``, a loop, a record...)."""
    m = _HEADER.search(code, max(0, brace - _HEADER_LOOKBACK), brace)
    return (m.group("ret") or "") if m else None


def _typed(code: str, declared: frozenset[str], table: dict[str, frozenset[str]]) -> dict[str, frozenset[str]]:
    """The reach (``table``: :data:`_TYPED_REACH` or :data:`_TYPED_POSTFIX`) of each name in scope
    (``declared``) whose type has no methods and no indexing: a typed variable, or a function by
    its declared return type."""
    types, returns = typed_names(code)
    out: dict[str, frozenset[str]] = {}
    for name, t in types.items():
        if name in declared:
            head = base(returns.get(name)) if t == "fn" else base(t)
            if head in table:
                out[name] = table[head]
    return out


def _rule(reach: dict[str, frozenset[str]], target: frozenset[str], declared: frozenset[str],
          typed: dict[str, frozenset[str]] | None = None) -> HeadRule | None:
    refused = frozenset(w for w, r in reach.items() if not r & target and w not in declared)
    if typed:
        refused |= frozenset(w for w, r in typed.items() if not r & target)
    if not refused:
        return None
    return HeadRule(refused - {NUMBER}, NUMBER in refused)


def _operand_type(tokens: list[str], before: str, declared: frozenset[str]) -> str | None:
    """The type of the operand ``tokens`` end with (``before``: the text up to its end), when a
    string or number literal, a prelude conversion's call (``str(...)``, ``len(...)``), a name
    typed ``int``/``float``/``str``/``bool`` or a call of a function of the program returning one
    ends it (:func:`pipeline.decoding_typed.typed_names`); else ``None``. (Postfix after a literal
    is a member or an index, whose type is not read here.)"""
    last = tokens[-1]
    ahead = tokens[-2] if len(tokens) > 1 else ""
    if ahead == ".":
        return None
    if (last[:1].isalpha() or last[:1] == "_") and last in declared:
        found = typed_names(before)[0].get(last)
        return found if found in _OPERANDS.values() or found == "bool" else None
    if last.startswith('"'):
        return "str" if len(last) > 1 and last.endswith('"') and not last.endswith('\\"') else None
    if last[:1].isdigit():
        return "float" if "." in last else "int"
    if last == ")":
        callee = scan(before).closed_callee
        if callee not in declared:
            return _OPERANDS.get(callee)
        types, returns = typed_names(before)
        found = returns.get(callee) if types.get(callee) == "fn" else None
        return found if found in _OPERANDS.values() else None
    return None


#: tokens before which an operand stands alone: the left operand of a comparison after one of
#: them is that operand only (spec §2 precedence: comparisons bind looser than arithmetic)
_ALONE_AFTER: Final = frozenset({"ret", "return", "if", "while", "=", "(", ",", "[", "{", "and", "or", "not",
                                 "->", "assert"})


def _lone_variable(tokens: list[str]) -> bool:
    """Whether ``tokens`` end with a name standing alone as a comparison's left operand (no
    arithmetic, member or call around it: ``ret n``, ``if n``), so its type is the name's and
    not an ``INT`` literal's (spec §4: an ``INT`` literal checks as ``float`` where the other
    operand is one, nothing else converts: ``n > float(n)`` with ``n: int`` is E0510)."""
    last = tokens[-1]
    if not (last[:1].isalpha() or last[:1] == "_") or last in ("true", "false", "None"):
        return False
    return len(tokens) == 1 or tokens[-2] in _ALONE_AFTER


def _line_tokens(head: str) -> tuple[str, list[str]]:
    """The last line of ``head`` and its tokens, comments left out."""
    line = head[head.rfind("\n") + 1:]
    return line, [t for t in TOKENS.findall(line) if not t.startswith("//")]


def _expected(head: str, line: str, tokens: list[str]) -> str | None:
    """:func:`expected_base` of ``head``, whose last line and its tokens are ``line`` and ``tokens``."""
    last = tokens[-1] if tokens else ""
    if last == "ret" and (len(tokens) == 1 or tokens[-2] in ("{", "->")):
        return type_base(return_type(head))
    if last == "=":
        m = _LET_TYPED.search(line)
        if m:
            return type_base(m.group("type"))
    if last in ASSIGNMENTS:
        return _assigned(head, tokens)
    return None


#: assignment operators (spec §2: ``assign = place ("=" / "+=" / "-=" / "*=" / "/=") expr``)
ASSIGNMENTS: Final = frozenset({"=", "+=", "-=", "*=", "/="})


#: tokens after which a statement starts on the same line
_STATEMENT_STARTS: Final = frozenset({"{", "}", ";"})


def _assigned(head: str, tokens: list[str]) -> str | None:
    """The builtin type (:func:`type_base`) the value of an assignment to a name must have: the
    name's own type, where its bindings agree on one (:func:`pipeline.decoding_typed.typed_names`;
    spec §4: ``n += v`` with ``n: int`` wants an ``int``, E0510 when ``v`` is an ``Element``).
    ``None`` for a field or index target, or a ``name =`` that is a named argument (inside a call
    or other brackets)."""
    cut = max((i + 1 for i, t in enumerate(tokens) if t in _STATEMENT_STARTS), default=0)
    tokens = tokens[cut:]  # the statement: `for v in xs { n += ` assigns `n`
    if len(tokens) != 2 or not (tokens[0][:1].isalpha() or tokens[0][:1] == "_") or tokens[0] in KEYWORDS:
        return None
    stack = scan(head).stack
    if stack and stack[-1].kind not in ("block", "brace"):
        return None
    found = typed_names(head)[0].get(tokens[0])
    return type_base(found) if found is not None and found != UNKNOWN else None


def expected_base(head: str) -> str | None:
    """The builtin type (:func:`type_base`) the expression starting at the end of ``head`` must
    have when it is the value of ``ret`` or of an annotated ``let``; ``None`` when that is not
    known there."""
    return _expected(head, *_line_tokens(head))


def _across_newline(head: str, declared: frozenset[str]) -> HeadRule | None:
    """:func:`head_rule` where the expression starts on a line with nothing written yet before
    it: when layout drops the line break (inside ``(``/``[``, spec §1 L1, or after an operator,
    ``not``, ``=``, ``,``..., L2), the left context is the line before (``not`` + newline +
    ``Some``, ``len(`` + newline + ``str``); else the line starts a statement: no rule. Blank and
    comment-only lines in between count as one line break (spec §10 Layout): ``not`` + newline +
    ``//`` comment + newline + ``-"()`` began 12 failing answers' lines in one eval run."""
    prev = head.rstrip()
    _, tokens = _line_tokens(prev)
    while not tokens and "\n" in prev:  # a comment-only line: the left context is above it
        prev = prev[:prev.rfind("\n")].rstrip()
        _, tokens = _line_tokens(prev)
    if not tokens:
        return None  # nothing before: no left context read
    stack = scan(head).stack
    if not (stack and stack[-1].kind in L1_FRAMES) and tokens[-1] not in L2_AFTER:
        return None
    return head_rule(prev + " ", declared)


#: constructors of ``Option``/``Result``: a ``not``'s operand starting with one reaches a
#: ``bool`` only by ``.unwrap_or(...)`` on it; ``ret not None`` and ``not Error(...)`` stood 11
#: times in one constrained eval run's failing answers (E0510), so they are refused there, as is
#: a record or map literal's ``{`` (``ret not { miht: card }``: only a field could be a ``bool``),
#: and an ``if`` or ``match`` expression (``if not`` + newline + ``if ...`` stood 12 times in one
#: run's failing answers: an ``if`` without ``else`` is ``Unit``; trade-off: ``not if c { a } else
#: { b }`` is refused too)
_WRAPPERS: Final = frozenset({"None", "Some", "Ok", "Error", "if", "match"})
#: words that never name a function: a pipe's stage may not be one
_NOT_FUNCTIONS: Final = frozenset({"true", "false", "not", "None", "if", "match", "spawn"})


def _pipe_stage(head: str, declared: frozenset[str]) -> HeadRule:
    """What may not start a pipe's stage (``a |> f`` is ``f(a)``, spec §2: the stage is a
    function): a literal, list, record or map, a parenthesized expression, a word that is never a
    function, and a name the program types as anything but a function
    (:func:`pipeline.decoding_typed.typed_names`). In one constrained eval run's first pass, ``|>
    {} { 0 -> 0 }`` and ``|>(n)`` stood 72 times (E0502)."""
    types, _ = typed_names(head)
    typed = frozenset(n for n, t in types.items() if n in declared and t != "fn")
    return HeadRule((_NOT_FUNCTIONS - declared) | typed, True, lists=True, strings=True, braces=True, parens=True)


def head_rule(code: str, declared: frozenset[str]) -> HeadRule | None:
    """What may not start the expression whose first word (or number) is being written at the end
    of ``code`` (an open ```vox block), from the types the left context declares (see the module
    docstring); ``None`` when nothing is refused or the end is no such start. ``declared``: names
    in scope besides the prelude (a prelude name they shadow is never refused)."""
    head = code[: len(code.rstrip(IDENT_CHARS))]
    if head.rstrip(" \t").endswith("|>"):
        return _pipe_stage(head, declared)  # `|>0`, `|>-"`: glued on the pipe too
    if head[-1:] not in (" ", "\t", "\n", "(", ","):
        return None  # the word being written is glued to something: not a fresh start
    line, tokens = _line_tokens(head)
    if not tokens and "\n" in head:
        return _across_newline(head, declared)
    last = tokens[-1] if tokens else ""
    if last == "ret" or last in ASSIGNMENTS:
        want = _expected(head, line, tokens)
        if want in (None, "fn"):
            return None
        return _rule(_REACH, frozenset({want}), declared, _typed(head, declared, _TYPED_REACH))
    if last == "in" and tokens[:1] == ["for"]:  # E0501: `for v in print(`, `for s in column`
        rule = _rule(_REACH, _ITERABLE, declared, _typed(head, declared, _TYPED_REACH)) or HeadRule(frozenset(), False)
        return HeadRule(rule.words | _NEVER_ITERABLE, rule.numbers)
    if last == "not":
        rule = _rule(_POSTFIX_REACH, frozenset({"bool"}), declared, _typed(head, declared, _TYPED_POSTFIX)) \
            or HeadRule(frozenset(), False)
        return HeadRule(rule.words | (_WRAPPERS - declared), rule.numbers, lists=True, strings=True, braces=True)
    if last == "-" and (len(tokens) == 1 or not (tokens[-2] in ("?", "}") or operand_end(tokens[-2]))):
        # unary minus (spec §4: on numbers): `-"()..."` began 11 failing answers' lines in one run
        rule = _rule(_POSTFIX_REACH, frozenset({"int", "float"}), declared, _typed(head, declared, _TYPED_POSTFIX)) \
            or HeadRule(frozenset(), False)
        return HeadRule(rule.words | (_WRAPPERS - declared), False, lists=True, strings=True, braces=True)
    if (last in _ARITHMETIC or last in COMPARE) and len(tokens) >= 2:
        left = _operand_type(tokens[:-1], head[:head.rstrip().rfind(last)], declared)
        if last in COMPARE:  # the right operand is an `add_e` (spec §2): arithmetic may follow its start
            if left in ("int", "float", "str"):
                same = frozenset({"int", "float"} if left != "str" else {"str"})
                if left == "int" and _lone_variable(tokens[:-1]):
                    same = frozenset({"int"})  # `n > float(n)`: only an INT literal checks as a float
                return _rule(_REACH, same, declared, _typed(head, declared, _TYPED_REACH))
        elif left == "str" and last == "+":
            return _rule(_POSTFIX_REACH, frozenset({"str"}), declared, _typed(head, declared, _TYPED_POSTFIX))
        elif left in ("int", "float"):
            return _rule(_POSTFIX_REACH, frozenset({"int", "float"}), declared, _typed(head, declared, _TYPED_POSTFIX))
    if last in ("(", ","):
        heads = argument_want(head, declared)
        if heads is not None:
            return _rule(_REACH, heads, declared, _typed(head, declared, _TYPED_REACH))
    return None


def argument_want(head: str, declared: frozenset[str]) -> frozenset[str] | None:
    """The type heads the argument starting at the end of ``head`` may have, when it stands in
    the call of a prelude builtin (:data:`ARGUMENTS`, spec §5) or of a function, workflow or
    activity the program declares with a built-in parameter type there
    (:func:`pipeline.decoding_typed.parameter_types`: ``ship_order(range)`` with ``id: str`` was
    E0504); ``None`` when not known (a generic or function-typed parameter, named arguments, a
    method or view element call)."""
    stack = scan(head).stack
    frame = stack[-1] if stack else None
    if frame is None or frame.kind != "call" or not frame.callee:
        return None
    callee_at = head.rfind(frame.callee, 0, frame.arm)
    piped = callee_at >= 0 and head[:callee_at].rstrip().endswith("|>")  # `xs |> f(b)` is `f(xs, b)` (spec §2)
    if piped and (frame.callee in BUILTINS or frame.callee in VIEW_ELEMENTS):
        return None
    if frame.callee in ARGUMENTS and frame.callee not in declared:
        return ARGUMENTS[frame.callee]
    if frame.callee in BUILTINS or frame.callee in VIEW_ELEMENTS:
        return None
    params = parameter_types(head).get(frame.callee)
    if params is None:
        return None
    index = int(piped)
    for tok in top_level_tokens(head, frame.arm):
        if tok == ",":
            index += 1
        elif tok == "=":
            return None  # named arguments: which parameter is not read here
    want = type_base(params[index]) if index < len(params) else None
    return frozenset({want}) if want not in (None, "fn") else None
