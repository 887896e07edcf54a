"""Route targets (pipeline.decoding_routes): only a function serving the path's segments."""

from __future__ import annotations

import pytest

from pipeline.decoding_routes import route_refusals
from tests.pipeline.test_decoding_names import _first_blocked

_PAGES = ('fn Home() to Element {\n  ret text(value="home")\n}\n\n'
          'fn Post(slug: str) to Element {\n  ret heading(text=slug)\n}\n\n'
          'fn Card(title: str, children: List[Element]) to Element {\n'
          '  ret card(padding=1) {\n    children\n  }\n}\n\n')


@pytest.mark.parametrize(("path", "refused", "allowed"), [
    ("/", {"Post", "Card", "button", "print", "Some"}, {"Home"}),
    ("/posts/:slug", {"Home", "Card", "text"}, {"Post"}),
    ("/cards/:id", {"button", "not", "true"}, {"Home", "Post", "Card"}),  # none fits: no dead end
])
def test_a_target_must_serve_the_path(path: str, refused: set[str], allowed: set[str]) -> None:
    got = route_refusals(_PAGES + f'routes {{\n  "{path}" to ')
    assert refused <= got and not allowed & got


@pytest.mark.parametrize("end", [
    'routes {\n  "/" to\n    ',                       # the target on the line after `to` (L2)
    'routes {\n  "/a" to Home "/" to ',               # a second route on the same line
    'routes {\n  "/" to Home", garbage(x) " to\n\n  ',  # a path string that swallowed the line
])
def test_a_target_anywhere_in_a_routes_block(end: str) -> None:
    got = route_refusals(_PAGES + end)
    assert {"Post", "button", "print", "None"} <= got and "Home" not in got


def test_nothing_is_refused_elsewhere() -> None:
    assert route_refusals(_PAGES + "fn f() to Element {\n  ret ") == frozenset()
    assert route_refusals('routes {\n  "/a" to') == frozenset()  # `to` still being written
    assert route_refusals('fn f() to str {\n  let s = g("/" to ') == frozenset()  # not in a routes block


@pytest.mark.parametrize(("src", "refused_after"), [
    (_PAGES + 'routes {\n  "/" to Post\n}\n', '"/" to'),                           # E0521: takes `slug`
    (_PAGES + 'routes {\n  "/" to button\n}\n', '"/" to'),                         # a view element
])
def test_wrong_targets_are_refused_token_by_token(src: str, refused_after: str) -> None:
    blocked = _first_blocked(src)
    assert blocked is not None and refused_after in blocked.split("' + '")[0], blocked


def test_fitting_targets_pass() -> None:
    import vox_lang

    src = _PAGES + 'routes {\n  "/" to Home\n  "/posts/:slug" to Post\n}\n'
    assert vox_lang.check(src, strict=True).ok
    assert _first_blocked(src) is None
