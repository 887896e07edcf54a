"""Organic families for plain declarations: functions, record/sum types with ``match``, and
module structure (imports, constants, ``pub`` functions)."""

from __future__ import annotations

import random

from pipeline.generators.base import Program, ask, ask_fn, cap, lines, pick
from pipeline.generators.themes import Theme


def _loop_var(t: Theme) -> str:
    return t.e[0]


def _aggregate(rng: random.Random, t: Theme) -> Program:
    v = _loop_var(t)
    kind = rng.choice(("sum_amount", "sum_count", "max_count", "average", "count_over", "filter"))
    comment = rng.random() < 0.5
    rec = t.record_decl()
    if kind == "sum_amount":
        name = pick(rng, f"total_{t.amount}", f"sum_{t.amount}", f"{t.amount}_total")
        acc = pick(rng, "sum", "acc", "total_so_far")
        body = lines(f"fn {name}({t.es}: List[{t.E}]) to float {{", f"  let mut {acc} = 0.0",
                     f"  for {v} in {t.es} {{", f"    {acc} += {v}.{t.amount}", "  }", f"  ret {acc}", "}")
        desc, construct = f"that adds up the {t.amount} of a list of {t.E} records", "fn_sum"
    elif kind == "sum_count":
        name = pick(rng, f"total_{t.count}", f"count_all_{t.count}")
        body = lines(f"fn {name}({t.es}: List[{t.E}]) to int {{", "  let mut n = 0",
                     f"  for {v} in {t.es} {{ n += {v}.{t.count} }}", "  ret n", "}")
        desc, construct = f"returning the sum of `{t.count}` over all {t.es}", "fn_sum"
    elif kind == "max_count":
        name = pick(rng, f"max_{t.count}", f"most_{t.count}", f"peak_{t.count}")
        body = lines(f"fn {name}({t.es}: List[{t.E}]) to int {{", "  let mut best = 0",
                     f"  for {v} in {t.es} {{", f"    if {v}.{t.count} > best {{ best = {v}.{t.count} }}",
                     "  }", "  ret best", "}")
        desc, construct = f"that finds the largest `{t.count}` among {t.es} (0 for an empty list)", "fn_max"
    elif kind == "average":
        name = pick(rng, f"average_{t.amount}", f"mean_{t.amount}")
        body = lines(f"fn {name}({t.es}: List[{t.E}]) to float {{",
                     f"  if len({t.es}) == 0 {{ ret 0.0 }}", "  let mut sum = 0.0",
                     f"  for {v} in {t.es} {{ sum += {v}.{t.amount} }}",
                     f"  ret sum / float(len({t.es}))", "}")
        desc, construct = f"computing the mean `{t.amount}` of some {t.es}, or 0.0 when there are none", "fn_average"
    elif kind == "count_over":
        name = pick(rng, f"count_{t.es}_over", f"{t.es}_above", f"busy_{t.es}")
        lim = pick(rng, "limit", "threshold", "minimum")
        op = pick(rng, ">", ">=")
        body = lines(f"fn {name}({t.es}: List[{t.E}], {lim}: int) to int {{", "  let mut n = 0",
                     f"  for {v} in {t.es} {{", f"    if {v}.{t.count} {op} {lim} {{ n += 1 }}", "  }",
                     "  ret n", "}")
        cmp = "more than" if op == ">" else "at least"
        desc, construct = f"counting the {t.es} whose `{t.count}` is {cmp} a given {lim}", "fn_count"
    else:
        name = pick(rng, f"{t.label}s_over", f"expensive_{t.es}", f"{t.label}s_above")
        body = lines(f"fn {name}({t.es}: List[{t.E}], cutoff: float) to List[str] {{",
                     "  let mut out: List[str] = []", f"  for {v} in {t.es} {{",
                     f"    if {v}.{t.amount} > cutoff {{ out.push({v}.{t.label}) }}", "  }", "  ret out", "}")
        desc, construct = f"returning the `{t.label}` of every {t.e} whose `{t.amount}` exceeds a cutoff", "fn_filter"
    code = lines(rec, "", f"// {name}: {desc}" if comment else None, body)
    prompts = (ask_fn(rng, f"`{name}` {desc}"), f"Given `{rec}`, write `{name}` in Vox: a function {desc}.")
    return Program(code, prompts, construct, 2, f"`{name}` walks the list once with a `let mut` accumulator.")


