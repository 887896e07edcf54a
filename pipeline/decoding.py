"""The one decoder: every completion, in evaluation and in ``vox serve``, comes from here.

Generation is the library's ``model.generate``; what we add plugs into it: ``LogitsProcessor``
objects for constraints (:mod:`pipeline.decoding_constraint`), ``StoppingCriteria`` for
cancellation and first-block-closed (:mod:`pipeline.decoding_criteria`), and a streamer that hands
token ids to the caller as they are sampled (:func:`generate_rows`: ``n`` choices of one prompt in
one batch, used by the server; :func:`generate_ids`: one sequence). Evaluation's batch path
(``generate_texts``, ``HFGenerator``) lives in :mod:`pipeline.decoding_batch` and is re-exported
here. Prompts are encoded with contents as plain text (:func:`encode_chat`). The stop set is the
union of every EOS id the model declares (:func:`eos_ids`). The load-time cache self-check lives in
:mod:`pipeline.decoding_cache`. torch/transformers are imported inside functions where possible.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Generator, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from pipeline.decoding_cache import FULL_FORWARD_MODEL_TYPES, cache_is_consistent
from pipeline.decoding_criteria import EventStop, FirstBlockClosed, RecordLogits, RowsStop, first_block_closed
from pipeline.decoding_prompt import encode_chat, encode_text
from pipeline.devices import DEVICE_KINDS, device_kind
from pipeline.errors import DecodingError

if TYPE_CHECKING:  # re-exported lazily (see __getattr__): decoding_batch imports this module
    from pipeline.decoding_batch import HFGenerator, generate_texts

#: temperatures below this decode greedily (logits / 1e-40 overflow float32 to inf -> NaN probs)
MIN_SAMPLING_TEMPERATURE: Final = 1e-4
#: seeds the sampler's RNG takes: torch.Generator.manual_seed reads a signed or unsigned 64-bit int
SEED_MIN: Final = -(2**63)
SEED_MAX: Final = 2**64 - 1

__all__ = [
    "FULL_FORWARD_MODEL_TYPES", "SEED_MAX", "SEED_MIN", "DecodingError", "FirstBlockClosed", "HFGenerator",
    "SamplingParamError", "SamplingParams",
    "cache_is_consistent", "encode_chat", "encode_text", "eos_ids", "first_block_closed", "generate_ids",
    "generate_rows", "generate_texts", "load_model", "pick_device",
]


_BATCH_NAMES: Final = frozenset({"HFGenerator", "generate_texts"})


def __getattr__(name: str) -> Any:
    """``HFGenerator`` and ``generate_texts`` from :mod:`pipeline.decoding_batch` (imported on first
    use, since that module imports this one)."""
    if name in _BATCH_NAMES:
        from pipeline import decoding_batch

        return getattr(decoding_batch, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class SamplingParamError(DecodingError, ValueError):
    """A :class:`SamplingParams` field outside its range; ``field`` names it (so a server can name
    the request parameter at fault). A ``ValueError`` too, as a bad argument is."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True, slots=True)
