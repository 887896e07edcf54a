"""The bracket and scope scan of an open ```vox block, for the name mask
(:mod:`pipeline.decoding_position` classifies words with it; :mod:`pipeline.decoding_names` reads
the names in scope).

Which ``{`` a word stands in: a brace after ``match ...`` holds patterns up to each arm's
``->``; a brace right after a call's ``)`` (outside an ``if``/``while``/``for``/``match`` head)
holds a view call's children, expressions; a brace after ``=``, ``:``, ``(``, ``,``, ``[``,
``ret`` or ``NAME`` in an expression is a record (field names are free); any other brace (after
``)``, ``]``, ``else``, ``->``, a header line such as ``if``/``while``/``for``/``fn``/``actor``/
``routes``) is a block. The scan is lexical (strings and comments skipped) and over-approximates
in rare spellings; the compiler still gates.

**Scopes.** The same scan follows declarations (spec §3): items, variants, imports and top-level
``let``s are module names; parameters, generics and loop variables belong to the ``{`` their
header opens, a ``let`` to its enclosing brace from the next statement on, a match arm's
bindings to the ``match``. A name declared inside a brace that has closed is out of scope, and a
record type's fields, comments and strings declare nothing (:attr:`Scan.visible`). Before this,
any earlier declaration anywhere counted: 73 of the 129 undefined names in the completed blocks
of the default eval were such out-of-scope names (a finished function's parameters, fields), and
17 came from a comment (``// n: List[str]``).

**Logical lines.** Layout drops a newline inside ``(``/``[`` (L1), after an L2 literal and before
an L3 literal, so one statement or header may span lines (``import std\n.time``,
``for p,\n i in ps {``, ``type T = |\n A``). The scan keeps where the current logical line
starts (:attr:`Scan.stmt_start`; a newline after ``{`` starts one too: a block's first
statement), and the rules that read "the line" read that one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache
from typing import Final

from vox_lang.layout import L2_AFTER, L3_BEFORE
from vox_lang.lexer import KEYWORDS

#: the lexical tokens the scan reads: strings (possibly unclosed), comments, decorators, words,
#: numbers, two-character operators, newlines, any other character
TOKENS: Final = re.compile(
    r'"(?:[^"\\\n]|\\.)*"?|//[^\n]*|@[A-Za-z_][\w.]*|[A-Za-z_]\w*|\d+(?:\.\d+)?|'
    r"==|!=|<=|>=|\+=|-=|\*=|/=|->|=>|\|>|\n|\S"
)
_BLOCK_HEADS: Final = frozenset({"if", "while", "for", "else", "fn", "workflow", "activity", "on", "actor",
                                 "routes", "pub", "async", "extern"})
_RECORD_AFTER: Final = frozenset({"=", ":", "(", ",", "[", "ret", "return", "|>", "+", "==", "!="})
IDENT_CHARS: Final = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"
GENERIC_DECL: Final = re.compile(r"\bfn\s+[A-Za-z_]\w*\s*<[^>]*$")
_GENERIC_HEAD: Final = re.compile(r"\bfn\s+[A-Za-z_]\w*\s*<[^<>()]*>\s*\Z")
_DECL_HEADS: Final = frozenset({"fn", "on", "workflow", "activity", "|"})
#: words after which a name declares an item (or an actor's handler)
_ITEM_WORDS: Final = frozenset({"fn", "workflow", "activity", "type", "actor", "on"})
#: words that start a header (whose parameters, generics or loop variables are then pending)
_HEADER_WORDS: Final = _ITEM_WORDS | frozenset({"for", "import", "routes", "let"})
#: a reserved word whose expression (``expr_nb``) ends at the ``{`` that opens its body
_HEAD_EXPR: Final = re.compile(r"\b(?:if|while|for|match)\b")
#: a line that ends where a ``for``'s loop variables are being written
_FOR_BINDING: Final = re.compile(r"\bfor\s+(?:[A-Za-z_]\w*\s*,\s*)?\Z")
#: open brackets inside which a newline is dropped (L1)
L1_FRAMES: Final = frozenset({"call", "decl", "paren", "index"})


@dataclass(frozen=True)
class Frame:
    """One open bracket of the block: ``kind`` is ``call`` (``NAME(``: arguments; ``callee`` is
    NAME, ``""`` for a method ``x.NAME(``), ``decl`` (``fn f(``, ``on h(``, ``| V(``, ``fn(``:
    parameters, fields), ``paren`` (a parenthesized expression), ``index`` (``[``), ``block``,
    ``record``, ``brace`` (a block or a record literal, not decided yet: :func:`_decide`),
    ``match``, ``actor`` or ``children`` (a ``{``); ``names``: what is declared in it
    (:attr:`Scan.visible`); ``arm`` is the offset where the current match arm starts, and for a
    ``{``, a call's or a declaration's ``(`` the offset right after it; ``head``: an undecided
    brace's first token."""

    kind: str
    arm: int = 0
    callee: str = ""
    names: frozenset[str] = frozenset()  # declared in this bracket: lets, params, loop and arm variables
    head: str = ""


@dataclass(frozen=True)
class Scan:
    """The bracket scan of a text: open frames (outermost first), whether a ``match`` waits for
    its ``{``, the last two significant tokens (strings count, comments do not), and the names in
    scope (:attr:`visible`).

    ``top``: names declared at top level (items, variants, imports, top-level ``let``s; spec §3:
    module scope). ``pending``: parameters and generics of a header whose ``{`` has not opened
    yet (they then belong to that frame); ``loop``: a ``for``'s variables, likewise, but not
    visible before the ``{`` (``for v in v`` is E0401). ``lets``: ``(name, depth)`` of ``let``
    statements not finished yet: a ``let`` binds from the next statement on (spec §3), so
    ``let total = total + a`` does not see its own ``total``. ``params``: every parameter
    declared so far; in a call's parentheses they may stand as named arguments (``g(total=a)``).
    """

    stack: tuple[Frame, ...] = ()
    pending_match: bool = False
    prev: str = ""
    before: str = ""
    top: frozenset[str] = frozenset()
    pending: frozenset[str] = frozenset()
    lets: tuple[tuple[str, int], ...] = ()
    params: frozenset[str] = frozenset()
    loop: frozenset[str] = frozenset()
    closed_callee: str = ""  # when ``prev`` is ``)`` closing a call ``NAME(...)``: that NAME
    stmt_start: int = 0  # offset where the logical line (the statement or header) being written starts
    revert_to: int = -1  # after a newline that may yet be dropped (L3: the next token decides), the previous start
    closed_kind: str = ""  # when ``prev`` closed a bracket: that frame's kind (a ``{`` after ``NAME(...)`` reads it)
    #: ``(offset, scan of the text up to it)``: where a longer text that extends this one may be
    #: scanned on from: the start of the first token that more text could still change (the
    #: regex looks at most one character past a token), else the end. ``None``: from the last
    #: line start.
    resume: tuple[int, Scan] | None = field(default=None, compare=False, repr=False)

    @cached_property
    def values(self) -> frozenset[str]:
        """Names a value may resolve to here (besides the prelude): module names, those of every
        open frame, and a header's pending ones. Names declared inside a closed ``{...}`` (a
        finished function's parameters and ``let``s, a record type's fields) are not visible."""
        out = self.top | self.pending
        for frame in self.stack:
            if frame.kind != "actor":  # an actor's handlers are no values (spec §4: only `h.m(...)` calls them)
                out |= frame.names
        return out

    @cached_property
    def visible(self) -> frozenset[str]:
        """Names a word written here may be (besides the prelude): :attr:`values`, and in a call's
        parentheses every parameter declared so far, as a named argument's name (``g(total=a)``;
        one that is not also a value must be followed by ``=``: :func:`named_only`). Computed once
        per scan (several rules ask at each decoding step)."""
        if self.stack and self.stack[-1].kind == "call":
            return self.values | self.params
        return self.values


def _brace_kind(prev: str, line_head: str, pending_match: bool, closed: str = "") -> str:
    """``closed``: the kind of the frame the ``)`` before this brace closed."""
    if pending_match:
        return "match"
    if prev == ")" and closed == "call" and not _HEAD_EXPR.search(line_head):
        return "children"  # a view call's children: expressions, one per line (spec §2)
    if prev in (")", "]", "else"):
        return "block"
    if prev in ("->", "{") or not prev:
        return "brace"  # an arm's value or a statement: a block or a record literal (_decide)
    first = line_head.split(None, 1)[0] if line_head.strip() else ""
    if first == "actor":
        return "actor"  # its body holds handlers only
    if first in _BLOCK_HEADS or first == "}" or first.startswith("@"):
        return "block"
    if prev in _RECORD_AFTER or re.match(r"[A-Za-z_]\w*$", prev):
        return "brace"  # a record literal, a record type, or a block of an `if`/lambda used as a value
    return "block"


def _decide(frame: Frame, tok: str) -> Frame:
    """An undecided ``brace`` frame after its next significant token ``tok``: a record when its
    first two tokens are a word or string and ``:`` (spec §2: ``rec_start = "{" NL* (WORD /
    STRING) ":"``; ``arm = pattern "->" (!rec_start block / expr)``), else a block. Until then it
    stays free, like a record, so its first word is never restricted; from its second statement
    on, a block's words must resolve (before this, every arm body ``None -> { ... }`` and the body
    of an ``if`` used as a value were free)."""
    if not frame.head:
        if tok[0].isalpha() or tok[0] == "_" or tok[0] == '"':
            return replace(frame, head=tok)
        return replace(frame, kind="block")
    return replace(frame, kind="record" if tok == ":" else "block", head="")


def _scan(code: str, start: int, state: Scan) -> Scan:
    """Continue ``state`` (the scan of ``code[:start]``, ``start`` a line start) over the rest."""
    stack = list(state.stack)
    pending_match, prev, before = state.pending_match, state.prev, state.before
    decl = _Declarations(state.top, set(state.pending), list(state.lets), state.params, set(state.loop))
    line_start, revert, closed, callee = state.stmt_start, state.revert_to, state.closed_kind, state.closed_callee
    end = len(code)
    resume: tuple[int, Scan] | None = None

    def snapshot(called: str) -> Scan:
        return Scan(tuple(stack), pending_match, prev, before, decl.top, frozenset(decl.pending), tuple(decl.lets),
                    decl.params, frozenset(decl.loop), called, line_start, revert, closed)

    for m in TOKENS.finditer(code, start):
        tok = m.group(0)
        if resume is None and m.end() >= end - 1:
            # a token a longer text may change: the last one, or one a character before the end
            # (that character may join it: `1.` + `5`, a string's `\` + `n`): resume before it
            resume = (m.start(), snapshot(callee))
        if tok == "\n":
            if stack and stack[-1].kind == "match":
                stack[-1] = replace(stack[-1], arm=m.end())
            decl.newline(stack, prev)
            if not (stack and stack[-1].kind in L1_FRAMES) and (prev not in L2_AFTER or prev == "{"):
                revert = line_start if revert < 0 else revert
                line_start = m.end()  # a new logical line, unless the next token is an L3 literal
                closed = ""  # a `{` there starts a statement, not the children of a call before the break
            continue
        if tok.startswith("//"):
            continue
        if revert >= 0:
            line_start = revert if tok in L3_BEFORE else line_start
            revert = -1
        if stack and stack[-1].kind == "brace":
            stack[-1] = _decide(stack[-1], tok)
        if tok == "match":
            pending_match = True
        elif tok == "(":
            named = bool(re.match(r"[A-Za-z_]\w*$", prev)) and prev not in KEYWORDS
            generic = prev == ">" and _GENERIC_HEAD.search(code, 0, m.start())
            if prev == "fn" or named and before in _DECL_HEADS or generic:
                stack.append(Frame("decl", m.end()))
            elif named or prev == ")":
                stack.append(Frame("call", m.end(), callee=prev if named and before != "." else ""))  # not a method
            else:
                stack.append(Frame("paren"))
        elif tok == "[":
            stack.append(Frame("index"))
        elif tok == "{":
            kind = _brace_kind(prev, code[line_start:m.start()], pending_match, closed)
            pending_match = False
            stack.append(Frame(kind, m.end(), names=frozenset(decl.pending | decl.loop)))
            decl.pending.clear()
            decl.loop.clear()
        elif tok in (")", "]", "}"):
            if stack:
                frame = stack.pop()
                closed, callee = frame.kind, frame.callee
            else:
                closed, callee = "", ""  # a closer with nothing open closes no call
            decl.lets = [(name, depth) for name, depth in decl.lets if depth <= len(stack)]
        elif tok == "," and stack and stack[-1].kind == "match":
            stack[-1] = replace(stack[-1], arm=m.end())
        elif tok[0].isalpha() or tok[0] == "_":
            decl.word(tok, prev, before, code[line_start:m.start()], stack, code, m.start())
        elif tok == ":" and stack and stack[-1].kind == "decl" and _is_name(prev):
            decl.pending.add(prev)  # a parameter (or a variant's field: dropped at the next header)
            decl.params |= {prev}
        prev, before = tok, prev
    out = snapshot(callee if prev == ")" else "")
    return replace(out, resume=resume if resume is not None else (end, out))


def _is_name(tok: str) -> bool:
    return bool(tok) and (tok[0].isalpha() or tok[0] == "_") and tok not in KEYWORDS


class _Declarations:
    """What :func:`_scan` learns about declarations, token by token (spec §3 scopes, lexically)."""

    def __init__(self, top: frozenset[str], pending: set[str], lets: list[tuple[str, int]],
                 params: frozenset[str], loop: set[str]) -> None:
        self.top = top
        self.pending = pending
        self.lets = lets
        self.params = params
        self.loop = loop

    def _declare(self, name: str, stack: list[Frame]) -> None:
        if not stack:
            self.top |= {name}
        else:
            stack[-1] = replace(stack[-1], names=stack[-1].names | {name})

    def word(self, tok: str, prev: str, before: str, line: str, stack: list[Frame], code: str, at: int) -> None:
        """A word token: declares it when its left context says so."""
        if tok in _HEADER_WORDS and not (stack and stack[-1].kind in L1_FRAMES):
            self.pending.clear()  # a new header: what an earlier one left pending (a variant's fields) ends
            self.loop.clear()
        if tok in KEYWORDS or tok == "_":
            return
        if not stack and line.lstrip().startswith("import "):
            self.top |= {tok}  # over-approximates: every segment (the last one or the alias binds)
            return
        if prev == ".":
            return
        if prev in _ITEM_WORDS or prev == "|":
            self._declare(tok, stack)  # an item (hoisted when at top level), a handler, a variant
        elif prev == "let" or (prev == "mut" and before == "let"):
            self.lets.append((tok, len(stack)))
        elif _FOR_BINDING.search(line):
            self.loop.add(tok)  # loop variables, bound in the loop's block
        elif GENERIC_DECL.search(line):
            self.pending.add(tok)  # fn f<T, U>: generics, seen by the signature and the body
        elif tok[0].islower() and in_pattern(code, stack, at):
            self._declare_in_match(tok, stack)  # a binding in a match arm's pattern

    @staticmethod
    def _declare_in_match(name: str, stack: list[Frame]) -> None:
        for i in range(len(stack) - 1, -1, -1):
            if stack[i].kind == "match":
                stack[i] = replace(stack[i], names=stack[i].names | {name})
                return

    def newline(self, stack: list[Frame], prev: str) -> None:
        """A newline: it ends a statement unless layout drops it (inside ``(``/``[``: L1; after
        an L2 literal: L2), so the ``let``s it finishes bind from here on. (A newline before an L3
        literal is dropped too; binding there early over-approximates, which never blocks.)"""
        if (stack and stack[-1].kind in L1_FRAMES) or prev in L2_AFTER:
            return
        keep = []
        for name, depth in self.lets:
            if depth == len(stack):
                self._declare(name, stack)
            elif depth < len(stack):
                keep.append((name, depth))
        self.lets = keep


@lru_cache(maxsize=512)
def _scan_lines(prefix: str) -> Scan:
    """:func:`_scan` of ``prefix`` (whole lines: ``""`` or ending in a newline), line by line,
    each line's result cached: while a block is decoded, only its last line is ever re-read."""
    if not prefix:
        return Scan()
    cut = prefix.rfind("\n", 0, len(prefix) - 1) + 1
    return _scan(prefix, cut, _scan_lines(prefix[:cut]))


#: recent :func:`scan` results by text (cleared when full: a miss only costs a rescan)
_SCANS: dict[str, Scan] = {}
_SCANS_MAX: Final = 4096
#: how far back (characters) :func:`scan` looks for a scanned shorter text to go on from: a
#: decoding step adds one token (rarely over 16 characters)
_RESUME_BACK: Final = 24


def scan(code: str) -> Scan:
    """The bracket scan of ``code``. Incremental, as decoding is: when a text up to
    :data:`_RESUME_BACK` characters shorter that this one extends was scanned (the previous
    step's text, or it without the word being written), the scan goes on from that scan's
    :attr:`Scan.resume` point, re-reading one or two tokens; else finished lines come from a
    line cache and the last line is re-read. Cached: at each step the position, scope and suffix
    rules each ask for the scan of the same text."""
    hit = _SCANS.get(code)
    if hit is not None:
        return hit
    cut = code.rfind("\n") + 1
    out: Scan | None = None
    for back in range(1, min(_RESUME_BACK, len(code) - cut) + 1):
        prior = _SCANS.get(code[:-back])
        if prior is not None and prior.resume is not None:
            at, state = prior.resume
            out = _scan(code, at, state)
            break
    if out is None:
        out = _scan(code, cut, _scan_lines(code[:cut]))
    if len(_SCANS) >= _SCANS_MAX:
        _SCANS.clear()
    _SCANS[code] = out
    return out


def top_level_tokens(code: str, start: int) -> Iterator[str]:
    """The tokens of ``code[start:]`` (:data:`TOKENS`: line breaks and comments included) outside
    every bracket opened after ``start``; the brackets themselves are left out, and so is what
    follows a closer of a bracket opened before ``start``."""
    depth = 0
    for tok in TOKENS.findall(code, start):
        if tok in ("(", "[", "{"):
            depth += 1
        elif tok in (")", "]", "}"):
            depth -= 1
        elif depth == 0:
            yield tok


def in_pattern(code: str, stack: list[Frame], end: int | None = None) -> bool:
    """Whether ``code[:end]`` ends in a match arm's pattern (before its ``->``)."""
    for frame in reversed(stack):
        if frame.kind == "match":
            return code.find("->", frame.arm, len(code) if end is None else end) < 0
        if frame.kind != "call":
            return False
    return False


def local_names(code: str) -> frozenset[str]:
    """The names the open brackets at the end of ``code`` declare (parameters, ``let``s, loop and
    arm variables of the bodies being written; a word being written there is left out; an
    actor's handler names are not values): the subset of :func:`visible_names` that is the
    program's own values, not its items."""
    return frozenset().union(*(f.names for f in scan(code[:len(code.rstrip(IDENT_CHARS))]).stack
                               if f.kind != "actor"))


def named_only(code: str, word: str) -> bool:
    """Whether ``word``, written at the end of ``code`` as a call's argument, can only be a named
    argument's name: a parameter of a function declared so far (:attr:`Scan.params`) that is no
    value here. A finished function's parameter passed as a value was an undefined name (E0401)
    in answers of the default model, e.g. ``print(backup_name(path))`` at top level."""
    head = code[:len(code) - len(word)]
    state = scan(head)
    return bool(state.stack) and state.stack[-1].kind == "call" and word in state.params \
        and word not in state.values and not in_pattern(head, list(state.stack))  # `Circle(r) ->` binds r


def visible_names(code: str) -> frozenset[str]:
    """Names a use at the end of ``code`` (an open ```vox block; a word being written there is
    left out) may resolve to, besides the prelude: :attr:`Scan.visible`."""
    return scan(code[:len(code.rstrip(IDENT_CHARS))]).visible


