"""Canonical layout inside a constrained ```vox block: caps on blank lines, comments, words, strings and spaces.

The grammar (:mod:`vox_lang.constraint`) lets newlines stand wherever layout drops them (L1
inside ``(``/``[``, L2/L3 around operators) and runs of them anywhere, and comments may run to any
length. A small model
that cannot close its block where the grammar forbids it escapes into exactly those: hundreds of
blank lines, or ``// ...`` lines of prose, until the token limit cuts the block (the default
run's eval: 233 of 408 constrained adapter samples cut, most ending in E0203). So the decoder
also keeps the block in a **canonical layout**, a restriction a valid program can always meet:

- **Blank lines:** at most one blank line in a row (:data:`MAX_NEWLINES` newlines with only
  spaces/tabs between them), at top level and inside brackets alike. Collapsing longer runs of
  blank lines to one never changes what a Vox program means (``NL``s are separators, L1-L4 drop
  them or keep one; :func:`canonical_blank_lines` does it), and the corpus never has more.
- **Words and strings:** an identifier ends once it is :data:`MAX_WORD` characters long, and a
  string literal closes once it is :data:`MAX_STRING` long (only tokens starting with ``"`` may
  follow). The tiny model's cut blocks held runaway words (``test_dis_tag_tag_tag...``,
  ``gefisuhutsutisssss...ingingingactivity``) and strings of hundreds of characters; a valid
  program never needs either (names can be shorter, strings joined with ``+``).
- **Comments:** a ``//`` comment ends (a newline is forced) once it is :data:`MAX_COMMENT`
  characters long, and a block holds at most :data:`MAX_COMMENT_LINES` lines with a comment
  (after that no comment may start). The default corpus has at most one comment line per
  response (longest 105 characters) and ``examples/`` at most two (93), so the caps only stop
  prose run-ons — which become the escape once blank lines are capped (measured: 43 of 112 cut
  samples on half the eval). A comment is never glued to code: ``//`` may follow only whitespace
  or the start of a line (``x // note``, not ``x// note``). The corpus's code has no glued
  comment; in one constrained eval run of the default export 92 of 816 answers glued one, 6 of
  them passed, and the usual way was ``type Coord = bool//status: int, ...`` running into what
  should have been the next line's item (then ``ret`` stood outside a function, E0406).
- **Spaces:** a run of spaces and tabs on a line (outside strings and comments), indentation
  included, is at most :data:`MAX_SPACES` characters: a token whose leading spaces would pass it
  is refused. Vox is brace-first, so indentation and the gaps between tokens never change what a
  program means; the default corpus's longest run is 10 (indentation; 1 mid-line). In the
  default run's constrained eval 17 of 816 answers held a run of 24 or more (``fn`` then hundreds
  of spaces to the token limit), 15 of them cut (E0203).
Where a line may start is the grammar's business: it models L1-L3 exactly, so a line that only
continues an expression (``== 0.0``, ``> 3``, ``, x``) where the newline before it separates cannot
be decoded. (A decoder-side line-start rule did that while the grammar let newlines stand around
every operator; it went when the grammar learned layout.)

The caps are decoder-side (token tables built once; per row a few counters, each finished line
lexed once; masks cached by a small key), applied by
:class:`pipeline.decoding_constraint.GrammarProcessor` together with the grammar mask: only tokens
both allow are kept, and if the layout would leave none the grammar mask alone is used (never a
dead end). Outside ```vox blocks nothing is restricted: prose stays free.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Final

#: newlines allowed in one whitespace run inside a block (2 = one blank line)
MAX_NEWLINES: Final = 2
#: characters (``//`` included) after which a comment must end
MAX_COMMENT: Final = 120
#: lines with a comment a block may hold
MAX_COMMENT_LINES: Final = 4
#: finished lines in a row with no code (blank, spaces only, or only a comment) after which a
#: block has stalled: the caps above allow at most ``2 * MAX_COMMENT_LINES + 1`` (comment lines
#: with single blank lines between), so a longer run means the masks left the model nothing but
#: layout to write (``.`` + newline before a receiver with no members: 37 lines of ``//`` and
#: spaces to the token limit, and a batch decodes as long as its longest row), and
#: :class:`pipeline.decoding_constraint.GrammarProcessor` ends the row
MAX_IDLE_LINES: Final = 2 * MAX_COMMENT_LINES + 2
#: characters after which an identifier must end (the default corpus's longest is 40)
MAX_WORD: Final = 64
#: characters (quotes included) after which a string literal must close (the corpus's longest is 47)
MAX_STRING: Final = 200
#: characters of spaces and tabs in a row on a line, indentation included (the corpus's longest is 10)
MAX_SPACES: Final = 32
FENCE_OPEN: Final = "```vox"
FENCE_CLOSE: Final = "```"

_WS_RUN: Final = re.compile(r"[ \t\r\n]+")
_BLANK_RUN: Final = re.compile(r"\n(?:[ \t\r]*\n){" + str(MAX_NEWLINES) + ",}")
#: a string literal (possibly unclosed, possibly ending in the backslash of an escape being written)
#: or a comment
_STRING_OR_COMMENT: Final = re.compile(r'"(?:[^"\\\n]|\\.)*\\?"?|//.*')
_WORD_CHAR: Final = re.compile(r"[A-Za-z0-9_]")
_TRAILING_WORD: Final = re.compile(r"[A-Za-z0-9_]+\Z")
#: a comment glued to the code before it: ``//`` right after a character that is not whitespace,
#: ``/`` (a longer run of slashes) or ``"`` (``"//`` may open a string holding ``//``)
_GLUED: Final = re.compile(r'[^\s/"]//')


def canonical_blank_lines(code: str) -> str:
    """``code`` with every run of more than one blank line collapsed to one blank line.

    Whitespace-only lines count as blank. Vox meaning is unchanged (spec §1 layout: a run of
    ``NL``s separates like one). Used to state the never-blocks property under the cap.
    """
    return _BLANK_RUN.sub("\n\n", code)


def _newlines(run: str) -> int:
    return run.count("\n")


@dataclass
class LayoutTable:
    """Per-token whitespace shape, built once per tokenizer (index = token id).

    Attributes:
        texts: decoded text of each token.
        lead_nl: newlines in the token's leading whitespace (all of them for a whitespace-only token).
        max_run: most newlines in any whitespace run inside the token.
        all_ws: the token is whitespace only (or empty).
        trail_nl: newlines in the token's trailing whitespace.
        starts_nl: the token's text starts with a newline (``\\n`` or ``\\r``).
        lead_spaces: spaces and tabs the token's text starts with.
    """

    texts: list[str]
    lead_nl: list[int]
    max_run: list[int]
    all_ws: list[bool]
    trail_nl: list[int]
    starts_nl: list[bool]
    comment: list[bool] = field(default_factory=list)  # holds "//"
    slash: list[bool] = field(default_factory=list)  # starts with "/"
    word: list[bool] = field(default_factory=list)  # starts with an identifier character
    quote: list[bool] = field(default_factory=list)  # starts with '"'
    opens: list[bool] = field(default_factory=list)  # starts with "//"
    glued: list[bool] = field(default_factory=list)  # holds a "//" right after code ("x//", ")//")
    lead_spaces: list[int] = field(default_factory=list)  # spaces/tabs the token starts with
    _masks: dict[tuple[str, int, int, int], Any] = field(default_factory=dict)
    _ends: dict[tuple[str, int], Any] = field(default_factory=dict)
    _widest: int | None = None

    @classmethod
    def build(cls, texts: list[str]) -> LayoutTable:
        """The table for tokens whose decoded texts are ``texts``."""
        lead, most, ws, trail, starts = [], [], [], [], []
        for text in texts:
            runs = _WS_RUN.findall(text)
            body = text.strip(" \t\r\n")
            ws.append(not body)
            lead_run = text[: len(text) - len(text.lstrip(" \t\r\n"))]
            trail_run = text[len(text.rstrip(" \t\r\n")):]
            # A token ending in a lone \r has a newline pending (the grammar's NL is \r?\n): it
            # counts as one, or the cap would let "\n\n \r" through and then face a grammar that
            # allows only "\n" (the cap then yields, and a third newline follows).
            cr = int(text.endswith("\r"))
            lead.append(_newlines(lead_run) + (cr if not body else 0))
            trail.append(_newlines(trail_run) + cr)
            most.append(max([_newlines(r) for r in runs] + [_newlines(trail_run) + cr]))
            starts.append(text[:1] in ("\n", "\r"))
        return cls(list(texts), lead, most, ws, trail, starts, ["//" in t for t in texts],
                   [t.startswith("/") for t in texts], [bool(_WORD_CHAR.match(t)) for t in texts],
                   [t.startswith('"') for t in texts], [t.startswith("//") for t in texts],
                   [bool(_GLUED.search(t)) for t in texts],
                   [len(t) - len(t.lstrip(" \t")) for t in texts])

    def ends(self, what: str, width: int) -> Any:
        """Bool numpy array ``[width]``: tokens that end a word (``what="word"``: not starting with an
        identifier character) or close a string (``"string"``: starting with ``"``). Cached."""
        cached = self._ends.get((what, width))
        if cached is None:
            flags = [not w for w in self.word] if what == "word" else self.quote
            cached = self._ends[(what, width)] = _flag_tensor(flags, width)
        return cached

    def spaces(self, run: int, width: int) -> Any:
        """Bool numpy array ``[width]`` of the tokens that keep a line's run of spaces and tabs, now
        ``run`` long, within :data:`MAX_SPACES` (their leading spaces fit in what is left). Cached."""
        room = max(0, MAX_SPACES - run)
        cached = self._ends.get((f"spaces{room}", width))
        if cached is None:
            cached = self._ends[(f"spaces{room}", width)] = _flag_tensor([n <= room for n in self.lead_spaces], width)
        return cached

    @property
    def widest_spaces(self) -> int:
        """The most leading spaces and tabs of any token (below ``MAX_SPACES - widest_spaces``
        a run needs no mask)."""
        if self._widest is None:
            self._widest = max(self.lead_spaces, default=0)
        return self._widest

    def unglued(self, after_code: int, width: int) -> Any:
        """Bool numpy array ``[width]`` of the tokens that glue no comment to code: never one holding
        ``//`` right after code (:data:`_GLUED`); ``after_code`` 1 (the line ends in code, not
        whitespace) none starting with ``//`` either; 2 (it ends in code and then ``/``) none
        starting with ``/``. Cached."""
        cached = self._ends.get((f"unglued{after_code}", width))
        if cached is None:
            flags = [not (g or (after_code >= 1 and o) or (after_code == 2 and sl))
                     for g, o, sl in zip(self.glued, self.opens, self.slash)]
            cached = self._ends[(f"unglued{after_code}", width)] = _flag_tensor(flags, width)
        return cached

    def mask(self, blank: int, comment: int, width: int, no_comment: int = 0) -> Any:
        """Bool numpy array ``[width]`` of the tokens the layout allows after ``blank`` newlines of the
        current whitespace run, ``comment`` characters into a ``//`` comment (0: none). Cached.
        ``no_comment``: 0 comments may start; 1 none may (tokens holding ``//`` are out); 2 none
        may and the line ends in a ``/`` (tokens starting with ``/`` are out too)."""
        blank = min(blank, MAX_NEWLINES)
        capped = comment >= MAX_COMMENT
        no_comment = 0 if comment else no_comment
        key = ("c" if capped else "b", blank, width, no_comment)
        cached = self._masks.get(key)
        if cached is None:
            room = MAX_NEWLINES - blank
            allowed = [
                (s if capped else (lead <= room and run <= MAX_NEWLINES))
                for lead, run, s in zip(self.lead_nl, self.max_run, self.starts_nl)
            ]
            if capped:  # the newline that ends the comment still obeys the blank-line cap
                allowed = [a and lead <= room and run <= MAX_NEWLINES
                           for a, lead, run in zip(allowed, self.lead_nl, self.max_run)]
            if no_comment:
                allowed = [a and not c and not (no_comment == 2 and sl)
                           for a, c, sl in zip(allowed, self.comment, self.slash)]
            cached = self._masks[key] = _flag_tensor(allowed, width)
        return cached


def comment_length(line: str) -> int:
    """Characters of the ``//`` comment the (partial) ``line`` ends in, ``0`` if it is not in one
    (``//`` inside a string does not count)."""
    for m in _STRING_OR_COMMENT.finditer(line):
        if m.group(0).startswith("//"):
            return len(m.group(0))
    return 0


def _in_string(line: str) -> bool:
    """Whether the (partial) ``line`` ends inside a string literal."""
    return string_length(line) > 0


def string_length(line: str) -> int:
    """Characters (the opening quote included) of the string literal the (partial) ``line`` ends
    inside, ``0`` if it does not end inside one."""
    last = None
    for m in _STRING_OR_COMMENT.finditer(line):
        last = m
    if last is None or last.group(0).startswith("//") or last.end() != len(line):
        return 0
    tok = last.group(0)
    return 0 if _closed(tok) else len(tok)


def _closed(literal: str) -> bool:
    """Whether the string literal token ``literal`` (from its opening quote) is closed: it ends
    in a quote that no odd run of backslashes escapes (``"a\\\\"`` is closed, ``"a\\"`` is not)."""
    if len(literal) < 2 or not literal.endswith('"'):
        return False
    body = literal[:-1]
    return (len(body) - len(body.rstrip("\\"))) % 2 == 0


def in_literal(code: str) -> bool:
    """Whether ``code`` (a partial block) ends inside a string literal or a ``//`` comment on its
    last line (Vox strings and comments never span lines): there the name mask's rules have
    nothing to say, and skipping them is ~25% of a block's steps (bench/decoding.py)."""
    line = code[code.rfind("\n") + 1:]
    return bool(line) and (_in_string(line) or comment_length(line) > 0)


def ends_in_string(line: str) -> bool:
    """Whether the (partial) ``line`` ends inside a string literal (public name of the rule the
    caps use)."""
    return _in_string(line)


def fence_close(text: str) -> int:
    """Offset of the first fence close in ``text`` (the end of an open block) that ends the block:
    not inside a ``//`` comment or a string on its line (the grammar lexes those as text); -1 if none."""
    at = text.find(FENCE_CLOSE)
    while at >= 0:
        line = text[: at].rsplit("\n", 1)[-1]
        if not comment_length(line) and not _in_string(line):
            return at
        at = text.find(FENCE_CLOSE, at + 1)
    return -1


class LayoutState:
    """Where one sequence stands for the layout caps (fed token ids one at a time)."""

    def __init__(self, table: LayoutTable, in_block: bool = False) -> None:
        self.table = table
        self.text = ""  # generated text so far (only its tail matters)
        self.in_block = in_block
        self.blank = 0  # newlines in the trailing whitespace run (inside the block)
        self.line = ""  # the current line's text inside the block
        self.comment_lines = 0  # finished lines of the block holding a comment
        self.idle_lines = 0  # finished lines in a row with no code (see MAX_IDLE_LINES)

    def feed(self, token: int) -> None:
        """Account for one sampled token."""
        t = self.table
        piece = t.texts[token] if 0 <= token < len(t.texts) else ""
        if not piece:
            return
        before = len(self.text)
        self.text += piece
        if not self.in_block:
            start = self.text.find(FENCE_OPEN, max(0, before - len(FENCE_OPEN)))
            if start < 0:
                self.text = self.text[-len(FENCE_OPEN):]
                return
            self.in_block, self.blank, self.line, self.comment_lines, self.idle_lines = True, 0, "", 0, 0
            piece = self.text[start + len(FENCE_OPEN):]
            self.text = piece
        self._in_block(piece)

    def _in_block(self, piece: str) -> None:
        tail = self.line + piece
        close = fence_close(tail)
        if close >= 0:
            self.in_block, self.blank, self.line = False, 0, ""
            self.text = tail[close + len(FENCE_CLOSE):][-len(FENCE_OPEN):]
            return
        if piece.strip(" \t\r\n"):
            self.blank = _newlines(piece[len(piece.rstrip(" \t\r\n")):])
        else:
            self.blank += _newlines(piece)
        if "\n" in tail:
            for done in tail.split("\n")[:-1]:
                self.comment_lines += int(comment_length(done) > 0)
                bare = done.strip(" \t\r")
                self.idle_lines = self.idle_lines + 1 if not bare or bare.startswith("//") else 0
        self.line = tail.rsplit("\n", 1)[-1]
        self.text = self.line

    def mask(self, width: int) -> Any | None:
        """The layout mask for the next token (``None`` outside a block: nothing restricted)."""
        if not self.in_block:
            return None
        comment = comment_length(self.line)
        string = string_length(self.line)  # 0 outside a string (in a comment too)
        no_comment = 0
        if self.comment_lines + (comment > 0) >= MAX_COMMENT_LINES and not string:
            no_comment = 2 if self.line.endswith("/") else 1
        mask = self.table.mask(self.blank, comment, width, no_comment)
        if comment:
            return mask
        if string >= MAX_STRING:
            return mask & self.table.ends("string", width)
        if string:
            return mask
        mask = mask & self.table.unglued(_after_code(self.line), width)
        run = len(self.line) - len(self.line.rstrip(" \t"))
        if run + self.table.widest_spaces > MAX_SPACES:
            mask = mask & self.table.spaces(run, width)
        word = _TRAILING_WORD.search(self.line)
        if word is not None and len(word.group()) >= MAX_WORD:
            return mask & self.table.ends("word", width)
        return mask


def _flag_tensor(flags: list[bool], width: int) -> Any:
    """Bool numpy array ``[width]``: ``flags`` per token id, ``True`` past them (ids beyond the table)."""
    import numpy as np

    out = np.ones(width, dtype=np.bool_)
    n = min(width, len(flags))
    out[:n] = np.asarray(flags[:n], dtype=np.bool_)
    return out


def _after_code(line: str) -> int:
    """0: ``line`` (outside strings and comments) is empty or ends in whitespace, so a comment may
    start; 1: it ends in code; 2: it ends in code and then one ``/`` (a second would glue a comment)."""
    if not line or line[-1] in " \t\r":
        return 0
    if line.endswith("/") and len(line) > 1 and line[-2] not in " \t/":
        return 2
    return 0 if line == "/" else 1
