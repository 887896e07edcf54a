"""Recipe checks a new-user trial found missing: non-finite numbers, rules between values (checked up
front, not when a late stage starts), a bound that says why, a key given twice, recipe path messages,
flags named as flags, and a loss that stops being a number failing the run."""

from __future__ import annotations

import dataclasses
import math
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Annotated, Any, Literal

import pytest
import yaml
from annotated_types import Ge, Le

from pipeline.errors import RecipeError, TrainingError
from pipeline.recipe_schema import config_class
from pipeline.recipe_types import Reason
from pipeline.recipes import RECIPES_DIR, recipe_path, stage_config, validate_recipe

INF, NAN = math.inf, math.nan


def _recipe(tmp_path: Path, **sections: dict[str, Any]) -> Path:
    """cpu-tiny with ``sections``' keys set."""
    data = yaml.safe_load((RECIPES_DIR / "cpu-tiny.yaml").read_text())
    for section, values in sections.items():
        data.setdefault(section, {}).update(values)
    path = tmp_path / "r.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _refused(path: Path, message: str) -> None:
    with pytest.raises(RecipeError, match=f"^{re.escape(str(path))}: .*{message}") as info:
        validate_recipe(str(path))
    assert "\n" not in str(info.value)


# --- non-finite numbers -------------------------------------------------------------------------

@pytest.mark.parametrize("section, key, value", [
    ("train", "learning_rate", INF), ("train", "learning_rate", NAN), ("train", "lora_dropout", NAN),
    ("train", "epochs", -INF), ("base_model", "pretrain_lr", INF), ("base_model", "pretrain_train_share", NAN),
    ("eval", "temperature", INF), ("eval", "top_p", NAN), ("eval", "pass_threshold", NAN),
    ("export", "verify_atol", INF), ("corpus", "paraphrase_rate", NAN), ("corpus", "min_gate_pass_rate", INF),
])
def test_a_non_finite_float_is_refused_naming_section_key_and_value(tmp_path: Path, section: str, key: str,
                                                                    value: float) -> None:
    path = _recipe(tmp_path, **{section: {key: value}})
    _refused(path, rf"{section}\.{key}: input should be a finite number, got {value!r}")


def test_yaml_inf_and_nan_literals_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "r.yaml"
    path.write_text("train:\n  learning_rate: .inf\nbase_model:\n  pretrain_lr: .nan\n")
    _refused(path, r"base_model\.pretrain_lr: input should be a finite number, got nan; "
                   r"train\.learning_rate: input should be a finite number, got inf")


def test_a_non_finite_number_in_a_mapping_is_refused(tmp_path: Path) -> None:
    path = _recipe(tmp_path, corpus={"weights": {"organic": INF, "preflight": 0.5}})
    _refused(path, r"corpus\.weights: entry 'organic' should be a finite number, got \{'organic': inf")


def test_every_float_field_of_every_section_refuses_inf() -> None:
    """The check is the schema's, for all float fields at once: none of them lets ``inf`` through."""
    import dataclasses
    import typing

    from pipeline.recipe_schema import SECTIONS, section_problems

    floats = [(s, f.name) for s in SECTIONS for f in dataclasses.fields(config_class(s))
              if typing.get_type_hints(config_class(s))[f.name] is float]
    assert len(floats) > 15
    for section, key in floats:
        config, problems = section_problems(config_class(section), section, {key: INF})
        assert config is None and problems == [f"{section}.{key}: input should be a finite number, got inf"]


