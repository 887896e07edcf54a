"""Bounded integer types for the recipe config dataclasses (``TrainConfig``, ``EvalConfig`` ...).

A bound written here is enforced by the recipe schema (:mod:`pipeline.recipe_schema`) for a YAML
value and for a command-line flag over it alike, so an out-of-range count is refused in one line
(``<recipe>: train.max_steps: input should be ...``) before any stage runs; a :class:`Reason` beside
the bounds says why they are what they are, in that line. Only ``annotated_types`` is imported here:
the config modules stay cheap to load; pydantic is imported when a recipe is validated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Final

from annotated_types import Ge, Le


@dataclass(frozen=True, slots=True)
class Reason:
    """Schema note beside a field's bounds (``Annotated[int, Ge(1), Le(2), Reason("...")]``): why a
    value outside them is refused. The recipe schema adds it to the message of a value out of bounds
    or not one of a ``Literal``'s values (:func:`pipeline.recipe_schema.field_reasons`); validation
    ignores it.

    Attributes:
        text: the reason, a clause that reads after the refused value (no full stop).
    """

    text: str


#: a count that must be at least 1 (sizes, batch sizes, sample counts, step intervals)
Positive = Annotated[int, Ge(1)]
#: a count where 0 means "none" or "no limit" (row caps, retries, warm-up steps)
NonNegative = Annotated[int, Ge(0)]
#: a random seed: ``transformers.set_seed`` hands it to ``numpy.random.seed``, which takes 0..2**32 - 1
Seed = Annotated[int, Ge(0), Le(2**32 - 1), Reason(
    "seeds go to numpy.random.seed (through transformers.set_seed), which takes 0 to 2**32 - 1")]

#: what the schema says about a refused :data:`StepLimit`
STEP_LIMIT_RULE: Final = "input should be at least 1, or -1 to train by epochs"


class _OneOrMoreOrMinusOne:
    """Schema marker: an int that is -1 or at least 1 (0 and values below -1 are refused)."""

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        from pydantic_core import PydanticCustomError, core_schema

        def check(value: int) -> int:
            if value == 0 or value < -1:
                raise PydanticCustomError("step_limit", STEP_LIMIT_RULE)
            return value

        return core_schema.no_info_after_validator_function(check, handler(source))

    def __repr__(self) -> str:
        return "OneOrMoreOrMinusOne()"


#: optimizer steps of a run: at least 1, or -1 = train ``epochs`` epochs instead (transformers' ``max_steps``)
StepLimit = Annotated[int, _OneOrMoreOrMinusOne()]

#: processes the eval samples in (``eval.workers``): :mod:`pipeline.eval_workers` says why no more
EvalWorkers = Annotated[int, Ge(1), Le(2), Reason(
    "1 draws every sample in the stage process, 2 draws the base model's gate-policy samples in a second "
    "process (pipeline.eval_workers), and more is not supported: only the base model's samples are independent "
    "of the adapter's, so they are the only ones a further process could draw at the same time")]
