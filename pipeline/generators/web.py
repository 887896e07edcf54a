"""UI generators: the organic ``views`` family (view functions returning ``Element``, routes)
and the synthetic web pairs (a UI request in plain words -> pages + ``routes``)."""

from __future__ import annotations

import random

from pipeline.generators.base import Program, a_, ask, lines, pick
from pipeline.generators.themes import Theme


def _card(t: Theme, name: str) -> str:
    return lines(f"fn {name}({t.label}: str, {t.count}: int) to Element {{", "  ret card(padding=2) {",
                 f"    heading(text={t.label})", f"    text(value=str({t.count}) + \" {t.count}\")", "  }", "}")


def views(rng: random.Random, t: Theme) -> Program:
    """Family ``views``: components, element lists, forms, children parameters, routes."""
    kind = rng.choice(("card", "list", "routes", "form", "badge", "children"))
    if kind == "card":
        name = pick(rng, f"{t.E}Card", f"{t.E}Tile")
        what = f"write a view function `{name}` that shows a {t.e}'s {t.label} as a heading and its {t.count} as text in a card"
        return Program(_card(t, name), (ask(rng, what),), "view_component", 1,
                       "View calls take named arguments; the child block lists the card's contents.")
    if kind == "list":
        row, page = f"{t.E}Row", pick(rng, f"{t.E}List", f"All{t.E}s")
        v = t.e[0]
        code = lines(t.record_decl(), "", f"fn {row}({v}: {t.E}) to Element {{", "  ret row(gap=1) {",
                     f"    text(value={v}.{t.label})", f"    text(value=str({v}.{t.amount}))", "  }", "}", "",
                     f"fn {page}({t.es}: List[{t.E}]) to Element {{", "  let mut rows: List[Element] = []",
                     f"  for {v} in {t.es} {{ rows.push({row}({v})) }}", f"  ret column(gap={rng.choice((1, 2, 3))}) {{",
                     f"    heading(text=\"{t.es.capitalize()}\")", "    rows", "  }", "}")
        what = f"render a list of {t.E} records as a column of rows ({t.label} and {t.amount}) under a heading"
        return Program(code, (ask(rng, what),), "view_list", 2,
                       "A `List[Element]` child is spliced into the column.")
    if kind == "routes":
        home, page = pick(rng, f"{t.E}Home", f"{t.es.capitalize()}Index"), f"{t.E}Page"
        param = pick(rng, "id", t.label, "slug")
        action = pick(rng, "open", "edit", "archive")
        code = lines(f"fn {home}() to Element {{", "  ret column(gap=2) {", f"    heading(text=\"{t.es.capitalize()}\")",
                     f"    link(href=\"/{t.es}/{t.sample[0]}\", label=\"{t.sample[0]}\")", "  }", "}", "",
                     f"fn {page}({param}: str) to Element {{", "  ret column(gap=1) {",
                     f"    heading(text=\"{t.E} \" + {param})", f"    button(label=\"{action.capitalize()}\", action=\"{action}_{t.e}\")",
                     "    link(href=\"/\", label=\"Back\")", "  }", "}", "",
                     "routes {", f"  \"/\" to {home}", f"  \"/{t.es}/:{param}\" to {page}", "}")
        what = f"make two pages, `{home}` at `/` and `{page}` at `/{t.es}/:{param}`, and wire them up with `routes`"
        return Program(code, (ask(rng, what),), "view_routes", 2,
                       f"The route's `:{param}` segment becomes the page's `str` parameter.")
    if kind == "form":
        name = pick(rng, f"New{t.E}Form", f"{t.E}Editor")
        code = lines(f"fn {name}() to Element {{", "  ret column(gap=1) {", f"    heading(text=\"New {t.e}\")",
                     f"    input(name=\"{t.label}\", placeholder=\"{t.label.capitalize()}\")",
                     f"    input(name=\"{t.count}\", placeholder=\"{t.count.capitalize()}\")",
                     f"    button(label=\"Save\", action=\"save_{t.e}\")", "  }", "}")
        what = f"write a form view `{name}` with inputs for {t.label} and {t.count} and a Save button"
        return Program(code, (ask(rng, what),), "view_form", 1, "Form fields are `input` elements with named arguments.")
    if kind == "badge":
        name = pick(rng, f"{t.E}Badge", f"{t.E}Stock")
        code = lines(f"fn {name}({t.count}: int) to Element {{", f"  if {t.count} == 0 {{",
                     "    ret text(value=\"none left\")", "  }", f"  ret text(value=str({t.count}) + \" left\")", "}")
        what = f"write `{name}`, a view that shows \"none left\" when {t.count} is zero and the number left otherwise"
        return Program(code, (ask(rng, what),), "view_conditional", 1, "Both paths `ret` an Element.")
    panel = pick(rng, "Panel", "Section", "Box")
    name = f"{t.E}{panel}"
    code = lines(f"fn {panel}(title: str, children: List[Element]) to Element {{", "  ret card(padding=1) {",
                 "    heading(text=title)", "    children", "  }", "}", "",
                 f"fn {name}() to Element {{", f"  ret {panel}(title=\"{t.es.capitalize()}\") {{",
                 *(f"    text(value=\"{s}\")" for s in t.sample), "  }", "}")
    what = f"write a reusable `{panel}` view that takes a title and child elements, and use it in `{name}` to list three {t.es}"
    return Program(code, (ask(rng, what),), "view_children", 2,
                   "A `children: List[Element]` parameter receives the child block of a view call.")


