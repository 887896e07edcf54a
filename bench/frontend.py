"""Front-end benchmark: lines/second of ``vox_lang.check`` (lex, parse, lower, type check) on
generated program sets of about 5,000 and 50,000 lines, the 10x time ratio, and the
launch-to-result time of ``vox check`` on a small file.

Targets (issue 2): >= 3,000 lines/s on one core; the 10x input in <= 11x the time;
``vox check`` <= 0.5 s. Run: ``.venv/bin/python bench/frontend.py [--robustness]``
(``--robustness`` also times pathological 1 MB inputs). Times are CPU seconds of this process
(``time.process_time``) so that other load on the machine counts less; the start-up figure is
the median of several runs, wall clock and the child's CPU time. Also times one program nested
200 levels deep, which is checked in a child process (``vox_lang.deep``).
"""

from __future__ import annotations

import argparse
import gc
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import vox_lang  # noqa: E402

TEMPLATE = """\
// generated program {i}
import std.fs
type Item{i} = {{ name: str, qty: int, price: float }}
type Shape{i} = | Circle{i}(r: float) | Rect{i}(w: float, h: float) | Empty{i}

fn area{i}(s: Shape{i}) to float {{
  ret match s {{
    Circle{i}(r) -> 3.14 * r * r
    Rect{i}(w, h) -> w * h
    Empty{i} -> 0.0
  }}
}}

fn total{i}(items: List[Item{i}]) to float {{
  let mut sum = 0.0
  for it, k in items {{
    if it.qty > {i} % 7 {{
      sum = sum + it.price * float(it.qty)
    }} else if k == 0 {{
      sum += 1.0
    }} else {{
      sum -= 0.5
    }}
  }}
  ret sum
}}

fn classify{i}(n: int) to str {{
  let mut label = "none"
  let mut j = 0
  while j < n {{
    j += 1
    if j % 2 == 0 {{ continue }}
    if j > 100 {{ break }}
  }}
  label = match n % 3 {{
    0 -> "fizz"
    1 -> "one"
    _ -> str(n)
  }}
  ret label + " " + str(j)
}}

fn names{i}(items: List[Item{i}]) to List[str] {{
  ret items.map(fn(it: Item{i}) to str {{ ret it.name }})
}}

fn lookup{i}(m: Map[str, int], key: str) to int {{
  ret m.get(key).unwrap_or(-1)
}}

fn load{i}(path: str) to Result[int] {{
  let text = fs.read(path)?
  ret Ok(len(text.split("\\n")))
}}

actor Counter{i} {{
  on bump(n: int) to int {{ ret n + 1 }}
}}

fn Page{i}(title: str) to Element {{
  ret column(gap=2) {{
    heading(text=title)
    text(value="items: " + str({i}))
  }}
}}

let items{i}: List[Item{i}] = [{{ name: "pen", qty: 2, price: 1.5 }}, {{ name: "ink", qty: 0, price: 3.0 }}]
let counter{i} = spawn(Counter{i})
print(counter{i}.bump(len(names{i}(items{i}))))
print(classify{i}({i}) + str(total{i}(items{i}) + area{i}(Rect{i}(2.0, 3.0))))
"""


def program(i: int) -> str:
    return TEMPLATE.format(i=i)


def program_set(target_lines: int) -> list[str]:
    """Programs of ~85 lines each, names varied, until ``target_lines`` is reached."""
    out: list[str] = []
    lines = 0
    i = 0
    while lines < target_lines:
        src = program(i)
        out.append(src)
        lines += src.count("\n")
        i += 1
    return out


def run_set(programs: list[str], repeats: int) -> tuple[int, float]:
    """Check every program; return (lines, least CPU seconds of ``repeats`` runs: the machine
    is shared, and the least is the run least disturbed). Fails loudly on a diagnostic."""
    lines = sum(p.count("\n") for p in programs)
    best = float("inf")
    for _ in range(repeats):
        gc.collect()
        start = time.process_time()
        for p in programs:
            result = vox_lang.check(p, strict=True)
            if result.diagnostics:
                raise SystemExit("generated program has diagnostics:\n" + result.render("repair"))
        best = min(best, time.process_time() - start)
    return lines, best


