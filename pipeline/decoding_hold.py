"""Request-aware masking (issue 9 item 3b): hold a ```vox block open until the items the request
names are declared, force their headers, and close the block once they are.

When the request names items (``late_orders(days: List[int]) to int``), the block cannot be
closed (no token holding a backtick, no EOS) while :func:`vox_lang.requests.missing_items` still
lists one of them, and at each item start the header of the next missing requested item is
forced (``fn late_orders(days: List[int]) to int {``; the rule is in :mod:`pipeline.decoding_declare`).
Once every requested item is declared, the block may only close (or go on with what the request
also asks for, e.g. ``@test`` functions) at the next item start: :mod:`pipeline.decoding_done`.
A route path the request gives is forced at a route start of a ``routes`` block, which closes
once they are all written (:mod:`pipeline.decoding_routes`), whether or not the request names items.
A script request's block calls the requested function at top level before it may close: the
fence waits, and where the model would close it the call is forced (:mod:`pipeline.decoding_script`).
When the token budget is nearly spent, or the block has derailed (:mod:`pipeline.decoding_derail`),
it winds down and closes at its next item start whatever the request.

:class:`RequestHold` keeps this per-row state for one batch; :class:`pipeline.decoding_names.NameMask`
owns one and combines its mask with the name mask's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pipeline.decoding_declare import handler_header, handler_start, header, item_start
from pipeline.decoding_derail import derailed_at
from pipeline.decoding_done import (
    Extras,
    allowed_after_done,
    boundary,
    close_margin,
    closing_mask,
    comment_end_mask,
    decorator_line,
    finisher_mask,
)
from pipeline.decoding_layout import comment_length, ends_in_string
from pipeline.decoding_routes import route_start, written_paths
from pipeline.decoding_scan import IDENT_CHARS, scan
from pipeline.decoding_scope import declared_names, imported_std
from pipeline.decoding_script import RunsMemo, script_call, would_close
from pipeline.decoding_tokens import TokenTable
from vox_lang.parser import TreeMemo
from vox_lang.requests import RequestSpec, missing_items

#: items of a block remembered by their parse trees (:class:`vox_lang.parser.TreeMemo`): up to
#: this many tokens each (a block is at most a few hundred), this many trees per batch
_MEMO_TOKENS = 2048
_MEMO_SIZE = 256
#: the key under which a script's forced call is remembered in ``RequestHold._forced`` (not a Vox name)
_SCRIPT_CALL = "<script call>"


@dataclass
class NameReport:
    """What the name and request masks did: steps masked, stop-when-done steps, and events
    (fallbacks where no token was left, see :attr:`skips`)."""

    masked_steps: int = 0
    events: list[str] = field(default_factory=list)
    done_steps: int = 0  # steps where a finished block could only close (pipeline.decoding_done)
    closing_steps: int = 0  # steps where a nearly spent budget or a derailed block allowed only closers
    derailed_rows: set[int] = field(default_factory=set)  # batch rows whose block derailed (pipeline.decoding_derail)
    skips: int = 0  # steps where the name mask left no token and was skipped (the grammar alone chose)
    skipped_rows: set[int] = field(default_factory=set)  # batch rows with at least one such step


def _any_left(finite: Any, mask: Any) -> bool:
    """Whether ``mask`` (bool numpy ``[vocab]``) leaves a token whose score is finite (``finite``:
    bool numpy ``[vocab]``, the row's ``isfinite(scores)``)."""
    return bool((finite & mask).any())


class RequestHold:
    """Per-row request state of one batch (see the module docstring).

    Args:
        table: the tokenizer's :class:`~pipeline.decoding_tokens.TokenTable`.
        specs: one :class:`RequestSpec` per batch row (``RequestSpec()`` when nothing is named).
        eos_ids: ids that end a completion (held back, like the fence, while items are missing).
        extras: per row, what the request asks for besides its items
            (:func:`pipeline.decoding_done.request_extras`); ``None``: the stop-when-done rule is off.
        budget: the generation's ``max_new_tokens`` (``None``: no closing when short).
        report: where steps and events are counted (shared with the name mask).
    """

    def __init__(self, table: TokenTable, specs: list[RequestSpec], eos_ids: Iterable[int] = (),
                 extras: Sequence[Extras] | None = None, budget: int | None = None,
                 report: NameReport | None = None) -> None:
        self.table, self.specs, self.eos_ids = table, specs, list(eos_ids)
        self.extras = list(extras) if extras is not None else None
        self.budget = budget
        self.report = report if report is not None else NameReport()
        self._hold: Any = None  # bool mask without backtick tokens and EOS, built on first use
        self._lines: dict[int, tuple[str, set[str]]] = {}  # row -> (finished lines, the names they declare)
        self._parsed: dict[int, tuple[str, frozenset[str]]] = {}  # row -> (text, missing_items of it)
        self._satisfied: set[int] = set()  # rows whose requested items are all declared
        self._forced: list[set[str]] = [set() for _ in specs]  # requested names already forced per row
        self._forcing: list[tuple[str, int, str] | None] = [None] * len(specs)  # (header, start in code, name)
        self._no_force = [False] * len(specs)
        self._derail: set[int] = set()  # rows whose block derailed and winds down (pipeline.decoding_derail)
        self._derail_checked: dict[int, int] = {}  # row -> length of the text already looked at
        self._runs = RunsMemo()  # whether a row's block, at a boundary, calls anything when run
        self._closers = frozenset(self.table.backtick + self.eos_ids)  # ids that could close a block
        # parse trees of the items already written, shared by the rows' parses of their growing blocks
        self._trees = TreeMemo(max_tokens=_MEMO_TOKENS, size=_MEMO_SIZE)

    def step(self, row: int, code: str, seen: int, finite: Any, mask: Any | None,
             scores: Callable[[], Any] | None = None) -> tuple[Any | None, bool]:
        """One decoding step of ``row`` inside its open block ``code``, ``seen`` tokens generated.

        Args:
            finite: bool ``[vocab]``, which of the row's logits are finite now (the masks before
                this one set the rest to ``-inf``); a rule that would leave none of them is not applied.
            mask: the name mask's bool ``[vocab]`` mask so far, or ``None``.
            scores: gives the row's logits (float numpy ``[vocab]``), read only where a script's
                call is due (:func:`pipeline.decoding_script.would_close`); ``None``: the call is never forced.

        Returns:
            ``(mask, forced)``: the combined mask (``None``: nothing restricted); ``forced`` is
            true when a requested header is being forced (the mask then allows only its
            continuation, and the caller applies it as it is).
        """
        width = int(finite.shape[0])
        missing = False
        if self.specs[row] and row not in self._satisfied:
            # inside an open bracket the fence cannot close anyway (the grammar): no parse needed
            missing = bool(scan(code).stack) or self._missing_now(row, code.rstrip(), self._declared(row, code))
        short = self.budget is not None and self.budget - seen <= close_margin(self.budget)
        if missing and (short or row in self._derail) and self.specs[row].names <= self._declared(row, code):
            missing = False  # every requested name is written: let the block close (its garbage may never parse)
        wind = short or self._derailed(row, code, missing)
        if missing:
            mask = self._fence_hold(width) if mask is None else mask & self._fence_hold(width)
        held = self._fence_hold(width) if missing else None
        pending = None if missing or wind else self._script_target(row, code)
        call = None
        if pending is not None:  # a script's call comes before the block closes
            if scores is not None and would_close(self._closers, scores(), finite, mask):
                call = pending  # forced below
            else:
                both = self._fence_hold(width) if mask is None else mask & self._fence_hold(width)
                mask = both if _any_left(finite, both) else mask
        done = None
        if not missing and pending is None:
            done = self._done_mask(row, code, width, wind)
            if done is not None:
                both = done if mask is None else mask & done
                if _any_left(finite, both):
                    mask = both
                    self.report.done_steps += 1
                else:
                    done = None  # the grammar cannot close here yet (e.g. a header still wants its body)
        unwound = mask
        if wind and done is None:
            mask = self._wind_down(code, width, finite, mask, held)
        if (self.specs[row] or self._paths(row)) and not self._no_force[row]:
            ids = self._force_ids(row, code, call)
            if ids is not None:
                keep = np.zeros(width, dtype=np.bool_)
                keep[[i for i in ids if i < width]] = True
                both = keep if mask is None else mask & keep
                if mask is not unwound and not _any_left(finite, both):
                    # a header being forced outranks the wind-down (a short budget, a retry whose
                    # forced prefix spent most of it): cut in the middle, it would declare nothing
                    both = keep if unwound is None else unwound & keep
                if _any_left(finite, both):
                    return both, True
                self._no_force[row], self._forcing[row] = True, None
                self.report.events.append(f"row {row}: no allowed token continues the requested header; "
                                          "header forcing off for this row")
        return mask, False

    def _declared(self, row: int, code: str) -> set[str]:
        """:func:`declared_names` of ``code`` (anywhere, whatever the scope: what the request
        check reads): the row's finished lines cached, only the last line re-read."""
        cut = code.rfind("\n") + 1
        done = code[:cut]
        cached = self._lines.get(row)
        if cached is None or cached[0] != done:
            cached = self._lines[row] = (done, declared_names(done))
        return cached[1] | declared_names(code[cut:]) | imported_std(done)

    def _missing_now(self, row: int, code: str, declared: set[str]) -> bool:
        """Whether a requested item is still undeclared (a lexical check first; the parser only
        when every requested name is at least declared somewhere, and then once per finished
        line: a header is complete when its line is). Once satisfied, a row stays satisfied:
        the block only grows, and an item already parsed keeps its header."""
        if row in self._satisfied:
            return False
        spec = self.specs[row]
        if not spec.names <= declared:
            return True
        done = code[: code.rfind("\n") + 1] if not code.endswith(("{", "}")) else code
        missing = bool(self._missing_items(row, done))
        if not missing:
            self._satisfied.add(row)
        return missing

    def _force_ids(self, row: int, code: str, call: str | None = None) -> list[int] | None:
        """Ids continuing the header being forced for ``row`` (``None``: nothing forced here):
        a missing item's header at a top-level item start, a missing handler's inside an actor,
        a requested route's path (:meth:`_route_target`), else the script's ``call`` when one is
        due (:meth:`_script_target`)."""
        state = self._forcing[row]
        if state is not None:
            target, start, name = state
            written = code[start:]
            if len(written) < len(target) and target.startswith(written):
                return self._continuing(row, code, target, written)
            self._forcing[row] = None  # complete (a last token may run past it): the next item may start here
            if written.lstrip("\n").startswith("@"):
                self._forced[row].discard(name)  # a decorator came first: force on the next line
        route = self._route_target(row, code)
        if route is not None:
            return self._begin(row, code, route, route)
        if row in self._satisfied or not self.specs[row]:
            # every requested item is declared (or none is named): only a script's call is left
            return self._begin(row, code, call, _SCRIPT_CALL) if call is not None else None
        at_handler = False
        if not item_start(code):
            at_handler = handler_start(code)
            if not at_handler:
                return None
        spec = self.specs[row]
        missing = self._missing_items(row, code.rstrip())
        if at_handler:
            missing -= declared_names(code)  # written in this (still open) actor already
        make = handler_header if at_handler else header
        item = next((i for i in spec.items if i.name in missing and i.name not in self._forced[row]
                     and make(i) is not None), None)
        if item is None:
            return None
        target = str(make(item))
        if not code.endswith("\n") and code.strip() == "":
            target = "\n" + target
        return self._begin(row, code, target, item.name)

    def _begin(self, row: int, code: str, target: str, key: str) -> list[int]:
        """Start forcing ``target`` for ``row`` at the end of ``code`` (``key``: what it forces,
        remembered in ``_forced``) and return the ids that continue it. A fresh line already
        indented (byte-level BPE has tokens such as ``"\\n "``: the line break with the first
        space) keeps what it has: the target's own indentation goes on from it, or the line's
        replaces it where the two differ."""
        line = code[code.rfind("\n") + 1:]
        indent = line if line and not line.strip(" \t") and ("\n" in code or code.strip()) else ""
        if indent and not target.startswith(indent):
            target = indent + target.lstrip(" \t")
        self._forced[row].add(key)
        self._forcing[row] = (target, len(code) - len(indent), key)
        return self._continuing(row, code, target, indent)

    def _fence_hold(self, width: int) -> Any:
        """Bool mask ``[width]`` without the tokens that could close the block (a backtick, EOS)."""
        if self._hold is None or self._hold.shape[0] != width:
            self._hold = np.ones(width, dtype=np.bool_)
            self._hold[[i for i in self.table.backtick + self.eos_ids if i < width]] = False
        return self._hold

    def _script_target(self, row: int, code: str) -> str | None:
        """The call statement to force for ``row`` now (:func:`pipeline.decoding_script.script_call`),
        or ``None``: its request asks for no script or names no function, the block is not at a
        top-level boundary, a top-level statement already calls something (:class:`RunsMemo`), or the call
        was forced before in this block."""
        extras = self._row_extras(row)
        if extras is None or not extras.script or _SCRIPT_CALL in self._forced[row] or not boundary(code):
            return None
        call = script_call(self.specs[row], code)
        if call is None:
            return None
        return None if self._runs(row, code) else call

    def _row_extras(self, row: int) -> Extras | None:
        """What ``row``'s request asks for besides its items; ``None`` when the caller gave no
        extras (the stop-when-done rule is off)."""
        return self.extras[row] if self.extras is not None and row < len(self.extras) else None

    def _paths(self, row: int) -> tuple[str, ...]:
        """The route paths ``row``'s request gives (:attr:`pipeline.decoding_done.Extras.paths`)."""
        extras = self._row_extras(row)
        return extras.paths if extras is not None else ()

    def _route_target(self, row: int, code: str) -> str | None:
        """The route text forced for ``row`` at a route start of a ``routes`` block
        (:mod:`pipeline.decoding_routes`), or ``None``: ``  "PATH" to`` for the first path the
        request gives that the block has not written and that was not forced already (it ends
        before the target's word, which takes its leading space in a byte-level BPE vocabulary);
        once every path it gives is written, the block's closing ``}``: a route nobody asked for
        has to find a target serving it, where the tiny model writes garbage (E0521). No
        ``routes`` block is opened for a request: with the target the model wrote (``Checkout(slug:
        str)`` for ``"/checkout"``, E0521) it failed more answers than it fixed."""
        paths = self._paths(row)
        if not paths or not route_start(code):
            return None
        written = written_paths(code)
        for path in paths:
            target = f'  "{path}" to'
            if path not in written and target not in self._forced[row]:
                return target
        return "}" if set(paths) <= written else None

    def _continuing(self, row: int, code: str, target: str, written: str) -> list[int]:
        """Ids continuing the forced ``target`` of ``row`` after its ``written`` part."""
        index = self.table.index
        ids = index.continuing(target[len(written):]) if index is not None else []
        extras = self._row_extras(row)
        tool = extras is not None and extras.tool
        if tool and not written and target.lstrip("\n").startswith("fn ") and not decorator_line(code):
            ids += self.table.tool_ids  # an @mcp.tool decorator line may come first
        return ids

    def _missing_items(self, row: int, code: str) -> set[str]:
        """:func:`vox_lang.requests.missing_items` of ``code`` for ``row`` (a parse), cached for the
        row's last text: the hold and the header forcing ask about the same text at an item start,
        and the same text comes back while blank lines follow a closing ``}``."""
        cached = self._parsed.get(row)
        if cached is None or cached[0] != code:
            cached = self._parsed[row] = (code, frozenset(missing_items(self.specs[row], code, self._trees)))
        return set(cached[1])

    def _derailed(self, row: int, code: str, missing: bool) -> bool:
        """Whether ``row``'s block has derailed (:func:`pipeline.decoding_derail.derailed_at`) and
        winds down. Sticky for the block, except that at a top-level item start with a requested
        item still missing it ends: that item's header is forced next, a fresh start."""
        if row not in self._derail:
            at = derailed_at(code, self._derail_checked.get(row, 0))
            self._derail_checked[row] = len(code)
            if at < 0:
                return False
            self._derail.add(row)
            self.report.derailed_rows.add(row)
            self.report.events.append(f"row {row}: the block derailed at its line {code.count(chr(10), 0, at) + 1} "
                                      "(a blank line where code never has one); winding it down")
        if missing and item_start(code):
            self._derail.discard(row)
            self._derail_checked[row] = len(code)
            return False
        return True

    def _wind_down(self, code: str, width: int, finite: Any, mask: Any | None, held: Any | None) -> Any | None:
        """``mask`` narrowed to the first kind of closer the grammar allows here (the module
        docstring of :mod:`pipeline.decoding_done`): in a string, a token ending it; in a comment,
        one ending the line; else a bracket or the fence, then (not at a line start, where they
        would only start another statement) the shortest finishers
        (:func:`pipeline.decoding_done.finisher_mask`), then a newline. Unchanged if none is left.

        Closers are checked against the grammar (``finite``) and the request hold (``held``: no
        fence while an item is missing) only, not the name mask: in a derailed block the name
        mask's bracket scan and the grammar can disagree on what is open (a ``}`` the scan calls
        top level), and a closer names nothing. Finishers go through ``mask`` (a ``_`` or ``0``
        is a name or number position)."""
        line = code[code.rfind("\n") + 1:]
        glued = code[-1:] in IDENT_CHARS  # a bare ``0`` or ``_`` would extend the word or number
        if glued and mask is not None and not ends_in_string(line) and not comment_length(line):
            closers = self._closing(width, "brackets")
            if not _any_left(finite, mask & closers) and _any_left(finite, mask):
                # the word being written names nothing yet (the name mask holds it open): it ends
                # first, as the name mask allows, then the block winds down (a closer right
                # after `ra` left an undefined name in 11 answers of one constrained eval run)
                return mask
        kinds = (["string"] if ends_in_string(line) else ["comment"] if comment_length(line) else
                 ["line_brackets"] if not line.strip() else  # a line start: ``{}``, ``0`` or a newline would idle
                 ["brackets", "finishers_apart" if glued else "finishers", "lines"])
        for kind in kinds:
            closing = self._closing(width, kind)
            base = mask if kind.startswith("finishers") else held
            both = closing if base is None else base & closing
            if _any_left(finite, both):
                self.report.closing_steps += 1
                return both
        return mask

    def _closing(self, width: int, kind: str) -> Any:
        """The closing mask of ``kind`` (``string``, ``comment``, ``brackets``, ``line_brackets``
        (at a line start: the fence may close there), ``finishers``, ``finishers_apart`` or
        ``lines``: see :meth:`_wind_down`), cached per width in the token table."""
        texts = self.table.texts

        def build() -> Any:
            if kind == "comment":
                return comment_end_mask(texts, width)
            if kind.startswith("finishers"):
                return finisher_mask(texts, width, apart=kind == "finishers_apart")
            return closing_mask(texts, width, kind == "string", newlines=not kind.endswith("brackets"),
                                line_start=kind == "line_brackets")

        return self.table.cached(("closing", f"{width}:{kind}"), build)

    def _done_mask(self, row: int, code: str, width: int, short: bool = False) -> Any | None:
        """The stop-when-done mask for ``row`` (:mod:`pipeline.decoding_done`), or ``None`` when
        the rule does not apply here. ``short``: the token budget is nearly spent, so the block
        closes at this item start whatever the request (and even when it names nothing)."""
        asked = None if short else self._row_extras(row)
        if not short and (not self.specs[row] or asked is None or asked.statements):
            return None
        extras = asked or Extras()  # a nearly spent budget: close whatever the request
        if not boundary(code):
            return None
        return self.table.cached(("done", f"{width}:{extras!r}"),  # ~2 ms to build
                                 lambda: allowed_after_done(self.table.texts, extras, width))
