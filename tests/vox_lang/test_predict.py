"""The predictive copy of the grammar (:mod:`vox_lang.predict`) must match exactly what
parsimonious matches with the grammar itself: the same tree for every item that parses, no
tree for every item that does not."""

from __future__ import annotations

import random
from collections import defaultdict
from pathlib import Path
from typing import Any, cast

import pytest
from parsimonious.exceptions import ParseError
from parsimonious.expressions import Literal, Regex
from parsimonious.grammar import Grammar
from parsimonious.nodes import Node

from vox_lang.diagnostics import DiagnosticSink
from vox_lang.layout import tokenize
from vox_lang.parser import VOCABULARY, compile_grammar, joined_text, load_grammar, match_item
from vox_lang.predict import Tree, token_codes
from vox_lang.predict_build import GrammarShapeError, build
from vox_lang.source import SourceFile

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted((ROOT / "tests" / "vox_lang" / "cases").glob("*.vox")) + sorted((ROOT / "examples").glob("*.vox"))


Shape = list[tuple[str, int, int, int, bool]]


def _shape(node: Node) -> Shape:
    """Each node of parsimonious's tree, depth first: rule name, span, number of children,
    terminal?"""
    out = []
    stack = [node]
    while stack:
        n = stack.pop()
        out.append((n.expr.name, n.start, n.end, len(n.children), isinstance(n.expr, (Literal, Regex))))
        stack.extend(reversed(n.children))
    return out


def _tree_shape(node: Tree) -> Shape:
    """:func:`_shape` of a predictive match's tree."""
    out = []
    stack = [node]
    while stack:
        name, start, end, children = stack.pop()
        out.append((name, start, end, len(children or ()), children is None))
        stack.extend(reversed(children or ()))
    return out


def _items(text: str) -> list[str]:
    source = SourceFile(text)
    return [joined_text(item.tokens)[0] for item in tokenize(source, DiagnosticSink(source)).items
            if item.parse and item.depth <= 20]


def _same_as_parsimonious(joined: str) -> bool:
    """Assert the two matches agree; True when the item parsed."""
    exact = cast(Any, load_grammar()[0]["item"]).match_core(joined, 0, defaultdict(dict), ParseError(joined))
    fast = match_item(joined)
    assert (exact is None) == (fast is None), joined
    if exact is None or fast is None:
        return False
    assert _shape(exact) == _tree_shape(fast), joined
    return True


def test_every_item_of_the_cases_and_examples_matches_as_with_parsimonious() -> None:
    parsed = failed = 0
    for path in SOURCES:
        for joined in _items(path.read_text(encoding="utf-8", errors="replace")):
            if _same_as_parsimonious(joined):
                parsed += 1
            else:
                failed += 1
    assert parsed > 500 and failed > 5  # both kinds were compared


@pytest.mark.parametrize("seed", range(10))
def test_items_with_random_edits_match_as_with_parsimonious(seed: int) -> None:
    rng = random.Random(seed)
    words = ["(", ")", "{", "}", "[", "]", ",", ".", ":", "=", "->", "to", "fn", "let", "if", "else", "match",
             "\n", "x", "1", '"s"', "|", "?", "ret", "for", "in", "not", "-", "@d", "_", "=>", "{}", "f(a=1)"]
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in SOURCES]
    for _ in range(40):
        text = rng.choice(texts)
        for _ in range(rng.randint(1, 4)):
            k = rng.randrange(len(text) + 1)
            if rng.random() < 0.6:
                text = text[:k] + " " + rng.choice(words) + " " + text[k:]
            else:
                text = text[:k] + text[k + rng.randint(1, 5):]
        for joined in _items(text):
            _same_as_parsimonious(joined)


def _grammar(text: str) -> Grammar:
    return compile_grammar(text)


def test_a_left_recursive_rule_is_refused() -> None:
    grammar = _grammar('item = item "," NAME / NAME\nNAME = "NAME"\n')
    with pytest.raises(GrammarShapeError, match="left recursion"):
        build(grammar["item"], VOCABULARY)


def test_a_regex_that_stops_inside_a_token_is_refused() -> None:
    grammar = _grammar('item = pair\npair = ~"NAME|INT "\n')
    with pytest.raises(GrammarShapeError, match="part of a token"):
        build(grammar["item"], VOCABULARY)


def test_a_regex_spanning_tokens_is_predicted_by_its_first_token() -> None:
    grammar = _grammar('item = pair / NAME\npair = ~"NAME INT "\nNAME = "NAME"\n')
    fast = build(grammar["item"], VOCABULARY)
    for joined in ("NAME INT EOI ", "NAME EOI ", "INT EOI "):
        exact = cast(Any, grammar["item"]).match_core(joined, 0, defaultdict(dict), ParseError(joined))
        got = fast.match_at(joined, 0, {}, token_codes(joined, VOCABULARY), [])
        assert (exact is None) == (got is None)
        if exact is not None and got is not None:
            assert _shape(exact) == _tree_shape(got)
