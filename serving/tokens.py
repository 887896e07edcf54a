"""Token estimates for routing and usage: :func:`estimate` (chat messages) and :func:`count_text`.

Routing needs the prompt's size before any model is called (context-window and ``--max-cost``
filters), and usage needs a count when a provider reports none. Both count with OpenAI's
``cl100k_base`` vocabulary through ``tiktoken``, loaded from the BPE file LiteLLM bundles (found
without importing LiteLLM, which costs ≈5 s: ``vox chat --dry-run`` must not pay it), and add the
chat-format tokens LiteLLM's ``token_counter(model="")`` adds, so the figures equal LiteLLM's to
the token (tested). It is an estimate for models with other vocabularies (the router pads it for
small local models). Where neither tiktoken nor the file is available, a documented character rule
(:data:`CHARS_PER_TOKEN`) stands in; nothing is ever downloaded.
"""

from __future__ import annotations

import binascii
import hashlib
import importlib.util
import math
import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Final

Message = Mapping[str, str]

#: where tiktoken (and so LiteLLM) would fetch the vocabulary from; tiktoken names its cache file
#: after the SHA-1 of this URL, and LiteLLM bundles the file under that name.
CL100K_URL: Final = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
#: SHA-256 of the file's bytes, as ``tiktoken_ext/openai_public.py`` checks it.
CL100K_SHA256: Final = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
#: the pre-tokenizer pattern of ``cl100k_base`` (``tiktoken_ext/openai_public.py``, tiktoken 0.7-0.14).
CL100K_PATTERN: Final = (r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+|"""
                         r""" ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""")
#: LiteLLM counts text in pieces of this many characters (``TIKTOKEN_ENCODE_CHUNK_SIZE_CHARS``,
#: default 1024; it bounds tiktoken's cost on long runs without spaces). A word cut at a piece
#: boundary counts as two, so the same pieces keep the figures equal to LiteLLM's.
CHUNK_CHARS: Final = 1024
#: chat-format tokens, from LiteLLM's ``token_counter`` for a model it does not know (and
#: OpenAI's cookbook, "How to count tokens with tiktoken"): each message adds 3
#: (``<|start|>role ... <|end|>``), a ``name`` field 1 more, and the reply's primer 3.
TOKENS_PER_MESSAGE: Final = 3
TOKENS_PER_NAME: Final = 1
REPLY_PRIMER_TOKENS: Final = 3
#: fallback without tiktoken or the vocabulary file: OpenAI's rule of thumb that one token is
#: about 4 characters of English text ("What are tokens and how to count them?", OpenAI help
#: center), rounded up per string. Within ~25% of cl100k_base on prose and Vox code.
CHARS_PER_TOKEN: Final = 4


@dataclass(frozen=True, slots=True)
class TokenEstimate:
    """Estimated prompt size in tokens.

    Attributes:
        total: every message, chat-format overhead included.
        system: the part of ``total`` in system messages (a server that drops them never sees it).
    """

    total: int
    system: int


def vocabulary_file() -> Path | None:
    """The ``cl100k_base`` BPE file on this machine, or ``None``: LiteLLM's bundled copy, else
    tiktoken's own cache (``$TIKTOKEN_CACHE_DIR``, ``$DATA_GYM_CACHE_DIR``, ``<tmp>/data-gym-cache``).
    Looks only at local files; the content's hash is checked when it is loaded."""
    name = hashlib.sha1(CL100K_URL.encode()).hexdigest()
    folders: list[Path] = []
    spec = importlib.util.find_spec("litellm")  # locates the package without importing it
    for root in (spec.submodule_search_locations or []) if spec else []:
        folders.append(Path(root) / "litellm_core_utils" / "tokenizers")
    for var in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if os.environ.get(var):
            folders.append(Path(os.environ[var]))
    folders.append(Path(tempfile.gettempdir()) / "data-gym-cache")
    return next((f / name for f in folders if (f / name).is_file()), None)


@lru_cache(maxsize=1)
def _counter() -> Callable[[str], int]:
    """The token counter of one string, built once per process (≈0.5 s: parse and compile the
    100k-entry vocabulary); the character rule when tiktoken or the file is missing or corrupt."""
    path = vocabulary_file()
    data = path.read_bytes() if path is not None else b""
    try:
        import tiktoken
    except ImportError:
        return _by_chars
    if hashlib.sha256(data).hexdigest() != CL100K_SHA256:
        return _by_chars
    parts = data.split()  # "<base64 token> <rank>" per line
    ranks = dict(zip(map(binascii.a2b_base64, parts[0::2]), map(int, parts[1::2]), strict=True))
    encoding = tiktoken.Encoding(name="cl100k_base", pat_str=CL100K_PATTERN, mergeable_ranks=ranks,
                                 special_tokens={})  # special-token text counts as plain text, as in LiteLLM

    def count(text: str) -> int:
        return sum(len(encoding.encode_ordinary(text[i:i + CHUNK_CHARS])) for i in range(0, len(text), CHUNK_CHARS))

    return count


def _by_chars(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def _count_messages(messages: Sequence[Message]) -> int:
    count = _counter()
    total = REPLY_PRIMER_TOKENS
    for message in messages:
        total += TOKENS_PER_MESSAGE
        for key, value in message.items():
            if isinstance(value, str):  # LiteLLM skips None and non-text fields alike
                total += count(value) + (TOKENS_PER_NAME if key == "name" else 0)
    return total


def estimate(messages: Sequence[Message]) -> TokenEstimate:
    """Estimate the prompt tokens of ``messages`` (OpenAI-style ``role``/``content`` dicts).

    Args:
        messages: the conversation as it will be sent.

    Returns:
        The total (``0`` for no messages) and the part in system messages, in ``cl100k_base``
        tokens with the chat-format overhead (see the module docstring).
    """
    system = [m for m in messages if m.get("role") == "system"]
    return TokenEstimate(_count_messages(messages) if messages else 0, _count_messages(system) if system else 0)


def count_text(text: str) -> int:
    """Tokens of a plain ``text`` (an answer whose usage the provider did not report)."""
    return _counter()(text) if text else 0
