"""Checking big valid sources of several shapes: seconds and MB/s of ``vox_lang.check``.

Each shape is a well-typed program written by a seeded random generator (no two functions
alike, so the parser's per-item memo sees few repeats, as in real code): ``many_fns`` (many
small functions), ``huge_fn`` (one function of that size), ``long_strings`` (string literals
of several KB), ``long_lines`` (statements of several KB on one line), ``comments`` (four
comment lines per statement), ``deep`` (blocks and parentheses nested about 20 levels, within
what :func:`vox_lang.check` handles without its child process), ``many_arms`` (matches of
thousands of literal and variant arms). Every program checks with no diagnostic; the
``diags`` column says so. Times are CPU seconds of this process and its children
(``time.process_time`` plus child CPU), so other load on the machine counts less.

Run: ``.venv/bin/python bench/check_shapes.py [--mb 1.0] [--shapes many_fns,deep] [--repeat 1]``
(``--repeat N``: best of N).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from vox_lang.api import check  # noqa: E402

_WORDS = "alpha beta gamma delta omega vox check parse token line item block scope type".split()


class Gen:
    """Seeded writer of well-typed Vox code: ``int``/``bool``/``str`` expressions over the
    variables in scope and the functions written so far (all ``fn fN(a: int, b: int) to int``)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.fns: list[str] = []
        self.n = 0

    def fresh(self, prefix: str) -> str:
        self.n += 1
        return f"{prefix}{self.n}"

    def int_expr(self, ints: list[str], depth: int = 2) -> str:
        r = self.rng.random()
        if depth <= 0 or r < 0.3:
            return str(self.rng.randint(0, 999)) if r < 0.12 or not ints else self.rng.choice(ints)
        if r < 0.7:
            op = self.rng.choice("+-*+%")
            right = self.int_expr(ints, depth - 1)
            return f"{self.int_expr(ints, depth - 1)} {op} {right if op != '%' else '7'}"
        if r < 0.8:
            return f"({self.int_expr(ints, depth - 1)})"
        if r < 0.92 and self.fns:
            return f"{self.rng.choice(self.fns)}({self.int_expr(ints, depth - 1)}, {self.int_expr(ints, depth - 1)})"
        return f"len({self.str_expr(ints, depth - 1)})"

    def bool_expr(self, ints: list[str], depth: int = 2) -> str:
        r = self.rng.random()
        if depth > 0 and r < 0.25:
            op = self.rng.choice(["and", "or"])
            return f"{self.bool_expr(ints, depth - 1)} {op} {self.bool_expr(ints, depth - 1)}"
        if depth > 0 and r < 0.3:
            return f"not ({self.bool_expr(ints, depth - 1)})"
        op = self.rng.choice(["<", ">", "<=", ">=", "==", "!="])
        return f"{self.int_expr(ints, depth - 1)} {op} {self.int_expr(ints, depth - 1)}"

    def text(self, words: int) -> str:
        out = " ".join(self.rng.choice(_WORDS) for _ in range(words))
        return out.replace("omega", "omega\\t").replace("vox", '\\"vox\\"') + ("\\n" if words % 3 == 0 else "")

    def str_expr(self, ints: list[str], depth: int = 1) -> str:
        r = self.rng.random()
        if depth > 0 and r < 0.3:
            return f"str({self.int_expr(ints, depth - 1)})"
        if depth > 0 and r < 0.5:
            return f'"{self.text(2)}" + str({self.int_expr(ints, depth - 1)})'
        return f'"{self.text(self.rng.randint(1, 6))}"'

    def stmts(self, ints: list[str], muts: list[str], k: int, nest: int, ind: str) -> list[str]:
        """``k`` statements (the first ones, nested ``nest`` levels deep at most)."""
        ints, out = list(ints), []
        for _ in range(k):
            r = self.rng.random()
            if nest > 0 and r < 0.12:
                body = self.stmts(ints, muts, self.rng.randint(1, 3), nest - 1, ind + "  ")
                other = self.stmts(ints, muts, self.rng.randint(1, 2), nest - 1, ind + "  ")
                out += [f"{ind}if {self.bool_expr(ints)} {{", *body, f"{ind}}} else {{", *other, f"{ind}}}"]
            elif nest > 0 and r < 0.2:
                var = self.fresh("i")
                body = self.stmts(ints + [var], muts, self.rng.randint(1, 3), nest - 1, ind + "  ")
                out += [f"{ind}for {var} in range(0, {self.int_expr(ints, 1)}) {{", *body, f"{ind}}}"]
            elif nest > 0 and r < 0.24 and muts:
                m = self.rng.choice(muts)
                body = self.stmts(ints, muts, self.rng.randint(1, 2), nest - 1, ind + "  ")
                out += [f"{ind}while {m} < {self.int_expr(ints, 1)} {{", f"{ind}  {m} += 1", *body, f"{ind}}}"]
            elif r < 0.3:
                v = self.fresh("r")
                arms = [f"{ind}  {i} -> {self.int_expr(ints, 1)}" for i in range(self.rng.randint(1, 4))]
                out += [f"{ind}let {v} = match {self.int_expr(ints, 1)} {{", *arms, f"{ind}  _ -> 0", f"{ind}}}"]
                ints.append(v)
            elif r < 0.45:
                m = self.fresh("m")
                out.append(f"{ind}let mut {m} = {self.int_expr(ints)}")
                muts = muts + [m]
                ints.append(m)
            elif r < 0.6 and muts:
                op = self.rng.choice(["=", "+=", "-="])
                out.append(f"{ind}{self.rng.choice(muts)} {op} {self.int_expr(ints)}")
            elif r < 0.7:
                out.append(f"{ind}print({self.str_expr(ints)})")
            elif r < 0.78:
                xs = self.fresh("xs")
                items = ", ".join(self.int_expr(ints, 1) for _ in range(self.rng.randint(1, 5)))
                out.append(f"{ind}let {xs} = [{items}]")
                out.append(f"{ind}{self.rng.choice(muts) if muts else 'print'}" +
                           (f" += len({xs})" if muts else f"(len({xs}))"))
            else:
                v = self.fresh("v")
                out.append(f"{ind}let {v} = {self.int_expr(ints)}")
                ints.append(v)
        return out

    def function(self, k: int, nest: int = 2) -> str:
        """One ``fn fN(a: int, b: int) to int`` of ``k`` statements and a ``ret``."""
        name = self.fresh("f")
        body = self.stmts(["a", "b"], [], k, nest, "  ")
        text = "\n".join([f"fn {name}(a: int, b: int) to int {{", *body, f"  ret {self.int_expr(['a', 'b'])}", "}", ""])
        self.fns.append(name)
        return text


