"""Grammar-constrained decoding for Vox with llguidance, as a ``transformers`` LogitsProcessor.

:class:`VoxGrammar` wraps one tokenizer (``llguidance.hf.from_tokenizer``, built once) and the
compiled constraint grammar (:func:`vox_lang.constraint.constraint_grammar`). Each generation gets
a :class:`GrammarProcessor` holding one ``LLMatcher`` per sequence: before every step it feeds
the matcher the token sampled last and masks every token the grammar does not allow next. Inside
a ```vox block the block therefore stays a prefix of a syntactically valid program; prose outside
the fence is free (``code`` mode: one block only; ``first``: the answer opens with its block,
chosen per conversation by :func:`answer_mode`).

The processor also keeps each block in the canonical layout of :mod:`pipeline.decoding_layout`
(at most one blank line in a row, comments capped in length): tokens must pass both masks, and
where the layout would leave nothing the grammar mask alone applies.

Nothing here may hang or crash a request: a tokenizer llguidance cannot read, a grammar that
does not compile, or a dead end (no allowed token) turns the constraint off for that sequence,
records why in :attr:`GrammarProcessor.events` and logs a warning; decoding goes on unconstrained.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from transformers import LogitsProcessor

from pipeline.decoding_layout import MAX_IDLE_LINES, LayoutState, LayoutTable
from pipeline.decoding_logits import mask_rows
from pipeline.decoding_request import user_texts
from pipeline.devices import usable_cores
from pipeline.errors import PipelineError

log = logging.getLogger(__name__)

#: llguidance log level: 0 silent (its warnings would go to stderr on every matcher)
_LOG_LEVEL: Final = 0


class ConstraintUnavailable(PipelineError):
    """The constraint cannot be used with this tokenizer or grammar (the message says why)."""


@dataclass
class ConstraintReport:
    """What the constraint did for one generation (shown in responses and logs).

    Attributes:
        enabled: the constraint was applied from the first token.
        events: one line per fallback (``"row 0: dead end after 57 tokens; unconstrained from here"``).
    """

    enabled: bool = True
    events: list[str] = field(default_factory=list)

    @property
    def fell_back(self) -> bool:
        """True when any sequence finished (partly) unconstrained."""
        return not self.enabled or bool(self.events)


class VoxGrammar:
    """The compiled Vox constraint for one tokenizer (build once per model; thread-safe to share).

    Args:
        tokenizer: a Hugging Face *fast* tokenizer.
        eos_ids: ids that end a completion (allowed whenever the grammar accepts).
        vocab_size: width of the model's logits (may exceed the tokenizer's size).
        layout: keep blocks in the canonical layout (:mod:`pipeline.decoding_layout`).

    Raises:
        ConstraintUnavailable: llguidance is missing, cannot read the tokenizer, or the grammar
            does not compile.
    """

    def __init__(self, tokenizer: Any, eos_ids: Iterable[int], vocab_size: int | None = None,
                 layout: bool = True) -> None:
        try:
            import llguidance
            import llguidance.hf
        except ImportError as exc:  # pragma: no cover - llguidance is a declared dependency
            raise ConstraintUnavailable(f"llguidance is not installed: {exc}") from exc
        from vox_lang.constraint import MODES, constraint_grammar

        eos = sorted(set(eos_ids))
        self.eos: tuple[int, ...] = tuple(eos)
        try:
            self.lltok = llguidance.hf.from_tokenizer(tokenizer, n_vocab=vocab_size, eos_token=eos or None)
        except Exception as exc:  # noqa: BLE001 - llguidance/tokenizers raise assorted types
            raise ConstraintUnavailable(f"llguidance cannot read this tokenizer: {exc}") from exc
        self.vocab_size = int(vocab_size or self.lltok.vocab_size)
        self._llg = llguidance
        self.grammars: dict[str, str] = {}
        for mode in MODES:
            grammar = llguidance.LLMatcher.grammar_from_lark(constraint_grammar(mode))
            is_error, messages = llguidance.LLMatcher.validate_grammar_with_warnings(grammar, self.lltok)
            if is_error:
                raise ConstraintUnavailable(f"the Vox constraint grammar ({mode}) does not compile: {messages[0]}")
            self.grammars[mode] = grammar
        self._lock = threading.Lock()
        self._pristine: dict[str, Any] = {}  # one fresh matcher per mode, deep-copied per sequence
        self.executor = llguidance.LLExecutor(num_threads=usable_cores())
        self.layout: LayoutTable | None = None
        if layout:
            size = len(tokenizer)
            self.layout = LayoutTable.build([tokenizer.decode([i]) if i < size else "" for i in range(self.vocab_size)])

    @property
    def words(self) -> int:
        """int32 words per row of llguidance's bitmask (32 token ids each)."""
        return (self.lltok.vocab_size + 31) // 32

    def matcher(self, mode: str = "response") -> Any:
        """A fresh ``LLMatcher`` for ``mode`` (``response``, ``code`` or ``program``).

        Raises:
            ConstraintUnavailable: the matcher could not be built.
        """
        with self._lock:
            m = self._pristine.get(mode)
            if m is None:
                m = self._llg.LLMatcher(self.lltok, self.grammars[mode], log_level=_LOG_LEVEL)
                if m.is_error():
                    raise ConstraintUnavailable(f"cannot start the Vox constraint: {m.get_error()}")
                self._pristine[mode] = m
            return m.deep_copy()  # ~16 ms to build a matcher from the grammar, microseconds to copy one

    def processor(self, rows: int, prompt_len: int, mode: str | Sequence[str] = "response") -> GrammarProcessor:
        """A processor for a batch of ``rows`` sequences whose (padded) prompts are ``prompt_len`` long."""
        return GrammarProcessor(self, rows, prompt_len, mode)


