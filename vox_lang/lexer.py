"""Lexical vocabulary and the character scanner (spec §1).

:func:`scan` turns text into *raw* tokens: one ``NL`` per physical line end (and per ``;``),
comments dropped, every bad character reported (E01xx), and the character-level retired
forms (``#`` ``;`` ``!`` ``&&`` ``||`` ``isnt`` ``null`` ``Err(`` and ``<markup>``) reported
and replaced by their 2026 token. Line-level retired forms live in :mod:`vox_lang.retired`,
brackets and layout in :mod:`vox_lang.layout`, whose :func:`~vox_lang.layout.tokenize` runs
all three.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from enum import Enum
from typing import Final, NamedTuple

from vox_lang import codes, messages
from vox_lang.codes import ErrorCode
from vox_lang.diagnostics import DiagnosticSink
from vox_lang.source import BOM, Span


class TokenKind(str, Enum):
    """Token classes; keywords and punctuation are told apart by their ``text``."""

    NAME = "NAME"
    KEYWORD = "KEYWORD"
    INT = "INT"
    FLOAT = "FLOAT"
    STRING = "STRING"
    DECO = "DECO"
    PUNCT = "PUNCT"
    NL = "NL"
    #: a non-argument decorator's whole parenthesised argument run (spec §10 U9), one token
    DECO_ARGS = "DECO_ARGS"


#: reserved words (spec §1); after ``.`` they are plain field or argument names (WORD)
KEYWORDS: Final = frozenset(
    "fn pub async let mut ret return if else while for in break continue match type actor on "
    "spawn workflow activity import as routes to and or not true false is extern".split()
)

#: contextual words (spec §10 U6): plain names except where :mod:`vox_lang.layout` retags
#: them (``component NAME (`` opening an item, ``view :`` inside such a declaration); their
#: grammar code is then the word itself
CONTEXTUAL: Final = frozenset({"component", "view"})

#: punctuation, longest first so a prefix never wins over a longer match
PUNCTUATION: Final = tuple(
    sorted(
        "( ) [ ] { } , . : ? = == != < > <= >= + - * / % += -= *= /= -> => |> |".split(),
        key=len,
        reverse=True,
    )
)

OPENERS: Final = {"(": ")", "[": "]", "{": "}"}
CLOSERS: Final = {")": "(", "]": "[", "}": "{"}

_OPERAND_END_KW: Final = frozenset({"true", "false"})


class Token(NamedTuple):
    """One token: ``kind``, its 2026 ``text`` (``Error`` for a retired ``Err``) and ``span``.

    ``code`` is the token's spelling in the text the PEG grammar parses: keywords and
    punctuation as themselves, classes by kind name (``NAME``, ``INT``...), ``_`` as ``_``.
    A named tuple rather than a dataclass: a module has as many tokens as characters / 4, and
    building them is a fifth of lexing time.
    """

    kind: TokenKind
    text: str
    span: Span
    code: str

    @property
    def ends_operand(self) -> bool:
        """True if an operand can end with this token (then ``-`` is binary, ``<`` a comparison)."""
        kind = self.kind
        if kind is _NAME or kind is _INT or kind is _FLOAT or kind is _STRING:
            return True
        if kind is _KEYWORD:
            return self.text in _OPERAND_END_KW
        return kind is _PUNCT and self.text in (")", "]", "}", "?")


#: brackets the lexer keeps track of (spec §1 L1 depends on the innermost open one)
_OPENERS: Final = frozenset("([{")
_CLOSES: Final = {")": "(", "]": "[", "}": "{"}
_NAME, _INT, _FLOAT, _STRING = TokenKind.NAME, TokenKind.INT, TokenKind.FLOAT, TokenKind.STRING
_KEYWORD, _PUNCT, _NL = TokenKind.KEYWORD, TokenKind.PUNCT, TokenKind.NL
#: names that :meth:`_Scanner.name` may rewrite (retired spellings, the wildcard)
_SPECIAL_NAMES: Final = frozenset({"isnt", "null", "Err", "_"})
_CLASS_CODE: Final = {k: k.value for k in TokenKind}


def make_token(kind: TokenKind, text: str, span: Span) -> Token:
    """Build a token with its grammar ``code``."""
    if kind is _KEYWORD or kind is _PUNCT:
        return Token(kind, text, span, text)
    if kind is _NAME and text == "_":
        return Token(kind, text, span, "_")
    return Token(kind, text, span, _CLASS_CODE[kind])


@dataclass(frozen=True, slots=True)
class ScanResult:
    """Raw tokens plus the offsets of errors that keep their item from being parsed.

    Attributes:
        tokens: raw tokens, one ``NL`` per line end or ``;``.
        poison: offsets of E01xx and E0305 errors (items holding one are not parsed).
    """

    tokens: list[Token]
    poison: list[int]


_INT_MAX: Final = 2**63 - 1
_PUNCT_RE = "|".join(re.escape(p) for p in PUNCTUATION)
_MASTER: Final = re.compile(
    r"([ \t]*)(?:"  # group 1: the blanks before the token (or at the end of the text)
    r"(?P<nl>\r?\n)"
    r"|(?P<comment>//[^\r\n]*)"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<num>[0-9]+(?:\.[0-9]+)?)"
    r'|(?P<str>")'
    r"|(?P<deco>@[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)"
    r"|(?P<andand>&&)|(?P<oror>\|\|)"
    rf"|(?P<punct>{_PUNCT_RE})"
    r"|(?P<hash>\#[^\r\n]*)"
    r"|(?P<semi>;[ \t]*)"
    r"|(?P<bang>!)"
    r"|(?P<sq>')"
    r"|(?P<other>[\s\S])"
    r"|\Z)"
)
_GOOD_STRING: Final = re.compile(r'"(?:[^"\\\r\n]|\\[nt\\"])*"')
_NUM_TAIL: Final = re.compile(r"[A-Za-z0-9_.]*")
#: a call's ``(`` after optional spaces (``Err (`` is E0310)
_CALL_PAREN: Final = re.compile(r"[ \t]*\(")
#: the rest of a line is blank or a comment (``str.strip`` whitespace; the line ends at ``\n``)
_BLANK_REST: Final = re.compile(r"[^\S\n]*(?://|\n|\Z)")
_ESCAPES: Final = {"n": "\n", "t": "\t", "\\": "\\", '"': '"'}


def show_char(ch: str) -> str:
    """A character as it should appear inside backticks in a message (controls escaped)."""
    return ch if ch.isprintable() else ascii(ch)[1:-1]


def unseen_char_hint(ch: str) -> str | None:
    """E0101's hint for a character most editors do not show (a byte-order mark, a zero-width
    or no-break space, a control character), naming it by code point and Unicode name;
    ``None`` for a visible one (the template's ``delete it`` is enough)."""
    if ch.isprintable():
        return None
    if ch == BOM:
        return messages.BOM_HINT
    name = unicodedata.name(ch, "")
    return messages.UNSEEN_CHAR_HINT.format(c=f"U+{ord(ch):04X}" + (f" {name}" if name else ""))


def decode_string(text: str) -> str:
    """Value of a valid STRING token's text (quotes stripped, escapes decoded)."""
    body = text[1:-1]
    if "\\" not in body:
        return body
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), body)


