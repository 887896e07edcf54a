"""Compiler-checked retries (pipeline.decoding_retry): where a completion is cut, what replaces
it, and that forced prefixes reach the decoder's output."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pipeline.decoding_retry import Fault, ForcedPrefix, backoff_cut, better, fault_cut, kept_ids, retry_faults

CLEAN = "fn double(n: int) to int {\n    ret n * 2\n}\n"
FAULTY = "fn double(n: int) to int {\n    let k = 2\n    ret \"x\" + n\n}\n"


def answer(code: str, closed: bool = True) -> str:
    return "```vox\n" + code + ("```\nDone." if closed else "")


def test_clean_cut_off_and_missing_blocks_are_not_retried() -> None:
    assert fault_cut(answer(CLEAN)) is None
    assert fault_cut(answer(FAULTY, closed=False)) is None  # the budget cut it: judged only on request
    assert fault_cut("no code here") is None
    assert fault_cut("```vox") is None


def test_the_cut_is_the_start_of_the_first_faulty_line() -> None:
    text = answer(FAULTY)
    fault = fault_cut(text)
    assert fault is not None and fault.line == 3 and fault.errors >= 1
    assert text[:fault.cut].endswith("let k = 2\n")
    assert text[fault.cut:].startswith('    ret "x" + n')


def test_a_fault_on_the_first_line_keeps_only_the_fence() -> None:
    text = answer("fn f() to int {\n    ret 1\n}\nfn f() to int {\n    ret 2\n}\n")  # duplicate item
    fault = fault_cut(text)
    assert fault is not None and text[:fault.cut].startswith("```vox\n")
    assert "\n" + text[fault.cut:].split("\n", 1)[0] in text


def test_a_cut_block_is_judged_by_its_complete_lines() -> None:
    derailed = answer('actor Bank {\n  on f(v: List[float]) to float {\n    let mut s = 0.0\n    ret "A" + s\n    pri',
                      closed=False)
    fault = fault_cut(derailed, open_blocks=True)
    assert fault is not None and fault.line == 4  # the first complete line with a diagnostic
    assert derailed[fault.cut:].startswith('    ret "A" + s')
    # complete lines without a diagnostic (open brackets closed for the check): nothing to retry
    assert fault_cut(answer("fn f(n: int) to int {\n  let k = 2\n  ret n * k\n  pri", closed=False),
                     open_blocks=True) is None
    # a body cut before its ret: the check of the closed-off function finds no ret (the header's line),
    # so the block is decoded again from its start
    cut = answer("fn f(n: int) to int {\n  let k = [1,\n", closed=False)
    fault = fault_cut(cut, open_blocks=True)
    assert fault is not None and fault.line == 1 and cut[:fault.cut] == "```vox\n"


def test_warnings_are_faults_only_when_strict() -> None:
    code = "fn f(x: int) to int {\n    return x\n}\n"  # W0001: `return` is a compat spelling
    fault = fault_cut(answer(code), strict=True)
    assert fault is not None and fault.line == 2
    assert fault_cut(answer(code), strict=False) is None


def test_better_keeps_what_is_not_an_improvement() -> None:
    old = Fault(cut=10, errors=2, line=3)
    assert better(old, answer(CLEAN), None)
    assert not better(old, answer(FAULTY, closed=False), None)  # cut by the budget
    assert not better(old, "prose only", None)
    assert better(old, answer(FAULTY), Fault(10, 1, 3))
    assert better(old, answer(FAULTY), Fault(10, 2, 4))  # as many, but later
    assert not better(old, answer(FAULTY), Fault(10, 2, 3))
    assert not better(old, answer(FAULTY), Fault(10, 3, 9))
    # a syntax error that stopped name and type checking hides the rest: never an improvement
    assert not better(old, answer(FAULTY), Fault(10, 1, 9, typed=False))
    assert better(Fault(10, 1, 3, typed=False), answer(FAULTY), Fault(10, 5, 3))


def test_a_fault_says_whether_types_were_checked() -> None:
    hidden = fault_cut(answer("fn f() to int {\n  let v = 1\n  <p>x</p>\n  ret 0\n}\n"))
    assert hidden is not None and not hidden.typed and hidden.line == 3
    typed = fault_cut(answer("fn f() to int {\n  ret \"a\"\n}\n"))
    assert typed is not None and typed.typed


class CharTokenizer:
    """One token per character (id = code point); enough for kept_ids and the retry loop."""

    def encode(self, text: str) -> list[int]:
        return [ord(c) for c in text]

    def decode(self, ids: Sequence[int], skip_special_tokens: bool = True) -> str:
        return "".join(chr(i) for i in ids)


def test_kept_ids_stop_at_the_cut() -> None:
    tok = CharTokenizer()
    text = answer(FAULTY)
    fault = fault_cut(text)
    assert fault is not None
    kept = kept_ids(tok, tok.encode(text), fault.cut)
    assert tok.decode(kept) == text[:fault.cut]
    assert kept_ids(tok, tok.encode(text), 0) == []


def test_kept_ids_never_keep_a_token_that_straddles_the_cut() -> None:
    class Pairs(CharTokenizer):  # every id decodes to two characters
        def decode(self, ids: Sequence[int], skip_special_tokens: bool = True) -> str:
            return "".join(chr(i) * 2 for i in ids)

    assert Pairs().decode(kept_ids(Pairs(), [97, 98, 99], 3)) == "aa"


def test_retry_replaces_a_fault_by_a_clean_retry_and_counts_it() -> None:
    tok = CharTokenizer()
    texts = [[answer(FAULTY), answer(CLEAN)]]
    ids = [[tok.encode(t) for t in texts[0]]]
    calls: list[tuple[list[Any], list[str]]] = []

    def decode(conversations: Sequence[Any], n: int, params: Any, ids_out: list[list[list[int]]],
               forced: Sequence[Sequence[int]] | None) -> list[list[str]]:
        assert n == 1 and forced is not None
        prefixes = [tok.decode(f) for f in forced]
        calls.append((list(conversations), prefixes))
        out = [p + '    ret n * k\n}\n```\n' for p in prefixes]
        ids_out.extend([tok.encode(o)] for o in out)
        return [[o] for o in out]

    stats = retry_faults(decode, ["conversation"], texts, ids, tok, None, rounds=2, seed=0)
    assert len(calls) == 1 and calls[0][0] == ["conversation"]  # only the faulty one, once: then clean
    assert calls[0][1][0].endswith("let k = 2\n")
    assert fault_cut(texts[0][0]) is None and texts[0][1] == answer(CLEAN)
    assert tok.decode(ids[0][0]) == texts[0][0]
    assert (stats.faulty, stats.retried, stats.replaced, stats.fixed) == (1, 1, 1, 1)
    # each completion's own counts: the clean one was never retried
    assert stats.of(0, 0) == {"faulty": 1, "retried": 1, "fixed": 1}
    assert stats.of(0, 1) == {"faulty": 0, "retried": 0, "fixed": 0}
    assert stats.totals() == {"faulty": 1, "retried": 1, "replaced": 1, "fixed": 1}


def test_a_retry_that_is_worse_is_dropped_and_tried_again() -> None:
    tok = CharTokenizer()
    texts = [[answer(FAULTY)]]
    ids = [[tok.encode(texts[0][0])]]

    def decode(conversations: Sequence[Any], n: int, params: Any, ids_out: list[list[list[int]]],
               forced: Sequence[Sequence[int]] | None) -> list[list[str]]:
        out = [tok.decode(f) + "    ret" for f in forced or []]  # cut off: never better
        ids_out.extend([tok.encode(o)] for o in out)
        return [[o] for o in out]

    stats = retry_faults(decode, ["c"], texts, ids, tok, None, rounds=3, seed=0)
    assert texts[0][0] == answer(FAULTY)
    assert (stats.faulty, stats.retried, stats.replaced, stats.fixed) == (1, 3, 0, 0)
    assert stats.of(0) == {"faulty": 1, "retried": 3, "fixed": 0}


def test_seeded_params_get_a_new_seed_each_round() -> None:
    from pipeline.decoding import SamplingParams

    tok = CharTokenizer()
    texts = [[answer(FAULTY)]]
    ids = [[tok.encode(texts[0][0])]]
    seeds: list[int | None] = []

    def decode(conversations: Sequence[Any], n: int, params: Any, ids_out: list[list[list[int]]],
               forced: Sequence[Sequence[int]] | None) -> list[list[str]]:
        seeds.append(params.seed)
        ids_out.extend([[]] for _ in conversations)
        return [[""] for _ in conversations]

    retry_faults(decode, ["c"], texts, ids, tok, SamplingParams(seed=5), rounds=2, seed=0)
    assert len(seeds) == 2 and len(set(seeds)) == 2 and 5 not in seeds


def test_forced_prefix_starts_the_generated_sequence() -> None:
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    from pipeline.decoding import SamplingParams
    from pipeline.decoding_batch import generate_texts

    config = AutoConfig.for_model("qwen3", vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                                  num_attention_heads=2, num_key_value_heads=1, head_dim=16,
                                  max_position_embeddings=128, eos_token_id=0, pad_token_id=0)
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config).eval()

    class Tok:
        pad_token_id = 0
        eos_token_id = 0

        def batch_decode(self, rows: Any, skip_special_tokens: bool = True) -> list[str]:
            return [",".join(str(int(i)) for i in r) for r in rows]

    forced = [[5, 6, 7], [9]]
    ids: list[list[list[int]]] = []
    generate_texts(model, Tok(), [[1, 2, 3], [4, 5]], 1, SamplingParams(max_new_tokens=6, temperature=1.0),
                   stop_after_block=False, processors=lambda plen: [ForcedPrefix(forced, plen)], ids_out=ids)
    assert ids[0][0][:3] == [5, 6, 7] and ids[1][0][:1] == [9]


def test_a_retry_that_loses_a_requested_item_is_dropped() -> None:
    """A retry from the header's line may write another header: clean, but not what was asked
    (seen through vox serve: `fn late_orders(days: List[int], limit: float) {}` counted as fixed)."""
    tok = CharTokenizer()
    asked = [{"role": "user", "content": "Write a function `double(n: int) to int`."}]
    no_ret = answer('fn double(n: int) to int { ret "2" }\n')  # E0507 on the header's line: the retry starts there
    texts = [[no_ret]]
    ids = [[tok.encode(no_ret)]]

    def decode(conversations: Sequence[Any], n: int, params: Any, ids_out: list[list[list[int]]],
               forced: Sequence[Sequence[int]] | None) -> list[list[str]]:
        out = [tok.decode(f) + "fn double(n: float) {\n}\n```\n" for f in forced or []]
        assert fault_cut(out[0]) is None  # clean, and closed
        ids_out.extend([tok.encode(o)] for o in out)
        return [[o] for o in out]

    stats = retry_faults(decode, [asked], texts, ids, tok, None, rounds=1, seed=0)
    assert texts[0][0] == no_ret  # kept: the retry compiles but declares no `double(n: int) to int`
    assert (stats.faulty, stats.retried, stats.replaced, stats.fixed) == (1, 1, 0, 0)
    stats = retry_faults(decode, ["no request"], texts, ids, tok, None, rounds=1, seed=0)
    assert (stats.replaced, stats.fixed) == (1, 1)  # nothing was asked: clean wins


def test_a_missing_return_is_retried_from_the_line_that_closes_the_body() -> None:
    # E0508 points at the function's name; what is missing is at the end of the body
    text = answer("fn half(\n  x: int\n) to int {\n  let y = x / 2\n  if y > 1 {\n    ret y\n  }\n}\n"
                  "fn g() to int {\n  ret 1\n}\n")
    fault = fault_cut(text)
    assert fault is not None and fault.line == 8 and text[fault.cut:].startswith("}\nfn g()")
    # an earlier fault in the body comes first
    text = answer('fn half(x: int) to int {\n  let y = "a" - 1\n  if y > 1 {\n    ret 1\n  }\n}\n')
    fault = fault_cut(text)
    assert fault is not None and fault.line == 2


LONG = "fn total(\n  xs: List[int]\n) to int {\n  let mut t = 0\n  for x in xs {\n    t += x\n  }\n  ret \"t\"\n}\n"


def test_backoff_moves_the_cut_back_a_line_per_dropped_retry_down_to_the_body() -> None:
    text = answer(LONG)
    fault = fault_cut(text)
    assert fault is not None and fault.line == 8  # `ret "t"`
    lines = text.split("\n")

    def start(n: int) -> int:  # offset of the completion's line n (0-based; line 0 is the fence)
        return sum(len(x) + 1 for x in lines[:n])

    assert backoff_cut(text, fault, 0) == fault.cut == start(8)
    assert backoff_cut(text, fault, 1) == start(7)
    assert backoff_cut(text, fault, 3) == start(5)
    # never into the header, even one written over lines: the body starts after its `{`
    assert backoff_cut(text, fault, 4) == backoff_cut(text, fault, 40) == start(4)


def test_backoff_never_moves_a_fault_on_the_header_or_a_later_item_out_of_its_item() -> None:
    text = answer(CLEAN + FAULTY.replace("double", "twice"))
    fault = fault_cut(text)
    assert fault is not None and fault.line == 6  # the second item's `ret "x" + n`
    assert backoff_cut(text, fault, 9) == fault.cut - len("    let k = 2\n")  # its own body only
    header = answer("fn half(x: int) to int { x / 2 }\n")
    fault = fault_cut(header)
    assert fault is not None and fault.line == 1  # E0508, on a body closed on the header's line
    assert backoff_cut(header, fault, 3) == fault.cut


def test_a_dropped_retry_starts_the_next_one_a_line_earlier() -> None:
    tok = CharTokenizer()
    texts = [[answer(LONG)]]
    ids = [[tok.encode(texts[0][0])]]
    prefixes: list[str] = []

    def decode(conversations: Sequence[Any], n: int, params: Any, ids_out: list[list[list[int]]],
               forced: Sequence[Sequence[int]] | None) -> list[list[str]]:
        out = [tok.decode(f) + "    ret" for f in forced or []]  # cut off: never better
        prefixes.extend(tok.decode(f) for f in forced or [])
        ids_out.extend([tok.encode(o)] for o in out)
        return [[o] for o in out]

    retry_faults(decode, ["c"], texts, ids, tok, None, rounds=3, seed=0)
    assert [p.rsplit("\n", 2)[-2] for p in prefixes] == ["  }", "    t += x", "  for x in xs {"]
