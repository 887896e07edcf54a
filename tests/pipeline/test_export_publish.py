"""Only an export that passed every gate moves ``latest.json``; ``vox serve`` falls back to the
newest passing export (issue 14.3). No model is needed: exports are folders with a card."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline import paths


def _export(name: str, created: str, eval_passed: bool, verified: bool = True) -> Path:
    final, staging = paths.new_export_dir(paths.exports_dir(), name)
    card = {"model_name": name, "created": created, "eval_passed": eval_passed, "pass_at_1": 0.2}
    (staging / "vox_mens.json").write_text(json.dumps(card))
    staging.rename(final)
    paths.publish_export(final, card, verified=verified)
    return final


def test_gate_failed_exports_never_move_the_pointer() -> None:
    good = _export("m", "2026-01-01T00:00:00", eval_passed=True)
    assert paths.latest_export() == good
    _export("m", "2026-01-02T00:00:00", eval_passed=False)  # newer, eval gate failed
    _export("m", "2026-01-03T00:00:00", eval_passed=True, verified=False)  # newer, round trip failed
    assert json.loads((paths.exports_dir() / "latest.json").read_text())["path"] == str(good)
    assert paths.latest_export() == good


def test_an_older_passing_export_does_not_replace_a_newer_one() -> None:
    newer = _export("m", "2026-02-01T00:00:00", eval_passed=True)
    _export("m", "2026-01-01T00:00:00", eval_passed=True)  # finished later, started earlier
    assert paths.latest_export() == newer


def test_serve_falls_back_to_the_newest_passing_export() -> None:
    from serving.commands.serve import resolve_model_dir

    old = _export("m", "2026-01-01T00:00:00", eval_passed=True)
    newest_ok = _export("m", "2026-01-02T00:00:00", eval_passed=True)
    failed = _export("m", "2026-01-03T00:00:00", eval_passed=False)
    pointer = paths.exports_dir() / "latest.json"
    # a pointer written by an older version at a gate-failed export, or no pointer at all
    pointer.write_text(json.dumps({"path": str(failed), "eval_passed": False}))
    assert resolve_model_dir(None) == newest_ok != old
    pointer.unlink()
    assert resolve_model_dir(None) == newest_ok
    assert paths.latest_export(require_passed=False) == failed  # newest of any outcome, for messages


def test_no_passing_export_is_explained() -> None:
    import pytest

    from serving.commands.serve import resolve_model_dir
    from serving.errors import UsageError

    failed = _export("m", "2026-01-03T00:00:00", eval_passed=False)
    with pytest.raises(UsageError, match=f"the latest export {failed} did not pass its eval gate"):
        resolve_model_dir(None)


def test_the_state_dir_resolution_order(tmp_path: Path) -> None:
    explicit, scoped = tmp_path / "explicit", tmp_path / "scoped"
    assert paths.state_dir(explicit) == explicit.resolve()
    with paths.use_state_dir(scoped):
        assert paths.artifacts_dir("corpus") == scoped.resolve() / "artifacts" / "corpus"
        assert paths.state_dir(explicit) == explicit.resolve()  # explicit wins
        with paths.use_state_dir(None):
            assert paths.state_dir() == scoped.resolve()  # None keeps the enclosing root
    assert paths.state_dir() != scoped.resolve()


def test_the_shell_entry_prints_the_latest_export_or_fails(capsys: pytest.CaptureFixture[str]) -> None:
    """README's ``EXPORT=$(python -m pipeline.paths)`` stops with a message when there is no export
    (``print(latest_export())`` gave the string ``None``)."""
    assert paths.main() == 1
    out, err = capsys.readouterr()
    assert out == "" and "there is no exported model under" in err
    _export("m", "2026-01-01T00:00:00", eval_passed=False)
    assert paths.main() == 1 and "did not pass its eval gate" in capsys.readouterr().err
    good = _export("m", "2026-01-02T00:00:00", eval_passed=True)
    assert paths.main() == 0 and capsys.readouterr().out == f"{good}\n"


def test_the_shell_entry_after_a_failed_release_gate_says_how_to_serve_anyway(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """User trial: after `make run` failed the gate, it said "run the pipeline (`make run`) to export one"."""
    from pipeline.stage_result import StageResult

    adapter = tmp_path / "adapter"
    adapter.mkdir()
    StageResult("qlora_adapter", "v1", {"base_model": "/s/base", "adapter_dir": str(adapter)}).write(
        paths.artifacts_dir("qlora_adapter"))
    StageResult("eval_report", "v1", {"passed": False, "reason": "adapter pass@1 0.287 not above base 0.311"}).write(
        paths.artifacts_dir("eval_report"))
    assert paths.main() == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "make run" not in err
    assert "the last eval failed the release gate (adapter pass@1 0.287 not above base 0.311)" in err
    assert err.rstrip().endswith(f"anyway: `.venv/bin/vox serve /s/base --adapter {adapter}`, "
                                 "then `.venv/bin/vox chat --model free`")
