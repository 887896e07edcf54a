"""Compile-pass evaluation: generate Vox for held-out tasks, run the front end, score pass@k.

For each task (``pipeline/data/eval_tasks.yaml``, never used for training) a generator returns
``n`` completions; the ```vox blocks of one completion are checked together as one module by
``vox_lang.check``; a completion passes when it has at least one block and no error.
``pass@k`` uses the unbiased estimator ``1 - C(n-c, k) / C(n, k)`` (Chen et al., 2021), averaged
over tasks. Generators are plain callables, so tests can script one.
"""

from __future__ import annotations

import logging
import math
import re
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.chat_format import check_mode, user_turn
from pipeline.errors import DataError

log = logging.getLogger(__name__)

TASKS_PATH = Path(__file__).resolve().parent / "data" / "eval_tasks.yaml"
FAMILIES = ("functions", "types_match", "actors", "workflows", "mcp", "tests", "views", "modules", "automation",
            "script", "web")  # the corpus's nine organic families + synthetic script and web requests
NO_CODE = "NO_CODE"  # failure code for a completion without a ```vox block
_BLOCK = re.compile(r"```vox[ \t]*\n(.*?)(?:```|\Z)", re.S)

#: ``generate(conversations, n) -> n completions per conversation``
Generator = Callable[[Sequence[list[dict[str, str]]], int], list[list[str]]]
#: ``check(code) -> (passed, first error code or None)``
Checker = Callable[[str], tuple[bool, str | None]]


@dataclass(frozen=True)
class EvalConfig:
    """Recipe section ``eval:``."""

    tasks_path: str = ""  # task suite YAML ("" = pipeline/data/eval_tasks.yaml)
    n_samples: int = 4  # completions per task (n of the pass@k estimator)
    k: int = 2  # k of pass@k (<= n_samples)
    temperature: float = 0.2  # sampling temperature (0 = greedy, then n is forced to 1)
    top_p: float = 0.95  # nucleus sampling
    max_new_tokens: int = 160  # generation cap per completion
    batch_size: int = 96  # sequences per generate() call
    pass_threshold: float = 0.3  # blocking check: adapter pass@1 must reach this (and beat base)
    strict: bool = False  # check completions in strict mode (warnings fail)
    seed: int = 0  # sampling seed
    device: str = "auto"  # auto | cuda | mps | cpu


@dataclass(frozen=True)
class Task:
    """One held-out task: a natural-language request for one Vox program."""

    id: str
    family: str
    kind: str
    prompt: str


@dataclass(frozen=True)
class ModelEval:
    """Scores of one model on the suite.

    Attributes:
        pass_at_1, pass_at_k: suite means. per_family / per_kind: ``{name: {"tasks", "pass@1", "pass@k"}}``.
        failure_codes: ``(code, count)`` over failing completions, most common first.
        samples: a few ``{"task", "completion", "passed", "code"}`` for inspection.
        seconds: generation + checking time.
    """

    pass_at_1: float
    pass_at_k: float
    k: int
    n: int
    per_family: dict[str, dict[str, float]]
    per_kind: dict[str, dict[str, float]]
    failure_codes: tuple[tuple[str, int], ...]
    samples: tuple[dict[str, Any], ...] = ()
    seconds: float = 0.0


