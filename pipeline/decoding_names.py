"""Name- and request-aware masking (issue 9 item 3), a LogitsProcessor layered on the grammar.

Inside a ```vox block, where an identifier is a *use* (:mod:`pipeline.decoding_position` decides
from the left context: after an operator, ``=``, ``ret``, ``if``, ``:``, ``->``, inside ``[...]``,
at a statement start in a block, ...), the identifier being written must stay a prefix of a name
that resolves: one in scope there (:func:`pipeline.decoding_scan.visible_names`: spec §3 scopes,
read from the open braces), a prelude builtin, constructor, view element or type, a reserved word
the position allows, or a name the request mentions. Right after an operand on its line only
``and``/``or``/``to``/``in``/``as``/``else`` may be written (so the grammar's lexer cannot split
``andx`` into ``and x``), and what the operand is rules out some suffixes
(:func:`pipeline.decoding_position.no_suffix`: no member of a prelude function, no call of a
string or number, a prelude builtin that is an operator's operand or a builtin's argument is
called). Where the left context declares the type an expression must have (``ret`` in a function
with a builtin return type, an annotated ``let``, the operand of ``not``, a builtin's argument,
the right operand of arithmetic on a literal), a start that can never give that type is refused
too (:func:`pipeline.decoding_types.head_rule`: ``ret len(`` in a function returning ``str``;
names count by the types the program gives them, :mod:`pipeline.decoding_typed`), and after an
operand whose type is known, an operator its type does not take or one after which the
expression can no longer give the type its place needs, and the end of that expression while its
type is not that one (:func:`pipeline.decoding_operators.operator_rule`: ``ret text +`` in a
function returning ``int``).
After ``.`` a member name stays a prefix of a member of the receiver's type where that type is
read, and is never a lone ``_`` (:mod:`pipeline.decoding_members`: ``s.len`` on a ``str``,
``p.s`` on a ``ProcessOutput``, E0512); in a type, a built-in type keeps its number of type
arguments (:mod:`pipeline.decoding_arity`: ``Map[str]``, ``int[``, a bare ``List``, E0409).
A use must resolve in its namespace (:mod:`pipeline.decoding_namespace`): no value in a type
(``type Shape = range``), no type in an expression (``for v in bool``), only an actor in
``spawn(``. Declarations, fields, patterns and anything the context cannot decide stay free,
except that a parameter's name may not repeat one of the same list (``fn greet(n: str, n: int)``,
:func:`pipeline.decoding_namespace.parameters_so_far`).

Forward references: Vox items may be used before they are declared; the mask admits only those
the *request* names (``vox_lang.requests``), so a helper the request does not name must be
written before its first use. This trades a few valid orders for blocking the undefined names
(E0401/E0403) that dominate the tiny model's failures.

Request-aware: :class:`pipeline.decoding_hold.RequestHold` holds the block open until the items the
request names are declared, forces their headers and closes the block once they are; what the
request is comes from :mod:`pipeline.decoding_request`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from typing import Any

import numpy as np
from transformers import LogitsProcessor

from pipeline.decoding_arity import arity_mask, arity_rule
from pipeline.decoding_calls import CallRule, call_rule
from pipeline.decoding_copy import COPY_BIAS, add_bias, copy_ids
from pipeline.decoding_done import Extras
from pipeline.decoding_fence import open_block
from pipeline.decoding_hold import NameReport, RequestHold
from pipeline.decoding_layout import in_literal
from pipeline.decoding_logits import finite_scores, mask_rows, row_scores
from pipeline.decoding_members import member_mask, member_rule
from pipeline.decoding_namespace import namespace_refusals, parameters_so_far
from pipeline.decoding_operators import operator_rule
from pipeline.decoding_position import (
    AFTER_MODIFIER,
    FOLLOW,
    FOLLOWERS,
    HANDLER,
    MODIFIED,
    NUMBER,
    STMT,
    TOP,
    USE,
    Position,
    Suffix,
    no_suffix,
    position,
)
from pipeline.decoding_request import request_spec, request_text
from pipeline.decoding_returns import must_return
from pipeline.decoding_scan import IDENT_CHARS, local_names, visible_names
from pipeline.decoding_scope import (
    BLOCK_WORDS,
    HANDLER_WORDS,
    NOT_STARTERS,
    PRELUDE_NAMES,
    TOP_WORDS,
    declared_names,
)
from pipeline.decoding_tokens import TokenTable, token_table
from pipeline.decoding_types import head_rule
from vox_lang.requests import RequestSpec

log = logging.getLogger(__name__)

__all__ = ["PRELUDE_NAMES", "NameMask", "NameReport", "declared_names", "position", "request_spec", "request_text",
           "token_table"]


class NameMask(LogitsProcessor):
    """Mask identifier uses to resolvable names and hold the fence until requested items exist.

    Args:
        tokenizer: the model's tokenizer (``table``: its :func:`token_table`, cached by the caller).
        specs: one :class:`RequestSpec` per batch row (``RequestSpec()`` when nothing is named).
        prompt_len: padded prompt length of the batch.
        eos_ids: ids that end a completion (held back, like the fence, while items are missing).
        names: apply the name mask (a).
        require: apply the request mask (b): hold the fence, and force the headers of missing
            requested items at item starts (:mod:`pipeline.decoding_declare`).
        extras: per row, what the request asks for besides its items
            (:func:`pipeline.decoding_done.request_extras`); with ``require``, a block whose
            requested items are all declared may then only close or go on with those
            (:mod:`pipeline.decoding_done`). ``None``: that stop rule is off.
        budget: the generation's ``max_new_tokens``; with ``require``, once fewer than
            :func:`pipeline.decoding_done.close_margin` tokens are left, a block closes at its next
            top-level item start instead of starting an item it has no room to finish.
        ended: rows another processor ends (a stalled block,
            :class:`pipeline.decoding_constraint.GrammarProcessor`), never masked here; read at
            each step (the caller keeps adding to it).

    With ``names``, the tokens that begin a local name at a use position also get
    :attr:`copy_bias` added (:mod:`pipeline.decoding_copy`; ``0`` turns it off).

    Attributes:
        row_logits: ``f(scores, row) -> float numpy [vocab]``, how a rule that reads the model's
            logits (the script rule of :mod:`pipeline.decoding_hold`) gets them; default
            :func:`pipeline.decoding_logits.row_scores`. The mask worker
            (:mod:`pipeline.decoding_remote`) asks the main process for them instead.
    """

    #: logit bonus for a local name where an expression starts (:data:`pipeline.decoding_copy.COPY_BIAS`)
    copy_bias: float = COPY_BIAS

    def __init__(self, tokenizer: Any, table: TokenTable, specs: list[RequestSpec], prompt_len: int,
                 eos_ids: Iterable[int] = (), names: bool = True, require: bool = True,
                 extras: Sequence[Extras] | None = None, budget: int | None = None,
                 ended: set[int] | None = None) -> None:
        self.tokenizer, self.table, self.specs, self.prompt_len = tokenizer, table, specs, prompt_len
        self.ended = ended if ended is not None else set()
        self.names = names
        self.report = NameReport()
        self.hold = RequestHold(table, specs, eos_ids, extras, budget, self.report) if require else None
        self.row_logits: Callable[[Any, int], Any] = row_scores
        self._vocab = len(tokenizer)
        # (position, names, width, refused, fresh_refused)
        self._masks: dict[tuple[Position, frozenset[str], int, frozenset[str], frozenset[str]], Any] = {}
        self._scopes: dict[tuple[frozenset[str], frozenset[str]], tuple[frozenset[str], frozenset[str]]] = {}
        self._copies: dict[tuple[bool, bool, frozenset[str]], Any] = {}
        self._texts = [""] * len(specs)
        self._seen = [0] * len(specs)
        self._pieces = table.pieces

    def _text(self, row: int, ids: Any, last: int) -> str:
        """The row's generated text, decoded incrementally (only the ids new since the last call;
        ``last``: the row's last id). One new id, the usual case, is a lookup in the table's
        token texts (special tokens read as ``""``, as ``decode(skip_special_tokens=True)``)."""
        count = int(ids.shape[0]) - self.prompt_len
        seen = self._seen[row]
        if count == seen + 1:
            self._texts[row] += self._pieces[last] if 0 <= last < len(self._pieces) else ""
        elif count != seen:
            new = ids[self.prompt_len + seen:].tolist()
            self._texts[row] += self.tokenizer.decode(new, skip_special_tokens=True)
        self._seen[row] = count
        return self._texts[row]

    def _in_scope(self, scanned: frozenset[str], requested: frozenset[str]) -> tuple[frozenset[str], frozenset[str]]:
        """``(visible, allowed)``: the names in scope (``scanned``) with the ``requested`` ones,
        and those with the prelude's. The same sets come back for the same names, step after step
        (a set built anew each step costs its union and, as a cache key, its hash)."""
        key = (scanned, requested)
        found = self._scopes.get(key)
        if found is None:
            if len(self._scopes) >= 256:
                self._scopes.clear()
            visible = scanned | requested
            found = self._scopes[key] = (visible, visible | PRELUDE_NAMES)
        return found

    def _name_mask(self, pos: Position, names: frozenset[str], width: int,
                   refused: frozenset[str] = frozenset(), fresh_refused: frozenset[str] = frozenset()) -> Any | None:
        """Bool mask ``[width]`` of the tokens that keep the identifiers at ``pos`` what their
        kinds allow (``names``: what a use may resolve to; ``refused`` / ``fresh_refused``:
        prelude words the declared types rule out for the word being written / one started after
        whitespace, :func:`pipeline.decoding_types.head_rule`), or ``None`` when nothing is
        restricted. Cached: the name set changes only when the block declares something new."""
        kinds = (pos.cont, pos.fresh)
        if not any(k in (USE, STMT, TOP, FOLLOW, NUMBER, MODIFIED, HANDLER) for k in kinds):
            return None
        key = (pos, names if {USE, STMT, TOP} & set(kinds) else frozenset(), width, refused, fresh_refused)
        cached = self._masks.get(key)
        if cached is None:
            cached = self._masks[key] = self._build_mask(pos, names, width, refused, fresh_refused)
        return cached

    def _call_mask(self, rule: CallRule, width: int) -> Any:
        """Bool mask ``[width]`` for a prelude builtin's call (:func:`pipeline.decoding_calls.call_rule`)."""
        if rule.only_close:
            return self.table.class_mask(width, on=("close_led", "space_only"))
        return self.table.class_mask(width, off=("close_led" if rule.no_close else "empty_call_led",))

    @staticmethod
    def _names_for(kind: str, names: frozenset[str]) -> frozenset[str] | None:
        if kind == USE:
            return names - NOT_STARTERS
        if kind == STMT:
            return (names - NOT_STARTERS) | BLOCK_WORDS
        if kind == TOP:
            return (names - NOT_STARTERS) | TOP_WORDS
        if kind == MODIFIED:
            return AFTER_MODIFIER
        if kind == HANDLER:
            return HANDLER_WORDS
        return FOLLOWERS if kind == FOLLOW else None

    def _build_mask(self, pos: Position, names: frozenset[str], width: int, refused: frozenset[str],
                    fresh_refused: frozenset[str]) -> Any:
        off: list[str] = []  # token classes switched off, then the compatible ids switched back on
        on: list[Any] = []
        cont = self._names_for(pos.cont, names)
        fresh = self._names_for(pos.fresh, names)
        cont = cont - refused if cont is not None else None
        fresh = fresh - fresh_refused if fresh is not None else None
        if pos.cont == NUMBER:  # only digits may be glued on a number (then anything that ends it)
            off.append("glued")
            on.append(self._digit_ids())
        if cont is not None:
            off.append("glued")
            on += self._on_ids(pos.cont, pos.partial, cont, glued=True, refused=refused)
            if not pos.partial and pos.cont in (USE, STMT, TOP):
                on.append(self.table.ids("digit_led"))
        if fresh is not None and (cont is None or not pos.partial or pos.partial in cont):
            off.append("ws_ident")
            on += self._on_ids(pos.fresh, "", fresh, glued=False, refused=fresh_refused)
        mask = self.table.class_mask(max(width, self._vocab), off=tuple(sorted(set(off)))).copy()  # cut below
        for ids in on:
            mask[ids] = True
        if cont is not None and pos.partial and pos.partial not in cont:
            mask[self.table.ids("terminators")] = False  # the identifier must go on until it names something
        return mask[:width]

    def _on_ids(self, kind: str, partial: str, names: Iterable[str], glued: bool,
                refused: frozenset[str] = frozenset()) -> list[Any]:
        """Id arrays of the tokens that keep an identifier a prefix of one of ``names``: glued on
        ``partial`` (``glued``) or starting a fresh one after whitespace. The prelude's share
        (most of the names, less ``refused``) is computed once per kind, ``partial`` and
        ``refused`` and kept in the table."""
        t = self.table

        def ids(among: Iterable[str]) -> list[int]:
            return t.name_prefix_ids(among, partial, glued)

        key = (kind + ("" if glued else "+ws") + ("-" + ",".join(sorted(refused)) if refused else ""), partial)
        static = t.cached(key, lambda: np.asarray(
            ids((self._names_for(kind, PRELUDE_NAMES) or frozenset()) - refused), dtype=np.int64))
        own = ids(n for n in names if n not in PRELUDE_NAMES)
        return [static, np.asarray(own, dtype=np.int64)] if own else [static]

    def _digit_ids(self) -> Any:
        """Glued ids whose identifier characters are all digits (``5``, ``25)``), once per table."""
        t = self.table
        return t.cached(("number", ""), lambda: np.asarray(
            [i for m in (t.lead_only, t.lead_ends) for lead, group in m.items() if lead.isdigit() for i in group],
            dtype=np.int64))

    def _suffix_mask(self, no: Suffix, glued: bool, width: int) -> Any | None:
        """Bool mask ``[width]`` without the tokens :func:`~pipeline.decoding_position.no_suffix`
        rules out (``glued``: the operand's word ends the text, so it may still go on); ``None``
        if none is."""
        if no == Suffix():
            return None
        if no.must_assign:  # a named argument's name: `=` next (the word may still go on)
            return self.table.class_mask(width, on=("assign_led",) + (("glued",) if glued else ()))
        if no.must_call:  # inside `(`/`[` whitespace, line breaks included, may come first (L1)
            return self.table.class_mask(width, on=("call_led",) + (("space_only",) if no.newline else ())
                                         + (("glued",) if glued else ()))
        return self.table.class_mask(width, off=tuple(name for flag, name in (
            (no.member, "member_led"), (no.call, "call_led"), (no.operator, "operator_led")) if flag))

    def _duplicate_mask(self, partial: str, names: frozenset[str], width: int) -> Any:
        """Bool mask ``[width]`` refusing the tokens that would end the parameter name being
        written (``partial`` so far, ``""`` right after ``(``/``,``) as one of ``names``, the
        parameters already declared in the same parentheses (cached)."""
        t = self.table

        def build() -> Any:
            mask = np.ones(max(width, self._vocab), dtype=np.bool_)
            for name in names:
                if not name.startswith(partial):
                    continue
                rest = name[len(partial):]
                if not rest:
                    mask[t.ids("terminators")] = False  # the name must go on
                    continue
                mask[list(t.lead_ends.get(rest, ()))] = False
                if not partial:
                    mask[list(t.ws_lead_ends.get(name, ()))] = False
            return mask[:width]

        return t.cached(("duplicates", f"{partial}:{','.join(sorted(names))}:{width}"), build)

    def _word_end_mask(self, width: int) -> Any:
        """Fallback when no resolvable name fits: tokens that end the identifier here (no glued
        identifier characters), so an unresolvable word stays short instead of growing freely."""
        return self.table.class_mask(width, off=("glued",))

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        rows = min(len(self.specs), scores.shape[0])
        last = input_ids[:rows, -1].tolist()
        finite: Any = None  # bool numpy [rows, vocab]: isfinite(scores), computed once the first row needs it
        chosen: list[tuple[int, Any, Any]] = []  # (row, mask, fallback mask when no name fits)
        apply: list[tuple[int, Any]] = []  # (row, the mask it gets)
        biased: list[tuple[int, Any]] = []  # (row, ids of local names to favour)
        for row in range(rows):
            if row in self.ended:
                continue  # ends now (only EOS is allowed): nothing to mask
            code = open_block(self._text(row, input_ids[row], last[row]))
            if code is None:
                continue  # outside a block
            mask: Any = None
            word_end = None
            if self.names and not in_literal(code):  # in a string or comment every word is free
                visible, allowed = self._in_scope(visible_names(code), self.specs[row].names)
                pos = position(code)
                if self.copy_bias:
                    favour = copy_ids(self.table, code, pos, local_names(code), self._copies)
                    if favour is not None:
                        biased.append((row, favour))
                # the declared types' rule for the word at the end, and for one after whitespace
                rule = head_rule(code, visible)
                fresh_rule = rule if code[-1:] in (" ", "\t") else head_rule(code + " ", visible)
                refused, fresh_refused = namespace_refusals(code, pos.partial, pos.cont == USE, pos.fresh == USE,
                                                            allowed, self.specs[row].actors)
                mask = self._name_mask(pos, allowed, scores.shape[1],
                                       refused | (rule.words if rule is not None else frozenset()),
                                       fresh_refused | (fresh_rule.words if fresh_rule is not None else frozenset()))
                # only a member of the receiver's type after `.`; a built-in type's argument count
                member, arity = member_rule(code, pos.partial, visible), arity_rule(code, pos.partial)
                for extra in (member_mask(self.table, member, scores.shape[1]) if member is not None else None,
                              arity_mask(self.table, arity, scores.shape[1]) if arity is not None else None):
                    if extra is not None:
                        mask = extra if mask is None else mask & extra
                numbers = "number_led" if rule is not None and rule.numbers else \
                    "ws_number_led" if fresh_rule is not None and fresh_rule.numbers else ""
                if numbers:
                    no_number = self.table.class_mask(scores.shape[1], off=(numbers,))
                    mask = no_number if mask is None else mask & no_number
                starts = tuple(cls for flag, cls in (("lists", "bracket_led"), ("strings", "quote_led"),
                                                     ("braces", "brace_led"), ("parens", "call_led"))
                               if any(r is not None and getattr(r, flag)  # `rule`: only where no word is begun
                                      for r in ((rule,) if not pos.partial else ()) + (fresh_rule,)))
                if starts:
                    no_start = self.table.class_mask(scores.shape[1], off=starts)
                    mask = no_start if mask is None else mask & no_start
                if mask is not None and pos.partial:
                    word_end = self._word_end_mask(scores.shape[1])
                duplicates = parameters_so_far(code[:len(code) - len(pos.partial)])
                if duplicates:
                    again = self._duplicate_mask(pos.partial, duplicates, scores.shape[1])
                    mask = again if mask is None else mask & again
                call = call_rule(code, visible)
                if call is not None:
                    calls = self._call_mask(call, scores.shape[1])
                    mask = calls if mask is None else mask & calls
                suffix = self._suffix_mask(no_suffix(code, visible, self.specs[row].functions),
                                           code[-1:] in IDENT_CHARS, scores.shape[1])
                if suffix is not None:
                    mask = suffix if mask is None else mask & suffix
                operators = operator_rule(code, visible)
                if operators is not None:
                    after = self.table.class_mask(scores.shape[1], off=operators.classes())
                    mask = after if mask is None else mask & after
                if must_return(code):  # E0508: no `}` closes a body that returns on no path yet
                    open_body = self.table.class_mask(scores.shape[1], off=("body_close",))
                    mask = open_body if mask is None else mask & open_body
            if self.hold is not None:
                if finite is None:
                    finite = finite_scores(scores)
                mask, is_forced = self.hold.step(row, code, self._seen[row], finite[row], mask,
                                                 partial(self.row_logits, scores, row))
                if is_forced:
                    apply.append((row, mask))
                    continue
            if mask is not None:
                chosen.append((row, mask, word_end))
        if chosen:
            if finite is None:
                finite = finite_scores(scores)
            if len(chosen) == 1:  # one row (a served request): no stacking
                fits = [bool((finite[chosen[0][0]] & chosen[0][1]).any())]
            else:
                stacked = np.stack([m for _, m, _ in chosen])
                fits = (finite[[row for row, _, _ in chosen]] & stacked).any(axis=1).tolist()
            for (row, mask, word_end), ok in zip(chosen, fits):
                if ok:
                    apply.append((row, mask))
                    continue
                if word_end is not None and bool((finite[row] & word_end).any()):
                    self.report.events.append(f"row {row}: no resolvable name fits here; the word ends")
                    apply.append((row, word_end))
                    continue
                self.report.events.append(f"row {row}: no resolvable name fits here; name mask skipped")
                self.report.skips += 1
                self.report.skipped_rows.add(row)
        if biased:
            add_bias(scores, [row for row, _ in biased], [ids for _, ids in biased], self.copy_bias)
        if apply:
            mask_rows(scores, [row for row, _ in apply], [m for _, m in apply])
            self.report.masked_steps += len(apply)
        return scores
