"""``python -m pipeline.train``: defaults < recipe < flags, and every failure is one line with a status."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.errors import DataError, RecipeError, TrainingError
from pipeline.recipes import RECIPES_DIR
from pipeline.train import TrainConfig
from pipeline.train_cli import main, parse, run_cli


def test_defaults_then_recipe_then_flags(tmp_path: Path) -> None:
    recipe = tmp_path / "r.yaml"
    recipe.write_text("train:\n  lora_r: 8\n  max_steps: 7\n  target_modules: [q_proj]\n")
    _, cfg = parse(["--config", str(recipe)])
    assert (cfg.lora_r, cfg.max_steps, cfg.target_modules) == (8, 7, ("q_proj",))  # recipe over defaults
    assert cfg.learning_rate == TrainConfig().learning_rate  # default where the recipe is silent
    args, cfg = parse(["--config", str(recipe), "--max-steps", "3", "--target_modules", "q_proj", "v_proj",
                       "--no_double_quant", "--out", "x"])
    assert (cfg.lora_r, cfg.max_steps, cfg.target_modules, cfg.double_quant) == (8, 3, ("q_proj", "v_proj"), False)
    assert args.out == "x" and args.config == str(recipe)


def test_literal_fields_offer_their_choices(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        parse(["--config", "cpu-tiny", "--quantization", "int8"])
    assert info.value.code == 2 and "invalid choice: 'int8'" in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["--config", "cpu-tiny", "--max_length", "0"], r"^error: --max-length: input should be greater"),  # the flag
    (["--config", "nope"], "unknown recipe 'nope'"),
])
def test_bad_settings_exit_2_in_one_line(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    import re

    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err and re.search(message, err), err


def test_a_bad_recipe_file_exits_2_before_training(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recipe = tmp_path / "r.yaml"
    recipe.write_text((RECIPES_DIR / "cpu-tiny.yaml").read_text().replace("\ntrain:", "\ntrian:"))
    assert main(["--config", str(recipe)]) == 2
    assert "unknown section 'trian' (did you mean 'train'?)" in capsys.readouterr().err


@pytest.mark.parametrize("error, status", [(RecipeError("r.yaml: x"), 2), (DataError("no corpus"), 2),
                                           (TrainingError("step 3: no supervised token\nsecond line"), 1)])
def test_run_cli_statuses(error: Exception, status: int, capsys: pytest.CaptureFixture[str]) -> None:
    def body() -> None:
        raise error

    assert run_cli(body) == status
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_ctrl_c_is_one_line_without_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    def body() -> None:
        raise KeyboardInterrupt

    assert run_cli(body) == 130
    assert capsys.readouterr().err == "interrupted: stopped by SIGINT\n"


def test_an_unknown_flag_is_a_usage_error_naming_it(capsys: pytest.CaptureFixture[str]) -> None:
    """User trial: ``--bogus 1`` ended in HfArgumentParser's ValueError traceback (exit 1)."""
    with pytest.raises(SystemExit) as info:
        main(["--config", "cpu-tiny", "--bogus", "1"])
    err = capsys.readouterr().err
    assert info.value.code == 2 and "Traceback" not in err
    assert err.strip().splitlines()[-1] == "python -m pipeline.train: error: unrecognized arguments: --bogus 1"


@pytest.mark.parametrize("steps", ["-3", "0", "-2"])
def test_max_steps_must_be_positive_or_minus_one(steps: str, capsys: pytest.CaptureFixture[str]) -> None:
    """User trial: ``--max-steps -3`` trained a whole epoch and ``--max-steps 0`` one step."""
    assert main(["--config", "cpu-tiny", "--max-steps", steps]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"error: --max-steps: input should be at least 1, or -1 to train by epochs, got {steps}"


def test_max_steps_minus_one_trains_by_epochs() -> None:
    _, cfg = parse(["--config", "cpu-tiny", "--max-steps", "-1", "--epochs", "2"])
    assert (cfg.max_steps, cfg.epochs) == (-1, 2.0)
