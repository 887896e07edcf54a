"""Evaluation: the pass@k estimator, block extraction, the task suite, a scripted generator."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from pipeline.errors import DataError
from pipeline.eval_scoring import (
    CheckOutcome,
    SampleScore,
    failure_class,
    score_completion,
    truncated,
    verified_choice,
    vox_checker,
)
from pipeline.eval_tasks import FAMILIES, Task, load_tasks
from pipeline.evaluate import (
    NO_CODE,
    EvalConfig,
    ModelEval,
    evaluate_model,
    extract_vox,
    gate,
    pass_at_k,
    policy_table,
    run_eval,
)


@pytest.mark.parametrize(("n", "c", "k", "expected"), [
    (4, 0, 1, 0.0), (4, 4, 2, 1.0), (4, 1, 1, 0.25), (4, 2, 2, 1 - 1 / 6), (10, 3, 5, 1 - 21 / 252), (3, 2, 2, 1.0),
])
def test_pass_at_k_unbiased(n: int, c: int, k: int, expected: float) -> None:
    assert pass_at_k(n, c, k) == pytest.approx(expected)


def test_pass_at_k_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError):
        pass_at_k(2, 1, 3)


def test_extract_vox_joins_blocks_and_keeps_unterminated() -> None:
    text = "Here:\n```vox\nfn a() { }\n```\nand\n```vox\nfn b() { }\n```"
    assert extract_vox(text) == "fn a() { }\n\nfn b() { }"
    assert extract_vox("```vox\nlet x = 1\n") == "let x = 1"
    assert extract_vox("no code here") is None
    assert extract_vox("```python\nx = 1\n```") is None


def test_shipped_suite_covers_every_family_with_60_plus_tasks() -> None:
    tasks = load_tasks()
    assert len(tasks) >= 60
    families = {t.family for t in tasks}
    assert families >= set(FAMILIES[:9]) | {"script"}  # the nine organic families plus script tasks
    assert all(sum(t.family == f for t in tasks) >= 6 for f in families)
    assert len({t.id for t in tasks}) == len(tasks)


def test_load_tasks_errors_name_the_task(tmp_path: Path) -> None:
    bad = tmp_path / "t.yaml"
    bad.write_text("tasks:\n  - {id: a, family: nope, prompt: x}\n")
    with pytest.raises(DataError, match="task 'a'.*unknown family 'nope'"):
        load_tasks(bad)
    bad.write_text("tasks:\n  - {id: a, family: functions, prompt: x}\n  - {id: a, family: functions, prompt: y}\n")
    with pytest.raises(DataError, match="duplicate task id 'a'"):
        load_tasks(bad)


TASKS = [Task("t1", "functions", "declaration", "one"), Task("t2", "actors", "declaration", "two"),
         Task("t3", "script", "script", "three")]
OK, BAD, NONE = "```vox\nok\n```", "```vox\nbroken\n```", "sorry, no code"
SCRIPT = {"one": [OK, OK, BAD, NONE], "two": [BAD, BAD, BAD, NONE], "three": [OK, OK, OK, OK]}


def scripted(conversations: Sequence[list[dict[str, str]]], n: int) -> list[list[str]]:
    """Known outputs keyed by the user prompt (the last message)."""
    return [SCRIPT[c[-1]["content"]][:n] for c in conversations]


def checker(code: str) -> tuple[bool, str | None]:
    return (True, None) if code == "ok" else (False, "E0401")


def test_scripted_generator_gives_known_pass_at_k() -> None:
    cfg = EvalConfig(n_samples=4, k=2, temperature=0.5)
    res = evaluate_model(scripted, TASKS, cfg, "none", checker)
    # per task c = 2, 0, 4 of n = 4: pass@1 = (0.5 + 0 + 1) / 3, pass@2 = (5/6 + 0 + 1) / 3
    assert res.pass_at_1 == pytest.approx(1.5 / 3)
    assert res.pass_at_k == pytest.approx((5 / 6 + 1) / 3)
    assert res.per_family["functions"]["pass@1"] == pytest.approx(0.5)
    assert res.per_family["actors"]["pass@k"] == 0.0
    assert res.per_kind["script"]["pass@1"] == 1.0
    assert dict(res.failure_codes) == {"E0401": 4, NO_CODE: 2}


def test_presentation_follows_system_prompt_mode() -> None:
    seen: list[list[dict[str, str]]] = []

    def spy(conversations: Sequence[list[dict[str, str]]], n: int) -> list[list[str]]:
        seen.extend(conversations)
        return [[OK] * n for _ in conversations]

    cfg = EvalConfig(n_samples=1, k=1)
    evaluate_model(spy, TASKS[:1], cfg, "none", checker)
    evaluate_model(spy, TASKS[:1], cfg, "ssot", checker)
    assert [m["role"] for m in seen[0]] == ["user"]
    assert [m["role"] for m in seen[1]] == ["system", "user"]


def _eval(p1: float) -> ModelEval:
    return ModelEval(p1, p1, 2, 4, {}, {}, ())


def test_gate_needs_threshold_and_improvement() -> None:
    assert gate(_eval(0.1), _eval(0.4), 0.3)[0]
    assert not gate(_eval(0.1), _eval(0.2), 0.3)[0]
    assert not gate(_eval(0.5), _eval(0.5), 0.3)[0]


def test_run_eval_writes_report_and_plot(tmp_path: Path) -> None:
    def base(conversations: Sequence[list[dict[str, str]]], n: int) -> list[list[str]]:
        return [[NONE] * n for _ in conversations]

    cfg = EvalConfig(n_samples=4, k=2, temperature=0.5, pass_threshold=0.3)
    report = run_eval(base, scripted, TASKS, cfg, "none", checker, train_prompts={"THREE"}, out_dir=tmp_path)
    assert report.passed and report.base.pass_at_1 == 0.0
    assert report.leaked_tasks == ("t3",)
    assert json.loads((tmp_path / "report.json").read_text())["adapter"]["pass_at_1"] == pytest.approx(0.5)
    assert (tmp_path / "pass_at_1.png").stat().st_size > 1000


def test_vox_checker_uses_the_front_end() -> None:
    check = vox_checker()
    assert check("fn f() to int { ret 1 }") == CheckOutcome()
    assert check("fn f() -> int { ret 1 }").errors[:1] == ("E0308",)
    assert check("fn f() to int { return 1 }") == CheckOutcome((), ("W0001",))  # compiles, fails strict


ASK = "Write a Vox function `double(n: int) to int` that doubles n."


@pytest.mark.parametrize(("answer", "passed", "compiled", "failure"), [
    ("```vox\nfn double(n: int) to int { ret n * 2 }\n```", True, True, None),
    ("```vox\nfn double(n: int) to int { return n * 2 }\n```", False, True, "W0001"),  # strict fails
    ("```vox\nfn twice(n: int) to int { ret n * 2 }\n```", False, True, "UNDECLARED"),  # not what was asked
    ("```vox\nfn double(n: float) to float { ret n * 2.0 }\n```", False, True, "UNDECLARED"),  # wrong signature
    ("```vox\n// TODO\n\n```", False, False, "EMPTY"),
    ("no code", False, False, NO_CODE),
    ("```vox\nfn double(n: int) to int { ret m * 2 }\n```", False, False, "E0401"),
])
def test_headline_needs_strict_non_empty_and_declared(answer: str, passed: bool, compiled: bool,
                                                     failure: str | None) -> None:
    score = score_completion(answer, ASK, vox_checker())
    assert (score.passed, score.compiled, score.failure) == (passed, compiled, failure)


def test_failure_classes_and_truncation() -> None:
    assert [failure_class(c) for c in ("E0101", "E0203", "E0308", "E0401", "E0510", "W0001", "UNDECLARED",
                                       NO_CODE, "EMPTY")] == \
        ["syntax", "syntax", "retired", "names", "types", "warning", "undeclared", "no_code", "empty"]
    assert truncated("```vox\nfn f() {\n") and not truncated("```vox\nfn f() { }\n```")


def _score(compiled: bool, missing: tuple[str, ...] = (), n_errors: int = 0) -> SampleScore:
    return SampleScore(True, compiled, compiled, missing, True, () if compiled else ("E0401",) * n_errors, n_errors)


def test_verified_choice_prefers_compiling_and_declared_then_fewest_errors() -> None:
    assert verified_choice([_score(False, n_errors=3), _score(True, ("f",)), _score(True)]) == 2
    assert verified_choice([_score(False, n_errors=3), _score(True, ("f",))]) == 1
    assert verified_choice([_score(False, n_errors=3), _score(False, n_errors=1), _score(False, n_errors=1)]) == 1


NAMED = [Task("n1", "functions", "declaration", ASK), Task("n2", "actors", "declaration", "two", "user")]
GOOD, WRONG = "```vox\nfn double(n: int) to int { ret n * 2 }\n```", "```vox\nfn twice(n: int) to int { ret n }\n```"


def test_report_has_policies_declared_rate_and_classes(tmp_path: Path) -> None:
    def unconstrained(conversations: Sequence[list[dict[str, str]]], n: int) -> list[list[str]]:
        return [[WRONG, WRONG, WRONG, GOOD] if c[-1]["content"] == ASK else ["```vox\nprint(x)\n```"] * n
                for c in conversations]

    def constrained(conversations: Sequence[list[dict[str, str]]], n: int) -> list[list[str]]:
        return [[GOOD, WRONG, GOOD, GOOD] if c[-1]["content"] == ASK else [OK.replace("ok", "print(1)")] * n
                for c in conversations]

    def base(conversations: Sequence[list[dict[str, str]]], n: int) -> list[list[str]]:
        return [[NONE] * n for _ in conversations]

    cfg = EvalConfig(n_samples=4, k=2, temperature=0.5, pass_threshold=0.3)
    report = run_eval(base, unconstrained, NAMED, cfg, "none", out_dir=tmp_path, constrained=(base, constrained))
    assert report.gate_policy == "constrained" and report.pending == ()
    un, con, ver = (report.policies[p] for p in ("unconstrained", "constrained", "verified"))
    assert un.pass_at_1 == pytest.approx(0.125) and un.raw_pass_at_1 == pytest.approx(0.5)
    assert un.declared_rate == pytest.approx(0.25) and un.e0401_rate == pytest.approx(0.5)
    assert un.failure_classes == pytest.approx({"names": 4 / 7, "undeclared": 3 / 7})
    assert con.pass_at_1 == pytest.approx((0.75 + 1) / 2) and report.adapter is con and report.passed
    assert ver.pass_at_1 == 1.0 and ver.n == 1 and ver.policy == "verified best-of-4"
    assert set(un.per_suite) == {"core", "user"}
    table = policy_table(report)
    assert "| functions | 1 | 0.00 | 0.25 | 0.75 | 1.00 | 1.00 | 0.75 |" in table
    saved = json.loads((tmp_path / "report.json").read_text())
    assert saved["policies"]["verified"]["pass_at_1"] == 1.0 and saved["gate_policy"] == "constrained"


def test_without_a_constrained_decoder_the_gate_uses_unconstrained_and_marks_it_pending() -> None:
    def gen(conversations: Sequence[list[dict[str, str]]], n: int) -> list[list[str]]:
        return [[GOOD] * n for _ in conversations]

    report = run_eval(gen, gen, NAMED[:1], EvalConfig(n_samples=2, k=1, temperature=0.5), "none")
    assert report.gate_policy == "unconstrained" and report.pending == ("constrained",)
    assert set(report.policies) == {"unconstrained", "verified"}


def test_the_eval_retries_as_vox_serve_does_by_default() -> None:
    from pipeline.decoding_retry import RETRIES

    assert EvalConfig().retries == RETRIES  # one decoding policy for the eval's number and the served answer


def test_negative_retries_are_a_recipe_error_before_any_generation() -> None:
    from pipeline.eval_policies import eval_generators

    def gen(conversations: Sequence[list[dict[str, str]]], n: int) -> list[list[str]]:
        raise AssertionError("must not generate")

    with pytest.raises(DataError, match=r"eval.retries=-1 must be 0 or more"):
        run_eval(gen, gen, NAMED[:1], EvalConfig(n_samples=2, k=1, retries=-1), "none")
    with pytest.raises(DataError, match=r"eval.retries=-1 must be 0 or more"):
        eval_generators({"base_model": "unused", "adapter_dir": None}, EvalConfig(retries=-1), "cpu")


def test_a_lazy_base_is_loaded_only_when_the_parent_samples_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """With eval.workers 2 a child process samples the base: the parent loads it only as a fallback."""
    import pipeline.eval_policies as policies

    loaded: list[str | None] = []

    class Gen:
        mask_skips = 3

        def __init__(self, adapter_dir: str | None) -> None:
            self.adapter_dir = adapter_dir

        def __call__(self, conversations: Any, n: int) -> list[list[str]]:
            return [["x"] * n for _ in conversations]

    def fake(base_model: str, adapter_dir: str | None, config: Any, device: str) -> tuple[Any, Any]:
        loaded.append(adapter_dir)
        return Gen(adapter_dir), Gen(adapter_dir)

    monkeypatch.setattr(policies, "model_generators", fake)
    base, tuned, constrained = policies.eval_generators({"base_model": "b", "adapter_dir": "a"}, EvalConfig(), "cpu",
                                                        lazy_base=True)
    assert loaded == ["a"] and constrained is not None  # only the adapter so far
    assert constrained[0].mask_skips == 3 and loaded == ["a", None]  # an attribute read builds the base
    assert base([[{"role": "user", "content": "hi"}]], 2) == [["x", "x"]] and loaded == ["a", None]  # once
