"""Compile-pass evaluation: generate Vox for held-out tasks, run the front end, score pass@k.

For each task (``pipeline/data/eval_tasks.yaml`` and the user-phrased
``pipeline/data/eval_tasks_user.yaml``, never used for training) a generator returns ``n``
completions; the ```vox blocks of one completion are checked together as one module by
``vox_lang.check``. The **headline** pass (release gate, model card, ``vox_mens.json``) needs
strict mode, a non-empty program and every item the task names declared
(:mod:`pipeline.eval_scoring`); the raw compile rate is kept as a secondary figure.
``pass@k`` uses the unbiased estimator ``1 - C(n-c, k) / C(n, k)`` (Chen et al., 2021), averaged
over tasks. Generators are plain callables, so tests can script one.

Policies: ``unconstrained`` (plain sampling), ``constrained`` (grammar/name/request-constrained
decoding by :mod:`pipeline.decoding`, when a constrained generator is given) and ``verified``
(compiler-verified best-of-``verify_n`` over the samples of the gate policy: the first candidate
that compiles and declares what was asked, as ``vox chat`` answers). The gate compares base and
adapter under the same policy: ``constrained`` when available, else ``unconstrained``.
"""

from __future__ import annotations

import logging
import math
import time
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from annotated_types import Ge, Gt, Le

from pipeline import atomic
from pipeline.chat_format import check_mode, user_turn
from pipeline.errors import DataError
from pipeline.eval_checks import exec_gate, with_exec
from pipeline.eval_scoring import (  # noqa: F401 - NO_CODE, extract_vox, vox_checker re-exported (older imports)
    CLASSES,
    NO_CODE,
    Checker,
    SampleScore,
    extract_vox,
    failure_class,
    score_completion,
    verified_choice,
    vox_checker,
)
from pipeline.eval_tasks import Task, leaked
from pipeline.recipe_types import EvalWorkers, NonNegative, Positive, Seed

if TYPE_CHECKING:
    from pipeline.eval_workers import BaseSampler

log = logging.getLogger(__name__)

POLICIES = ("unconstrained", "constrained", "verified")

#: ``generate(conversations, n) -> n completions per conversation``
Generator = Callable[[Sequence[list[dict[str, str]]], int], list[list[str]]]


@dataclass(frozen=True)
class EvalConfig:
    """Recipe section ``eval:``."""

    tasks_path: str = ""  # task suite YAML ("" = eval_tasks.yaml + eval_tasks_user.yaml)
    n_samples: Positive = 4  # completions per task (n of the pass@k estimator)
    k: Positive = 2  # k of pass@k (<= n_samples: pipeline.recipe_rules)
    temperature: Annotated[float, Ge(0)] = 0.2  # sampling temperature (0 = greedy, then n is forced to 1)
    top_p: Annotated[float, Gt(0), Le(1)] = 0.95  # nucleus sampling
    max_new_tokens: Positive = 160  # generation cap per completion
    batch_size: Positive = 96  # sequences per generate() call
    pass_threshold: Annotated[float, Ge(0), Le(1)] = 0.3  # blocking check: adapter headline pass@1 >= this, > base
    strict: bool = False  # check in strict mode (the headline is strict either way: warnings fail it)
    verify_n: Positive = 4  # candidates of the verified best-of-n policy (<= n_samples: pipeline.recipe_rules)
    retries: NonNegative = 4  # constrained policy: compiler-checked retry rounds (decoding_retry.RETRIES, as vox serve)
    retry_temperature: Annotated[float, Ge(0)] = 0.7  # sampling temperature of those retries
    gate_metric: Literal["compile", "exec"] = "compile"  # release gate on "compile" (headline pass@1) or "exec"
    # (hidden checks pass)
    seed: Seed = 0  # sampling seed
    device: Literal["auto", "cuda", "mps", "cpu"] = "auto"  # auto = cuda, then mps, then cpu
    workers: EvalWorkers = 1  # 2: the base's gate-policy samples in a second process (eval_workers)


