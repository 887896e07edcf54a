"""The constraint processors of one ``vox serve`` request, built in one place.

:func:`request_masks` is the one constructor of a served request's masks: the grammar processor
first (its :attr:`~pipeline.decoding_constraint.GrammarProcessor.report` is each choice's
constraint summary), then the name- and request-aware mask, then the prose cap. It is two parts:
:func:`token_masks` (grammar and names: they read the tokens so far, and a row's logits only
through a callback) and :func:`logit_rules` (the prose cap, which rewrites the logits). The
engine builds both in its own process; with the mask worker (:mod:`pipeline.decoding_remote`),
the worker builds the token masks from the same :class:`MaskSpec` in its process and the engine
the logit rules beside the logits.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pipeline.decoding_constraint import VoxGrammar, name_mask


@dataclass(frozen=True)
class MaskKit:
    """What every request's masks share, built once per model.

    Attributes:
        grammar: the compiled Vox constraint for the model's tokenizer.
        tokenizer: the model's fast tokenizer.
        table: the tokenizer's :class:`~pipeline.decoding_tokens.TokenTable` (name mask, prose cap).
        eos: the ids that end a sequence, sorted.
    """

    grammar: VoxGrammar
    tokenizer: Any
    table: Any
    eos: tuple[int, ...]

    @classmethod
    def build(cls, tokenizer: Any, eos: Iterable[int], vocab_size: int) -> MaskKit:
        """Compile the constraint for ``tokenizer`` (logits ``vocab_size`` wide).

        Raises:
            ConstraintUnavailable: llguidance cannot read the tokenizer or the grammar does not compile.
        """
        from pipeline.decoding_names import token_table

        ids = tuple(sorted(set(eos)))
        return cls(VoxGrammar(tokenizer, ids, vocab_size), tokenizer, token_table(tokenizer), ids)


@dataclass(frozen=True, slots=True)
class MaskSpec:
    """One request's constraint, as plain values (it crosses to the mask worker's process).

    Attributes:
        constraint: the grammar mode (``"response"``, ``"first"``, ``"code"`` or ``"program"``).
        prompt_len: tokens of the prompt (every row's).
        budget: the request's ``max_new_tokens`` (the budget rule of :mod:`pipeline.decoding_done`).
        names: name- and request-aware masking on top of the grammar.
        request_text: the last user message (what it names and asks for).
        block_asked: the request asks for a ```vox block: prose before it is bounded
            (:func:`pipeline.decoding_prose.asks_for_block`).
    """

    constraint: str
    prompt_len: int
    budget: int
    names: bool = True
    request_text: str = ""
    block_asked: bool = False


def request_masks(kit: MaskKit, spec: MaskSpec, rows: int) -> list[Any]:
    """The ``LogitsProcessor`` list of a request's ``rows`` sequences: :func:`token_masks` then
    :func:`logit_rules`."""
    return [*token_masks(kit, spec, rows), *logit_rules(kit, spec, rows)]


def token_masks(kit: MaskKit, spec: MaskSpec, rows: int) -> list[Any]:
    """The masks that read only the tokens so far (and, through a callback, a row's logits where
    a rule needs them): the grammar processor, then the name mask (``spec.names``). The mask
    worker builds these (:mod:`pipeline.decoding_remote`)."""
    grammar = kit.grammar.processor(rows, spec.prompt_len, spec.constraint)
    procs: list[Any] = [grammar]
    if spec.names:
        procs.append(name_mask([spec.request_text] * rows, kit.tokenizer, kit.table, spec.prompt_len,
                               list(kit.eos), budget=spec.budget, ended=grammar.stalled))
    return procs


def logit_rules(kit: MaskKit, spec: MaskSpec, rows: int) -> list[Any]:
    """The rules that rewrite the logits themselves, run where the logits are, after
    :func:`token_masks`: the prose cap (``response``/``first`` modes: the prose after the block
    is bounded, and before it when ``spec.block_asked``; where it refuses a line of closing
    brackets, EOS takes their weight, a ``logsumexp`` of the masked logits)."""
    from pipeline.decoding_prose import ProseCap, closers

    eos = list(kit.eos)
    if spec.constraint not in ("first", "response") or not eos:
        return []
    # the system prompt's "at most two short sentences" after the block, and one naming the
    # fault before it where the turn asks for a block (pipeline.decoding_prose)
    table = kit.table
    return [ProseCap(table.pieces, rows, spec.prompt_len, eos, table.index, range(rows) if spec.block_asked else (),
                     table.cached(("prose", "closers"), lambda: closers(table.pieces)))]