def startup(runs: int = 7) -> tuple[float, float]:
    """``vox check small.vox`` (launch to result): median wall-clock seconds, and median CPU
    seconds of the child (user + system; on a shared machine the wall figure also counts
    waiting for a core, the CPU figure does not).

    Raises:
        SystemExit: ``vox check`` failed on the generated file (its output is shown).
    """
    vox = Path(sys.executable).with_name("vox")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "small.vox"
        path.write_text(program(1), encoding="utf-8")
        walls, cpus = [], []
        for _ in range(runs):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t = time.perf_counter()
            done = subprocess.run([str(vox), "check", str(path)], capture_output=True, text=True)
            walls.append(time.perf_counter() - t)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
            if done.returncode != 0:
                raise SystemExit(f"vox check failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    return statistics.median(walls), statistics.median(cpus)


def deep_program() -> float:
    """Wall seconds of ``vox_lang.check`` on a program nested 200 levels deep: deeper than
    the caller's stack budget, so it is checked in a child process (``vox_lang.deep``)."""
    text = "fn f(c: bool) to int {\n" + "if c {\n" * 199 + "ret 1\n" + "}\n" * 199 + "ret 0\n}\n"
    t = time.perf_counter()
    result = vox_lang.check(text, strict=True)
    if result.diagnostics:
        raise SystemExit("deep program has diagnostics:\n" + result.render("repair"))
    return time.perf_counter() - t


def heavy_imports() -> list[str]:
    code = (
        "import sys\nsys.argv=['vox','check',sys.argv[1]]\nfrom serving.cli import main\n"
        "try: main()\nexcept SystemExit: pass\n"
        "heavy = ('torch', 'transformers', 'dagster', 'litellm', 'mlflow')\n"
        "print('HEAVY:' + ','.join(m for m in heavy if m in sys.modules))"
    )
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "small.vox"
        path.write_text(program(1), encoding="utf-8")
        out = subprocess.run([sys.executable, "-c", code, str(path)], cwd=REPO, capture_output=True, text=True)
    line = next((ln for ln in out.stdout.splitlines() if ln.startswith("HEAVY:")), "HEAVY:?")
    return [m for m in line[len("HEAVY:"):].split(",") if m]


def robustness() -> None:
    meg = 1 << 20
    cases: dict[str, str | bytes] = {
        "1 MB of unclosed `(`": "let deep = " + "(" * meg,
        "1 MB of arbitrary bytes": bytes(range(256)) * (meg // 256),
        "1 MB function (37k lines)": "fn main() {\n" + "  let x = foo(1, 2) + 3 * y\n" * 37_000 + "}\n",
        "depth 10,000": "let a = " + "(" * 10_000 + "1" + ")" * 10_000,
    }
    for name, data in cases.items():
        t = time.process_time()
        result = vox_lang.check(data)
        print(f"  {name}: {time.process_time() - t:.1f} s CPU, {len(result.diagnostics)} diagnostics")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robustness", action="store_true", help="also time pathological 1 MB inputs")
    args = parser.parse_args()
    vox_lang.check(program(0))  # warm: grammar load, lazy imports
    small_lines, small_t = run_set(program_set(5_000), repeats=5)
    big_lines, big_t = run_set(program_set(50_000), repeats=2)
    print(f"front end, {small_lines} lines: {small_t:.2f} s CPU = {small_lines / small_t:,.0f} lines/s")
    print(f"front end, {big_lines} lines: {big_t:.2f} s CPU = {big_lines / big_t:,.0f} lines/s")
    ratio = big_t / small_t
    size = big_lines / small_lines
    print(f"{size:.1f}x the input took {ratio:.2f}x the time (target <= {size * 1.1:.1f}x)")
    wall, cpu = startup()
    print(f"vox check start-up (launch to result, median of 7): {wall:.2f} s wall clock, {cpu:.2f} s CPU")
    print(f"a program nested 200 levels deep (checked in a child process): {deep_program():.2f} s wall clock")
    print(f"heavy modules imported by vox check: {heavy_imports() or 'none'}")
    if args.robustness:
        robustness()


if __name__ == "__main__":
    main()
