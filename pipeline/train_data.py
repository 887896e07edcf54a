"""Training examples as token ids and labels: contents encoded as text, nothing truncated.

Conversations are tokenized here rather than by ``SFTTrainer``, for two reasons (issue 14 items 6, 7):

- message content is always encoded as text, exactly as :func:`pipeline.decoding.encode_chat` does
  for evaluation and serving: a response containing ``<|im_end|>`` trains on the characters, never
  on the end-of-turn id. Only the chat template's own special tokens are special ids.
- a row that does not fit ``max_length`` whole is dropped and counted, never truncated: truncation
  can remove every supervised token of a row (a long prompt) or cut a response before its
  end-of-turn token, and a run made of such rows "succeeds" with loss 0.0.

Labels are the assistant tokens marked by the template's ``{% generation %}`` blocks (trl supplies
a marked template for known model families whose own template lacks them); everything else is -100.
"""

from __future__ import annotations

import bisect
import logging
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final, cast

from pipeline.decoding_prompt import CONTENT_MARK, ENCODE_LOCK, marked, strip_marks
from pipeline.errors import TrainingError

log = logging.getLogger(__name__)

IGNORE: Final = -100  # label of tokens outside the loss (torch cross-entropy ignore_index)


@dataclass(frozen=True)
class Encoded:
    """One conversation: ``input_ids`` and ``labels`` (same length; -100 outside assistant tokens)."""

    input_ids: list[int]
    labels: list[int]

    @property
    def prompt_tokens(self) -> int:
        """Tokens before the first supervised one (the whole length if none is supervised)."""
        return next((i for i, label in enumerate(self.labels) if label != IGNORE), len(self.labels))

    @property
    def supervised(self) -> int:
        """Number of tokens in the loss."""
        return sum(label != IGNORE for label in self.labels)


@dataclass(frozen=True)
class FitReport:
    """What :func:`encode_rows` kept and dropped (counts of rows; reported in metadata and MLflow).

    Attributes:
        rows: conversations given. kept: rows that fit ``max_length`` whole with >= 1 supervised token.
        prompt_too_long: the prompt alone fills ``max_length``: no room for any response token.
        response_truncated: the prompt fits but the response (and its end-of-turn) would be cut.
        no_response: nothing to supervise (empty assistant turn).
        max_length: the limit applied.
    """

    rows: int
    kept: int
    prompt_too_long: int
    response_truncated: int
    no_response: int
    max_length: int

    @property
    def dropped(self) -> int:
        """Rows not trained on."""
        return self.rows - self.kept

    def metrics(self, prefix: str) -> dict[str, int]:
        """Flat counts, e.g. ``train_rows_dropped_prompt_too_long``."""
        return {f"{prefix}_rows": self.rows, f"{prefix}_rows_kept": self.kept,
                f"{prefix}_rows_dropped": self.dropped,
                f"{prefix}_rows_dropped_prompt_too_long": self.prompt_too_long,
                f"{prefix}_rows_dropped_response_truncated": self.response_truncated,
                f"{prefix}_rows_dropped_no_response": self.no_response}


def training_template(tokenizer: Any) -> str:
    """The tokenizer's chat template if it marks assistant turns with ``{% generation %}``; else trl's
    marked version of it.

    Raises:
        TrainingError: no chat template, or one trl does not know how to mark.
    """
    from trl.chat_template_utils import get_training_chat_template, has_generation_markers

    template = tokenizer.chat_template
    if not isinstance(template, str):
        raise TrainingError("the tokenizer has no chat template: cannot build assistant-only labels")
    if has_generation_markers(template):
        return template
    try:
        patched = get_training_chat_template(tokenizer)
    except ValueError as exc:
        raise TrainingError(f"the chat template has no {{% generation %}} markers and trl cannot add them: {exc}") \
            from exc
    return patched or template