class SamplingParams:
    """How to pick tokens.

    Attributes:
        max_new_tokens: hard cap on generated tokens (≥ 1), EOS included.
        temperature: 0 means greedy (argmax); > 0 divides the logits before sampling.
        top_p: nucleus sampling mass in (0, 1]; 1 disables it. Ignored when greedy.
        stop: strings that end generation; the text is cut before the first one found.
        seed: seed for the sampler's RNG (``None``: nondeterministic).
    """

    max_new_tokens: int = 256
    temperature: float = 0.0
    top_p: float = 1.0
    stop: tuple[str, ...] = ()
    seed: int | None = None

    def __post_init__(self) -> None:
        if self.max_new_tokens < 1:
            raise SamplingParamError("max_new_tokens", f"max_new_tokens must be >= 1, got {self.max_new_tokens}")
        if not 0.0 <= self.temperature <= 2.0:
            raise SamplingParamError("temperature", f"temperature must be in [0, 2], got {self.temperature}")
        if not 0.0 < self.top_p <= 1.0:
            raise SamplingParamError("top_p", f"top_p must be in (0, 1], got {self.top_p}")
        stops: tuple[object, ...] = self.stop  # callers may pass anything at run time
        if not all(isinstance(s, str) and s for s in stops):
            raise SamplingParamError("stop", f"stop strings must be non-empty strings, got {self.stop!r}")
        if self.seed is not None and not SEED_MIN <= self.seed <= SEED_MAX:
            raise SamplingParamError("seed", f"seed must be a 64-bit integer ({SEED_MIN} to {SEED_MAX}), "
                                             f"got {self.seed}")

    @property
    def greedy(self) -> bool:
        """True when tokens are picked by argmax (temperature 0, or so close to 0 that dividing
        float32 logits by it would overflow: sampling would be argmax anyway)."""
        return self.temperature < MIN_SAMPLING_TEMPERATURE


def pick_device(preferred: str | None = None) -> str:
    """Choose ``"cuda"``, ``"mps"`` or ``"cpu"``: ``preferred`` if available, else the best present.

    Args:
        preferred: ``None`` or ``"auto"`` (best present), or a device such as ``"cuda:1"`` (an
            empty string is no device: ``--device ""`` is a mistake, not a request for the default).

    Raises:
        DecodingError: ``preferred`` is unknown or names a device this machine does not have.
    """
    kind = device_kind(preferred)  # an unknown name is refused before torch is imported
    import torch

    mps = getattr(torch.backends, "mps", None)
    available = {"cuda": torch.cuda.is_available(), "mps": bool(mps is not None and mps.is_available()), "cpu": True}
    if kind is not None and preferred is not None:  # kind is None when preferred is
        if not available[kind]:
            raise DecodingError(f"device {preferred!r} is not available on this machine")
        return preferred
    return next(name for name in DEVICE_KINDS if available[name])


def _ids(value: Any) -> list[int]:
    if value is None:
        return []
    if isinstance(value, int) and not isinstance(value, bool):
        return [value]
    return [int(v) for v in value]


def eos_ids(model: Any, tokenizer: Any, extra: Iterable[int] = ()) -> tuple[int, ...]:
    """Every id that ends a completion: the union of the generation config's, the model config's
    (and its text config's), the tokenizer's EOS and ``extra`` (e.g. ids read from the model
    directory's JSON files), sorted. Stopping on one of them only was issue 14 item 12."""
    ids = set(_ids(getattr(getattr(model, "generation_config", None), "eos_token_id", None)))
    config = getattr(model, "config", None)
    ids.update(_ids(getattr(config, "eos_token_id", None)))
    text_config = config.get_text_config() if config is not None and hasattr(config, "get_text_config") else None
    ids.update(_ids(getattr(text_config, "eos_token_id", None)))
    ids.update(_ids(getattr(tokenizer, "eos_token_id", None)))
    ids.update(int(i) for i in extra)
    return tuple(sorted(ids))


def _device(model: Any) -> Any:
    return next(model.parameters()).device


def _generation_config(params: SamplingParams, eos: Sequence[int], pad: int, use_cache: bool, n: int) -> Any:
    """A fully specified ``GenerationConfig`` (the model's own sampling defaults never leak in:
    ``top_k`` would default to 50, a checkpoint's repetition penalty would apply silently).
    ``top_p`` is 1 here: the nucleus is cut by :func:`sampling_processors` (no vocabulary sort)."""
    from transformers import GenerationConfig

    sample = not params.greedy
    return GenerationConfig(
        max_new_tokens=params.max_new_tokens, do_sample=sample, num_beams=1, num_return_sequences=n,
        temperature=params.temperature if sample else 1.0, top_p=1.0,
        top_k=0 if sample else None,  # greedy: unused (setting it only draws a warning)
        min_p=None, typical_p=1.0, repetition_penalty=1.0, no_repeat_ngram_size=0,
        eos_token_id=list(eos), pad_token_id=pad, use_cache=use_cache,  # [] (not None): no EOS at all
    )


