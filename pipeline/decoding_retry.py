"""Compiler-checked retries: decode a faulty line again, with the front end as the judge.

The masks of :mod:`pipeline.decoding_constraint` and :mod:`pipeline.decoding_names` keep a block
syntactically valid and its names resolvable, but they cannot see types: on the tiny default most
completed blocks that fail do so on one line (``ret`` of the wrong type, ``"n: " + len(xs)``).
Here a completion's first ```vox block is checked with the whole front end (:func:`vox_lang.check`,
strict); if it has a diagnostic, the completion is cut at the start of the first line holding one
(:func:`fault_cut`; an E0508 counts on the line that closes the function's body, not on its name)
and decoded again from there, that prefix forced token by token
(:class:`ForcedPrefix`, the last processor, so every mask consumes it as if it had been sampled),
up to ``retries`` rounds. A retry that did not replace its completion moves the next round's cut
one line further back, down to the first line of the item's body (:func:`backoff_cut`). A block
the token budget cut is judged by its complete lines (open brackets closed for the check), so a
derailed block is retried from where it first goes wrong.
A retry that is no better than what it replaces (more errors, a block the budget cut, or one
that no longer declares an item the request names) is dropped (:func:`better`). An answer with
no block and a clean block are never retried. The token budget of a retry is the original one:
the forced prefix counts against it.

This is one decoding policy of the one decoder: evaluation's constrained policy and ``vox serve``
both run it (``retries`` / ``retry_temperature`` in the eval recipe, ``vox_retries`` in a request
body, :data:`RETRIES` rounds by default). It is not best-of-n: each answer is still one
completion, only from its first faulty line on is it sampled again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from transformers import LogitsProcessor

from pipeline.decoding_fence import OPEN, closing_fence
from pipeline.decoding_request import request_spec
from vox_lang.requests import RequestSpec, missing_items

#: default rounds of retries (each round re-decodes every completion that still has a fault).
#: Measured on the cpu-tiny default eval (adapter, 102 tasks x 4, constrained; bench/retries.py
#: --seed 0 on commit 37e541c's export, 2 idle AMX cores): first pass 0.211, one round at 0.7
#: 0.272 (321 retried, 25 fixed, 49 s), two rounds 0.314 (617 retried, 43 fixed, 85 s); one round
#: at 0.4 0.272, at 1.0 0.262. Earlier (before the wind-down): one round at 0.7 0.130 -> 0.164.
#: With the eval's token limit at 192 (the same seeded models, b88f519's export): first pass
#: 0.218 (34 s), two rounds 0.324 (52 s), three 0.360 (879 retried, 58 fixed, 76 s), four 0.380
#: (96 s). Four rounds: the main job at 192 tokens with three took 6.8 min on 2 idle AMX cores
#: (eval 3.7), so a fourth round (~22 s per model) fits its 10 minutes. Backing off a line per
#: dropped retry (:func:`backoff_cut`; fdfd8b9's stored run, 66fb697's masks, four rounds): seed 0
#: 0.392 -> 0.400 (best-of-4 0.618 both), seed 1 0.350 -> 0.375 (0.539 -> 0.588), in the same
#: time; backing off straight to the body's first line instead: 0.392, best-of-4 0.549 (seed 0)
RETRIES: Final = 4
#: sampling temperature of a retry at least (a greedy retry would decode the same line again)
RETRY_TEMPERATURE: Final = 0.7


@dataclass(frozen=True, slots=True)
class Fault:
    """Where a completion goes wrong.

    Attributes:
        cut: character offset in the completion's text where the first faulty line starts
            (the text before it is kept and forced on the retry).
        errors: diagnostics (errors and, strict, warnings) of the block.
        line: 1-based line of the block holding the first diagnostic.
        typed: names and types were checked (:attr:`vox_lang.CheckResult.typed`): no syntax error
            stopped them, so ``errors`` counts every fault.
    """

    cut: int
    errors: int
    line: int
    typed: bool = True


def _first_block(text: str, open_too: bool = False) -> tuple[int, str, bool] | None:
    """``(offset of the block's first code character, code, closed)`` of ``text``'s first ```vox
    block, or ``None`` when there is none, or it is open and not ``open_too`` (the fence rule of
    :mod:`pipeline.decoding_fence`)."""
    m = OPEN.search(text)
    if m is None or not m.group(0).endswith("\n"):
        return None
    end = closing_fence(text[m.end():])
    if end < 0:
        return (m.end(), text[m.end():], False) if open_too else None
    return m.end(), text[m.end():m.end() + end], True


#: closer of each bracket frame kind of :class:`pipeline.decoding_scan.Frame`
_CLOSERS: Final = {"call": ")", "decl": ")", "paren": ")", "index": "]"}


def _closed(code: str) -> str:
    """``code`` (complete lines of an open block) with its open brackets closed, innermost first."""
    from pipeline.decoding_scan import scan

    return code + "".join("\n" + _CLOSERS.get(f.kind, "}") for f in reversed(scan(code).stack))


def fault_cut(text: str, strict: bool = True, open_blocks: bool = False) -> Fault | None:
    """The first fault of ``text``'s first ```vox block, or ``None`` when there is nothing to
    retry (no block, a clean block, a block the budget cut unless ``open_blocks``).

    Args:
        text: a model's answer (the completion only, no prompt).
        strict: warnings count as faults (the headline criterion is strict, as the corpus gate).
        open_blocks: judge a block the budget cut too: its complete lines, open brackets closed
            (a diagnostic only the closing caused, past those lines, does not count).
    """
    import vox_lang

    found = _first_block(text, open_blocks)
    if found is None:
        return None
    offset, code, closed = found
    if not closed:
        code = code[:code.rfind("\n") + 1]
    lines = code.split("\n")
    result = vox_lang.check(code if closed else _closed(code), path="<completion>", strict=strict)
    diags = list(result.errors) + (list(result.warnings) if strict else [])
    if not closed:
        diags = [d for d in diags if d.line < len(lines)]
    if not diags:
        return None
    line = min(_fault_line(code, d) for d in diags)
    keep = _line_start(lines, line - 1)
    return Fault(offset + keep, len(diags) + (0 if closed else 1), line, result.typed)  # a cut block: one fault more


def _line_start(lines: Sequence[str], k: int) -> int:
    """The character offset of line ``k`` (0-based) of the text ``"\\n".join(lines)``."""
    return sum(len(x) + 1 for x in lines[:k])


def _fault_line(code: str, diag: Any) -> int:
    """The line a retry of ``diag`` starts from: its own, but for E0508 (a path misses ``ret``),
    which points at the function's name (spec §10), the line of the body's closing ``}``: what is
    missing is at the end, and the return-path mask (:mod:`pipeline.decoding_returns`) then asks
    for a returning statement before the body closes, instead of the whole item written again."""
    if diag.code != "E0508":
        return int(diag.line)
    from pipeline.decoding_scan import TOKENS

    start = _line_start(code.split("\n"), diag.line - 1) + diag.col - 1
    depth = 0
    for m in TOKENS.finditer(code, start):
        tok = m.group(0)
        if tok in ("{", "(", "["):
            depth += 1
        elif tok in ("}", ")", "]"):
            depth -= 1
            if depth == 0 and tok == "}":
                return code.count("\n", 0, m.start()) + 1
            if depth < 0:
                break
    return int(diag.line)


def backoff_cut(text: str, fault: Fault, stuck: int) -> int:
    """Where a retry of ``text`` starts after ``stuck`` retries from ``fault.cut`` in a row were no
    better: ``stuck`` lines before the faulty one, never before the body of the top-level item
    holding it (the line after its header, which a request's forced header wrote), and
    ``fault.cut`` itself while ``stuck`` is 0. A faulty line is often only where a body that
    derailed earlier fails to check; sampling it again rarely helps, sampling from earlier may.

    Returns:
        a character offset into ``text`` at the start of a line, at most ``fault.cut``.
    """
    found = _first_block(text, True)
    if stuck <= 0 or found is None:
        return fault.cut
    offset, code, _ = found
    lines = code.split("\n")
    header = fault.line - 1  # 0-based index of the faulty line; walk back to its item's header
    while header > 0 and not (lines[header][:1].isalpha() or lines[header][:1] == "@"):
        header -= 1
    while header < fault.line - 1 and not lines[header].rstrip().endswith("{"):
        header += 1  # a header written over lines ends at its `{`
    first = min(header + 1, fault.line - 1)
    line = max(first, fault.line - 1 - stuck)
    return offset + _line_start(lines, line)


def kept_ids(tokenizer: Any, ids: Sequence[int], cut: int) -> list[int]:
    """The longest prefix of ``ids`` (a completion's tokens) whose decoded text is at most ``cut``
    characters long: the tokens a retry forces. A token straddling ``cut`` is not kept (the
    retry samples from before it). Binary search: decoded length grows with the prefix."""
    lo, hi = 0, len(ids)  # decode(ids[:lo]) fits; find the largest such prefix
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if len(tokenizer.decode(list(ids[:mid]), skip_special_tokens=True)) <= cut:
            lo = mid
        else:
            hi = mid - 1
    return list(ids[:lo])


def missing_count(spec: RequestSpec, text: str) -> int:
    """How many items ``spec`` names that ``text``'s first closed ```vox block does not declare
    (all of them without one; 0 when the request names nothing)."""
    if not spec:
        return 0
    found = _first_block(text)
    return len(spec.items) if found is None else len(missing_items(spec, found[1]))


def better(old: Fault | None, new_text: str, new: Fault | None, lost: bool = False) -> bool:
    """Whether a retry's ``new_text`` (fault ``new``) replaces a completion whose fault was ``old``:
    never one that ``lost`` a requested item the old one declared (a retry from the header's line
    may write another header: ``fn late_orders(days: List[int], limit: float)`` compiles but is not
    what was asked); a clean closed block always does; a block the budget cut (or none) never
    does; one whose syntax errors stopped name and type checking never replaces one checked whole
    (its count hides those errors: one E0305 is no better than two type errors); otherwise fewer
    diagnostics, or as many with the first one later."""
    if lost or _first_block(new_text) is None:  # lost what was asked; open (cut by the budget) or missing
        return False
    if new is None:
        return True
    if old is None:
        return False
    return (not new.typed, new.errors, -new.line) < (not old.typed, old.errors, -old.line)


@dataclass
class RetryStats:
    """What the retries of one call did.

    Attributes:
        faulty: completions whose first block had a diagnostic after the first pass (a block the
            budget cut judged by its complete lines).
        retried: retry decodes run, all rounds together.
        replaced: retries kept (:func:`better` than what they replaced).
        fixed: completions faulty after the first pass and clean at the end, declaring everything
            the request names.
        completions: the same per completion ``(conversation, sample)`` (``replaced`` left out),
            for a caller that reports each answer's own: see :meth:`of`.
    """

    faulty: int = 0
    retried: int = 0
    replaced: int = 0
    fixed: int = 0
    completions: dict[tuple[int, int], dict[str, int]] = field(default_factory=dict, repr=False)

    def totals(self) -> dict[str, int]:
        """``{"faulty", "retried", "replaced", "fixed"}`` of the whole call (JSON-ready)."""
        return {"faulty": self.faulty, "retried": self.retried, "replaced": self.replaced, "fixed": self.fixed}

    def of(self, conversation: int, sample: int = 0) -> dict[str, int]:
        """``{"faulty", "retried", "fixed"}`` of one completion (``faulty``/``fixed`` 0 or 1,
        ``retried``: its retry decodes); all 0 for one the call never judged."""
        return dict(self.completions.get((conversation, sample), {"faulty": 0, "retried": 0, "fixed": 0}))


#: ``decode(conversations, n, params, ids_out, forced) -> texts``: the batch decoder of
#: :class:`pipeline.decoding_batch.HFGenerator` (``forced``: per conversation, ``n`` = 1)
Decode = Callable[[Sequence[Any], int, Any, list[list[list[int]]], Sequence[Sequence[int]] | None], list[list[str]]]


def retry_faults(decode: Decode, conversations: Sequence[Any], texts: list[list[str]], ids: list[list[list[int]]],
                 tokenizer: Any, params: Any, rounds: int, seed: int, strict: bool = True,
                 open_blocks: bool = True, specs: Sequence[RequestSpec] | None = None) -> RetryStats:
    """Retry every faulty completion of ``texts`` (``n`` per conversation; ``ids`` their tokens)
    up to ``rounds`` times, in place: each round decodes the completions that still have a fault
    again, in one batch, from the start of their first faulty line, or as many lines before it
    as retries from there in a row were dropped (:func:`backoff_cut`); a retry replaces its
    completion when :func:`better`. Round ``r`` seeds torch with ``seed + 7919 * r``, and a
    seeded ``params`` gets that seed too (the decoder reseeds from it: the same seed would draw
    the same tokens after the same forced prefix). ``specs``: what each conversation's request
    names (a retry may not lose one of those items, :func:`better`); by default read from the
    conversations (:func:`pipeline.decoding_request.request_spec`), which the decoder otherwise
    passes through untouched."""
    import dataclasses

    import torch

    if specs is None:
        specs = [request_spec(c) if isinstance(c, list) else RequestSpec() for c in conversations]
    faults = {(i, j): fault_cut(text, strict, open_blocks) for i, row in enumerate(texts) for j, text in enumerate(row)}
    first = {key for key, f in faults.items() if f is not None}
    missing = {(i, j): missing_count(specs[i], texts[i][j]) for i, j in first}  # only faulty ones are retried
    stats = RetryStats(faulty=len(first))
    retried: dict[tuple[int, int], int] = {}
    stuck: dict[tuple[int, int], int] = {}
    for r in range(1, rounds + 1):
        todo = [(key, f) for key, f in faults.items() if f is not None]
        if not todo:
            break
        torch.manual_seed(seed + 7919 * r)
        round_params = params
        if getattr(params, "seed", None) is not None:
            round_params = dataclasses.replace(params, seed=(params.seed + 7919 * r) % 2**64)
        forced = [kept_ids(tokenizer, ids[i][j], backoff_cut(texts[i][j], f, stuck.get((i, j), 0)))
                  for (i, j), f in todo]
        new_ids: list[list[list[int]]] = []
        new = decode([conversations[i] for (i, _), _ in todo], 1, round_params, new_ids, forced)
        stats.retried += len(todo)
        for key, _ in todo:
            retried[key] = retried.get(key, 0) + 1
        for ((i, j), f), text, tid in zip(todo, new, new_ids):
            fault = fault_cut(text[0], strict, open_blocks)
            lacks = missing_count(specs[i], text[0])
            if better(f, text[0], fault, lost=lacks > missing[(i, j)]):
                texts[i][j], ids[i][j], faults[(i, j)], missing[(i, j)] = text[0], tid[0], fault, lacks
                stats.replaced += 1
                stuck[(i, j)] = 0
            else:
                stuck[(i, j)] = stuck.get((i, j), 0) + 1
    fixed = {key for key in first if faults[key] is None and not missing[key]}
    stats.fixed = len(fixed)
    for key in faults:
        stats.completions[key] = {"faulty": int(key in first), "retried": retried.get(key, 0),
                                  "fixed": int(key in fixed)}
    return stats


class ForcedPrefix(LogitsProcessor):
    """Force row ``i``'s first ``len(forced[i])`` generated tokens to be ``forced[i]``.

    Put it last in the processor list: the masks before it see (and consume) the forced tokens
    as sampled ones. ``prompt_len`` is the batch's padded prompt length; a forced token a mask
    before this one refused is forced anyway (the prefix was decoded under the same masks).
    """

    def __init__(self, forced: Sequence[Sequence[int]], prompt_len: int) -> None:
        self.forced, self.prompt_len = [list(f) for f in forced], prompt_len

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        step = int(input_ids.shape[1]) - self.prompt_len
        for row, ids in enumerate(self.forced[:scores.shape[0]]):
            if step < len(ids):
                scores[row] = float("-inf")
                scores[row, ids[step]] = 0.0
        return scores