@dataclass(frozen=True)
class EvalReport:
    """Base vs adapter on the same tasks and presentation, and the gate decision."""

    base: ModelEval
    adapter: ModelEval
    threshold: float
    passed: bool
    reason: str
    system_prompt_mode: str
    tasks: int
    leaked_tasks: tuple[str, ...] = ()
    plot_path: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def load_tasks(path: Path | None = None) -> list[Task]:
    """Load and validate the task suite.

    Raises:
        DataError: missing/invalid file, a task without id/family/prompt, a duplicate id, or
            an unknown family (each names the task).
    """
    import yaml

    path = path or TASKS_PATH
    try:
        data = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise DataError(f"{path}: cannot read task suite: {exc}") from exc
    raw = data.get("tasks") if isinstance(data, dict) else None
    if not isinstance(raw, list) or not raw:
        raise DataError(f"{path}: expected a non-empty `tasks:` list")
    tasks, seen = [], set()
    for i, item in enumerate(raw):
        if not isinstance(item, dict) or not all(item.get(k) for k in ("id", "family", "prompt")):
            raise DataError(f"{path}: task #{i + 1} needs id, family and prompt")
        if item["id"] in seen:
            raise DataError(f"{path}: duplicate task id {item['id']!r}")
        if item["family"] not in FAMILIES:
            raise DataError(f"{path}: task {item['id']!r}: unknown family {item['family']!r} "
                            f"(one of {', '.join(FAMILIES)})")
        seen.add(item["id"])
        tasks.append(Task(str(item["id"]), item["family"], str(item.get("kind", "declaration")),
                          str(item["prompt"]).strip()))
    return tasks


def extract_vox(text: str) -> str | None:
    """The ```vox blocks of ``text`` joined as one module, or ``None`` if there is none.

    An unterminated final block (generation cut off) counts up to the end of the text.
    """
    blocks = _BLOCK.findall(text)
    return "\n\n".join(b.rstrip() for b in blocks) if blocks else None


def vox_checker(strict: bool = False) -> Checker:
    """A :data:`Checker` backed by ``vox_lang.check``."""
    import vox_lang

    def check(code: str) -> tuple[bool, str | None]:
        result = vox_lang.check(code, path="<completion>", strict=strict)
        return result.ok, (result.errors[0].code if result.errors else None)

    return check


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k for one task with ``c`` of ``n`` samples passing (``k <= n``).

    Raises:
        ValueError: ``k`` outside ``1..n`` or ``c`` outside ``0..n``.
    """
    if not 1 <= k <= n or not 0 <= c <= n:
        raise ValueError(f"pass_at_k needs 1 <= k <= n and 0 <= c <= n, got n={n} c={c} k={k}")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def _groups(tasks: list[Task], counts: list[int], n: int, k: int, key: str) -> dict[str, dict[str, float]]:
    out: dict[str, list[tuple[float, float]]] = {}
    for task, c in zip(tasks, counts):
        out.setdefault(getattr(task, key), []).append((pass_at_k(n, c, 1), pass_at_k(n, c, k)))
    return {name: {"tasks": len(v), "pass@1": sum(a for a, _ in v) / len(v), "pass@k": sum(b for _, b in v) / len(v)}
            for name, v in sorted(out.items())}


def evaluate_model(generate: Generator, tasks: list[Task], cfg: EvalConfig, mode: str,
                   checker: Checker | None = None) -> ModelEval:
    """Generate ``n`` completions per task (presented under ``mode``) and score them.

    Raises:
        DataError: the generator returned the wrong number of completions.
    """
    start = time.perf_counter()
    n = cfg.n_samples if cfg.temperature > 0 else 1
    k = min(cfg.k, n)
    checker = checker or vox_checker(cfg.strict)
    outputs = generate([user_turn(t.prompt, check_mode(mode)) for t in tasks], n)
    if len(outputs) != len(tasks) or any(len(o) != n for o in outputs):
        raise DataError(f"generator returned {[len(o) for o in outputs][:5]}... for {len(tasks)} tasks x {n}")
    counts, failures, samples = [], Counter(), []
    for task, completions in zip(tasks, outputs):
        c = 0
        for text in completions:
            code = extract_vox(text)
            ok, err = (False, NO_CODE) if code is None else checker(code)
            c += ok
            if not ok:
                failures[err or "UNKNOWN"] += 1
            if len(samples) < 24 and text is completions[0]:
                samples.append({"task": task.id, "completion": text[:600], "passed": ok, "code": err})
        counts.append(c)
    p1 = sum(pass_at_k(n, c, 1) for c in counts) / len(tasks)
    pk = sum(pass_at_k(n, c, k) for c in counts) / len(tasks)
    return ModelEval(pass_at_1=p1, pass_at_k=pk, k=k, n=n, per_family=_groups(tasks, counts, n, k, "family"),
                     per_kind=_groups(tasks, counts, n, k, "kind"), failure_codes=tuple(failures.most_common(10)),
                     samples=tuple(samples), seconds=time.perf_counter() - start)


def gate(base: ModelEval, adapter: ModelEval, threshold: float) -> tuple[bool, str]:
    """The release gate: adapter pass@1 >= threshold and > base pass@1. Returns ``(ok, why)``."""
    if adapter.pass_at_1 < threshold:
        return False, f"adapter pass@1 {adapter.pass_at_1:.3f} < threshold {threshold:.3f}"
    if adapter.pass_at_1 <= base.pass_at_1:
        return False, f"adapter pass@1 {adapter.pass_at_1:.3f} not above base {base.pass_at_1:.3f}"
    return True, f"adapter pass@1 {adapter.pass_at_1:.3f} >= {threshold:.3f} and > base {base.pass_at_1:.3f}"


def leaked(tasks: list[Task], train_prompts: set[str]) -> tuple[str, ...]:
    """Ids of tasks whose prompt occurs verbatim in the training prompts (should be none)."""
    norm = {" ".join(p.split()).lower() for p in train_prompts}
    return tuple(t.id for t in tasks if " ".join(t.prompt.split()).lower() in norm)


def plot_report(report: EvalReport, path: Path) -> Path:
    """Bar chart of pass@1 per family, base vs adapter, saved as PNG at ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fams = list(report.adapter.per_family)
    x = range(len(fams))
    fig, ax = plt.subplots(figsize=(9, 3.6), dpi=90)
    ax.bar([i - 0.2 for i in x], [report.base.per_family.get(f, {}).get("pass@1", 0) for f in fams], 0.4, label="base")
    ax.bar([i + 0.2 for i in x], [report.adapter.per_family[f]["pass@1"] for f in fams], 0.4, label="adapter")
    ax.axhline(report.threshold, color="grey", linestyle="--", linewidth=1, label="threshold")
    ax.set_xticks(list(x), fams, rotation=30, ha="right")
    ax.set_ylim(0, 1)
    ax.set_ylabel("compile pass@1")
    ax.set_title(f"pass@1 base {report.base.pass_at_1:.2f} -> adapter {report.adapter.pass_at_1:.2f}")
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path