def test_every_integer_field_of_every_section_refuses_what_int64_cannot_hold() -> None:
    """User trial: `--batch-size 99999999999999999999` passed validation (then overflowed in torch).
    The bound is the schema's, for every integer field at once."""
    import typing

    from pipeline.recipe_schema import INT64_MAX, INT64_REASON, SECTIONS, section_problems

    ints = [(s, f.name) for s in SECTIONS for f in dataclasses.fields(config_class(s))
            if int in (typing.get_type_hints(config_class(s))[f.name], *typing.get_args(
                typing.get_type_hints(config_class(s), include_extras=True)[f.name]))]
    assert len(ints) > 30
    for section, key in ints:
        config, problems = section_problems(config_class(section), section, {key: 10**20})
        assert config is None and len(problems) == 1, (section, key, problems)
        assert problems[0].startswith(f"{section}.{key}: input should be less than or equal to "), problems
        assert problems[0].endswith(INT64_REASON) or key in ("seed", "workers"), problems  # their own bound
    config, problems = section_problems(config_class("train"), "train", {"max_length": INT64_MAX})
    assert problems == [] and config is not None and config.max_length == INT64_MAX


@pytest.mark.parametrize("flag", ["--batch-size", "--seed", "--lora-r"])
def test_a_flag_too_large_for_int64_or_a_seed_is_refused_naming_the_flag(flag: str) -> None:
    from pipeline.train_cli import parse

    big = "99999999999999999999"
    with pytest.raises(RecipeError, match=rf"^{flag}: input should be less than or equal to \d+, got {big}: "):
        parse(["--config", "cpu-tiny", flag, big])


def test_a_seed_is_held_to_what_numpy_takes(tmp_path: Path) -> None:
    _refused(_recipe(tmp_path, train={"seed": 2**32}), r"train\.seed: input should be less than or equal to "
             r"4294967295, got 4294967296: seeds go to numpy\.random\.seed")


def test_a_non_finite_flag_is_refused_naming_the_flag() -> None:
    from pipeline.train_cli import parse

    with pytest.raises(RecipeError, match=r"^--learning-rate: input should be a finite number, got inf$"):
        parse(["--config", "cpu-tiny", "--learning-rate", "inf"])


# --- rules between values -----------------------------------------------------------------------

@pytest.mark.parametrize("sections, message", [
    ({"eval": {"k": 8, "n_samples": 4}}, r"eval\.k=8 must not exceed eval\.n_samples=4"),
    ({"eval": {"verify_n": 40, "n_samples": 4}}, r"eval\.verify_n=40 must not exceed eval\.n_samples=4"),
    ({"base_model": {"num_heads": 3, "hidden_size": 128, "num_kv_heads": 1}},
     r"base_model\.hidden_size=128 must be divisible by base_model\.num_heads=3"),
    ({"base_model": {"num_heads": 4, "hidden_size": 128, "num_kv_heads": 3}},
     r"base_model\.num_heads=4 must be divisible by base_model\.num_kv_heads=3"),
    ({"train": {"max_length": 100000}}, r"train\.max_length=100000 must not exceed base_model\.max_positions=1024"),
    ({"base_model": {"pretrain_block_size": 2048}},
     r"base_model\.pretrain_block_size=2048 must not exceed base_model\.max_positions=1024"),
    ({"train": {"sources": ["organik", "preflight"]}}, r"train\.sources: unknown source\(s\) organik; valid: organic"),
    ({"train": {"sources": ["synthetic_web"]}, "corpus": {"weights": {"organic": 1.0, "synthetic_web": 0}}},
     r"train\.sources \['synthetic_web'\] selects no train rows: none of them has a positive share in corpus\.weights"),
])
def test_a_broken_rule_is_refused_up_front(tmp_path: Path, sections: dict[str, dict[str, Any]], message: str) -> None:
    path = _recipe(tmp_path, **sections)
    _refused(path, message)
    with pytest.raises(RecipeError, match=message):  # and by every stage, not only the one that reads it
        stage_config(config_class("export"), "export", str(path))


@pytest.mark.parametrize("sections", [
    {"base_model": {"model": "Qwen/Qwen2.5-Coder-1.5B-Instruct"}, "train": {"max_length": 4096}},
    {"train": {"max_length": 4096, "base_model": "/models/long-context"}},
    {"base_model": {"model": "Qwen/Qwen2.5-Coder-1.5B-Instruct", "num_heads": 3}},  # sizes unused for an HF id
    {"eval": {"k": 4, "verify_n": 4, "n_samples": 4}},
])
def test_rules_hold_only_where_both_values_come_from_the_recipe(tmp_path: Path,
                                                                sections: dict[str, dict[str, Any]]) -> None:
    validate_recipe(str(_recipe(tmp_path, **sections)))


