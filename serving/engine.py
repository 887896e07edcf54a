"""The local inference engine: one loaded model, chat messages in, text (streamed or whole) out.

``Engine.load(path)`` loads weights and tokenizer onto a device and decides whether decoding
steps through the library cache (:mod:`serving.model_load`). ``prepare()`` validates a request
(:mod:`serving.messages`) into a :class:`~serving.prepared.Prepared`; ``stream()`` /
``completions()`` present the messages (:func:`pipeline.chat_format.present`, the one presenter),
encode contents as plain text, decode the request's ``n`` choices in one batch through the one
decoder (:func:`pipeline.decoding.generate_rows`), stop each choice at any EOS id (the union of
every declared one) or stop string (:mod:`serving.choice_text`), and hold one lock per model so
concurrent callers are served one after another, never interleaved.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Final

from pipeline.chat_format import present
from pipeline.decoding import SamplingParamError, SamplingParams, encode_chat, eos_ids, generate_rows
from pipeline.decoding_constraint import ConstraintUnavailable, VoxGrammar, answer_mode
from pipeline.decoding_masks import MaskKit, MaskSpec, logit_rules, request_masks
from pipeline.decoding_names import request_spec, request_text
from pipeline.decoding_prose import asks_for_block
from pipeline.decoding_remote import MaskWorker, WorkerGone
from pipeline.decoding_retry import RETRIES
from serving.choice_text import ChoiceText
from serving.errors import RequestError
from serving.messages import plain_messages
from serving.model_dir import ModelDirInfo
from serving.model_load import load_model
from serving.prepared import Completion, Prepared, StreamEvent, constraint_summary, request_lines
from serving.verified import replay, verified_choices

log = logging.getLogger(__name__)

#: most choices (OpenAI ``n``) one request may ask for, by default. Source: 16 is the largest
#: ``vox chat --candidates`` (best-of-n) this project asks for; the batch holds n x context tokens
#: of KV cache (cpu-tiny: 4 KiB/token, 16 x 1024 tokens = 64 MiB; a 7B model with 32k context,
#: ~57 KiB/token in bf16: 16 x 32k = ~30 GiB, about what one 80 GB GPU has left beside the
#: weights). ``vox serve --max-n`` changes it.
MAX_CHOICES: Final = 16
#: most rounds of compiler-checked retries a request may ask for (``vox_retries``)
MAX_RETRIES: Final = 8


class Engine:
    """A loaded model ready to generate. Build with :meth:`load`; safe to share between threads.

    Attributes:
        info: what the model directory declares (id, EOS ids, system prompt mode...).
        device: the torch device string the model lives on.
        use_cache: whether decoding steps through the library cache (else full-sequence forward).
    """

    def __init__(self, model: Any, tokenizer: Any, info: ModelDirInfo, device: str, use_cache: bool) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.info = info
        self.device = device
        self.use_cache = use_cache
        # The union of generation_config.json, config.json and the tokenizer (issue 14 item 12).
        self.eos_ids = frozenset(eos_ids(model, tokenizer, info.eos_token_ids))
        self.masks: MaskKit | None = None
        self.grammar_error: str | None = None
        try:
            self.masks = MaskKit.build(tokenizer, self.eos_ids, int(model.config.get_text_config().vocab_size))
        except ConstraintUnavailable as exc:
            self.grammar_error = str(exc)
            log.warning("%s: Vox-constrained decoding unavailable, serving unconstrained: %s", info.path, exc)
        self.mask_worker: MaskWorker | None = None
        self._lock = threading.Lock()

    def start_mask_worker(self) -> str:
        """Build the Vox masks in a second process from now on (:mod:`pipeline.decoding_remote`:
        each step's mask is built while the forward pass runs). Returns one line for the startup
        message: where masks are built, and why not in the worker when it did not start (then
        they are built in process, as before)."""
        if self.masks is None:
            return "no Vox masks"
        if self.mask_worker is None:
            try:
                self.mask_worker = MaskWorker(self.tokenizer, self.masks.eos, self.masks.grammar.vocab_size)
            except WorkerGone as exc:
                log.warning("Vox masks are built in process: %s", exc)
                return f"Vox masks in process ({exc})"
        return "Vox masks in a second process"

    def close(self) -> None:
        """Stop the mask worker, if any (idempotent); the engine keeps serving with in-process masks."""
        if self.mask_worker is not None:
            self.mask_worker.close()
            self.mask_worker = None

    @property
    def grammar(self) -> VoxGrammar | None:
        """The compiled Vox constraint (``None``: unavailable for this tokenizer, see ``grammar_error``)."""
        return self.masks.grammar if self.masks is not None else None

    @property
    def model_id(self) -> str:
        """The served model id (``vox_mens.json["model_name"]`` or the directory name)."""
        return self.info.model_name

    @property
    def max_context(self) -> int:
        """Largest prompt + completion length in tokens (``max_position_embeddings``, else 32768)."""
        return self.info.max_context or 32768

    @property
    def busy(self) -> bool:
        """True while a generation holds the model."""
        return self._lock.locked()

    @classmethod
    def load(
        cls,
        path: str | Path,
        adapter: str | Path | None = None,
        *,
        device: str | None = None,
        dtype: Any = None,
        cache: str = "auto",
    ) -> Engine:
        """Load a model directory (or base + adapter) onto a device (:func:`serving.model_load.load_model`).

        Args:
            path: exported model directory, plain HF directory, or adapter directory.
            adapter: PEFT adapter directory applied on top of ``path`` and merged.
            device: ``"cuda"``, ``"cuda:1"``, ``"mps"``, ``"cpu"``; default: best available.
            dtype: torch dtype; default bfloat16/float16 on GPU, float32 on CPU.
            cache: ``"auto"`` (library cache unless the architecture is known-bad or fails the
                load-time parity probe), ``"on"`` or ``"off"`` (full-sequence forward).

        Raises:
            ModelLoadError: the directory is missing/incomplete or the weights do not load.
            UsageError: the requested device is unknown or not on this machine (a caller's
                mistake, which ``vox serve`` reports as a usage error).
            ServingError: ``cache`` is not one of its values.
        """
        loaded = load_model(path, adapter, device=device, dtype=dtype, cache=cache)
        return cls(loaded.model, loaded.tokenizer, loaded.info, loaded.device, loaded.use_cache)

    # -- requests ---------------------------------------------------------------------------

    def chat_messages(self, messages: Sequence[dict[str, Any]]) -> list[dict[str, str]]:
        """Validate OpenAI-style messages and present them as in training.

        :func:`pipeline.chat_format.present` under the model's ``system_prompt_mode``: ``"none"``
        drops system messages (training showed none); ``"ssot"`` replaces them by the SSOT system
        prompt the model was trained with.

        Raises:
            RequestError: empty list, a missing or unknown role, missing or null content (but on
                an assistant message with tool calls), non-text content, or no message left to
                answer besides system messages; each names the field (``messages[i].content``).
        """
        out = present(plain_messages(messages), self.info.system_prompt_mode)
        if not any(m["role"] != "system" for m in out):
            kept = "drops them" if self.info.system_prompt_mode == "none" else "replaces them by its own"
            raise RequestError(f"messages holds only system messages (this model {kept}): add a user message",
                               param="messages")
        return out

    def render(self, messages: Sequence[dict[str, Any]]) -> list[int]:
        """Token ids of the chat-templated prompt (with the assistant generation prompt).

        Message contents are encoded as text: a special-token string typed by a user (e.g.
        ``<|im_end|>``) never becomes a special id (issue 14 item 7).
        """
        return encode_chat(self.tokenizer, self.chat_messages(messages))

    def prepare(
        self,
        messages: Sequence[dict[str, Any]],
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        top_p: float | None = None,
        stop: Sequence[str] = (),
        seed: int | None = None,
        default_max_tokens: int = 512,
        vox_constrained: bool | None = None,
        code_only: bool = False,
        vox_names: bool | None = None,
        vox_retries: int | None = None,
        n: int = 1,
        max_n: int = MAX_CHOICES,
        stream: bool = False,
        max_tokens_param: str = "max_tokens",
    ) -> Prepared:
        """Render the prompt and check the parameters against the context window.

        ``vox_constrained`` (default on) masks tokens so every ```vox block stays a prefix of a
        valid program (``code_only``: the answer is one block and nothing else) and, unless
        ``vox_names`` is false, identifier uses to names that resolve and the block's end to after
        the items the request names (:mod:`pipeline.decoding_names`); a model whose
        tokenizer or grammar cannot be used is decoded unconstrained and the response says so.
        ``vox_retries`` (constrained only, 0 to :data:`MAX_RETRIES`) rounds of compiler-checked
        retries decode a choice again from its first faulty line (:mod:`pipeline.decoding_retry`);
        the default is :data:`pipeline.decoding_retry.RETRIES` for a whole answer and 0 for a
        ``stream`` (a retried answer is handed out only once it is checked, so its text would no
        longer arrive as it is sampled).
        ``max_tokens`` defaults to ``min(default_max_tokens, room left in the context)``; errors
        about it name ``max_tokens_param``, the request field that gave it (OpenAI's newer
        ``max_completion_tokens``, or ``max_tokens``);
        ``temperature`` and ``top_p`` default to the model's ``generation_config.json`` values,
        else to OpenAI's defaults (1.0 and 1.0). ``temperature=0`` is greedy decoding. ``n``
        choices (1 to ``max_n``, by default :data:`MAX_CHOICES`) are generated in one batch;
        greedy choices are identical.

        Raises:
            RequestError: bad messages or parameters, ``n`` outside ``[1, max_n]``, or prompt +
                ``max_tokens`` exceed the context window (code ``"context_length_exceeded"``).
        """
        if not 1 <= n <= max_n:
            raise RequestError(f"n must be between 1 and {max_n} (choices generated per request by this server),"
                               f" got {n}", param="n")
        prompt_ids = self.render(messages)
        room = self.max_context - len(prompt_ids)
        if room < 1:
            raise RequestError(
                f"the prompt is {len(prompt_ids)} tokens; this model's context is {self.max_context}",
                param="messages",
                code="context_length_exceeded",
            )
        if max_tokens is None:
            max_tokens = min(default_max_tokens, room)
        if max_tokens < 1:
            raise RequestError(f"{max_tokens_param} must be >= 1, got {max_tokens}", param=max_tokens_param)
        if max_tokens > room:
            raise RequestError(
                f"{max_tokens_param}={max_tokens} is too large: the prompt is {len(prompt_ids)} tokens and this"
                f" model's context is {self.max_context} (at most {room} new tokens)",
                param=max_tokens_param,
                code="context_length_exceeded",
            )
        if any(not text for text in stop):
            raise RequestError("stop strings must not be empty (an empty one would end every answer at once)",
                               param="stop")
        try:
            params = SamplingParams(
                max_new_tokens=max_tokens,
                temperature=_first(temperature, self.info.temperature, 1.0),
                top_p=_first(top_p, self.info.top_p, 1.0),
                stop=tuple(stop),
                seed=seed,
            )
        except SamplingParamError as exc:  # named as the request names it (OpenAI's error.param)
            field = max_tokens_param if exc.field == "max_new_tokens" else exc.field
            raise RequestError(str(exc), param=field) from exc
        wanted = vox_constrained is not False
        if code_only and not wanted:  # code-only answers are the constraint's `code` mode
            raise RequestError("vox_code_only needs the Vox constraint; drop \"vox_constrained\": false",
                               param="vox_code_only")
        if wanted and self.grammar is None:
            return Prepared(prompt_ids, params, None, f"unconstrained: {self.grammar_error}", n=n)
        mode = answer_mode(messages, "code" if code_only else "response") if wanted else None
        if vox_retries is not None and not 0 <= vox_retries <= MAX_RETRIES:
            raise RequestError(f"vox_retries must be between 0 and {MAX_RETRIES}, got {vox_retries}",
                               param="vox_retries")
        retries = (0 if stream else RETRIES) if vox_retries is None else vox_retries
        return Prepared(prompt_ids, params, mode, None, request_spec(messages), vox_names is not False, n,
                        request_text(messages), retries if mode is not None else 0,
                        block_asked=mode == "response" and asks_for_block(messages))

    def stream(self, prepared: Prepared, cancel: threading.Event | None = None) -> Iterator[StreamEvent]:
        """Generate the ``prepared.n`` choices of a request in one batch, yielding text as it
        becomes final (events of different choices interleave; ``index`` says whose).

        Waits for the model lock first (requests are served one at a time). Text is held back
        while it could still be the start of a stop string or ends in a partial UTF-8 character
        (:class:`~serving.choice_text.ChoiceText`); a choice that meets a stop string or EOS
        ends there (its last event comes at once) while the others go on. Every choice has its
        own constraint state (one matcher and name-mask row each). Setting ``cancel`` (or
        closing the iterator) stops generation after the current token; a request cancelled
        while it waited for the lock generates nothing. With ``prepared.retries`` (constrained
        requests), each choice's text comes once its compiler-checked retries are done
        (:meth:`_verified`).
        """
        params, n, prompt_len = prepared.params, prepared.n, len(prepared.prompt_ids)
        with self._lock:
            if cancel is not None and cancel.is_set():
                for i in range(n):
                    yield StreamEvent("", "cancelled", prompt_len, 0, index=i)
                return
            processors = self._processors(prepared)
            if prepared.retries and prepared.constraint is not None and self.grammar is not None:
                yield from self._verified(prepared, processors, cancel)
                return
            procs = processors(n)
            processor = procs[0] if procs else None
            choices = [ChoiceText(self.tokenizer, params.stop, self.eos_ids) for _ in range(n)]
            stopped: set[int] = set()  # choices finished by a stop string or EOS (read by the decoder)
            steps = generate_rows(
                self.model, prepared.prompt_ids, params, tuple(self.eos_ids), n=n, use_cache=self.use_cache,
                cancel=cancel, processors=procs, stopped=stopped,
            )
            try:
                for step in steps:
                    for i, token in enumerate(step[:n]):
                        choice = choices[i]
                        if choice.finish is not None:
                            continue  # padding after the choice ended
                        piece = choice.push(token)
                        if choice.finish is not None:
                            stopped.add(i)
                            yield self._last(prepared, choice, i, processor)
                        elif piece:
                            yield StreamEvent(piece, index=i)
                    if cancel is not None and cancel.is_set():
                        break
            finally:
                steps.close()
            cancelled = cancel is not None and cancel.is_set()
            for i, choice in enumerate(choices):
                if choice.finish is None:
                    choice.finish = "cancelled" if cancelled and choice.tokens < params.max_new_tokens else "length"
                    yield self._last(prepared, choice, i, processor)

    def _processors(self, prepared: Prepared) -> Callable[[int], list[Any]]:
        """``f(rows) -> [LogitsProcessor, ...]`` for ``prepared``'s constraint
        (:func:`pipeline.decoding_masks.request_masks`: the grammar processor first, whose report
        is each choice's constraint summary; built by the mask worker when one runs: its one
        processor carries the same report); none when unconstrained."""
        kit = self.masks
        if prepared.constraint is None or kit is None:
            return lambda rows: []
        spec = MaskSpec(prepared.constraint, len(prepared.prompt_ids), prepared.params.max_new_tokens,
                        prepared.names, prepared.request_text, prepared.block_asked)
        worker = self.mask_worker

        def make(rows: int) -> list[Any]:
            if worker is not None and worker.alive:
                try:
                    return [*worker.processors(spec, rows, prepared.prompt_ids), *logit_rules(kit, spec, rows)]
                except WorkerGone:
                    pass  # it died since: in process (logged once by the worker)
            return request_masks(kit, spec, rows)

        return make

    def _verified(self, prepared: Prepared, processors: Callable[[int], list[Any]],
                  cancel: threading.Event | None) -> Iterator[StreamEvent]:
        """The choices of a request with compiler-checked retries (:mod:`serving.verified`): each
        choice's text is handed out once its retries are done, in choice order."""
        built: list[Any] = []  # each pass's grammar processor

        def make(rows: int) -> list[Any]:
            procs: list[Any] = processors(rows)
            if procs:
                built.append(procs[0])
            return procs

        rows, retries = verified_choices(self.model, self.tokenizer, prepared.prompt_ids, prepared.params,
                                       sorted(self.eos_ids), make, prepared.n, prepared.retries,
                                       use_cache=self.use_cache, cancel=cancel, request=prepared.request)
        first: Any = built[0] if built else None  # the first pass's report: the choices' summaries
        for later in built[1:]:  # with what the retry passes saw of the whole request (a worker lost)
            first.report.events.extend(e for e in request_lines(later.report.events) if e not in first.report.events)
        yield from replay(prepared, rows, retries, self.tokenizer, self.eos_ids, first,
                          cancel is not None and cancel.is_set())

    @staticmethod
    def _last(prepared: Prepared, choice: ChoiceText, index: int, processor: Any) -> StreamEvent:
        """The last event of a finished choice: held-back text, finish reason, counts, constraint."""
        return StreamEvent(choice.rest(), choice.finish, len(prepared.prompt_ids), choice.tokens,
                           constraint_summary(prepared, processor, index), index)

    def completions(self, prepared: Prepared, cancel: threading.Event | None = None) -> list[Completion]:
        """Generate the whole ``prepared.n`` choices (blocking; ``cancel`` as in :meth:`stream`),
        in index order; ``seconds`` is the request's wall time."""
        start = time.perf_counter()
        parts: list[list[str]] = [[] for _ in range(prepared.n)]
        last: dict[int, StreamEvent] = {}
        for event in self.stream(prepared, cancel):
            parts[event.index].append(event.text)
            if event.finish_reason is not None:
                last[event.index] = event
        seconds = time.perf_counter() - start
        out = []
        for i in range(prepared.n):
            end = last.get(i, StreamEvent(""))
            out.append(Completion("".join(parts[i]), end.finish_reason or "length", end.prompt_tokens,
                                  end.completion_tokens, seconds, end.constraint, i))
        return out

    def complete(self, prepared: Prepared, cancel: threading.Event | None = None) -> Completion:
        """Generate the whole completion of choice 0 (blocking; ``cancel`` as in :meth:`stream`);
        :meth:`completions` returns every choice."""
        return self.completions(prepared, cancel)[0]

    def chat(self, messages: Sequence[dict[str, Any]], **kwargs: Any) -> Completion:
        """Convenience: :meth:`prepare` then :meth:`complete` (keyword args as in ``prepare``)."""
        return self.complete(self.prepare(messages, **kwargs))


def _first(*values: float | None) -> float:
    return next(float(v) for v in values if v is not None)