def _until(n: int, part: Callable[[], str]) -> str:
    out: list[str] = []
    size = 0
    while size < n:
        out.append(part())
        size += len(out[-1])
    return "".join(out)


def many_fns(n: int) -> str:
    g = Gen(1)
    return _until(n, lambda: g.function(g.rng.randint(2, 8)) + "\n")


def huge_fn(n: int) -> str:
    g = Gen(2)
    g.fns = ["f0"]
    head = "fn f0(a: int, b: int) to int {\n  ret a + b\n}\n\nfn main(a: int, b: int) to int {\n"
    body = _until(n, lambda: "\n".join(g.stmts(["a", "b"], ["b0"], 1, 2, "  ")) + "\n")
    return head + "  let mut b0 = 0\n" + body + "  ret b0\n}\n"


def long_strings(n: int) -> str:
    g = Gen(3)

    def part() -> str:
        name = g.fresh("s")
        return f'let {name} = "{g.text(g.rng.randint(300, 1500))}"\nprint({name} + "{g.text(3)}")\n'

    return _until(n, part)


def long_lines(n: int) -> str:
    g = Gen(4)
    g.fns = ["f0"]

    def part() -> str:
        name = g.fresh("f")
        sums = [" + ".join(g.int_expr(["a", "b"], 2) for _ in range(g.rng.randint(80, 200))) for _ in range(3)]
        items = ", ".join(g.int_expr(["a", "b"], 1) for _ in range(g.rng.randint(200, 400)))
        lines = [f"fn {name}(a: int, b: int) to int {{", f"  let x = {sums[0]}", f"  let xs = [{items}]",
                 f"  ret x + len(xs) + f0({sums[1]}, {sums[2]})", "}", ""]
        return "\n".join(lines)

    return "fn f0(a: int, b: int) to int {\n  ret a\n}\n" + _until(n, part)