def test_an_override_breaking_a_rule_is_named_as_the_override(tmp_path: Path) -> None:
    from pipeline.evaluate import EvalConfig
    from pipeline.train_cli import parse

    path = _recipe(tmp_path)
    with pytest.raises(RecipeError, match=r"^override eval\.k=8 must not exceed eval\.n_samples=4 \("):
        stage_config(EvalConfig, "eval", str(path), {"k": 8})
    with pytest.raises(RecipeError, match=r"^--max-length=4096 must not exceed base_model\.max_positions=1024 \("):
        parse(["--config", str(path), "--max-length", "4096"])


def test_rule_violations_say_which_were_overridden() -> None:
    from pipeline.evaluate import EvalConfig
    from pipeline.recipe_rules import Violation, rule_violations

    configs = {"eval": EvalConfig(n_samples=2, k=3, verify_n=2)}
    assert rule_violations(configs) == [Violation("eval.k=3 must not exceed eval.n_samples=2 (pass@k needs k "
                                                  "samples)", False)]
    assert rule_violations(configs, {"eval.k": "--k"})[0].text.startswith("--k=3 must not exceed")
    assert rule_violations(configs, {"eval.k": "--k"})[0].overridden
    assert rule_violations({}) == []


def test_allowed_values_once_checked_by_the_stage_are_checked_up_front(tmp_path: Path) -> None:
    _refused(_recipe(tmp_path, base_model={"pretrain_data": "repeat"}),
             r"base_model\.pretrain_data: input should be 'stream' or 'train_split', got 'repeat'")
    _refused(_recipe(tmp_path, eval={"gate_metric": "pass"}), r"eval\.gate_metric: input should be 'compile' or 'exec'")
    _refused(_recipe(tmp_path, base_model={"pretrain_bf16": "yes"}), r"base_model\.pretrain_bf16: input should be")
    _refused(_recipe(tmp_path, base_model={"pretrain_train_share": 1.5}),
             r"base_model\.pretrain_train_share: input should be less than or equal to 1")


# --- recipe paths and flags ---------------------------------------------------------------------

@pytest.mark.parametrize("text", ["", "# only a comment\n", "train:\neval: {}\n"])
def test_a_recipe_without_settings_runs_on_the_defaults_with_one_warning(
        tmp_path: Path, text: str, caplog: pytest.LogCaptureFixture) -> None:
    """User trial: an empty recipe silently ran every stage on the dataclass defaults."""
    from pipeline.train_config import TrainConfig

    path = tmp_path / "empty.yaml"
    path.write_text(text)
    with caplog.at_level("WARNING", logger="pipeline.recipes"):
        configs = validate_recipe(str(path))
        assert stage_config(TrainConfig, "train", str(path)) == TrainConfig()
    assert configs["train"] == TrainConfig()
    warned = [r.getMessage() for r in caplog.records if r.name == "pipeline.recipes"]
    assert warned == [f"recipe {path} holds no settings: every stage runs on its built-in defaults, not on "
                      "cpu-tiny's (copy pipeline/recipes/cpu-tiny.yaml to change a few of its values)"]


def test_a_missing_recipe_path_says_no_such_file(tmp_path: Path) -> None:
    missing = tmp_path / "x" / "missing.yaml"
    with pytest.raises(RecipeError, match=f"^recipe file {re.escape(str(missing))}: no such file$"):
        validate_recipe(str(missing))
    with pytest.raises(RecipeError, match=r"^recipe file missing\.yml: no such file$"):
        recipe_path("missing.yml")


