"""Where the end of an open ```vox block stands, for the name mask (:mod:`pipeline.decoding_names`).

:func:`position` reads the text of the block so far and says, for the identifier being written
(``partial``) and for one the next token may start after whitespace, which **kind** of word it is:

- :data:`USE` — an expression or type: it must stay a prefix of a name that resolves. After an
  operator, ``=``, ``ret``, ``if``, ``while``, ``in``, ``to``, ``:``, ``->``, ``|>``, ``match``
  (:data:`USE_AFTER`); inside ``[...]`` (list elements, indexes, type arguments); in a
  parenthesized expression; and at a statement start inside a block or at top level (every
  statement there either starts with a reserved word, which resolves, or uses a name: a call,
  an assignment, an expression).
- :data:`FOLLOW` — a word on the same line right after an operand (a name, number, string,
  ``)``, ``]``, ``}``, ``?``): in Vox only ``and``, ``or``, ``to``, ``in``, ``as`` or ``else`` can
  stand there (:data:`FOLLOWERS`). Without this the grammar mask lets ``ret a > 1 andx`` through:
  llguidance's lexer only tries the lexemes the parser allows, and where no NAME is allowed it
  reads ``andx`` as ``and x``, while the front end reads one (undefined) name. The default run's
  constrained eval had such glued words in many cut blocks (``andidateHome and actoring``).
- :data:`FREE` — a declaration or anything the left context cannot decide: parameters, fields,
  named arguments, variables being bound, generics, match patterns, decorators, strings, comments.

**Deferred words.** In a call's or declaration's parentheses (after ``NAME(``, ``fn(`` or a
``,`` inside them) a word is an argument (a use), a named argument (``name=``), a parameter or a
variant field (``name:``). The kind is known only when the word ends, so :attr:`Position.deferred`
carries the word: if it does not resolve, the mask lets it end only with ``=`` or ``:``. Both
are grammatical in those parentheses (``arg: word "=" expr``, ``param: NAME ":" type``), so the
rule never leaves the model writing an identifier that can never end.

Which ``{`` a word stands in is read with a small bracket scan (:func:`frames`): a brace after
``match ...`` holds patterns up to each arm's ``->``; a brace after ``=``, ``:``, ``(``, ``,``,
``[``, ``ret`` or ``NAME`` in an expression is a record (field names are free); any other brace
(after ``)``, ``]``, ``else``, ``->``, a header line such as ``if``/``while``/``for``/``fn``/
``actor``/``routes``) is a block. The scan is lexical (strings and comments skipped) and
over-approximates in rare spellings; the compiler still gates.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from vox_lang.lexer import KEYWORDS

USE: Final = "use"
FOLLOW: Final = "follow"
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
_DECO_TAIL: Final = re.compile(r"@[\w.]*\Z")


@dataclass(frozen=True)
class Position:
    """Where the end of a partial block stands, for the name mask.

    Attributes:
        partial: identifier characters already written at the end (``""`` if none).
        cont: kind (:data:`USE`, :data:`FOLLOW`, :data:`FREE`) of the identifier ``partial``
            belongs to, or of one glued on (no whitespace) when ``partial`` is empty.
        fresh: kind of an identifier the next token starts after whitespace.
        deferred: a word (``partial``, or the word just before trailing spaces) whose kind is
            decided by what follows it: when it does not resolve it may end only with ``=`` or
            ``:`` (``""``: no such word).
    """

    partial: str
    cont: str
    fresh: str
    deferred: str = ""

    @property
    def continues_use(self) -> bool:
        """The identifier ``partial`` belongs to must resolve."""
        return self.cont == USE

    @property
    def fresh_use(self) -> bool:
        """An identifier started after whitespace must resolve."""
        return self.fresh == USE


@dataclass
class Frame:
    """One open bracket of the block: ``kind`` is ``call`` (``NAME(``, ``fn(``: arguments,
    parameters, fields), ``paren`` (a parenthesized expression), ``index`` (``[``), ``block``,
    ``record`` or ``match`` (a ``{``); ``arm`` is the offset where the current match arm starts."""

    kind: str
    arm: int = 0


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


def frames(code: str) -> list[Frame]:
    """The open brackets of ``code`` (outermost first), strings and comments skipped."""
    stack: list[Frame] = []
    pending_match = False
    prev = ""
    line_start = 0
    for m in TOKENS.finditer(code):
        tok = m.group(0)
        if tok == "\n":
            line_start = m.end()
            if stack and stack[-1].kind == "match":
                stack[-1].arm = m.end()
            continue
        if tok.startswith(("\"", "//")):
            prev = tok if tok.startswith("\"") else prev
            continue
        if tok == "match":
            pending_match = True
        elif tok == "(":
            named = bool(re.match(r"[A-Za-z_]\w*$", prev)) and prev not in KEYWORDS
            stack.append(Frame("call" if named or prev in (">", "fn", ")") else "paren"))
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
            stack[-1].arm = m.end()
        prev = tok
    return stack


def _operand_end(tok: str) -> bool:
    """Whether ``tok`` ends an operand (so only a :data:`FOLLOWERS` word may come after it)."""
    if not tok or tok == "\n":
        return False
    if tok in (")", "]", "}", "?"):
        return True
    if tok.startswith("\""):
        return len(tok) > 1 and tok.endswith("\"") and not tok.endswith("\\\"")
    if tok[0].isdigit():
        return True
    if tok[0].isalpha() or tok[0] == "_":
        return tok not in KEYWORDS or tok in _OPERAND_WORDS
    return False


def _in_pattern(code: str, stack: list[Frame]) -> bool:
    """Whether the end of ``code`` is in a match arm's pattern (before its ``->``)."""
    for frame in reversed(stack):
        if frame.kind == "match":
            return "->" not in code[frame.arm:]
        if frame.kind != "call":
            return False
    return False


def _word_kind(code: str, head_tokens: list[str], line_tokens: list[str], deferrable: bool) -> tuple[str, bool]:
    """``(kind, deferred)`` of a word starting at the end of ``code`` (``head_tokens``: its tokens,
    newlines included; ``line_tokens``: those of its line)."""
    sig = [t for t in head_tokens if t != "\n" and not t.startswith("//")]
    last = sig[-1] if sig else ""
    if line_tokens and _operand_end(line_tokens[-1]):
        return FOLLOW, False
    if last == "<" and len(sig) >= 3 and sig[-3] == "fn":
        return FREE, False
    if last in USE_AFTER:
        return USE, False
    if line_tokens and line_tokens[0] == "for" and "in" not in line_tokens:
        return FREE, False  # `for k, v`: loop variables being bound
    line = code[code.rfind("\n") + 1:]
    if _GENERIC_DECL.search(line):
        return FREE, False
    stack = frames(code)
    if _in_pattern(code, stack):
        return FREE, False
    inner = stack[-1].kind if stack else "block"
    statement_start = not line_tokens or line_tokens[-1] == "{"
    if last in ("(", ",") or (statement_start and inner in ("call", "paren", "index")):
        if inner == "call":
            return FREE, deferrable
        if inner in ("paren", "index"):
            return USE, False
        return (FREE, False) if inner in ("record", "match") else (USE, False)
    if statement_start:
        return (USE, False) if inner == "block" else (FREE, False)
    return FREE, False


def position(code: str) -> Position:
    """Classify the end of ``code`` (the text of an open ```vox block) for the name mask."""
    partial = code[len(code.rstrip(_IDENT_CHARS)):]
    head = code[: len(code) - len(partial)]
    tokens = TOKENS.findall(head)
    last = tokens[-1] if tokens else ""
    in_comment = last.startswith("//")
    in_string = last.startswith('"') and (len(last) == 1 or not last.endswith('"') or last.endswith('\\"'))
    if in_comment or in_string or _DECO_TAIL.search(head):
        return Position(partial, FREE, FREE)
    if partial[:1].isdigit():
        return Position(partial, FREE, FOLLOW)
    cut = len(tokens) - tokens[::-1].index("\n") if "\n" in tokens else 0
    line_tokens = [t for t in tokens[cut:] if not t.startswith("//")]
    if not partial:
        kind, _ = _word_kind(code, tokens, line_tokens, deferrable=False)
        gap = head[len(head.rstrip(" \t")):]
        pending = ""
        if gap and line_tokens and re.match(r"[A-Za-z_]\w*$", line_tokens[-1]) and line_tokens[-1] not in KEYWORDS:
            word_head = head[: len(head) - len(gap) - len(line_tokens[-1])]
            w_tokens = TOKENS.findall(word_head)
            w_cut = len(w_tokens) - w_tokens[::-1].index("\n") if "\n" in w_tokens else 0
            w_line = [t for t in w_tokens[w_cut:] if not t.startswith("//")]
            if _word_kind(word_head, w_tokens, w_line, deferrable=True)[1]:
                pending = line_tokens[-1]
        return Position("", kind, kind, pending)
    kind, deferred = _word_kind(head, tokens, line_tokens, deferrable=True)
    if partial in KEYWORDS and partial not in _OPERAND_WORDS:
        fresh = USE if partial in USE_AFTER else FREE
    else:
        fresh = FOLLOW
    return Position(partial, kind, fresh, partial if deferred else "")
