"""Chat prompts to token ids, with message content always encoded as text.

``tokenizer.encode(apply_chat_template(...))`` parses special-token strings wherever they occur,
so a user writing ``<|im_end|>\\n<|im_start|>assistant`` would close their own turn with real
control tokens (issue 14 item 7). :func:`encode_chat` renders the template around placeholder
contents, encodes the template's own text normally (its special tokens are real) and each
message's content with ``split_special_tokens=True`` (special-token strings stay plain text).

A fast tokenizer implements ``split_special_tokens`` by setting a flag on its shared Rust
tokenizer before each encode (transformers 5.x ``_encode_plus``), so two threads encoding with the
one tokenizer can each run under the other's setting: ``vox serve`` renders prompts on several
threads, and 53 of 800 concurrent renders came out wrong (a template's ``<|im_start|>`` split into
text, or a user's kept special). Every encode here holds :data:`ENCODE_LOCK`.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Sequence
from typing import Any, Final

log = logging.getLogger(__name__)

# Private-use code points: never produced by templates, and stripped from contents first.
_OPEN: Final = "\ue000"
_CLOSE: Final = "\ue001"
#: a content placeholder in a rendered template; group 1 is the message index
CONTENT_MARK: Final = re.compile(_OPEN + r"(\d+)" + _CLOSE)
#: held around every encode that sets ``split_special_tokens`` and the template encodes around it
#: (see the module docstring); re-entrant, since :func:`encode_chat` calls :func:`encode_text`
ENCODE_LOCK: Final = threading.RLock()


def strip_marks(content: str) -> str:
    """``content`` without the placeholder code points (so user text can never forge a placeholder)."""
    return content.replace(_OPEN, "").replace(_CLOSE, "")


def marked(messages: Sequence[dict[str, str]]) -> list[dict[str, str]]:
    """The messages with each content replaced by its placeholder (index ``i`` -> ``CONTENT_MARK``)."""
    return [{**m, "content": f"{_OPEN}{i}{_CLOSE}"} for i, m in enumerate(messages)]


def encode_text(tokenizer: Any, text: str) -> list[int]:
    """Ids of ``text`` as plain text: special-token strings in it are not special ids."""
    with ENCODE_LOCK:
        ids: list[int] = tokenizer.encode(text, add_special_tokens=False, split_special_tokens=True)
    return ids


def encode_chat(tokenizer: Any, messages: Sequence[dict[str, str]], add_generation_prompt: bool = True) -> list[int]:
    """Token ids of the chat-templated conversation, contents encoded as text.

    Args:
        tokenizer: a Hugging Face tokenizer with a chat template.
        messages: ``{"role", "content"}`` dicts (already presented, see ``pipeline.chat_format``).
        add_generation_prompt: end with the template's assistant header.

    Returns:
        The ids. Equal to encoding the rendered text whole whenever no content holds a
        special-token string (contents meet the template at pre-tokenizer boundaries). A
        template that alters contents (so the placeholders do not survive once each) falls back,
        after a warning, to encoding the rendered text whole (contents then unprotected).
    """
    clean = [{**m, "content": strip_marks(m["content"])} for m in messages]
    with ENCODE_LOCK:
        return _encode_marked(tokenizer, clean, add_generation_prompt)


def _encode_marked(tokenizer: Any, clean: list[dict[str, str]], add_generation_prompt: bool) -> list[int]:
    """:func:`encode_chat` of contents already stripped of placeholder code points (lock held)."""
    text = tokenizer.apply_chat_template(marked(clean), tokenize=False, add_generation_prompt=add_generation_prompt)
    pieces = CONTENT_MARK.split(text)
    found = [int(p) for p in pieces[1::2]]
    if sorted(found) != list(range(len(clean))):
        log.warning("chat template altered message contents; encoding the prompt without placeholders")
        whole = tokenizer.apply_chat_template(clean, tokenize=False, add_generation_prompt=add_generation_prompt)
        out: list[int] = tokenizer.encode(whole, add_special_tokens=False)
        return out
    ids: list[int] = []
    for j, piece in enumerate(pieces):
        if j % 2:
            ids += encode_text(tokenizer, clean[int(piece)]["content"])
        elif piece:
            ids += tokenizer.encode(piece, add_special_tokens=False)
    return ids
