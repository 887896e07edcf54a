"""Reading large requests: CPU seconds of ``vox_lang.requests.extract_request`` on generated
requests of about 10 KB and 100 KB made of many short backticked spans, and the ratio of the two
times (about 10 when reading scales linearly; far above it when each span rescans the text
before it, as it did before ab9b50c: 100 KB of bare `x` spans took ~24 s, now a few hundredths).

Kinds: ``bare`` (a backticked name with no kind word: every span searches back and finds
nothing), ``kinded`` ("a function `f1` and ..."), ``sig`` (signatures, each parsed), ``type`` (a
record type named without its body: the form-word search too), ``typedecl`` (``type`` declarations),
``generic`` (generic signatures, ``first<T>(...)``).
Times are ``time.process_time`` so that other load on the machine counts less.

``--before REV`` prints the same table first for ``vox_lang`` as it was at git revision REV
(extracted with ``git archive`` into a temporary directory and run there in a child process),
then for the working tree: e.g. ``--before ab9b50c^`` shows the quadratic reading it fixed.

Run: ``.venv/bin/python bench/request_parsing.py [--kb 10] [--kinds bare,sig] [--before REV]``
(the second size is 10x).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]

#: one sentence or phrase per kind, repeated with a fresh index until the request is big enough
UNITS = {
    "bare": "Use `x` here. ",
    "kinded": "a function `f{i}` and ",
    "sig": "a function `f{i}(x: int) to int`, ",
    "type": "a record type `T{i}` with fields, ",
    "typedecl": "Define `type A{i} = | Yes | No`. ",
    "generic": "a function `first{i}<T>(xs: List[T]) to T`, ",
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


def seconds(extract: Callable[[str], Any], text: str) -> tuple[float, int]:
    """CPU seconds of one ``extract(text)`` and how many items it found."""
    start = time.process_time()
    spec = extract(text)
    return time.process_time() - start, len(spec.items)


def table(root: Path, small: int, kinds: list[str]) -> None:
    """Print one row per kind for the ``vox_lang`` under ``root``."""
    sys.path.insert(0, str(root))
    from vox_lang.requests import extract_request

    print(f"{'kind':<10} {'KB':>6} {'items':>6} {'seconds':>8}   {'KB':>6} {'items':>6} {'seconds':>8}   ratio")
    for kind in kinds:
        t1, n1 = seconds(extract_request, make_request(kind, small))
        t2, n2 = seconds(extract_request, make_request(kind, small * 10))
        ratio = t2 / t1 if t1 > 0 else float("inf")
        row = f"{kind:<10} {small / 1000:>6.0f} {n1:>6} {t1:>8.3f}   {small * 10 / 1000:>6.0f} {n2:>6} {t2:>8.3f}"
        print(f"{row}   {ratio:5.1f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--kb", type=float, default=10.0, help="the smaller size in KB (the larger is 10x)")
    parser.add_argument("--kinds", default=",".join(UNITS), help="comma-separated kinds")
    parser.add_argument("--before", metavar="REV", help="first time vox_lang as it was at git revision REV")
    parser.add_argument("--root", type=Path, default=REPO, help=argparse.SUPPRESS)  # the child's vox_lang
    args = parser.parse_args()
    small = int(args.kb * 1000)
    kinds = args.kinds.split(",")
    if args.before:
        with tempfile.TemporaryDirectory() as old:
            archive = subprocess.run(["git", "-C", str(REPO), "archive", args.before, "vox_lang"],
                                     check=True, capture_output=True).stdout
            subprocess.run(["tar", "-x", "-C", old], input=archive, check=True)
            print(f"before ({args.before}):", flush=True)
            subprocess.run([sys.executable, __file__, "--kb", str(args.kb), "--kinds", args.kinds, "--root", old],
                           check=True)
        print("after (working tree):", flush=True)
    table(args.root, small, kinds)


if __name__ == "__main__":
    main()
