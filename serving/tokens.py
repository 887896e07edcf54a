"""Token estimates for routing and usage: one function, :func:`estimate`, over ``litellm.token_counter``.

Routing needs the prompt's size before any model is called (context-window and ``--max-cost``
filters), and usage needs a count when a provider reports none. LiteLLM's ``token_counter``
counts with the model's tokenizer when it knows one and with ``cl100k_base`` (bundled, offline)
otherwise, including the few tokens each chat message adds; it is an estimate for models with
other vocabularies (the router pads it for small local models).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from serving.llm import import_litellm

Message = Mapping[str, str]


@dataclass(frozen=True, slots=True)
class TokenEstimate:
    """Estimated prompt size in tokens.

    Attributes:
        total: every message, chat-format overhead included.
        system: the part of ``total`` in system messages (a server that drops them never sees it).
    """

    total: int
    system: int


def _count(messages: Sequence[Message], model: str) -> int:
    litellm = import_litellm()
    return int(litellm.token_counter(model=model, messages=[dict(m) for m in messages]))


def estimate(messages: Sequence[Message], model: str = "") -> TokenEstimate:
    """Estimate the prompt tokens of ``messages`` (OpenAI-style ``role``/``content`` dicts).

    Args:
        messages: the conversation as it will be sent.
        model: a LiteLLM model name whose tokenizer to use (default: ``cl100k_base``).
    """
    system = [m for m in messages if m.get("role") == "system"]
    total = _count(messages, model) if messages else 0
    return TokenEstimate(total, _count(system, model) if system else 0)


def count_text(text: str, model: str = "") -> int:
    """Tokens of a plain ``text`` (an answer whose usage the provider did not report)."""
    return int(import_litellm().token_counter(model=model, text=text)) if text else 0