def sampling_processors(params: SamplingParams) -> list[Any]:
    """The processors that carry ``params``' sampling rules besides the generation config, to be
    run after every other one: the top-p nucleus (:class:`pipeline.decoding_nucleus.Nucleus`)
    when sampling with ``top_p`` < 1, else none."""
    from pipeline.decoding_nucleus import Nucleus

    if params.greedy or params.top_p >= 1.0:
        return []
    return [Nucleus(params.top_p, params.temperature)]


def _seed(params: SamplingParams) -> None:
    import torch

    if params.greedy:
        return
    if params.seed is None:
        torch.seed()
    else:
        torch.manual_seed(params.seed % 2**64)


class _IdStreamer:
    """A ``generate`` streamer that queues each step's token ids, one per row (the first ``put``
    is the prompt), after handing them to ``hooks`` (each step's first reader: the library calls
    ``put`` as soon as the step's tokens are sampled, before its stopping criteria)."""

    def __init__(self, sink: queue.Queue[Any], hooks: Sequence[Callable[[list[int]], None]] = ()) -> None:
        self.sink, self.hooks, self._prompt_seen = sink, hooks, False

    def put(self, value: Any) -> None:
        if not self._prompt_seen:
            self._prompt_seen = True
            return
        tokens = [int(t) for t in value.reshape(-1).tolist()]
        for hook in self.hooks:
            hook(tokens)
        self.sink.put(tokens)

    def end(self) -> None:
        pass


_DONE: Final = object()


def generate_ids(
    model: Any,
    prompt_ids: list[int],
    params: SamplingParams,
    eos_ids: Iterable[int] = (),
    *,
    use_cache: bool = True,
    on_logits: Callable[[Any], None] | None = None,
    processors: Sequence[Any] = (),
    cancel: threading.Event | None = None,
    pad_id: int | None = None,
) -> Generator[int, None, None]:
    """Generate token ids after ``prompt_ids`` with ``model.generate``, yielding each as sampled.

    One sequence of :func:`generate_rows` (arguments as there); the EOS id itself is yielded last.

    Raises:
        ValueError: empty prompt. Errors inside ``generate`` are re-raised here.
    """
    rows = generate_rows(model, prompt_ids, params, eos_ids, use_cache=use_cache, on_logits=on_logits,
                         processors=processors, cancel=cancel, pad_id=pad_id)
    try:
        for step in rows:
            yield step[0]
    finally:
        rows.close()