def test_a_directory_recipe_path_says_is_a_directory(tmp_path: Path) -> None:
    with pytest.raises(RecipeError, match=f"^recipe file {re.escape(str(tmp_path))}: is a directory$"):
        recipe_path(str(tmp_path))
    (tmp_path / "d.yaml").mkdir()
    with pytest.raises(RecipeError, match=r"d\.yaml: is a directory$"):
        recipe_path(str(tmp_path / "d.yaml"))


def test_an_unknown_recipe_name_lists_the_names() -> None:
    with pytest.raises(RecipeError, match=r"^unknown recipe 'cpu-tinny': expected a YAML path or one of: .*cpu-tiny"):
        recipe_path("cpu-tinny")


def test_the_train_command_names_a_missing_recipe_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from pipeline.train_cli import main

    missing = tmp_path / "missing.yaml"
    assert main(["--config", str(missing), "--max-steps", "3"]) == 2
    assert capsys.readouterr().err.strip() == f"error: recipe file {missing}: no such file"


def test_a_flag_error_names_the_flag_and_a_recipe_error_the_file(tmp_path: Path) -> None:
    from pipeline.train_cli import parse

    with pytest.raises(RecipeError, match=r"^--max-steps: input should be at least 1, or -1 to train by epochs, "
                                          r"got -7$"):
        parse(["--config", "cpu-tiny", "--max-steps", "-7"])
    path = _recipe(tmp_path, train={"max_steps": -7})
    with pytest.raises(RecipeError, match=f"^{re.escape(str(path))}: train\\.max_steps: input should be at least 1"):
        parse(["--config", str(path), "--max-steps", "5"])


# --- a bound that says why -----------------------------------------------------------------------

@pytest.mark.parametrize("workers, bound", [(3, "less than or equal to 2"), (0, "greater than or equal to 1")])
def test_eval_workers_out_of_range_says_why(tmp_path: Path, workers: int, bound: str) -> None:
    path = _recipe(tmp_path, eval={"workers": workers})
    _refused(path, rf"eval\.workers: input should be {bound}, got {workers}: 1 draws every sample in the stage "
                   r"process, 2 draws the base model's gate-policy samples in a second process "
                   r"\(pipeline\.eval_workers\), and more is not supported: only the base model's samples are "
                   r"independent of the adapter's")


@dataclasses.dataclass(frozen=True)
class _Noted:
    count: Annotated[int, Ge(1), Le(3), Reason("three lanes at most")] = 1
    mode: Annotated[Literal["a", "b"], Reason("b is the fallback")] = "a"
    plain: Annotated[int, Ge(0)] = 0


@pytest.mark.parametrize("data, problem", [
    ({"count": 4}, "x.count: input should be less than or equal to 3, got 4: three lanes at most"),
    ({"mode": "c"}, "x.mode: input should be 'a' or 'b', got 'c': b is the fallback"),
    ({"count": "many"}, "x.count: input should be a valid integer, got 'many'"),  # a wrong type: no reason
    ({"plain": -1}, "x.plain: input should be greater than or equal to 0, got -1"),  # no reason given
])
def test_a_field_s_reason_follows_its_refused_value(data: dict[str, Any], problem: str) -> None:
    """The mechanism, on any config dataclass: a :class:`Reason` beside a field's bounds or ``Literal``
    ends the message of a value outside them, and only of such a value."""
    from pipeline.recipe_schema import field_reasons, section_problems

    assert field_reasons(_Noted) == {"count": "three lanes at most", "mode": "b is the fallback"}
    assert section_problems(_Noted, "x", data) == (None, [problem])
    assert section_problems(_Noted, "x", {"count": 3, "mode": "b"})[0] == _Noted(3, "b")


# --- a key given twice -------------------------------------------------------------------------