def _scalar(rng: random.Random, t: Theme) -> Program:
    kind = rng.choice(("tax", "clamp", "describe", "ratio", "default_param", "while_steps", "validate"))
    if kind == "validate":
        name = pick(rng, f"is_valid_{t.e}", f"valid_{t.e}", f"check_{t.e}")
        code = lines(f"fn {name}({t.label}: str, {t.count}: int) to bool {{", f"  let named = {t.label} != \"\"",
                     f"  ret named and not ({t.count} < 0)", "}")
        what = f"`{name}` that accepts a {t.e} only when its {t.label} is not empty and its {t.count} is not negative"
        return Program(code, (ask_fn(rng, what),), "fn_bool_logic", 1, "Vox spells the boolean operators `and`, `or` and `not`.")
    if kind == "tax":
        name = pick(rng, f"{t.amount}_with_tax", f"gross_{t.amount}", f"{t.amount}_plus_rate")
        code = lines(f"fn {name}({t.amount}: float, tax_rate: float) to float {{",
                     f"  ret {t.amount} * (1.0 + tax_rate)", "}")
        what = f"`{name}` that applies a tax rate to a {t.amount}: {t.amount} * (1 + tax_rate)"
    elif kind == "clamp":
        name = pick(rng, f"clamp_{t.count}", f"bounded_{t.count}", f"limit_{t.count}")
        lo, hi = pick(rng, "low", "lo", "min_value"), pick(rng, "high", "hi", "max_value")
        code = lines(f"fn {name}({t.count}: int, {lo}: int, {hi}: int) to int {{",
                     f"  if {t.count} < {lo} {{ ret {lo} }}", f"  if {t.count} > {hi} {{ ret {hi} }}",
                     f"  ret {t.count}", "}")
        what = f"`{name}` that keeps an int {t.count} between a lower and an upper bound"
    elif kind == "describe":
        name = pick(rng, f"describe_{t.e}", f"{t.e}_summary", f"format_{t.e}")
        code = lines(f"fn {name}({t.label}: str, {t.count}: int) to str {{",
                     f"  ret {t.label} + \" (\" + str({t.count}) + \" {t.count})\"", "}")
        what = f"`{name}` that formats a {t.e} {t.label} and its {t.count} as text like \"{t.sample[0]} (3 {t.count})\""
    elif kind == "ratio":
        name = pick(rng, f"{t.count}_ratio", f"share_of_{t.count}")
        code = lines(f"fn {name}(part: int, whole: int) to float {{", "  if whole == 0 { ret 0.0 }",
                     "  ret float(part) / float(whole)", "}")
        what = f"`{name}` returning part / whole as a float, or 0.0 when whole is zero"
    elif kind == "default_param":
        name = pick(rng, f"greet_{t.e}", f"hello_{t.e}", f"welcome_{t.e}")
        greeting = pick(rng, "Hello", "Welcome", "Hi")
        code = lines(f"fn {name}({t.label}: str, greeting: str = \"{greeting}\") to str {{",
                     f"  ret greeting + \", \" + {t.label}", "}", "",
                     f"print({name}(\"{t.sample[0]}\"))", f"print({name}(\"{t.sample[1]}\", greeting=\"Bye\"))")
        what = f"`{name}` with a `greeting` parameter that defaults to \"{greeting}\", then call it with and without the default"
        return Program(code, (ask_fn(rng, what),), "fn_default_param", 2,
                       "Defaulted parameters come last and can be passed by name.")
    else:
        name = pick(rng, f"steps_to_clear_{t.es}", f"rounds_for_{t.es}")
        code = lines(f"fn {name}({t.count}: int, per_round: int) to int {{", "  if per_round <= 0 { ret 0 }",
                     f"  let mut left = {t.count}", "  let mut rounds = 0", "  while left > 0 {",
                     "    left -= per_round", "    rounds += 1", "  }", "  ret rounds", "}")
        what = f"`{name}` that counts how many rounds of `per_round` it takes to bring {t.count} down to zero, using a while loop"
        return Program(code, (ask_fn(rng, what),), "fn_while", 2, "Both counters are `let mut` because the loop updates them.")
    return Program(code, (ask_fn(rng, what),), f"fn_{kind}", 1, f"`{name}` returns its result with `ret`.")


