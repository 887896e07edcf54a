"""The constraint grammar for decoding Vox: ``constraint.lark`` plus a start rule per use.

``constraint.lark`` (next to this module) is an over-approximation of strict-mode Vox in the
Lark dialect of llguidance (its header lists the widenings). :func:`constraint_grammar` adds the
start rule: a bare ``program``; ``code`` (one ```vox block and nothing else); ``first`` (the
answer opens with a ```vox block, then free prose: the system prompt's "put the whole program in
one fenced block ... after the block, at most two short sentences"); or ``response`` (free prose
with any number of ```vox blocks, each of which must hold a complete program before its closing
fence). This module only builds text: it imports nothing outside ``vox_lang``, and
the decoder (``pipeline.decoding_constraint``) compiles it.

**Layout.** Where a newline may stand is exactly layout's rule (spec §1, the front end's
:data:`vox_lang.layout.L2_AFTER` / :data:`~vox_lang.layout.L3_BEFORE`): :func:`_body` adds optional
newlines after every L2 literal and before every L3 literal of a rule, and anywhere inside
``(``/``[`` (L1) through a ``_p`` copy of each rule that stands both inside and outside parentheses
(:data:`CONTEXTUAL`). Elsewhere a newline separates (statements, items, fields, arms, children)
or is not allowed: ``fn f()`` on one line and ``to int {`` on the next, or ``for x in xs`` then
``{``, cannot be decoded (the front end reads E0201). Before this the grammar let newlines stand
on both sides of every such literal anywhere, and the decoder wrote those programs.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Final

from vox_lang.layout import L2_AFTER, L3_BEFORE

GRAMMAR_PATH: Final = Path(__file__).with_name("constraint.lark")
MODES: Final = ("program", "code", "first", "response")

# Prose is lexed one character at a time (a backtick only when a non-backtick follows), so three
# backticks can only ever be a fence: a ```vox block cannot be smuggled through as prose, and
# other fences (```python) are not allowed. One or two backticks may end the answer. The opening
# fence ends its line (```vox then a newline), as the eval's block extractor and Markdown expect;
# so does the closing one (```, then a newline or the end of the answer): in Markdown (CommonMark)
# ```.: str or ````` then more text on that line is no closing fence, the block would read on.
_STARTS: Final[dict[str, str]] = {
    # llguidance applies %ignore only between lexemes: leading blank/comment lines are explicit.
    # A bare program may end in a comment with no newline after it (in a block, the fence line follows).
    "program": ("start: LEAD? program TAIL?\nLEAD: /([ \\t]|\\r?\\n|\\/\\/[^\\n\\r]*)+/\n"
                "TAIL: /[ \\t]*\\/\\/[^\\n\\r]*/\n"),
    "code": 'start: FENCE program FENCE_END\nFENCE: /```vox[ \\t]*\\r?\\n/\nFENCE_END: "```"\n',
    "first": (
        "start: FENCE program FENCE_END (AFTER prose TICKS?)?\n"
        'FENCE: /```vox[ \\t]*\\r?\\n/\nFENCE_END: "```"\n'
        "AFTER: /[ \\t]*\\r?\\n/\n"
        "prose: PROSE_CHAR*\n"
        "PROSE_CHAR: /[^`]|`[^`]|``[^`]/\n"
        "TICKS: /`{1,2}/\n"
    ),
    "response": (
        "start: prose (FENCE program FENCE_END AFTER prose)* (TICKS | FENCE program FENCE_END)?\n"
        'FENCE: /```vox[ \\t]*\\r?\\n/\nFENCE_END: "```"\n'
        "AFTER: /[ \\t]*\\r?\\n/\n"
        "prose: PROSE_CHAR*\n"
        "PROSE_CHAR: /[^`]|`[^`]|``[^`]/\n"
        "TICKS: /`{1,2}/\n"
    ),
}


#: L2 (§1): a newline right after one of these is dropped; ``(`` and ``[`` open an L1 region
_L2: Final = L2_AFTER | {"(", "["}
#: L3 (§1): a newline right before one of these is dropped; before ``)``/``]`` it stands inside an
#: L1 region; before ``}`` the brace rules hold an optional newline anyway
_L3: Final = L3_BEFORE | {")", "]", "}"}

#: rules that stand both outside parentheses (layout: newlines only where L2/L3 drop them or where
#: the rule separates with them) and inside ``(``/``[`` (L1: newlines anywhere). Each gets a ``_p``
#: copy for the inside; the rules a brace opens (``block``, ``record``, ``match_arms``, ``children``)
#: are layout again wherever they stand, so they have none.
CONTEXTUAL: Final = ("expr", "or_e", "and_e", "eq_e", "cmp_e", "add_e", "mul_e", "unary", "postfix", "call",
                     "primary", "list", "if_", "match", "lambda", "spawn", "type", "ret_ty", "field", "pattern")

#: the expression rules down to ``call``: each gets an ``_nb`` copy without a children block, for
#: the heads of ``if``/``while``/``for``/``match`` (spec §2 ``expr_nb``: there ``{`` opens the body;
#: the grammar read ``match x () {`` with the arms as children, the front end as arms, E0201).
#: Inside parentheses they get an ``_nb_p`` copy too: the front end reads ``f(match g() { } { ... })``
#: with empty arms (E0201), so there the grammar may not read ``{ }`` as ``g()``'s children either.
NO_BLOCK: Final = ("expr", "or_e", "and_e", "eq_e", "cmp_e", "add_e", "mul_e", "unary", "postfix", "call")
_NB_REF: Final = re.compile(r"\b(" + "|".join(NO_BLOCK) + r")\b")

#: rules a brace opens: layout inside, but inside parentheses a newline may stand before them
#: (``xs.map(fn(x: int) to int`` newline ``{ ... })``)
_BRACED: Final = frozenset({"block", "record", "match_arms", "children"})

_RULE: Final = re.compile(r"^([a-z_][a-z0-9_]*):\s")
_LITERAL: Final = re.compile(r'"(?:[^"\\]|\\.)*"')
_REF: Final = re.compile(r"\b[a-z_][a-z0-9_]*\b")
#: rules whose literals are words after ``.``/field names (no layout: ``msg.to`` may end a line)
_VERBATIM: Final = frozenset({"word"})


def _literal(text: str, inside: bool) -> str:
    """One quoted grammar literal with the newlines layout lets stand around it."""
    word = text[1:-1]
    before = inside or word in _L3
    after = inside or word in _L2
    if not (before or after):
        return text
    return "(" + ("NL* " if before else "") + text + (" NL*" if after else "") + ")"


def _rewrite(body: str, inside: bool) -> str:
    """A rule body with layout's newlines added around its literals. ``inside``: the rule stands
    inside parentheses. Literals between a ``(``/``[`` literal of the body and its closer are
    inside too, and references there to :data:`CONTEXTUAL` rules become their ``_p`` copies.

    Raises:
        ValueError: the body's bracket literals do not balance.
    """
    out, pos, depth = [], 0, 0
    for m in _LITERAL.finditer(body):
        out.append(_refs(body[pos:m.start()], inside or depth > 0))
        word = m.group()[1:-1]
        depth -= word in (")", "]")
        out.append(_literal(m.group(), inside or depth > 0))
        depth += word in ("(", "[")
        pos = m.end()
    out.append(_refs(body[pos:], inside or depth > 0))
    if depth:
        raise ValueError(f"constraint grammar: unbalanced bracket literals in {body.strip()!r}")
    return "".join(out)


def _refs(text: str, inside: bool) -> str:
    """Rule references inside parentheses: :data:`CONTEXTUAL` ones become their ``_p`` copies and
    :data:`_BRACED` ones may follow a newline."""
    if not inside:
        return text

    def one(m: re.Match[str]) -> str:
        name = m.group()
        if name in CONTEXTUAL or name.endswith("_nb") and name[:-3] in NO_BLOCK:
            return name + "_p"
        return f"(NL* {name})" if name in _BRACED else name

    return _REF.sub(one, text)


def _rules(lines: list[str]) -> list[tuple[str | None, str]]:
    """Split the grammar into ``(rule name, text)`` chunks (name None: terminals, comments)."""
    chunks: list[tuple[str | None, str]] = []
    for line in lines:
        m = _RULE.match(line)
        if m:
            chunks.append((m.group(1), line))
        elif line.startswith((" ", "\t")) and chunks and chunks[-1][0] is not None:
            chunks[-1] = (chunks[-1][0], chunks[-1][1] + "\n" + line)
        else:
            chunks.append((None, line))
    return chunks


@cache
def _body() -> str:
    """``constraint.lark`` with layout's newlines around the literals of its rules, a ``_p``
    copy of every :data:`CONTEXTUAL` rule and an ``_nb`` copy of every :data:`NO_BLOCK` rule
    (module docstring)."""
    out = []
    for name, text in _rules(GRAMMAR_PATH.read_text(encoding="utf-8").splitlines()):
        if name is None or name in _VERBATIM:
            out.append(text)
            continue
        head, body = text.split(":", 1)
        out.append(head + ":" + _rewrite(body, name.endswith("_p")))
        if name in CONTEXTUAL:
            out.append(f"{name}_p:" + _rewrite(body, True))
        if name in NO_BLOCK:
            nb = _NB_REF.sub(r"\1_nb", body.replace(" children?", ""))
            out.append(f"{name}_nb:" + _rewrite(nb, False))
            out.append(f"{name}_nb_p:" + _rewrite(nb, True))
    return "\n".join(out) + "\n"


def constraint_grammar(mode: str = "response") -> str:
    """The Lark text of the constraint for ``mode`` (``program``, ``code`` or ``response``).

    Raises:
        ValueError: unknown ``mode``.
        OSError: ``constraint.lark`` cannot be read.
    """
    if mode not in _STARTS:
        raise ValueError(f"unknown constraint mode {mode!r}: use {', '.join(MODES)}")
    return _STARTS[mode] + _body()