def web_pairs(rng: random.Random, t: Theme) -> Program:
    """Synthetic ``web`` pairs: a UI request in plain words answered by pages and routes."""
    return rng.choice((_dashboard, _nested, _search, _nav, _form_page, _gallery))(rng, t)


def _buttons(rng: random.Random, t: Theme, n: int) -> list[tuple[str, str]]:
    verbs = rng.sample(("Edit", "Delete", "Share", "Archive", "Duplicate", "Export", "Pin"), n)
    return [(v, f"{v.lower()}_{t.e}") for v in verbs]


def _route(path: str, page: str) -> str:
    return f"  \"{path}\" to {page}"


def _dashboard(rng: random.Random, t: Theme) -> Program:
    cap_es = t.es.capitalize()
    name = pick(rng, f"{t.E}Dashboard", f"{cap_es}Overview", f"{t.E}Stats")
    pool = [f"Total {t.count}", f"Average {t.amount}", f"{t.variants[1].name} now", f"{t.variants[2].name} today",
            f"Active {t.es}", f"New {t.es}"]
    stats = [(lab, str(rng.randint(1, 400))) for lab in rng.sample(pool, rng.randint(2, 4))]
    stat_fn = pick(rng, "Stat", "Metric", "Kpi", "StatCard")
    path = pick(rng, "/dashboard", f"/{t.es}/dashboard", "/overview", f"/{t.key}")
    code = lines(f"fn {stat_fn}(label: str, value: str) to Element {{", f"  ret card(padding={rng.randint(1, 3)}) {{",
                 "    text(value=label)", "    heading(text=value)", "  }", "}", "",
                 f"fn {name}() to Element {{", f"  ret grid(columns={len(stats)}) {{",
                 *(f"    {stat_fn}(label=\"{lab}\", value=\"{val}\")" for lab, val in stats), "  }", "}", "",
                 "routes {", _route(path, name), "}")
    listing = ", ".join(lab.lower() for lab, _ in stats)
    prompt = pick(rng, f"I need a dashboard page for our {t.es} at {path} with {len(stats)} stat cards: {listing}.",
                  f"Build a small {t.es} overview screen served at {path}. It should show {len(stats)} metric cards in a grid ({listing}).",
                  f"Dashboard request: {len(stats)} cards ({listing}) for the {t.key} team, route {path}.")
    return Program(code, (prompt,), "web_dashboard", 2, f"`{stat_fn}` is a reusable card; `{name}` arranges {len(stats)} of them in a grid.")


def _nested(rng: random.Random, t: Theme) -> Program:
    page = pick(rng, f"{t.E}Detail", f"{t.E}View", f"{t.E}Screen")
    group, ident = pick(rng, "group", "team", "region", "site"), pick(rng, "id", "code", "ref")
    btns = _buttons(rng, t, rng.randint(1, 3))
    code = lines(f"fn {page}({group}: str, {ident}: str) to Element {{", f"  ret column(gap={rng.randint(1, 3)}) {{",
                 f"    heading(text=\"{t.E} \" + {ident})", f"    text(value=\"{pick(rng, 'in', 'part of', 'from')} \" + {group})",
                 "    row(gap=1) {", *(f"      button(label=\"{b}\", action=\"{a}\")" for b, a in btns), "    }",
                 "  }", "}", "", "routes {", _route(f"/{group}s/:{group}/{t.es}/:{ident}", page), "}")
    blist = " and ".join(b for b, _ in btns)
    prompt = pick(rng, f"Add a detail page for a {t.e} at /{group}s/:{group}/{t.es}/:{ident} with its {ident} as the title, the {group} underneath, and {blist} buttons in a row.",
                  f"Our app needs a page per {t.e} inside a {group} (URL /{group}s/:{group}/{t.es}/:{ident}). Show the {ident}, the {group} name, and the buttons {blist}.")
    return Program(code, (prompt,), "web_nested_route", 2, "A route with two `:name` segments targets a page with two `str` parameters, in order.")


