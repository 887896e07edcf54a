"""Reading large requests: CPU seconds of ``vox_lang.requests.extract_request`` on generated
requests of about 10 KB and 100 KB made of many short backticked spans, and the ratio of the two
times (about 10 when reading scales linearly; far above it when each span rescans the text
before it, as it did before: 100 KB of bare `x` spans took ~8 s, now a few hundredths).

Kinds: ``bare`` (a backticked name with no kind word: every span searches back and finds
nothing), ``kinded`` ("a function `f1` and ..."), ``sig`` (signatures, each parsed), ``type`` (a
record type named without its body: the form-word search too), ``typedecl`` (``type`` declarations).
Times are ``time.process_time`` so that other load on the machine counts less.

Run: ``.venv/bin/python bench/request_parsing.py [--kb 10] [--kinds bare,sig]`` (the second size is 10x).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from vox_lang.requests import extract_request  # noqa: E402

#: one sentence or phrase per kind, repeated with a fresh index until the request is big enough
UNITS = {
    "bare": "Use `x` here. ",
    "kinded": "a function `f{i}` and ",
    "sig": "a function `f{i}(x: int) to int`, ",
    "type": "a record type `T{i}` with fields, ",
    "typedecl": "Define `type A{i} = | Yes | No`. ",
}


def make_request(kind: str, size: int) -> str:
    """About ``size`` characters of ``kind``'s unit, indexed 0, 1, 2, ..."""
    parts: list[str] = []
    n = i = 0
    while n < size:
        parts.append(UNITS[kind].format(i=i))
        n += len(parts[-1])
        i += 1
    return "".join(parts)


def seconds(text: str) -> tuple[float, int]:
    """CPU seconds of one ``extract_request(text)`` and how many items it found."""
    start = time.process_time()
    spec = extract_request(text)
    return time.process_time() - start, len(spec.items)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kb", type=float, default=10.0, help="the smaller size in KB (the larger is 10x)")
    parser.add_argument("--kinds", default=",".join(UNITS), help="comma-separated kinds")
    args = parser.parse_args()
    small = int(args.kb * 1000)
    print(f"{'kind':<10} {'KB':>6} {'items':>6} {'seconds':>8}   {'KB':>6} {'items':>6} {'seconds':>8}   ratio")
    for kind in args.kinds.split(","):
        t1, n1 = seconds(make_request(kind, small))
        t2, n2 = seconds(make_request(kind, small * 10))
        ratio = t2 / t1 if t1 > 0 else float("inf")
        row = f"{kind:<10} {small / 1000:>6.0f} {n1:>6} {t1:>8.3f}   {small * 10 / 1000:>6.0f} {n2:>6} {t2:>8.3f}"
        print(f"{row}   {ratio:5.1f}")


if __name__ == "__main__":
    main()