#: rows from which :func:`allowed_masks` uses llguidance's thread pool (a few rows are not worth
#: the hand-off; the eval's batches of 96 are)
PARALLEL_ROWS: Final = 8


def allowed_masks(grammar: VoxGrammar, matchers: Sequence[Any], vocab_size: int, buffer: Any = None) -> Any:
    """Bool tensor ``[len(matchers), vocab_size]``: the tokens each matcher allows next.

    ``buffer``: an int32 numpy array of at least ``[len(matchers), words]`` to write the bitmask
    into (reused from step to step by :class:`GrammarProcessor`); by default a new one.

    The masks go into one int32 bitmask (32 token ids per word, llguidance's layout, bits little
    endian), unpacked in one vectorized step (numpy: a few microseconds where torch's per-op
    dispatch would dominate a single row); ids past the tokenizer's vocabulary (padding of the
    logits) are never allowed. From :data:`PARALLEL_ROWS` rows on the masks are computed on
    llguidance's thread pool (``LLExecutor``: Rust threads, outside the GIL), below it in the
    calling thread. The raw pointer calls are the ones ``llguidance.torch`` wraps; that module is
    not imported because it pulls in ``torch._dynamo`` (1.7 s at a process's first constrained
    request).
    """
    import numpy as np
    import torch

    rows = len(matchers)
    words = grammar.words
    if buffer is None or buffer.shape[0] < rows or buffer.shape[1] != words:
        buffer = np.empty((rows, words), dtype=np.int32)
    bitmask = buffer[:rows]  # llguidance writes every word of each row's mask
    if rows >= PARALLEL_ROWS:
        grammar.executor.unsafe_compute_mask_ptr([(m, i) for i, m in enumerate(matchers)], bitmask.ctypes.data,
                                                 words * 4, rows)
    else:
        address = bitmask.ctypes.data
        for i, m in enumerate(matchers):
            m.unsafe_compute_mask_ptr(address + i * words * 4, words * 4)
    bits = np.unpackbits(bitmask.view(np.uint8), axis=1, bitorder="little").view(np.bool_)
    if vocab_size <= bits.shape[1]:
        return torch.from_numpy(bits[:, :vocab_size])  # a view: no copy
    out = np.zeros((rows, vocab_size), dtype=np.bool_)
    out[:, :bits.shape[1]] = bits
    return torch.from_numpy(out)


