"""The local inference engine: one loaded model, chat messages in, text (streamed or whole) out.

``Engine.load(path)`` validates the directory (:mod:`serving.model_dir`), picks a device, loads
weights and tokenizer (merging a PEFT adapter if given), and checks that the library cache agrees
with full-sequence forward (falling back to the latter if not). ``stream()`` / ``complete()``
present the messages (:func:`pipeline.chat_format.present`, the one presenter), encode contents as
plain text, decode through the one decoder (:mod:`pipeline.decoding`), stop at any EOS id (the
union of every declared one) or stop string, and hold one lock per model so concurrent callers are
served one after another, never interleaved.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.chat_format import present
from pipeline.decoding import (
    FULL_FORWARD_MODEL_TYPES,
    DecodingError,
    SamplingParams,
    cache_is_consistent,
    encode_chat,
    eos_ids,
    generate_ids,
    pick_device,
)
from pipeline.decoding_constraint import ConstraintUnavailable, VoxGrammar
from pipeline.decoding_names import NameMask, request_spec, token_table
from serving.errors import ModelLoadError, RequestError, ServingError
from serving.model_dir import ModelDirInfo, inspect_model_dir
from vox_lang.requests import RequestSpec

log = logging.getLogger(__name__)

_ROLES = ("system", "user", "assistant", "tool")


@dataclass(frozen=True, slots=True)
class Prepared:
    """A validated request: rendered prompt ids, the sampling parameters, and the Vox constraint.

    ``constraint`` is ``"response"`` (free prose, ```vox blocks constrained), ``"code"`` (one
    block only) or ``None`` (unconstrained); ``constraint_note`` says why it is off when the
    request asked for it but the model cannot have it.
    """

    prompt_ids: list[int]
    params: SamplingParams
    constraint: str | None = None
    constraint_note: str | None = None
    request: RequestSpec = RequestSpec()  # what the last user message names (for the name mask)
    names: bool = True  # name- and request-aware masking on top of the grammar


@dataclass(frozen=True, slots=True)
class StreamEvent:
    """One streamed piece of output.

    ``text`` is the new text since the previous event (may be empty on the last one). The last
    event has ``finish_reason`` ``"stop"`` (EOS or stop string), ``"length"`` (max tokens) or
    ``"cancelled"``, and the token counts.
    """

    text: str
    finish_reason: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    constraint: dict[str, Any] | None = None  # last event only: what the Vox constraint did


@dataclass(frozen=True, slots=True)
class Completion:
    """A whole completion: text, why it ended, token counts and wall time (seconds)."""

    text: str
    finish_reason: str
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    constraint: dict[str, Any] | None = None


def _default_dtype(device: str) -> Any:
    import torch

    if device.startswith("cuda"):
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    if device.startswith("mps"):
        return torch.float16
    return torch.float32


def _message_text(content: Any, index: int) -> str:
    """Flatten OpenAI message content (a string or a list of ``{"type": "text"}`` parts)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if not isinstance(part, dict) or part.get("type") != "text" or not isinstance(part.get("text"), str):
                raise RequestError(
                    f"messages[{index}].content: only text parts are supported", param=f"messages[{index}]"
                )
            parts.append(part["text"])
        return "".join(parts)
    raise RequestError(
        f"messages[{index}].content must be a string or a list of text parts", param=f"messages[{index}]"
    )


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
        self.grammar: VoxGrammar | None = None
        self.name_table: Any = None
        self.grammar_error: str | None = None
        try:
            vocab = int(model.config.get_text_config().vocab_size)
            self.grammar = VoxGrammar(tokenizer, self.eos_ids, vocab)
            self.name_table = token_table(tokenizer)
        except ConstraintUnavailable as exc:
            self.grammar_error = str(exc)
            log.warning("%s: Vox-constrained decoding unavailable, serving unconstrained: %s", info.path, exc)
        self._lock = threading.Lock()

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
        """Load a model directory (or base + adapter) onto a device.

        Args:
            path: exported model directory, plain HF directory, or adapter directory.
            adapter: PEFT adapter directory applied on top of ``path`` and merged.
            device: ``"cuda"``, ``"cuda:1"``, ``"mps"``, ``"cpu"``; default: best available.
            dtype: torch dtype; default bfloat16/float16 on GPU, float32 on CPU.
            cache: ``"auto"`` (library cache unless the architecture is known-bad or fails the
                load-time parity probe), ``"on"`` or ``"off"`` (full-sequence forward).

        Raises:
            ModelLoadError: the directory is missing/incomplete or the weights do not load.
            ServingError: the requested device is unavailable.
        """
        if cache not in ("auto", "on", "off"):
            raise ServingError(f"cache must be 'auto', 'on' or 'off', got {cache!r}")
        info = inspect_model_dir(path, adapter)
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        try:
            device = pick_device(device)
        except DecodingError as exc:
            raise ServingError(str(exc)) from exc
        dtype = dtype or _default_dtype(device)
        tokenizer_dir = info.path
        if info.adapter_path is not None and (info.adapter_path / "tokenizer_config.json").is_file():
            tokenizer_dir = info.adapter_path
        try:
            tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
            # Non-CPU devices: load the weights straight onto the device (no CPU copy).
            placement = {} if device == "cpu" else {"device_map": device}
            model: Any = AutoModelForCausalLM.from_pretrained(info.path, dtype=dtype, **placement)
            if info.adapter_path is not None:
                from peft import PeftModel

                model = PeftModel.from_pretrained(model, info.adapter_path).merge_and_unload()
        except Exception as exc:  # noqa: BLE001 - safetensors, tokenizers, peft raise their own types
            raise ModelLoadError(f"cannot load model from {info.path}: {exc}") from exc
        model = model.to(device).eval()
        use_cache = cache == "on"
        if cache == "auto":
            use_cache = info.model_type not in FULL_FORWARD_MODEL_TYPES
            if use_cache:
                with torch.inference_mode():
                    use_cache = cache_is_consistent(model, int(model.config.get_text_config().vocab_size))
                if not use_cache:
                    log.warning(
                        "%s: cached decoding disagrees with full-sequence forward for model_type %r;"
                        " serving with full-sequence forward (correct but slower)",
                        info.path,
                        info.model_type,
                    )
        return cls(model, tokenizer, info, device, use_cache)

    # -- requests ---------------------------------------------------------------------------

    def chat_messages(self, messages: Sequence[dict[str, Any]]) -> list[dict[str, str]]:
        """Validate OpenAI-style messages and present them as in training.

        :func:`pipeline.chat_format.present` under the model's ``system_prompt_mode``: ``"none"``
        drops system messages (training showed none); ``"ssot"`` replaces them by the SSOT system
        prompt the model was trained with.

        Raises:
            RequestError: empty list, unknown role, or non-text content.
        """
        if not messages:
            raise RequestError("messages must contain at least one message", param="messages")
        out = []
        for i, message in enumerate(messages):
            role = message.get("role")
            role = "system" if role == "developer" else role
            if role not in _ROLES:
                raise RequestError(
                    f"messages[{i}].role must be one of {', '.join(_ROLES)}, got {role!r}", param=f"messages[{i}].role"
                )
            out.append({"role": str(role), "content": _message_text(message.get("content"), i)})
        return present(out, self.info.system_prompt_mode)

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
    ) -> Prepared:
        """Render the prompt and check the parameters against the context window.

        ``vox_constrained`` (default on) masks tokens so every ```vox block stays a prefix of a
        valid program (``code_only``: the answer is one block and nothing else) and, unless
        ``vox_names`` is false, identifier uses to names that resolve and the block's end to after
        the items the request names (:mod:`pipeline.decoding_names`); a model whose
        tokenizer or grammar cannot be used is decoded unconstrained and the response says so.
        ``max_tokens`` defaults to ``min(default_max_tokens, room left in the context)``;
        ``temperature`` and ``top_p`` default to the model's ``generation_config.json`` values,
        else to OpenAI's defaults (1.0 and 1.0). ``temperature=0`` is greedy decoding.

        Raises:
            RequestError: bad messages or parameters, or prompt + ``max_tokens`` exceed the
                context window (code ``"context_length_exceeded"``).
        """
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
            raise RequestError(f"max_tokens must be >= 1, got {max_tokens}", param="max_tokens")
        if max_tokens > room:
            raise RequestError(
                f"max_tokens={max_tokens} is too large: the prompt is {len(prompt_ids)} tokens and this"
                f" model's context is {self.max_context} (at most {room} new tokens)",
                param="max_tokens",
                code="context_length_exceeded",
            )
        try:
            params = SamplingParams(
                max_new_tokens=max_tokens,
                temperature=_first(temperature, self.info.temperature, 1.0),
                top_p=_first(top_p, self.info.top_p, 1.0),
                stop=tuple(stop),
                seed=seed,
            )
        except ValueError as exc:
            raise RequestError(str(exc)) from exc
        wanted = vox_constrained is not False
        if wanted and self.grammar is None:
            return Prepared(prompt_ids, params, None, f"unconstrained: {self.grammar_error}")
        mode = ("code" if code_only else "response") if wanted else None
        return Prepared(prompt_ids, params, mode, None, request_spec(messages), vox_names is not False)

    def stream(self, prepared: Prepared, cancel: threading.Event | None = None) -> Iterator[StreamEvent]:
        """Generate for a prepared request, yielding text as it becomes final.

        Waits for the model lock first (requests are served one at a time). Text is held back
        while it could still be the start of a stop string or ends in a partial UTF-8 character.
        Setting ``cancel`` (or closing the iterator) stops generation after the current token; a
        request cancelled while it waited for the lock generates nothing.
        """
        params = prepared.params
        with self._lock:
            if cancel is not None and cancel.is_set():
                yield StreamEvent("", "cancelled", len(prepared.prompt_ids), 0)
                return
            ids: list[int] = []
            generated = 0  # tokens sampled, EOS included (what usage reports)
            emitted = 0  # characters of ``text`` already yielded
            finish = "length"
            # Incremental detokenisation: ``settled`` is the text of ids[:window]; only the ids
            # after the last newline are re-decoded each step (as transformers' TextStreamer).
            settled, window, text = "", 0, ""
            processor = None
            if prepared.constraint is not None and self.grammar is not None:
                processor = self.grammar.processor(1, len(prepared.prompt_ids), prepared.constraint)
            procs: list[Any] = [processor] if processor is not None else []
            if processor is not None and prepared.names and self.name_table is not None:
                procs.append(NameMask(self.tokenizer, self.name_table, [prepared.request], len(prepared.prompt_ids),
                                      sorted(self.eos_ids)))
            tokens = generate_ids(
                self.model, prepared.prompt_ids, params, tuple(self.eos_ids), use_cache=self.use_cache, cancel=cancel,
                processors=procs,
            )
            try:
                for token in tokens:
                    generated += 1
                    if token in self.eos_ids:
                        finish = "stop"
                        break
                    ids.append(token)
                    recent = self.tokenizer.decode(ids[window:], skip_special_tokens=True)
                    text = settled + recent
                    if recent.endswith("\n"):
                        settled, window = text, len(ids)
                    cut = _find_stop(text, params.stop, max(0, emitted - _longest(params.stop)))
                    if cut is not None:
                        text, finish = text[:cut], "stop"
                        break
                    safe = _safe_prefix_len(text, params.stop)
                    if safe > emitted:
                        yield StreamEvent(text[emitted:safe])
                        emitted = safe
                    if cancel is not None and cancel.is_set():
                        finish = "cancelled"
                        break
            finally:
                tokens.close()
            if finish == "length" and generated < params.max_new_tokens and cancel is not None and cancel.is_set():
                finish = "cancelled"  # the decoder saw the event before the loop did
            yield StreamEvent(text[emitted:], finish, len(prepared.prompt_ids), generated,
                              _constraint_summary(prepared, processor))

    def complete(self, prepared: Prepared, cancel: threading.Event | None = None) -> Completion:
        """Generate the whole completion for a prepared request (blocking; ``cancel`` as in :meth:`stream`)."""
        start = time.perf_counter()
        parts: list[str] = []
        last = StreamEvent("")
        for event in self.stream(prepared, cancel):
            parts.append(event.text)
            last = event
        return Completion(
            "".join(parts),
            last.finish_reason or "length",
            last.prompt_tokens,
            last.completion_tokens,
            time.perf_counter() - start,
            last.constraint,
        )

    def chat(self, messages: Sequence[dict[str, Any]], **kwargs: Any) -> Completion:
        """Convenience: :meth:`prepare` then :meth:`complete` (keyword args as in ``prepare``)."""
        return self.complete(self.prepare(messages, **kwargs))


def _constraint_summary(prepared: Prepared, processor: Any) -> dict[str, Any]:
    """``{"mode", "applied", "events"}`` for a response: what the Vox constraint did."""
    if processor is None:
        note = prepared.constraint_note or "off (vox_constrained: false)"
        return {"mode": None, "applied": False, "events": [note]}
    report = processor.report
    return {"mode": prepared.constraint, "applied": report.enabled and not report.events, "events": list(report.events)}


def _first(*values: float | None) -> float:
    return next(float(v) for v in values if v is not None)


def _longest(stops: tuple[str, ...]) -> int:
    return max((len(s) for s in stops), default=0)


def _find_stop(text: str, stops: tuple[str, ...], start: int) -> int | None:
    """Index of the earliest stop string in ``text[start:]``, or ``None``."""
    hits = [i for i in (text.find(s, start) for s in stops) if i >= 0]
    return min(hits) if hits else None


def _safe_prefix_len(text: str, stops: tuple[str, ...]) -> int:
    """Length of the prefix of ``text`` that can be emitted now.

    Excludes a trailing U+FFFD (a multi-byte character still being decoded) and the longest
    suffix that is a proper prefix of a stop string (the next token might complete it).
    """
    end = len(text)
    while end > 0 and text[end - 1] == "\ufffd":
        end -= 1
    hold = 0
    for stop in stops:
        for k in range(min(len(stop) - 1, end), 0, -1):
            if text[end - k : end] == stop[:k]:
                hold = max(hold, k)
                break
    return end - hold
