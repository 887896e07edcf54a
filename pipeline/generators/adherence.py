"""Organic family ``adherence``: requests that state a signature or names, answered by a program
that declares exactly those (issue 9 item 7).

The other families name their items after the theme; here the names are composed afresh for
every program (a verb from :data:`VERBS` plus a theme word, parameters from :data:`PARAMS`),
and the prompt is phrased the way users ask (a backticked signature, "an actor `X` with a
handler `h(...)`", a record type and a function over it), so the model learns to copy what the
request names instead of recalling names from other programs. Bodies are small and typed by
the signature (the program must pass the compiler gate like every other family).
"""

from __future__ import annotations

import random
from typing import Final

from pipeline.generators.base import Program, a_, lines, pick
from pipeline.generators.themes import Theme

#: verbs for function names (``<verb>_<theme word>``); none is a name an eval task asks for
VERBS: Final = ("tally", "measure", "rank", "score", "grade", "weigh", "scan", "check", "pick", "merge", "split",
                "trim", "shift", "boost", "cap", "flag", "mark", "sort_of", "estimate", "project", "summarize",
                "audit", "probe", "inspect", "normalize", "bucket", "sample", "index", "tag", "route")
#: parameter names by type
PARAMS: Final[dict[str, tuple[str, ...]]] = {
    "int": ("n", "limit", "step", "amount", "size", "offset", "k", "qty", "minimum", "width"),
    "float": ("x", "ratio", "factor", "weight", "base", "value"),
    "str": ("text", "name", "key", "label_text", "word", "code"),
    "bool": ("enabled", "strict", "flag_on"),
    "List[int]": ("values", "counts", "numbers", "xs"),
    "List[str]": ("names", "words", "keys", "items"),
}
RETURNS: Final = ("int", "float", "str", "bool", "List[int]", "int", "str")

_ASK_SIG: Final = (
    "Write a Vox function `{sig}` that {does}.",
    "I need `{sig}` in Vox: it {does}.",
    "vox: `{sig}` which {does}",
    "Can you write `{sig}`? It {does}.",
    "Implement `{sig}` in Vox; it {does}.",
    "Please write `{sig}` ({does}).",
)


def _params(rng: random.Random, ret: str) -> list[tuple[str, str]]:
    """1-3 distinct ``(name, type)`` parameters; the first suits the return type's body."""
    first = {"int": rng.choice(("int", "List[int]", "str")), "float": rng.choice(("float", "int")),
             "str": rng.choice(("str", "int", "List[str]")), "bool": rng.choice(("int", "str", "List[int]")),
             "List[int]": "List[int]"}[ret]
    types = [first] + [rng.choice(list(PARAMS)) for _ in range(rng.randint(0, 2))]
    out: list[tuple[str, str]] = []
    used: set[str] = set()
    for ty in types:
        name = rng.choice([p for p in PARAMS[ty] if p not in used] or [f"arg{len(out)}"])
        used.add(name)
        out.append((name, ty))
    return out


def _body(rng: random.Random, ret: str, params: list[tuple[str, str]]) -> tuple[list[str], str]:
    """Body lines (indented) and a phrase saying what it does, from the first parameter."""
    p, ty = params[0]
    if ret == "int" and ty == "int":
        k = rng.randint(2, 9)
        return [f"  ret {p} * {k}"], f"returns {p} times {k}"
    if ret == "int" and ty == "List[int]":
        return ["  let mut total = 0", f"  for v in {p} {{", "    total += v", "  }", "  ret total"], \
            f"adds up the numbers in {p}"
    if ret == "int":
        return [f"  ret len({p})"], f"returns the length of {p}"
    if ret == "float" and ty == "float":
        factor = rng.choice(("0.5", "1.5", "2.0", "10.0"))
        return [f"  ret {p} * {factor}"], f"returns {p} multiplied by {factor}"
    if ret == "float":
        return [f"  ret float({p}) / 2.0"], f"returns half of {p} as a float"
    if ret == "str" and ty == "str":
        suffix = rng.choice(("!", "?", " done", " ok"))
        return [f"  ret {p} + \"{suffix}\""], f"returns {p} followed by \"{suffix}\""
    if ret == "str" and ty == "List[str]":
        sep = rng.choice((", ", "-", " "))
        return [f"  ret {p}.join(\"{sep}\")"], f"joins {p} with \"{sep}\""
    if ret == "str":
        return [f"  ret \"#\" + str({p})"], f"returns {p} as text with a leading #"
    if ret == "bool" and ty == "int":
        k = rng.randint(0, 50)
        return [f"  ret {p} > {k}"], f"tells whether {p} is above {k}"
    if ret == "bool" and ty == "str":
        return [f"  ret {p} != \"\""], f"is true when {p} is not empty"
    if ret == "bool":
        return [f"  ret len({p}) > 0"], f"is true when {p} has elements"
    k = rng.randint(0, 9)
    return ["  let mut out: List[int] = []", f"  for v in {p} {{", f"    if v > {k} {{ out.push(v) }}", "  }",
            "  ret out"], f"keeps the numbers of {p} greater than {k}"