class GrammarProcessor(LogitsProcessor):
    """Masks each sequence's logits to what the Vox constraint allows next.

    Row ``i`` of the batch has its own matcher. The processor sees ``input_ids`` (prompt +
    generated so far); from the second call on it feeds each matcher the row's last token. A row
    whose matcher errs or has no allowed token is left unconstrained from then on (recorded in
    :attr:`report`). Rows that ended (EOS accepted, or stopped by a criterion and padded) are not
    masked. A row whose block has stalled (:data:`pipeline.decoding_layout.MAX_IDLE_LINES` lines
    in a row without code) may only end (EOS): it is added to :attr:`stalled`, which the name
    mask reads to leave it alone, and recorded in :attr:`report`; its block stays open, as one
    the token limit cut. The rows' masks are computed together (:func:`allowed_masks`) and applied to the
    batch's logits in one step.
    """

    def __init__(self, grammar: VoxGrammar, rows: int, prompt_len: int,
                 mode: str | Sequence[str] = "response") -> None:
        modes = [mode] * rows if isinstance(mode, str) else list(mode)
        if len(modes) != rows:
            raise ValueError(f"{len(modes)} modes for {rows} rows")
        self.grammar, self.prompt_len, self.modes = grammar, prompt_len, modes
        self.report = ConstraintReport()
        self.stalled: set[int] = set()  # rows that may only end (read by the name mask)
        self.matchers: list[Any | None] = []
        self._bits: Any = None  # the int32 bitmask buffer of allowed_masks, reused step to step
        table = grammar.layout
        self.layouts: list[LayoutState | None] = [
            LayoutState(table, in_block=m == "program") if table is not None else None for m in modes]
        for row in range(rows):
            try:
                self.matchers.append(grammar.matcher(modes[row]))
            except ConstraintUnavailable as exc:
                self._drop_all(str(exc))
                break

    def _drop_all(self, why: str) -> None:
        self.report.enabled = False
        self.report.events.append(why)
        log.warning("Vox constraint off for this request: %s", why)
        self.matchers = []

    def _drop(self, row: int, why: str) -> None:
        self.matchers[row] = None
        line = f"row {row}: {why}; unconstrained from here"
        self.report.events.append(line)
        log.warning("Vox constraint: %s", line)

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import numpy as np

        if not self.matchers:
            return scores
        generated = input_ids.shape[1] - self.prompt_len
        live: list[int] = []
        last = input_ids[:, -1].tolist() if generated > 0 else []
        for row in range(min(len(self.matchers), scores.shape[0])):
            m = self.matchers[row]
            if m is None:
                continue
            if generated > 0:
                token = int(last[row])
                if m.is_stopped():  # EOS was accepted earlier: the row is padding now
                    continue
                if not m.consume_token(token):
                    # a criterion may have ended the row (then padding arrives here) or the
                    # sampler picked a masked token (cannot happen); either way stop masking
                    self.matchers[row] = None
                    continue
                if m.is_stopped() and token in self.grammar.eos:
                    continue  # ended: padding from here
                # stopped on another token (code mode: the block closed): the mask allows only EOS
                layout = self.layouts[row]
                if layout is not None:
                    layout.feed(token)
            live.append(row)
        if not live:
            return scores
        width = scores.shape[1]
        if self._bits is None:
            self._bits = np.empty((len(self.matchers), self.grammar.words), dtype=np.int32)
        masks = allowed_masks(self.grammar, [self.matchers[r] for r in live], width, self._bits).numpy()  # a view
        dead = ~masks.any(axis=1)
        keep: list[int] = []
        for k, row in enumerate(live):  # numpy per row: microseconds, where torch ops cost tens
            if dead[k]:
                self._drop(row, f"dead end after {generated} tokens (no token allowed)")
                continue
            keep.append(k)
            layout = self.layouts[row]
            if layout is not None and layout.idle_lines >= MAX_IDLE_LINES and self.grammar.eos:
                if row not in self.stalled:
                    self.stalled.add(row)
                    self.report.events.append(f"row {row}: {layout.idle_lines} lines without code; the answer ends")
                masks[k] = False
                masks[k][[i for i in self.grammar.eos if i < width]] = True
                continue
            cap = layout.mask(width) if layout is not None else None
            if cap is not None:
                both = masks[k] & cap
                if both.any():  # else: the grammar mask alone (never a dead end)
                    masks[k] = both
        if keep:
            mask_rows(scores, [live[k] for k in keep], [masks[k] for k in keep])
        return scores