@dataclass(frozen=True)
class ModelEval:
    """Scores of one model under one policy on the suite.

    Attributes:
        pass_at_1, pass_at_k: headline suite means (strict, non-empty, declares what was asked).
        per_family / per_kind / per_suite: ``{name: {"tasks", "pass@1", "pass@k", "raw_pass@1",
            "declared"}}``.
        failure_codes: ``(code, count)`` over failing completions (first reason), most common first.
        samples: a few ``{"task", "completion", "passed", "code"}`` for inspection.
        seconds: generation + checking time.
        policy: ``unconstrained``, ``constrained`` or ``verified``.
        raw_pass_at_1: compiles without errors (warnings and names not checked).
        declared_rate: share of completions, over tasks that name items, declaring all of them
            (``None`` when no task names one).
        failure_classes: share of failing completions per class (:data:`pipeline.eval_scoring.CLASSES`).
        e0401_rate: share of completions with a ```vox block whose diagnostics include E0401.
        syntax_rate: share of completions with a *closed* block holding an E01xx/E02xx error.
        truncated: completions whose last block was cut by the token limit.
        mask_skips: completions whose name mask was skipped at a dead end at least once (the
            generator's ``mask_skips``; ``None`` when the generator does not report it).
        wound_down: blocks (first pass and retries) that derailed and were wound down instead of
            running to the token limit (the generator's ``wound_down``; ``None`` when not reported).
        retries: what the compiler-checked retries did (``{"faulty", "retried", "replaced",
            "fixed"}``, :class:`pipeline.decoding_retry.RetryStats`); ``None`` without retries.
    """

    pass_at_1: float
    pass_at_k: float
    k: int
    n: int
    per_family: dict[str, dict[str, Any]]
    per_kind: dict[str, dict[str, Any]]
    failure_codes: tuple[tuple[str, int], ...]
    samples: tuple[dict[str, Any], ...] = ()
    seconds: float = 0.0
    policy: str = "unconstrained"
    raw_pass_at_1: float = 0.0
    declared_rate: float | None = None
    failure_classes: dict[str, float] = field(default_factory=dict)
    e0401_rate: float = 0.0
    syntax_rate: float = 0.0
    truncated: int = 0
    per_suite: dict[str, dict[str, Any]] = field(default_factory=dict)
    exec_pass_at_1: float = 0.0  # compiles and the hidden checks pass (pipeline.eval_checks)
    exec_pass_at_k: float = 0.0
    mask_skips: int | None = None
    wound_down: int | None = None
    retries: dict[str, int] | None = None


@dataclass(frozen=True)
class EvalReport:
    """Base vs adapter on the same tasks, presentation and policy, and the gate decision.

    ``base``/``adapter`` are under ``gate_policy``; ``policies`` holds the adapter under every
    policy that ran; ``pending`` names policies that could not run (e.g. no constrained decoder);
    ``difference`` is adapter − base headline pass@1 with its paired bootstrap 95% interval.
    """

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
    gate_policy: str = "unconstrained"
    policies: dict[str, ModelEval] = field(default_factory=dict)
    pending: tuple[str, ...] = ()
    difference: dict[str, Any] = field(default_factory=dict)  # pipeline.eval_stats.PairedDifference (gate policy)


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


def _groups(tasks: list[Task], scores: list[list[SampleScore]], k: int, key: str) -> dict[str, dict[str, Any]]:
    out: dict[str, list[tuple[float, float, float, float | None]]] = {}
    for task, ss in zip(tasks, scores):
        n, c = len(ss), sum(s.passed for s in ss)
        declared = sum(s.declared for s in ss) / n if ss[0].named else None
        out.setdefault(getattr(task, key), []).append(
            (pass_at_k(n, c, 1), pass_at_k(n, c, min(k, n)), sum(s.compiled for s in ss) / n, declared))
    table: dict[str, dict[str, Any]] = {}
    for name, v in sorted(out.items()):
        named = [d for *_, d in v if d is not None]
        table[name] = {"tasks": len(v), "pass@1": sum(a for a, *_ in v) / len(v),
                       "pass@k": sum(b for _, b, *_ in v) / len(v), "raw_pass@1": sum(r for _, _, r, _ in v) / len(v),
                       "declared": sum(named) / len(named) if named else None}
    return table


