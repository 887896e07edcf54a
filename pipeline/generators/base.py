"""Shared shapes for the generators: a generated :class:`Program`, the :class:`Pair` rows built
from it, and small helpers for phrasing prompts and rendering responses.

A generator is a function ``(rng, theme) -> Program``; it must be deterministic given the
``random.Random`` it receives. Every program a generator returns must pass the compiler gate
(``vox_lang.check(strict=True)``).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from pipeline.generators.themes import Theme

#: the four corpus sources (the ``source`` column)
SOURCES: Final = ("organic", "synthetic_script", "synthetic_web", "preflight")


@dataclass(frozen=True)
class Program:
    """One generated Vox program and the ways a user might ask for it.

    Attributes:
        code: the complete module (2-space indentation, no trailing newline).
        prompts: user requests; the first is canonical, later ones are paraphrases.
        construct: the main construct taught (e.g. ``sum_match``, ``view_routes``).
        difficulty: 1 (one small declaration) to 3 (several interacting declarations).
        note: one or two sentences shown after the code block.
    """

    code: str
    prompts: tuple[str, ...]
    construct: str
    difficulty: int
    note: str


@dataclass(frozen=True)
class Pair:
    """One generated training pair (before the gate).

    Attributes:
        id: unique row id; ``instance_id``: the program it derives from (shared by its
            paraphrases and repair variants); ``theme``: the name theme (held-out unit).
        broken, expect_code: for repair pairs, the broken program shown in the prompt and the
            diagnostic code it must raise; ``None`` otherwise.
    """

    id: str
    instance_id: str
    source: str
    family: str
    construct: str
    difficulty: int
    seed: int
    theme: str
    prompt: str
    response: str
    broken: str | None = None
    expect_code: str | None = None

    def messages(self, system: str) -> list[dict[str, str]]:
        """Chat messages: system (the SSOT prompt), user, assistant."""
        return [
            {"role": "system", "content": system},
            {"role": "user", "content": self.prompt},
            {"role": "assistant", "content": self.response},
        ]


Generator = Callable[[random.Random, Theme], Program]


@dataclass(frozen=True)
class Family:
    """A template family: its corpus source, name, and generator."""

    source: str
    name: str
    generate: Generator = field(repr=False)


def derive_seed(*parts: object) -> int:
    """A stable 63-bit seed from ``parts`` (independent of ``PYTHONHASHSEED``)."""
    digest = hashlib.blake2b("\x1f".join(map(str, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


def short_id(*parts: object) -> str:
    """A 12-hex-digit id derived from ``parts``."""
    return hashlib.blake2b("\x1f".join(map(str, parts)).encode(), digest_size=6).hexdigest()


def fenced(code: str) -> str:
    """``code`` in a ```vox block."""
    return f"```vox\n{code}\n```"


def response(code: str, note: str) -> str:
    """The assistant answer: the program in a ```vox block, then a short note."""
    return f"{fenced(code)}\n{note}"


def cap(s: str) -> str:
    """First letter upper-cased."""
    return s[:1].upper() + s[1:]


def lines(*parts: str | None) -> str:
    """Join non-``None`` parts with newlines (``None`` drops an optional line)."""
    return "\n".join(p for p in parts if p is not None)


def pick(rng: random.Random, *options: str) -> str:
    """One of ``options``."""
    return rng.choice(options)


_ASK_FN: Final = (
    "Write a Vox function {what}.",
    "In Vox, write a function {what}.",
    "I need a Vox function {what}.",
    "Can you write a Vox function {what}?",
    "Show me a Vox function {what}.",
    "Please write Vox code: a function {what}.",
)


def ask_fn(rng: random.Random, what: str) -> str:
    """A user request for a function, e.g. ``ask_fn(rng, "that adds two ints")``."""
    return rng.choice(_ASK_FN).format(what=what)


_ASK: Final = (
    "{What}.",
    "{What} in Vox.",
    "In Vox, {what}.",
    "How do I {what} in Vox?",
    "Write a Vox program to {what}.",
    "Please {what}, using Vox.",
)


def ask(rng: random.Random, what: str) -> str:
    """A generic user request; ``what`` is an imperative phrase (``"define a record type ..."``)."""
    options = [t for t in _ASK if not (what.startswith("write ") and "program to" in t)]
    return rng.choice(options).format(what=what, What=cap(what))


def a_(word: str) -> str:
    """``word`` with its indefinite article (``an exhibit``, ``a book``)."""
    return ("an " if word[:1].lower() in "aeiou" else "a ") + word
