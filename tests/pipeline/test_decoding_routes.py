"""Route targets (pipeline.decoding_routes): only a function serving the path's segments; the paths
the request gives are forced at route starts."""

from __future__ import annotations

import re

import pytest

from pipeline.decoding_routes import requested_paths, route_refusals, route_start, written_paths
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


@pytest.mark.parametrize(("request_text", "paths"), [
    ('Create a page `Profile(user: str) to Element` and route "/users/:user" to it.', ("/users/:user",)),
    ("Make `Home` at `/` and `Post` at `/posts/:slug`, and wire them up with `routes`.", ("/", "/posts/:slug")),
    ("Dashboard request: 4 cards for the fleet team, route /fleet.", ("/fleet",)),
    ('A page routed at "/a" and again "/a".', ("/a",)),
    ("Read /etc/hosts and print each line.", ()),          # no route spoken of: a file's path
    ("Write `route_total(xs: List[int]) to int` that sums xs.", ()),
    ("A routes block where a / b is not a path.", ()),      # a bare `/` is arithmetic
])
def test_requested_paths(request_text: str, paths: tuple[str, ...]) -> None:
    assert requested_paths(request_text) == paths


@pytest.mark.parametrize(("code", "start"), [
    ("routes {\n", True),
    ("routes {\n ", True),                  # a token such as "\n " brings the first space of the line
    (_PAGES + 'routes {\n  "/" to Home\n', True),
    ('routes {\n  "/" to\n', False),        # the target may stand on the next line (L2)
    ('routes {\n  "/" to Home', False),     # not a fresh line
    ("fn f() {\n", False),
    ('fn f() {\n  routes {\n', False),      # not a top-level routes block
])
def test_route_start(code: str, start: bool) -> None:
    assert route_start(code) is start


def test_written_paths() -> None:
    assert written_paths('routes {\n  "/" to Home\n  "/posts/:slug" to Post\n') == {"/", "/posts/:slug"}


def _drive_routes(request: str, prefix: str, steps: int = 40) -> str:
    """Teacher-force "```vox\\n" + ``prefix``, then let the grammar and the name mask (with the
    request's extras) pick from seeded random scores; the text after ``prefix``."""
    import torch

    from pipeline.decoding_done import request_extras
    from pipeline.decoding_names import NameMask, token_table
    from tests.pipeline.test_decoding_names import _helpers, tokenizer
    from vox_lang.requests import extract_request

    tok = tokenizer()
    gen = torch.Generator().manual_seed(0)
    prompt = [1, 2]
    grammar = _helpers.grammar().processor(1, len(prompt), "response")
    proc = NameMask(tok, token_table(tok), [extract_request(request)], len(prompt), eos_ids=[tok.eos_token_id],
                    extras=[request_extras(request)])
    ids = list(prompt)
    forced = tok.encode("```vox\n" + prefix, add_special_tokens=False)
    for i in range(len(forced) + steps):
        scores = proc(torch.tensor([ids]), grammar(torch.tensor([ids]), torch.rand(1, len(tok), generator=gen)))
        assert bool(torch.isfinite(scores[0]).any()), "dead end"
        token = forced[i] if i < len(forced) else int(scores[0].argmax())
        assert bool(torch.isfinite(scores[0, token])), repr(tok.decode(ids[len(prompt):] + [token]))
        ids.append(token)
    return tok.decode(ids[len(prompt):]).removeprefix("```vox\n")[len(prefix):]


def test_the_requested_paths_are_forced_at_route_starts() -> None:
    request = 'Create a home page and a post page, routed at "/" and "/posts/:slug".'  # no item named
    after = _drive_routes(request, _PAGES + "routes {\n")
    assert after.startswith('  "/" to'), after
    after = _drive_routes(request, _PAGES + 'routes {\n  "/" to Home\n')
    assert after.startswith('  "/posts/:slug" to'), after
    # every requested path written: the block closes
    done = _drive_routes(request, _PAGES + 'routes {\n  "/" to Home\n  "/posts/:slug" to Post\n', steps=3)
    assert done.startswith("}"), done


def test_a_path_is_forced_on_a_line_begun_by_an_indented_line_break() -> None:
    request = 'Create a home page and a post page, routed at "/" and "/posts/:slug".'
    assert _drive_routes(request, _PAGES + "routes {\n ").startswith(' "/" to')  # the second space, then the route


def test_a_path_is_forced_after_the_requested_items() -> None:
    request = 'Create a profile page component `Profile(user: str) to Element` and route "/users/:user" to it.'
    page = "fn Profile(user: str) to Element {\n  ret text(value=user)\n}\n\n"
    after = _drive_routes(request, page + "routes {\n", steps=40)
    assert re.match(r'  "/users/:user" to\s+Profile\b', after), after  # the target then serves the path
    # no routes block is opened for it
    after = _drive_routes(request, page.rstrip() + "\n", steps=12)
    assert "routes" not in after, after


def test_no_path_is_forced_without_one_in_the_request() -> None:
    after = _drive_routes("Create a home page and wire it up with routes.", _PAGES + "routes {\n", steps=4)
    assert not after.startswith('  "/" to'), after
