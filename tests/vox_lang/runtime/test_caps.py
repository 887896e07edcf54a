"""The caps of a run that ``--max-steps`` does not move (output, value size): still R0006 (spec §11
names no other code), but with their own message and hint, not the step budget's."""

from __future__ import annotations

import pytest

from vox_lang.runtime import RunConfig, run_source

PRINTS = "let mut i = 0\nwhile i < 1000 {\n  print(\"line {i}\")\n  i += 1\n}\n"
LOGS = "import std.log\nlet mut i = 0\nwhile i < 1000 {\n  log.info(\"line\")\n  i += 1\n}\n"
GROWS = "let mut s = \"x\"\nwhile true {\n  s = s + s\n}\n"


@pytest.mark.parametrize(("program", "cfg", "message", "hint"), [
    (PRINTS, RunConfig(max_output=100, max_steps=10**9),
     "output limit reached: more than 100 characters of output", "output is capped at 100 characters"),
    (LOGS, RunConfig(max_output=100, log=lambda _: None),
     "output limit reached: more than 100 characters of output", "output is capped at 100 characters"),
    (GROWS, RunConfig(max_len=1000, max_steps=10**9),
     "value too large: a str longer than 1,000", "capped at 1,000 elements"),
])
def test_caps_name_themselves_not_the_step_budget(program: str, cfg: RunConfig, message: str, hint: str) -> None:
    result = run_source(program, config=cfg)
    assert result.fault is not None and result.fault.code == "R0006"
    diag = result.fault.diagnostic
    assert diag.message.startswith(message) and "step budget" not in diag.message
    assert diag.hint is not None and hint in diag.hint and "whatever --max-steps says" in diag.hint
    assert "raise the budget" not in diag.hint


def test_the_step_budget_keeps_its_own_hint() -> None:
    result = run_source("while true {\n}\n", config=RunConfig(max_steps=100))
    assert result.fault is not None and result.fault.code == "R0006"
    assert result.fault.diagnostic.message.startswith("step budget exhausted: more than 100 steps")
    assert "--max-steps" in (result.fault.diagnostic.hint or "")


def test_running_out_of_memory_names_memory_not_the_step_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    # a host limit (ulimit -v) the size caps did not reach: its hint must not say --max-steps helps
    import vox_lang.runtime.runner as runner

    def exhausted(*_: object, **__: object) -> None:
        raise MemoryError

    monkeypatch.setattr(runner, "_compile", exhausted)
    result = run_source("let xs = [1, 2, 3]\nprint(len(xs))\n")
    assert result.fault is not None and result.fault.code == "R0006"
    diag = result.fault.diagnostic
    assert diag.message.startswith("out of memory") and "step budget" not in diag.message
    assert diag.hint is not None and "--max-steps does not change memory" in diag.hint
