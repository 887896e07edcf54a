"""Organic families for service-style declarations: actors, workflows with activities,
``@mcp.tool``/``@mcp.resource`` tools, and ``@test`` functions."""

from __future__ import annotations

import random

from pipeline.generators.base import Program, a_, ask, cap, lines, pick
from pipeline.generators.themes import Theme


def _handlers(rng: random.Random, t: Theme) -> list[tuple[str, str, str]]:
    """Candidate handlers: (name, source lines, example call arguments)."""
    a = t.actor
    return [
        (f"add_{t.count}", lines(f"  on add_{t.count}(current: int, extra: int) to int {{",
                                 "    ret current + extra", "  }"), "3, 2"),
        (f"label_{t.e}", lines(f"  on label_{t.e}({t.label}: str) to str {{",
                               f"    ret \"{t.E}: \" + {t.label}", "  }"), f"\"{t.sample[0]}\""),
        (f"total_{t.amount}", lines(f"  on total_{t.amount}(values: List[float]) to float {{",
                                    "    let mut sum = 0.0", "    for x in values { sum += x }",
                                    "    ret sum", "  }"), "[1.5, 2.5]"),
        ("log", lines("  on log(msg: str) {", f"    print(\"[{a}] \" + msg)", "  }"), "\"started\""),
        (f"too_many_{t.es}", lines(f"  on too_many_{t.es}(n: int, cap: int) to bool {{",
                                   "    ret n > cap", "  }"), "12, 10"),
    ]


def actors(rng: random.Random, t: Theme) -> Program:
    """Family ``actors``: an actor with 1-3 ``on`` handlers, spawned and called."""
    chosen = rng.sample(_handlers(rng, t), rng.randint(1, 3))
    handle = pick(rng, t.actor.lower(), "worker", "desk", "agent")
    body = "\n\n".join(h[1] for h in chosen) if rng.random() < 0.5 else "\n".join(h[1] for h in chosen)
    decl = lines(f"actor {t.actor} {{", body, "}")
    calls = [f"print({handle}.{name}({args}))" if name != "log" else f"{handle}.log({args})"
             for name, _, args in chosen]
    in_fn = rng.random() < 0.35
    if in_fn:
        use = lines(f"fn run_{t.actor.lower()}() {{", f"  let {handle} = spawn({t.actor})",
                    *("  " + c for c in calls), "}", "", f"run_{t.actor.lower()}()")
    else:
        use = lines(f"let {handle} = spawn({t.actor})", *calls)
    names = ", ".join(f"`{h[0]}`" for h in chosen)
    what = f"write an actor `{t.actor}` with handler{'s' if len(chosen) > 1 else ''} {names}, then spawn it and call {'them' if len(chosen) > 1 else 'it'}"
    code = lines(decl, "", use)
    return Program(code, (ask(rng, what), ask(rng, f"create a {t.actor} actor for {t.es} with {names} handlers and use it")),
                   "actor_handlers", 1 + len(chosen) // 2,
                   "Actors hold only `on` handlers; `spawn` returns a handle whose handlers are called like methods.")


