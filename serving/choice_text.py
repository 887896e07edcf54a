"""The text of one choice as its tokens arrive: incremental detokenisation and stop strings.

A :class:`ChoiceText` takes one choice's token ids one at a time and returns the text that is
final (safe to send): text is held back while it could still be the start of a stop string or
ends in a partial UTF-8 character, and a stop string cuts the text before it and finishes the
choice. ``vox serve`` keeps one per choice of a request (the OpenAI ``n`` parameter).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


class ChoiceText:
    """One choice's text, built token by token.

    Args:
        tokenizer: decodes ids (special tokens skipped).
        stop: strings that end the choice; the text is cut before the first one found.
        eos_ids: ids that end the choice (not part of the text).

    Attributes:
        text: the text so far (after a stop string: cut before it).
        emitted: characters of :attr:`text` already handed out.
        tokens: ids received, EOS included (what usage reports as completion tokens).
        finish: ``None`` while running, ``"stop"`` after an EOS id or a stop string.
    """

    def __init__(self, tokenizer: Any, stop: tuple[str, ...], eos_ids: Iterable[int]) -> None:
        self.tokenizer, self.stop, self.eos_ids = tokenizer, stop, frozenset(eos_ids)
        self.text = ""
        self.emitted = 0
        self.tokens = 0
        self.finish: str | None = None
        self._ids: list[int] = []
        # Only the ids after the last newline are re-decoded each step (as transformers'
        # TextStreamer): ``_settled`` is the text of ``_ids[:_window]``.
        self._settled, self._window = "", 0

    def push(self, token: int) -> str:
        """Add one sampled id; return the newly final text (may be empty).

        An EOS id or a stop string sets :attr:`finish` to ``"stop"``; the text held back then
        is returned by :meth:`rest`.
        """
        self.tokens += 1
        if token in self.eos_ids:
            self.finish = "stop"
            return ""
        self._ids.append(token)
        recent = self.tokenizer.decode(self._ids[self._window:], skip_special_tokens=True)
        self.text = self._settled + recent
        if recent.endswith("\n"):
            self._settled, self._window = self.text, len(self._ids)
        cut = find_stop(self.text, self.stop, max(0, self.emitted - longest(self.stop)))
        if cut is not None:
            self.text, self.finish = self.text[:cut], "stop"
            return ""
        safe = safe_prefix_len(self.text, self.stop)
        if safe <= self.emitted:
            return ""
        piece = self.text[self.emitted:safe]
        self.emitted = safe
        return piece

    def rest(self) -> str:
        """The text not yet handed out (sent with the choice's last event); marks it emitted."""
        piece = self.text[self.emitted:]
        self.emitted = len(self.text)
        return piece


def longest(stops: tuple[str, ...]) -> int:
    """Length of the longest stop string (0 when none)."""
    return max((len(s) for s in stops), default=0)


def find_stop(text: str, stops: tuple[str, ...], start: int) -> int | None:
    """Index of the earliest stop string in ``text[start:]``, or ``None``."""
    hits = [i for i in (text.find(s, start) for s in stops) if i >= 0]
    return min(hits) if hits else None


def safe_prefix_len(text: str, stops: tuple[str, ...]) -> int:
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