def run_eval(base_gen: Generator, adapter_gen: Generator, tasks: list[Task], cfg: EvalConfig, mode: str,
             checker: Checker | None = None, train_prompts: set[str] = frozenset(),
             out_dir: Path | None = None) -> EvalReport:
    """Evaluate base and adapter on ``tasks`` with the same presentation and decide the gate.

    Writes ``report.json`` and ``pass_at_1.png`` under ``out_dir`` when given.
    """
    import json
    from dataclasses import asdict, replace

    if not 1 <= cfg.k <= max(cfg.n_samples, 1):
        raise DataError(f"eval.k={cfg.k} must be between 1 and eval.n_samples={cfg.n_samples}")
    base = evaluate_model(base_gen, tasks, cfg, mode, checker)
    adapter = evaluate_model(adapter_gen, tasks, cfg, mode, checker)
    ok, why = gate(base, adapter, cfg.pass_threshold)
    report = EvalReport(base=base, adapter=adapter, threshold=cfg.pass_threshold, passed=ok, reason=why,
                        system_prompt_mode=mode, tasks=len(tasks), leaked_tasks=leaked(tasks, set(train_prompts)))
    if report.leaked_tasks:
        log.warning("eval: %d task prompt(s) also appear in training data: %s", len(report.leaked_tasks),
                    ", ".join(report.leaked_tasks))
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        report = replace(report, plot_path=str(plot_report(report, out_dir / "pass_at_1.png")))
        tmp = out_dir / "report.json.tmp"
        tmp.write_text(json.dumps(asdict(report), indent=1))
        tmp.replace(out_dir / "report.json")
    return report
