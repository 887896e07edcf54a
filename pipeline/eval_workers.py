"""The eval's second worker: the base model's gate-policy samples, drawn in another process.

The eval samples the adapter (unconstrained, then constrained) and then the base (under the gate
policy) one after the other. Constrained decoding spends most of a step in the masks' Python, on
one core (``cProfile`` of an eval batch of 96 rows on the default export: the forward pass 2.8 s,
the processors and sampler 4.2 s of 7.1 s), so on a small machine the second core idles. With
``eval.workers: 2`` :class:`BaseSampler` starts a ``spawn``-ed process (its own interpreter: no
fork of a process whose OpenMP pool already ran) that loads the base model and draws its samples
while the adapter's are drawn here; each process then uses half of ``VOX_TORCH_THREADS``.

The child's result is the same as sampling in this process would give (the same generator,
tasks, presentation and seed); a child that fails or dies leaves a warning and the parent samples
the base itself, so the eval never depends on the second process.
"""

from __future__ import annotations

import logging
import multiprocessing as mp
import os
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BaseSamples:
    """The base model's samples under ``policy`` (as :func:`pipeline.evaluate.sample_and_score`
    returns them) and the constrained generator's counters (``None`` when unconstrained)."""

    policy: str
    texts: list[list[str]]
    scores: list[Any]
    seconds: float
    counters: dict[str, Any] = field(default_factory=dict)


def threads_per_worker(workers: int) -> int:
    """Torch threads for each of ``workers`` processes: ``VOX_TORCH_THREADS`` (default 2)
    shared out, at least one."""
    return max(1, int(os.environ.get("VOX_TORCH_THREADS", "2")) // max(1, workers))


def _draw(conn: Any, base_model: str, config: Any, device: str, tasks: list[Any], mode: str, threads: int) -> None:
    """Child process: build the base's generators, sample under the gate policy, send the
    :class:`BaseSamples` (or the exception) through ``conn``."""
    try:
        import torch

        from pipeline.eval_policies import model_generators
        from pipeline.evaluate import constrained_counters, sample_and_score

        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s", datefmt="%H:%M:%S")
        torch.set_num_threads(threads)
        plain, constrained = model_generators(base_model, None, config, device)
        policy, gen = ("constrained", constrained) if constrained is not None else ("unconstrained", plain)
        texts, scores, seconds = sample_and_score(gen, tasks, config, mode, None, f"base, {policy} (worker)")
        counters = constrained_counters(gen, config) if constrained is not None else {}
        conn.send(BaseSamples(policy, texts, scores, seconds, counters))
    except BaseException as exc:  # noqa: BLE001 - handed to the parent, which falls back
        conn.send(exc)
    finally:
        conn.close()


class BaseSampler:
    """The base's gate-policy samples, drawn in a spawned process from construction on.

    Args:
        base_model: the base model's id or directory (the ``qlora_adapter`` result's ``base_model``).
        config: the eval recipe section (:class:`pipeline.evaluate.EvalConfig`).
        device: resolved device.
        tasks, mode: the tasks and the system-prompt presentation, as for the adapter.
        threads: torch threads of the child (:func:`threads_per_worker`).

    Use as a context manager: leaving it stops a child still running (an error in the parent).
    """

    def __init__(self, base_model: str, config: Any, device: str, tasks: list[Any], mode: str, threads: int) -> None:
        ctx = mp.get_context("spawn")
        self._conn, child = ctx.Pipe(duplex=False)
        self._process = ctx.Process(target=_draw, args=(child, base_model, config, device, tasks, mode, threads),
                                    name="vox-eval-base", daemon=True)
        self._process.start()
        child.close()  # the child holds the only writer: its death ends recv() with EOFError

    def result(self, policy: str) -> BaseSamples | None:
        """The child's samples when it drew them under ``policy``; ``None`` (logged) when it
        failed, died, or drew another policy: the caller samples the base itself."""
        try:
            got = self._conn.recv()
        except (EOFError, OSError) as exc:
            log.warning("eval: the base worker ended without a result (%s); sampling the base here",
                        type(exc).__name__)
            return None
        finally:
            self._process.join(timeout=30)
        if isinstance(got, BaseException):
            log.warning("eval: the base worker failed (%s: %s); sampling the base here", type(got).__name__, got)
            return None
        if got.policy != policy:
            log.warning("eval: the base worker drew %s samples, the gate needs %s; sampling the base here",
                        got.policy, policy)
            return None
        return got

    def close(self) -> None:
        """Stop the child if it still runs."""
        if self._process.is_alive():
            self._process.terminate()
            self._process.join(timeout=10)
        self._conn.close()

    def __enter__(self) -> BaseSampler:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