def summarize(tasks: list[Task], scores: list[list[SampleScore]], texts: list[list[str]], k: int, policy: str,
              seconds: float = 0.0) -> ModelEval:
    """Aggregate per-sample scores (``scores[i]``: the samples of ``tasks[i]``) into a :class:`ModelEval`."""
    n = len(scores[0]) if scores else 1
    k = min(k, n)
    flat = [s for ss in scores for s in ss]
    failures = Counter(s.failure or "UNKNOWN" for s in flat if not s.passed)
    classes = Counter(failure_class(c) for c, m in failures.items() for _ in range(m))
    total_fail = sum(classes.values())
    named = [s for s in flat if s.named]
    coded = [s for s in flat if s.has_code]
    samples: list[dict[str, Any]] = []
    for task, ss, ts in zip(tasks, scores, texts):
        if len(samples) < 24:
            samples.append({"task": task.id, "completion": ts[0][:600], "passed": ss[0].passed,
                            "code": ss[0].failure, "missing": list(ss[0].missing)})
    me = ModelEval(
        pass_at_1=sum(pass_at_k(len(ss), sum(s.passed for s in ss), 1) for ss in scores) / len(tasks),
        pass_at_k=sum(pass_at_k(len(ss), sum(s.passed for s in ss), k) for ss in scores) / len(tasks),
        k=k, n=n, per_family=_groups(tasks, scores, k, "family"), per_kind=_groups(tasks, scores, k, "kind"),
        failure_codes=tuple(failures.most_common(10)), samples=tuple(samples), seconds=seconds, policy=policy,
        raw_pass_at_1=sum(sum(s.compiled for s in ss) / len(ss) for ss in scores) / len(tasks),
        declared_rate=sum(s.declared for s in named) / len(named) if named else None,
        failure_classes={c: classes[c] / total_fail for c in CLASSES if classes[c]} if total_fail else {},
        e0401_rate=sum("E0401" in s.codes for s in coded) / len(coded) if coded else 0.0,
        syntax_rate=(sum(any(c[:3] in ("E01", "E02") for c in s.codes) for s in coded if not s.truncated)
                     / max(1, sum(not s.truncated for s in coded))),
        truncated=sum(s.truncated for s in flat), per_suite=_groups(tasks, scores, k, "suite"),
    )
    return with_exec(me, tasks, scores, texts, k)


def sample_and_score(generate: Generator, tasks: list[Task], cfg: EvalConfig, mode: str,
                     checker: Checker | None = None, label: str = "") -> tuple[list[list[str]], list[list[SampleScore]],
                                                                          float]:
    """Generate ``n`` completions per task (presented under ``mode``) and score each; with a
    ``label`` (``"adapter, constrained"``), log a line when it starts and one when it is done
    (the eval runs for minutes; a new-user trial took its silence for a hang).

    Returns:
        ``(texts, scores, seconds)``, both lists indexed like ``tasks``.

    Raises:
        DataError: the generator returned the wrong number of completions.
    """
    start = time.perf_counter()
    n = cfg.n_samples if cfg.temperature > 0 else 1
    checker = checker or vox_checker(cfg.strict)
    if label:
        log.info("eval: sampling %s (%d tasks x %d)", label, len(tasks), n)
    outputs = generate([user_turn(t.prompt, check_mode(mode)) for t in tasks], n)
    if len(outputs) != len(tasks) or any(len(o) != n for o in outputs):
        raise DataError(f"generator returned {[len(o) for o in outputs][:5]}... for {len(tasks)} tasks x {n}")
    scores = [[score_completion(text, task.prompt, checker) for text in completions]
              for task, completions in zip(tasks, outputs)]
    if label:
        log.info("eval: %s done in %.0f s: %d of %d samples compile", label, time.perf_counter() - start,
                 sum(x.compiled for row in scores for x in row), sum(map(len, scores)))
    return outputs, scores, time.perf_counter() - start


def evaluate_model(generate: Generator, tasks: list[Task], cfg: EvalConfig, mode: str,
                   checker: Checker | None = None, policy: str = "unconstrained") -> ModelEval:
    """Generate ``n`` completions per task (presented under ``mode``) and score them.

    Raises:
        DataError: the generator returned the wrong number of completions.
    """
    texts, scores, seconds = sample_and_score(generate, tasks, cfg, mode, checker)
    return summarize(tasks, scores, texts, cfg.k, policy, seconds)