def comments(n: int) -> str:
    g = Gen(5)

    def part() -> str:
        lines = g.function(g.rng.randint(2, 6)).splitlines()
        out = []
        for line in lines:
            ind = line[: len(line) - len(line.lstrip())]
            out += [f"{ind}// {g.text(g.rng.randint(4, 14))}" for _ in range(4)]
            out.append(line + (f"  // {g.text(3)}" if line.endswith(("{", "}")) else ""))
        return "\n".join(out) + "\n\n"

    return _until(n, part)


def deep(n: int, depth: int = 18) -> str:
    g = Gen(6)

    def part() -> str:
        name = g.fresh("f")
        lines = [f"fn {name}(a: int, b: int) to int {{", "  let mut t = 0"]
        for d in range(depth):
            ind = "  " * (d + 1)
            head = g.rng.choice([f"if {g.bool_expr(['a', 't'], 1)} {{", f"while t < {d + 3} {{",
                                 f"for i{d} in range(0, {d + 2}) {{"])
            lines += [ind + head, f"{ind}  t += 1"]
        inner = "(" * 8 + "a + t" + ")" * 8
        lines.append("  " * (depth + 1) + f"t = t + {inner} * {g.int_expr(['a', 'b'], 1)}")
        lines += ["  " * (d + 1) + "}" for d in reversed(range(depth))]
        lines += ["  ret t", "}", ""]
        g.fns.append(name)
        return "\n".join(lines)

    return _until(n, part)


def many_arms(n: int) -> str:
    g = Gen(7)

    def part() -> str:
        k = g.rng.randint(1000, 3000)
        name, ty = g.fresh("f"), g.fresh("T")
        variants = " ".join(f"| {ty}V{i}(x: int)" for i in range(k // 4))
        arms = [f"    {i} -> a + {i}" for i in range(k)]
        varms = [f"    {ty}V{i}(x) -> x + {i}" for i in range(k // 4)]
        return "\n".join([
            f"type {ty} = {variants}",
            f"fn {name}(a: int, v: {ty}) to int {{", "  let r = match a {", *arms, "    _ -> 0", "  }",
            "  ret r + match v {", *varms, "  }", "}", "",
        ])

    return _until(n, part)


#: shape -> generator of about ``n`` characters
SHAPES: dict[str, Callable[[int], str]] = {
    "many_fns": many_fns,
    "huge_fn": huge_fn,
    "long_strings": long_strings,
    "long_lines": long_lines,
    "comments": comments,
    "deep": deep,
    "many_arms": many_arms,
}


def cpu() -> float:
    """CPU seconds of this process (``time.process_time``: finer than clock ticks) and of its
    finished children (``vox_lang.check`` runs a module nested too deep for this thread's
    stack in a child)."""
    t = os.times()
    return time.process_time() + t.children_user + t.children_system


def measure(text: str, repeat: int = 1) -> tuple[float, int]:
    """Best CPU seconds of ``repeat`` runs of ``check(text)`` and its number of diagnostics."""
    best, diags = float("inf"), 0
    for _ in range(repeat):
        start = cpu()
        result = check(text)
        best = min(best, cpu() - start)
        diags = len(result.diagnostics)
    return best, diags


def main(argv: list[str] | None = None) -> int:
    """Print one line per shape: size, seconds, MB/s and the number of diagnostics."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=1.0, help="size of each program in MB (default 1.0)")
    ap.add_argument("--shapes", default=",".join(SHAPES), help="comma-separated shapes (default: all)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per shape, the best reported (default 1)")
    args = ap.parse_args(argv)
    check("x = 1\n")  # load the grammar first
    print(f"{'shape':14s} {'MB':>6s} {'s':>7s} {'MB/s':>6s} diags", flush=True)
    total_mb = total_s = 0.0
    for shape in args.shapes.split(","):
        text = SHAPES[shape](int(args.mb * 1_000_000))
        seconds, diags = measure(text, args.repeat)
        mb = len(text.encode()) / 1e6
        total_mb, total_s = total_mb + mb, total_s + seconds
        print(f"{shape:14s} {mb:6.3f} {seconds:7.3f} {mb / seconds:6.3f} {diags}", flush=True)
    print(f"{'all':14s} {total_mb:6.3f} {total_s:7.3f} {total_mb / total_s:6.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
