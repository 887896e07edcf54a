"""Checking large files: seconds per MB of ``vox_lang.check`` on generated valid and invalid
inputs, at two sizes, and the ratio of the two times (about the size ratio when checking scales
linearly; far above it when some pass is quadratic).

The invalid kinds are ones that were quadratic before (unclosed brackets meeting mismatched
closers, unclosed decorator arguments, colon blocks under a deep bracket stack, many ``;`` on
one line, "did you mean" hints that compared each unknown name with every visible name:
``undef_names``, ``undef_types``, ``unknown_fields``) and ones that were only slow (one error
per line, random token soup). Times are CPU seconds of this process (``time.process_time``),
so that other load on the machine counts less.

The ``one_line_*`` kinds (and ``semis_one_line``) are whole files on a single line: one huge
item (a list, a ``+`` chain, a string) or one line of many statements or errors; ``--one-line``
runs only those. The ``human`` columns time rendering every diagnostic in the human format
(each echoes its source line as a window around the caret): that too should scale with the
number of diagnostics, not with diagnostics times line length.

Run: ``.venv/bin/python bench/check_large.py [--mb 0.1 | --lines 1000] [--kinds fn_paren,deco_open | --one-line]``
(the second size is 4x the first; ``--lines`` sizes by line count instead of bytes).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from vox_lang.api import check  # noqa: E402

VALID_FN = "fn add{i}(a: int, b: int) to int {{\n  let c = a + b\n  ret c * 2\n}}\n"


def _repeat(line: str) -> Callable[[int], str]:
    return lambda n: line * max(1, n // len(line))


def _valid(n: int) -> str:
    out: list[str] = []
    size = i = 0
    while size < n:
        out.append(VALID_FN.format(i=i))
        size += len(out[-1])
        i += 1
    return "".join(out)


def _soup(n: int) -> str:
    """Random tokens (seeded), a newline after about one in ten: no two lines alike."""
    rng = random.Random(0)
    toks = ["fn", "(", ")", "{", "}", "let", "=", "+", "x", "1", '"a"', ",", "if", "match", "[", "]", ":", ".", "\n"]
    out: list[str] = []
    size = 0
    while size < n:
        out.append(rng.choice(toks))
        size += len(out[-1]) + 1
    return " ".join(out)


def _undef_names(n: int) -> str:
    """``let a1 = b1`` lines: each ``bN`` is undefined, near the many visible ``aN``."""
    return _numbered(n, "let a{i} = b{i}\n")


def _undef_types(n: int) -> str:
    """``type TN = { f: UN }`` lines: each ``UN`` is an unknown type near the many ``TN``."""
    return _numbered(n, "type T{i} = {{ f: U{i} }}\n")


def _unknown_fields(n: int) -> str:
    """A record type with about ``n / 64`` fields ``fN``, then one function per line reading an
    unknown field ``r.gN`` (E0512 each, near the many ``fN``)."""
    fields = ", ".join(f"f{i}: int" for i in range(max(1, n // 64)))
    head = f"type R = {{ {fields} }}\n"
    return head + _numbered(n - len(head), "fn u{i}(r: R) {{ print(r.g{i}) }}\n")


def _one_line_list(n: int) -> str:
    """One valid statement on one line, ``let xs = [1, 2, …]``: a single item of about ``n / 3``
    tokens, parsed in one go (a 1.2 MB one-line file took ~22 s in a user's trial: linear, see
    the ratio)."""
    return _numbered(n, "{i}, ").join(("let xs = [", "0]\n"))


def _one_line_plus(n: int) -> str:
    """``let s = 1 + 1 + …`` on one line: one expression of about ``n / 2`` tokens."""
    return "let s = " + " + ".join("1" for _ in range(max(1, n // 4))) + "\n"


def _one_line_string(n: int) -> str:
    """``let s = "aaa…"``: one string token of about ``n`` characters."""
    return 'let s = "' + "a" * n + '"\n'


def _numbered(n: int, line: str) -> str:
    out: list[str] = []
    size = i = 0
    while size < n:
        out.append(line.format(i=i + 1))
        size += len(out[-1])
        i += 1
    return "".join(out)


#: kind → (valid?, generator of about ``n`` characters)
KINDS: dict[str, tuple[bool, Callable[[int], str]]] = {
    "valid_fns": (True, _valid),
    "fn_paren": (False, _repeat("fn f( {\n")),
    "bad_stmt": (False, _repeat("x = = 1\n")),
    "unclosed_str": (False, _repeat('let s = "abc\n')),
    "token_soup": (False, _soup),
    "paren_bracket": (False, _repeat("x = f(]\n")),
    "deco_open": (False, _repeat("@route(\n")),
    "colon_pop": (False, lambda n: "{" + "(" * (n // 2) + "\n" + "if }:\n" * (n // 12)),
    "semis_one_line": (False, lambda n: "a;" * (n // 2)),
    "undef_names": (False, _undef_names),
    "undef_types": (False, _undef_types),
    "unknown_fields": (False, _unknown_fields),
    "one_line_list": (True, _one_line_list),
    "one_line_plus": (True, _one_line_plus),
    "one_line_string": (True, _one_line_string),
    "one_line_junk": (False, lambda n: "x = = 1 " * (n // 8) + "\n"),  # one item, one syntax error at its start
    "one_line_chars": (False, lambda n: "let x = 3 $ 4 " * (n // 14) + "\n"),  # one E0101 per 14 characters
}


def make_lines(make: Callable[[int], str], lines: int) -> str:
    """The first ``lines`` lines of ``make``'s text (grown until it has that many)."""
    n = 64 * lines
    while True:
        parts = make(n).splitlines(keepends=True)
        if len(parts) >= lines or n > 1 << 30:
            return "".join(parts[:lines])
        n *= 2