def _search(rng: random.Random, t: Theme) -> Program:
    page = pick(rng, f"{t.E}Search", f"Find{t.E}", f"{t.E}Lookup")
    label = pick(rng, "Search", "Find", "Go", "Look up")
    field_name = pick(rng, "query", "q", "term")
    path = pick(rng, f"/{t.es}/search", "/search", f"/find-{t.e}")
    tip = rng.random() < 0.5
    code = lines(f"fn {page}() to Element {{", "  ret column(gap=1) {", f"    heading(text=\"Find {a_(t.e)}\")",
                 f"    input(name=\"{field_name}\", placeholder=\"Search {t.es} by {t.label}\")",
                 f"    button(label=\"{label}\", action=\"search_{t.es}\")",
                 f"    text(value=\"Tip: try {t.sample[rng.randint(0, 2)]}\")" if tip else None, "  }", "}", "",
                 "routes {", _route(path, page), "}")
    prompt = pick(rng, f"Make a search screen for {t.es}: a heading, one search box and a {label} button, served at {path}.",
                  f"Users should be able to look up {t.es} by {t.label}. Put a search page at {path} with an input and a button{' plus a short tip' if tip else ''}.")
    return Program(code, (prompt,), "web_search", 1, "The page takes no parameters because its path has no `:name` segment.")


def _nav(rng: random.Random, t: Theme) -> Program:
    nav, home = pick(rng, "NavBar", "TopNav", "Menu"), f"{t.es.capitalize()}Home"
    other, other_path = rng.choice((("AboutPage", "/about"), ("ContactPage", "/contact"), ("HelpPage", "/help"),
                                    ("PricingPage", "/pricing")))
    word = other_path[1:]
    code = lines(f"fn {nav}() to Element {{", f"  ret row(gap={rng.randint(1, 3)}) {{", "    link(href=\"/\", label=\"Home\")",
                 f"    link(href=\"{other_path}\", label=\"{word.capitalize()}\")", "  }", "}", "",
                 f"fn {home}() to Element {{", "  ret column(gap=1) {", f"    {nav}()", f"    heading(text=\"{t.es.capitalize()}\")", "  }", "}", "",
                 f"fn {other}() to Element {{", "  ret column(gap=1) {", f"    {nav}()",
                 f"    text(value=\"{pick(rng, 'We look after', 'All about', 'Questions about')} {t.es}.\")", "  }", "}", "",
                 "routes {", _route("/", home), _route(other_path, other), "}")
    prompt = pick(rng, f"Create a two-page {t.es} site (home and {word}) that share a navigation bar with links to both.",
                  f"I want a tiny website about {t.es}: a home page and a {word} page, each starting with the same nav row.")
    return Program(code, (prompt,), "web_nav", 2, f"`{nav}` is an ordinary function returning an Element, reused by both pages.")


def _form_page(rng: random.Random, t: Theme) -> Program:
    page = pick(rng, f"Edit{t.E}", f"{t.E}Form", f"Register{t.E}")
    ident = pick(rng, "id", "slug")
    fields = rng.sample((t.label, t.count, t.amount, "notes"), rng.randint(2, 4))
    save = pick(rng, "Save", "Submit", "Update")
    code = lines(f"fn {page}({ident}: str) to Element {{", f"  ret column(gap={rng.randint(1, 2)}) {{",
                 f"    heading(text=\"{t.E} \" + {ident})",
                 *(f"    input(name=\"{f}\", placeholder=\"{f.replace('_', ' ').capitalize()}\")" for f in fields),
                 f"    button(label=\"{save}\", action=\"save_{t.e}\")", "  }", "}", "",
                 "routes {", _route(f"/{t.es}/:{ident}/edit", page), "}")
    prompt = pick(rng, f"Give me an edit form for one {t.e} at /{t.es}/:{ident}/edit with fields {', '.join(fields)} and a {save} button.",
                  f"We need to edit {t.es} in the browser: a page at /{t.es}/:{ident}/edit showing inputs for {', '.join(fields)}.")
    return Program(code, (prompt,), "web_form", 2, f"The `:{ident}` segment arrives as the page's `str` parameter.")


def _gallery(rng: random.Random, t: Theme) -> Program:
    page = pick(rng, f"{t.E}Gallery", f"{t.es.capitalize()}Grid")
    tile = pick(rng, "Tile", "Thumb", "Preview")
    cols = rng.randint(2, 4)
    code = lines(f"fn {tile}(name: str) to Element {{", "  ret card(padding=1) {",
                 "    image(src=\"/img/\" + name + \".png\", alt=name)", "    text(value=name)", "  }", "}", "",
                 f"fn {page}() to Element {{", f"  let names = [{', '.join(chr(34) + s + chr(34) for s in t.sample)}]",
                 "  let mut tiles: List[Element] = []", f"  for n in names {{ tiles.push({tile}(n)) }}",
                 f"  ret grid(columns={cols}) {{", "    tiles", "  }", "}", "", "routes {", _route(f"/{t.es}/gallery", page), "}")
    prompt = pick(rng, f"Show pictures of our {t.es} ({', '.join(t.sample)}) in a {cols}-column grid at /{t.es}/gallery, each with its name.",
                  f"Build a gallery page for {t.es}: one card per item with an image and a caption, {cols} per row.")
    return Program(code, (prompt,), "web_gallery", 2, "The tiles are built in a loop and spliced into the grid as a `List[Element]` child.")


__all__ = ["views", "web_pairs"]
