"""Recipe validation: every section, key, type and encoding problem is one line naming file, section and key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from pipeline.errors import RecipeError
from pipeline.recipe_schema import SECTIONS
from pipeline.recipes import RECIPES_DIR, stage_config, validate_recipe
from pipeline.sample_corpus import MICRO_RECIPE
from pipeline.train import TrainConfig


def _recipe(tmp_path: Path, mutate: Any) -> Path:
    data = yaml.safe_load((RECIPES_DIR / "cpu-tiny.yaml").read_text())
    mutate(data)
    path = tmp_path / "r.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


@pytest.mark.parametrize("name", sorted(p.stem for p in RECIPES_DIR.glob("*.yaml")))
def test_bundled_recipes_validate(name: str) -> None:
    configs = validate_recipe(name)
    assert set(configs) == set(SECTIONS)
    assert isinstance(configs["train"], TrainConfig) and isinstance(configs["train"].target_modules, tuple)


def test_micro_recipe_sections_are_valid() -> None:
    from pipeline.recipe_schema import build_section, config_class

    for section, body in MICRO_RECIPE.items():
        build_section(config_class(section), section, body, Path("micro"))


def _rename(section: str, old: str, new: str) -> Any:
    def mutate(d: dict[str, Any]) -> None:
        d.setdefault(section, {})[new] = d.get(section, {}).pop(old, 1)
    return mutate


def _set(section: str, key: str, value: Any) -> Any:
    def mutate(d: dict[str, Any]) -> None:
        d.setdefault(section, {})[key] = value
    return mutate


def _section(old: str, new: str) -> Any:
    def mutate(d: dict[str, Any]) -> None:
        d[new] = d.pop(old)
    return mutate


CASES = [
    # misspelled sections: silently ignored before
    (_section("train", "trian"), r"unknown section 'trian' \(did you mean 'train'\?\)"),
    (_section("export", "exports"), r"unknown section 'exports' \(did you mean 'export'\?\)"),
    (lambda d: d.update(serving={"port": 1}), "unknown section 'serving'"),
    # a key typo in every section
    (_rename("corpus", "pairs", "pair"), r"unknown key corpus\.pair \(did you mean 'pairs'\?\)"),
    (_rename("base_model", "hidden_size", "hiden_size"), r"unknown key base_model\.hiden_size"),
    (_rename("train", "lora_r", "lora_rank"), r"unknown key train\.lora_rank"),
    (_rename("eval", "n_samples", "samples"), r"unknown key eval\.samples"),
    (_rename("export", "dtype", "dtpye"), r"unknown key export\.dtpye \(did you mean 'dtype'\?\)"),
    # wrong types: strings for numbers, numbers for booleans, scalars for lists, floats for ints
    (_set("train", "max_steps", "80"), r"train\.max_steps: input should be a valid integer, got '80'"),
    (_set("train", "double_quant", 1), r"train\.double_quant: input should be a valid boolean"),
    (_set("train", "target_modules", "q_proj"), r"train\.target_modules: input should be a valid tuple"),
    (_set("train", "batch_size", 2.5), r"train\.batch_size: input should be a valid integer"),
    (_set("eval", "temperature", "hot"), r"eval\.temperature: input should be a valid number"),
    (_set("base_model", "num_layers", True), r"base_model\.num_layers: input should be a valid integer"),
    # values outside the allowed set or range
    (_set("train", "quantization", "int8"), r"train\.quantization: input should be 'nf4' or 'none', got 'int8'"),
    (_set("train", "system_prompt_mode", "full"), r"train\.system_prompt_mode: input should be 'ssot' or 'none'"),
    (_set("train", "max_length", 0), r"train\.max_length: input should be greater than or equal to 1, got 0"),
    (_set("export", "dtype", "int4"), r"export\.dtype: input should be 'float16', 'bfloat16' or 'float32'"),
    (_set("corpus", "workers", 0), r"corpus\.workers must be at least 1"),
    # counts: steps, batch sizes, sample counts, row caps (a flag over the recipe gets the same bound)
    (_set("train", "max_steps", 0), r"train\.max_steps: input should be at least 1, or -1 to train by epochs, got 0"),
    (_set("train", "max_steps", -3), r"train\.max_steps: input should be at least 1, or -1 to train by epochs"),
    (_set("train", "max_eval_rows", -1), r"train\.max_eval_rows: input should be greater than or equal to 0"),
    (_set("train", "save_total_limit", -1), r"train\.save_total_limit: input should be greater than or equal to 0"),
    (_set("train", "epochs", 0), r"train\.epochs: input should be greater than 0"),
    (_set("base_model", "pretrain_steps", 0), r"base_model\.pretrain_steps: input should be greater than or equal"),
    (_set("base_model", "pretrain_batch_size", 0), r"base_model\.pretrain_batch_size: input should be greater"),
    (_set("eval", "n_samples", 0), r"eval\.n_samples: input should be greater than or equal to 1, got 0"),
    (_set("eval", "batch_size", -4), r"eval\.batch_size: input should be greater than or equal to 1, got -4"),
    (_set("eval", "retries", -1), r"eval\.retries: input should be greater than or equal to 0, got -1"),
    (_set("export", "verify_new_tokens", 0), r"export\.verify_new_tokens: input should be greater than or equal"),
    # a section that is not a mapping
    (lambda d: d.update(train=[1, 2]), r"section 'train' must be a mapping"),
]


@pytest.mark.parametrize("mutate, message", CASES)
def test_bad_recipe_is_one_line_naming_file_section_and_key(tmp_path: Path, mutate: Any, message: str) -> None:
    path = _recipe(tmp_path, mutate)
    with pytest.raises(RecipeError, match=f"^{path}: .*" + message) as info:
        validate_recipe(str(path))
    assert "\n" not in str(info.value)


def test_minus_one_max_steps_means_train_by_epochs(tmp_path: Path) -> None:
    assert validate_recipe(str(_recipe(tmp_path, _set("train", "max_steps", -1))))["train"].max_steps == -1


def test_every_count_in_every_section_has_a_lower_bound() -> None:
    """No integer recipe field is a bare ``int``: each says at least 0, at least 1 or (steps) -1 or at least 1.
    The corpus section checks its counts in ``corpus_config`` (``corpus.pairs must be at least 1``)."""
    import dataclasses
    import typing

    from pipeline.recipe_schema import config_class

    bare = [f"{section}.{f.name}" for section in SECTIONS if section != "corpus"
            for f in dataclasses.fields(config_class(section))
            if typing.get_type_hints(config_class(section), include_extras=True)[f.name] is int]
    assert bare == []


def test_many_problems_are_collected_then_counted(tmp_path: Path) -> None:
    def mutate(d: dict[str, Any]) -> None:
        d["train"].update(lora_rr=1, max_stepz=2, batch_sise=3, gradaccum=4, lrate=5)

    with pytest.raises(RecipeError, match=r"\.\.\. and 2 more$"):
        validate_recipe(str(_recipe(tmp_path, mutate)))


def test_not_utf8_is_one_line_with_the_line_number(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes("train:\n  lora_r: 4  # café\n".encode("latin-1"))
    with pytest.raises(RecipeError, match=rf"^{path}:2: not UTF-8 text \(byte 0xe9\)") as info:
        validate_recipe(str(path))
    assert "\n" not in str(info.value) and info.value.__cause__ is None


@pytest.mark.parametrize("text, message", [("train:\n  lora_r: [4\n", r":3:1: invalid YAML: expected ','"),
                                           ("- 1\n- 2\n", "top level must be a mapping")])
def test_invalid_yaml_is_one_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(RecipeError, match=message) as info:
        validate_recipe(str(path))
    assert "\n" not in str(info.value)


def test_a_typo_in_any_section_stops_every_stage(tmp_path: Path) -> None:
    """A stage reading ``train`` fails on an ``export`` typo: nothing runs on a half-valid recipe."""
    path = _recipe(tmp_path, _rename("export", "dtype", "dtpye"))
    with pytest.raises(RecipeError, match=r"unknown key export\.dtpye"):
        stage_config(TrainConfig, "train", str(path))


def test_precedence_and_overrides_are_validated(tmp_path: Path) -> None:
    path = _recipe(tmp_path, _set("train", "lora_r", 8))
    assert TrainConfig().lora_r == 16
    assert stage_config(TrainConfig, "train", str(path)).lora_r == 8  # defaults < recipe
    assert stage_config(TrainConfig, "train", str(path), {"lora_r": 2, "seed": None}).lora_r == 2  # < overrides
    with pytest.raises(RecipeError, match=r"train\.lora_r: input should be greater than or equal to 1"):
        stage_config(TrainConfig, "train", str(path), {"lora_r": 0})


def test_main_job_refuses_a_bad_recipe_before_dagster(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from assets.main import main

    path = _recipe(tmp_path, _section("train", "trian"))
    monkeypatch.setenv("VOX_RECIPE", str(path))  # main() sets it; restored after the test
    assert main(["--recipe", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {path}: unknown section 'trian'") and "\n" not in err


def test_stage_runner_refuses_a_bad_recipe_before_the_first_stage(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from pipeline import paths
    from pipeline.stages import main as stages_main

    path = _recipe(tmp_path, _rename("eval", "n_samples", "samples"))
    assert stages_main(["--recipe", str(path)]) == 2
    assert "unknown key eval.samples" in capsys.readouterr().out
    assert not (paths.artifacts_dir("system_prompt", create=False) / "result.json").exists()  # nothing ran
