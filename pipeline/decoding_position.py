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

Which ``{`` a word stands in is read with a small bracket scan (:func:`frames`): a brace after
``match ...`` holds patterns up to each arm's ``->``; a brace after ``=``, ``:``, ``(``, ``,``,
``[``, ``ret`` or ``NAME`` in an expression is a record (field names are free); any other brace
(after ``)``, ``]``, ``else``, ``->``, a header line such as ``if``/``while``/``for``/``fn``/
``actor``/``routes``) is a block. The scan is lexical (strings and comments skipped) and
over-approximates in rare spellings; the compiler still gates.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Final

from vox_lang.lexer import KEYWORDS
from vox_lang.prelude import VIEW_ELEMENTS

USE: Final = "use"
STMT: Final = "stmt"
TOP: Final = "top"
FOLLOW: Final = "follow"
NUMBER: Final = "number"
FREE: Final = ""

TOKENS: Final = re.compile(
    r'"(?:[^"\\\n]|\\.)*"?|//[^\n]*|@[A-Za-z_][\w.]*|[A-Za-z_]\w*|\d+(?:\.\d+)?|'
    r"==|!=|<=|>=|\+=|-=|\*=|/=|->|=>|\|>|\n|\S"
)
#: tokens after which an identifier is a use (expression or type) and must resolve
USE_AFTER: Final = frozenset({
    "=", "+=", "-=", "*=", "/=", "+", "-", "*", "/", "%", "==", "!=", "<", ">", "<=", ">=", "and", "or",
    "not", "ret", "return", "if", "while", "in", "to", ":", "[", "->", "|>", "match",
})
#: reserved words that may follow an operand on its line (spec §2: binary ``and``/``or``, ``to``
#: of a signature or route, ``in`` of a ``for``, ``as`` of an import, ``else`` after a block)
FOLLOWERS: Final = frozenset({"and", "or", "to", "in", "as", "else"})
_OPERAND_WORDS: Final = frozenset({"true", "false"})
_BLOCK_HEADS: Final = frozenset({"if", "while", "for", "else", "fn", "workflow", "activity", "on", "actor",
                                 "routes", "pub", "async", "extern"})
_RECORD_AFTER: Final = frozenset({"=", ":", "(", ",", "[", "ret", "return", "|>", "+", "==", "!="})
_IDENT_CHARS: Final = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"
_GENERIC_DECL: Final = re.compile(r"\bfn\s+[A-Za-z_]\w*\s*<[^>]*$")
_GENERIC_HEAD: Final = re.compile(r"\bfn\s+[A-Za-z_]\w*\s*<[^<>()]*>\s*\Z")
_DECL_HEADS: Final = frozenset({"fn", "on", "workflow", "activity", "|"})
_DECO_TAIL: Final = re.compile(r"@[\w.]*\Z")


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


@dataclass(frozen=True)
class Frame:
    """One open bracket of the block: ``kind`` is ``call`` (``NAME(``: arguments; ``callee`` is
    NAME), ``decl`` (``fn f(``, ``on h(``, ``| V(``, ``fn(``: parameters, fields), ``paren`` (a
    parenthesized expression), ``index`` (``[``), ``block``, ``record`` or ``match`` (a ``{``);
    ``arm`` is the offset where the current match arm starts."""

    kind: str
    arm: int = 0
    callee: str = ""


@dataclass(frozen=True)
class Scan:
    """The bracket scan of a text: open frames (outermost first), whether a ``match`` waits for
    its ``{``, and the last two significant tokens (strings count, comments do not)."""

    stack: tuple[Frame, ...] = ()
    pending_match: bool = False
    prev: str = ""
    before: str = ""


def _brace_kind(prev: str, line_head: str, pending_match: bool) -> str:
    if pending_match:
        return "match"
    if prev in (")", "]", "else"):
        return "block"
    if prev in ("->", "{") or not prev:
        return "record"  # an arm's value or a statement: a block or a record literal (free: never blocks)
    first = line_head.split(None, 1)[0] if line_head.strip() else ""
    if first in _BLOCK_HEADS or first == "}" or first.startswith("@"):
        return "block"
    if prev in _RECORD_AFTER or re.match(r"[A-Za-z_]\w*$", prev):
        return "record"
    return "block"


