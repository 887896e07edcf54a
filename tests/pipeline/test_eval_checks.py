"""Hidden eval checks (issue 11): every core task has checks, reference answers pass them,
wrong answers fail with the runtime code, and the report carries exec pass@1/pass@k per family."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pipeline.errors import DataError
from pipeline.eval_checks import exec_verdict, first_function, load_checks, with_hidden_test
from pipeline.eval_tasks import TASKS_PATH, Task, load_tasks
from pipeline.evaluate import EvalConfig, ModelEval, evaluate_model, gate

#: reference answers for a sample of tasks across families (each must pass its hidden checks)
REFERENCES = {
    "fn-01": "fn triple(n: int) to int {\n  ret n * 3\n}",
    "fn-05": "fn total(xs: List[int]) to int {\n  let mut t = 0\n  for x in xs {\n    t += x\n  }\n  ret t\n}",
    "fn-06": "fn celsius_to_fahrenheit(c: float) to float {\n  ret c * 1.8 + 32\n}",
    "ty-02": ("type Light = | Red | Yellow | Green\nfn next_light(l: Light) to Light {\n  ret match l {\n"
              "    Red -> Yellow\n    Yellow -> Green\n    Green -> Red\n  }\n}"),
    "ty-04": ("type Shape = | Circle(r: float) | Square(side: float)\nfn perimeter(s: Shape) to float {\n"
              "  ret match s {\n    Circle(r) -> 2.0 * 3.14159 * r\n    Square(side) -> 4.0 * side\n  }\n}"),
    "ac-02": "actor Doubler {\n  on run(n: int) to int { ret n * 2 }\n}\nlet d = spawn(Doubler)\nprint(d.run(21))",
    "ac-07": "actor Validator {\n  on check(v: int) to bool { ret v >= 1 and v <= 100 }\n}",
    "wf-03": ("activity charge_card(cents: int) to Result[str] {\n  if cents == 0 { ret Error(\"zero\") }\n"
              "  ret Ok(\"charged\")\n}\nworkflow pay(cents: int) to Result[str] {\n"
              "  let r = charge_card(cents)?\n  ret Ok(r)\n}"),
    "mc-07": "@mcp.tool \"Kilometres to miles\"\nfn km_to_miles(km: float) to float {\n  ret km * 0.621371\n}",
    "te-06": ("fn clamp(v: int, lo: int, hi: int) to int {\n  if v < lo { ret lo }\n  if v > hi { ret hi }\n"
              "  ret v\n}\n@test\nfn test_low() {\n  assert(clamp(-5, 0, 3) == 0)\n}\n"
              "@test\nfn test_high() {\n  assert(clamp(9, 0, 3) == 3)\n}"),
    "vw-03": ("fn LoginForm() to Element {\n  ret column(gap=1) {\n    input(name=\"user\")\n    input(name=\"pass\")\n"
              "    button(label=\"Log in\")\n  }\n}"),
    "md-05": "import std.json\nfn encode(n: int) to str {\n  ret json.dump(n)\n}",
    "au-01": "for i in range(1, 6) {\n  print(i)\n}",
    "au-06": "import std.env\nprint(\"hello \" + env.get(\"USER\").unwrap_or(\"stranger\"))",
    "sc-07": ("let mut parts = []\nfor i in range(1, 11) {\n  parts.push(str(i * i))\n}\nprint(parts.join(\",\"))"),
}


def test_every_core_task_has_checks() -> None:
    checks = load_checks()
    assert {t.id for t in load_tasks(TASKS_PATH)} <= set(checks)


@pytest.mark.parametrize("task_id", sorted(REFERENCES))
def test_reference_answers_pass_their_checks(task_id: str) -> None:
    assert exec_verdict(REFERENCES[task_id], task_id).passed, exec_verdict(REFERENCES[task_id], task_id)


def test_wrong_answers_fail_with_the_runtime_code() -> None:
    assert exec_verdict("fn triple(n: int) to int {\n  ret n * 2\n}", "fn-01").code == "R0002"
    assert exec_verdict("fn triple(n: str) to str {\n  ret n + n + n\n}", "fn-01").code == "E0504"
    # a script that only prints 4 numbers misses "5"
    assert exec_verdict("for i in range(1, 5) {\n  print(i)\n}", "au-01").code == "OUTPUT"
    # the completion's own failing test fails it too
    bad_test = "fn add(a: int, b: int) to int {\n  ret a + b\n}\n@test\nfn t() {\n  assert(add(1, 1) == 3)\n}"
    assert exec_verdict(bad_test, "te-01").code == "R0002"



def test_a_completion_s_tests_share_its_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    """The completion's own @test functions and the hidden check share one step budget and one
    deadline (RunConfig.tests_share_limits): two tests of 600 steps each pass alone under a
    1,000-step budget, not together, so a completion of many slow tests costs one limit."""
    import pipeline.eval_checks as eval_checks

    monkeypatch.setattr(eval_checks, "MAX_STEPS", 1000)
    tests = "".join(f"@test\nfn t_{i}() {{\n  for x in range(0, 600) {{ }}\n}}\n" for i in range(2))
    verdict = exec_verdict("fn triple(n: int) to int {\n  ret n * 3\n}\n" + tests, "fn-01")
    assert (verdict.passed, verdict.code) == (False, "R0006")

def test_hidden_test_and_placeholder() -> None:
    code = "@test\nfn t() {\n  assert(true)\n}\nfn helper(x: int) to int {\n  ret x\n}"
    assert first_function(code) == "helper"
    program = with_hidden_test(code, ["assert({fn}(1) == 1)"])
    assert program is not None and "assert(helper(1) == 1)" in program and "workflow eval_hidden_check()" in program
    assert with_hidden_test("let x = 1", ["assert({fn}() == 1)"]) is None


def test_bad_check_file_is_a_data_error(tmp_path: Path) -> None:
    bad = tmp_path / "eval_checks_bad.yaml"
    bad.write_text("checks:\n  fn-01: assert(true)\n")
    with pytest.raises(DataError, match="fn-01"):
        load_checks([bad])


def _gen(answers: dict[str, str], tasks: list[Task]) -> Any:
    by_prompt = {t.prompt: answers.get(t.id, "no code") for t in tasks}

    def generate(conversations: list[list[dict[str, str]]], n: int) -> list[list[str]]:
        return [[by_prompt[c[-1]["content"].strip()] if c[-1]["content"].strip() in by_prompt else
                 next(v for p, v in by_prompt.items() if p in c[-1]["content"])] * n for c in conversations]
    return generate


def test_report_has_exec_pass_at_k_per_family_and_gate_metric() -> None:
    tasks = [t for t in load_tasks(TASKS_PATH) if t.id in ("fn-01", "fn-03")]
    answers = {"fn-01": "```vox\nfn triple(n: int) to int {\n  ret n * 3\n}\n```",
               "fn-03": "```vox\nfn max_of(a: int, b: int) to int {\n  ret a\n}\n```"}  # compiles, wrong
    cfg = EvalConfig(n_samples=1, k=1, temperature=0.0)
    me: ModelEval = evaluate_model(_gen(answers, tasks), tasks, cfg, "none")
    assert me.exec_pass_at_1 == pytest.approx(0.5)
    row = me.per_family["functions"]
    assert row["exec_pass@1"] == pytest.approx(0.5) and "exec_pass@k" in row
    assert me.raw_pass_at_1 == pytest.approx(1.0)
    ok, why = gate(me, me, 0.1, metric="exec")
    assert not ok and "exec pass@1" in why
    with pytest.raises(DataError):
        gate(me, me, 0.1, metric="vibes")