class ChatEncoder:
    """Encodes conversations for training with one tokenizer and chat template.

    The template is rendered with each content replaced by a marker; the template's text is encoded
    with its special tokens (pieces cached: they repeat on every row), all contents in one batched
    call with ``split_special_tokens=True``. A token is supervised when it lies inside a
    ``{% generation %}`` block.

    Args:
        tokenizer: a Hugging Face tokenizer with a chat template.
        template: the template to render (default :func:`training_template`).
    """

    def __init__(self, tokenizer: Any, template: str | None = None) -> None:
        self.tokenizer = tokenizer
        self.template = template or training_template(tokenizer)
        self._pieces: dict[str, tuple[list[int], list[int]]] = {}

    def _piece(self, text: str) -> tuple[list[int], list[int]]:
        """Ids and start offsets of a piece of template text (special tokens parsed)."""
        if text not in self._pieces:
            with ENCODE_LOCK:
                enc = self.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
            self._pieces[text] = (list(enc["input_ids"]), [a for a, _ in enc["offset_mapping"]])
        return self._pieces[text]

    def _render(self, messages: Sequence[dict[str, str]]) -> tuple[str, list[tuple[int, int]], list[re.Match[str]]]:
        """The marked rendering, its generation spans (sorted) and the content markers in order.

        Raises:
            TrainingError: the template drops or repeats contents (markers do not survive once each).
        """
        from transformers.utils.chat_template_utils import render_jinja_template

        # the placeholder scheme is encode_chat's (pipeline.decoding_prompt), so ids match serving's
        roles = [{"role": m["role"], "content": m["content"]} for m in messages]
        # returns (texts, generation spans) per conversation (annotated as str upstream)
        rendered, spans = cast(tuple[list[str], list[list[tuple[int, int]]]], render_jinja_template(
            conversations=[marked(roles)], chat_template=self.template, return_assistant_tokens_mask=True,
            **self.tokenizer.special_tokens_map))
        marks = list(CONTENT_MARK.finditer(rendered[0]))
        if sorted(int(m.group(1)) for m in marks) != list(range(len(messages))):
            raise TrainingError("the chat template alters message contents; cannot encode them as plain text")
        return rendered[0], sorted(spans[0]), marks

    def encode(self, conversations: Sequence[Sequence[dict[str, str]]]) -> list[Encoded]:
        """:class:`Encoded` ids and labels for each conversation."""
        renders = [self._render(messages) for messages in conversations]
        texts = [strip_marks(messages[int(m.group(1))]["content"])
                 for messages, (_, _, marks) in zip(conversations, renders) for m in marks]
        with ENCODE_LOCK:  # split_special_tokens flips a flag on the shared tokenizer
            content_ids = iter(self.tokenizer(texts, add_special_tokens=False, split_special_tokens=True)["input_ids"]
                               if texts else [])
        return [self._assemble(text, generation, marks, content_ids) for text, generation, marks in renders]

    def _assemble(self, text: str, generation: list[tuple[int, int]], marks: list[re.Match[str]],
                  content_ids: Iterator[list[int]]) -> Encoded:
        starts = [a for a, _ in generation]

        def supervised(pos: int) -> bool:
            i = bisect.bisect_right(starts, pos) - 1
            return i >= 0 and generation[i][0] <= pos < generation[i][1]

        ids: list[int] = []
        labels: list[int] = []
        pos = 0
        for match in [*marks, None]:
            end = match.start() if match else len(text)
            if end > pos:  # template text: its special tokens are real
                piece_ids, offsets = self._piece(text[pos:end])
                ids.extend(piece_ids)
                labels.extend(tid if supervised(pos + a) else IGNORE for tid, a in zip(piece_ids, offsets))
            if match is None:
                break
            content = list(next(content_ids))
            ids.extend(content)
            labels.extend(content if supervised(match.start()) else [IGNORE] * len(content))
            pos = match.end()
        return Encoded(ids, labels)


def encode_conversation(tokenizer: Any, messages: Sequence[dict[str, str]], template: str | None = None) -> Encoded:
    """Ids and assistant-only labels of one conversation, contents encoded as plain text (see :class:`ChatEncoder`).

    Raises:
        TrainingError: the template drops or repeats message contents.
    """
    return ChatEncoder(tokenizer, template).encode([messages])[0]


def encode_rows(tokenizer: Any, conversations: Sequence[Sequence[dict[str, str]]],
                max_length: int) -> tuple[dict[str, list[list[int]]], FitReport]:
    """Encode conversations and keep those that fit ``max_length`` whole.

    Args:
        tokenizer: the training tokenizer (with a chat template).
        conversations: presented message lists (see :func:`pipeline.chat_format.present`).
        max_length: most tokens per example (the packed row length).

    Returns:
        ``({"input_ids": [...], "labels": [...]}, report)``, columns for ``datasets.Dataset.from_dict``.
    """
    columns: dict[str, list[list[int]]] = {"input_ids": [], "labels": []}
    too_long = truncated = empty = 0
    for enc in ChatEncoder(tokenizer).encode(conversations):
        if enc.supervised == 0:
            empty += 1
        elif enc.prompt_tokens >= max_length:
            too_long += 1
        elif len(enc.input_ids) > max_length:
            truncated += 1
        else:
            columns["input_ids"].append(enc.input_ids)
            columns["labels"].append(enc.labels)
    report = FitReport(rows=len(conversations), kept=len(columns["input_ids"]), prompt_too_long=too_long,
                       response_truncated=truncated, no_response=empty, max_length=max_length)
    return columns, report


def require_trainable(report: FitReport, split: str = "train") -> None:
    """Fail before step 0 when no row is left to train on.

    Raises:
        TrainingError: names the counts and the likely fix (raise ``train.max_length`` or shorten rows).
    """
    if report.kept == 0:
        raise TrainingError(
            f"no {split} row fits train.max_length={report.max_length} whole: {report.prompt_too_long} with the "
            f"prompt alone too long, {report.response_truncated} with the response cut, {report.no_response} with "
            f"no response; raise train.max_length or shorten the corpus rows (corpus.max_chars)")
    warn_dropped(report, split)


def warn_dropped(report: FitReport, split: str) -> None:
    """Log how many ``split`` rows are left out, and why (nothing when none is)."""
    if report.dropped:
        log.warning("train: %d of %d %s rows do not fit max_length %d whole and are left out (%d prompt too long, "
                    "%d response cut, %d no response)", report.dropped, report.rows, split, report.max_length,
                    report.prompt_too_long, report.response_truncated, report.no_response)