@pytest.mark.parametrize("text, key, lines", [
    ("train:\n  learning_rate: 0.001\n  epochs: 1\n  learning_rate: 0.1\n", r"train\.learning_rate", (2, 4)),
    ("eval:\n  k: 1\ntrain:\n  epochs: 1\neval:\n  k: 2\n", "eval", (1, 5)),  # a whole section twice
    ("corpus:\n  weights:\n    organic: 1.0\n    'organic': 0.5\n", r"corpus\.weights\.organic", (3, 4)),
])
def test_a_key_given_twice_is_refused_naming_the_path_and_both_lines(tmp_path: Path, text: str, key: str,
                                                                     lines: tuple[int, int]) -> None:
    """YAML lets the later value win silently; a recipe refuses it, naming the file, the key and both lines."""
    path = tmp_path / "r.yaml"
    path.write_text(text)
    first, later = lines
    message = rf"^{re.escape(str(path))}:{later}:\d+: invalid YAML: duplicate key {key} \(lines {first} and {later}\)"
    for load in (validate_recipe, lambda p: stage_config(config_class("eval"), "eval", p)):
        with pytest.raises(RecipeError, match=message) as info:
            load(str(path))
        assert "\n" not in str(info.value)


def test_a_merged_key_may_be_overridden_and_every_shipped_recipe_has_each_key_once(tmp_path: Path) -> None:
    """A key a merge (``<<: *base``) brings is meant to be overridden: not a duplicate."""
    from pipeline.recipes import load_recipe

    path = tmp_path / "r.yaml"
    path.write_text("base: &base\n  k: 1\n  n_samples: 2\neval:\n  <<: *base\n  k: 2\n")
    assert load_recipe(str(path))["eval"] == {"k": 2, "n_samples": 2}
    for recipe in sorted(RECIPES_DIR.glob("*.yaml")):
        load_recipe(str(recipe))


# --- a loss that is not a number fails the run --------------------------------------------------

@pytest.mark.parametrize("logs, message", [
    ({"loss": NAN, "learning_rate": 1e-3}, r"^training step 12: loss is nan \(not a finite number\)"),
    ({"eval_loss": INF}, r"^training step 12: eval_loss is inf"),
    ({"train_loss": -INF}, r"^training step 12: train_loss is -inf"),
])
def test_a_non_finite_loss_fails_naming_the_step(logs: dict[str, float], message: str) -> None:
    from pipeline.loss_guard import require_finite

    with pytest.raises(TrainingError, match=message):
        require_finite(logs, 12)


def test_finite_losses_and_other_figures_pass() -> None:
    from pipeline.loss_guard import require_finite

    require_finite({"loss": 2.5, "eval_loss": 0.0, "grad_norm": NAN, "epoch": 1}, 3)
    require_finite({}, 0)


def test_the_trainer_callback_fails_on_a_nan_loss() -> None:
    from pipeline.train_callbacks import FiniteLossGuard

    guard, state = FiniteLossGuard(), SimpleNamespace(global_step=7)
    guard.on_log(None, state, None, logs={"loss": 1.25})
    guard.on_log(None, state, None, logs=None)
    with pytest.raises(TrainingError, match=r"^training step 7: loss is nan"):
        guard.on_log(None, state, None, logs={"loss": NAN})


def test_pretraining_fails_on_a_nan_loss() -> None:
    import torch

    from pipeline.base_model import BaseModelConfig, pretrain

    class NanModel(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.w = torch.nn.Parameter(torch.ones(1))

        def forward(self, input_ids: Any, labels: Any) -> Any:
            return SimpleNamespace(loss=self.w.sum() * math.nan)

    class Tokenizer:
        def convert_tokens_to_ids(self, token: str) -> int:
            return 0

        def __call__(self, docs: list[str], add_special_tokens: bool = False) -> dict[str, Any]:
            return {"input_ids": [[1] * 40 for _ in docs]}

    cfg = BaseModelConfig(pretrain_data="train_split", pretrain_block_size=8, pretrain_batch_size=2,
                          pretrain_steps=3, pretrain_warmup=1, pretrain_bf16="off")
    with pytest.raises(TrainingError, match=r"^pretraining step 1: loss is nan"):
        pretrain(NanModel(), Tokenizer(), ["a", "b"], cfg)
