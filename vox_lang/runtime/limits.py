"""Limits and capabilities of one run (spec §11): the configuration, and the live budget the
compiled code decrements.

Steps are calls plus loop iterations. Compiled code decrements ``counter[0]`` on each step and
calls :meth:`Budget.checkpoint` when it goes below zero; the checkpoint charges the steps used
since the last one, checks the wall clock, and hands out the next slice, so the hot path costs
one list decrement and one comparison. ``counter[1]`` is the current call depth.

One step can still be long (``str`` of a 10,000,000-element list, ``yaml.render``), so builtins
that work on a whole value read the clock after a big one (:meth:`Budget.charge`), and the runner
raises R0010 into a run still going past its deadline (:func:`vox_lang.runtime.runner`).
:class:`SharedLimits` lets several runs (a module's ``@test`` functions) share one budget.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from vox_lang.messages import OUTPUT_CAP_HINT, OUTPUT_CAP_MESSAGE, SIZE_CAP_HINT, SIZE_CAP_MESSAGE
from vox_lang.runtime.children import Children
from vox_lang.runtime.errors import VoxFault
from vox_lang.source import Span

#: capability names accepted by ``--allow`` and the std modules they unlock
CAPABILITIES: Final = {"fs": "fs", "process": "process", "net": "http", "env": "env"}

#: steps between wall-clock checks (a step is at most one bounded operation, so the clock is
#: read often enough to stop within a few milliseconds of the limit)
SLICE: Final = 512
#: elements or characters a builtin may work through before it reads the clock (:meth:`Budget.charge`):
#: the slowest per-element work (``str`` of a list, ~0.2 µs an element) takes ~15 ms for this many
WORK_SLICE: Final = 65_536


@dataclass(frozen=True)
class RunConfig:
    """What one run may do (defaults: spec §11).

    Attributes:
        max_steps: calls + loop iterations before R0006.
        timeout_s: wall-clock seconds before R0010.
        max_depth: nested calls before R0007.
        capabilities: granted subset of ``fs process net env`` (model-written code gets none).
        max_len: longest list/map/set (elements) or str (code points) a program may build; a
            longer one ends the run with R0006 instead of exhausting the host's memory.
        max_output: characters ``print`` may write in total (R0006 past it).
        tests_share_limits: when true, ``max_steps`` and ``timeout_s`` bound all of a module's
            ``@test`` functions together (screening a model's candidate costs at most
            ``timeout_s``); when false (``vox test``), each test gets them afresh.
        write: where ``print`` output goes (``None``: collected in the result only).
        log: where ``std.log`` lines go (``None``: the host's stderr); never program output.
    """

    max_steps: int = 10_000_000
    timeout_s: float = 10.0
    max_depth: int = 1_000
    capabilities: frozenset[str] = frozenset()
    max_len: int = 10_000_000
    max_output: int = 10_000_000
    tests_share_limits: bool = False
    write: Callable[[str], Any] | None = field(default=None, compare=False)
    log: Callable[[str], Any] | None = field(default=None, compare=False)


def parse_capabilities(text: str) -> frozenset[str]:
    """``"fs,net"`` → ``{"fs", "net"}``.

    Raises:
        ValueError: an unknown capability (the message names it and the valid ones).
    """
    caps = {c.strip() for c in text.split(",") if c.strip()}
    unknown = sorted(caps - set(CAPABILITIES))
    if unknown:
        raise ValueError(f"unknown capability {unknown[0]!r}: use one or more of {', '.join(CAPABILITIES)}")
    return frozenset(caps)


class Budget:
    """The live step counter, depth counter and deadline of one run.

    Args:
        cfg: the run's limits.
        steps: steps this run may take (default ``cfg.max_steps``; less when shared).
        deadline: ``time.monotonic()`` value past which the run ends with R0010 (default
            ``cfg.timeout_s`` from now).
        scope: who the limits bound, for the fault's detail (``the run``, ``the tests together``).
    """

    def __init__(self, cfg: RunConfig, steps: int | None = None, deadline: float | None = None,
                 scope: str = "the run") -> None:
        self.cfg = cfg
        self.granted = cfg.max_steps if steps is None else max(steps, 0)
        self.remaining = self.granted  # steps not yet handed out
        self.slice = 0
        self.counter: list[int] = [0, 0]  # [steps left in this slice, call depth]
        self.start = time.monotonic()
        self.deadline = self.start + cfg.timeout_s if deadline is None else deadline
        self.scope = scope
        self.output = 0
        self.work = 0  # elements worked through by builtins since the clock was last read
        #: > 0 while a host operation runs (it honours the deadline itself; the runner's
        #: watchdog does not interrupt it, so no child process is left untracked)
        self.shielded = 0
        self.guard = threading.Lock()  # held while a host operation is entered or the watchdog decides
        self.refill()

    def refill(self) -> None:
        self.slice = min(SLICE, self.remaining)
        self.remaining -= self.slice
        self.counter[0] = self.slice

    def overtime(self) -> str:
        """The detail of this run's R0010: ``the run took longer than 2 s``."""
        return f"{self.scope} took longer than {self.cfg.timeout_s:g} s"

    def checkpoint(self, span: Span | None) -> None:
        """Called when the slice is used up.

        Raises:
            VoxFault: R0006 when the budget is spent, R0010 past the deadline.
        """
        if time.monotonic() > self.deadline:
            raise VoxFault("R0010", span, detail=self.overtime())
        if self.remaining <= 0:
            where = "" if self.scope == "the run" else f" in {self.scope.removeprefix('the ')}"
            raise VoxFault("R0006", span, detail=f"more than {self.cfg.max_steps} steps (calls and loop "
                           f"iterations){where}")
        self.refill()

    def check_time(self, span: Span | None) -> None:
        """R0010 when past the deadline (for long single operations)."""
        if time.monotonic() > self.deadline:
            raise VoxFault("R0010", span, detail=self.overtime())

    def charge(self, n: int, span: Span | None) -> None:
        """A builtin worked through ``n`` elements or characters: read the clock once
        :data:`WORK_SLICE` of them have added up since the last read (R0010 past the deadline),
        so a loop of big operations stops near the limit, not :data:`SLICE` steps later."""
        self.work += n
        if self.work >= WORK_SLICE:
            self.work = 0
            self.check_time(span)

    def steps_used(self) -> int:
        """Steps used so far."""
        return self.granted - self.remaining - max(self.counter[0], 0)

    def time_left(self) -> float:
        """Seconds until the deadline (never negative)."""
        return max(0.0, self.deadline - time.monotonic())

    def too_long(self, n: int, what: str, span: Span | None) -> None:
        """R0006 when a value of ``n`` elements/characters would exceed ``max_len``."""
        if n > self.cfg.max_len:
            n = self.cfg.max_len
            raise VoxFault("R0006", span, message=SIZE_CAP_MESSAGE.format(what=what, n=n),
                           hint=SIZE_CAP_HINT.format(n=n))


class SharedLimits:
    """One step budget and one deadline for several runs: a module's ``@test`` functions when
    :attr:`RunConfig.tests_share_limits` is set (the deadline starts when this is made)."""

    def __init__(self, cfg: RunConfig) -> None:
        self.cfg = cfg
        self.steps = cfg.max_steps  # steps left to the runs not yet made
        self.deadline = time.monotonic() + cfg.timeout_s

    def budget(self) -> Budget:
        """The budget of the next run: the steps left and the common deadline."""
        return Budget(self.cfg, steps=self.steps, deadline=self.deadline, scope="the tests together")

    def spend(self, budget: Budget) -> None:
        """A run made by :meth:`budget` ended: take its steps from what is left."""
        self.steps -= budget.steps_used()


class RunState:
    """Everything one run shares: configuration, budget and the collected output."""

    def __init__(self, cfg: RunConfig, budget: Budget | None = None) -> None:
        self.cfg = cfg
        self.budget = budget or Budget(cfg)
        self.counter = self.budget.counter
        self.output: list[str] = []
        #: set when ``process.exit`` changed the status it was given (shown by ``vox run``)
        self.exit_note = ""
        #: the host processes ``std.process`` started; killed when the run ends (:meth:`end`)
        self.children = Children()

    def end(self) -> None:
        """The run is over: kill every process group it started (see
        :class:`~vox_lang.runtime.children.Children`). Idempotent; never raises."""
        self.children.kill_all()

    def print(self, text: str, span: Span | None) -> None:
        """Write one line of program output (R0006 once ``max_output`` characters are written)."""
        b = self.budget
        b.output += len(text) + 1
        if b.output > self.cfg.max_output:
            raise self.output_cap(span)
        self.output.append(text)
        if self.cfg.write is not None:
            self.cfg.write(text + "\n")

    def output_cap(self, span: Span | None) -> VoxFault:
        """The R0006 of a run past ``max_output``: its own message and hint, since ``--max-steps``
        does not move this cap."""
        n = self.cfg.max_output
        return VoxFault("R0006", span, message=OUTPUT_CAP_MESSAGE.format(n=n), hint=OUTPUT_CAP_HINT.format(n=n))

    def log(self, text: str, span: Span | None) -> None:
        """Write one ``std.log`` line to the log stream (stderr unless ``cfg.log``); it counts
        toward ``max_output`` like ``print`` (R0006 past it) but is not program output."""
        b = self.budget
        b.output += len(text) + 1
        if b.output > self.cfg.max_output:
            raise self.output_cap(span)
        (self.cfg.log or sys.stderr.write)(text + "\n")

    def granted(self, cap: str) -> bool:
        """True when the capability (``fs process net env``) was granted."""
        return cap in self.cfg.capabilities