def _collections(rng: random.Random, t: Theme) -> Program:
    v = _loop_var(t)
    kind = rng.choice(("lookup", "count_map", "lambda", "generic", "find"))
    if kind == "lookup":
        name = pick(rng, f"{t.amount}_for", f"lookup_{t.amount}")
        code = lines(f"fn {name}(table: Map[str, float], {t.label}: str) to float {{",
                     f"  ret table.get({t.label}).unwrap_or(0.0)", "}")
        what = f"`{name}` that looks up a {t.amount} by {t.label} in a `Map[str, float]` and falls back to 0.0"
        return Program(code, (ask_fn(rng, what),), "fn_map_get", 1, "`get` returns an Option, so `unwrap_or` supplies the fallback.")
    if kind == "count_map":
        name = pick(rng, f"count_by_{t.label}", f"{t.label}_counts", f"tally_{t.label}")
        code = lines(t.record_decl(), "", f"fn {name}({t.es}: List[{t.E}]) to Map[str, int] {{",
                     "  let mut counts: Map[str, int] = {}", f"  for {v} in {t.es} {{",
                     f"    counts[{v}.{t.label}] = counts.get({v}.{t.label}).unwrap_or(0) + 1", "  }",
                     "  ret counts", "}")
        what = f"`{name}` that counts how many {t.es} share each {t.label}, returning a map"
        return Program(code, (ask_fn(rng, what),), "fn_map_count", 2, "Assigning to `counts[k]` inserts or replaces the entry.")
    if kind == "lambda":
        factor = rng.choice(("2.0", "0.5", "1.5", "10.0"))
        name = pick(rng, f"scale_{t.amount}", f"scaled_{t.amount}s")
        code = lines(f"fn {name}(values: List[float]) to List[float] {{",
                     f"  ret values.map(fn(x: float) to float {{ ret x * {factor} }})", "}")
        what = f"`{name}` that multiplies every {t.amount} in a list by {factor} using `map` and a lambda"
        return Program(code, (ask_fn(rng, what),), "fn_lambda", 2, "The lambda is an `fn` expression with its own `ret`.")
    if kind == "generic":
        name = pick(rng, f"first_{t.e}_or", f"head_or_{t.e}")
        code = lines(f"fn {name}<T>(items: List[T], fallback: T) to T {{", "  if len(items) == 0 { ret fallback }",
                     "  ret items[0]", "}", "", f"print({name}([\"{t.sample[0]}\", \"{t.sample[1]}\"], \"none\"))")
        what = f"`{name}`, generic over `T`, returning the first element of a list or a fallback"
        return Program(code, (ask_fn(rng, what),), "fn_generic", 2, "Generic parameters go in angle brackets after the name.")
    name = pick(rng, f"find_{t.e}", f"{t.e}_named", f"lookup_{t.e}")
    code = lines(t.record_decl(), "", f"fn {name}({t.es}: List[{t.E}], {t.label}: str) to Option[{t.E}] {{",
                 f"  for {v} in {t.es} {{", f"    if {v}.{t.label} == {t.label} {{ ret Some({v}) }}", "  }",
                 "  ret None", "}")
    what = f"`{name}` that returns the {t.e} with a given {t.label} as an Option"
    return Program(code, (ask_fn(rng, what),), "fn_option", 2, "It returns `Some` on the first hit and `None` otherwise.")


def functions(rng: random.Random, t: Theme) -> Program:
    """Family ``functions``: aggregates, scalar helpers, maps, lambdas, generics, options."""
    return rng.choice((_aggregate, _aggregate, _scalar, _scalar, _collections))(rng, t)


