"""A stream of freshly generated pretraining documents whose names are drawn anew for every program.

The bootstrap base model used to make several passes over the corpus train split, so it learned
the split's few dozen theme vocabularies by heart and wrote them into unrelated programs
(issue 9: undefined names such as ``Stat`` or ``PricingPage`` in a request about orders). Here
every program gets a :func:`fresh_theme`: entity, field, variant and actor names are pronounceable
pseudo-words (never a Vox keyword, prelude name, or word of any corpus theme, so no held-out
theme leaks in), and the program comes from the corpus generators (:mod:`pipeline.generators`).
No document repeats; the only way to get a name right is to copy it from the context.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from functools import cache
from typing import Final

from pipeline.generators.base import derive_seed, response
from pipeline.generators.themes import THEMES, Theme, Variant, theme_words

_CONSONANTS: Final = "bcdfghklmnprstvz"
_VOWELS: Final = "aeiou"
#: first letters of entity names: the generators use ``e[0]`` as a loop variable, and these are
#: the letters the corpus themes already start with (no clash with template names like ``n``/``x``)
_ENTITY_INITIALS: Final = "abcdeflmprstv"
#: families that contribute documents, weighted like the corpus sources (organic first)
STREAM_FAMILIES: Final = ("functions", "types_match", "actors", "workflows", "mcp", "tests", "views", "modules",
                          "automation", "adherence", "script", "web")


@cache
def _reserved() -> frozenset[str]:
    """Words a fresh name must never be: Vox keywords and prelude names, and every corpus theme word."""
    from vox_lang.lexer import KEYWORDS
    from vox_lang.prelude import BUILTIN_TYPES, BUILTINS, CONSTRUCTORS, VIEW_ELEMENTS

    words = set().union(*(theme_words(t) for t in THEMES))
    return frozenset(w.lower() for w in (*KEYWORDS, *BUILTIN_TYPES, *BUILTINS, *CONSTRUCTORS, *VIEW_ELEMENTS,
                                         *words))


def pseudo_word(rng: random.Random, initial: str | None = None) -> str:
    """A pronounceable lower-case word of 2-3 syllables (e.g. ``tavori``), optionally starting with ``initial``."""
    while True:
        parts = [rng.choice(_CONSONANTS) + rng.choice(_VOWELS) for _ in range(rng.randint(2, 3))]
        if rng.random() < 0.4:
            parts.append(rng.choice("lnrst"))
        word = "".join(parts)
        if initial is not None:
            word = initial + word[1:] if word[0] in _CONSONANTS and initial in _CONSONANTS else initial + word
        if word not in _reserved():
            return word


def fresh_theme(rng: random.Random) -> Theme:
    """A theme whose every name is a new pseudo-word (distinct within the theme)."""
    used: set[str] = set()

    def word(initial: str | None = None) -> str:
        while True:
            w = pseudo_word(rng, initial)
            if w not in used and w + "s" not in used:
                used.add(w)
                return w

    e = word(rng.choice(_ENTITY_INITIALS))
    used.add(e + "s")
    label, count, amount = word(), word(), word()
    names = [word().capitalize() for _ in range(3)]
    p1, p2 = word(), word()
    actor = word().capitalize() + rng.choice(("er", "or", "ist"))
    sample = (word(), word(), word())
    return Theme(f"fresh-{e}", e.capitalize(), e, e + "s", label, count, amount,
                 (Variant(names[0]), Variant(names[1], p1, "int"), Variant(names[2], p2, "float")), actor, sample)


def stream_document(seed: int, index: int) -> str:
    """Document ``index`` of the stream of ``seed``: a request, then its answer, as plain text."""
    from pipeline.generators import FAMILY_BY_NAME

    rng = random.Random(derive_seed(seed, "pretrain-stream", index))
    family = rng.choice(STREAM_FAMILIES)
    prog = FAMILY_BY_NAME[family].generate(rng, fresh_theme(rng))
    return f"{rng.choice(prog.prompts)}\n\n{response(prog.code, prog.note)}"


def stream_documents(seed: int, start: int = 0) -> Iterator[str]:
    """Documents ``start, start + 1, ...`` of the stream of ``seed`` (endless, deterministic)."""
    index = start
    while True:
        yield stream_document(seed, index)
        index += 1