def measure(text: str) -> tuple[float, int, float]:
    """CPU seconds of one ``check(text)``, its number of diagnostics, and CPU seconds of rendering
    them all in the human format."""
    start = time.process_time()
    result = check(text)
    seconds = time.process_time() - start
    start = time.process_time()
    result.render("human")
    return seconds, len(result.diagnostics), time.process_time() - start


def main(argv: list[str] | None = None) -> int:
    """Print one line per kind: size, seconds, seconds/MB at both sizes, and the time ratio."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=0.1, help="smaller size in MB (default 0.1; the larger is 4x)")
    ap.add_argument("--lines", type=int, default=0, help="smaller size in lines instead (the larger is 4x)")
    ap.add_argument("--kinds", default=",".join(KINDS), help="comma-separated kinds (default: all)")
    ap.add_argument("--one-line", action="store_true", help="only the kinds that are one line long")
    args = ap.parse_args(argv)
    kinds = [k for k in KINDS if "one_line" in k] if args.one_line else args.kinds.split(",")
    check("x = 1\n")  # load the grammar first
    n = int(args.mb * 1_000_000)
    size_cols = f"{'MB':>6s} {'s':>7s} {'s/MB':>6s}"
    print(f"{'kind':16s} {'valid':5s} {size_cols} {size_cols} {'ratio':>6s} {'diags':>7s} {'human':>7s} {'ratio':>6s}"
          + (f"  (lines: {args.lines}, {4 * args.lines})" if args.lines else ""))
    for kind in kinds:
        valid, make = KINDS[kind]
        row = []
        for factor in (1, 4):
            text = make_lines(make, factor * args.lines) if args.lines else make(factor * n)
            seconds, diags, human = measure(text)
            mb = len(text) / 1e6
            row.append((mb, seconds, diags, human))
        (mb1, s1, _, h1), (mb2, s2, d2, h2) = row
        print(f"{kind:16s} {str(valid):5s} {mb1:6.3f} {s1:7.2f} {s1 / mb1:6.1f} {mb2:6.3f} {s2:7.2f} {s2 / mb2:6.1f}"
              f" {s2 / max(s1, 1e-9):6.1f} {d2:7d} {h2:7.2f} {h2 / max(h1, 1e-9) if h1 > 1e-3 else float('nan'):6.1f}",
              flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
