"""Training-pair generators: ten organic template families, synthetic script and web pairs,
and preflight repair pairs derived from every generated program.

:func:`generate_pairs` is deterministic for a given :class:`GenPlan` (each program's RNG is
seeded from the plan seed, its family and its index, so chunking and worker count never change
the output). Modules: :mod:`.organic_core` (functions, types_match, modules),
:mod:`.organic_services` (actors, workflows, mcp, tests), :mod:`.web` (views, web pairs),
:mod:`.automation` (automation, script pairs), :mod:`.preflight` (repair pairs).
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any, Final

from pipeline.errors import RecipeError
from pipeline.generators.adherence import adherence
from pipeline.generators.automation import automation, script_pairs
from pipeline.generators.base import SOURCES, Family, Pair, Program, derive_seed, response, short_id
from pipeline.generators.organic_core import functions, modules, types_match
from pipeline.generators.organic_services import actors, mcp, tests, workflows
from pipeline.generators.preflight import break_program, ordered_kinds, repair_prompt, repair_response
from pipeline.generators.themes import THEMES
from pipeline.generators.web import views, web_pairs

#: every program family, in generation order (the organic ten first)
FAMILIES: Final[tuple[Family, ...]] = (
    Family("organic", "functions", functions),
    Family("organic", "types_match", types_match),
    Family("organic", "actors", actors),
    Family("organic", "workflows", workflows),
    Family("organic", "mcp", mcp),
    Family("organic", "tests", tests),
    Family("organic", "views", views),
    Family("organic", "modules", modules),
    Family("organic", "automation", automation),
    Family("organic", "adherence", adherence),  # names/signatures stated in the request, declared exactly
    Family("synthetic_script", "script", script_pairs),
    Family("synthetic_web", "web", web_pairs),
)
FAMILY_BY_NAME: Final = {f.name: f for f in FAMILIES}
#: ``family`` value of preflight rows (``construct`` holds the break kind)
REPAIR_FAMILY: Final = "repair"
#: the partition holding every preflight (repair) row, derived from the programs of all families
PREFLIGHT_PARTITION: Final = "preflight"
#: corpus partitions: one per program family (its prompt rows and paraphrases), then the preflight
#: rows; each is generated on its own, deterministically, from (seed, family, program index)
PARTITIONS: Final[tuple[str, ...]] = (*(f.name for f in FAMILIES), PREFLIGHT_PARTITION)
#: diagnostics shown in a repair prompt at most (the rest are summarised)
MAX_PROMPT_DIAGNOSTICS: Final = 3


@dataclass(frozen=True)
class GenPlan:
    """How many programs to generate per family, and how many repair/paraphrase rows each gets.

    Attributes:
        seed: master seed.
        programs: family name -> number of programs.
        repair_rate: mean preflight rows per program.
        paraphrase_rate: chance a program also gets its paraphrased prompt as a second row.
    """

    seed: int
    programs: Mapping[str, int]
    repair_rate: float
    paraphrase_rate: float

    @property
    def total_programs(self) -> int:
        """Programs over all families."""
        return sum(self.programs.values())


def plan(pairs: int, weights: Mapping[str, float], seed: int, paraphrase_rate: float = 0.25) -> GenPlan:
    """Split a target of ``pairs`` rows over the families according to source ``weights``.

    Organic rows are shared equally by the ten organic families; preflight rows are derived
    from all programs (``repair_rate`` per program).

    Raises:
        RecipeError: an unknown source, a negative weight, or weights summing to zero.
    """
    unknown = sorted(set(weights) - set(SOURCES))
    if unknown:
        raise RecipeError(f"corpus.weights: unknown source(s) {', '.join(unknown)}; valid: {', '.join(SOURCES)}")
    if any(w < 0 for w in weights.values()) or sum(weights.values()) <= 0:
        raise RecipeError(f"corpus.weights must be non-negative and not all zero, got {dict(weights)}")
    total = sum(weights.values())
    share = {s: weights.get(s, 0.0) / total for s in SOURCES}
    programs: dict[str, int] = {}
    for src in ("organic", "synthetic_script", "synthetic_web"):
        fams = [f for f in FAMILIES if f.source == src]
        for f in fams:
            rows_per_program = 1.0 + paraphrase_rate * _paraphrase_share(f.name, seed)
            n = pairs * share[src] / len(fams) / rows_per_program
            programs[f.name] = math.ceil(n) if share[src] > 0 else 0
    n_programs = sum(programs.values())
    if n_programs == 0:
        raise RecipeError("corpus.weights: preflight rows are derived from programs; give another source a weight")
    return GenPlan(seed, programs, pairs * share["preflight"] / n_programs, paraphrase_rate)


def _paraphrase_share(family: str, seed: int, sample: int = 24) -> float:
    """Share of ``family``'s programs that come with a paraphrased prompt (estimated on a sample)."""
    return sum(len(generate_program(family, seed, -1 - i)[2].prompts) > 1 for i in range(sample)) / sample