def _scan(code: str, start: int, state: Scan) -> Scan:
    """Continue ``state`` (the scan of ``code[:start]``, ``start`` a line start) over the rest."""
    stack = list(state.stack)
    pending_match, prev, before = state.pending_match, state.prev, state.before
    line_start = start
    for m in TOKENS.finditer(code, start):
        tok = m.group(0)
        if tok == "\n":
            line_start = m.end()
            if stack and stack[-1].kind == "match":
                stack[-1] = replace(stack[-1], arm=m.end())
            continue
        if tok.startswith("//"):
            continue
        if tok == "match":
            pending_match = True
        elif tok == "(":
            named = bool(re.match(r"[A-Za-z_]\w*$", prev)) and prev not in KEYWORDS
            generic = prev == ">" and _GENERIC_HEAD.search(code, 0, m.start())
            if prev == "fn" or named and before in _DECL_HEADS or generic:
                stack.append(Frame("decl"))
            elif named or prev == ")":
                stack.append(Frame("call", callee=prev if named else ""))
            else:
                stack.append(Frame("paren"))
        elif tok == "[":
            stack.append(Frame("index"))
        elif tok == "{":
            kind = _brace_kind(prev, code[line_start:m.start()], pending_match)
            pending_match = False
            stack.append(Frame(kind, m.end()))
        elif tok in (")", "]", "}"):
            if stack:
                stack.pop()
        elif tok == "," and stack and stack[-1].kind == "match":
            stack[-1] = replace(stack[-1], arm=m.end())
        prev, before = tok, prev
    return Scan(tuple(stack), pending_match, prev, before)


@lru_cache(maxsize=512)
def _scan_lines(prefix: str) -> Scan:
    """:func:`_scan` of ``prefix`` (whole lines: ``""`` or ending in a newline), line by line,
    each line's result cached: while a block is decoded, only its last line is ever re-read."""
    if not prefix:
        return Scan()
    cut = prefix.rfind("\n", 0, len(prefix) - 1) + 1
    return _scan(prefix, cut, _scan_lines(prefix[:cut]))


def scan(code: str) -> Scan:
    """The bracket scan of ``code`` (finished lines from the cache, the last line re-read)."""
    cut = code.rfind("\n") + 1
    return _scan(code, cut, _scan_lines(code[:cut]))


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


def _in_pattern(code: str, stack: list[Frame]) -> bool:
    """Whether the end of ``code`` is in a match arm's pattern (before its ``->``)."""
    for frame in reversed(stack):
        if frame.kind == "match":
            return "->" not in code[frame.arm:]
        if frame.kind != "call":
            return False
    return False


def _after_open(frame: Frame | None) -> str:
    """The kind of a word right after ``(``, ``,`` or a line start inside ``frame``."""
    if frame is None or frame.kind == "block":
        return STMT if frame is not None else TOP
    if frame.kind in ("decl", "record", "match"):
        return FREE
    if frame.kind == "call":
        return FREE if frame.callee in VIEW_ELEMENTS else USE
    return USE  # paren, index


def _word_kind(code: str, line_tokens: list[str], state: Scan) -> str:
    """The kind of a word starting at the end of ``code`` (``line_tokens``: the significant
    tokens of its line; ``state``: the :func:`scan` of ``code``)."""
    last = state.prev
    if line_tokens and _operand_end(line_tokens[-1], line_tokens[-2] if len(line_tokens) > 1 else state.before):
        return FOLLOW
    stack = list(state.stack)
    inner = stack[-1] if stack else None
    if not line_tokens and inner is not None and inner.kind in ("call", "decl", "paren", "index") \
            and _operand_end(last, state.before):
        return FOLLOW  # L1: inside ( [ a newline is dropped, so this word stands right after an operand
    if last == ".":
        return FREE  # a member name, also on the line after the `.` (L2)
    generic_decl = bool(_GENERIC_DECL.search(code, code.rfind("\n") + 1))
    if last in USE_AFTER and not (last == "<" and generic_decl):
        return USE
    if line_tokens and line_tokens[0] == "for" and "in" not in line_tokens:
        return FREE  # `for k, v`: loop variables being bound
    if generic_decl:
        return FREE
    if _in_pattern(code, stack):
        return FREE
    statement_start = not line_tokens or line_tokens[-1] == "{"
    bracketed = inner is not None and inner.kind in ("call", "decl", "paren", "index")
    if last in ("(", ",") or (statement_start and bracketed):
        return _after_open(inner)
    if statement_start:
        if inner is None:
            return TOP
        return STMT if inner.kind == "block" else FREE
    return FREE


def position(code: str) -> Position:
    """Classify the end of ``code`` (the text of an open ```vox block) for the name mask."""
    partial = code[len(code.rstrip(_IDENT_CHARS)):]
    head = code[: len(code) - len(partial)]
    cut = head.rfind("\n") + 1
    line = TOKENS.findall(head, cut)
    last = line[-1] if line else ""
    in_comment = last.startswith("//")
    in_string = last.startswith('"') and (len(last) == 1 or not last.endswith('"') or last.endswith('\\"'))
    if in_comment or in_string or _DECO_TAIL.search(head):
        return Position(partial, FREE, FREE)
    if partial[:1].isdigit():
        return Position(partial, NUMBER if partial.isdigit() else FREE, FOLLOW)
    line_tokens = [t for t in line if not t.startswith("//")]
    state = scan(head)
    kind = _word_kind(head, line_tokens, state)
    if not partial:
        return Position("", kind, kind)
    if partial in KEYWORDS and partial not in _OPERAND_WORDS and state.prev != ".":
        fresh = USE if partial in USE_AFTER else FREE
    else:
        fresh = FOLLOW
    return Position(partial, kind, fresh)
