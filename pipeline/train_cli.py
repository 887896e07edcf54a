"""``python -m pipeline.train``: the training command line around :func:`pipeline.train.train`.

Flags come from ``transformers.HfArgumentParser`` over :class:`TrainArgs` and
:class:`~pipeline.train_config.TrainConfig` (one flag per field, ``--max-steps`` or ``--max_steps``;
``Literal`` fields list their choices). Precedence, as in ``trl.TrlParser``: dataclass defaults <
the recipe's ``train:`` section < flags; the result is validated like the recipe.

Exit status: 0 done; 1 training failed (message on one line); 2 bad recipe or missing input;
130/143 stopped by SIGINT/SIGTERM (one line, no traceback; the MLflow run is KILLED).
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from pipeline.errors import DataError, PipelineError, RecipeError
from pipeline.train_config import TrainConfig


@dataclass(frozen=True)
class TrainArgs:
    """Flags of the command itself (the rest are :class:`~pipeline.train_config.TrainConfig` fields)."""

    config: str | None = field(default=None, metadata={"help": "recipe name or YAML path (default $VOX_RECIPE "
                                                                "or cpu-tiny)"})
    out: str | None = field(default=None, metadata={"help": "stage dir (default <state>/artifacts/qlora_adapter)"})


def make_parser() -> Any:
    """The ``HfArgumentParser`` for :class:`TrainArgs` + :class:`~pipeline.train_config.TrainConfig`."""
    from transformers import HfArgumentParser

    classes: list[Any] = [TrainArgs, TrainConfig]
    parser = HfArgumentParser(classes, prog="python -m pipeline.train",
                              description="QLoRA fine-tuning of the base model on the corpus.")
    tuples = {f.name for f in fields(TrainConfig) if isinstance(f.default, tuple)}
    for action in parser._actions:  # HfArgumentParser handles list[...] but not tuple[str, ...] fields
        if action.dest in tuples:
            action.type, action.nargs = str, "+"
    return parser


def parse(argv: list[str] | None = None) -> tuple[TrainArgs, TrainConfig]:
    """Parse flags over the recipe: defaults < recipe ``train:`` < flags.

    Raises:
        RecipeError: a bad recipe (anywhere in it: ``<recipe>: train.lora_r: ...``) or a flag value
            the recipe schema or a rule refuses, named by its flag (``--max-steps: ..., got -7``).
        SystemExit: argparse usage errors, unknown flags included (status 2, usage and one error line).
    """
    from pipeline.recipes import stage_config

    parser = make_parser()
    known, _ = parser.parse_known_args(argv)
    recipe_cfg = stage_config(TrainConfig, "train", known.config)
    parser.set_defaults(**asdict(recipe_cfg))
    # HfArgumentParser raises ValueError (a traceback) on leftover strings; argparse's own error instead
    args, flat, unknown = parser.parse_args_into_dataclasses(argv, return_remaining_strings=True)
    if unknown:
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    # only what the flags change is an override: its problems name the flag, the recipe's name the file
    flags = {k: v for k, v in asdict(flat).items() if v != getattr(recipe_cfg, k)}
    cfg = stage_config(TrainConfig, "train", args.config, flags, {k: flag_name(k) for k in flags})
    return args, cfg


def flag_name(field_name: str) -> str:
    """The flag of a :class:`~pipeline.train_config.TrainConfig` field: ``max_steps`` -> ``--max-steps``."""
    return "--" + field_name.replace("_", "-")


def run_cli(body: Callable[[], object]) -> int:
    """Run ``body`` the way a command line should end: one line and an exit status, no traceback.

    Returns:
        0, or 2 (``RecipeError``/``DataError``), 1 (other pipeline errors), 128 + signal number
        (SIGINT/SIGTERM; ``KeyboardInterrupt`` counts as SIGINT).
    """
    from pipeline.interrupts import exit_status

    try:
        body()
    except KeyboardInterrupt as exc:  # also pipeline.interrupts.Interrupted (SIGTERM)
        notes = getattr(exc, "__notes__", None)
        print(f"interrupted: {notes[-1] if notes else 'stopped by SIGINT'}", file=sys.stderr, flush=True)
        return exit_status(exc)
    except PipelineError as exc:
        print(f"error: {' '.join(str(exc).split())}", file=sys.stderr, flush=True)
        return 2 if isinstance(exc, (RecipeError, DataError)) else 1
    return 0


def main(argv: list[str] | None = None) -> int:
    """Train on the built corpus and base model; print the result JSON (see the module docstring)."""
    logging.basicConfig(level=logging.INFO, format="%(message)s")

    def body() -> None:
        from pipeline.stages import run_stage

        args, cfg = parse(argv)
        # the one training path (also the asset's and `python -m pipeline.stages`'): same inputs,
        # run key, lock and result.json; flags are overrides over the recipe's train: section
        result = run_stage("qlora_adapter", args.config, overrides=asdict(cfg),
                           out_dir=Path(args.out) if args.out else None)
        print(json.dumps({k: v for k, v in result.data.items() if k not in ("losses", "eval_losses")}, indent=1))

    return run_cli(body)