def types_match(rng: random.Random, t: Theme) -> Program:
    """Family ``types_match``: record and sum types, constructors and exhaustive ``match``."""
    v0, v1, v2 = t.variants
    kind = rng.choice(("label", "cost", "wildcard", "record_status", "build", "literal", "sum_costs", "option"))
    if kind == "sum_costs":
        name = pick(rng, f"total_{t.e}_cost", f"sum_{t.e}_costs", f"{t.e}_bill")
        k = rng.choice(("0.5", "2.0", "1.5", "3.0"))
        code = lines(t.status_decl(), "", f"fn {name}(items: List[{t.status}]) to float {{", "  let mut sum = 0.0",
                     "  for s in items {", "    sum += match s {", f"      {v0.pattern()} -> 0.0",
                     f"      {v1.pattern()} -> float({v1.payload}) * {k}", f"      {v2.pattern()} -> {v2.payload}", "    }",
                     "  }", "  ret sum", "}")
        what = f"`{name}` that adds up a cost over a list of `{t.status}` values ({v0.name} costs 0, {v1.name} costs {v1.payload} * {k}, {v2.name} costs its {v2.payload})"
        return Program(code, (ask_fn(rng, what),), "sum_match_loop", 2, "A `match` is an expression, so its value can be added directly.")
    if kind == "option":
        name = pick(rng, f"{t.count}_or_zero", f"{t.count}_of_found", f"maybe_{t.count}")
        fallback = rng.choice((0, -1))
        code = lines(t.record_decl(), "", f"fn {name}(found: Option[{t.E}]) to int {{", "  ret match found {",
                     f"    Some(x) -> x.{t.count}", f"    None -> {fallback}", "  }", "}")
        what = f"`{name}` that returns the `{t.count}` of an `Option[{t.E}]`, or {fallback} when it is `None`"
        return Program(code, (ask_fn(rng, what),), "option_match", 1, "`Some(x)` binds the record; `None` covers the empty case.")
    target = rng.choice((v0, v1, v2))
    fn_name = {"label": f"{t.e}_status_text", "cost": f"{t.e}_status_cost", "wildcard": f"is_{target.name.lower()}"}
    if kind == "label":
        name = fn_name[kind]
        code = lines(t.status_decl(), "", f"fn {name}(s: {t.status}) to str {{", "  ret match s {",
                     f"    {v0.pattern()} -> \"{v0.name.lower()}\"",
                     f"    {v1.pattern()} -> \"{v1.name.lower()} \" + str({v1.payload})",
                     f"    {v2.pattern()} -> \"{v2.name.lower()} \" + str({v2.payload})", "  }", "}")
        what = f"define a sum type `{t.status}` with variants {v0.name}, {v1.name}({v1.payload}: int) and {v2.name}({v2.payload}: float), and a function `{name}` that describes each one"
        return Program(code, (ask(rng, what),), "sum_match", 2, "The `match` covers every variant, so no `_` arm is needed.")
    if kind == "cost":
        name = fn_name[kind]
        k = rng.choice(("0.5", "1.25", "2.0"))
        code = lines(t.status_decl(), "", f"fn {name}(s: {t.status}) to float {{", "  ret match s {",
                     f"    {v0.pattern()} -> 0.0", f"    {v1.pattern()} -> float({v1.payload}) * {k}",
                     f"    {v2.pattern()} -> {v2.payload}", "  }", "}")
        what = f"model a {t.e} status as `{t.status}` ({v0.name}, {v1.name} with an int {v1.payload}, {v2.name} with a float {v2.payload}) and compute a cost with `match`: 0 for {v0.name}, {v1.payload} * {k} for {v1.name}, the {v2.payload} for {v2.name}"
        return Program(code, (ask(rng, what),), "sum_match", 2, "Each arm binds the variant's payload by position.")
    if kind == "wildcard":
        name = fn_name[kind]
        code = lines(t.status_decl(), "", f"fn {name}(s: {t.status}) to bool {{", "  ret match s {",
                     f"    {target.pattern('_')} -> true", "    _ -> false", "  }", "}")
        what = f"`{name}` that tells whether a `{t.status}` is {target.name}, using a `_` arm for the rest"
        return Program(code, (ask_fn(rng, what),), "sum_wildcard", 1, "The `_` arm comes last and covers the remaining variants.")
    if kind == "record_status":
        name = pick(rng, f"count_{v2.name.lower()}", f"{v2.name.lower()}_count")
        w = _loop_var(t)
        code = lines(t.status_decl(), f"type Tracked{t.E} = {{ {t.label}: str, status: {t.status} }}", "",
                     f"fn {name}({t.es}: List[Tracked{t.E}]) to int {{", "  let mut n = 0", f"  for {w} in {t.es} {{",
                     f"    match {w}.status {{", f"      {v2.pattern('_')} -> {{ n += 1 }}", "      _ -> {}", "    }", "  }",
                     "  ret n", "}")
        what = f"a record `Tracked{t.E}` holding a `{t.label}` string and a `{t.status}`, and a function `{name}` counting the {v2.name} ones"
        return Program(code, (ask(rng, "write " + what),), "record_sum", 3, "A block arm `{ n += 1 }` lets a match arm run a statement.")
    if kind == "build":
        name = pick(rng, f"new_{t.e}", f"make_{t.e}")
        code = lines(t.record_decl(), "", f"fn {name}({t.label}: str) to {t.E} {{",
                     f"  ret {{ {t.label}: {t.label}, {t.count}: 0, {t.amount}: 0.0 }}", "}", "",
                     f"let first = {name}(\"{t.sample[0]}\")", f"print(first.{t.label})")
        what = f"define a record type `{t.E}` with `{t.label}: str`, `{t.count}: int` and `{t.amount}: float`, plus a constructor function `{name}` that starts the numbers at zero"
        return Program(code, (ask(rng, what),), "record_literal", 2, "The record literal is checked against the declared return type.")
    name = pick(rng, f"{t.count}_bucket", f"size_of_{t.count}")
    code = lines(f"fn {name}({t.count}: int) to str {{", f"  ret match {t.count} {{", "    0 -> \"none\"",
                 "    1 -> \"one\"", "    2 -> \"a couple\"", "    _ -> \"many\"", "  }", "}")
    what = f"`{name}` mapping an int {t.count} to \"none\", \"one\", \"a couple\" or \"many\" with `match`"
    return Program(code, (ask_fn(rng, what),), "literal_match", 1, "Matching int literals needs a final `_` arm.")