def verified_eval(tasks: list[Task], texts: list[list[str]], scores: list[list[SampleScore]],
                  verify_n: int, seconds: float = 0.0) -> ModelEval:
    """The verified best-of-``verify_n`` policy over already scored samples: one answer per task,
    chosen by :func:`pipeline.eval_scoring.verified_choice` among its first ``verify_n`` samples."""
    chosen_s, chosen_t = [], []
    for ss, ts in zip(scores, texts):
        i = verified_choice(ss[:verify_n])
        chosen_s.append([ss[i]])
        chosen_t.append([ts[i]])
    return summarize(tasks, chosen_s, chosen_t, 1, f"verified best-of-{min(verify_n, len(scores[0]))}", seconds)


def gate(base: ModelEval, adapter: ModelEval, threshold: float, metric: str = "compile") -> tuple[bool, str]:
    """The release gate: adapter pass@1 >= threshold and > base pass@1. Returns ``(ok, why)``.

    ``metric`` ``"exec"`` compares exec pass@1 (compiles and the hidden checks pass) instead.

    Raises:
        DataError: an unknown ``metric``.
    """
    if metric == "exec":
        return exec_gate(base, adapter, threshold)
    if metric != "compile":
        raise DataError(f"eval.gate_metric={metric!r}: use compile or exec")
    if adapter.pass_at_1 < threshold:
        return False, f"adapter pass@1 {adapter.pass_at_1:.3f} < threshold {threshold:.3f}"
    if adapter.pass_at_1 <= base.pass_at_1:
        return False, f"adapter pass@1 {adapter.pass_at_1:.3f} not above base {base.pass_at_1:.3f}"
    return True, f"adapter pass@1 {adapter.pass_at_1:.3f} >= {threshold:.3f} and > base {base.pass_at_1:.3f}"


def plot_report(report: EvalReport, path: Path) -> Path:
    """Bar chart of headline pass@1 per family (see :func:`pipeline.eval_report.plot_policies`)."""
    from dataclasses import asdict

    from pipeline.eval_report import plot_policies

    return plot_policies(asdict(report), path)


def policy_table(report: EvalReport | Mapping[str, Any], key: str = "per_family") -> str:
    """Markdown table of pass@1 per group and policy (see :func:`pipeline.eval_report.policy_table`)."""
    from dataclasses import asdict

    from pipeline.eval_report import policy_table as table

    return table(asdict(report) if isinstance(report, EvalReport) else report, key)


def constrained_counters(generator: Any, cfg: EvalConfig) -> dict[str, Any]:
    """What a constrained generator counted during its last call, as the :class:`ModelEval`
    fields ``mask_skips``, ``wound_down`` and ``retries`` (``None`` for what it does not report)."""
    return {"mask_skips": getattr(generator, "mask_skips", None), "wound_down": getattr(generator, "wound_down", None),
            "retries": _retry_stats(generator, cfg)}


def _retry_stats(generator: Any, cfg: EvalConfig) -> dict[str, int] | None:
    """The generator's last :class:`~pipeline.decoding_retry.RetryStats` as a dict (``None``
    when the eval runs no retries or the generator keeps none)."""
    from pipeline.decoding_retry import RetryStats

    stats = getattr(generator, "retry_stats", None)
    return stats.totals() if cfg.retries and isinstance(stats, RetryStats) else None