def workflows(rng: random.Random, t: Theme) -> Program:
    """Family ``workflows``: activities returning ``Result`` chained with ``?`` in a workflow."""
    v1 = t.variants[1]
    asy = "async " if rng.random() < 0.25 else ""
    reserve = pick(rng, f"reserve_{t.e}", f"check_{t.e}", f"claim_{t.e}")
    notify = pick(rng, f"notify_{t.e}", f"record_{t.e}", f"announce_{t.e}")
    flow = pick(rng, f"process_{t.e}", f"handle_{t.e}", f"{t.e}_pipeline")
    acts = [lines(f"{asy}activity {reserve}({t.label}: str, {t.count}: int) to Result[int] {{",
                  f"  if {t.count} <= 0 {{ ret Error(\"no {t.count} left for \" + {t.label}) }}",
                  f"  ret Ok({t.count} - 1)", "}"),
            lines(f"{asy}activity {notify}({t.label}: str) to Result[str] {{",
                  f"  ret Ok(\"{v1.name.lower()}: \" + {t.label})", "}")]
    three = rng.random() < 0.4
    steps = [f"  let left = {reserve}({t.label}, {t.count})?", f"  let msg = {notify}({t.label})?"]
    if three:
        fee = pick(rng, f"bill_{t.e}", f"charge_{t.e}")
        acts.append(lines(f"activity {fee}(units: int, {t.amount}: float) to Result[float] {{",
                          f"  if {t.amount} < 0.0 {{ ret Error(\"negative {t.amount}\") }}",
                          f"  ret Ok(float(units) * {t.amount})", "}"))
        steps.append(f"  let cost = {fee}(left, {t.amount})?")
        sig = f"{t.label}: str, {t.count}: int, {t.amount}: float"
        tail = "  ret Ok(msg + \", \" + str(left) + \" left, cost \" + str(cost))"
        call = f"{flow}(\"{t.sample[0]}\", 2, 1.5)"
    else:
        sig = f"{t.label}: str, {t.count}: int"
        tail = "  ret Ok(msg + \", \" + str(left) + \" left\")"
        call = f"{flow}(\"{t.sample[0]}\", 2)"
    wf = lines(f"workflow {flow}({sig}) to Result[str] {{", *steps, tail, "}")
    runner = None
    if rng.random() < 0.6:
        runner = lines(f"match {call} {{", "  Ok(msg) -> print(msg)", "  Error(e) -> print(\"failed: \" + e)", "}")
    code = lines("\n\n".join(acts), "", wf, "" if runner else None, runner)
    what = f"write a workflow `{flow}` for {t.es} that calls the activities {', '.join('`' + a.split('(')[0].split()[-1] + '`' for a in acts)} and stops at the first error"
    return Program(code, (ask(rng, what),), "workflow_activities", 2 + three,
                   "`?` returns the activity's `Error` from the workflow; activities are only called from workflows.")


def mcp(rng: random.Random, t: Theme) -> Program:
    """Family ``mcp``: ``@mcp.tool`` functions and ``@mcp.resource`` providers."""
    kind = rng.choice(("tool", "tool_paren", "resource", "both"))
    tool = pick(rng, f"quote_{t.e}", f"estimate_{t.amount}", f"{t.e}_quote")
    desc = pick(rng, f"Estimate the {t.amount} for {a_(t.e)}", f"Quote {a_(t.e)} {t.amount}", f"Price {a_(t.e)} by {t.count}")
    rate = rng.choice(("0.5", "1.25", "3.0"))
    deco = f"@mcp.tool \"{desc}\"" if kind != "tool_paren" else f"@mcp.tool(\"{desc}\")"
    tool_src = lines(deco, f"fn {tool}({t.count}: int, base: float) to float {{",
                     f"  ret base + float({t.count}) * {rate}", "}")
    uri = f"{t.es}://catalog"
    res_name = pick(rng, f"{t.e}_catalog", f"list_{t.es}")
    res_src = lines(f"@mcp.resource(\"{uri}\", \"All known {t.es}\")", f"fn {res_name}() to str {{",
                    f"  ret \"{', '.join(t.sample)}\"", "}")
    if kind == "resource":
        return Program(res_src, (ask(rng, f"expose the list of {t.es} as an MCP resource at `{uri}`"),),
                       "mcp_resource", 1, "`@mcp.resource` takes a URI and a description and decorates a function without parameters.")
    if kind == "both":
        code = lines(tool_src, "", res_src)
        what = f"write an MCP tool `{tool}` (\"{desc}\") and an MCP resource `{uri}` listing the {t.es}"
        return Program(code, (ask(rng, what),), "mcp_tool_resource", 2, "Each decorator sits on the line before its function.")
    what = f"expose a function `{tool}` as an MCP tool described as \"{desc}\"; it returns base + {t.count} * {rate}"
    return Program(tool_src, (ask(rng, what),), "mcp_tool", 1, "`@mcp.tool` needs its description string.")


