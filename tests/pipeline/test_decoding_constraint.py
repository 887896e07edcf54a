"""The Vox constraint grammar never blocks a valid program, and blocks broken ones.

Every program the front end accepts in strict mode — ``examples/*.vox`` and programs from every
corpus generator family — is fed token by token through a real byte-level BPE tokenizer into the
llguidance matcher, bare, inside a ```vox fence, and inside prose (hypothesis draws the prose).
The decoder's canonical-layout cap (:mod:`pipeline.decoding_layout`: at most one blank line in a
row, comments of bounded length) is checked on the same tokens: every valid program, with its
blank-line runs collapsed (:func:`canonical_blank_lines`), passes both.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import vox_lang

llguidance = pytest.importorskip("llguidance")

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS_PER_FAMILY = 12


@cache
def tokenizer() -> Any:
    """A byte-level BPE (ChatML specials) trained here on examples and English, as base_model does."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    texts = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "examples").glob("*.vox"))]
    texts += ["Here is the program you asked for. It compiles in strict mode.", "Write a function."]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=700, special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(texts * 3, trainer=trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>")


@cache
def grammar() -> Any:
    from pipeline.decoding_constraint import VoxGrammar

    tok = tokenizer()
    return VoxGrammar(tok, [tok.eos_token_id])


def tiny_model() -> tuple[Any, Any]:
    """A one-layer random Qwen3 over :func:`tokenizer` (with a ChatML template), seeded."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    tok = tokenizer()
    tok.chat_template = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
                         "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
    config = AutoConfig.for_model("qwen3", vocab_size=len(tok), hidden_size=32, intermediate_size=64,
                                  num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1, head_dim=16,
                                  max_position_embeddings=256, eos_token_id=tok.eos_token_id,
                                  pad_token_id=tok.pad_token_id)
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config).eval()
    return model, tok


@cache
def valid_programs() -> tuple[tuple[str, str], ...]:
    """``(name, source)`` of every strict-valid example and generated program, blank-line runs
    collapsed (the canonical layout the decoder keeps; meaning is unchanged)."""
    from pipeline.decoding_layout import canonical_blank_lines
    from pipeline.generators import FAMILIES, generate_program

    found = [(p.name, p.read_text(encoding="utf-8")) for p in sorted((ROOT / "examples").glob("*.vox"))]
    for family in FAMILIES:
        for i in range(PROGRAMS_PER_FAMILY):
            found.append((f"{family.name}-{i}", generate_program(family.name, 7, i)[2].code))
    return tuple((name, canonical_blank_lines(src)) for name, src in found if vox_lang.check(src, strict=True).ok)


def layout_prefix(ids: list[int], mode: str) -> int:
    """How many of ``ids`` the layout cap allows in a row (``len(ids)``: all)."""
    from pipeline.decoding_layout import LayoutState

    table = grammar().layout
    assert table is not None
    state = LayoutState(table, in_block=mode == "program")
    for i, token in enumerate(ids):
        cap = state.mask(len(table.texts))
        if cap is not None and not bool(cap[token]):
            return i
        state.feed(token)
    return len(ids)


def accepted_prefix(text: str, mode: str) -> tuple[int, int, bool]:
    """``(tokens accepted, tokens, accepting at the end)`` for ``text`` under ``mode``, by the
    grammar and the layout cap together."""
    tok = tokenizer()
    ids = tok.encode(text, add_special_tokens=False)
    m = grammar().matcher(mode)
    n = min(m.validate_tokens(ids), layout_prefix(ids, mode))
    ok = m.consume_tokens(ids[:n]) if n else True
    return n, len(ids), ok and n == len(ids) and m.is_accepting()


def test_the_pool_covers_examples_and_every_family() -> None:
    from pipeline.generators import FAMILIES

    names = [n for n, _ in valid_programs()]
    assert sum(n.endswith(".vox") for n in names) >= 10
    assert {n.rsplit("-", 1)[0] for n in names if not n.endswith(".vox")} == {f.name for f in FAMILIES}


@pytest.mark.parametrize("mode", ["program", "code", "first"])
def test_every_valid_program_is_accepted_token_by_token(mode: str) -> None:
    blocked = []
    for name, src in valid_programs():
        text = src if mode == "program" else f"```vox\n{src}\n```" + ("\nIt compiles." if mode == "first" else "")
        n, total, ok = accepted_prefix(text, mode)
        if not ok:
            ids = tokenizer().encode(text, add_special_tokens=False)
            blocked.append(f"{name}: blocked at token {n}/{total}: {tokenizer().decode(ids[max(0, n - 8):n + 1])!r}")
    assert not blocked, "\n".join(blocked[:10])


PROSE = st.text(st.characters(blacklist_characters="`", blacklist_categories=["Cs"]), max_size=60)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_valid_programs_inside_prose_are_accepted(data: st.DataObject) -> None:
    pool = valid_programs()
    blocks = data.draw(st.lists(st.sampled_from(pool), min_size=0, max_size=2))
    parts = [data.draw(PROSE)]
    for _, src in blocks:
        parts += [f"\n```vox\n{src}\n```\n", data.draw(PROSE)]
    text = "".join(parts)
    n, total, ok = accepted_prefix(text, "response")
    assert ok, (n, total, text)


@pytest.mark.parametrize("broken", [
    "fn f() { let x = (1 + }",       # unbalanced
    "fn f(): int { ret 1 }",         # retired ':' form
    'let s = "no end\nprint(s)',     # unterminated string
    "let x = 1 # comment",           # '#' comment
    "fn f() { ret 1 ",               # unclosed block at the fence
    "let v = <p>hi</p>",             # markup
    "fn f(n: int) to bool { ret not + 1 }",  # a reserved word as a name
    "for b in for { print(b) }",
])
def test_broken_blocks_cannot_be_closed(broken: str) -> None:
    n, total, ok = accepted_prefix(f"```vox\n{broken}\n```", "code")
    assert not ok and n < total


def test_name_excludes_exactly_the_reserved_words() -> None:
    import re

    from vox_lang.constraint import GRAMMAR_PATH
    from vox_lang.lexer import KEYWORDS

    line = next(x for x in GRAMMAR_PATH.read_text().splitlines() if x.startswith("NAME:"))
    excluded = re.search(r"~/\((.*)\)/", line)
    assert excluded is not None and set(excluded.group(1).split("|")) == set(KEYWORDS) | {"_"}
    assert accepted_prefix("```vox\nlet x = {type: 1, fn: 2}\nprint(x.type)\nf(in=1)\n```", "code")[2]


def droppable_newlines(src: str) -> list[int]:
    """Offsets in ``src`` (ends of tokens) where layout would drop an inserted newline (spec §1:
    inside ``(``/``[``, after an L2 token, before an L3 token), read with the front end's lexer."""
    from vox_lang.diagnostics import DiagnosticSink
    from vox_lang.layout import L2_AFTER, L3_BEFORE
    from vox_lang.lexer import TokenKind, scan
    from vox_lang.source import SourceFile

    tokens = scan(src, DiagnosticSink(SourceFile("<t>", src))).tokens
    found, stack = [], []
    for prev, tok, nxt in zip([None, *tokens], tokens, [*tokens[1:], None]):
        if tok.text in ("(", "[", "{"):
            stack.append(tok.text)
        elif tok.text in (")", "]", "}") and stack:
            stack.pop()
        if tok.kind is TokenKind.NL or tok.kind is TokenKind.DECO or nxt is None or nxt.kind is TokenKind.NL:
            continue
        after_dot = prev is not None and prev.text == "."
        l2 = tok.kind in (TokenKind.PUNCT, TokenKind.KEYWORD) and tok.text in L2_AFTER and not after_dot
        l3 = nxt.kind in (TokenKind.PUNCT, TokenKind.KEYWORD) and nxt.text in L3_BEFORE
        if (stack and stack[-1] in "([") or l2 or l3:
            found.append(tok.span.end)
    return found


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_newlines_where_layout_drops_them_are_accepted(data: st.DataObject) -> None:
    name, src = data.draw(st.sampled_from(valid_programs()))
    spots = droppable_newlines(src)
    chosen = sorted(data.draw(st.sets(st.sampled_from(spots), max_size=6)) if spots else [], reverse=True)
    for at in chosen:
        src = src[:at] + "\n" + src[at:]
    assert vox_lang.check(src, strict=True).ok, (name, src)  # the layout model above is the front end's
    assert accepted_prefix(f"```vox\n{src}\n```", "code")[2], (name, src)


@pytest.mark.parametrize("ok", [
    "fn add(\n  a: int,\n  b: int\n) to\n  int {\n  ret a +\n    b\n}",
    'let n = "a b"\n  .split(" ")\n  .len()',
    "fn f(x: int) to int {\n  if x > 0 {\n    ret 1\n  }\n  else {\n    ret 0\n  }\n}",
    "let xs = [\n  1,\n  2\n]\nprint(xs[\n  0\n])",
    "type Shape =\n  | Dot\n  | Square(side: float)",
    "let _ = print(1)",
    "type P {\n  x: int\n}\ntype Q = {y: float}",
    "let n = 1 + // one more\n  2 // done\nprint(n) // end",
    "fn f(a: int, b: int = 2, c: str = \"x\",) {\n}",
    "let ys = [1, 2].map(fn(x: int) to int\n  {\n    ret x * 2\n  }\n)",  # in parentheses, before a block
])
def test_layout_newlines_are_accepted(ok: str) -> None:
    assert accepted_prefix(f"```vox\n{ok}\n```", "code")[2]


@pytest.mark.parametrize("bad", [
    "fn f()\n  to int {\n  ret 1\n}",                # E0201: a newline before `to` separates
    "for x in [1, 2]\n{\n  print(x)\n}",             # ... before a block's `{`
    "let x:\n  int = 1",                              # ... after `:` (not an L2 literal)
    "fn f\n(x: int) {\n}",                            # ... before a parameter list's `(`
    'routes {\n  "/" to Home\n  to Other\n}',
    "fn f(n: int) to int {\n  ret _ + n\n}",          # `_` is not a value
    "print(1.5.log())",                               # E0104: a malformed number
    "let p: {x: int} = {x: 1}",                       # a record type only in a type declaration
    "let p = {x // the x\n: 1}",                       # a comment only where a newline may stand
    "fn f(a: int = 1, b: int) {\n}",                  # E0201: defaulted parameters come last
    "print(match g() { } { 0 -> 1 })",                # E0201: a head takes no children, in parentheses too
    "let xs = [if f() { } { 1 } else { 2 }]",         # ... in brackets
])
def test_newlines_that_separate_and_misused_tokens_are_rejected(bad: str) -> None:
    assert not accepted_prefix(f"```vox\n{bad}\n```", "code")[2]


def test_heads_in_parentheses_still_open_their_body() -> None:
    ok = "```vox\nfn f(n: int) to int {\n  ret n\n}\nprint(match f(1) {\n  1 -> \"one\"\n  _ -> \"many\"\n})\n```"
    assert vox_lang.check(ok.split("\n", 1)[1].rsplit("\n", 1)[0], strict=True).ok
    assert accepted_prefix(ok, "code")[2] is True
    assert accepted_prefix("```vox\nprint(if (card() { }) { 1 } else { 2 })\n```", "code")[2] is True


def test_children_only_after_named_arguments() -> None:
    ok = "```vox\nfn v() to Element {\n  ret card(padding=1) {\n    text(value=\"a\")\n  }\n}\n```"
    assert accepted_prefix(ok, "code")[2] is True
    for bad in ("```vox\nfn v() to Element {\n  ret card(1) {\n    text(value=\"a\")\n  }\n}\n```",  # E0212
                "```vox\nprint(value=1, 2)\n```"):  # E0208
        assert accepted_prefix(bad, "code")[2] is False


def test_a_comment_ends_at_its_line_end() -> None:
    assert accepted_prefix("```vox\n// note\r\nprint(1)\r\n```", "code")[2] is True  # CRLF lines
    text = "```vox\n// note\r  more\nprint(1)\n```"
    assert accepted_prefix(text, "code")[0] < len(tokenizer().encode(text, add_special_tokens=False))


def test_first_mode_opens_with_the_block() -> None:
    assert accepted_prefix("```vox\nprint(1)\n```\nPrints one. Done.", "first")[2] is True
    assert accepted_prefix("fn f() {\n}\n```vox\nprint(1)\n```", "first")[0] == 0  # unfenced code first
    assert accepted_prefix("```vox\nprint(1)\n```\nAnd:\n```vox\nprint(2)\n```", "first")[2] is False


@pytest.mark.parametrize("mode", ["first", "response"])
def test_the_closing_fence_ends_its_line(mode: str) -> None:
    for ok in ("```vox\nprint(1)\n```", "```vox\nprint(1)\n```\nPrints one.", "```vox\nprint(1)\n```  \nDone."):
        assert accepted_prefix(ok, mode)[2] is True, ok
    for bad in ("```vox\nprint(1)\n```.: str", "```vox\nprint(1)\n``` Done.", "```vox\nprint(1)\n````\n}"):
        assert accepted_prefix(bad, mode)[2] is False, bad  # Markdown reads no closing fence there
    assert accepted_prefix("Here:\n```vox\nprint(1)\n```\nand\n```vox\nprint(2)\n```", "response")[2] is True


def test_answer_mode_reads_the_last_user_message() -> None:
    from pipeline.decoding_constraint import answer_mode

    ask = {"role": "user", "content": "Write a function `late(x: int) to int`."}
    assert answer_mode([ask]) == "first"
    assert answer_mode([{"role": "user", "content": "What does `?` do in Vox?"}]) == "response"
    repair = [ask, {"role": "assistant", "content": "```vox\nfn late() {}\n```"},
              {"role": "user", "content": "Line 1, Col 1: error[E0503] ..."}]
    assert answer_mode(repair) == "response"  # a repair names the fault first
    assert answer_mode([ask], "code") == "code"
    parts = {"role": "user", "content": [{"type": "text", "text": "Write a function "},
                                         {"type": "text", "text": "`late(x: int) to int`."}]}
    assert answer_mode([parts]) == "first"  # OpenAI text parts read as their joined text


def test_prose_cannot_open_another_fence_or_smuggle_code() -> None:
    assert accepted_prefix("Sure.\n```python\nprint(1)\n```\n", "response")[2] is False
    assert accepted_prefix("Inline `code` and ``two`` are fine.", "response")[2] is True
    assert accepted_prefix("Text only, then code:\n```vox\nprint(1)\n```", "response")[2] is True


def test_processor_masks_and_falls_back_on_a_dead_end(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    import pipeline.decoding_constraint as dc

    tok = tokenizer()
    prompt = torch.tensor([[1, 2, 3]])
    proc = grammar().processor(rows=1, prompt_len=3, mode="code")
    scores = proc(prompt, torch.zeros(1, len(tok)))
    allowed = torch.isfinite(scores[0]).nonzero().flatten().tolist()
    assert allowed and all(tok.decode([t]) and "`".startswith(tok.decode([t])[:1]) for t in allowed)
    monkeypatch.setattr(dc, "allowed_masks", lambda g, ms, v, buffer=None: torch.zeros(len(ms), v, dtype=torch.bool))
    proc = grammar().processor(rows=1, prompt_len=3, mode="code")
    scores = proc(prompt, torch.zeros(1, len(tok)))
    assert torch.isfinite(scores).all()  # nothing masked: unconstrained from here
    assert proc.report.fell_back and "dead end" in proc.report.events[0]


def test_unreadable_tokenizer_is_a_clear_error() -> None:
    from pipeline.decoding_constraint import ConstraintUnavailable, VoxGrammar

    with pytest.raises(ConstraintUnavailable, match="cannot read this tokenizer"):
        VoxGrammar(object(), [0])


def test_eval_generator_is_constrained_by_default() -> None:
    from pipeline.decoding import HFGenerator

    model, tok = tiny_model()
    conversations = [[{"role": "user", "content": "Write a function."}], [{"role": "user", "content": "Hi"}]]
    gen = HFGenerator(model, tok, max_new_tokens=24, temperature=1.0, batch_size=8)
    assert gen.constraint is not None and gen.constraint_note is None
    texts = gen(conversations, 2)
    assert [len(t) for t in texts] == [2, 2]
    for text in (t for group in texts for t in group):
        ids = tok.encode(text, add_special_tokens=False, split_special_tokens=True)
        assert grammar().matcher("response").validate_tokens(ids) == len(ids), text
    assert HFGenerator(model, tok, constrained=False).constraint is None


def test_batch_masks_equal_each_matchers_own_mask() -> None:
    """``allowed_masks`` (llguidance's parallel executor, one bitmask for the batch) gives, row by
    row, exactly the tokens each matcher's own ``compute_bitmask`` allows, past the vocabulary too."""
    import numpy as np

    from pipeline.decoding_constraint import allowed_masks

    tok, g = tokenizer(), grammar()
    prefixes = ["", "```vox\nfn f(", "```vox\nfn f(x: int) to int {\n  ret x +", "Sure.\n```vox\ntype T = "]
    matchers = []
    for text in prefixes:
        m = g.matcher("response")
        assert m.consume_tokens(tok.encode(text, add_special_tokens=False)) if text else True
        matchers.append(m)
    width = len(tok) + 5  # logits wider than the tokenizer: the extra ids are never allowed
    masks = allowed_masks(g, matchers, width)
    assert masks.shape == (len(prefixes), width)
    for row, m in enumerate(matchers):
        bits = np.unpackbits(np.frombuffer(m.compute_bitmask(), dtype=np.uint8), bitorder="little")
        own = bits[:len(tok)].astype(bool)
        assert masks[row, :len(tok)].numpy().tolist() == own.tolist(), prefixes[row]
        assert not masks[row, len(tok):].any()


def test_seeded_eval_generator_repeats_itself() -> None:
    """Same seed, same conversations: the same texts (each ``generate`` call is seeded; before,
    the decoder reseeded randomly on every call and no eval repeated)."""
    import torch

    from pipeline.decoding import HFGenerator

    model, tok = tiny_model()
    conversations = [[{"role": "user", "content": "Write a function."}], [{"role": "user", "content": "Hi"}]] * 2
    gen = HFGenerator(model, tok, max_new_tokens=16, temperature=1.0, batch_size=4, seed=3, retries=1)
    first = gen(conversations, 2)
    torch.seed()  # whatever the global RNG holds in between
    assert gen(conversations, 2) == first
    other = HFGenerator(model, tok, max_new_tokens=16, temperature=1.0, batch_size=4, seed=4, retries=1)
    assert other(conversations, 2) != first


def test_a_stalled_block_may_only_end() -> None:
    """A block whose last MAX_IDLE_LINES lines hold no code (the masks left the model nothing but
    comments and blank lines: `.` + newline before a receiver with no members ran 37 such lines to
    the token limit) may only end: EOS alone, reported, and the name mask leaves the row alone."""
    import torch

    from pipeline.decoding_constraint import name_mask
    from pipeline.decoding_layout import MAX_IDLE_LINES
    from pipeline.decoding_names import token_table

    tok = tokenizer()
    g = grammar()
    eos = sorted(g.eos)
    assert eos
    head = "```vox\nfn f(x: int) to bool {\n  ret x > 1\n"
    idle = "".join("  // note\n" if i % 2 else "\n" for i in range(MAX_IDLE_LINES - 1))
    for text, stalled in ((head + idle, False), (head + idle + "  //\n", True)):
        prompt = [1, 2, 3]
        ids = tok.encode(text, add_special_tokens=False)
        proc = g.processor(rows=1, prompt_len=3, mode="response")
        names = name_mask(["Write a function."], tok, token_table(tok), 3, eos, ended=proc.stalled)
        seq = list(prompt)
        for t in [None, *ids]:
            if t is not None:
                seq.append(t)
            scores = proc(torch.tensor([seq]), torch.zeros(1, len(tok)))
        scores = names(torch.tensor([seq]), scores)
        allowed = torch.isfinite(scores[0]).nonzero().flatten().tolist()
        assert (sorted(allowed) == eos) is stalled, (text, [tok.decode([a]) for a in allowed][:10])
        assert (proc.stalled == {0}) is stalled
        assert any("lines without code" in e for e in proc.report.events) is stalled