def modules(rng: random.Random, t: Theme) -> Program:
    """Family ``modules``: imports, top-level constants, ``pub`` functions, module layout."""
    kind = rng.choice(("constants", "import_as", "layout", "env_defaults"))
    if kind == "env_defaults":
        var = f"{t.key.upper()}_{pick(rng, 'LIMIT', 'MAX', 'CAP')}"
        dflt = rng.choice((5, 25, 100))
        code = lines("import std.env", "", f"let DEFAULT_LIMIT = {dflt}", "",
                     f"pub fn {t.es}_limit() to int {{", f"  match env.get(\"{var}\") {{",
                     "    Some(v) -> { ret int(v) }", "    None -> { ret DEFAULT_LIMIT }", "  }", "}", "",
                     f"pub fn over_limit({t.count}: int) to bool {{", f"  ret {t.count} > {t.es}_limit()", "}")
        what = f"write a module whose public function `{t.es}_limit` reads `{var}` from the environment (default {dflt}), plus `over_limit`"
        return Program(code, (ask(rng, what),), "module_env_config", 2, "Every `match` arm ends in `ret`, so the function returns on every path.")
    limit = rng.choice((5, 10, 12, 20, 50))
    const = f"MAX_{t.es.upper()}"
    if kind == "constants":
        code = lines(f"let {const} = {limit}", f"let {t.E.upper()}_PREFIX = \"{t.e}-\"", "",
                     f"pub fn can_add_{t.e}(current: int) to bool {{", f"  ret current < {const}", "}", "",
                     f"pub fn {t.e}_code(n: int) to str {{", f"  ret {t.E.upper()}_PREFIX + str(n)", "}")
        what = f"write a small Vox module with constants `{const} = {limit}` and `{t.E.upper()}_PREFIX`, and two public functions that use them"
        return Program(code, (ask(rng, what),), "module_constants", 2, "Top-level `let`s are visible inside every function body.")
    if kind == "import_as":
        alias = pick(rng, "js", "j", "codec")
        code = lines("import std.time", f"import std.json as {alias}", "",
                     f"pub fn {t.e}_stamp({t.label}: str) to str {{", f"  ret {t.label} + \"@\" + str(time.now())", "}", "",
                     f"pub fn {t.e}_json({t.label}: str, {t.count}: int) to str {{",
                     f"  ret {alias}.dump({{ {t.label}: {t.label}, {t.count}: {t.count} }})", "}")
        what = f"import `std.time` and `std.json` (as `{alias}`) and write public functions that timestamp a {t.e} {t.label} and encode a {t.e} as JSON"
        return Program(code, (ask(rng, what),), "module_imports", 2, f"`import ... as {alias}` binds the module under the alias.")
    helper = pick(rng, "normalize", "tidy", "clean_key")
    code = lines(t.record_decl(), "", f"let DEFAULT_{t.amount.upper()} = {rng.choice(('1.5', '2.0', '9.99'))}", "",
                 f"fn {helper}(s: str) to str {{", "  if len(s) == 0 { ret \"unnamed\" }", "  ret s", "}", "",
                 f"pub fn new_{t.e}({t.label}: str) to {t.E} {{",
                 f"  ret {{ {t.label}: {helper}({t.label}), {t.count}: 1, {t.amount}: DEFAULT_{t.amount.upper()} }}", "}", "",
                 f"pub fn {t.e}_value(x: {t.E}) to float {{", f"  ret float(x.{t.count}) * x.{t.amount}", "}")
    what = f"lay out a Vox module for {t.es}: the `{t.E}` record type, a default {t.amount} constant, a private helper and public functions to create a {t.e} and compute its value"
    return Program(code, (ask(rng, what),), "module_layout", 3, "Only `pub` functions are part of the module's interface.")


__all__ = ["functions", "types_match", "modules", "cap"]