def run_eval(base_gen: Generator, adapter_gen: Generator, tasks: list[Task], cfg: EvalConfig, mode: str,
             checker: Checker | None = None, train_prompts: Collection[str] = frozenset(),
             out_dir: Path | None = None, constrained: tuple[Generator, Generator] | None = None,
             base_sampler: BaseSampler | None = None) -> EvalReport:
    """Evaluate base and adapter on ``tasks`` with the same presentation and policy; decide the gate.

    Args:
        base_gen, adapter_gen: unconstrained generators.
        constrained: ``(base, adapter)`` constrained generators (:mod:`pipeline.decoding`); when
            given, the gate compares both under ``constrained``, else under ``unconstrained``
            (and ``constrained`` is reported as pending).
        base_sampler: draws the base's gate-policy samples in another process
            (:mod:`pipeline.eval_workers`); ``None``, or a sampler that gives nothing, and the
            base is sampled here with ``base_gen`` / ``constrained[0]``.

    Writes ``report.json``, ``pass_at_1.png`` and ``completions.jsonl`` (every completion with its
    verdict, :mod:`pipeline.eval_stats`) under ``out_dir`` when given.

    Raises:
        DataError: bad ``k``/``verify_n`` or a generator returning the wrong number of completions.
    """
    from dataclasses import asdict, replace

    if not 1 <= cfg.k <= max(cfg.n_samples, 1):
        raise DataError(f"eval.k={cfg.k} must be between 1 and eval.n_samples={cfg.n_samples}")
    if cfg.verify_n < 1:
        raise DataError(f"eval.verify_n={cfg.verify_n} must be at least 1")
    if cfg.retries < 0:
        raise DataError(f"eval.retries={cfg.retries} must be 0 or more")
    from pipeline.eval_stats import completion_rows, paired_difference, task_rates, write_completions

    ids = [t.id for t in tasks]
    records: list[dict[str, Any]] = []
    policies: dict[str, ModelEval] = {}
    texts, scores, secs = sample_and_score(adapter_gen, tasks, cfg, mode, checker, "adapter, unconstrained")
    policies["unconstrained"] = summarize(tasks, scores, texts, cfg.k, "unconstrained", secs)
    records.extend(completion_rows("adapter", "unconstrained", ids, texts, scores))
    gate_policy, base_gate = "unconstrained", base_gen
    pending: tuple[str, ...] = ("constrained",)
    if constrained is not None:
        texts, scores, secs = sample_and_score(constrained[1], tasks, cfg, mode, checker, "adapter, constrained")
        policies["constrained"] = replace(summarize(tasks, scores, texts, cfg.k, "constrained", secs),
                                          **constrained_counters(constrained[1], cfg))
        records.extend(completion_rows("adapter", "constrained", ids, texts, scores))
        gate_policy, pending, base_gate = "constrained", (), constrained[0]
    policies["verified"] = verified_eval(tasks, texts, scores, cfg.verify_n)
    drawn = base_sampler.result(gate_policy) if base_sampler is not None else None
    if drawn is not None:
        b_texts, b_scores, b_secs, counters = drawn.texts, drawn.scores, drawn.seconds, drawn.counters
    else:
        b_texts, b_scores, b_secs = sample_and_score(base_gate, tasks, cfg, mode, checker, f"base, {gate_policy}")
        counters = constrained_counters(base_gate, cfg) if constrained is not None else {}
    base = replace(summarize(tasks, b_scores, b_texts, cfg.k, gate_policy, b_secs),
                   mask_skips=counters.get("mask_skips"), wound_down=counters.get("wound_down"),
                   retries=counters.get("retries"))
    records.extend(completion_rows("base", gate_policy, ids, b_texts, b_scores))
    adapter = policies[gate_policy]
    diff = paired_difference(task_rates(b_scores), task_rates(scores), seed=cfg.seed)
    ok, why = gate(base, adapter, cfg.pass_threshold, cfg.gate_metric)
    report = EvalReport(base=base, adapter=adapter, threshold=cfg.pass_threshold, passed=ok,
                        reason=f"{why} ({gate_policy} decoding, strict + declares what was asked)",
                        system_prompt_mode=mode, tasks=len(tasks), leaked_tasks=leaked(tasks, set(train_prompts)),
                        gate_policy=gate_policy, policies=policies, pending=pending,
                        difference=asdict(diff) | {"text": diff.text()})
    if report.leaked_tasks:
        log.warning("eval: %d task prompt(s) also appear in training data: %s", len(report.leaked_tasks),
                    ", ".join(report.leaked_tasks))
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        report = replace(report, plot_path=str(plot_report(report, out_dir / "pass_at_1.png")))
        write_completions(out_dir / "completions.jsonl", records)
        atomic.write_json(out_dir / "report.json", asdict(report))
    return report
