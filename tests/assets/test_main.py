"""The main job's entry point rejects a bad recipe in one line, before starting Dagster."""

from __future__ import annotations

import pytest

from assets.main import main


def test_unknown_recipe_is_a_one_line_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--recipe", "no-such-recipe"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: unknown recipe 'no-such-recipe'")
    assert "cpu-tiny" in err and "Traceback" not in err