class _Scanner:
    """State of one :func:`scan` call (kept in a class so helpers share it)."""

    def __init__(self, text: str, sink: DiagnosticSink, reported: frozenset[int]) -> None:
        self.text = text
        self.sink = sink
        self.reported = reported
        self.tokens: list[Token] = []
        self.poison: list[int] = []
        self._line_memo = (0, 0)  # (offset last asked about, its line's start)
        self._open: list[str] = []  # open brackets so far, innermost last (for L1 in last_significant)

    def error(self, code: ErrorCode, start: int, end: int, *, poison: bool = True, hint: str | None = None,
              **fields: str) -> None:
        self.sink.report(code, Span(start, end), hint=hint, **fields)
        if poison:
            self.poison.append(start)

    def add(self, kind: TokenKind, text: str, start: int, end: int) -> None:
        self.tokens.append(make_token(kind, text, Span(start, end)))
        if kind is _PUNCT:
            if text in _OPENERS:
                self._open.append(text)
            elif text in _CLOSES and self._open and self._open[-1] == _CLOSES[text]:
                self._open.pop()  # a mismatched closer is the layout's E0204; the stack stays

    def line_start(self, pos: int) -> int:
        """Where the line holding ``pos`` starts; asked at increasing offsets, each search
        resumes where the last stopped (linear in total, even along one very long line)."""
        last_pos, last_start = self._line_memo
        if pos < last_pos:
            return self.text.rfind("\n", 0, pos) + 1
        found = self.text.rfind("\n", last_pos, pos)
        start = found + 1 if found != -1 else last_start
        self._line_memo = (pos, start)
        return start

    def prev_is_dot(self) -> bool:
        return bool(self.tokens) and self.tokens[-1].code == "."

    def last_significant(self) -> Token | None:
        """The previous token on this logical line (``None`` at a line start). Inside ``(`` or
        ``[`` a line end is no ``NL`` (spec §1 L1), so there the token before it counts: in
        ``(1\n  <y)`` the ``<`` follows the operand ``1`` and is a comparison, not markup."""
        tokens = self.tokens
        i = len(tokens) - 1
        if self._open and self._open[-1] in "([":
            while i >= 0 and tokens[i].kind is TokenKind.NL and tokens[i].text == "\n":
                i -= 1
        if i >= 0 and tokens[i].kind is not TokenKind.NL:
            return tokens[i]
        return None

    def run(self) -> ScanResult:
        # The common tokens (names, keywords, punctuation, line ends) are appended here rather
        # than through name()/add()/make_token(): three calls fewer per token, a third of the
        # scanning time. Blanks before a token are matched with it (group ``ws``).
        text = self.text
        n = len(text)
        pos = 0
        match = _MASTER.match
        append = self.tokens.append
        opened = self._open
        new = tuple.__new__  # Token(...) goes through a Python-level __new__: a third slower
        while pos < n:
            m = match(text, pos)
            assert m is not None  # the last alternative matches any character
            kind = m.lastgroup
            end = m.end()
            start = m.end(1)  # after the blanks
            if kind == "name":
                word = m.group(kind)
                if word in KEYWORDS:
                    if word == "is":
                        self.name(word, start, end)
                    else:
                        append(new(Token, (_KEYWORD, word, Span(start, end), word)))
                elif word in _SPECIAL_NAMES:
                    self.name(word, start, end)
                else:
                    append(new(Token, (_NAME, word, Span(start, end), "NAME")))
            elif kind == "punct":
                word = m.group(kind)
                if word == "<" and self.markup_starts(end):
                    end = self.skip_markup(start)
                    # an operand stands in for the skipped markup so L2 keeps the NL after it
                    self.add(TokenKind.STRING, '""', start, end)
                else:
                    append(new(Token, (_PUNCT, word, Span(start, end), word)))
                    if word in _OPENERS:
                        opened.append(word)
                    elif word in _CLOSES and opened and opened[-1] == _CLOSES[word]:
                        opened.pop()  # a mismatched closer is the layout's E0204; the stack stays
            elif kind == "nl":
                append(new(Token, (_NL, "\n", Span(start, end), "NL")))
            elif kind == "comment" or kind is None:  # a comment, or blanks at the end
                pass
            elif kind == "num":
                end = self.number(start, end)
            elif kind == "str":
                end = self.string(start)
            elif kind == "deco":
                self.add(TokenKind.DECO, m.group(kind), start, end)
            else:
                end = self.retired_or_bad(kind, m.group(kind), start, end)
            pos = end
        return ScanResult(self.tokens, self.poison)

    def name(self, word: str, start: int, end: int) -> None:
        if word in KEYWORDS:
            if word == "is":
                prev = self.last_significant()
                if prev is not None and prev.ends_operand:  # spec §10 U4: `is` as `==`
                    self.sink.report(codes.W0004, Span(start, end), fix="==")
                    self.add(TokenKind.PUNCT, "==", start, end)
                    return
            self.add(TokenKind.KEYWORD, word, start, end)
            return
        if not self.prev_is_dot():
            if word == "isnt":
                self.sink.report(codes.E0306, Span(start, end), fix="!=")
                self.add(TokenKind.PUNCT, "!=", start, end)
                return
            if word == "null":
                self.sink.report(codes.E0314, Span(start, end), fix="None")
                self.add(TokenKind.NAME, "None", start, end)
                return
            if word == "Err" and _CALL_PAREN.match(self.text, end):
                self.sink.report(codes.E0310, Span(start, end), fix="Error")
                self.add(TokenKind.NAME, "Error", start, end)
                return
        self.add(TokenKind.NAME, word, start, end)

    def number(self, start: int, end: int) -> int:
        text = self.text
        is_float = "." in text[start:end]
        nxt = text[end : end + 1]
        glued = nxt.isascii() and (nxt.isalnum() or nxt == "_")
        second_dot = nxt == "." and (is_float or text[end + 1 : end + 2].isdigit())
        if glued or second_dot:
            tail = _NUM_TAIL.match(text, end)
            end = tail.end() if tail else end
            self.error(codes.E0104, start, end, text=text[start:end])
            self.add(TokenKind.INT, "0", start, end)
            return end
        word = text[start:end]
        if is_float:
            self.add(TokenKind.FLOAT, word, start, end)
        else:
            if int(word) > _INT_MAX:
                self.error(codes.E0105, start, end, text=word)
            self.add(TokenKind.INT, word, start, end)
        return end

    def string(self, start: int) -> int:
        text = self.text
        m = _GOOD_STRING.match(text, start)
        if m is not None:
            self.add(TokenKind.STRING, m.group(), start, m.end())
            return m.end()
        # slow path: report every bad escape, then a missing closing quote
        i = start + 1
        n = len(text)
        while i < n and text[i] not in '"\r\n':
            if text[i] == "\\":
                nxt = text[i + 1 : i + 2]
                if nxt in ("", "\n", "\r"):
                    i += 1
                    break
                if nxt not in _ESCAPES:
                    self.error(codes.E0103, i, i + 2, c=show_char(nxt))
                i += 2
                continue
            i += 1
        if i < n and text[i] == '"':
            end = i + 1
        else:
            end = i
            self.error(codes.E0102, start, end)
        self.add(TokenKind.STRING, '""', start, end)
        return end

    def markup_starts(self, after: int) -> bool:
        """E0305: ``<`` glued to a letter or ``/`` after a token that does not end an operand."""
        nxt = self.text[after : after + 1]
        if not (nxt == "/" or (nxt.isascii() and nxt.isalpha())):
            return False
        prev = self.last_significant()
        return prev is None or not prev.ends_operand

    def skip_markup(self, start: int) -> int:
        """Report E0305 and skip the markup: the rest of the line, then following lines that
        are more indented than the markup's line or start with ``<``; a closer with no opener
        inside the markup ends it early (so ``f(<p>x</p>)`` keeps its ``)``)."""
        text = self.text
        self.error(codes.E0305, start, start + 1)
        line_start = self.line_start(start)
        indent = line_indent(text, line_start)
        depth = 0
        i = start
        n = len(text)
        while i < n:
            ch = text[i]
            if ch == "\n":
                j = i + 1
                while True:  # skip blank lines
                    k = j + line_indent(text, j)
                    if k < n and text[k] in "\r\n":
                        j = text.find("\n", k) + 1 or n
                        continue
                    break
                if j >= n:
                    return i
                k = j + line_indent(text, j)
                if line_indent(text, j) > indent or text.startswith("<", k):
                    i = k
                    continue
                return i
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                if depth == 0:
                    return i
                depth -= 1
            i += 1
        return n

    def retired_or_bad(self, kind: str | None, word: str, start: int, end: int) -> int:
        sink = self.sink
        if kind == "andand":
            sink.report(codes.E0312, Span(start, end), fix="and")
            self.add(TokenKind.KEYWORD, "and", start, end)
        elif kind == "oror":
            sink.report(codes.E0313, Span(start, end), fix="or")
            self.add(TokenKind.KEYWORD, "or", start, end)
        elif kind == "bang":
            nxt = self.text[end : end + 1]
            sink.report(codes.E0311, Span(start, end), fix="not" if nxt in ("", " ", "\t", "\r", "\n") else "not ")
            self.add(TokenKind.KEYWORD, "not", start, end)
        elif kind == "hash":
            sink.report(codes.E0304, Span(start, start + 1), fix="//")
        elif kind == "semi":
            self.semicolon(start, end)
        elif kind == "sq":
            end = self.single_quoted(start)
        elif start in self.reported:
            self.poison.append(start)  # E0106 already reported by the decoder
        else:
            self.error(codes.E0101, start, end, c=show_char(word), hint=unseen_char_hint(word))
        return end

    def semicolon(self, start: int, end: int) -> None:
        """E0309: ``;`` reads as a line end; the fix starts a new line at the same indent
        (or just deletes a ``;`` that ends its line)."""
        text = self.text
        if _BLANK_REST.match(text, end):
            fix = ""
        else:
            line_start = self.line_start(start)
            fix = "\n" + text[line_start : line_start + line_indent(text, line_start)]
        self.sink.report(codes.E0309, Span(start, end), fix=fix)
        self.add(TokenKind.NL, ";", start, start + 1)

    def single_quoted(self, start: int) -> int:
        text = self.text
        i = start + 1
        n = len(text)
        while i < n and text[i] not in "'\r\n":
            i += 2 if text[i] == "\\" else 1
        end = min(i + 1, n) if i < n and text[i] == "'" else min(i, n)
        self.error(codes.E0107, start, end)
        self.add(TokenKind.STRING, '""', start, end)
        return end


def line_indent(text: str, line_start: int) -> int:
    """Number of spaces and tabs at ``line_start``."""
    i = line_start
    n = len(text)
    while i < n and text[i] in " \t":
        i += 1
    return i - line_start


def scan(text: str, sink: DiagnosticSink, reported: frozenset[int] = frozenset()) -> ScanResult:
    """Scan ``text`` into raw tokens, reporting lexical errors and character-level retired forms.

    Args:
        text: the module text.
        sink: where diagnostics go.
        reported: offsets of U+FFFD characters already reported as E0106 (not reported again,
            but still poison their item).

    Returns:
        The raw tokens and the poison offsets; never raises.
    """
    return _Scanner(text, sink, reported).run()


def lineline_indent(text: str, line_start: int) -> int:
    """Public form of the indentation helper (spaces and tabs at ``line_start``)."""
    return line_indent(text, line_start)
