"""What may follow an operand whose type is known, for the name mask (:mod:`pipeline.decoding_names`).

:mod:`pipeline.decoding_types` refuses the *start* of an expression that can never give the type
its place needs. Many wrong-typed expressions start well and go wrong after their first operand:
in the failing completed blocks of one constrained eval run of the default export, ``ret text + "
ok"`` in a function returning ``int`` (E0507), ``ret len(s)`` returning ``bool``, ``ret n > text``
with ``n: int`` (E0510), ``"left for " + cents`` with ``cents: int``. Once the operand before the
end of the text has a known type (:func:`pipeline.decoding_typed.expr_type` over the names'
types of :func:`pipeline.decoding_typed.typed_names`), :func:`operator_rule` refuses:

- an operator the operand's type does not take (spec §4: ``+`` on ``int``/``float``/``str``,
  ``- * / %`` on numbers, ``and``/``or`` on ``bool``; E0510), and a ``.`` after a type with no
  methods and no fields (``int float bool Unit Element Set``; E0512: ``n.txt``,
  ``print(x).unwrap_or``), whatever the context;
- where the context says what type the whole expression must have (the value of ``ret`` in a
  function with a built-in return type, of ``let x: T =``, the condition of ``if``/``while``,
  the argument of a one-parameter prelude builtin: :data:`_BUILTIN_ARGS`), an operator after
  which the expression can no longer give it (``ret text +`` in a function returning ``int``: a
  ``str`` sum stays a ``str``, compared it is a ``bool``), and the token that would end the
  expression (a line break, ``}``, ``;`` or a comment; ``{`` after a condition; ``)`` or ``,``
  of the builtin's call) while its type is not the one needed (E0507, E0501, E0511, E0504).

Postfix (``.method(...)``, ``[i]``) and a pipe stay open, so a ``str`` can still become an ``int``
(``text.split(" ")`` then ``len``) — the rule never leaves a typed operand with nothing to
write. An ``int`` literal counts as a ``float`` where one is needed (spec §4). **Trade-off:** a
line break before an L3 continuation (``ret text`` + newline + ``|> len``) is refused where the
type is not yet the one needed; the expression has to go on on its own line.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from pipeline.decoding_scan import TOKENS, scan
from pipeline.decoding_typed import (
    ARITH,
    COMPARE,
    LOGIC,
    UNKNOWN,
    arithmetic,
    base,
    expr_type,
    operand_end,
    typed_names,
)
from pipeline.decoding_types import ARGUMENTS, ASSIGNMENTS, expected_base
from vox_lang.prelude import BUILTINS, CONSTRUCTORS

#: tokens an expression is made of (besides names, literals and brackets)
_EXPRESSION: Final = LOGIC | COMPARE | ARITH | {".", "?", "not", "true", "false", "None"}
#: a prelude builtin taking one argument, and the types that argument may have (spec §5)
_BUILTIN_ARGS: Final = {n: heads for n, heads in ARGUMENTS.items() if len(BUILTINS[n].params) == 1}
#: built-in types with no methods and no fields (spec §5): nothing may follow them after a ``.``
_NO_MEMBERS: Final = frozenset({"int", "float", "bool", "Unit", "Element", "Set"})
_CLOSERS: Final = {")": "(", "]": "[", "}": "{"}
#: prelude names :func:`pipeline.decoding_typed.expr_type` reads calls of
_PRELUDE_CALLS: Final = frozenset(BUILTINS) | frozenset(CONSTRUCTORS)
_OPENERS: Final = frozenset("([{")


@dataclass(frozen=True)
class OperatorRule:
    """Token classes refused after the operand ending the text (see the module docstring):
    ``plus`` ``+``; ``arith`` ``- * / %``; ``compare`` ``== != < > <= >=``; ``logic``
    ``and``/``or``; ``end`` a line break, ``}``, ``;`` or a comment; ``brace`` ``{``; ``close``
    ``)`` and ``,``; ``member`` ``.`` (on a type with no methods and no fields)."""

    plus: bool = False
    arith: bool = False
    compare: bool = False
    logic: bool = False
    end: bool = False
    brace: bool = False
    close: bool = False
    member: bool = False

    def classes(self) -> tuple[str, ...]:
        """The :class:`~pipeline.decoding_tokens.TokenTable` classes refused."""
        pairs = ((self.plus, "plus_led"), (self.arith, "arith_led"), (self.compare, "compare_led"),
                 (self.logic, "logic_led"), (self.end, "end_led"), (self.brace, "brace_led"),
                 (self.close, "close_led"), (self.close, "comma_led"), (self.member, "member_led"))
        return tuple(name for on, name in pairs if on)


def _back(toks: Sequence[str], stops: Callable[[str], bool]) -> tuple[int, str]:
    """Back from the end of ``toks`` over balanced brackets to the first token at depth 0 that
    ``stops`` says ends the run, or to an unmatched opening bracket: the index after it and that
    token (``0, ""`` when none)."""
    depth = 0
    for j in range(len(toks) - 1, -1, -1):
        t = toks[j]
        if t in _CLOSERS:
            depth += 1
        elif t in _OPENERS:
            if depth == 0:
                return j + 1, t
            depth -= 1
        elif depth == 0 and stops(t):
            return j + 1, t
    return 0, ""


def _expression(toks: Sequence[str]) -> tuple[int, str]:
    """Where the expression that ends ``toks`` starts (an index) and the token before it (``""``
    at the line start): back over balanced brackets, names, literals and operators."""
    return _back(toks, lambda t: not (t in _EXPRESSION or operand_end(t)))


def _top_level(toks: Sequence[str], ops: frozenset[str]) -> int:
    """Index after the last operator of ``ops`` at bracket depth 0 in ``toks`` (0: none; the
    brackets of an expression from :func:`_expression` all match)."""
    return _back(toks, ops.__contains__)[0]


def _wanted(before: str, line: Sequence[str], start: int, stop: str,
            declared: frozenset[str]) -> tuple[frozenset[str], str] | None:
    """What type the expression from ``line[start:]`` must have, read from the token before it
    (``stop``; ``before``: the text up to the expression), and which class ends it there;
    ``None`` when the context does not say. ``ret`` and ``let x: T =`` read as the head rule
    reads them (:func:`pipeline.decoding_types.expected_base`)."""
    if stop == "ret" or stop in ASSIGNMENTS:
        want = expected_base(before.rstrip() + " ")  # the value may start on the next line (L2)
        return (frozenset({want}), "end") if want not in (None, "fn") else None
    if stop in ("if", "while"):
        return frozenset({"bool"}), "brace"
    if stop == "(" and start >= 2 and line[start - 2] in _BUILTIN_ARGS and line[start - 2] not in declared:
        return _BUILTIN_ARGS[line[start - 2]], "close"
    return None


def _int_literal(toks: Sequence[str]) -> bool:
    """Whether ``toks`` are one ``INT`` literal, possibly negated (``3``, ``- 3``)."""
    rest = toks[1:] if toks[:1] == ["-"] else toks
    return len(rest) == 1 and rest[0].isdigit()


def _comparable(a: str, b: str, left: Sequence[str] = (), right: Sequence[str] = ()) -> bool:
    """Whether two operands of these types (``left``/``right``: their tokens) may be compared
    (spec §4: ``== !=`` on one type, ``< > <= >=`` on two ints, floats or strs; an ``int`` with a
    ``float`` only when the ``int`` is an ``INT`` literal, which checks as a ``float`` there:
    ``2 < x`` is valid, ``n < x`` and ``n > float(n)`` are E0510)."""
    if base(a) == base(b):
        return True
    if {a, b} != {"int", "float"}:
        return False
    return _int_literal(left if a == "int" else right)


def _fits(type_text: str, want: frozenset[str], toks: Sequence[str] = ()) -> bool:
    """Whether an expression of type ``type_text`` (``toks``: its tokens) is one of ``want``: an
    ``int`` counts as a ``float`` only when it is an ``INT`` literal (spec §4: ``ret 0`` in a
    function returning ``float``; ``ret n`` with ``n: int`` there is E0507)."""
    b = base(type_text)
    return b in want or b == "int" and "float" in want and _int_literal(toks)


def operator_rule(code: str, declared: frozenset[str]) -> OperatorRule | None:
    """What may not follow the operand ending ``code`` (an open ```vox block, outside strings and
    comments), from the types of it and of its context (see the module docstring); ``None``
    when nothing is refused. ``declared``: names in scope besides the prelude (a prelude builtin
    they shadow is not read as one)."""
    head = code.rstrip(" \t")
    if not head or head[-1] in "\n" or not (head[-1].isalnum() or head[-1] in '_")]'):
        return None
    state = scan(head)
    found = [(m.start(), m.group()) for m in TOKENS.finditer(head, state.stmt_start)
             if m.group() != "\n" and not m.group().startswith("//")]
    line = [t for _, t in found]
    if not line or not operand_end(line[-1]):
        return None
    last = line[-1]
    if (last[0].isalpha() or last[0] == "_") and last not in declared and last not in ("true", "false", "None"):
        return None  # a name not in scope (one being written): its type is not known
    start, stop = _expression(line)
    expr = line[start:]
    if not expr or expr[0] in ARITH - {"-"} | COMPARE | LOGIC:
        return None
    types, returns = typed_names(head)
    shadowed = declared & _PRELUDE_CALLS
    if shadowed - types.keys():  # a builtin the program rebinds in a way not read: its calls are not read
        types = {**types, **{n: UNKNOWN for n in shadowed - types.keys()}}
    refuse: dict[str, bool] = {}
    logic_part = expr[_top_level(expr, LOGIC):]
    logic_type = expr_type(logic_part, types, returns)
    if logic_type is not None and logic_type != "bool":
        refuse["logic"] = True
    cut = _top_level(expr, LOGIC | COMPARE)
    add_part = expr[cut:]
    add_type = expr_type(add_part, types, returns)
    if cut and add_type is not None and expr[cut - 1] in COMPARE:
        left_part = expr[_top_level(expr[:cut - 1], LOGIC | COMPARE):cut - 1]
        left = expr_type(left_part, types, returns)
        if left is not None and not _comparable(left, add_type, left_part, add_part):
            # `n == s`: no operator or end can make the comparison valid; only postfix may go on
            return OperatorRule(True, True, True, True, True, True, True)
    operand = expr[_top_level(expr, LOGIC | COMPARE | ARITH):]
    while operand[:1] in (["not"], ["-"]):
        operand = operand[1:]  # a prefix applies after postfix: `-n.f()` is `-(n.f())`
    if not last[0].isdigit() and base(expr_type(operand, types, returns)) in _NO_MEMBERS:  # `1.5`: a number
        refuse["member"] = True
    if add_type is not None:
        if add_type not in ("int", "float", "str"):
            refuse["plus"] = True
        if add_type not in ("int", "float"):
            refuse["arith"] = True
    context = _wanted(head[:found[start][0]], line, start, stop, declared)
    if context is not None:
        want, ender = context
        whole = expr_type(expr, types, returns)
        if whole is not None:
            if not _fits(whole, want, expr):
                refuse[ender] = True
            compared = _top_level(expr, LOGIC | COMPARE) > 0
            for op, gives in _results(add_type, compared).items():
                if not any(_fits(g, want) for g in gives):
                    refuse[op] = True
    return OperatorRule(**refuse) if refuse else None


def _results(add_type: str | None, compared: bool) -> Mapping[str, tuple[str, ...]]:
    """What the whole expression can still become after each operator class: after a
    comparison (``compared``) every operator keeps it a ``bool``; else arithmetic keeps the
    additive part's type (``int`` may become ``float``) and a later comparison makes a ``bool``."""
    if compared:
        return {"plus": ("bool",), "arith": ("bool",), "compare": ("bool",), "logic": ("bool",)}
    if add_type is None:
        return {"compare": ("bool",), "logic": ("bool",)}
    sums = arithmetic([add_type, add_type]) or add_type
    numeric = ("int", "float", "bool") if sums == "int" else (sums, "bool")
    return {"plus": numeric, "arith": numeric, "compare": ("bool",), "logic": ("bool",)}
