"""Bounded integer types for the recipe config dataclasses (``TrainConfig``, ``EvalConfig`` ...).

A bound written here is enforced by the recipe schema (:mod:`pipeline.recipe_schema`) for a YAML
value and for a command-line flag over it alike, so an out-of-range count is refused in one line
(``<recipe>: train.max_steps: input should be ...``) before any stage runs. Only
``annotated_types`` is imported here: the config modules stay cheap to load; pydantic is imported
when a recipe is validated.
"""

from __future__ import annotations

from typing import Annotated, Any, Final

from annotated_types import Ge

#: a count that must be at least 1 (sizes, batch sizes, sample counts, step intervals)
Positive = Annotated[int, Ge(1)]
#: a count where 0 means "none" or "no limit" (row caps, retries, warm-up steps), or a seed
NonNegative = Annotated[int, Ge(0)]

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