def batch_processors(grammar: VoxGrammar | None, mode: str = "response", tokenizer: Any = None,
                     names: bool = False, require: bool = False, budget: int | None = None) -> Any:
    """A ``f(prompt_len, conversations, n) -> [processor, ...]`` factory for
    :class:`pipeline.decoding.HFGenerator`: the grammar, then (``names``/``require``) the
    name- and request-aware mask of :mod:`pipeline.decoding_names` (``tokenizer`` needed), with
    the stop-when-done rule read from each request and the budget rule for ``budget``
    (``max_new_tokens``; :mod:`pipeline.decoding_done`)."""
    from pipeline.decoding_names import request_text, token_table

    table = token_table(tokenizer) if (names or require) and tokenizer is not None else None
    eos = sorted(grammar.eos) if grammar is not None else []

    def make(prompt_len: int, conversations: Sequence[Any], n: int) -> list[Any]:
        out: list[Any] = []
        if grammar is not None:
            modes = [answer_mode(c, mode) for c in conversations for _ in range(n)]
            out.append(grammar.processor(len(conversations) * n, prompt_len, modes))
        if table is not None:
            out.append(name_mask([request_text(c) for c in conversations for _ in range(n)], tokenizer, table,
                                 prompt_len, eos, names=names, require=require, budget=budget,
                                 ended=out[0].stalled if out else None))
        return out

    return make


def name_mask(requests: Sequence[str], tokenizer: Any, table: Any, prompt_len: int, eos: Sequence[int], *,
              names: bool = True, require: bool = True, budget: int | None = None,
              ended: set[int] | None = None) -> Any:
    """The name- and request-aware mask (:class:`pipeline.decoding_names.NameMask`) for a batch
    whose row ``i`` answers the user request text ``requests[i]``: what it names
    (:func:`vox_lang.pasted.asked_items`: backticked items, and those of code pasted to be fixed),
    what else it asks for (the stop-when-done rule,
    :func:`pipeline.decoding_done.request_extras`) and the budget rule for ``budget``
    (``max_new_tokens``); ``ended``: rows the grammar processor ends (its ``stalled``), left
    unmasked. The one constructor for evaluation and ``vox serve``."""
    from pipeline.decoding_done import request_extras
    from pipeline.decoding_names import NameMask
    from vox_lang.pasted import asked_items

    return NameMask(tokenizer, table, [asked_items(r) for r in requests], prompt_len, eos, names=names,
                    require=require, extras=[request_extras(r) for r in requests], budget=budget, ended=ended)


def answer_mode(messages: Sequence[Any], mode: str = "response") -> str:
    """The constraint mode for answering ``messages``: ``mode`` itself unless it is ``response``
    and the last user message names an item to write (:func:`vox_lang.pasted.asked_items`),
    then ``first``: the answer opens with its ```vox block (the system prompt's contract: "put the
    whole program in one fenced block ..."; prose after it stays free). A repair turn, whose last
    user message holds diagnostics, keeps ``response`` ("name the fault in one sentence, then give
    the whole fixed program"). Measured on the default eval: 49 of 408 constrained adapter answers
    opened with unfenced code, which the grammar then never constrained."""
    from vox_lang.pasted import asked_items

    if mode != "response":
        return mode
    users = user_texts(messages)
    return "first" if users and asked_items(users[-1]) else "response"