def tests(rng: random.Random, t: Theme) -> Program:
    """Family ``tests``: functions with ``@test`` functions asserting their behaviour."""
    kind = rng.choice(("clamp", "total", "label", "ratio", "status"))
    prefix = pick(rng, "", "test_", "check_")
    if kind == "ratio":
        fn = pick(rng, f"{t.count}_share", f"share_of_{t.count}")
        subject = lines(f"fn {fn}(part: int, whole: int) to float {{", "  if whole == 0 { ret 0.0 }",
                        "  ret float(part) / float(whole)", "}")
        cases = [(f"{prefix}{fn}_of_zero_whole", f"assert({fn}(3, 0) == 0.0)"),
                 (f"{prefix}{fn}_half", f"assert({fn}(1, 2) == 0.5)"),
                 (f"{prefix}{fn}_whole", f"assert({fn}(4, 4) == 1.0)")]
    elif kind == "status":
        v0, v1, v2 = t.variants
        fn = f"is_{v1.name.lower()}"
        subject = lines(t.status_decl(), "", f"fn {fn}(s: {t.status}) to bool {{", "  ret match s {",
                        f"    {v1.pattern('_')} -> true", "    _ -> false", "  }", "}")
        cases = [(f"{prefix}{v1.name.lower()}_is_detected", f"assert({fn}({v1.name}(2)))"),
                 (f"{prefix}{v0.name.lower()}_is_not_{v1.name.lower()}", f"assert(not {fn}({v0.name}))"),
                 (f"{prefix}{v2.name.lower()}_is_not_{v1.name.lower()}", f"assert({fn}({v2.name}(1.5)) == false)")]
    elif kind == "clamp":
        fn = f"clamp_{t.count}"
        hi = rng.choice((5, 10, 100))
        subject = lines(f"fn {fn}(n: int, hi: int) to int {{", "  if n < 0 { ret 0 }", "  if n > hi { ret hi }", "  ret n", "}")
        cases = [(f"{prefix}{fn}_keeps_small_values", f"assert({fn}(3, {hi}) == 3)"),
                 (f"{prefix}{fn}_caps_large_values", f"assert({fn}({hi + 7}, {hi}) == {hi})"),
                 (f"{prefix}{fn}_floors_negatives", f"assert({fn}(-4, {hi}) == 0)")]
    elif kind == "total":
        fn = f"sum_{t.amount}"
        subject = lines(t.record_decl(), "", f"fn {fn}({t.es}: List[{t.E}]) to float {{", "  let mut s = 0.0",
                        f"  for x in {t.es} {{ s += x.{t.amount} }}", "  ret s", "}")
        one = f"{{ {t.label}: \"{t.sample[0]}\", {t.count}: 1, {t.amount}: 1.5 }}"
        two = f"{{ {t.label}: \"{t.sample[1]}\", {t.count}: 2, {t.amount}: 2.5 }}"
        cases = [(f"{prefix}{fn}_of_nothing_is_zero", f"let empty: List[{t.E}] = []\n  assert({fn}(empty) == 0.0)"),
                 (f"{prefix}{fn}_adds_all", f"assert({fn}([{one}, {two}]) == 4.0)")]
    else:
        fn = f"{t.e}_tag"
        subject = lines(f"fn {fn}({t.label}: str, n: int) to str {{", f"  ret {t.label} + \"#\" + str(n)", "}")
        cases = [(f"{prefix}{fn}_joins_parts", f"assert({fn}(\"{t.sample[0]}\", 2) == \"{t.sample[0]}#2\")"),
                 (f"{prefix}{fn}_is_not_empty", f"assert({fn}(\"\", 0) != \"\")")]
    chosen = rng.sample(cases, rng.randint(1, len(cases)))
    inline = rng.random() < 0.3
    tests_src = "\n\n".join(f"@test fn {n}() {{\n  {body}\n}}" if inline else f"@test\nfn {n}() {{\n  {body}\n}}"
                            for n, body in chosen)
    code = lines(subject, "", tests_src)
    what = f"write `{fn}` and {len(chosen)} `@test` function{'s' if len(chosen) > 1 else ''} that check it with `assert`"
    return Program(code, (ask(rng, what),), "test_functions", 1 + (len(chosen) > 1),
                   "Test functions take no parameters, return nothing and use `assert`.")


__all__ = ["actors", "workflows", "mcp", "tests", "cap"]
