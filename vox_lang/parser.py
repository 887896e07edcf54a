"""Parse a module: lex (:mod:`vox_lang.layout`), then parse each item alone with the PEG
grammar in ``grammar.peg`` and visit it into :mod:`vox_lang.syntax` nodes.

Terminals are whole tokens: an item's tokens are re-joined by spaces (each token written as
its :attr:`~vox_lang.lexer.Token.code`) and positions in that text map back to tokens. A bad
item gives one error (E0201/E0202 at the furthest token reached) and parsing resumes at the
next item. :func:`parse_module` never raises.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
import tempfile
from collections import defaultdict
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Final, cast

from parsimonious import expressions
from parsimonious.exceptions import ParseError
from parsimonious.expressions import Compound, Expression, Literal, Regex
from parsimonious.grammar import Grammar

from vox_lang import codes, syntax
from vox_lang.depth import MAX_DEPTH, PARSE_FRAMES_PER_LEVEL, level_budget, out_of_budget
from vox_lang.diagnostics import DiagnosticSink
from vox_lang.layout import Item, tokenize
from vox_lang.lexer import CONTEXTUAL, KEYWORDS, PUNCTUATION, Token
from vox_lang.parser_errors import Expectations, Outcome
from vox_lang.parser_visitor import AstBuilder
from vox_lang.predict import Fast, Tree, token_codes
from vox_lang.predict_build import build
from vox_lang.source import SourceFile, Span

#: token classes as they are spelled in the joined text (and in grammar.peg)
CLASS_CODES: Final = frozenset({"NAME", "INT", "FLOAT", "STRING", "DECO", "DECO_ARGS", "NL", "_"})
#: every code the joined text can hold (:data:`END_CODE` included)
VOCABULARY: Final = KEYWORDS | CONTEXTUAL | frozenset(PUNCTUATION) | CLASS_CODES | {"EOI"}

#: bump when compile_grammar changes what it does to the loaded grammar (cache key)
_LOADER_VERSION: Final = 1



class GrammarError(Exception):
    """grammar.peg names a terminal the lexer does not produce (a bug in this package)."""


def _walk(expr: Expression, seen: dict[int, Expression]) -> None:
    stack = [expr]
    while stack:
        e = stack.pop()
        if id(e) in seen:
            continue
        seen[id(e)] = e
        if isinstance(e, Compound):
            stack.extend(reversed(e.members))


@lru_cache(maxsize=1)
def load_grammar() -> tuple[Grammar, Expectations]:
    """Load ``grammar.peg`` once per process (see :func:`compile_grammar`).

    Compiling takes parsimonious about 0.3 s, most of ``vox check``'s start-up, so the
    compiled grammar is also kept as a pickle in ``vox_lang/__pycache__`` named after a hash
    of the grammar text, Python's version and parsimonious's installed file (like a ``.pyc``: same folder, same trust;
    skipped when the folder is not writable).
    """
    text = resources.files("vox_lang").joinpath("grammar.peg").read_text(encoding="utf-8")
    lib = Path(expressions.__file__).stat()  # stands in for parsimonious's version (no __version__)
    key = hashlib.sha256(
        f"{_LOADER_VERSION}|{lib.st_size}|{lib.st_mtime_ns}|{sys.version}|{text}".encode()
    ).hexdigest()[:16]
    cache = Path(__file__).with_name("__pycache__") / f"grammar.{key}.pickle"
    grammar: Grammar | None = None
    try:
        grammar = pickle.loads(cache.read_bytes())
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError):
        grammar = None
    if not isinstance(grammar, Grammar):
        grammar = compile_grammar(text)
        _store(cache, pickle.dumps(grammar, protocol=pickle.HIGHEST_PROTOCOL))
    return grammar, Expectations(grammar)


@lru_cache(maxsize=1)
def load_predictive() -> Fast:
    """The predictive copy of the grammar's ``item`` rule (:mod:`vox_lang.predict`), built once
    per process."""
    return build(load_grammar()[0]["item"], VOCABULARY)


def match_item(text: str) -> Tree | None:
    """Match a joined text with :func:`load_predictive`: the grammar's tree when the item
    parses (possibly short of the end), else ``None``."""
    return load_predictive().match_at(text, 0, {}, token_codes(text, VOCABULARY), [])


def _store(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically; a cache that cannot be written is skipped."""
    try:
        path.parent.mkdir(exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except OSError:
        return


def compile_grammar(text: str) -> Grammar:
    """Build the grammar from ``text``: check every literal against the lexer's vocabulary
    and give it the separating space of the joined text.

    Raises:
        GrammarError: a literal is neither a keyword, punctuation nor a token class, or a
            regex does not end with the separating space.
    """
    grammar = Grammar(text)
    seen: dict[int, Expression] = {}
    for rule in grammar.values():
        _walk(rule, seen)
    vocabulary = KEYWORDS | CONTEXTUAL | frozenset(PUNCTUATION) | CLASS_CODES
    for e in seen.values():
        if isinstance(e, Literal):
            if e.literal not in vocabulary:
                raise GrammarError(f"grammar.peg: literal {e.literal!r} is not a token")
            e.literal += " "
        elif isinstance(e, Regex) and not e.re.pattern.endswith(" "):
            raise GrammarError(f"grammar.peg: regex {e.name or e.re.pattern!r} must end with a space")
    return grammar


#: items of at most this many tokens have their parse trees remembered (:class:`TreeMemo`):
#: small items are where the grammar's ordered choices cost most per token (a one-token item
#: tries ~60 expressions) and where shapes repeat (``let NAME = INT``, ``print ( STRING )``)
MEMO_MAX_TOKENS: Final = 64
#: distinct item shapes remembered per module, the least recently used dropped first
MEMO_SIZE: Final = 256


class TreeMemo:
    """Parse trees of one module's small items, by joined text (an LRU of :data:`MEMO_SIZE`).

    The grammar's match depends only on the joined codes, and the tree is never mutated, so an
    item whose codes repeat an earlier item's (a script of one-line statements, or many joined
    by ``;`` on one line) is visited with its own tokens without being matched again. A syntax
    error's :data:`~vox_lang.parser_errors.Outcome` (what it expected where) is kept the same
    way, in a table of its own, so a repeated bad shape is not matched twice again (the
    predictive match, then the grammar's own for the expected tokens) to be reported.

    Args:
        max_tokens: items with more tokens are not remembered (default :data:`MEMO_MAX_TOKENS`:
            within one module only small items repeat).
        size: trees kept, and failures kept (default :data:`MEMO_SIZE` each).

    A memo may be shared by the parses of one program as it grows (:func:`parse_module`'s
    ``trees``; a decoder re-reading its block): the items already written are then not matched
    again.
    """

    def __init__(self, max_tokens: int = MEMO_MAX_TOKENS, size: int = MEMO_SIZE) -> None:
        self._trees: dict[str, Tree] = {}
        self._failed: dict[str, Outcome] = {}
        self.max_tokens, self.size = max_tokens, size

    def get(self, text: str) -> Tree | None:
        """The tree matched for ``text`` earlier in this module, or ``None``."""
        node = self._trees.pop(text, None)
        if node is not None:
            self._trees[text] = node  # most recently used last
        return node

    def put(self, text: str, node: Tree, tokens: int) -> None:
        """Remember ``node`` for ``text`` when the item has at most ``max_tokens`` tokens."""
        if tokens > self.max_tokens:
            return
        if len(self._trees) >= self.size:
            del self._trees[next(iter(self._trees))]
        self._trees[text] = node

    def failure(self, text: str) -> Outcome | None:
        """What the match of ``text`` said when it failed earlier in this module, or ``None``."""
        outcome = self._failed.pop(text, None)
        if outcome is not None:
            self._failed[text] = outcome  # most recently used last
        return outcome

    def put_failure(self, text: str, outcome: Outcome, tokens: int) -> None:
        """Remember a failed match's ``outcome`` when the item has at most ``max_tokens`` tokens."""
        if tokens > self.max_tokens:
            return
        if len(self._failed) >= self.size:
            del self._failed[next(iter(self._failed))]
        self._failed[text] = outcome


#: closes every joined text; no terminal matches it, so the grammar's optional and repeated
#: parts are still tried (and recorded as expected) at the end of an item
END_CODE: Final = "EOI "


def joined_text(tokens: tuple[Token, ...] | list[Token]) -> tuple[str, dict[int, int]]:
    """The tokens' codes, each followed by one space, then :data:`END_CODE`; and the map from
    a code's position (or the end marker's) to its token index."""
    index: dict[int, int] = {}
    pos = 0
    for i, tok in enumerate(tokens):
        index[pos] = i
        pos += len(tok.code) + 1
    index[pos] = len(tokens)
    return "".join(t.code + " " for t in tokens) + END_CODE, index


def parse_module(
    source: SourceFile, sink: DiagnosticSink, trees: TreeMemo | None = None, *, give_up: bool = False
) -> syntax.Module:
    """Lex and parse ``source`` item by item, reporting into ``sink``.

    ``trees``: a memo shared with earlier parses (see :class:`TreeMemo`); by default one fresh
    for this module. ``give_up``: when some item is nested deeper than this thread's stack
    allows, mark the sink incomplete and parse nothing (:func:`vox_lang.check` then checks
    the whole module again in a child process, so parsing the rest here is wasted).

    Items holding lexical, bracket or markup errors, nesting beyond 200 levels (E0206) or a
    syntax error are left out of the returned module. An item nested deeper than this
    thread's stack allows (:mod:`vox_lang.depth`) is left out too and marks the sink
    :attr:`~DiagnosticSink.incomplete` (:func:`vox_lang.check` then reruns in a child process
    with a deep stack). Never raises for any input; changes no process-wide setting.
    """
    layout = tokenize(source, sink)
    budget = level_budget(PARSE_FRAMES_PER_LEVEL)
    items: list[syntax.Item] = []
    trees = trees if trees is not None else TreeMemo()
    if give_up:
        deep = next((item for item in layout.items if item.parse and item.depth > budget), None)
        if deep is not None:
            out_of_budget(sink, deep.tokens[0].span)
            return syntax.Module((), Span(0, len(source.text)))
    for item in layout.items:
        if not item.parse:
            continue
        if item.depth > budget:
            out_of_budget(sink, item.tokens[0].span)
            continue
        node = parse_item(item, sink, trees)
        if node is not None:
            items.append(node)
    return syntax.Module(tuple(items), Span(0, len(source.text)))


def parse_item(item: Item, sink: DiagnosticSink, trees: TreeMemo | None = None) -> syntax.Item | None:
    """Parse one item; on a syntax error report it and return ``None``.

    Running out of stack is E0206 when the process's stack is as deep as the front end ever
    gets (the child process of :mod:`vox_lang.deep`), else it marks the sink incomplete.
    ``trees``, shared by the items of one module, spares matching a shape seen before.
    """
    try:
        return _parse(item, sink, trees if trees is not None else TreeMemo())
    except (RecursionError, MemoryError):
        if level_budget(PARSE_FRAMES_PER_LEVEL) >= MAX_DEPTH:
            sink.report(codes.E0206, item.tokens[0].span)
        else:
            out_of_budget(sink, item.tokens[0].span)
        return None


def _parse(item: Item, sink: DiagnosticSink, trees: TreeMemo) -> syntax.Item | None:
    text, index = joined_text(item.tokens)
    node = trees.get(text)
    if node is None:
        if trees.failure(text) is None:  # else this shape failed before: report it again
            node = match_item(text)
        if node is None or node[2] < len(text) - len(END_CODE):
            _report(item, text, index, sink, trees)
            return None
        trees.put(text, node, len(item.tokens))
    built: syntax.Item = AstBuilder(item.tokens, index, sink).visit(node)  # visit() returns Any
    return built


def _report(item: Item, text: str, index: dict[int, int], sink: DiagnosticSink, trees: TreeMemo) -> None:
    """E0201/E0202 for an item that does not parse, from a match with the grammar itself: its
    packrat cache records every terminal tried (the predictive match skips most of them)."""
    grammar, expectations = load_grammar()
    outcome = trees.failure(text)
    if outcome is None:
        cache: defaultdict[int, dict[int, Any]] = defaultdict(dict)
        # parsimonious 0.11 keeps its packrat cache as {id(expr): {pos: node}} and returns None
        # on a failed match; types-parsimonious describes another signature, hence the cast
        node = cast(Any, grammar["item"]).match_core(text, 0, cache, ParseError(text))
        outcome = expectations.outcome(cache, node)
        trees.put_failure(text, outcome, len(item.tokens))
    expectations.report(item, index, outcome, sink)
