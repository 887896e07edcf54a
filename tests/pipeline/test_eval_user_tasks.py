"""The user-phrased eval tasks: solvable under the headline criterion, and never in the corpus."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from pipeline.eval_scoring import score_completion, vox_checker
from pipeline.eval_tasks import USER_TASKS_PATH, Task, load_tasks
from vox_lang.requests import extract_request

SOLUTIONS = yaml.safe_load((Path(__file__).parent / "fixtures" / "eval_user_solutions.yaml").read_text())
USER = load_tasks(USER_TASKS_PATH)


def test_at_least_24_user_tasks_most_naming_what_they_want() -> None:
    assert len(USER) >= 24 and all(t.suite == "user" for t in USER)
    named = [t for t in USER if extract_request(t.prompt)]
    assert len(named) >= 24
    assert sum("(" in t.prompt.split("`")[1] for t in named if t.prompt.count("`") >= 2) >= 12  # signatures


@pytest.mark.parametrize("task", USER, ids=lambda t: t.id)
def test_reference_answer_passes_the_headline_criterion(task: Task) -> None:
    score = score_completion(f"Here you go:\n```vox\n{SOLUTIONS[task.id]}```\n", task.prompt, vox_checker())
    assert score.passed, score


def test_requested_names_never_occur_in_generated_programs() -> None:
    from pipeline.generators import FAMILIES, generate_program
    from pipeline.generators.themes import THEMES, theme_words

    idents: set[str] = set()
    for fam in FAMILIES:
        for i in range(60):
            idents |= set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", generate_program(fam.name, 1234, i)[2].code))
    words = set().union(*(theme_words(t) for t in THEMES))
    names = {i.name for t in USER for i in extract_request(t.prompt).items}
    assert not names & idents
    assert not {n.lower() for n in names} & words


def test_reference_answers_pass_their_hidden_checks_and_a_wrong_one_fails() -> None:
    from pipeline.eval_checks import exec_verdict, load_checks

    checks = load_checks()
    assert {t.id for t in USER} <= set(checks)
    failing = [t.id for t in USER if not exec_verdict(SOLUTIONS[t.id], t.id).passed]
    assert failing == []
    wrong = "fn late_orders(days: List[int], limit: int) to int {\n  ret len(days)\n}"
    assert not exec_verdict(wrong, "us-01").passed