def generate_rows(
    model: Any,
    prompt_ids: list[int],
    params: SamplingParams,
    eos_ids: Iterable[int] = (),
    *,
    n: int = 1,
    use_cache: bool = True,
    on_logits: Callable[[Any], None] | None = None,
    processors: Sequence[Any] = (),
    cancel: threading.Event | None = None,
    stopped: set[int] | None = None,
    pad_id: int | None = None,
) -> Generator[list[int], None, None]:
    """Generate ``n`` sequences after one prompt in one batched ``model.generate`` call, yielding
    each step's ``n`` token ids (row ``i`` is choice ``i``) as they are sampled.

    ``generate`` runs on a worker thread and streams ids through a queue; closing this generator
    (or setting ``cancel``) stops it after the current step and waits for the thread. A row that
    sampled an EOS id, or that the caller added to ``stopped``, is finished: the library pads it
    from then on (its later ids are padding, not output); the call ends when every row finished
    or after ``params.max_new_tokens`` steps. The prompt is repeated ``n`` times (not
    ``num_return_sequences``, which the library refuses for greedy decoding), so greedy choices
    are identical and sampled ones independent draws from one seeded RNG.

    Args:
        model: causal LM in eval mode on its device.
        prompt_ids: the encoded prompt (non-empty).
        params: sampling parameters (``max_new_tokens`` caps the steps; ``stop`` is the caller's
            to apply on text, marking the row in ``stopped``).
        eos_ids: any of these ends a row.
        n: sequences (choices), ≥ 1.
        use_cache: library cache (fast) or full-sequence forward every step (see
            :func:`cache_is_consistent`).
        on_logits: called with each step's raw logits of row 0 (``[vocab]``, float32).
        processors: extra ``LogitsProcessor`` objects (constraints, built for ``n`` rows),
            applied after ``on_logits``. One with a ``sampled(tokens)`` method has it called with
            each step's ``n`` ids as soon as they are sampled, and one with ``close()`` has it
            called once generation ended (:class:`pipeline.decoding_remote.RemoteMasks`).
        cancel: stop every row when set (checked after every step).
        stopped: rows the caller finished (read by a stopping criterion after every step).
        pad_id: padding id for ``generate`` (default: the first EOS id, else 0).

    Yields:
        Lists of ``n`` token ids, one list per step.

    Raises:
        ValueError: empty prompt or ``n`` < 1. Errors inside ``generate`` are re-raised here.
    """
    import torch
    from transformers import LogitsProcessorList, StoppingCriteriaList

    if not prompt_ids:
        raise ValueError("prompt_ids must not be empty")
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    stops = set(eos_ids)
    done_rows = stopped if stopped is not None else set()
    stop_event = threading.Event()
    hooks = [p.sampled for p in processors if hasattr(p, "sampled")]
    criteria = StoppingCriteriaList([EventStop(stop_event), RowsStop(done_rows)]
                                    + ([EventStop(cancel)] if cancel is not None else []))
    procs = LogitsProcessorList(([RecordLogits(on_logits)] if on_logits is not None else []) + list(processors)
                                + sampling_processors(params))
    pad = pad_id if pad_id is not None else (min(stops) if stops else 0)
    config = _generation_config(params, sorted(stops), pad, use_cache, 1)
    ids = torch.tensor([prompt_ids] * n, dtype=torch.long, device=_device(model))
    sink: queue.Queue[Any] = queue.Queue()

    def work() -> None:
        try:
            _seed(params)
            with torch.inference_mode():
                model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), generation_config=config,
                               logits_processor=procs, stopping_criteria=criteria, streamer=_IdStreamer(sink, hooks))
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer and re-raised there
            sink.put(exc)
        finally:
            sink.put(_DONE)

    thread = threading.Thread(target=work, name="vox-decode", daemon=True)
    thread.start()
    ended: set[int] = set()  # rows that yielded an EOS id
    try:
        count = 0
        while (item := sink.get()) is not _DONE:
            if isinstance(item, BaseException):
                raise item
            count += 1
            yield item
            ended.update(i for i, token in enumerate(item) if token in stops and i not in done_rows)
            if len(ended | done_rows) >= n or count >= params.max_new_tokens:
                break
    finally:
        stop_event.set()
        thread.join()
        for p in processors:
            if hasattr(p, "close"):
                p.close()


def load_model(base: str, adapter_dir: str | None = None, device: str = "cpu", merge: bool = True) -> tuple[Any, Any]:
    """Load ``(model, tokenizer)`` for evaluation: the 16-bit ``base`` plus ``adapter_dir`` if given.

    Args:
        base: HF id or directory of the base model.
        adapter_dir: a saved peft adapter (its tokenizer is used when present).
        device: resolved device (see :func:`pick_device`).
        merge: merge the adapter into the weights (faster generation); else keep a PeftModel.
    """
    from transformers import AutoTokenizer

    from pipeline.quant import load_16bit

    model = load_16bit(base, device)
    tokenizer = AutoTokenizer.from_pretrained(adapter_dir or base)
    if adapter_dir:
        from peft import PeftModel

        model = PeftModel.from_pretrained(model, adapter_dir)
        if merge:
            model = model.merge_and_unload()
    return model.eval(), tokenizer