def _signature(rng: random.Random, t: Theme) -> Program:
    ret = rng.choice(RETURNS)
    params = _params(rng, ret)
    name = f"{rng.choice(VERBS)}_{rng.choice((t.es, t.e, t.label, t.count, t.amount))}"
    sig = f"{name}({', '.join(f'{p}: {ty}' for p, ty in params)}) to {ret}"
    body, does = _body(rng, ret, params)
    code = lines(f"fn {sig} {{", *body, "}")
    prompts = (pick(rng, *_ASK_SIG).format(sig=sig, does=does),
               f"In Vox, write a function named `{name}` taking {', '.join(f'{p} ({ty})' for p, ty in params)} "
               f"and returning {ret}: it {does}.")
    return Program(code, prompts, "adherence_signature", 1, f"`{name}` has exactly the signature you asked for.")


def _record(rng: random.Random, t: Theme) -> Program:
    tname = rng.choice((f"{t.E}Info", f"{t.E}Row", f"{t.E}Card", f"{t.E}Entry"))
    fname = f"{rng.choice(VERBS)}_{t.e}"
    arg = rng.choice(("r", "row", "item", t.e))
    kind = rng.choice(("count", "amount", "label"))
    if kind == "count":
        ret, body, does = "int", f"  ret {arg}.{t.count} + 1", f"returns its {t.count} plus one"
    elif kind == "amount":
        ret, body, does = "float", f"  ret {arg}.{t.amount} * 2.0", f"doubles its {t.amount}"
    else:
        ret, body, does = "str", f"  ret \"[\" + {arg}.{t.label} + \"]\"", f"wraps its {t.label} in brackets"
    decl = f"type {tname} = {{ {t.label}: str, {t.count}: int, {t.amount}: float }}"
    code = lines(decl, "", f"fn {fname}({arg}: {tname}) to {ret} {{", body, "}")
    prompt = pick(rng, f"Define a record type `{tname}` with {t.label} (str), {t.count} (int) and {t.amount} (float), "
                       f"then a function `{fname}` that takes one and {does}.",
                  f"Make `type {tname} = {{ {t.label}: str, {t.count}: int, {t.amount}: float }}` and "
                  f"`{fname}({arg}: {tname}) to {ret}` which {does}.")
    return Program(code, (prompt,), "adherence_record", 2, f"`{tname}` and `{fname}` are declared as named.")


def _actor(rng: random.Random, t: Theme) -> Program:
    actor = rng.choice((f"{t.E}Desk", f"{t.E}Bot", f"{t.E}Agent", f"{t.E}Keeper"))
    ret = rng.choice(("int", "str", "bool"))
    params = _params(rng, ret)[:1]
    handler = f"{rng.choice(VERBS)}_{rng.choice((t.e, t.count, t.label))}"
    sig = f"{handler}({', '.join(f'{p}: {ty}' for p, ty in params)}) to {ret}"
    body, does = _body(rng, ret, params)
    code = lines(f"actor {actor} {{", f"  on {sig} {{", *("  " + b for b in body), "  }", "}")
    prompt = pick(rng, f"Write an actor `{actor}` with a handler `{sig}` that {does}.",
                  f"I need {a_('actor')} called `{actor}` whose handler `{sig}` {does}.",
                  f"Create an actor `{actor}` with one handler, `{sig}`: it {does}.")
    return Program(code, (prompt,), "adherence_actor", 1, f"The handler is declared with `on` inside `{actor}`.")


def adherence(rng: random.Random, t: Theme) -> Program:
    """Family ``adherence``: declare exactly the signature or names the request gives."""
    return rng.choice((_signature, _signature, _signature, _record, _actor))(rng, t)
