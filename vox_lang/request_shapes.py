"""A requested type's variants or fields, listed in a request's words.

"Define a sum type `Light` with variants Red, Yellow and Green" names three variants; "`Signal`
with variants `Green`, `Amber` and `Flashing(times: int)`" names them in backticks. Before this
module, backticked variants became requirements of their own (three *types* `Green`, `Amber`,
`Flashing`, which no correct program declares) and plain ones were not read at all.
:func:`listed_shape` reads the list after a role word (:data:`ROLE_WORDS`: variants/cases for a
sum type, fields for a record) in the words that follow the type's name, up to the end of the
sentence, and turns it into the declaration's right-hand side (``| Red | Yellow | Green``,
``{ name: str, age: int }``).

The list is read strictly, so that prose is never mistaken for a shape:

- an element is a variant ``Name`` or ``Name(field: Type, ...)`` (outside backticks the name must
  start with a capital letter: "variants for each state" lists nothing), or a field
  ``name: Type`` (brackets balanced: ``Map[str, int]``);
- elements are separated by ``,``, ``and``, ``or`` (``, and`` too);
- the list ends at the end of the sentence, or at a separator followed by a word of
  :data:`_LIST_ENDS` ("..., and a function `next`"). Anything else after an element ("Green
  lights", ", each with a size") means the words are not a plain list: nothing is read.

:func:`listed_signature` gives the canonical body the request then requires; a backticked span
after a role word is a part, never an item of its own (:func:`vox_lang.requests.extract_request`).
This module imports nothing outside vox_lang.
"""

from __future__ import annotations

import re
from typing import Final

from vox_lang import syntax
from vox_lang.signatures import parse_item, type_signature

#: words that introduce a type's parts, and the declaration form they make
ROLE_WORDS: Final[dict[str, str]] = {
    **{w: "sum" for w in ("variant", "variants", "case", "cases")},
    **{w: "record" for w in ("field", "fields")},
}
#: words after a separator that end a list ("..., and a function", "..., then print")
_LIST_ENDS: Final = frozenset({"a", "an", "the", "then", "also", "plus", "write", "add", "define", "make",
                               "return", "print", "use", "using", "with", "that", "which"})
#: words that may stand between the type's name and its role word ("`Light` with the variants")
_LEAD_INS: Final = frozenset({"with", "that", "has", "have", "having", "of", "its", "the", "following", "two", "three",
                              "four", "five", "six", "a", "an", "and", "whose", "which", "holding", "where"})
_SENTENCE_END: Final = re.compile(r"[.;!?](?=\s|$)|\n\s*\n")
_ROLE: Final = re.compile(r"\b(" + "|".join(ROLE_WORDS) + r")\b\s*:?\s*", re.IGNORECASE)
_SEPARATOR: Final = re.compile(r"\s*(?:,\s*(?:and\b|or\b)?|\band\b|\bor\b)\s*", re.IGNORECASE)
_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_WORD: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _balanced(text: str, start: int, stop: str) -> int | None:
    """The index where a type or parenthesised list starting at ``start`` ends: the first of
    ``stop``'s characters (or a separator word) at bracket depth 0, or the end; ``None`` when a
    bracket closes that never opened."""
    depth = 0
    i = start
    while i < len(text):
        ch = text[i]
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
            if depth < 0:
                return i if ")" in stop else None
            if depth == 0 and ")" in stop and ch == ")":
                return i + 1
        elif depth == 0:
            sep = _SEPARATOR.match(text, i)
            if ch in stop or sep is not None and sep.group().strip():
                return i
        i += 1
    return None if depth else i


def _element(text: str, pos: int, form: str, ticked: bool) -> int | None:
    """Where one element of a ``form`` list starting at ``pos`` ends, or ``None`` when there is none."""
    m = _NAME.match(text, pos)
    if m is None:
        return None
    end = m.end()
    if form == "sum":
        if not ticked and not m.group()[0].isupper():
            return None
        rest = text[end:]
        stripped = len(rest) - len(rest.lstrip(" "))
        if rest[stripped:stripped + 1] == "(":
            close = _balanced(text, end + stripped, ")")
            return close if close is not None and text[close - 1] == ")" else None
        return end
    colon = re.compile(r"\s*:\s*").match(text, end)
    if colon is None:
        return None
    stop = _balanced(text, colon.end(), ",")
    if stop is None or stop == colon.end():
        return None
    return len(text[:stop].rstrip())


def listed_shape(after: str, form: str | None = None) -> str | None:
    """The right-hand side of a type declaration that ``after`` lists (the request's words from
    the type's closing backtick on), or ``None`` when it lists none (see the module docstring).

    Args:
        after: the text after the type's name.
        form: the form the request's words already gave (``record``/``sum``), or ``None``; a role
            word for the other form is ignored.

    Returns:
        ``| A | B(x: int)`` or ``{ a: int, b: str }``, to parse after ``type NAME = ``.
    """
    end = _SENTENCE_END.search(after)
    sentence = after[:end.start()] if end else after
    role = _ROLE.search(sentence.replace("`", " "))
    if role is None or any(w.lower() not in _LEAD_INS for w in _WORD.findall(sentence[:role.start()])):
        return None  # the role word must follow the name closely: "`Shape` with variants", not a later clause
    role_form = ROLE_WORDS[role.group(1).lower()]
    if form is not None and form != role_form:
        return None
    ticked = "`" in sentence[role.end():]
    text = sentence.replace("`", " ")
    parts: list[str] = []
    pos = role.end()
    while True:
        stop = _element(text, pos, role_form, ticked)
        if stop is None:
            return None
        parts.append(" ".join(text[pos:stop].split()))
        rest = text[stop:]
        if not rest.strip() or rest.strip() in (",", ":"):
            break
        sep = _SEPARATOR.match(text, stop)
        if sep is None or not sep.group().strip():
            return None  # "Green lights": not a plain list
        nxt = sep.end()
        word = _WORD.match(text, nxt)
        if word is not None and word.group().lower() in _LIST_ENDS:
            break
        if _element(text, nxt, role_form, ticked) is None:
            return None  # ", each with a size": the list says more than its elements
        pos = nxt
    if role_form == "sum":
        return "| " + " | ".join(parts)
    return "{ " + ", ".join(parts) + " }"


def listed_signature(name: str, after: str, form: str | None) -> str | None:
    """The canonical body of type ``name`` when the words ``after`` it list its variants or fields
    (:func:`listed_shape`), else ``None``."""
    shape = listed_shape(after, form)
    if shape is None:
        return None
    item = parse_item(f"type {name} = {shape}")
    return type_signature(item) if isinstance(item, syntax.TypeDecl) and item.has_eq else None