def generate_program(family: str, seed: int, index: int) -> tuple[int, str, Program]:
    """Program ``index`` of ``family``: ``(program_seed, theme_key, program)``."""
    pseed = derive_seed(seed, family, index)
    rng = random.Random(pseed)
    theme = rng.choice(THEMES)
    return pseed, theme.key, FAMILY_BY_NAME[family].generate(rng, theme)


def _rows_for(family: str, plan_: GenPlan, index: int, part: str = "all") -> list[Pair]:
    """Rows of program ``index`` of ``family``: ``part`` ``"program"`` (its prompt and paraphrase
    rows), ``"repair"`` (its preflight rows) or ``"all"``; each part alone equals its share of ``"all"``."""
    from vox_lang import check, render_repair

    fam = FAMILY_BY_NAME[family]
    pseed, theme, prog = generate_program(family, plan_.seed, index)
    rng = random.Random(pseed ^ 0x5EED)
    iid = short_id(family, pseed)
    resp = response(prog.code, prog.note)
    common: dict[str, Any] = dict(instance_id=iid, construct=prog.construct, difficulty=prog.difficulty,
                                  seed=pseed, theme=theme)
    rows = [Pair(id=f"{iid}-p0", source=fam.source, family=family, prompt=prog.prompts[0], response=resp, **common)]
    if len(prog.prompts) > 1 and rng.random() < plan_.paraphrase_rate:
        rows.append(Pair(id=f"{iid}-p1", source=fam.source, family=family, prompt=prog.prompts[1],
                         response=resp, **common))
    if part == "program":
        return rows
    if part == "repair":
        rows = []
    n_rep = int(plan_.repair_rate) + (rng.random() < plan_.repair_rate % 1.0)
    for kind in ordered_kinds(rng):
        if n_rep <= 0:
            break
        broken = break_program(prog.code, kind, rng)
        if broken is None:
            continue
        result = check(broken, strict=True)
        if kind.code not in {d.code for d in result.errors}:
            continue  # this break did not produce its kind's diagnostic here; try another kind
        shown = result.errors[:MAX_PROMPT_DIAGNOSTICS]
        diags = render_repair(shown)
        if len(result.errors) > len(shown):
            diags += f"\n... and {len(result.errors) - len(shown)} more"
        rows.append(Pair(id=f"{iid}-r{kind.name}", source="preflight", family=REPAIR_FAMILY,
                         instance_id=iid, construct=kind.name, difficulty=prog.difficulty, seed=pseed, theme=theme,
                         prompt=repair_prompt(rng, broken, diags), response=repair_response(kind, diags, prog.code),
                         broken=broken, expect_code=kind.code))
        n_rep -= 1
    return rows


def _chunk(args: tuple[str, GenPlan, int, int, str]) -> list[Pair]:
    family, plan_, start, stop, part = args
    return [row for i in range(start, stop) for row in _rows_for(family, plan_, i, part)]


def generate_pairs(plan_: GenPlan, workers: int = 1, chunk_size: int = 250,
                   partition: str | None = None) -> list[Pair]:
    """The rows of ``plan_`` (or of one partition) in a fixed order (family order, then program index).

    Args:
        plan_: what to generate (see :func:`plan`).
        workers: processes to use (1 = in this process).
        chunk_size: programs per work unit.
        partition: ``None`` for every row; a family name (:data:`PARTITIONS`) for that family's
            prompt rows only; :data:`PREFLIGHT_PARTITION` for the preflight rows of every family's
            programs. The partitions' rows together are exactly the rows of ``None``.

    Raises:
        ValueError: an unknown partition.
    """
    if partition is not None and partition not in PARTITIONS:
        raise ValueError(f"unknown corpus partition {partition!r}; valid: {', '.join(PARTITIONS)}")
    part = "all" if partition is None else "repair" if partition == PREFLIGHT_PARTITION else "program"
    families = [f for f in FAMILIES if partition in (None, PREFLIGHT_PARTITION, f.name)]
    jobs = [(f.name, plan_, s, min(s + chunk_size, plan_.programs.get(f.name, 0)), part)
            for f in families for s in range(0, plan_.programs.get(f.name, 0), chunk_size)]
    if workers <= 1 or len(jobs) <= 1:
        return [row for job in jobs for row in _chunk(job)]
    from pipeline.parallel import pool_context, warm_front_end

    warm_front_end()
    with ProcessPoolExecutor(max_workers=workers, mp_context=pool_context()) as pool:
        return [row for rows in pool.map(_chunk, jobs) for row in rows]


__all__ = ["FAMILIES", "FAMILY_BY_NAME", "PARTITIONS", "PREFLIGHT_PARTITION", "GenPlan", "Pair", "Program",
           "REPAIR_FAMILY", "generate_pairs", "generate_program", "plan"]
