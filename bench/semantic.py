"""Throughput of the front end's semantic half (lowering + type checking), and of the whole
front end for reference, on generated programs of ~5,000 and ~50,000 lines (one core).

Run: ``.venv/bin/python bench/semantic.py``. Target: the whole front end ≥ 3,000 lines/s with
linear scaling to 50,000 lines. Prints one line per size; exits non-zero if a program does not
check clean (the generator is broken) — never because of speed.
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from vox_lang.checker import check_module  # noqa: E402
from vox_lang.diagnostics import DiagnosticSink  # noqa: E402
from vox_lang.lower import lower_module  # noqa: E402
from vox_lang.parser import parse_module  # noqa: E402
from vox_lang.source import SourceFile  # noqa: E402

#: example programs without imports or routes, so that renamed copies can be concatenated
UNITS = ("option_result.vox", "shapes.vox", "generics.vox", "counter_actor.vox")
_DECL = re.compile(r"\b(?:fn|type|let(?: mut)?|actor|workflow|activity)\s+([A-Za-z_]\w*)|\|\s*([A-Z]\w*)")


def program(lines: int) -> str:
    """Copies of the example units with every top-level name suffixed, about ``lines`` long."""
    base = "\n".join((ROOT / "examples" / u).read_text(encoding="utf-8") for u in UNITS)
    names = {a or b for a, b in _DECL.findall(base)} - {"_"}
    pattern = re.compile(r"\b(" + "|".join(sorted(names, key=len, reverse=True)) + r")\b")
    unit_lines = base.count("\n") + 1
    copies = max(1, lines // unit_lines)
    return "\n".join(pattern.sub(rf"\g<1>_{i}", base) for i in range(copies))


def measure(text: str) -> tuple[int, float, float, float, int]:
    """``(lines, parse s, lower s, check s, diagnostics)`` for one run, in CPU seconds of this
    process (wall time on a shared machine mostly measures the neighbours)."""
    src = SourceFile(text)
    sink = DiagnosticSink(src)
    t0 = time.process_time()
    module = parse_module(src, sink)
    t1 = time.process_time()
    lowered = lower_module(module, sink)
    t2 = time.process_time()
    check_module(lowered, sink)
    t3 = time.process_time()
    return text.count("\n") + 1, t1 - t0, t2 - t1, t3 - t2, len(sink)


def main() -> int:
    measure(program(500))  # warm up (grammar load, imports)
    for size in (5_000, 50_000):
        lines, parse_s, lower_s, check_s, diags = measure(program(size))
        semantic = lines / (lower_s + check_s)
        total = lines / (parse_s + lower_s + check_s)
        print(
            f"{lines:>6} lines: lower+check {semantic:>8.0f} lines/s "
            f"(lower {lower_s:.2f}s, check {check_s:.2f}s); whole front end {total:>6.0f} lines/s"
        )
        if diags:
            print(f"generated program has {diags} diagnostics", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
