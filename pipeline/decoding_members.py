"""Member names after ``.``, for the name mask (:mod:`pipeline.decoding_names`).

E0512 ("`T` has no field or method `f`"). Where the word at the end of an open block is a member
name (spec §2 ``postfix = primary ("." WORD ...)*``: glued ``s.``, after spaces, or on the line
after or before the ``.``, spec §1 L2/L3), :func:`member_rule` types the receiver, the postfix
chain before the ``.`` (a name, a literal, a call, a parenthesized expression, then ``.f``,
``.m(...)``, ``[i]``, ``?``), from the names' types of :func:`pipeline.decoding_typed.typed_names`
(or :func:`pipeline.decoding_records.record_types` where the block declares records), calls as
:func:`pipeline.decoding_typed.expr_type` reads them and methods of
:data:`vox_lang.prelude.METHODS`. Its members (spec §4, §5, §10 U2/U8):

- ``str List Map Option Result Regex Match``: their methods, less those
  :data:`vox_lang.prelude.METHOD_REQUIRES` rules out for known type arguments (``join`` on
  ``List[int]``, ``get_str`` on ``Map[str, int]``);
- ``int float bool Element Set``: none (``Unit`` is not trusted, see :data:`_NO_MEMBERS`);
- prelude records (``ProcessOutput``: ``exit stdout stderr``; ``FileRecord``) and records the
  block declares (:mod:`pipeline.decoding_records`): their fields.

The word then stays a prefix of a member and may end only as one (:func:`member_mask`), and
where the text ends with the receiver itself (``ret s``) or a complete field (``p.stdout``), a
token that glues ``.`` and a word on (BPE vocabularies hold ``.len(``) must write a member too.
Whatever the receiver, a lone ``_`` never ends as a member (spec §1: it is the wildcard, no
``NAME``; the tiny model wrote ``._ {} }`` after comment lines). A receiver whose type is not read
(an import, ``std``, an alias, a sum type, a user type that is no record, a loop variable over
records, a pattern's binding, a number) stays free.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from pipeline.decoding_namespace import declared
from pipeline.decoding_records import declared_records, known_type, record_types
from pipeline.decoding_scan import IDENT_CHARS, TOKENS, scan
from pipeline.decoding_tokens import TokenTable
from pipeline.decoding_typed import UNKNOWN, base, closing_index, expr_type, method_type, show, type_args, typed_names
from vox_lang.lexer import KEYWORDS
from vox_lang.prelude import BUILTIN_TYPES, BUILTINS, CONSTRUCTORS, METHOD_REQUIRES, METHODS, PRELUDE_RECORDS

#: built-in types with no fields and no methods (spec §4, §5)
#: (``Unit`` is left out: a return type split over lines reads as ``Unit`` in
#: :func:`pipeline.decoding_typed.name_types`, so a ``Unit`` read is not trusted)
_NO_MEMBERS: Final = frozenset({"int", "float", "bool", "Element", "Set"})
_BUILTIN_TYPES: Final = frozenset(BUILTIN_TYPES)
_OPERAND_WORDS: Final = frozenset({"true", "false", "None"})
#: the last character of an operand that may be a receiver (a name, a call, an index, ``?``, a string)
_OPERAND_LAST: Final = frozenset(IDENT_CHARS) | frozenset(')]?"')
#: a token that writes ``.`` and a word: the word and what follows it
_LED: Final = re.compile(r"[ \t]*\.([A-Za-z0-9_]+)(.*)\Z", re.S)


def _opener(toks: Sequence[str], at: int) -> int:
    """Index of the token opening the bracket ``toks[at]`` closes (the backward twin of
    :func:`pipeline.decoding_typed.closing_index`); ``-1`` when none does."""
    depth = 0
    for j in range(at, -1, -1):
        if toks[j] in (")", "]", "}"):
            depth += 1
        elif toks[j] in ("(", "[", "{"):
            depth -= 1
            if depth == 0:
                return j
    return -1


def _word(tok: str) -> bool:
    return tok[:1].isalpha() or tok[:1] == "_"


def _closed_string(tok: str) -> bool:
    return len(tok) > 1 and tok[0] == '"' and tok.endswith('"') and not tok.endswith('\\"')


def _chain_start(toks: Sequence[str]) -> int | None:
    """Index where the postfix chain ending ``toks`` starts (its primary), or ``None`` when it is
    not one this reading types (a number, a brace, a call of a call)."""
    j = len(toks) - 1
    while j >= 0:
        t = toks[j]
        if t in (")", "]"):
            k = _opener(toks, j)
            if k < 0:
                return None
            prev = toks[k - 1] if k > 0 else ""
            after_dot = k > 1 and toks[k - 2] == "."
            if t == ")" and _word(prev) and (prev not in KEYWORDS or after_dot):
                j = k - 1  # a call: its callee next
            elif t == "]" and (_word(prev) and (prev not in KEYWORDS or prev in _OPERAND_WORDS or after_dot)
                               or prev in (")", "]", "?") or _closed_string(prev)):
                j = k - 1  # an index: what it indexes next
            elif prev in (")", "]"):
                return None  # a call of a call's result
            else:
                return k  # a parenthesized expression or a list literal
        elif t == "?":
            j -= 1
        elif _word(t):
            if j > 0 and toks[j - 1] == ".":
                j -= 2
            elif t in KEYWORDS and t not in _OPERAND_WORDS:
                return None
            else:
                return j
        elif _closed_string(t):
            return j
        else:
            return None
    return None


def _fields(type_text: str, records: Mapping[str, Mapping[str, str]]) -> Mapping[str, str] | None:
    if type_text in PRELUDE_RECORDS:
        return {n: show(t) or UNKNOWN for n, t in PRELUDE_RECORDS[type_text][1]}
    return records.get(type_text)


def _method_type(receiver: str, name: str) -> str | None:
    """:func:`pipeline.decoding_typed.method_type`, and ``Option[V]`` of ``Map[K, V]`` ``get``."""
    if base(receiver) == "Map" and name == "get":
        parts = type_args(receiver)
        return f"Option[{parts[1]}]" if len(parts) == 2 else None
    return method_type(receiver, name) if base(receiver) in METHODS else None


def receiver_type(toks: Sequence[str], types: Mapping[str, str], returns: Mapping[str, str],
                  records: Mapping[str, Mapping[str, str]], visible: frozenset[str]) -> str | None:
    """The type (source text) of the postfix chain ``toks`` (the tokens before a member's ``.``),
    or ``None`` where it is not read (see the module docstring). ``visible``: names in scope
    besides the prelude (a prelude name they shadow, or a name out of scope, is not read)."""
    start = _chain_start(toks)
    if start is None:
        return None
    t = toks[start]
    i = start + 1
    ty: str | None
    if t.startswith('"'):
        ty = "str"
    elif t in ("(", "["):
        close = closing_index(toks, start)
        ty = "List" if t == "[" else expr_type(toks[start + 1:close], types, returns)
        i = close + 1
    elif i < len(toks) and toks[i] == "(":
        close = closing_index(toks, i)
        if t in types:
            ty = returns.get(t) if types[t] == "fn" else None
        elif t in visible:
            ty = None  # rebound in a way not read
        else:
            ty = show(BUILTINS[t].ret) if t in BUILTINS else CONSTRUCTORS[t][0] if t in CONSTRUCTORS else None
        i = close + 1
    elif t in ("true", "false"):
        ty = "bool"
    else:
        ty = types.get(t) if t in visible else None
    while ty is not None and ty != UNKNOWN and i < len(toks):
        tok = toks[i]
        if tok == "." and i + 1 < len(toks):
            name = toks[i + 1]
            if i + 2 < len(toks) and toks[i + 2] == "(":
                ty = _method_type(ty, name)
                i = closing_index(toks, i + 2) + 1
            else:
                fields = _fields(ty, records)
                ty = fields.get(name) if fields is not None else None
                i += 2
        elif tok == "[":
            parts = type_args(ty)
            ty = "str" if ty == "str" else parts[0] if base(ty) == "List" and len(parts) == 1 \
                else parts[1] if base(ty) == "Map" and len(parts) == 2 else None
            i = closing_index(toks, i) + 1
        elif tok == "?":
            parts = type_args(ty)
            ty = parts[0] if base(ty) in ("Option", "Result") and parts else None
            i += 1
        else:
            return None
    return None if ty == UNKNOWN else ty


def members_of(type_text: str | None, records: Mapping[str, Mapping[str, str]]) -> frozenset[str] | None:
    """The member names of a value of type ``type_text`` (``None``: not known)."""
    head = base(type_text)
    if type_text is None or head is None or head == "Unit":
        return None
    if head in _NO_MEMBERS:
        return frozenset()
    fields = _fields(type_text, records)
    if fields is not None:
        return frozenset(fields)
    if head not in METHODS:
        return None
    args = type_args(type_text)
    out = set()
    for name in METHODS[head]:
        need = [show(t) for t in METHOD_REQUIRES.get((head, name), ())]
        if any(a != n and known_type(a, frozenset(records)) for a, n in zip(args, need)):
            continue  # a known type argument that is not the one the method needs
        out.add(name)
    return frozenset(out)


@dataclass(frozen=True)
class MemberRule:
    """The member rule at the end of a text. ``word``: the word being written (``partial`` so
    far) is a member name, of one of ``members`` (``None``: the receiver's type is not read,
    only a lone ``_`` is refused). ``then``: the members of the operand that ends the text, for
    the tokens that glue ``.`` and a word on at once (``.len(``; ``None``: not read)."""

    partial: str
    members: frozenset[str] | None = None
    word: bool = True
    then: frozenset[str] | None = None


def member_rule(code: str, partial: str, visible: frozenset[str]) -> MemberRule | None:
    """The :class:`MemberRule` for the word ``partial`` ending ``code`` (an open block outside
    strings and comments; ``visible``: names in scope besides the prelude), or ``None`` where
    none holds (most steps return after a look at the text's end)."""
    if partial[:1].isdigit():
        return None
    head = code[:len(code) - len(partial)]
    bare = head.rstrip(" \t\r\n")
    if not bare.endswith(".") and "//" not in bare[bare.rfind("\n") + 1:]:
        then = _operand_members(code, head, visible)
        return MemberRule(partial, word=False, then=then) if then is not None else None
    state = scan(head)
    if state.prev != "." or state.before[:1].isdigit():
        return None  # not a member, or a number being written (`1.5`)
    toks = [t for t in TOKENS.findall(head, state.stmt_start) if t != "\n" and not t.startswith("//")]
    if len(toks) < 2 or toks[-1] != ".":
        return MemberRule(partial)
    members = _members(head, toks[:-1], visible)
    # a complete member (a field) may be followed by `.` and one of its own members
    then = _members(code, [*toks, partial], visible) if members is not None and partial in members else None
    return MemberRule(partial, members, then=then)


def _members(text: str, receiver: Sequence[str], visible: frozenset[str]) -> frozenset[str] | None:
    """:func:`members_of` the chain ``receiver`` (tokens) ending ``text``, or ``None``."""
    records = declared_records(text[:text.rfind("\n") + 1]) if "type" in text else {}
    if _BUILTIN_TYPES & declared(text).types:
        return None  # a built-in type name the program redeclares
    types, returns = record_types(text, frozenset(records)) if records else typed_names(text)
    return members_of(receiver_type(receiver, types, returns, records, visible), records)


def _operand_members(code: str, head: str, visible: frozenset[str]) -> frozenset[str] | None:
    """The members of the operand ending ``code`` (then maybe spaces) where its type is read
    (``head``: ``code`` less the word being written, whose scan the position already made)."""
    end = code.rstrip(" \t")
    last = end[-1:]
    if not last or last not in _OPERAND_LAST:
        return None
    if last in IDENT_CHARS:
        at = len(end) - 1
        while at >= 0 and end[at] in IDENT_CHARS:
            at -= 1
        word = end[at + 1:]
        while at >= 0 and end[at] in " \t":
            at -= 1
        if word[0].isdigit() or word not in visible and (at < 0 or end[at] != "."):
            return None  # a number, or a name whose type is not read (not in scope, or being written)
    toks = [t for t in TOKENS.findall(end, scan(head).stmt_start) if t != "\n" and not t.startswith("//")]
    return _members(end, toks, visible) if toks else None


def member_mask(table: TokenTable, rule: MemberRule, width: int) -> Any | None:
    """Bool mask ``[width]`` for :func:`member_rule`'s ``rule`` (each part cached in the table
    by members, partial and width); ``None`` when it refuses nothing."""
    parts = []
    if rule.word:
        parts.append(_word_mask(table, rule.partial, rule.members, width))
    if rule.then is not None:
        then = rule.then
        parts.append(table.cached(("member_led", f"{','.join(sorted(then))}:{width}"),
                                  lambda: _led_mask(table, then, width)))
    mask = None
    for part in parts:
        if part is not None:
            mask = part if mask is None else mask & part
    return mask


def _word_mask(table: TokenTable, partial: str, members: frozenset[str] | None, width: int) -> Any | None:
    """Bool mask ``[width]`` keeping a member name a prefix of one of ``members`` (``None``:
    only refusing a lone ``_``), ending it only as one."""
    if members is None:
        if partial not in ("", "_"):
            return None

        def lone() -> Any:
            mask = np.ones(max(width, len(table.texts)), dtype=np.bool_)
            if partial:
                mask[table.ids("terminators")] = False  # `_` must go on
            else:
                mask[list(table.lead_ends.get("_", ())) + list(table.ws_lead_ends.get("_", ()))] = False
            return mask[:width]

        return table.cached(("member_", f"{partial}:{width}"), lone)
    known = members

    def build() -> Any:
        mask = np.ones(max(width, len(table.texts)), dtype=np.bool_)
        mask[table.ids("glued")] = False
        if not partial:
            mask[table.ids("ws_ident")] = False
        elif partial not in known:
            mask[table.ids("terminators")] = False  # the word must go on until it names a member
        on: list[int] = []
        for name in known:
            if not name.startswith(partial) or name == partial:
                continue
            rest = name[len(partial):]
            for k in range(1, len(rest) + 1):
                on += table.lead_only.get(rest[:k], ())
            on += table.lead_ends.get(rest, ())
            if not partial:
                for k in range(1, len(name) + 1):
                    on += table.ws_lead_only.get(name[:k], ())
                on += table.ws_lead_ends.get(name, ())
        mask[on] = True
        return mask[:width]

    return table.cached(("member", f"{partial}:{','.join(sorted(known))}:{width}"), build)


def _led_mask(table: TokenTable, members: frozenset[str], width: int) -> Any:
    """Bool mask ``[width]`` refusing the tokens that write ``.`` and a word that is no member
    (one that ends in the token) or starts none (one that goes on)."""
    mask = np.ones(max(width, len(table.texts)), dtype=np.bool_)
    for i in table.member_led:
        m = _LED.match(table.texts[i])
        if m is not None and m.group(1):
            word, rest = m.group(1), m.group(2)
            mask[i] = word in members if rest else any(n.startswith(word) for n in members)
    return mask[:width]
