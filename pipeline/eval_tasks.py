"""The held-out evaluation task suite: which files hold it, how a task looks, how it is loaded.

``pipeline/data/eval_tasks.yaml`` (core: one task per family and kind) and
``pipeline/data/eval_tasks_user.yaml`` (requests phrased the way users write them, issue 9) are
never used for training; :func:`leaked` finds a task whose prompt a training set holds verbatim.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from pipeline.errors import DataError

DATA_DIR = Path(__file__).resolve().parent / "data"
TASKS_PATH = DATA_DIR / "eval_tasks.yaml"
USER_TASKS_PATH = DATA_DIR / "eval_tasks_user.yaml"  # requests phrased the way users write them (issue 9)
TASK_FILES = (TASKS_PATH, USER_TASKS_PATH)
FAMILIES = ("functions", "types_match", "actors", "workflows", "mcp", "tests", "views", "modules", "automation",
            "script", "web")  # the corpus's nine organic families + synthetic script and web requests


@dataclass(frozen=True)
class Task:
    """One held-out task: a natural-language request for one Vox program (``suite``: file stem)."""

    id: str
    family: str
    kind: str
    prompt: str
    suite: str = "core"


def load_tasks(path: Path | None = None) -> list[Task]:
    """Load and validate the task suite (``path``, or every file of :data:`TASK_FILES`).

    Raises:
        DataError: missing/invalid file, a task without id/family/prompt, a duplicate id (also
            across files), or an unknown family (each names the task).
    """
    if path is None:
        tasks: list[Task] = []
        for p in TASK_FILES:
            tasks.extend(_load_file(p, {t.id for t in tasks}))
        return tasks
    return _load_file(path, set())


def _load_file(path: Path, seen: set[str]) -> list[Task]:
    import yaml

    from pipeline.yaml_input import load_yaml

    try:
        data = load_yaml(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise DataError(f"{path}: cannot read task suite: {exc}") from exc
    raw = data.get("tasks") if isinstance(data, dict) else None
    if not isinstance(raw, list) or not raw:
        raise DataError(f"{path}: expected a non-empty `tasks:` list")
    suite = "user" if path.stem.endswith("_user") else "core"
    tasks, seen = [], set(seen)
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
                          str(item["prompt"]).strip(), suite))
    return tasks


def leaked(tasks: list[Task], train_prompts: Collection[str]) -> tuple[str, ...]:
    """Ids of tasks whose prompt occurs verbatim in the training prompts (should be none)."""
    norm = {" ".join(p.split()).lower() for p in train_prompts}
    return tuple(t.id for t in tasks if " ".join(t.prompt.split()).lower() in norm)
